"""The hybrid scorer's features that need no model: how an answer holds its gold answers
(a gold mention turned down, denied, corrected or compared against is no evidence), its
abbreviations, numbers and dates written another way, surnames and stems."""

from __future__ import annotations

import collections
import math
import re

from .answer_text import lexical_evidence, per_call_cache, shared_tokens, squad_normalize

# Words that turn a sentence containing the gold answer into a wrong one ("it was not X",
# "X or Y", "I cannot say").
_HEDGES = re.compile(
    r"\b(not|no|never|cannot|can't|don't|isn't|wasn't|unknown|unclear|sorry|neither|"
    r"however|but|or|language model)\b",
    re.IGNORECASE,
)
_DIGIT = re.compile(r"\d")
HYBRID_FEATURES = (
    "exact_match",
    "token_f1",
    "token_recall",
    "containment",
    "token_precision",
    "lexical_sum",
    "log_candidate_tokens",
    "references",
    "log_shortest_reference_tokens",
    "hedges",
    "has_question",
    "reference_in_question",
    "candidate_has_digit",
    "reference_has_digit",
    "whole_cosine",
    "span_cosine",
    "acronym_match",
    "canonical_recall",
    "canonical_match",
    "stem_recall",
    "lexically_disjoint",
    "number_mismatch",
    "surname_match",
)
# The features of namesake-wes-scorer-v1, -v2 and -v3 (fitted before the later ones existed).
HYBRID_FEATURES_V1 = HYBRID_FEATURES[:16]
HYBRID_FEATURES_V2 = HYBRID_FEATURES[:19]
HYBRID_FEATURES_V3 = HYBRID_FEATURES[:21]


# --- how a sentence holds a gold answer: rejected, hedged, abbreviated ---

# Tokens (after SQuAD normalisation: "isn't" -> "isnt") that reject the words right after them.
_NEGATIONS = frozenset(
    [
        "not",
        "no",
        "never",
        "nor",
        "neither",
        "isnt",
        "wasnt",
        "arent",
        "werent",
        "doesnt",
        "didnt",
        "dont",
        "cannot",
        "cant",
        "wouldnt",
        "couldnt",
        "shouldnt",
        "hasnt",
        "havent",
        "hadnt",
        "wont",
    ]
)
_NEGATING_BIGRAMS = frozenset({("rather", "than"), ("instead", "of"), ("other", "than")})
_INTENSIFIERS = frozenset(
    ["definitely", "certainly", "actually", "really", "surely", "probably", "exactly"]
)
# Where a clause ends: punctuation (a period or comma only outside numbers and
# abbreviations such as "U.S." and "1,000") or a dash between spaces.
_CLAUSE_END = re.compile(r"[;:!?()\[\]{}\"“”]|,(?!\d)|\.(?=\s|$)|\s[-–—]\s")


# Words that join the parts of a name but name nothing alone.
_CONNECTIVES = frozenset(["of", "and", "in", "on", "at", "to", "for", "by", "with", "from", "is"])


def _gold_runs(tokens: list[str], gold: set[str]) -> list[tuple[int, int]]:
    """(start, end) of each longest run of tokens that are all words of a gold answer (a
    connective alone is no run): the mentions of a gold answer, whole ("Albert Einstein") or
    in part ("Einstein")."""
    runs, start = [], None
    for i, token in enumerate([*tokens, None]):
        if token is not None and token in gold and (start is not None or token not in _CONNECTIVES):
            start = i if start is None else start
        elif start is not None:
            runs.append((start, i))
            start = None
    return runs


def _rejection(tokens: list[str], start: int) -> int:
    """How many tokens right before `start` reject the words from there on ("not X" 1,
    "wasn't X" 1, "definitely not X" 1, "not really X" 2, "rather than X" 2); 0 when none."""
    before = tokens[max(0, start - 2) : start]
    if before[-1:] and before[-1] in _NEGATIONS:
        return 1
    if len(before) == 2 and before[0] in _NEGATIONS and before[1] in _INTENSIFIERS:
        return 2
    return 2 if tuple(before) in _NEGATING_BIGRAMS else 0


# Words a bare "X or Y" answer may carry besides its two names, and the longest other name.
_MAX_NAME_TOKENS = 4
_DISJUNCTION_FILLER = frozenset(
    [
        "either",
        "it",
        "is",
        "was",
        "its",
        "answer",
        "probably",
        "maybe",
        "perhaps",
        "possibly",
        "i",
        "think",
        "could",
        "be",
    ]
)


def _competing_alternative(tokens: list[str], start: int, end: int, gold: set[str]) -> bool:
    """Whether the clause is a bare "X or Y" (filler words aside, "either" included) whose
    other side shares no word with any gold answer: a hedge between two answers ("Paris or
    Lyon"), not a synonym given beside the gold one that shares a word with it ("acid
    precipitation or acid rain") nor a sentence that lists things ("from a bank or credit
    union"). The other side is then judged on its own: a synonym that shares no word
    ("Dawn or daylight") can still pass on its similarity to the gold answer."""
    rest = [t for t in tokens[:start] + ["<gold>"] + tokens[end:] if t not in _DISJUNCTION_FILLER]
    if rest.count("or") != 1 or len(rest) < 3:
        return False
    split = rest.index("or")
    left, right = rest[:split], rest[split + 1 :]
    other = right if left == ["<gold>"] else left if right == ["<gold>"] else None
    return bool(other) and len(other) <= _MAX_NAME_TOKENS and not gold.intersection(other)


# Version 4: words that may stand between a negation and the gold answer it denies ("not in
# Madrid", "was not painted by Leonardo da Vinci"): prepositions, articles and the verbs that
# tie a place, an author or a discoverer to a thing.
_DENIAL_BRIDGE = frozenset(
    [
        "in",
        "at",
        "on",
        "from",
        "by",
        "of",
        "to",
        "a",
        "an",
        "located",
        "situated",
        "based",
        "found",
        "born",
        "made",
        "built",
        "written",
        "painted",
        "composed",
        "discovered",
        "invented",
        "founded",
        "directed",
        "sung",
        "played",
        "held",
        "called",
        "named",
        "really",
        "actually",
        "exactly",
        "even",
        "quite",
    ]
)
_MAX_DENIAL_BRIDGE = 3
# Version 4: a gold answer followed by these denies it ("Madrid is not ...", "Fleming did not
# discover it").
_DENYING_VERBS = frozenset(["is", "was", "are", "were", "did", "does", "do", "has", "had"])
# Version 4: a gold answer right after these is the other one of an order or comparison
# ("Scott, a month after Amundsen"; "the Amazon, shorter than the Nile").
_COMPARED = frozenset(["after", "behind", "than", "following", "beyond", "trailing"])
# Version 4: a clause with one of these words reports a belief ("people often say X") that a
# later clause corrects ("but it is actually Y").
_BELIEF = frozenset(
    [
        "say",
        "says",
        "said",
        "think",
        "thinks",
        "thought",
        "believe",
        "believes",
        "believed",
        "assume",
        "assumed",
        "misconception",
        "mistaken",
        "mistakenly",
        "commonly",
        "popularly",
        "claim",
        "claimed",
        "supposed",
        "confused",
    ]
)
_CORRECTION = frozenset(["but", "however", "actually", "fact", "reality", "truth"])


def _denied_span(tokens: list[str], start: int, end: int) -> range | None:
    """Version 4: the tokens dropped with the gold mention tokens[start:end] when it is
    denied, by a negation up to _MAX_DENIAL_BRIDGE bridge words before it ("not in Madrid":
    the three) or by what follows it ("Madrid is not", "Madrid isn't": the mention and the
    denial); None when it is not denied."""
    for gap in range(1, _MAX_DENIAL_BRIDGE + 1):
        at = start - gap - 1
        if at < 0 or not all(t in _DENIAL_BRIDGE for t in tokens[at + 1 : start]):
            break
        if tokens[at] in _NEGATIONS:
            return range(at, end)
    after = tokens[end : end + 2]
    denying = _NEGATIONS - {"no", "nor", "neither"}  # "Clark had no. 1 hit" denies nothing
    if len(after) == 2 and after[0] in _DENYING_VERBS and after[1] in denying:
        return range(start, end + 2)
    if after[:1] and after[0] in denying:  # "Madrid isn't"
        return range(start, end + 1)
    return None


# Version 4: the longest first clause read as the answer's own name before an order or
# comparison ("Robert Falcon Scott, a month after Roald Amundsen").
_MAX_LEADING_NAME_TOKENS = 5
_COPULAS = frozenset(["is", "was", "are", "were"])


def _compared(clauses: list[list[str]], clause: int, start: int, gold: set[str]) -> bool:
    """Version 4: the gold mention comes right after an order or comparison word, in a
    clause after a short first one that names something else: the answer is that name ("The
    Amazon, slightly shorter than the Nile"), not a sentence about a time or an origin
    ("closes shortly after birth", "named after Amerigo Vespucci")."""
    tokens, first = clauses[clause], clauses[0]
    return (
        clause > 0
        and start > 0
        and tokens[start - 1] in _COMPARED
        and 0 < len(first) <= _MAX_LEADING_NAME_TOKENS
        and not gold.intersection(first)
    )


def _corrected(clauses: list[list[str]], clause: int, gold: set[str]) -> bool:
    """Version 4: the clause reports a belief and a later clause corrects it, saying what
    is (a copula) without naming a gold answer ("People often say Ottawa, but it is
    actually Toronto"; not "..., however this belief varies")."""
    if not _BELIEF.intersection(clauses[clause]):
        return False
    later = {t for tokens in clauses[clause + 1 :] for t in tokens}
    return bool(
        _CORRECTION.intersection(later)
        and _COPULAS.intersection(later)
        and not gold.intersection(later)
    )


def committed_text(candidate: str, references: list[str], version: int = 3) -> str | None:
    """The answer without the gold answers it turns down, or None when it turns none down.

    A sentence can hold a gold answer and still be wrong: "It was not Paris but Lyon" names
    it to reject it, "Paris or Lyon" does not commit to it. Within each clause (split at
    punctuation, so that "No, X did it" and "X (or Y)" are not read so), a mention of a gold
    answer is *turned down* when a negation stands right before it (`_rejection`) or the
    clause is a bare "X or Y" between it and another answer (`_competing_alternative`).
    When the answer mentions a gold answer and turns down every mention, it is returned
    without those mentions and the words that turn them down (normalised tokens), and every
    feature reads that: a gold answer the answer turns down is no evidence for it ("It was
    not Paris but Lyon" is judged as "it was but lyon", "Paris or Lyon" as "lyon").
    Natural answers rarely do this (14 of EVOUNA's 23,495, mostly "X or Y" synonyms judged
    right, which are then judged on the synonym).

    `version` 4 also turns down a mention denied across a few bridge words ("not in
    Madrid") or by what follows it ("Madrid is not"), one right after an order or
    comparison word ("a month after Amundsen", "shorter than the Nile"), and one in a
    clause reporting a belief that a later clause corrects without a gold answer ("people
    often say Ottawa, but it is actually Toronto")."""
    references = [squad_normalize(r).split() for r in references]
    gold_tokens = {t for r in references for t in r}
    clauses = [squad_normalize(part).split() for part in _CLAUSE_END.split(candidate) if part]
    mentions = []  # (clause, tokens dropped with it, turned down)
    for c, tokens in enumerate(clauses):
        for start, end in _gold_runs(tokens, gold_tokens):
            rejection = _rejection(tokens, start)
            denied = _denied_span(tokens, start, end) if version >= 4 else None
            if rejection:  # the mention and the words that reject it
                mentions.append((c, range(start - rejection, end), True))
            elif denied is not None:  # "not in Madrid", "Madrid is not"
                mentions.append((c, denied, True))
            elif version >= 4 and (
                _compared(clauses, c, start, gold_tokens) or _corrected(clauses, c, gold_tokens)
            ):  # "after Amundsen", "people say Ottawa, but ...": the mention alone
                mentions.append((c, range(start, end), True))
            elif _competing_alternative(tokens, start, end, gold_tokens):
                # the mention and the connectives: the other answer is left alone
                joins = [i for i, t in enumerate(tokens) if t in ("or", "either")]
                mentions.append((c, [*range(start, end), *joins], True))
            else:
                mentions.append((c, range(start, end), False))
    if not mentions or not all(m[2] for m in mentions):
        return None
    dropped = {(c, i) for c, positions, _ in mentions for i in positions}
    return " ".join(
        t for c, tokens in enumerate(clauses) for i, t in enumerate(tokens) if (c, i) not in dropped
    )


def _initials(tokens: list[str]) -> str:
    return "".join(t[0] for t in tokens if t)


def acronym_match(candidate_tokens: list[str], reference_tokens: list[list[str]]) -> float:
    """1.0 when the answer holds the initials of a gold answer of two or more words as one
    token ("NYC" for "New York City", "U.S." -> "us" for "United States"), or the gold answer
    is the initials of a several-word answer; else 0.0."""
    held = {t for t in candidate_tokens if len(t) >= 2}
    initials = [_initials(candidate_tokens)] if len(candidate_tokens) >= 2 else None
    for reference in reference_tokens:
        if len(reference) >= 2 and _initials(reference) in held:
            return 1.0
        if reference == initials:
            return 1.0
    return 0.0


# Two words share a stem when their first STEM_LETTERS letters agree (both at least that
# long): "kidneys" / "kidney", "Bryophytes" / "Bryophyta", "Catholicism" / "Catholic".
STEM_LETTERS = 5


def stem_recall(candidate_tokens: list[str], reference_tokens: list[list[str]]) -> float:
    """The largest share of a gold answer's words that the answer holds, as the same word or
    one with the same stem: an inflected gold answer is not a different one."""
    words = set(candidate_tokens)
    stems = {t[:STEM_LETTERS] for t in candidate_tokens if len(t) >= STEM_LETTERS}
    best = 0.0
    for reference in reference_tokens:
        if reference:
            held = sum(
                t in words or (len(t) >= STEM_LETTERS and t[:STEM_LETTERS] in stems)
                for t in reference
            )
            best = max(best, held / len(reference))
    return best


_MONTHS = {
    name: str(number)
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        1,
    )
    for name in names
}
_UNITS = {
    w: i
    for i, w in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
        ]
    )
}
_TENS = {
    w: 10 * i
    for i, w in enumerate(
        ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"], 2
    )
}
_SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
_ORDINAL = re.compile(r"^(\d+)(st|nd|rd|th)$")
_DIGIT_SEPARATOR = re.compile(r"(?<=\d)[-/.](?=\d)")


def canonical_tokens(text: str, version: int = 3) -> list[str]:
    """`_canonical_tokens` (read once per text and version in a call), as a list of its own."""
    return list(_canonical_tokens(text, version))


@per_call_cache
def _canonical_tokens(text: str, version: int) -> tuple[str, ...]:
    """SQuAD-normalised tokens with numbers and dates written one way: number words become
    digits ("twenty-five" -> "25", "one hundred" -> "100"), ordinals lose their suffix
    ("20th" -> "20"), month names become their number, leading zeros go, and digits joined
    by "-", "/" or "." are split ("1969-07-20" -> "1969 7 20"). Compared as bags, "July 20,
    1969", "20 July 1969" and "1969-07-20" are the same date, "3" and "three" the same
    number. `version` 4 also reads years said in pairs: "nineteen ninety-nine" -> "1999",
    "ten sixty-six" -> "1066", "twenty twenty-one" -> "2021" (version 3 added the words up:
    "118")."""
    tokens = squad_normalize(_DIGIT_SEPARATOR.sub(" ", text.replace("-", " "))).split()
    out: list[str] = []
    number: int | None = None  # a number being read from words
    current = 0

    def flush():
        nonlocal number, current
        if number is not None:
            out.append(str(number + current))
        number, current = None, 0

    for position, token in enumerate(tokens):
        if (
            token == "may"
            and not any(  # the month only next to a number, not the verb
                t.isdigit() or _ORDINAL.match(t)
                for t in tokens[max(0, position - 1) : position + 2]
            )
        ):
            flush()
            out.append(token)
            continue
        if token in _UNITS or token in _TENS:
            if number is None:
                number = 0
            value = _UNITS.get(token, _TENS.get(token, 0))
            if version >= 4 and value >= 10 and current % 100 >= 10:
                current = current * 100 + value  # a year's second pair: "nineteen | ninety"
            else:
                current += value
            continue
        if token in _SCALES and number is not None:
            scale = _SCALES[token]
            if scale == 100:
                current = max(current, 1) * 100
            else:
                number += max(current, 1) * scale
                current = 0
            continue
        if token == "and" and number is not None:
            continue
        flush()
        ordinal = _ORDINAL.match(token)
        if ordinal:
            token = ordinal.group(1)
        if token.isdigit():
            token = token.lstrip("0") or "0"
        out.append(_MONTHS.get(token, token))
    flush()
    return tuple(out)


def canonical_evidence(
    candidate: str, references: list[str], version: int = 3
) -> tuple[float, float]:
    """(canonical_recall, canonical_match), max over the references: the share of a gold
    answer's canonical tokens (`canonical_tokens`) the answer holds, and 1.0 when both hold
    the same bag of canonical tokens."""
    held = collections.Counter(_canonical_tokens(candidate, version))
    recall = match = 0.0
    for reference in references:
        gold = collections.Counter(_canonical_tokens(reference, version))
        if not gold:
            continue
        recall = max(recall, shared_tokens(held, gold) / sum(gold.values()))
        match = max(match, float(held == gold))
    return recall, match


def _text_features(question: str | None, references: list[str], candidate: str) -> list[float]:
    """The features of one answer that need no model (see HYBRID_FEATURES)."""
    lexical = lexical_evidence(candidate, references)
    candidate_tokens = squad_normalize(candidate).split()
    reference_tokens = [squad_normalize(r).split() for r in references]
    precision = 0.0
    candidate_bag = collections.Counter(candidate_tokens)
    for tokens in reference_tokens:
        if tokens and candidate_tokens:
            common = shared_tokens(candidate_bag, collections.Counter(tokens))
            precision = max(precision, common / len(candidate_tokens))
    in_question = 0.0  # the share of a gold answer's tokens the question already holds
    if question is not None:
        question_tokens = set(squad_normalize(question).split())
        in_question = max(
            (len(set(t) & question_tokens) / len(set(t)) for t in reference_tokens if t),
            default=0.0,
        )
    return [
        lexical["exact_match"],
        lexical["token_f1"],
        lexical["token_recall"],
        lexical["containment"],
        precision,
        lexical["lexical_sum"],
        math.log1p(len(candidate_tokens)),
        float(len(references)),
        math.log1p(min((len(t) for t in reference_tokens), default=0)),
        float(len(_HEDGES.findall(candidate))),
        float(question is not None),
        in_question,
        float(bool(_DIGIT.search(candidate))),
        float(any(_DIGIT.search(r) for r in references)),
    ]


def number_mismatch(candidate: str, references: list[str]) -> float:
    """Version 4: 1.0 when every gold answer is a number (or date) and the answer gives
    numbers, none of which is a gold answer's: "nine" for "eight", "in 1998" for "1999"."""
    held = {t for t in _canonical_tokens(candidate, 4) if t.isdigit()}
    if not held:
        return 0.0
    for reference in references:
        gold = _canonical_tokens(reference, 4)
        numbers = {t for t in gold if t.isdigit()}
        if not numbers or len(numbers) < len(gold) - 1 or held & numbers:
            return 0.0  # a gold answer that is no number, or one the answer gives
    return 1.0


# Version 4: words that may stand beside a surname given alone ("It was Curie.", "Madame
# Curie"); any other word ("Pierre Curie") makes it more than a surname.
_BESIDE_SURNAME = frozenset(
    ["it", "was", "is", "its", "answer", "mr", "mrs", "ms", "dr", "madame", "sir", "professor"]
)


def surname_match(candidate_tokens: list[str], reference_tokens: list[list[str]]) -> float:
    """Version 4: 1.0 when the answer is the last word of a gold answer of two or more words
    (three letters or more), alone or with a few words that name nobody: a person's surname
    ("Curie" or "It was Curie." for "Marie Curie"; not "Pierre Curie")."""
    for reference in reference_tokens:
        if len(reference) < 2 or len(reference[-1]) < 3:
            continue
        others = [t for t in candidate_tokens if t != reference[-1]]
        if len(others) < len(candidate_tokens) and set(others) <= _BESIDE_SURNAME:
            return 1.0
    return 0.0


def _mention_features(references: list[str], scored: str, version: int = 3) -> list[float]:
    """The features after the cosines, of the text scored (the answer less the gold mentions
    it turns down, see `committed_text`): acronym_match, canonical_recall, canonical_match,
    stem_recall, lexically_disjoint, and from version 4 number_mismatch and surname_match
    (0.0 before).

    lexically_disjoint is 1.0 when the answer shares no word, stem, abbreviation or number
    with any gold answer. Such an answer is then judged by its cosine alone, and on judged
    QA answers without a question few of those are right (8% of EVOUNA dev's short ones):
    mostly another name of the same kind ("Michelangelo" for "Leonardo da Vinci"). The
    regression gives them their own intercept and cosine weight."""
    scored_tokens = squad_normalize(scored).split()
    reference_tokens = [squad_normalize(r).split() for r in references]
    acronym = acronym_match(scored_tokens, reference_tokens)
    canonical = canonical_evidence(scored, references, version)
    stems = stem_recall(scored_tokens, reference_tokens)
    disjoint = float(acronym == 0 and canonical[0] == 0 and stems == 0)
    if version < 4:  # not features of the earlier versions
        return [acronym, *canonical, stems, disjoint, 0.0, 0.0]
    numbers = number_mismatch(scored, references)
    surname = surname_match(scored_tokens, reference_tokens)
    return [acronym, *canonical, stems, disjoint, numbers, surname]
