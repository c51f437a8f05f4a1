"""DPR: training data, the bi-encoder and its loss, export to the dense retriever, top-k accuracy.

- :func:`read_dpr_file`: DPR's JSON training format (a list of objects with ``question``,
  ``answers``, ``positive_ctxs``, ``hard_negative_ctxs``; JSON lines are read too). Items that
  lack a field are counted, reported with their index and skipped (``strict=True`` raises).
- :func:`read_qa_file`: DPR test files: ``question \\t ["answer", ...]`` CSV/TSV lines, or JSON.
- :func:`dpr_loss`: negative log-likelihood of the positive passage over dot-product scores,
  with in-batch negatives and ``h`` hard negatives per question (Karpukhin et al. 2020).
- :class:`BiEncoder`: question and passage ``AutoModel`` encoders (shared or separate), the
  embedding is the last layer's ``[CLS]`` vector (DPR's pooling).
- :func:`export_sentence_transformers`: a sentence-transformers folder (Transformer + CLS
  Pooling) that ``DenseRetriever.build(..., model=passage_dir, query_model=question_dir)``
  and ``namesake retrieve --model/--query-model`` load.
- :func:`has_answer` / :func:`top_k_accuracy`: DPR's retrieval accuracy.

**Dot product vs cosine.** DPR is trained and searched with the unnormalised dot product.
``namesake.retrieval.DenseRetriever`` L2-normalises embeddings, i.e. ranks by cosine. The
exported encoders therefore rank slightly differently there than under DPR's own scoring;
``training/evaluate_dpr.py --similarity dot`` searches with the unnormalised dot product
(DPR's setting), ``--similarity cosine`` (default) with the DenseRetriever.

**Passage input.** Passages are encoded as ``"{title} {sep} {text}"`` (the tokenizer's own
separator token), exactly the string the DenseRetriever encodes
(``namesake.retrieval.dense.passage_input``), so training and retrieval see the same tokens.
"""

from __future__ import annotations

import json
import logging
import os
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import regex
import torch
import torch.nn.functional as F
from torch import nn

from namesake.retrieval.dense import passage_input

logger = logging.getLogger(__name__)

REQUIRED_FIELDS = ("question", "answers", "positive_ctxs")
DEFAULT_KS = (1, 5, 20, 100)


class DPRFileError(ValueError):
    """A DPR file (or, with ``strict=True``, one of its items) that cannot be used."""


# --- reading DPR files --------------------------------------------------------------------


def _load_json_items(path: Path) -> list:
    text = path.read_text(encoding="utf-8")
    stripped = text.lstrip()
    if not stripped:
        return []
    if stripped.startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise DPRFileError(f"{path}: not valid JSON ({error})") from error
        return data
    items = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            items.append(json.loads(line))
        except json.JSONDecodeError as error:
            raise DPRFileError(f"{path}, line {number}: not valid JSON ({error})") from error
    return items


def _context(ctx, where: str) -> dict:
    if isinstance(ctx, str):
        return {"title": "", "text": ctx}
    if not isinstance(ctx, Mapping) or not isinstance(ctx.get("text"), str):
        raise DPRFileError(f"{where}: a passage must be an object with a string 'text'")
    return {**ctx, "title": str(ctx.get("title") or ""), "text": ctx["text"]}


def _problem(item, index: int) -> tuple[str | None, dict | None]:
    """(message, cleaned item) for one raw item; message None when the item is usable."""
    where = f"item {index}"
    if not isinstance(item, Mapping):
        return f"{where}: not a JSON object", None
    missing = [f for f in REQUIRED_FIELDS if f not in item]
    if missing:
        return f"{where}: missing field(s) {', '.join(missing)}", None
    question = item["question"]
    if not isinstance(question, str) or not question.strip():
        return f"{where}: empty or non-string 'question'", None
    answers = item["answers"]
    if isinstance(answers, str):
        answers = [answers]
    if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
        return f"{where}: 'answers' must be a list of strings", None
    try:
        positives = [_context(c, where) for c in item["positive_ctxs"] or []]
        negatives = [_context(c, where) for c in item.get("hard_negative_ctxs") or []]
    except DPRFileError as error:
        return str(error), None
    if not positives:
        return f"{where}: empty 'positive_ctxs'", None
    return None, {
        **item,
        "question": question,
        "answers": answers,
        "positive_ctxs": positives,
        "hard_negative_ctxs": negatives,
    }


def read_dpr_file(
    path: str | os.PathLike, strict: bool = False, report: dict | None = None
) -> list[dict]:
    """The usable items of a DPR-format training file.

    Each item has a non-empty string ``question``, ``answers`` (list of strings),
    ``positive_ctxs`` (non-empty list of ``{"title", "text"}``) and ``hard_negative_ctxs``
    (possibly empty: a missing ``hard_negative_ctxs`` is not an error). An item lacking a
    required field, or with one of the wrong type, is skipped with a logged message naming its
    index (0-based) and counted; with ``strict=True`` the first such item raises
    :class:`DPRFileError`. ``report``, when given, receives ``items``, ``kept``, ``skipped``
    and ``problems`` (the first 20 messages).
    """
    path = Path(path)
    if not path.is_file():
        raise DPRFileError(f"{path}: no such file")
    raw = _load_json_items(path)
    if isinstance(raw, Mapping):  # some dumps wrap the list: {"data": [...]}
        raw = raw.get("data", [raw])
    if not isinstance(raw, list):
        raise DPRFileError(f"{path}: expected a JSON list of DPR items")
    kept, problems = [], []
    for index, item in enumerate(raw):
        message, cleaned = _problem(item, index)
        if message is None:
            kept.append(cleaned)
            continue
        if strict:
            raise DPRFileError(f"{path}: {message}")
        problems.append(message)
        if len(problems) <= 20:
            logger.warning("%s: %s; skipped", path, message)
    if problems:
        logger.warning(
            "%s: skipped %d of %d items with missing or bad fields", path, len(problems), len(raw)
        )
    if report is not None:
        report.update(items=len(raw), kept=len(kept), skipped=len(problems), problems=problems[:20])
    return kept


def _parse_answers(value: str, where: str) -> list[str]:
    value = value.strip()
    if value.startswith("["):
        try:
            answers = json.loads(value)
        except json.JSONDecodeError:
            import ast

            try:
                answers = ast.literal_eval(value)  # DPR's files use Python list literals
            except (ValueError, SyntaxError) as error:
                raise DPRFileError(f"{where}: answers are not a list ({error})") from error
        if not isinstance(answers, list):
            raise DPRFileError(f"{where}: answers are not a list")
        return [str(a) for a in answers]
    return [value] if value else []


def read_qa_file(path: str | os.PathLike, report: dict | None = None) -> list[dict]:
    """Questions and answers of a DPR test file: ``[{"question", "answers"}]``.

    ``.json``/``.jsonl``: DPR items (only ``question`` and ``answers`` are needed). Anything
    else: DPR's ``qas`` CSV/TSV, one ``question <tab> ["answer", ...]`` per line (a comma
    separates the two columns when a line has no tab). Lines or items without a question or
    answers are skipped, logged and counted in ``report``.
    """
    path = Path(path)
    if not path.is_file():
        raise DPRFileError(f"{path}: no such file")
    rows, problems = [], []
    if path.suffix.lower() in (".json", ".jsonl"):
        raw = _load_json_items(path)
        if isinstance(raw, Mapping):
            raw = raw.get("data", [raw])
        for index, item in enumerate(raw):
            if (
                not isinstance(item, Mapping)
                or not isinstance(item.get("question"), str)
                or not item["question"].strip()
                or "answers" not in item
            ):
                problems.append(f"item {index}: missing 'question' or 'answers'")
                continue
            answers = item["answers"]
            rows.append(
                {
                    "question": item["question"],
                    "answers": [answers] if isinstance(answers, str) else list(answers),
                }
            )
    else:
        import csv

        with path.open(encoding="utf-8", newline="") as f:
            for number, line in enumerate(f, 1):
                if not line.strip():
                    continue
                where = f"line {number}"
                if "\t" in line:
                    parts = line.rstrip("\r\n").split("\t")
                else:
                    parts = next(csv.reader([line]))
                if len(parts) < 2 or not parts[0].strip():
                    problems.append(f"{where}: expected 'question<TAB>[answers]'")
                    continue
                try:
                    answers = _parse_answers(parts[1], where)
                except DPRFileError as error:
                    problems.append(str(error))
                    continue
                rows.append({"question": parts[0].strip(), "answers": answers})
    for message in problems[:20]:
        logger.warning("%s: %s; skipped", path, message)
    if report is not None:
        report.update(kept=len(rows), skipped=len(problems), problems=problems[:20])
    return rows


# --- loss ---------------------------------------------------------------------------------


def dpr_loss(q: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    """DPR's NLL loss: mean over questions of ``-log softmax(q_i · p)[i * (1 + h)]``.

    ``q`` is ``[B, d]``; ``p`` is ``[B * (1 + h), d]``, the passages of question ``i`` in rows
    ``i * (1 + h)`` (its positive) to ``i * (1 + h) + h`` (its ``h`` hard negatives). Every
    question scores every passage of the batch (dot product): the others' positives and hard
    negatives are its in-batch negatives.
    """
    if q.dim() != 2 or p.dim() != 2 or q.shape[1] != p.shape[1]:
        raise ValueError(
            f"expected q [B, d] and p [B*(1+h), d], got {tuple(q.shape)}, {tuple(p.shape)}"
        )
    batch = q.shape[0]
    if batch == 0 or p.shape[0] % batch:
        raise ValueError(f"{p.shape[0]} passages is not a multiple of {batch} questions")
    per_question = p.shape[0] // batch
    scores = q @ p.T
    targets = torch.arange(batch, device=q.device) * per_question
    return F.cross_entropy(scores.float(), targets)


# --- the bi-encoder ---------------------------------------------------------------------


class BiEncoder(nn.Module):
    """DPR's bi-encoder: ``AutoModel`` question and passage encoders, ``[CLS]`` pooling.

    ``shared=True`` (or ``passage_model=None``) uses one encoder for both.
    """

    def __init__(self, question_model: str, passage_model: str | None = None, shared: bool = False):
        super().__init__()
        self.question_encoder = load_encoder(question_model)
        self.shared = shared or passage_model is None
        self.passage_encoder = self.question_encoder if self.shared else load_encoder(passage_model)

    @staticmethod
    def _cls(encoder: nn.Module, inputs: Mapping) -> torch.Tensor:
        return encoder(**inputs).last_hidden_state[:, 0]

    def encode_questions(self, inputs: Mapping) -> torch.Tensor:
        return self._cls(self.question_encoder, inputs)

    def encode_passages(self, inputs: Mapping) -> torch.Tensor:
        return self._cls(self.passage_encoder, inputs)

    def forward(self, question_inputs: Mapping, passage_inputs: Mapping):
        return self.encode_questions(question_inputs), self.encode_passages(passage_inputs)


def load_encoder(name: str) -> nn.Module:
    """``AutoModel`` without its pooler where it has one (unused by CLS pooling; an unused
    parameter would break DistributedDataParallel)."""
    from transformers import AutoModel

    try:
        return AutoModel.from_pretrained(name, add_pooling_layer=False)
    except TypeError:
        return AutoModel.from_pretrained(name)


# --- export -----------------------------------------------------------------------------


def export_sentence_transformers(
    encoder_dir: str | os.PathLike, out_dir: str | os.PathLike, max_seq_length: int = 256
) -> Path:
    """Writes a sentence-transformers folder (Transformer + CLS Pooling) for `encoder_dir`.

    The folder loads with ``SentenceTransformer(out_dir)`` and so as ``model`` (passage
    encoder) or ``query_model`` (question encoder) of ``DenseRetriever.build``. No
    normalisation layer: the DenseRetriever normalises itself (see the module docstring).
    """
    from sentence_transformers import SentenceTransformer

    try:  # sentence-transformers >= 6 moved the modules
        from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    except ImportError:  # pragma: no cover - older versions
        from sentence_transformers.models import Pooling, Transformer

    transformer = Transformer(str(encoder_dir), max_seq_length=max_seq_length)
    get = getattr(transformer, "get_embedding_dimension", None)
    dimension = (get or transformer.get_word_embedding_dimension)()
    pooling = Pooling(dimension, pooling_mode="cls")
    model = SentenceTransformer(modules=[transformer, pooling], device="cpu")
    out_dir = Path(out_dir)
    model.save(str(out_dir))
    return out_dir


# --- accuracy -----------------------------------------------------------------------------

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


def passage_string(ctx: Mapping, separator: str) -> str:
    """The encoder input for a DPR context (``title``, ``text``): as the DenseRetriever's."""
    return passage_input(str(ctx.get("title") or ""), ctx.get("text") or "", separator)
