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

With ``allow_missing`` a run may lack queries, each scored as an empty ranking: the two runs
then answer different queries, so each run's coverage (`scoring.Coverage`, as `evaluate`
reports it) is printed and recorded beside the verdicts.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

from namesake.amber.evaluation.ir_metrics import IR_MEASURES
from namesake.amber.evaluation.predictions import read_predictions
from namesake.amber.evaluation.query_scores import QueryJudgments, query_scores, set_sums
from namesake.amber.evaluation.scoring import (
    Coverage,
    build_references,
    check_columns,
    check_coverage,
    coverage_lines,
    load_amber,
    prediction_coverage,
    rankings_run,
)
from namesake.amber.evaluation.statistics import (
    ALPHA,
    BOOTSTRAP_RESAMPLES,
    TEST_RESAMPLES,
    PairedVerdict,
    bootstrap_intervals,
    difference,
    holm,
    paired_randomization_test,
    per_query_randomization_test,
)
from namesake.errors import NamesakeError


@dataclass
class RunComparison:
    """The verdict on every figure, and what was compared: each run's coverage of the
    config's queries among it."""

    dataset: str
    config: str
    names: tuple[str, str]
    runs: tuple[str, str]
    coverage: tuple[Coverage, Coverage]
    num_queries: int
    num_sets: int
    verdicts: list[PairedVerdict]
    resamples: dict

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
        lines = [
            f"| Measure | {a} | {b} | Δ ({b} − {a}) [95% CI] | p (sets) | p Holm "
            "| p (queries) | Verdict |",
            "|---|---:|---:|---:|---:|---:|---:|---|",
        ]
        for verdict in self.verdicts:
            low, high = verdict.interval
            lines.append(
                f"| {verdict.measure} | {_number(verdict.a)} | {_number(verdict.b)} "
                f"| {_number(verdict.difference, signed=True)} "
                f"[{_number(low, signed=True)}, {_number(high, signed=True)}] "
                f"| {_p(verdict.p_value)} | {_p(verdict.p_holm)} | {_p(verdict.p_per_query)} "
                f"| {_verdict(verdict, b)} |"
            )
        return "\n".join(lines)

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


def compare_runs(
    dataset: str,
    config: str,
    run_a: str | os.PathLike,
    run_b: str | os.PathLike,
    names: tuple[str, str] | None = None,
    k_values: tuple[int, ...] = (1, 20),
    predictions_format: str | None = None,
    allow_missing: bool = False,
    bootstrap_resamples: int = BOOTSTRAP_RESAMPLES,
    test_resamples: int = TEST_RESAMPLES,
    seed: int = 0,
) -> RunComparison:
    """Scores both runs on ``config`` and compares every figure (see the module docstring).

    Both runs must answer the same queries: each is checked as `namesake evaluate` checks a
    predictions file (queries without a prediction are an error unless ``allow_missing``).
    """
    runs = (str(run_a), str(run_b))
    if Path(runs[0]).resolve() == Path(runs[1]).resolve():
        raise NamesakeError(f"{runs[0]} is compared with itself: give two different runs")
    names = names or _default_names(runs)
    queries, entities = load_amber(dataset, config)
    check_columns(queries, entities, dataset, config)
    judgments = QueryJudgments.from_references(build_references(queries, entities))
    scores, coverages = [], []
    for path in runs:
        predictions = read_predictions(path, predictions_format)
        coverages.append(prediction_coverage(queries, predictions))
        check_coverage(coverages[-1], config, allow_missing, path)
        rankings = [predictions.get(query_id, []) for query_id in queries["id"]]
        scores.append(query_scores(rankings_run(queries["id"], rankings), judgments, k_values))
    sums = [set_sums(score) for score in scores]
    figures = [s.figures() for s in sums]
    intervals = bootstrap_intervals(difference(*sums), resamples=bootstrap_resamples, seed=seed)
    pvalues = paired_randomization_test(*sums, resamples=test_resamples, seed=seed)
    adjusted = holm(pvalues)
    per_query = per_query_randomization_test(  # as IR papers test: queries independent
        *({measure: score.values[measure] for measure in IR_MEASURES} for score in scores),
        resamples=test_resamples,
        seed=seed,
    )
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
        for name in _report_order(sums[0].names, list(sums[0].gaps))
    ]
    return RunComparison(
        dataset=str(dataset),
        config=config,
        names=names,
        runs=runs,
        coverage=tuple(coverages),
        num_queries=len(queries),
        num_sets=scores[0].num_sets,
        verdicts=verdicts,
        resamples={"bootstrap": bootstrap_resamples, "test": test_resamples, "seed": seed},
    )


def _default_names(runs: tuple[str, str]) -> tuple[str, str]:
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
