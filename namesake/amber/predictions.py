"""Retrieval predictions in the format the AmbER authors' evaluation reads: one JSON line per
query, ``{"id": ..., "output": {"provenance": [{"wikipedia_id": ...}, ...]}}``, best first."""

from __future__ import annotations

import os
from collections.abc import Iterable

import msgspec

from namesake.io import BadInputError, iter_json_lines
from namesake.outputs import atomic_file


class _Provenance(msgspec.Struct):
    wikipedia_id: str | int


class _Output(msgspec.Struct):
    provenance: list[_Provenance]


class _Prediction(msgspec.Struct):
    id: str
    output: _Output


_PREDICTION = msgspec.json.Decoder(_Prediction)


def write_predictions(
    path: str | os.PathLike, predictions: Iterable[tuple[str, list[tuple[str, float]]]]
) -> None:
    """Writes (query id, ranked (wikipedia_id, score) pairs) atomically; scores are kept too."""
    with atomic_file(path) as f:
        for query_id, ranking in predictions:
            provenance = [{"wikipedia_id": doc, "score": float(score)} for doc, score in ranking]
            f.write(msgspec.json.encode({"id": query_id, "output": {"provenance": provenance}}))
            f.write(b"\n")


def read_predictions(path: str | os.PathLike) -> dict[str, list[str]]:
    """query id -> ranked wikipedia ids; a malformed line is an error naming file and line."""
    predictions: dict[str, list[str]] = {}
    for line_no, prediction in iter_json_lines(path, _PREDICTION):
        if prediction.id in predictions:
            raise BadInputError(path, line_no, f"second prediction for {prediction.id}")
        predictions[prediction.id] = [str(p.wikipedia_id) for p in prediction.output.provenance]
    return predictions
