"""Answer text metrics: SQuAD's and AmbER's normalisations, exact match, token F1 and the
lexical evidence of an answer against its gold answers. Copied from ``namesake.text`` (a test
pins the copy to it) so that the metric imports nothing of namesake."""

from __future__ import annotations

import collections
import re
import string

# --- answer text metrics (namesake.text, copied to keep this module self-contained) ---

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
# "-" becomes a space, every other ASCII punctuation character disappears.
_PUNCTUATION = str.maketrans({c: (" " if c == "-" else None) for c in string.punctuation})


def normalize_answer(text: str) -> str:
    """Lower-cases, removes punctuation and the articles a/an/the, squeezes whitespace."""
    return " ".join(_ARTICLES.sub(" ", text.lower().translate(_PUNCTUATION)).split())


def get_tokens(text: str) -> list[str]:
    """Normalised whitespace tokens of ``text`` (none for an empty string)."""
    return normalize_answer(text).split() if text else []


def exact_match(prediction: str, reference: str) -> float:
    """1.0 when both strings are equal after normalisation, else 0.0."""
    return float(normalize_answer(prediction) == normalize_answer(reference))


def token_f1(prediction: str, reference: str) -> float:
    """Token F1 (0-1) of the normalised answers; two token-less answers agree (1.0), one
    token-less answer scores 0.0."""
    pred, gold = get_tokens(prediction), get_tokens(reference)
    if not pred or not gold:
        return float(pred == gold)
    common = sum((collections.Counter(pred) & collections.Counter(gold)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(gold)
    return 2 * precision * recall / (precision + recall)


# --- lexical evidence (namesake.text.lexical_evidence, copied: the module stands alone) ---

_SQUAD_PUNCTUATION = str.maketrans("", "", string.punctuation)


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
        common = sum((candidate_tokens & gold_tokens).values())
        recall = common / sum(gold_tokens.values())
        precision = common / n_candidate if n_candidate else 0.0
        f1 = 2 * precision * recall / (precision + recall) if common else 0.0
        best["exact_match"] = max(best["exact_match"], float(candidate == gold))
        best["token_f1"] = max(best["token_f1"], f1)
        best["token_recall"] = max(best["token_recall"], recall)
        best["containment"] = max(best["containment"], float(gold in candidate))
    best["lexical_sum"] = best["token_f1"] + best["token_recall"] + best["containment"]
    return best
