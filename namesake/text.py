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

import re
import string
from collections import Counter

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
# "-" becomes a space, every other ASCII punctuation character disappears.
_PUNCTUATION = str.maketrans({c: (" " if c == "-" else None) for c in string.punctuation})


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


def token_f1(prediction: str, reference: str) -> float:
    """Token F1 (0-1) of the normalised answers; two token-less answers agree (1.0), one
    token-less answer scores 0.0."""
    pred, gold = get_tokens(prediction), get_tokens(reference)
    if not pred or not gold:
        return float(pred == gold)
    common = sum((Counter(pred) & Counter(gold)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(gold)
    return 2 * precision * recall / (precision + recall)
