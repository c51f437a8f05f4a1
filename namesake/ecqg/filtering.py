"""Filtering of synthetic questions: answer consistency, then hardness.

Records are dicts as ``generation`` writes them (``passage_id``, ``entity`` or None,
``question``, ``answer``, ``raw``); ``passages`` maps a passage id (str) to its text.

**Stage 1, answer filter** (:func:`answer_filter`). With an extractive QA model (any
``AutoModelForQuestionAnswering`` Hub id or local path) the question is asked of its passage
(long passages in overlapping windows). For each window the start and end logits are turned into
probabilities with a softmax over the *passage* tokens only (question and special tokens
masked); a span (i, j) with i ≤ j < i + ``max_answer_length`` scores p_start(i) · p_end(j),
and the best span over all windows is the prediction, its score the confidence (in [0, 1]).
A record is kept when the confidence is ≥ ``threshold`` **and** the predicted span matches the
generated answer after AmbER's normalisation (:func:`namesake.text.normalize_answer`): equal, or
token F1 ≥ ``min_f1`` (0.5). Without a QA model the filter falls back to "the normalised
generated answer occurs, on word boundaries, in the normalised passage" and says so in the
statistics (``"answer_filter": "substring fallback (no QA model)"``). The filter can also be
switched off (:func:`no_answer_filter`, for a toy generator whose answers are not checked
against anything), which the statistics say just as plainly.

**Stage 2, hardness filter** (:func:`hardness_filter`). Each (question, own passage) pair is
scored by the baseline retriever, as the paper does with its baseline neural retriever: by
default the dense bi-encoder (the bundled MiniLM, or a trained DPR), BM25 on request (see
:func:`namesake.ecqg.synthetic.hardness_retriever`). The score is the exact one the retriever
gives the own passage (``rank_candidates`` with that passage as the only candidate), so every
pair gets its true score whether or not the passage would be among the top results; only a
sparse retriever's "shares no term with the question" is 0. Pairs scoring strictly below the
``quantile`` of all scores are kept: the retriever finds them hard.

Bad records (missing/empty question or answer, e.g. generations without the
``question:/answer:`` shape, unknown passage ids, empty passages) are dropped and counted in
the statistics, never raised mid-run.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Iterable, Mapping

import numpy as np

from namesake.text import exact_match, get_tokens, normalize_answer, token_f1

logger = logging.getLogger(__name__)

FALLBACK = "substring fallback (no QA model)"
DISABLED = "disabled (answers not checked)"
MIN_F1 = 0.5


def _text(value) -> str:
    return value.strip() if isinstance(value, str) else ""


def record_problem(record, passages: Mapping[str, str]) -> str | None:
    """Why `record` cannot be filtered (a short reason used as a count key), or None."""
    if not isinstance(record, Mapping):
        return "not a JSON object"
    if not _text(record.get("question")) or not _text(record.get("answer")):
        return "missing question or answer"
    if not normalize_answer(record["answer"]):
        return "answer empty after normalisation"
    passage_id = record.get("passage_id")
    if passage_id is None or str(passage_id) not in passages:
        return "unknown passage_id"
    if not _text(passages[str(passage_id)]):
        return "empty passage"
    return None


def _valid(records: Iterable, passages: Mapping[str, str], stats: dict) -> list[dict]:
    valid, problems = [], Counter()
    for record in records:
        problem = record_problem(record, passages)
        if problem is None:
            valid.append(record)
        else:
            problems[problem] += 1
    stats["in"] = len(valid) + sum(problems.values())
    stats["dropped_bad_input"] = dict(sorted(problems.items()))
    return valid


def contains_answer(answer: str, text: str) -> bool:
    """Whether normalised `answer` occurs in normalised `text` as whole words."""
    needle = normalize_answer(answer)
    if not needle:
        return False
    return re.search(rf"(?<!\S){re.escape(needle)}(?!\S)", normalize_answer(text)) is not None


def answers_match(prediction: str, reference: str, min_f1: float = MIN_F1) -> bool:
    """Normalised exact match, or token F1 ≥ `min_f1`; a prediction with no token left
    after normalisation never matches (the QA model found no answer)."""
    if not get_tokens(prediction):
        return False
    return exact_match(prediction, reference) == 1.0 or token_f1(prediction, reference) >= min_f1


class ExtractiveQA:
    """Best-span prediction with an ``AutoModelForQuestionAnswering``; see the module docstring."""

    def __init__(
        self,
        model_name_or_path: str,
        max_seq_length: int = 384,
        doc_stride: int = 128,
        max_answer_length: int = 30,
        max_question_length: int = 64,
        device: str | None = None,
    ):
        import torch
        from transformers import AutoModelForQuestionAnswering, AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(model_name_or_path)
        if not self.tokenizer.is_fast:
            raise ValueError(f"{model_name_or_path}: a fast tokenizer is needed (offset mappings)")
        self.model = AutoModelForQuestionAnswering.from_pretrained(model_name_or_path)
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.model.to(self.device).eval()
        self.max_seq_length = max_seq_length
        self.doc_stride = doc_stride
        self.max_answer_length = max_answer_length
        self.max_question_length = max_question_length

    def _short_question(self, question: str) -> str:
        encoded = self.tokenizer(
            question,
            add_special_tokens=False,
            truncation=True,
            max_length=self.max_question_length,
            return_offsets_mapping=True,
        )
        offsets = encoded["offset_mapping"]
        return question[: offsets[-1][1]] if offsets else question

    def predict(self, questions: list[str], contexts: list[str]) -> list[tuple[str, float]]:
        """Per (question, context) the best span's text and its confidence."""
        import torch

        if not questions:
            return []
        questions = [self._short_question(q) for q in questions]
        pad_right = self.tokenizer.padding_side == "right"
        encoded = self.tokenizer(
            questions if pad_right else contexts,
            contexts if pad_right else questions,
            truncation="only_second" if pad_right else "only_first",
            max_length=self.max_seq_length,
            stride=self.doc_stride,
            return_overflowing_tokens=True,
            return_offsets_mapping=True,
            padding=True,
            return_tensors="pt",
        )
        sample_of = encoded.pop("overflow_to_sample_mapping").tolist()
        offsets = encoded.pop("offset_mapping").tolist()
        context_index = 1 if pad_right else 0
        inputs = {
            name: tensor.to(self.device)
            for name, tensor in encoded.items()
            if name in self.tokenizer.model_input_names
        }
        with torch.no_grad():
            output = self.model(**inputs)
        starts, ends = output.start_logits.float().cpu(), output.end_logits.float().cpu()
        length = starts.shape[1]
        band = torch.ones(length, length, dtype=torch.bool).triu()
        band &= ~torch.ones(length, length, dtype=torch.bool).triu(self.max_answer_length)
        best: list[tuple[str, float]] = [("", -1.0)] * len(questions)
        for feature, sample in enumerate(sample_of):
            is_context = torch.tensor(
                [s == context_index for s in encoded.sequence_ids(feature)], dtype=torch.bool
            )
            if not is_context.any():
                continue
            log_start = starts[feature].masked_fill(~is_context, -torch.inf).log_softmax(-1)
            log_end = ends[feature].masked_fill(~is_context, -torch.inf).log_softmax(-1)
            scores = log_start[:, None] + log_end[None, :]
            scores = scores.masked_fill(
                ~(band & is_context[:, None] & is_context[None, :]), -torch.inf
            )
            flat = int(scores.argmax())
            i, j = divmod(flat, length)
            confidence = float(scores[i, j].exp())
            if confidence > best[sample][1]:
                start_char, end_char = offsets[feature][i][0], offsets[feature][j][1]
                best[sample] = (contexts[sample][start_char:end_char], confidence)
        return [(span, max(confidence, 0.0)) for span, confidence in best]


def answer_filter(
    records: Iterable[dict],
    passages: Mapping[str, str],
    qa_model: str | ExtractiveQA | None = None,
    threshold: float = 0.5,
    batch_size: int = 32,
    min_f1: float = MIN_F1,
) -> tuple[list[dict], dict]:
    """Stage 1: keeps records whose generated answer the passage supports.

    Returns (kept records, statistics). `qa_model` is a Hub id / local path of an
    ``AutoModelForQuestionAnswering`` (or a loaded :class:`ExtractiveQA`); None uses the
    substring fallback. Kept records gain ``qa_answer`` and ``qa_confidence`` with a model.
    """
    stats: dict = {}
    valid = _valid(records, passages, stats)
    kept: list[dict] = []
    if qa_model is None:
        stats["answer_filter"] = FALLBACK
        kept = [r for r in valid if contains_answer(r["answer"], passages[str(r["passage_id"])])]
        stats["dropped_answer_not_in_passage"] = len(valid) - len(kept)
    else:
        qa = qa_model if isinstance(qa_model, ExtractiveQA) else ExtractiveQA(qa_model)
        stats["answer_filter"] = (
            f"extractive QA ({getattr(qa.model, 'name_or_path', qa_model)}), confidence ≥ "
            f"{threshold} and normalised exact match or token F1 ≥ {min_f1}"
        )
        low_confidence = mismatch = 0
        for begin in range(0, len(valid), max(1, batch_size)):
            batch = valid[begin : begin + max(1, batch_size)]
            predictions = qa.predict(
                [r["question"] for r in batch], [passages[str(r["passage_id"])] for r in batch]
            )
            for record, (span, confidence) in zip(batch, predictions, strict=True):
                if confidence < threshold:
                    low_confidence += 1
                elif not answers_match(span, record["answer"], min_f1):
                    mismatch += 1
                else:
                    kept.append({**record, "qa_answer": span, "qa_confidence": confidence})
        stats["dropped_low_confidence"] = low_confidence
        stats["dropped_answer_mismatch"] = mismatch
    stats["out"] = len(kept)
    return kept, stats


def no_answer_filter(
    records: Iterable[dict], passages: Mapping[str, str]
) -> tuple[list[dict], dict]:
    """Stage 1 switched off: every usable record is kept, unchecked; only bad records (see
    the module docstring) are dropped. Returns (kept records, statistics) as
    :func:`answer_filter` does, saying ``"answer_filter": DISABLED``."""
    stats: dict = {"answer_filter": DISABLED}
    kept = _valid(records, passages, stats)
    stats["out"] = len(kept)
    return kept, stats


def hardness_filter(
    records: Iterable[dict],
    passages: Mapping[str, str],
    retriever,
    quantile: float = 0.5,
) -> tuple[list[dict], dict]:
    """Stage 2: keeps (question, passage) pairs the baseline `retriever` scores low.

    `retriever` indexes the passages with their ids as document ids (``DenseRetriever`` or
    ``BM25Retriever`` built over :func:`namesake.ecqg.synthetic.passage_documents`); each pair
    is scored with ``retriever.rank_candidates``. A passage the index does not hold (e.g. an
    empty one) cannot be scored: its pairs are dropped and counted as bad input. Kept records
    gain ``baseline_score``.
    """
    if not 0.0 <= quantile <= 1.0:
        raise ValueError(f"quantile must be in [0, 1], got {quantile}")
    stats: dict = {}
    valid = _valid(records, passages, stats)
    scorable = [r for r in valid if str(r["passage_id"]) in retriever.candidate_rows]
    if len(scorable) < len(valid):
        problems = Counter(stats["dropped_bad_input"])
        problems["passage not in the retriever's index"] += len(valid) - len(scorable)
        stats["dropped_bad_input"] = dict(sorted(problems.items()))
    scores = []
    if scorable:
        owns = [[str(r["passage_id"])] for r in scorable]
        ranked = retriever.rank_candidates([r["question"] for r in scorable], owns)
        # an indexed passage missing from its one-candidate ranking is a sparse retriever's
        # "no shared term": its score is exactly 0
        scores = [found[0][1] if found else 0.0 for found in ranked]
    if scores:
        cutoff = float(np.quantile(np.asarray(scores, dtype=float), quantile))
        kept = [
            {**r, "baseline_score": s} for r, s in zip(scorable, scores, strict=True) if s < cutoff
        ]
    else:
        cutoff, kept = None, []
    stats["quantile"] = quantile
    stats["score_cutoff"] = cutoff
    stats["dropped_easy"] = len(scorable) - len(kept)
    stats["out"] = len(kept)
    return kept, stats
