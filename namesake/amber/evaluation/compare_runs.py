"""Two runs on one AmbER config, measure by measure: is the difference real?

Every figure of an evaluation report (AmbER's measures, the head-tail gaps, the standard IR
measures) is compared between run A and run B on the same queries: B - A with its 95%
bootstrap interval over AmbER sets, the p-value of a paired randomization test clustered by
set (`namesake.amber.evaluation.statistics`), and Holm's adjustment over the whole family of
figures, so that a "significant" verdict holds at 0.05 for the report as a whole. Beside the
standard IR measures, the same randomization test with every query its own unit (Fisher's
randomization test as IR papers usually run it, queries independent); where it says
"significant" and the clustered test does not, the difference rests on queries of a few
sets.

After the verdicts, how much each run's success depends on popularity between the entities of
one AmbER set, and run B's dependence against run A's (`popularity_effect`): the odds ratio of
success@1 per 10x page views and the share of confused queries whose namesake is the more
popular entity, each with a paired bootstrap interval over the same resampled sets.

With ``allow_missing`` a run may lack queries, each scored as an empty ranking: the two runs
then answer different queries, so each run's coverage (`scoring.Coverage`, as `evaluate`
reports it) is printed and recorded beside the verdicts.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from namesake.amber.evaluation.ir_metrics import IR_MEASURES
from namesake.amber.evaluation.popularity_effect import EffectDifference, effect_difference
from namesake.amber.evaluation.report import coverage_lines
from namesake.amber.evaluation.scoring import Coverage, Evaluation
from namesake.amber.evaluation.statistics import (
    ALPHA,
    PairedVerdict,
    StatisticsSettings,
    bootstrap_intervals,
    difference,
    holm,
    paired_randomization_test,
    per_query_randomization_test,
)
from namesake.errors import NamesakeError
from namesake.markdown import markdown_table


@dataclass
class RunComparison:
    """The verdict on every figure, each run's within-set popularity effect and their
    difference, and what was compared: each run's coverage of the config's queries among it.

    >>> comparison = compare_pair(score(bm25, queries), score(mine, queries))
    >>> print(comparison.summary()); print(comparison.table()); comparison.record()
    >>> print(comparison.popularity_table())
    """

    dataset: str
    config: str
    names: tuple[str, str]
    runs: tuple[str, str]
    coverage: tuple[Coverage, Coverage]
    num_queries: int
    num_sets: int
    verdicts: list[PairedVerdict]
    resamples: dict
    popularity: EffectDifference

    def record(self) -> dict:
        a, b = (
            {"name": name, "run": run, "coverage": coverage.record()}
            for name, run, coverage in zip(self.names, self.runs, self.coverage, strict=True)
        )
        return {
            "dataset": self.dataset,
            "config": self.config,
            "a": a,
            "b": b,
            "num_queries": self.num_queries,
            "num_sets": self.num_sets,
            "alpha": ALPHA,
            "correction": "holm",
            "test": "paired randomization test, sign flips of whole AmbER sets",
            "resamples": self.resamples,
            "measures": [verdict.record() for verdict in self.verdicts],
            "popularity_effect": self.popularity.record(),
        }

    def coverage_lines(self) -> list[str]:
        """What each run answers of the config, in `evaluate`'s words, the run named first."""
        return [
            f"{name}: {line}"
            for name, coverage in zip(self.names, self.coverage, strict=True)
            for line in coverage_lines(coverage.record(), self.config)
        ]

    def table(self) -> str:
        a, b = self.names
        header = [
            "Measure",
            a,
            b,
            f"Δ ({b} − {a}) [95% CI]",
            "p (sets)",
            "p Holm",
            "p (queries)",
            "Verdict",
        ]
        lines = []  # one list of cells per measure
        for verdict in self.verdicts:
            low, high = verdict.interval
            lines.append(
                [
                    verdict.measure,
                    _number(verdict.a),
                    _number(verdict.b),
                    f"{_number(verdict.difference, signed=True)} "
                    f"[{_number(low, signed=True)}, {_number(high, signed=True)}]",
                    _p(verdict.p_value),
                    _p(verdict.p_holm),
                    _p(verdict.p_per_query),
                    _verdict(verdict, b),
                ]
            )
        return markdown_table(header, lines, "l" + "r" * 6 + "l")

    def popularity_table(self) -> str:
        """Each run's within-set popularity effect (odds ratio per 10x page views, preference
        rate of its confusions, each with its 95% interval and what it rests on) and B's
        against A's: the ratio of the odds ratios, the difference of the rates."""
        a, b = self.names
        effects = (self.popularity.a, self.popularity.b)
        header = ["Popularity within AmbER sets", a, b, f"{b} against {a} [95% CI]"]
        rows = [
            [
                "odds ratio of success@1 per 10× page views (1: no effect)",
                *(effect.odds_ratio_cell() for effect in effects),
                self.popularity.ratio_cell(),
            ],
            [
                "sets (queries) with a success and a failure of different popularity",
                *(f"{e.informative_sets} ({e.informative_queries})" for e in effects),
                "",
            ],
            [
                "share of confused queries whose namesake is more popular (0.5: no preference), "
                "of the confused queries",
                *(effect.preference_cell() for effect in effects),
                self.popularity.difference_cell(),
            ],
        ]
        return markdown_table(header, rows)

    def summary(self) -> str:
        a, b = self.names
        better = [v.measure for v in self.verdicts if v.significant and v.difference > 0]
        worse = [v.measure for v in self.verdicts if v.significant and v.difference < 0]
        tested = sum(not math.isnan(v.p_holm) for v in self.verdicts)
        parts = [
            f"{self.config}, {self.num_queries} queries in {self.num_sets} AmbER sets: "
            f"of {tested} measures, {b} is significantly higher than {a} on {len(better)}"
            + (f" ({', '.join(better)})" if better else "")
            + f" and lower on {len(worse)}"
            + (f" ({', '.join(worse)})" if worse else "")
            + f" (paired randomization test over sets, Holm-adjusted p < {ALPHA})."
        ]
        smallest = 2.0 / 2**self.num_sets  # the exact test's smallest two-sided p-value
        if tested and smallest * tested >= ALPHA:
            parts.append(
                f"With {self.num_sets} sets the smallest p-value the test can give is "
                f"{smallest:.3g}, which Holm's correction over {tested} measures cannot bring "
                f"below {ALPHA}: on so few sets no difference can be significant."
            )
        return " ".join(parts)


def _number(value: float, signed: bool = False) -> str:
    if value is None or math.isnan(value):
        return "–"
    return f"{value:+.1f}" if signed else f"{value:.1f}"


def _p(value: float | None) -> str:
    if value is None or math.isnan(value):
        return "–"
    return f"{value:.4f}" if value >= 0.0001 else f"{value:.1e}"


def _verdict(verdict: PairedVerdict, b: str) -> str:
    if math.isnan(verdict.p_holm):
        return "not tested"
    if not verdict.significant:
        return "no significant difference"
    direction = "higher" if verdict.difference > 0 else "lower"
    return f"**{b} {direction}**"


def compare_pair(
    a: Evaluation, b: Evaluation, statistics: StatisticsSettings | None = None
) -> RunComparison:
    """Run b against run a on the same queries, every figure of their evaluations compared
    (see the module docstring), from what `score` already computed: nothing is re-read or
    re-scored.

    >>> compare_pair(score(bm25, queries), score(mine, queries)).table()
    """
    statistics = statistics or StatisticsSettings()
    if a.query_ids != b.query_ids:
        raise NamesakeError(f"{a.name} and {b.name} were scored on different queries")
    sums = (a.sums, b.sums)
    seed = statistics.seed
    intervals = bootstrap_intervals(
        difference(*sums), resamples=statistics.bootstrap_resamples, seed=seed
    )
    pvalues = paired_randomization_test(*sums, resamples=statistics.test_resamples, seed=seed)
    adjusted = holm(pvalues)
    per_query = per_query_randomization_test(  # as IR papers test: queries independent
        *({measure: e.per_query.values[measure] for measure in IR_MEASURES} for e in (a, b)),
        resamples=statistics.test_resamples,
        seed=seed,
    )
    figures = [s.figures() for s in sums]
    verdicts = [
        PairedVerdict(
            measure=name,
            a=figures[0][name],
            b=figures[1][name],
            difference=figures[1][name] - figures[0][name],
            interval=intervals[name],
            p_value=pvalues[name],
            p_holm=adjusted[name],
            p_per_query=per_query.get(name),
        )
        for name in _report_order(a.sums.names, list(a.sums.gaps))
    ]
    return RunComparison(
        dataset=a.about["dataset"],
        config=a.about["config"],
        names=(a.name, b.name),
        runs=(a.about["predictions"], b.about["predictions"]),
        coverage=(a.coverage, b.coverage),
        num_queries=len(a.query_ids),
        num_sets=a.per_query.num_sets,
        verdicts=verdicts,
        popularity=effect_difference(a, b, statistics),
        resamples={
            "bootstrap": statistics.bootstrap_resamples,
            "test": statistics.test_resamples,
            "seed": seed,
        },
    )


def compare(
    evaluations: Sequence[Evaluation],
    baseline: int = 0,
    statistics: StatisticsSettings | None = None,
) -> list[RunComparison]:
    """Every evaluation against the one at index ``baseline`` (BM25, say), each comparison
    Holm-corrected over all its measures: N runs compared in one call.

    >>> for comparison in compare([bm25, dense, fused]): print(comparison.summary())
    """
    base = evaluations[baseline]
    return [
        compare_pair(base, evaluation, statistics)
        for index, evaluation in enumerate(evaluations)
        if index != baseline
    ]


def check_distinct(paths: Sequence[str | os.PathLike]) -> None:
    """Two runs to compare must be two files."""
    if Path(paths[0]).resolve() == Path(paths[1]).resolve():
        raise NamesakeError(f"{paths[0]} is compared with itself: give two different runs")


def default_names(runs: tuple[str, str]) -> tuple[str, str]:
    """The runs' file stems, or their paths where the stems are the same."""
    stems = tuple(Path(run).stem for run in runs)
    return stems if stems[0] != stems[1] else runs


def _report_order(ratios: list[str], gaps: list[str]) -> list[str]:
    """Each accuracy@k's gap right after its tail figure; the rest as computed."""
    order = []
    for name in ratios:
        order.append(name)
        for gap in gaps:
            if name == f"accuracy@{gap.partition('@')[2]}_tail":
                order.append(gap)
    return order
