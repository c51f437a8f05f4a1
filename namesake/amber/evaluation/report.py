"""The one formatter of AmbER evaluations: the results table (the paper's Tables 5/6 layout,
its figure beside each of ours), and the report files metrics.json, report.md,
popularity_gap.png (its Figure 4) and the popularity curve (`popularity_curve`), with the
breakdowns by popularity, property, task or set size asked for (`breakdowns`).

Nothing here scores or looks anything up: `namesake.amber.evaluation.evaluate` returns the
data (an `Evaluation`, with the paper's side as a `PaperRow`), and these functions print it."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")  # files only; no display needed
import matplotlib.pyplot as plt  # noqa: E402

from namesake.amber.evaluation.breakdowns import Breakdown, breakdowns  # noqa: E402
from namesake.amber.evaluation.ir_metrics import IR_HEADERS  # noqa: E402
from namesake.amber.evaluation.paper import PaperRow, paper_kind, paper_line  # noqa: E402
from namesake.amber.evaluation.popularity_curve import write_popularity_curve  # noqa: E402
from namesake.amber.evaluation.popularity_effect import (  # noqa: E402
    PopularityEffect,
    popularity_effect,
)
from namesake.amber.evaluation.statistics import MIN_SETS, figure_cell  # noqa: E402
from namesake.markdown import markdown_table  # noqa: E402
from namesake.outputs import atomic_directory  # noqa: E402

if TYPE_CHECKING:
    from namesake.amber.evaluation.scoring import Evaluation, GapBin


def _figure(metrics: dict, key: str) -> str:
    return figure_cell(metrics[key], metrics.get("intervals", {}).get(key))


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
    "nDCG@10, MRR@10, R-prec (KILT's page-level R-precision) and R@k (recall) are trec_eval's "
    "measures (equal to ir-measures' on random runs) with the gold pages as qrels (`namesake "
    "amber qrels`)."
)


def coverage_lines(record: dict, config: str) -> list[str]:
    """What `evaluate` prints of a `Coverage.record`: queries without a prediction and
    predictions without a query, with a few ids of each."""
    examples = record["examples"]

    def ids(kind: str) -> str:
        shown = examples[kind]
        return f" (e.g. {', '.join(shown)})" if shown else ""

    return [
        f"{record['queries_without_prediction']} of {record['queries']} queries of {config} "
        "had no prediction, scored as empty rankings" + ids("queries_without_prediction"),
        f"{record['predictions_without_query']} of {record['predictions']} predictions "
        f"matched no query of {config}, not scored" + ids("predictions_without_query"),
    ]


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


@dataclass(frozen=True)
class TableRow:
    """One row of a results table: its labels (column -> text) and either the metrics of a
    scored run, with the paper's side beside them when the table shows it, or why the run
    has no figures (``not_trained``: its encoder was asked for but not trained)."""

    labels: dict[str, str]
    metrics: dict | None = None
    paper: PaperRow | None = None
    not_trained: str | None = None


def results_table(rows: list[TableRow], k_values: list[int]) -> str:
    """Markdown: one row per run (labels first), accuracy all/head/tail/∀ per k, confusion,
    then the head-tail gaps and the standard IR measures (where the scored rows have them),
    each figure with its 95% interval where the row's metrics hold one.

    When the rows carry the paper's side (``TableRow.paper``), a "paper system" column names
    the paper's retriever of the same kind ("BLINK (paper)" beside our BLINK-style linker),
    and a "paper" column follows each measure the AmbER paper reports, holding that system's
    figure or the reason there is none. A row that was not trained says why in the first
    column after its labels and "not trained" in every other; with no scored row at all, the
    table is those rows under one "figures" column.
    """
    scored = [row for row in rows if row.not_trained is None]
    if not scored:
        header = [*(rows[0].labels if rows else {}), "figures"]
        reasons = [[*row.labels.values(), f"not trained: {row.not_trained}"] for row in rows]
        return markdown_table(header, reasons, "l")
    labels = list(scored[0].labels)
    paper = scored[0].paper
    if paper is not None:
        labels.append("paper system")
    columns = [
        (header, key, beside)
        for header, key in _columns(k_values, scored[0].metrics)
        for beside in ((False, True) if paper and key in paper.cells else (False,))
    ]
    header = labels + ["paper" if beside else name for name, _, beside in columns]
    lines = []  # one list of cells per row
    for row in rows:
        cells = list(row.labels.values())
        if row.not_trained is not None:
            cells.append(f"not trained: {row.not_trained}")
            cells += ["not trained"] * (len(header) - len(cells))
        else:
            if paper is not None:
                cells.append(row.paper.label)
            for _, key, beside in columns:
                cells.append(row.paper.cells[key] if beside else _figure(row.metrics, key))
        lines.append(cells)
    return markdown_table(header, lines, "l" * len(labels) + "r")


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


@dataclass(frozen=True)
class Analysis:
    """What a report holds beyond the evaluation's figures: the within-set popularity effect
    (always) and the breakdowns asked for (``--by``)."""

    popularity_effect: PopularityEffect
    breakdowns: list[Breakdown]


def analyse(evaluation: Evaluation, by: Sequence[str] = ()) -> Analysis:
    """The evaluation's popularity effect and its breakdowns ``by`` those fields, resampled as
    its own intervals were; an unknown field is refused before any work."""
    found = breakdowns(evaluation, by) if by else []
    return Analysis(popularity_effect(evaluation), found)


def report_record(evaluation: Evaluation, analysis: Analysis) -> dict:
    """metrics.json: what was scored, the metrics, the paper's figures beside them, the
    popularity-gap bins, the popularity effect and the breakdowns asked for (their bin edges
    included)."""
    metrics = evaluation.metrics
    return {
        **evaluation.about,
        "metrics": metrics,
        "paper": evaluation.paper.record(),
        "popularity_gap": [
            {
                "bin": b.label,
                "pairs": b.pairs,
                "head_accuracy@1": b.head_accuracy,
                "tail_accuracy@1": b.tail_accuracy,
                "gap": b.gap,
            }
            for b in evaluation.bins
        ],
        "overall_head_tail_gap@1": _overall_gap(metrics),
        "popularity_effect": analysis.popularity_effect.record(),
        "breakdowns": [breakdown.record() for breakdown in analysis.breakdowns],
    }


def report_markdown(
    evaluation: Evaluation,
    k_values: list[int],
    title: str,
    analysis: Analysis,
) -> str:
    """report.md: the results table with the paper beside it (Tables 5, 6, 9), the coverage,
    what the intervals are, the popularity-gap table (Figure 4), the within-set popularity
    effect, the popularity curve and a section per breakdown."""
    metrics, about = evaluation.metrics, evaluation.about
    lines = coverage_lines(metrics["coverage"], about["config"]) if "coverage" in metrics else []
    coverage = "".join(f"- {line}\n" for line in lines) + ("\n" if lines else "")
    table = results_table([TableRow({"Run": title}, metrics, evaluation.paper)], k_values)
    gap_table = markdown_table(
        ["Popularity gap", "Pairs", "Head acc@1", "Tail acc@1", "Head − tail"],
        (
            [
                b.label,
                str(b.pairs),
                figure_cell(b.head_accuracy),
                figure_cell(b.tail_accuracy),
                figure_cell(b.gap),
            ]
            for b in evaluation.bins
        ),
    )
    kind = paper_kind(about.get("retriever"), about.get("candidates", "all"))
    overall = figure_cell(
        _overall_gap(metrics), metrics.get("intervals", {}).get("head_tail_gap@1")
    )
    return (
        f"# AmbER evaluation: {title}\n\n"
        f"{metrics['num_queries']} queries in {metrics['num_sets']} sets. Accuracy@k: a gold "
        "page in the top k; ∀: share of sets whose every query is right; confusion: share "
        "of queries where a page of another entity of the set ranks above every gold page.\n\n"
        f"{paper_line(kind)}.\n\n{coverage}"
        f"{table}\n\n{intervals_line(metrics)} {IR_LINE}\n\n"
        f"## Popularity gap (Figure 4)\n\n{gap_table}\n\n"
        f"Whole collection: head − tail accuracy@1 = {overall} points.\n\n"
        "![popularity gap](popularity_gap.png)\n\n"
        "## Within-set popularity effect\n\n"
        f"{analysis.popularity_effect.summary()}\n\n"
        f"{CURVE_SECTION}{_breakdown_sections(analysis.breakdowns)}"
    )


CURVE_SECTION = (
    "## Popularity curve\n\n"
    "Accuracy@1 and entity confusion by popularity decile of the queries, 95% intervals "
    f"shaded; a decile from fewer than {MIN_SETS} AmbER sets is a hollow point with no "
    "interval (figures: popularity_curve.csv).\n\n"
    "![popularity curve](popularity_curve.png)\n"
)


def _breakdown_sections(breakdowns: Sequence[Breakdown]) -> str:
    """A section of report.md per breakdown: what its groups are (the decile edges) and its
    table, the intervals those of the report."""
    return "".join(
        f"\n## By {breakdown.field}\n\n{breakdown.to_markdown()}\n" for breakdown in breakdowns
    )


def _overall_gap(metrics: dict) -> float:
    return metrics["accuracy@1_head"] - metrics["accuracy@1_tail"]


def write_report(
    out: str | os.PathLike,
    evaluation: Evaluation,
    k_values: list[int],
    per_query: str = "parquet",
    by: Sequence[str] = (),
) -> Analysis:
    """Writes metrics.json, report.md, popularity_gap.png, the popularity curve
    (popularity_curve.csv, .png, .svg: `write_popularity_curve`) and the per-query results
    (`Evaluation.per_query_table`) into ``out``, replacing it atomically: per_query.parquet,
    or with ``per_query="trec"`` per_query.txt in the lines of ``trec_eval -q``. With ``by``
    (BREAKDOWN_FIELDS), metrics.json and report.md hold the breakdowns by those fields. Both
    hold the within-set popularity effect. Returns what it analysed (`analyse`); an unknown
    field is refused before anything is written."""
    analysis = analyse(evaluation, by)
    about = evaluation.about
    source = about["predictions"]  # None for a run made in memory: its name instead
    title = f"{Path(source).stem if source else evaluation.name} on {about['config']}"
    with atomic_directory(out, writer="evaluate") as staging:
        (staging / "metrics.json").write_text(
            json.dumps(report_record(evaluation, analysis), indent=2, allow_nan=True) + "\n",
            encoding="utf-8",
        )
        (staging / "report.md").write_text(
            report_markdown(evaluation, k_values, title, analysis), encoding="utf-8"
        )
        plot_popularity_gap(
            evaluation.bins, _overall_gap(evaluation.metrics), staging / "popularity_gap.png", title
        )
        write_popularity_curve([evaluation], staging)
        _write_per_query(evaluation, staging, per_query)
    return analysis


def _write_per_query(evaluation: Evaluation, folder: Path, per_query: str) -> None:
    import pyarrow.parquet as pq

    if per_query == "trec":
        (folder / "per_query.txt").write_text(per_query_lines(evaluation), encoding="utf-8")
    else:
        pq.write_table(evaluation.per_query_table(), folder / "per_query.parquet")


def per_query_lines(evaluation: Evaluation) -> str:
    """``trec_eval -q``'s layout: ``measure<TAB>query<TAB>value`` for every measure of every
    query, then the report's figure of each as the ``all`` line; values in points, as the
    report gives them."""
    values = evaluation.per_query.values
    lines = [
        f"{measure}\t{query_id}\t{column[index]:.4f}"
        for index, query_id in enumerate(evaluation.query_ids)
        for measure, column in values.items()
    ]
    lines += [f"{measure}\tall\t{evaluation.metrics[measure]:.4f}" for measure in values]
    return "\n".join(lines) + "\n"
