"""DPR's retrieval accuracy: answer matching with DPR's tokenizer, and top-k accuracy."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping, Sequence

import regex

DEFAULT_KS = (1, 5, 20, 100)


# DPR's SimpleTokenizer (dpr/utils/tokenizers.py): runs of letters/digits/marks, or any single
# other non-space, non-control character.
_TOKEN = regex.compile(r"[\p{L}\p{N}\p{M}]+|[^\p{Z}\p{C}]", flags=regex.IGNORECASE | regex.UNICODE)


def dpr_tokens(text: str) -> list[str]:
    """DPR's uncased simple tokens of `text` (after Unicode NFD normalisation)."""
    return [t.lower() for t in _TOKEN.findall(unicodedata.normalize("NFD", text))]


def has_answer(text: str, answers: Iterable[str]) -> bool:
    """Whether `text` contains one of `answers` (DPR's ``has_answer``, string match mode).

    As DPR: both are NFD-normalised, lower-cased and split by DPR's simple tokenizer (runs of
    letters/digits, every punctuation mark its own token); an answer matches when its token
    sequence occurs contiguously in the passage's. So case and spacing around punctuation do
    not matter ("U.S." matches "u . s ."), punctuation itself does, whole tokens only ("art"
    does not match "party"), and articles are *not* removed (unlike SQuAD's EM): "the Beatles"
    does not match a passage with "Beatles" only. Empty answers never match.
    """
    passage = dpr_tokens(text)
    for answer in answers:
        tokens = dpr_tokens(answer)
        if not tokens:
            continue
        n = len(tokens)
        for start in range(len(passage) - n + 1):
            if passage[start : start + n] == tokens:
                return True
    return False


def top_k_accuracy(
    rankings: Sequence[Sequence],
    answers: Sequence[Iterable[str]],
    passages_text: Mapping | Sequence[str],
    ks: Iterable[int] = DEFAULT_KS,
) -> dict[str, float]:
    """DPR's top-k retrieval accuracy: the share of questions with an answer-bearing passage
    among their first k.

    ``rankings[i]`` lists question i's passages best first, as keys (ids or indices) of
    ``passages_text``; ``answers[i]`` its answers. Returns ``{"top_1": ..., "top_5": ...}``;
    a question with fewer than k passages ranked counts as a miss unless one of those hits.
    """
    ks = sorted({int(k) for k in ks})
    if not ks or ks[0] < 1:
        raise ValueError("every k must be at least 1")
    if len(rankings) != len(answers):
        raise ValueError(f"{len(rankings)} rankings for {len(answers)} questions")
    hits = dict.fromkeys(ks, 0)
    for ranking, question_answers in zip(rankings, answers, strict=True):
        question_answers = list(question_answers)
        first = None
        for rank, key in enumerate(list(ranking)[: ks[-1]]):
            if has_answer(passages_text[key], question_answers):
                first = rank
                break
        if first is None:
            continue
        for k in ks:
            if first < k:
                hits[k] += 1
    total = len(rankings)
    return {f"top_{k}": (hits[k] / total if total else 0.0) for k in ks}
