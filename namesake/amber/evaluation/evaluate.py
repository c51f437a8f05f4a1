"""`namesake evaluate`'s work: one predictions file scored on one AmbER config.

Scoring returns data (an `Evaluation`: the metrics, the popularity-gap bins and the AmbER
paper's figures for the same kind of retriever); `namesake.amber.evaluation.report` formats
it, so the same evaluation reads alike on the terminal, in report.md and in
`namesake amber compare`'s combined table.
"""

from __future__ import annotations

import os

from namesake.amber.evaluation.paper import paper_kind, paper_row, split_config
from namesake.amber.evaluation.predictions import read_predictions
from namesake.amber.evaluation.report import write_report
from namesake.amber.evaluation.scoring import (
    Evaluation,
    check_columns,
    check_coverage,
    load_amber,
    prediction_coverage,
    score_predictions,
)


def score_run(
    dataset: str,
    config: str,
    predictions_path: str | os.PathLike,
    k_values: list[int],
    metric,
    allow_missing: bool = False,
    retriever: str | None = None,
    candidates: str = "all",
    predictions_format: str | None = None,
    resamples: int | None = None,
    seed: int = 0,
) -> Evaluation:
    """Scores one predictions file on one AmbER config; writes nothing.

    ``retriever``: the kind that made the predictions (e.g. ``dpr``), for the paper's figures;
    ``candidates``: "set" when each query was ranked within its AmbER set only;
    ``predictions_format``: "kilt" or "trec" (default: told from the file's content);
    ``resamples``: of the AmbER sets, for the 95% intervals, drawn with ``seed``.
    """
    queries, entities = load_amber(dataset, config)
    check_columns(queries, entities, dataset, config)
    predictions = read_predictions(predictions_path, predictions_format)
    coverage = prediction_coverage(queries, predictions)
    check_coverage(coverage, config, allow_missing, source=predictions_path)
    metrics, bins = score_predictions(
        queries, entities, predictions, k_values, metric, allow_missing, resamples, seed
    )
    about = {
        "dataset": str(dataset),
        "config": config,
        "predictions": str(predictions_path),
        "retriever": retriever,
        "candidates": candidates,
    }
    paper = paper_row(paper_kind(retriever, candidates), *split_config(config))
    return Evaluation(about, metrics, bins, paper)


def evaluate_run(
    dataset: str,
    config: str,
    predictions_path: str | os.PathLike,
    out: str | os.PathLike,
    k_values: list[int],
    metric,
    **options,
) -> Evaluation:
    """`score_run` (``options`` are its keywords), then its report written into ``out``
    (metrics.json, report.md, popularity_gap.png; the folder replaced atomically)."""
    evaluation = score_run(dataset, config, predictions_path, k_values, metric, **options)
    write_report(out, evaluation, k_values)
    return evaluation
