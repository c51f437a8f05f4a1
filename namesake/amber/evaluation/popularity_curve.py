"""The popularity curve (issue 50, item 3): accuracy@1 and entity confusion against the
popularity decile of the queries, one line per system with its 95% interval band, the AmbER
paper's Figure 4 generalised to N systems. `evaluate` draws it for its run, the leaderboard
for many.

The figures are the popularity `breakdowns` of each system (one truth: the report's table
and the curve cannot disagree), all on the same decile edges, since every system must have
been scored on the same queries. A decile from fewer than MIN_SETS sets, which the
breakdown's table leaves without a figure, is a hollow point here with no interval (the mean
of its queries); a decile without a query is a gap, never a zero.

>>> write_popularity_curve([bm25, dense], "reports/curve")  # .csv, .png, .svg
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib
import numpy as np

matplotlib.use("Agg")  # files only; no display needed
import matplotlib.pyplot as plt  # noqa: E402

from namesake.amber.evaluation.breakdowns import MIN_SETS, bin_label, breakdowns  # noqa: E402
from namesake.errors import NamesakeError  # noqa: E402

if TYPE_CHECKING:
    import pandas as pd

    from namesake.amber.evaluation.scoring import Evaluation
    from namesake.amber.evaluation.statistics import StatisticsSettings

CONFUSION = "entity_confusion"
COLUMNS = ["system", "decile", "low_edge", "high_edge", "queries", "sets", "measure"]
COLUMNS += ["value", "low", "high", "few_sets"]
_TITLES = {CONFUSION: "Entity confusion"}


def curve_measures(evaluation: Evaluation) -> list[str]:
    """The curve's two measures: accuracy@1 (at the smallest cut-off where 1 is not one of
    the evaluation's) and entity confusion."""
    return [f"accuracy@{min(evaluation.per_query.k_values)}", CONFUSION]


def popularity_curve(
    evaluations: Sequence[Evaluation], statistics: StatisticsSettings | None = None
) -> pd.DataFrame:
    """One row per system x popularity decile x measure (`curve_measures`): the system's
    name, the decile (1-based) and its edges (log10 monthly page views), its queries and
    sets, and the figure with its 95% interval. A decile from fewer than MIN_SETS sets keeps
    its figure (the mean of its queries) with no interval and ``few_sets`` true: the
    breakdown's table says "too few sets" there, but a curve of AmbER's sample, whose every
    decile is such, would otherwise be empty. The deciles are the same for every system,
    those of the queries they were all scored on.
    Evaluations on different queries are refused, naming them; ``statistics``: the
    resampling of the intervals (default: each evaluation's own)."""
    import pandas as pd

    measures = _check_comparable(evaluations)
    rows = []
    for evaluation in evaluations:
        (breakdown,) = breakdowns(evaluation, ["popularity"], statistics, min_sets=1)
        edges = breakdown.edges
        for decile, group in enumerate(breakdown.groups, 1):
            few = group.sets < MIN_SETS
            for measure in measures:
                value = math.nan if group.figures is None else group.figures[measure]  # empty
                interval = (math.nan, math.nan) if few else group.intervals[measure]
                rows.append(
                    [evaluation.name, decile, edges[decile - 1], edges[decile]]
                    + [group.queries, group.sets, measure, value, *interval, few]
                )
    return pd.DataFrame(rows, columns=COLUMNS)


def _check_comparable(evaluations: Sequence[Evaluation]) -> list[str]:
    """The curve's measures, once every evaluation is known to be on the first one's queries
    (the same ids and popularity, hence the same deciles) and to hold those measures."""
    if not evaluations:
        raise NamesakeError("a popularity curve needs at least one evaluation")
    first = evaluations[0]
    measures = curve_measures(first)
    for other in evaluations[1:]:
        if other.query_ids != first.query_ids or not np.array_equal(
            other.queries.popularity, first.queries.popularity
        ):
            raise NamesakeError(
                f"popularity curve: {first.name} ({first.about['config']}, "
                f"{len(first.query_ids)} queries) and {other.name} "
                f"({other.about['config']}, {len(other.query_ids)} queries) were not scored "
                "on the same queries; a curve puts systems on the same popularity deciles"
            )
        missing = [name for name in measures if name not in other.per_query.values]
        if missing:
            raise NamesakeError(
                f"popularity curve: {other.name} has no {', '.join(missing)} "
                f"(scored with cut-offs {other.per_query.k_values}, {first.name} with "
                f"{first.per_query.k_values})"
            )
    return measures


def write_popularity_curve(
    evaluations: Sequence[Evaluation],
    folder: str | os.PathLike,
    statistics: StatisticsSettings | None = None,
    stem: str = "popularity_curve",
) -> list[Path]:
    """Writes ``<stem>.csv`` (`popularity_curve`), and the figure drawn from it as
    ``<stem>.png`` and ``<stem>.svg``, into ``folder``; returns their paths."""
    curve = popularity_curve(evaluations, statistics)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"{stem}.{suffix}" for suffix in ("csv", "png", "svg")]
    curve.to_csv(paths[0], index=False)
    figure = plot_popularity_curve(curve, evaluations[0].about["config"])
    figure.savefig(paths[1], format="png", dpi=120)
    with plt.rc_context({"svg.hashsalt": stem}):  # the same ids in every drawing of one curve
        figure.savefig(paths[2], format="svg", metadata={"Date": None})
    plt.close(figure)
    return paths


def plot_popularity_curve(curve: pd.DataFrame, config: str):
    """Two panels (accuracy@1, entity confusion) against the popularity decile, a line per
    system with its interval as a translucent band; a decile from too few sets is a hollow
    marker outside the band. The caller saves and closes the matplotlib figure."""
    measures = list(dict.fromkeys(curve["measure"]))
    figure, panels = plt.subplots(1, len(measures), figsize=(12, 4.8), sharex=True)
    for axes, measure in zip(np.atleast_1d(panels), measures, strict=True):
        rows = curve[curve["measure"] == measure]
        for system, line in rows.groupby("system", sort=False):
            (drawn,) = axes.plot(line["decile"], line["value"], marker="o", label=system)
            axes.fill_between(
                line["decile"], line["low"], line["high"], color=drawn.get_color(), alpha=0.2
            )
            few = line[line["few_sets"]]
            axes.plot(
                few["decile"],
                few["value"],
                linestyle="none",
                marker="o",
                markerfacecolor="white",
                color=drawn.get_color(),
            )
        deciles = rows.drop_duplicates("decile")
        axes.set_xticks(
            deciles["decile"].tolist(),
            list(map(bin_label, deciles["low_edge"], deciles["high_edge"])),
            rotation=45,
            ha="right",
            fontsize=8,
        )
        axes.set_xlabel("Popularity decile (log10 monthly page views)")
        axes.set_ylabel(f"{_TITLES.get(measure, measure.capitalize())} (points)")
        axes.set_title(_TITLES.get(measure, measure.capitalize()))
        axes.set_ylim(-2, 102)
        axes.grid(alpha=0.3)
    np.atleast_1d(panels)[0].legend(loc="best", fontsize=8)
    figure.suptitle(
        f"{config}: by popularity decile, 95% intervals shaded; "
        f"hollow: a decile from fewer than {MIN_SETS} AmbER sets, no interval"
    )
    figure.tight_layout()
    return figure
