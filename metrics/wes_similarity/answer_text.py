"""Answer text metrics: SQuAD's and AmbER's normalisations, exact match, token F1 and the
lexical evidence of an answer against its gold answers. Copied from ``namesake.text`` (a test
pins the copy to it) so that the metric imports nothing of namesake."""

from __future__ import annotations

import collections
import functools
import re
import string

# --- answer text metrics (namesake.text, copied to keep this module self-contained) ---

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
# "-" becomes a space, every other ASCII punctuation character disappears.
_PUNCTUATION = str.maketrans({c: (" " if c == "-" else None) for c in string.punctuation})


# A judge reads the same answers and gold answers over and over (every feature of every pair):
# the metric reads each text once per call (`clear_per_call_caches` empties these caches).
_PER_CALL_CACHES: list = []


def per_call_cache(function):
    """`function` memoised (it must be pure), 65,536 texts at most (the least recently read
    go first): `compute` empties it when it ends; a caller of `Scorer.score` itself
    (namesake's `wes judge`) keeps what it read, within that bound."""
    cached = functools.lru_cache(maxsize=1 << 16)(function)
    _PER_CALL_CACHES.append(cached)
    return cached


def clear_per_call_caches() -> None:
    """Empties the `per_call_cache`s (the metric's own, not in namesake.text): each call of
    the metric starts cold, so that neither its time nor its memory depends on the calls
    before it."""
    for cached in _PER_CALL_CACHES:
        cached.cache_clear()


@per_call_cache
def normalize_answer(text: str) -> str:
    """Lower-cases, removes punctuation and the articles a/an/the, squeezes whitespace."""
    return " ".join(_ARTICLES.sub(" ", text.lower().translate(_PUNCTUATION)).split())


def get_tokens(text: str) -> list[str]:
    """Normalised whitespace tokens of ``text`` (none for an empty string)."""
    return normalize_answer(text).split() if text else []


def exact_match(prediction: str, reference: str) -> float:
    """1.0 when both strings are equal after normalisation, else 0.0."""
    return float(normalize_answer(prediction) == normalize_answer(reference))


def shared_tokens(one: collections.Counter, other: collections.Counter) -> int:
    """How many tokens two bags share (``sum((one & other).values())``, without building the
    intersection: the judge's hottest line)."""
    return sum(min(n, other[token]) for token, n in one.items() if token in other)


def token_f1(prediction: str, reference: str) -> float:
    """Token F1 (0-1) of the normalised answers; two token-less answers agree (1.0), one
    token-less answer scores 0.0."""
    pred, gold = get_tokens(prediction), get_tokens(reference)
    if not pred or not gold:
        return float(pred == gold)
    common = shared_tokens(collections.Counter(pred), collections.Counter(gold))
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(gold)
    return 2 * precision * recall / (precision + recall)


# --- lexical evidence (namesake.text.lexical_evidence, copied: the module stands alone) ---

_SQUAD_PUNCTUATION = str.maketrans("", "", string.punctuation)


@per_call_cache
def squad_normalize(text: str) -> str:
    """SQuAD's `normalize_answer` exactly (every punctuation character, the dash included,
    disappears): the normalisation of the lexical baselines on human-judged QA answers."""
    return " ".join(_ARTICLES.sub(" ", text.lower().translate(_SQUAD_PUNCTUATION)).split())


def lexical_evidence(prediction: str, references: list[str]) -> dict[str, float]:
    """Exact match, token F1, token recall, containment (0/1) and their lexical sum
    (F1 + recall + containment), each the max over the references, SQuAD-normalised."""
    candidate = squad_normalize(prediction)
    candidate_tokens = collections.Counter(candidate.split())
    n_candidate = sum(candidate_tokens.values())
    best = dict.fromkeys(("exact_match", "token_f1", "token_recall", "containment"), 0.0)
    for reference in references:
        gold = squad_normalize(reference)
        gold_tokens = collections.Counter(gold.split())
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
