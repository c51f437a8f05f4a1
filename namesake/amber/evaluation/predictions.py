"""Retrieval predictions: the format the AmbER authors' evaluation reads, one JSON line per
query, ``{"id": ..., "output": {"provenance": [{"wikipedia_id": ...}, ...]}}``, best first
("kilt"), or a TREC run (``qid Q0 docid rank score tag``, `namesake.trec`), so that any
system's output (Pyserini, ColBERT, an LLM reranker) is scored without conversion.

These are the rankings-as-dictionaries views of `namesake.runs.Run`, which reads and writes
both formats (`Run.read`, `Run.write`), for the callers that still take dictionaries."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator

from namesake.runs import FORMATS, Run
from namesake.trec import checked_score


def write_predictions(
    path: str | os.PathLike,
    predictions: Iterable[tuple[str, list[tuple]]],
    format: str = "kilt",
    run_name: str = "namesake",
) -> None:
    """Writes (query id, ranking) atomically as KILT JSON lines or a TREC run tagged
    ``run_name`` (`Run.write`). A ranking holds (wikipedia_id, score) pairs, or (wikipedia_id,
    score, first-stage score) triples after reranking: JSON lines keep both scores, a TREC run
    (one score a line) the final one. A score that is not finite is refused
    (`checked_score`), ``path`` left as it was."""
    if format not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, not {format!r}")
    Run.from_rankings(_checked_first_stages(predictions)).write(path, format, run_name)


def _checked_first_stages(
    predictions: Iterable[tuple[str, list[tuple]]],
) -> Iterator[tuple[str, list[tuple]]]:
    """The predictions, their scores checked in the order the writer meets them
    (`checked_score`): a Run holds NaN for "no first-stage score", so a NaN given as one is
    refused here, before it would be taken for none, and so is a bad score before it."""
    for query_id, ranking in predictions:
        for rank, item in enumerate(ranking, 1):
            checked_score(item[1], query_id, rank)
            if len(item) > 2:
                checked_score(item[2], query_id, rank, "first-stage score")
        yield query_id, ranking


def read_predictions(path: str | os.PathLike, format: str | None = None) -> dict[str, list[str]]:
    """query id -> ranked wikipedia ids, from KILT JSON lines or a TREC run (``format``, or
    told from the content); a malformed line is an error naming file and line."""
    scored = read_scored_predictions(path, format)
    return {query_id: [doc for doc, _ in ranking] for query_id, ranking in scored.items()}


def read_scored_predictions(
    path: str | os.PathLike, format: str | None = None
) -> dict[str, list[tuple[str, float | None]]]:
    """query id -> ranked (wikipedia id, score) pairs, the score None where a JSON line's
    provenance has none; errors as in `read_predictions`. The file is read once, the format
    told from its first lines on the way, so a pipe (``/dev/stdin``, ``<(zcat run.gz)``)
    reads as the file would (`Run.read`)."""
    run = Run.read(path, format)
    return {query_id: [item[:2] for item in ranking] for query_id, ranking in run.rankings()}
