"""Question-generator inputs and outputs (issue 5, steps 4-5).

The generator is a seq2seq model (BART by default) trained on DPR-format training files:

- source ``entity: <e> passage: <p>`` (entity-conditioned) or ``passage: <p>`` (unconditioned);
- target ``question: <q> answer: <a>``.

The conditioning entity of a gold triple is a spaCy noun chunk of the question that also occurs
(case-insensitively) in the passage; triples without one are skipped for the conditioned model.
Generations are parsed back with :func:`parse_generation`, which returns None (never raises) for
text without the ``question: ... answer: ...`` shape.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

logger = logging.getLogger(__name__)

REQUIRED_FIELDS = ("question", "answers", "positive_ctxs")

# Special tokens of the usual seq2seq tokenizers (BART/RoBERTa, T5, BERT) left in decoded text.
_SPECIAL_TOKENS = re.compile(r"<\s*/?\s*s\s*>|<pad>|<unk>|<mask>|\[(?:CLS|SEP|PAD|UNK|MASK)\]")
_SHAPE = re.compile(r"^\s*question\s*:(?P<q>.*?)\banswer\s*:(?P<a>.*)$", re.IGNORECASE | re.DOTALL)


def _clean(text: str) -> str:
    return " ".join(str(text).split())


def format_source(passage: str, entity: str | None = None) -> str:
    """``entity: <e> passage: <p>`` when an entity is given, else ``passage: <p>``."""
    passage = _clean(passage)
    if entity is None or not _clean(entity):
        return f"passage: {passage}"
    return f"entity: {_clean(entity)} passage: {passage}"


def format_target(question: str, answer: str) -> str:
    """``question: <q> answer: <a>``."""
    return f"question: {_clean(question)} answer: {_clean(answer)}"


def parse_generation(text: str) -> tuple[str, str] | None:
    """(question, answer) from a generation, or None when it lacks the question:/answer: shape.

    Special tokens (``<s>``, ``</s>``, ``<pad>``, ``[SEP]``...) and extra whitespace are removed
    first; an empty question or answer counts as malformed.
    """
    if not isinstance(text, str):
        return None
    cleaned = _clean(_SPECIAL_TOKENS.sub(" ", text))
    match = _SHAPE.match(cleaned)
    if match is None:
        return None
    question, answer = _clean(match["q"]), _clean(match["a"])
    # A second "question:" in the answer means the model ran on into another pair: keep the first.
    answer = _clean(re.split(r"\bquestion\s*:", answer, flags=re.IGNORECASE)[0])
    if not question or not answer:
        return None
    return question, answer


class DPRFormatError(ValueError):
    """A DPR file that is not JSON, or (with ``strict=True``) an item lacking a required field."""


def _problem(index: int, item) -> str | None:
    if not isinstance(item, dict):
        return f"item {index}: not a JSON object ({type(item).__name__})"
    missing = [f for f in REQUIRED_FIELDS if f not in item]
    if missing:
        return f"item {index}: missing field(s) {', '.join(missing)}"
    if not isinstance(item["question"], str) or not item["question"].strip():
        return f"item {index}: empty question"
    answers = item["answers"]
    if not isinstance(answers, list) or not any(isinstance(a, str) and a.strip() for a in answers):
        return f"item {index}: no answer"
    ctxs = item["positive_ctxs"]
    if (
        not isinstance(ctxs, list)
        or not ctxs
        or not isinstance(ctxs[0], dict)
        or not str(ctxs[0].get("text") or "").strip()
    ):
        return f"item {index}: no positive_ctxs with a text"
    return None


def _load_items(path: Path) -> Iterator[tuple[int, object]]:
    text = path.read_text(encoding="utf-8")
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise DPRFormatError(f"{path}: not valid JSON ({error})") from error
        yield from enumerate(data)
        return
    for index, line in enumerate(x for x in text.splitlines() if x.strip()):
        try:
            yield index, json.loads(line)
        except json.JSONDecodeError as error:
            yield index, _BadLine(str(error))


class _BadLine:
    def __init__(self, error: str):
        self.error = error


def read_dpr_training(path, strict: bool = False, stats: dict | None = None) -> Iterator[dict]:
    """Items of a DPR-format training file (a JSON list, or JSON lines), checked.

    Items lacking ``question``, ``answers`` or ``positive_ctxs`` (or with them empty) are logged
    with their index, counted in ``stats["skipped"]`` (with messages in ``stats["problems"]``) and
    skipped; with ``strict=True`` the first one raises :class:`DPRFormatError`.
    """
    path = Path(path)
    if stats is None:
        stats = {}
    stats.setdefault("read", 0)
    stats.setdefault("skipped", 0)
    stats.setdefault("problems", [])
    for index, item in _load_items(path):
        if isinstance(item, _BadLine):
            problem = f"item {index}: invalid JSON ({item.error})"
        else:
            problem = _problem(index, item)
        if problem is not None:
            message = f"{path}: {problem}"
            if strict:
                raise DPRFormatError(message)
            logger.warning("skipping %s", message)
            stats["skipped"] += 1
            stats["problems"].append(message)
            continue
        stats["read"] += 1
        yield item


def conditioning_entity(question: str, passage: str, nlp) -> str | None:
    """The longest noun chunk of ``question`` that also occurs in ``passage`` (case-insensitive),
    spelt as in the passage.

    Chunks are tried as spaCy gives them and with a leading determiner or pronoun dropped
    ("the president" → "president"); ties in length go to the earliest chunk. None when no chunk
    occurs in the passage.
    """
    if not question or not passage:
        return None
    haystack = _clean(passage)
    candidates = []
    for position, chunk in enumerate(nlp(question).noun_chunks):
        forms = [chunk.text]
        tokens = list(chunk)
        while tokens and tokens[0].pos_ in ("DET", "PRON") and len(tokens) > 1:
            tokens = tokens[1:]
            forms.append(question[tokens[0].idx : chunk.end_char])
        for form in forms:
            form = _clean(form).strip(" ?.,;:!\"'")
            if not form or all(not c.isalnum() for c in form):
                continue
            found = _occurrence(form, haystack)
            if found is not None:
                candidates.append((len(form), -position, found))
                break
    if not candidates:
        return None
    return max(candidates)[2]


def _occurrence(needle: str, haystack: str) -> str | None:
    """The passage's spelling of a whole-word, case-insensitive occurrence of ``needle``."""
    pattern = r"(?<!\w)" + re.escape(needle) + r"(?!\w)"
    match = re.search(pattern, haystack, flags=re.IGNORECASE)
    return None if match is None else match.group(0)


def training_examples(
    records: Iterable[dict], conditioned: bool, nlp=None
) -> tuple[list[tuple[str, str]], int]:
    """(source, target) pairs from DPR training items, and how many items were skipped.

    One pair per item: its first positive passage (``title`` and ``text``, joined DPR-style) and
    its first non-empty answer. For the conditioned model an item whose question has no noun chunk
    occurring in the passage is skipped (and counted); ``nlp`` is then required.
    """
    if conditioned and nlp is None:
        raise ValueError("conditioned training examples need a spaCy pipeline (nlp)")
    examples, skipped = [], 0
    for record in records:
        if _problem(0, record) is not None:
            skipped += 1
            continue
        ctx = record["positive_ctxs"][0]
        passage = _clean(ctx.get("text") or "")
        title = _clean(ctx.get("title") or "")
        full_passage = f"{title}. {passage}" if title else passage
        answer = next(a for a in record["answers"] if isinstance(a, str) and a.strip())
        question = record["question"]
        if conditioned:
            entity = conditioning_entity(question, full_passage, nlp)
            if entity is None:
                skipped += 1
                continue
            source = format_source(full_passage, entity)
        else:
            source = format_source(full_passage)
        examples.append((source, format_target(question, answer)))
    return examples, skipped


def warm_start_generator(encoder: str, out_dir: str | Path) -> Path:
    """A BERT2BERT seq2seq model warm-started from a BERT-style encoder (Rothe et al., 2020).

    The offline stand-in for BART: both halves start from `encoder` (the decoder gains
    cross-attention), so a few steps teach it the "question: ... answer: ..." shape.
    """
    from transformers import AutoTokenizer, EncoderDecoderModel

    from namesake.io import atomic_directory

    tokenizer = AutoTokenizer.from_pretrained(encoder)
    model = EncoderDecoderModel.from_encoder_decoder_pretrained(encoder, encoder)
    model.config.decoder_start_token_id = tokenizer.cls_token_id
    model.config.eos_token_id = tokenizer.sep_token_id
    model.config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.decoder_start_token_id = tokenizer.cls_token_id
    model.generation_config.eos_token_id = tokenizer.sep_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    with atomic_directory(out_dir) as staging:
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
    return Path(out_dir)
