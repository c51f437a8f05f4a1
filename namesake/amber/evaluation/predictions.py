"""Retrieval predictions: the format the AmbER authors' evaluation reads, one JSON line per
query, ``{"id": ..., "output": {"provenance": [{"wikipedia_id": ...}, ...]}}``, best first
("kilt"), or a TREC run (``qid Q0 docid rank score tag``, `namesake.trec`), so that any
system's output (Pyserini, ColBERT, an LLM reranker) is scored without conversion."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Iterator

import msgspec

from namesake.dumps.reading import iter_json_lines, iter_line_blocks
from namesake.errors import BadInputError
from namesake.outputs import atomic_file
from namesake.trec import checked_score, looks_like_run_line, read_scored_run, write_run

#: the formats of a predictions file: KILT JSON lines, or a TREC run
FORMATS = ("kilt", "trec")


class _Provenance(msgspec.Struct):
    wikipedia_id: str | int
    score: float | None = None


class _Output(msgspec.Struct):
    provenance: list[_Provenance]


class _Prediction(msgspec.Struct):
    id: str
    output: _Output


_PREDICTION = msgspec.json.Decoder(_Prediction)


def write_predictions(
    path: str | os.PathLike,
    predictions: Iterable[tuple[str, list[tuple]]],
    format: str = "kilt",
    run_name: str = "namesake",
) -> None:
    """Writes (query id, ranking) atomically as KILT JSON lines or a TREC run tagged
    ``run_name``. A ranking holds (wikipedia_id, score) pairs, or (wikipedia_id, score,
    first-stage score) triples after reranking: JSON lines keep both scores, a TREC run (one
    score a line) the final one. A score that is not finite is refused (`checked_score`),
    ``path`` left as it was."""
    if format == "trec":
        write_run(path, ((q, [item[:2] for item in r]) for q, r in predictions), run_name)
        return
    if format != "kilt":
        raise ValueError(f"format must be one of {FORMATS}, not {format!r}")
    with atomic_file(path) as f:
        for query_id, ranking in predictions:
            provenance = [
                _provenance(query_id, rank, *item) for rank, item in enumerate(ranking, 1)
            ]
            f.write(msgspec.json.encode({"id": query_id, "output": {"provenance": provenance}}))
            f.write(b"\n")


def _provenance(
    query_id: str, rank: int, doc: str, score: float, first_stage: float | None = None
) -> dict:
    record = {"wikipedia_id": doc, "score": checked_score(score, query_id, rank)}
    if first_stage is not None:
        record["first_stage_score"] = checked_score(
            first_stage, query_id, rank, "first-stage score"
        )
    return record


def detect_format(
    path: str | os.PathLike, blocks: Iterator[tuple[int, bytes]]
) -> tuple[str, Iterator]:
    """("kilt" or "trec", the line `blocks` of `path` again), the format told from the first
    non-blank line; neither is an error naming it. The blocks read to tell it are given
    again before the rest, so that the file is read once (a pipe cannot be read twice)."""
    read: list[tuple[int, bytes]] = []
    for first_line, block in blocks:
        read.append((first_line, block))
        for line_no, line in enumerate(block.split(b"\n"), first_line):
            text = line.strip()  # bytes.strip: ASCII white space, as the readers split on
            if not text:
                continue
            if text.startswith(b"{"):
                return "kilt", itertools.chain(read, blocks)
            if looks_like_run_line(text):
                return "trec", itertools.chain(read, blocks)
            raise BadInputError(
                path,
                line_no,
                "neither a KILT JSON line nor a TREC run line ('qid Q0 docid rank score "
                f"tag'): {text[:80].decode('utf-8', 'replace')!r}",
            )
    return "kilt", iter(read)  # an empty file: no predictions, which the caller reports


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
    reads as the file would."""
    blocks = iter_line_blocks(path)
    if format is None:
        format, blocks = detect_format(path, blocks)
    if format == "trec":
        return read_scored_run(path, blocks)
    predictions: dict[str, list[tuple[str, float | None]]] = {}
    for line_no, prediction in iter_json_lines(path, _PREDICTION, blocks):
        if prediction.id in predictions:
            raise BadInputError(path, line_no, f"second prediction for {prediction.id}")
        predictions[prediction.id] = [
            (str(p.wikipedia_id), p.score) for p in prediction.output.provenance
        ]
    return predictions
