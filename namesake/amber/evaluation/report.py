"""The evaluation report: metrics.json, report.md (the paper's Table 5/6 layout) and
popularity_gap.png (its Figure 4)."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; no display needed
import matplotlib.pyplot as plt  # noqa: E402

from namesake.amber.evaluation.paper import (  # noqa: E402
    paper_kind,
    paper_line,
    paper_tables,
    split_config,
    system_label,
)
from namesake.amber.evaluation.predictions import read_predictions  # noqa: E402
from namesake.amber.evaluation.scoring import (  # noqa: E402
    GapBin,
    check_columns,
    check_coverage,
    coverage_lines,
    load_amber,
    prediction_coverage,
    score_predictions,
)
from namesake.outputs import atomic_directory  # noqa: E402


def _cell(value: float, interval=None) -> str:
    """A figure to one decimal, with its 95% interval when there is one: ``44.4 [33.3, 55.6]``."""
    if value is None or math.isnan(value):
        return "–"
    if interval is None or any(bound is None or math.isnan(bound) for bound in interval):
        return f"{value:.1f}"
    return f"{value:.1f} [{interval[0]:.1f}, {interval[1]:.1f}]"


def _figure(metrics: dict, key: str) -> str:
    return _cell(metrics[key], metrics.get("intervals", {}).get(key))


#: the standard IR measures' column headers (`namesake.amber.evaluation.ir_metrics`)
IR_HEADERS = {
    "ndcg@10": "nDCG@10",
    "mrr@10": "MRR@10",
    "r-precision": "R-prec",
    "recall@20": "R@20",
    "recall@100": "R@100",
}


def _columns(k_values: list[int], metrics: dict | None = None) -> list[tuple[str, str]]:
    """(header, metric key) of every measure column, in table order: AmbER's measures, then
    the head-tail gaps and the standard IR measures on all, head and tail queries where
    ``metrics`` (a row's) has them."""
    columns = [
        (f"{part}@{k}", key.format(k=k))
        for k in k_values
        for part, key in (
            ("All", "accuracy@{k}"),
            ("Head", "accuracy@{k}_head"),
            ("Tail", "accuracy@{k}_tail"),
            ("∀", "all_correct@{k}"),
        )
    ]
    columns += [
        ("Confusion", "entity_confusion"),
        ("Confusion head", "entity_confusion_head"),
        ("Confusion tail", "entity_confusion_tail"),
    ]
    extra = [(f"Head − tail@{k}", f"head_tail_gap@{k}") for k in k_values]
    extra += [
        (f"{header}{suffix}", f"{key}{part}")
        for key, header in IR_HEADERS.items()
        for part, suffix in (("", ""), ("_head", " head"), ("_tail", " tail"))
    ]
    return columns + [(header, key) for header, key in extra if key in (metrics or {})]


IR_LINE = (
    "nDCG@10, MRR@10, R-prec (KILT's page-level R-precision) and R@k (recall) are computed by "
    "ir-measures (trec_eval's code) with the gold pages as qrels (`namesake amber qrels`)."
)


def intervals_line(metrics: dict) -> str:
    """What the bracketed figures are."""
    about = metrics.get("bootstrap")
    if not about:
        return ""
    return (
        f"[low, high]: {100 * about['confidence']:g}% {about['method']} bootstrap interval, "
        f"{about['resamples']} resamples of the AmbER sets (a set's queries are resampled "
        "together)."
    )


def results_table(
    rows: list[tuple[dict[str, str], dict]],
    k_values: list[int],
    paper_rows: list[tuple[str | None, str, str]] | None = None,
) -> str:
    """Markdown: one row per run (labels first), accuracy all/head/tail/∀ per k, confusion,
    then the head-tail gaps and the standard IR measures (where the rows have them), each
    figure with its 95% interval where the row's metrics hold one.

    With ``paper_rows`` (per row: the retriever kind, or None when not known, the collection
    and the task), a "paper system" column names the paper's retriever of the same kind
    ("BLINK (paper)" beside our BLINK-style linker), and a "paper" column follows each measure
    the AmbER paper reports, holding that system's figure or the reason there is none.
    """
    labels = list(rows[0][0]) if rows else []
    if paper_rows is not None:
        labels.append("paper system")
    tables = paper_tables() if paper_rows is not None else None
    columns = [
        (header, key, paper)
        for header, key in _columns(k_values, rows[0][1] if rows else None)
        for paper in ((False, True) if tables and key in tables.measures else (False,))
    ]
    header = labels + ["paper" if paper else name for name, _, paper in columns]
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(labels) + "---:|" * (len(header) - len(labels)),
    ]
    for index, (label_values, metrics) in enumerate(rows):
        cells = list(label_values.values())
        if paper_rows is not None:
            cells.append(system_label(paper_rows[index][0]))
        for _, key, paper in columns:
            if paper:
                cells.append(tables.cell(*paper_rows[index], key))
            else:
                cells.append(_figure(metrics, key))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot_popularity_gap(bins: list[GapBin], overall_gap: float, path: Path, title: str) -> None:
    """Bars: head - tail accuracy@1 per popularity-gap bin; dashed line: the whole collection."""
    figure, axes = plt.subplots(figsize=(7, 4))
    positions = range(len(bins))
    gaps = [0.0 if math.isnan(b.gap) else b.gap for b in bins]
    axes.bar(positions, gaps, color="#4C72B0")
    axes.axhline(overall_gap, color="#C44E52", linestyle="--", label="whole collection")
    axes.axhline(0, color="black", linewidth=0.8)
    for position, gap_bin, height in zip(positions, bins, gaps, strict=True):
        axes.annotate(
            f"n={gap_bin.pairs}",
            (position, height),
            ha="center",
            va="bottom" if height >= 0 else "top",
            fontsize=8,
        )
    axes.set_xticks(list(positions), [b.label for b in bins])
    axes.set_xlabel("Popularity gap (p_head − p_tail) / p_tail")
    axes.set_ylabel("Accuracy@1 head − tail (points)")
    axes.set_title(title)
    axes.legend(loc="best")
    figure.tight_layout()
    figure.savefig(path, format="png", dpi=120)
    plt.close(figure)


def write_report(
    out: str | os.PathLike,
    metrics: dict,
    bins: list[GapBin],
    k_values: list[int],
    about: dict[str, str],
) -> None:
    """Writes the three report files into ``out``, replacing it atomically.

    ``about["retriever"]``: the kind of retriever that made the predictions, or None; the
    table shows the AmbER paper's figures for the same kind beside ours (none for a ranking
    within each query's set, ``about["candidates"] == "set"``).
    """
    overall_gap = metrics["accuracy@1_head"] - metrics["accuracy@1_tail"]
    kind = paper_kind(about.get("retriever"), about.get("candidates", "all"))
    collection, task = split_config(about["config"])
    record = {
        **about,
        "metrics": metrics,
        "paper": paper_tables().figures_for(kind, collection, task),
        "popularity_gap": [
            {
                "bin": b.label,
                "pairs": b.pairs,
                "head_accuracy@1": b.head_accuracy,
                "tail_accuracy@1": b.tail_accuracy,
                "gap": b.gap,
            }
            for b in bins
        ],
        "overall_head_tail_gap@1": overall_gap,
    }
    title = f"{Path(about['predictions']).stem} on {about['config']}"
    lines = coverage_lines(metrics["coverage"], about["config"]) if "coverage" in metrics else []
    coverage = "".join(f"- {line}\n" for line in lines) + ("\n" if lines else "")
    with atomic_directory(out, writer="evaluate") as staging:
        (staging / "metrics.json").write_text(
            json.dumps(record, indent=2, allow_nan=True) + "\n", encoding="utf-8"
        )
        table = results_table(
            [({"Run": title}, metrics)], k_values, paper_rows=[(kind, collection, task)]
        )
        gap_lines = [
            "| Popularity gap | Pairs | Head acc@1 | Tail acc@1 | Head − tail |",
            "|---|---:|---:|---:|---:|",
        ]
        gap_lines += [
            f"| {b.label} | {b.pairs} | {_cell(b.head_accuracy)} | {_cell(b.tail_accuracy)} "
            f"| {_cell(b.gap)} |"
            for b in bins
        ]
        (staging / "report.md").write_text(
            f"# AmbER evaluation: {title}\n\n"
            f"{metrics['num_queries']} queries in {metrics['num_sets']} sets. Accuracy@k: a gold "
            "page in the top k; ∀: share of sets whose every query is right; confusion: share "
            "of queries where a page of another entity of the set ranks above every gold page.\n\n"
            f"{paper_line(kind)}.\n\n{coverage}"
            f"{table}\n\n{intervals_line(metrics)} {IR_LINE}\n\n"
            "## Popularity gap (Figure 4)\n\n" + "\n".join(gap_lines) + "\n\n"
            f"Whole collection: head − tail accuracy@1 = "
            f"{_cell(overall_gap, metrics.get('intervals', {}).get('head_tail_gap@1'))} points.\n\n"
            "![popularity gap](popularity_gap.png)\n",
            encoding="utf-8",
        )
        plot_popularity_gap(bins, overall_gap, staging / "popularity_gap.png", title)


def evaluate_run(
    dataset: str,
    config: str,
    predictions_path: str | os.PathLike,
    out: str | os.PathLike,
    k_values: list[int],
    metric,
    allow_missing: bool = False,
    retriever: str | None = None,
    candidates: str = "all",
    predictions_format: str | None = None,
    resamples: int | None = None,
) -> dict:
    """Scores one predictions file on one AmbER config and writes its report; returns metrics.

    ``retriever``: the kind that made the predictions (e.g. ``dpr``), for the paper's figures;
    ``candidates``: "set" when each query was ranked within its AmbER set only;
    ``predictions_format``: "kilt" or "trec" (default: told from the file's content);
    ``resamples``: of the AmbER sets, for the 95% intervals.
    """
    queries, entities = load_amber(dataset, config)
    check_columns(queries, entities, dataset, config)
    predictions = read_predictions(predictions_path, predictions_format)
    coverage = prediction_coverage(queries, predictions)
    check_coverage(coverage, config, allow_missing, source=predictions_path)
    metrics, bins = score_predictions(
        queries, entities, predictions, k_values, metric, allow_missing, resamples
    )
    about = {
        "dataset": str(dataset),
        "config": config,
        "predictions": str(predictions_path),
        "retriever": retriever,
        "candidates": candidates,
    }
    write_report(out, metrics, bins, k_values, about)
    return metrics
