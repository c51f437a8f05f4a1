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

import re
from collections.abc import Iterable
from pathlib import Path

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
        answers = record.get("answers") or []
        answer = next((a for a in answers if isinstance(a, str) and a.strip()), None)
        contexts = record.get("positive_ctxs") or []
        ctx = contexts[0] if isinstance(contexts[0] if contexts else None, dict) else {}
        question = record.get("question")
        if (
            answer is None
            or not isinstance(question, str)
            or not str(ctx.get("text") or "").strip()
        ):
            skipped += 1  # read_dpr_file lets through items without an answer; QG needs one
            continue
        passage = _clean(ctx.get("text") or "")
        title = _clean(ctx.get("title") or "")
        full_passage = f"{title}. {passage}" if title else passage
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
