"""The synthetic training set (issue 5, step 7): mixing, BM25 hard negatives, DPR format.

:func:`mix` draws a `ratio` share of entity-conditioned and the rest unconditioned records
(the paper's Mixed-DPR uses 50/50), deterministically for a seed. :func:`add_bm25_hard_negatives`
gives each question the top BM25 passages that are neither its own passage nor contain its
answer (DPR's convention: term matching makes them hard). :func:`to_dpr` writes DPR's training
format::

    {"question": q, "answers": [a],
     "positive_ctxs": [{"title", "text", "passage_id"}], "negative_ctxs": [],
     "hard_negative_ctxs": [{"title", "text", "passage_id"}, ...]}

"Contains the answer" is :func:`namesake.ecqg.filtering.contains_answer`: the AmbER-normalised
answer occurs on word boundaries in the normalised passage text.
"""

from __future__ import annotations

import json
import math
import os
import random
from collections.abc import Iterable, Mapping

from namesake.ecqg.filtering import contains_answer
from namesake.io import atomic_file
from namesake.retrieval.corpus import Document


def passage_table(passages) -> dict[str, dict]:
    """Passage id (str) → {"title", "text"} from a pyarrow Table, rows or a mapping.

    Accepts a ``pyarrow.Table`` / list of row dicts with ``id``, ``title``, ``text`` (the
    passages Parquet), or a mapping id → row dict or id → text.
    """
    if hasattr(passages, "to_pylist"):
        passages = passages.to_pylist()
    if isinstance(passages, Mapping):
        table = {}
        for pid, value in passages.items():
            if isinstance(value, Mapping):
                table[str(pid)] = {
                    "title": value.get("title") or "",
                    "text": value.get("text") or "",
                }
            else:
                table[str(pid)] = {"title": "", "text": value or ""}
        return table
    return {
        str(row["id"]): {"title": row.get("title") or "", "text": row.get("text") or ""}
        for row in passages
    }


def passage_documents(passages) -> list[Document]:
    """Documents for ``BM25Retriever.build`` whose ``wikipedia_id`` is the passage id."""
    return [
        Document(pid, row["title"], row["text"]) for pid, row in passage_table(passages).items()
    ]


def mix(
    conditioned: list[dict],
    unconditioned: list[dict],
    ratio: float = 0.5,
    seed: int = 0,
    size: int | None = None,
) -> list[dict]:
    """A shuffled sample with a `ratio` share of `conditioned` records, the rest unconditioned.

    Without `size` the set is the largest the two lists allow at that ratio; a larger `size`
    is cut down to that. Same inputs and seed, same output. Records are copied and tagged with
    ``"source": "conditioned" | "unconditioned"``.
    """
    if not 0.0 <= ratio <= 1.0:
        raise ValueError(f"ratio must be in [0, 1], got {ratio}")
    if size is not None and size < 0:
        raise ValueError(f"size must be ≥ 0, got {size}")
    limits = []
    if ratio > 0:
        limits.append(len(conditioned) / ratio)
    if ratio < 1:
        limits.append(len(unconditioned) / (1 - ratio))
    largest = math.floor(min(limits) + 1e-9)
    total = largest if size is None else min(size, largest)
    n_conditioned = min(round(total * ratio), len(conditioned))
    n_unconditioned = min(total - n_conditioned, len(unconditioned))
    rng = random.Random(seed)
    chosen = [
        {**record, "source": "conditioned"}
        for record in rng.sample(list(conditioned), n_conditioned)
    ] + [
        {**record, "source": "unconditioned"}
        for record in rng.sample(list(unconditioned), n_unconditioned)
    ]
    rng.shuffle(chosen)
    return chosen


def add_bm25_hard_negatives(
    records: Iterable[dict], passages_table, retriever, n: int = 1, depth: int = 100
) -> list[dict]:
    """Copies of `records` with ``hard_negative_ids``: up to `n` BM25 negatives per question.

    A negative is among the top `depth` passages `retriever` returns for the question (ids are
    passage ids), best first, not the record's own passage and not containing its answer. A
    question with no such passage gets an empty list.
    """
    records = list(records)
    table = passage_table(passages_table)
    if not records or n < 1:
        return [{**r, "hard_negative_ids": []} for r in records]
    results = retriever.search([str(r.get("question") or "") for r in records], depth)
    out = []
    for record, found in zip(records, results, strict=True):
        own, answer = str(record.get("passage_id")), str(record.get("answer") or "")
        negatives = []
        for pid, _ in found:
            row = table.get(pid)
            if pid == own or row is None or contains_answer(answer, row["text"]):
                continue
            negatives.append(pid)
            if len(negatives) == n:
                break
        out.append({**record, "hard_negative_ids": negatives})
    return out


def _ctx(pid: str, row: dict) -> dict:
    return {"title": row["title"], "text": row["text"], "passage_id": pid}


def to_dpr(records: Iterable[dict], passages) -> list[dict]:
    """Records (with optional ``hard_negative_ids``) in DPR training format.

    Records whose passage is unknown are left out.
    """
    table = passage_table(passages)
    out = []
    for record in records:
        pid = str(record.get("passage_id"))
        if pid not in table:
            continue
        out.append(
            {
                "question": record["question"],
                "answers": [record["answer"]],
                "positive_ctxs": [_ctx(pid, table[pid])],
                "negative_ctxs": [],
                "hard_negative_ctxs": [
                    _ctx(str(neg), table[str(neg)])
                    for neg in record.get("hard_negative_ids") or []
                    if str(neg) in table
                ],
            }
        )
    return out


def write_dpr(records: list[dict], path: str | os.PathLike) -> None:
    """Writes DPR-format `records` as one JSON list, replacing `path` only when complete."""
    with atomic_file(path, "w") as f:
        json.dump(records, f, ensure_ascii=False, indent=1)
        f.write("\n")
