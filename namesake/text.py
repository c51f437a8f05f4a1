"""Answer text metrics with AmbER's normalisation: the one definition of normalised
tokens, exact match and token F1 in namesake.

AmbER normalises answers as SQuAD's evaluation script does (lower case, no punctuation, no
articles a/an/the, squeezed whitespace) with one difference: a dash becomes a space
("Jean-Luc" -> "jean luc") where SQuAD's script deletes it ("jeanluc"). Scores computed
here are therefore "AmbER-normalised", not SQuAD's.

Edge case, as in SQuAD's script: an answer with no token left after normalisation
(empty, or only articles and punctuation) agrees with another such answer (exact match
and F1 1.0) and with nothing else (0.0).
"""

from __future__ import annotations

import functools
import re
import string
from collections import Counter

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
# "-" becomes a space, every other ASCII punctuation character disappears.
_PUNCTUATION = str.maketrans({c: (" " if c == "-" else None) for c in string.punctuation})


# A judge normalises the same answers and gold answers over and over (every feature of every
# pair): each text is normalised once.
@functools.lru_cache(maxsize=1 << 16)
def normalize_answer(text: str) -> str:
    """Lower-cases, removes punctuation (a dash becomes a space) and the articles a/an/the,
    squeezes whitespace."""
    return " ".join(_ARTICLES.sub(" ", text.lower().translate(_PUNCTUATION)).split())


def get_tokens(text: str) -> list[str]:
    """Normalised whitespace tokens of ``text`` (none for an empty string)."""
    return normalize_answer(text).split() if text else []


def exact_match(prediction: str, reference: str) -> float:
    """1.0 when both strings are equal after normalisation, else 0.0."""
    return float(normalize_answer(prediction) == normalize_answer(reference))


def shared_tokens(one: Counter, other: Counter) -> int:
    """How many tokens two bags share (``sum((one & other).values())``, without building the
    intersection: the judge's hottest line)."""
    return sum(min(n, other[token]) for token, n in one.items() if token in other)


def token_f1(prediction: str, reference: str) -> float:
    """Token F1 (0-1) of the normalised answers; two token-less answers agree (1.0), one
    token-less answer scores 0.0."""
    pred, gold = get_tokens(prediction), get_tokens(reference)
    if not pred or not gold:
        return float(pred == gold)
    common = shared_tokens(Counter(pred), Counter(gold))
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(gold)
    return 2 * precision * recall / (precision + recall)


# --- QA answer judging: SQuAD's normalisation, the lexical evidence a judge starts from ---

_SQUAD_PUNCTUATION = str.maketrans("", "", string.punctuation)


@functools.lru_cache(maxsize=1 << 16)
def squad_normalize(text: str) -> str:
    """SQuAD's `normalize_answer` exactly (every punctuation character, the dash included,
    disappears): the normalisation of the lexical baselines on human-judged QA answers."""
    return " ".join(_ARTICLES.sub(" ", text.lower().translate(_SQUAD_PUNCTUATION)).split())


def lexical_evidence(prediction: str, references: list[str]) -> dict[str, float]:
    """Lexical scores of a candidate answer against its gold answers, each the max over the
    references, on SQuAD-normalised text:

    - `exact_match`: equal strings (0/1);
    - `token_f1`: SQuAD's token F1;
    - `token_recall`: the share of a gold answer's tokens found in the candidate, so a
      sentence that states the answer scores 1;
    - `containment`: the normalised gold answer is a substring of the normalised candidate
      (0/1; EVOUNA's lexical-matching baseline);
    - `lexical_sum`: token_f1 + token_recall + containment, the strongest lexical judge on
      EVOUNA (ROC-AUC 0.943 on NQ, 0.976 on TQ).

    A reference with no token left after normalisation matches nothing (and is not an
    error: EVOUNA has a few)."""
    candidate = squad_normalize(prediction)
    candidate_tokens = Counter(candidate.split())
    n_candidate = sum(candidate_tokens.values())
    best = dict.fromkeys(("exact_match", "token_f1", "token_recall", "containment"), 0.0)
    for reference in references:
        gold = squad_normalize(reference)
        gold_tokens = Counter(gold.split())
        if not gold_tokens:
            continue
        common = shared_tokens(candidate_tokens, gold_tokens)
        recall = common / sum(gold_tokens.values())
        precision = common / n_candidate if n_candidate else 0.0
        f1 = 2 * precision * recall / (precision + recall) if common else 0.0
        best["exact_match"] = max(best["exact_match"], float(candidate == gold))
        best["token_f1"] = max(best["token_f1"], f1)
        best["token_recall"] = max(best["token_recall"], recall)
        best["containment"] = max(best["containment"], float(gold in candidate))
    best["lexical_sum"] = best["token_f1"] + best["token_recall"] + best["containment"]
    return best
