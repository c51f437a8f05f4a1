"""Where a passage encoder looks: CLS attention over passage tokens and over entities.

For a BERT-style passage encoder (any Hub id or local path ``AutoModel`` loads: BERT, DPR
context encoders, sentence-transformers directories) the input is the DPR pair
``[CLS] title [SEP] text [SEP]`` and the statistic is the attention that position 0 (CLS,
the pooled position of DPR) pays to every token in one layer (default the last), averaged
over the chosen heads (default all).

Per passage (:class:`PassageStats`):

- ``entity_attention``: per entity, the mean attention over the word pieces of the text
  segment whose offset-mapping span overlaps the entity's character span; None when no word
  piece does (the entity was truncated away): counted in ``not_found``, never an error.
- ``ranked``: entity indices by ascending attention (least attended first), Nones last.
- ``entropy``: Shannon entropy (nats) of the CLS attention over the text tokens, renormalised
  to sum to 1.
- ``first_sentence_mean`` / ``rest_mean``: mean raw CLS attention per text token in the first
  sentence vs the rest of the text. The first sentence ends at the first ``.``, ``!`` or
  ``?`` (with any closing quotes/brackets) followed by whitespace or the end of the text — a
  simple regex, not spaCy, so it is fast and deterministic; a token belongs to the first
  sentence when its span starts before that end. None when a part has no tokens.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from namesake.ecqg.entities import Entity, find_entities
from namesake.ecqg.passages import read_passages
from namesake.markdown import markdown_table
from namesake.outputs import atomic_directory, atomic_file
from namesake.papers import paper

_SENTENCE_END = re.compile(r"[.!?]+[\"')\]]*(?=\s|$)")


def first_sentence_end(text: str) -> int:
    """Character offset where the first sentence of `text` ends (len(text) if no boundary)."""
    match = _SENTENCE_END.search(text)
    return match.end() if match else len(text)


@dataclass
class PassageStats:
    entity_attention: list[float | None] = field(default_factory=list)
    ranked: list[int] = field(default_factory=list)
    entropy: float | None = None
    first_sentence_mean: float | None = None
    rest_mean: float | None = None
    text_tokens: int = 0

    @property
    def not_found(self) -> int:
        return sum(a is None for a in self.entity_attention)


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def passage_stats(
    attention: Sequence[float],
    offsets: Sequence[tuple[int, int]],
    sequence_ids: Sequence[int | None],
    text: str,
    entities: Sequence[Entity],
) -> PassageStats:
    """Statistics of one passage from its CLS attention row and tokenisation.

    `attention[i]` is the attention CLS pays to token i; `offsets[i]` its character span and
    `sequence_ids[i]` its segment (0 title, 1 text, None special/padding).
    """
    text_idx = [
        i for i, sid in enumerate(sequence_ids) if sid == 1 and offsets[i][1] > offsets[i][0]
    ]
    stats = PassageStats(text_tokens=len(text_idx))
    for entity in entities:
        pieces = [
            float(attention[i])
            for i in text_idx
            if offsets[i][0] < entity.end and offsets[i][1] > entity.start
        ]
        stats.entity_attention.append(_mean(pieces))
    stats.ranked = sorted(
        range(len(entities)),
        key=lambda j: (
            stats.entity_attention[j] is None,
            stats.entity_attention[j] or 0.0,
            j,
        ),
    )
    weights = [float(attention[i]) for i in text_idx]
    total = sum(weights)
    if total > 0:
        stats.entropy = -sum(w / total * math.log(w / total) for w in weights if w > 0)
    end = first_sentence_end(text)
    stats.first_sentence_mean = _mean(
        [float(attention[i]) for i in text_idx if offsets[i][0] < end]
    )
    stats.rest_mean = _mean([float(attention[i]) for i in text_idx if offsets[i][0] >= end])
    return stats


class PassageAttention:
    """CLS attention of a passage encoder over ``title [SEP] text`` inputs.

    `model` is a Hub id or local path (or, for tests, an already built ``PreTrainedModel``
    together with `tokenizer`). `layer` indexes the encoder layers (-1 the last); `heads` the
    heads to average (None: all). Inputs are truncated to `max_length` tokens.
    """

    def __init__(
        self,
        model,
        layer: int = -1,
        heads: list[int] | None = None,
        max_length: int = 256,
        tokenizer=None,
        device: str | None = None,
    ):
        import torch
        from transformers import AutoModel, AutoTokenizer

        if isinstance(model, (str, os.PathLike)):
            name = str(model)
            if tokenizer is None:
                tokenizer = AutoTokenizer.from_pretrained(name)
            model = AutoModel.from_pretrained(
                name, output_attentions=True, attn_implementation="eager"
            )
        elif tokenizer is None:
            raise ValueError("a tokenizer is needed when the model is given as an object")
        if not getattr(tokenizer, "is_fast", False):
            raise ValueError("PassageAttention needs a fast tokenizer (offset mappings)")
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.model = model.to(self.device).eval()
        self.tokenizer = tokenizer
        self.layer = layer
        self.heads = list(heads) if heads is not None else None
        self.max_length = max_length

    def cls_attention(self, titles: Sequence[str], texts: Sequence[str]):
        """Per passage: (CLS attention row as a list, offsets, sequence ids), padding removed."""
        import torch

        encoded = self.tokenizer(
            list(titles),
            list(texts),
            truncation="longest_first",
            max_length=self.max_length,
            padding=True,
            return_offsets_mapping=True,
            return_tensors="pt",
        )
        offsets = encoded.pop("offset_mapping").tolist()
        sequence_ids = [encoded.sequence_ids(i) for i in range(len(titles))]
        inputs = {k: v.to(self.device) for k, v in encoded.items()}
        with torch.no_grad():
            outputs = self.model(**inputs, output_attentions=True)
        attentions = outputs.attentions
        if not attentions:
            raise ValueError("the model returned no attentions (needs eager attention)")
        layer = attentions[self.layer]  # (batch, heads, query, key)
        if self.heads is not None:
            layer = layer[:, self.heads]
        rows = layer[:, :, 0, :].float().mean(dim=1).cpu()
        mask = encoded["attention_mask"].tolist()
        rows = rows.tolist()
        result = []
        for i in range(len(titles)):
            keep = [j for j, m in enumerate(mask[i]) if m]  # drop padding (either side)
            result.append(
                (
                    [rows[i][j] for j in keep],
                    [tuple(offsets[i][j]) for j in keep],
                    [sequence_ids[i][j] for j in keep],
                )
            )
        return result

    def analyse(self, title: str, text: str, entities: Sequence[Entity]) -> PassageStats:
        return self.analyse_batch([title], [text], [entities])[0]

    def analyse_batch(
        self,
        titles: Sequence[str],
        texts: Sequence[str],
        entities: Sequence[Sequence[Entity]],
    ) -> list[PassageStats]:
        titles = [t if isinstance(t, str) else "" for t in titles]
        texts = [t if isinstance(t, str) else "" for t in texts]
        rows = self.cls_attention(titles, texts)
        return [
            passage_stats(attention, offsets, sids, text, ents)
            for (attention, offsets, sids), text, ents in zip(rows, texts, entities, strict=True)
        ]

    def analyse_many(
        self,
        passages: pa.Table,
        entities: Sequence[Sequence[Entity]],
        batch_size: int = 32,
    ) -> list[PassageStats]:
        """Statistics of every row of a passages table (``title``, ``text``), in batches."""
        titles = passages.column("title").to_pylist()
        texts = passages.column("text").to_pylist()
        if len(entities) != len(texts):
            raise ValueError(f"{len(entities)} entity lists for {len(texts)} passages")
        stats: list[PassageStats] = []
        for start in range(0, len(texts), batch_size):
            end = start + batch_size
            stats.extend(
                self.analyse_batch(titles[start:end], texts[start:end], entities[start:end])
            )
        return stats


ENTITY_TYPE = pa.struct(
    [
        ("text", pa.string()),
        ("label", pa.string()),
        ("start", pa.int32()),
        ("end", pa.int32()),
        ("attention", pa.float64()),
    ]
)
RANKED_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("entities", pa.list_(ENTITY_TYPE)),
        ("entropy", pa.float64()),
        ("first_sentence_mean", pa.float64()),
        ("rest_mean", pa.float64()),
    ]
)


def rank_entities(
    passages_path: str | os.PathLike,
    model,
    out_path: str | os.PathLike,
    max_passages: int | None = None,
    entities_per_passage: int | None = None,
    layer: int = -1,
    heads: list[int] | None = None,
    *,
    nlp=None,
    batch_size: int = 32,
    max_length: int = 256,
    chunk_rows: int = 2048,
) -> dict[str, int]:
    """Ranks each passage's entities by encoder attention and writes them to Parquet.

    Reads the first `max_passages` passages (all by default); writes ``id``, ``entities``
    (list of ``{text, label, start, end, attention}`` sorted least-attended first, entities not
    in the tokenised passage last with null attention; only the first `entities_per_passage`
    kept when given),
    ``entropy``, ``first_sentence_mean`` and ``rest_mean``. The file is replaced atomically.
    `model` is a Hub id/path or a :class:`PassageAttention`. Returns counts.
    """
    table = read_passages(passages_path, max_passages=max_passages)
    scorer = model if isinstance(model, PassageAttention) else None
    if scorer is None:
        scorer = PassageAttention(model, layer=layer, heads=heads, max_length=max_length)
    if nlp is None:
        from namesake.ecqg.entities import load_ner

        nlp = load_ner()
    counts = {"passages": 0, "entities": 0, "entities_not_found": 0, "passages_without_entities": 0}
    with atomic_file(out_path, "wb") as f:
        writer = pq.ParquetWriter(f, RANKED_SCHEMA)
        try:
            for start in range(0, table.num_rows, chunk_rows):
                chunk = table.slice(start, chunk_rows)
                ents = find_entities(chunk.column("text").to_pylist(), nlp=nlp)
                stats = scorer.analyse_many(chunk, ents, batch_size=batch_size)
                rows = {name: [] for name in RANKED_SCHEMA.names}
                for pid, es, st in zip(chunk.column("id").to_pylist(), ents, stats, strict=True):
                    ranked = [
                        {
                            "text": es[j].text,
                            "label": es[j].label,
                            "start": es[j].start,
                            "end": es[j].end,
                            "attention": st.entity_attention[j],
                        }
                        for j in st.ranked
                    ]
                    if entities_per_passage is not None:
                        ranked = ranked[:entities_per_passage]
                    rows["id"].append(pid)
                    rows["entities"].append(ranked)
                    rows["entropy"].append(st.entropy)
                    rows["first_sentence_mean"].append(st.first_sentence_mean)
                    rows["rest_mean"].append(st.rest_mean)
                    counts["passages"] += 1
                    counts["entities"] += len(es)
                    counts["entities_not_found"] += st.not_found
                    counts["passages_without_entities"] += not es
                writer.write_table(pa.table(rows, schema=RANKED_SCHEMA))
        finally:
            writer.close()
    return counts


def _summary(stats: Sequence[PassageStats], entities: Sequence[Sequence[Entity]]) -> dict:
    def mean_of(values):
        values = [v for v in values if v is not None]
        return sum(values) / len(values) if values else None

    first = mean_of(s.first_sentence_mean for s in stats)
    rest = mean_of(s.rest_mean for s in stats)
    return {
        "passages": len(stats),
        "mean_entropy": mean_of(s.entropy for s in stats),
        "mean_first_sentence_attention": first,
        "mean_rest_attention": rest,
        "first_minus_rest": first - rest if first is not None and rest is not None else None,
        "mean_entities_per_passage": (
            sum(len(e) for e in entities) / len(entities) if entities else None
        ),
        "entities_not_found": sum(s.not_found for s in stats),
    }


_COLUMNS = [
    ("passages", "passages"),
    ("mean entropy", "mean_entropy"),
    ("first-sentence attn", "mean_first_sentence_attention"),
    ("rest attn", "mean_rest_attention"),
    ("first − rest", "first_minus_rest"),
    ("entities/passage", "mean_entities_per_passage"),
    ("entities not found", "entities_not_found"),
]


def _cell(value) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.4f}" if abs(value) >= 1e-3 or value == 0 else f"{value:.3e}"
    return str(value)


# Our row labels (`make ecqg-demo`'s) -> the models whose entropy the ECQG paper gives in its
# text (Sec. 3.3; namesake/data/papers/ecqg.json).
PAPER_ENTROPY_MODELS = {"DPR": "DPR (baseline)", "UnCon-DPR": "UnCon-DPR", "Mixed-DPR": "Mixed-DPR"}


def paper_entropy(label: str) -> str:
    """The ECQG paper's attention entropy for the model our row ``label`` trains, or why
    there is none."""
    return (
        paper("ecqg")
        .table("entropy")
        .printed(model=PAPER_ENTROPY_MODELS.get(label, ""), measure="attention entropy")
    )


def _markdown(rows: dict[str, dict]) -> str:
    names = [name for name, _ in _COLUMNS]
    names.insert(names.index("mean entropy") + 1, "paper")
    lines = []  # one list of cells per model
    for model, summary in rows.items():
        if "not_trained" in summary:
            values = [f"not trained: {summary['not_trained']}"] + ["–"] * (len(_COLUMNS) - 1)
        else:
            values = [_cell(summary[key]) for _, key in _COLUMNS]
        values.insert(names.index("paper"), paper_entropy(model))
        lines.append([model, *values])
    return markdown_table(["model", *names], lines) + "\n"


def model_entry(entry: str) -> tuple[str, str]:
    """(row label, model) of a ``--models`` entry: ``LABEL=PATH``, or a PATH (or Hub id)
    labelled by itself."""
    label, equals, path = entry.partition("=")
    if equals and label and path:
        return label, path
    return entry, entry


def passage_encoder_path(model: str) -> str:
    """The ``AutoModel`` folder to load for `model`: a ``training/train_dpr.py`` output
    folder's ``passage_encoder/`` (the encoder whose attention the paper studies), else
    `model` itself (Hub id, BERT, DPR context encoder or sentence-transformers folder)."""
    encoder = Path(model) / "passage_encoder"
    return str(encoder) if encoder.is_dir() else model


def attention_report(
    passages_path: str | os.PathLike,
    models: Iterable,
    max_passages: int | None = 10000,
    out: str | os.PathLike | None = None,
    *,
    layer: int = -1,
    heads: list[int] | None = None,
    nlp=None,
    batch_size: int = 32,
    max_length: int = 256,
) -> str:
    """Markdown table of attention statistics, one row per model, over the first
    `max_passages` passages (None: all).

    A model is a :class:`PassageAttention` or a ``--models`` entry (:func:`model_entry`:
    ``LABEL=PATH`` or a path / Hub id; a training folder gives its passage encoder, see
    :func:`passage_encoder_path`). A folder whose training was skipped (``not_trained.json``
    in it or in its parent) gets a row saying why instead of figures. Entities are found once
    and shared by all models. With `out`, also writes ``report.md`` and ``report.json`` into
    that directory (replaced atomically).
    """
    from namesake.ecqg.dpr.not_trained import not_trained_reason

    table = read_passages(passages_path, max_passages=max_passages)
    if nlp is None:
        from namesake.ecqg.entities import load_ner

        nlp = load_ner()
    entities = find_entities(table.column("text").to_pylist(), nlp=nlp)
    rows: dict[str, dict] = {}
    for model in models:
        if isinstance(model, PassageAttention):
            name = path = getattr(model.model, "name_or_path", "model")
            scorer, reason = model, None
        else:
            name, path = model_entry(str(model))
            reason = not_trained_reason(path)
        key, i = name, 2
        while key in rows:
            key, i = f"{name} ({i})", i + 1
        if reason is not None:
            rows[key] = {"model": path, "not_trained": reason}
            continue
        if not isinstance(model, PassageAttention):
            path = passage_encoder_path(path)
            scorer = PassageAttention(path, layer=layer, heads=heads, max_length=max_length)
        stats = scorer.analyse_many(table, entities, batch_size=batch_size)
        rows[key] = {"model": path, **_summary(stats, entities)}
    report = _markdown(rows)
    if out is not None:
        with atomic_directory(out, writer="ecqg attention-report") as staging:
            Path(staging, "report.md").write_text(report, encoding="utf-8")
            Path(staging, "report.json").write_text(
                json.dumps(
                    {
                        "passages_path": str(passages_path),
                        "max_passages": max_passages,
                        "models": rows,
                    },
                    indent=2,
                ),
                encoding="utf-8",
            )
    return report
