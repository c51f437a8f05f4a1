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

from namesake.amber.evaluation import (  # noqa: E402
    GapBin,
    check_columns,
    check_coverage,
    coverage_lines,
    load_amber,
    prediction_coverage,
    score_predictions,
)
from namesake.amber.paper import (  # noqa: E402
    paper_kind,
    paper_line,
    paper_tables,
    split_config,
    system_label,
)
from namesake.amber.predictions import read_predictions  # noqa: E402
from namesake.outputs import atomic_directory  # noqa: E402


def _cell(value: float) -> str:
    return "–" if value is None or math.isnan(value) else f"{value:.1f}"


def _columns(k_values: list[int]) -> list[tuple[str, str]]:
    """(header, metric key) of every measure column, in table order."""
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
    return columns + [
        ("Confusion", "entity_confusion"),
        ("Confusion head", "entity_confusion_head"),
        ("Confusion tail", "entity_confusion_tail"),
    ]


def results_table(
    rows: list[tuple[dict[str, str], dict]],
    k_values: list[int],
    paper_rows: list[tuple[str | None, str, str]] | None = None,
) -> str:
    """Markdown: one row per run (labels first), accuracy all/head/tail/∀ per k, confusion.

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
        for header, key in _columns(k_values)
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
                cells.append(_cell(metrics[key]))
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
            f"{table}\n\n## Popularity gap (Figure 4)\n\n" + "\n".join(gap_lines) + "\n\n"
            f"Whole collection: head − tail accuracy@1 = {_cell(overall_gap)} points.\n\n"
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
) -> dict:
    """Scores one predictions file on one AmbER config and writes its report; returns metrics.

    ``retriever``: the kind that made the predictions (e.g. ``dpr``), for the paper's figures;
    ``candidates``: "set" when each query was ranked within its AmbER set only.
    """
    queries, entities = load_amber(dataset, config)
    check_columns(queries, entities, dataset, config)
    predictions = read_predictions(predictions_path)
    coverage = prediction_coverage(queries, predictions)
    check_coverage(coverage, config, allow_missing, source=predictions_path)
    metrics, bins = score_predictions(
        queries, entities, predictions, k_values, metric, allow_missing
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
