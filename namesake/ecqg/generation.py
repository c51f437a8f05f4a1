"""Question-generator inputs and outputs, and the generation run (`namesake ecqg generate`).

The generator is a seq2seq model (BART by default) trained on DPR-format training files:

- source ``entity: <e> passage: <p>`` (entity-conditioned) or ``passage: <p>`` (unconditioned);
- target ``question: <q> answer: <a>``.

The conditioning entity of a gold triple is a spaCy noun chunk of the question that also occurs
(case-insensitively) in the passage; triples without one are skipped for the conditioned model.
Generations are parsed back with :func:`parse_generation`, which returns None (never raises) for
text without the ``question: ... answer: ...`` shape.

:func:`generate_questions` runs a trained generator over a passages Parquet: for each passage the
generator gets ``entity: <e> passage: <title>. <text>`` for each of its `entities_per_passage`
least-attended entities (from ``namesake ecqg rank-entities``), or ``passage: <title>. <text>``
once per passage when unconditioned; each source is sampled `samples_per_entity` times
(top-p / top-k sampling), in batches. It writes JSON lines ``{"passage_id", "entity",
"question", "answer", "raw"}`` (entity null when unconditioned); generations without the
``question: ... answer: ...`` shape are not written there but counted and listed in the
statistics file, as are empty passages and passages without ranked entities.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from namesake.outputs import atomic_file

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


def warm_start_generator(encoder: str, out_dir: str | Path, seed: int = 0) -> Path:
    """A BERT2BERT seq2seq model warm-started from a BERT-style encoder (Rothe et al., 2020).

    The offline stand-in for BART: both halves start from `encoder` (the decoder gains
    cross-attention), so a few steps teach it the "question: ... answer: ..." shape. The new
    cross-attention weights are drawn with `seed`, so a re-run builds the same generator.
    """
    from transformers import AutoTokenizer, EncoderDecoderModel, set_seed

    from namesake.outputs import atomic_directory

    set_seed(seed)
    tokenizer = AutoTokenizer.from_pretrained(encoder)
    model = EncoderDecoderModel.from_encoder_decoder_pretrained(encoder, encoder)
    model.config.decoder_start_token_id = tokenizer.cls_token_id
    model.config.eos_token_id = tokenizer.sep_token_id
    model.config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.decoder_start_token_id = tokenizer.cls_token_id
    model.generation_config.eos_token_id = tokenizer.sep_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    with atomic_directory(out_dir, writer="ecqg warm-start") as staging:
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
    return Path(out_dir)


MAX_LISTED_MALFORMED = 1000


def least_attended(entities, k: int) -> list[str]:
    """The first ``k`` distinct (case-insensitive) non-empty entity texts, in ranking order."""
    chosen, seen = [], set()
    for entity in entities if entities is not None else []:
        text = entity.get("text") if isinstance(entity, dict) else None
        text = _clean(text or "")
        if not text or text.lower() in seen:
            continue
        seen.add(text.lower())
        chosen.append(text)
        if len(chosen) == k:
            break
    return chosen


def generation_inputs(
    passages: Sequence[dict],
    ranked: dict[str, list] | None,
    entities_per_passage: int,
    stats: dict,
) -> list[tuple[str, str | None, str]]:
    """(passage_id, entity or None, source) for each generator input.

    `ranked` maps a passage id to its ranked entities; None means unconditioned (one input per
    passage). Empty passages and passages without entities are counted in `stats`.
    """
    jobs = []
    for row in passages:
        text = _clean(row.get("text") or "")
        passage_id = str(row["id"])
        if not text:
            stats["empty_passages"] += 1
            continue
        title = _clean(row.get("title") or "")
        passage = f"{title}. {text}" if title else text
        if ranked is None:
            jobs.append((passage_id, None, format_source(passage)))
            continue
        entities = least_attended(ranked.get(passage_id), entities_per_passage)
        if not entities:
            stats["passages_without_entities"] += 1
            continue
        for entity in entities:
            jobs.append((passage_id, entity, format_source(passage, entity)))
    return jobs


def read_ranked_entities(path: str | os.PathLike) -> dict[str, list]:
    """Passage id → ranked entities, from a ``namesake ecqg rank-entities`` Parquet file."""
    import pyarrow.parquet as pq

    from namesake.ecqg.passages import checked_parquet_columns

    checked_parquet_columns(path, ("id", "entities"), "ranked-entities")
    table = pq.read_table(path, columns=["id", "entities"])
    return {str(r["id"]): r["entities"] for r in table.to_pylist()}


def generate_questions(
    passages_path: str | os.PathLike,
    model: str,
    out: str | os.PathLike,
    *,
    ranked_entities: str | os.PathLike | None = None,
    unconditioned: bool = False,
    stats_path: str | os.PathLike | None = None,
    entities_per_passage: int = 3,
    samples_per_entity: int = 1,
    top_p: float = 0.95,
    sampling_top_k: int = 50,
    max_new_tokens: int = 64,
    max_source_length: int = 1024,
    batch_size: int = 16,
    max_passages: int | None = None,
    seed: int = 0,
    device: str | None = None,
) -> dict:
    """Synthetic questions from a trained generator (see the module docstring); returns the
    statistics, also written to `stats_path` (default ``<out>.stats.json``).

    Conditioned runs need `ranked_entities`. Both files are replaced atomically: a failure
    leaves neither a partial file nor a temporary one.
    """
    from namesake.ecqg.passages import read_passages

    if not unconditioned and ranked_entities is None:
        raise ValueError("ranked_entities is needed unless unconditioned")
    started = time.time()
    out = Path(out)
    stats_path = Path(stats_path) if stats_path else out.with_name(out.name + ".stats.json")
    columns = ["id", "title", "text"]
    passages = read_passages(passages_path, columns=columns, max_passages=max_passages)
    passages = passages.to_pylist()
    ranked = None if unconditioned else read_ranked_entities(ranked_entities)
    stats = {
        "passages": len(passages),
        "empty_passages": 0,
        "passages_without_entities": 0,
        "conditioned": not unconditioned,
    }
    jobs = generation_inputs(passages, ranked, entities_per_passage, stats)
    stats["inputs"] = len(jobs)
    print(
        f"{len(passages)} passages ({stats['empty_passages']} empty, "
        f"{stats['passages_without_entities']} without entities): {len(jobs)} generator inputs"
    )

    import torch
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer, set_seed

    set_seed(seed)
    device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    tokenizer = AutoTokenizer.from_pretrained(model)
    generator = AutoModelForSeq2SeqLM.from_pretrained(model).to(device).eval()
    if device.type == "cuda" and torch.cuda.is_bf16_supported():
        generator = generator.to(torch.bfloat16)

    records, malformed = [], []
    n_malformed = 0
    for begin in range(0, len(jobs), batch_size):
        batch = jobs[begin : begin + batch_size]
        inputs = tokenizer(
            [source for _, _, source in batch],
            max_length=max_source_length,
            truncation=True,
            padding=True,
            return_tensors="pt",
        )
        inputs.pop("token_type_ids", None)
        inputs = inputs.to(device)
        with torch.no_grad():
            generated = generator.generate(
                **inputs,
                do_sample=True,
                top_p=top_p,
                top_k=sampling_top_k,
                max_new_tokens=max_new_tokens,
                num_return_sequences=samples_per_entity,
            )
        texts = tokenizer.batch_decode(generated, skip_special_tokens=True)
        for i, raw in enumerate(texts):
            passage_id, entity, _ = batch[i // samples_per_entity]
            parsed = parse_generation(raw)
            if parsed is None:
                n_malformed += 1
                if len(malformed) < MAX_LISTED_MALFORMED:
                    malformed.append({"passage_id": passage_id, "entity": entity, "raw": raw})
                continue
            question, answer = parsed
            records.append(
                {
                    "passage_id": passage_id,
                    "entity": entity,
                    "question": question,
                    "answer": answer,
                    "raw": raw,
                }
            )
        print(f"generated {min(begin + len(batch), len(jobs))}/{len(jobs)} inputs", flush=True)

    stats.update(
        {
            "generations": len(records) + n_malformed,
            "written": len(records),
            "malformed": n_malformed,
            "malformed_examples": malformed,
            "model": str(model),
            "settings": {
                "entities_per_passage": entities_per_passage,
                "samples_per_entity": samples_per_entity,
                "top_p": top_p,
                "sampling_top_k": sampling_top_k,
                "max_new_tokens": max_new_tokens,
                "seed": seed,
            },
            "seconds": round(time.time() - started, 2),
        }
    )
    with atomic_file(out, "w") as f:
        for record in records:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
    with atomic_file(stats_path, "w") as f:
        f.write(json.dumps(stats, indent=2, ensure_ascii=False) + "\n")
    print(
        f"wrote {len(records)} questions to {out} ({n_malformed} malformed generations, "
        f"listed in {stats_path})"
    )
    return stats
