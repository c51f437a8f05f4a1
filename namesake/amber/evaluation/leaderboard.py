"""A leaderboard of N systems on one AmbER config: every system's headline figures with their
95% intervals, its rank with a bootstrap interval of the rank, every pair of systems tested
(paired randomization test clustered by AmbER set, Holm over all pairs x measures), and the
top group, the systems not significantly below the best.

Nothing is re-read or re-scored: every figure comes from the `Evaluation`s `score` made, their
per-set sums (`SetSums`). The statistics are vectorised over the systems, so that five
systems on AmbER's 80,000 queries take seconds: the rank bootstrap draws one weight matrix of
resampled sets per batch (`statistics.resampled_sets`, the same resamples as each system's
own intervals), shared by every system; and every pair's test and difference interval are
one call of `paired_randomization_test` and of `bootstrap_intervals` on the pairs' headline
sums laid side by side, which draws the same sign flips and resamples for each pair as a call
per pair with the same seed would.

>>> board = leaderboard([score(run, queries) for run in runs], baseline="bm25")
>>> print(board.table()); print(board.top_group_line()); print(board.against_baseline())
"""

from __future__ import annotations

import csv
import dataclasses
import io
import itertools
import json
import math
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from namesake.amber.evaluation.popularity_curve import write_popularity_curve
from namesake.amber.evaluation.popularity_effect import PopularityEffect, popularity_effect
from namesake.amber.evaluation.query_scores import SetSums
from namesake.amber.evaluation.scoring import Coverage, Evaluation
from namesake.amber.evaluation.statistics import (
    ALPHA,
    CONFIDENCE,
    PairedVerdict,
    StatisticsSettings,
    bootstrap_intervals,
    difference,
    figure_cell,
    holm,
    paired_randomization_test,
    resampled_sets,
)
from namesake.errors import NamesakeError
from namesake.markdown import markdown_table
from namesake.outputs import atomic_directory

#: the headline measures of a leaderboard and of `amber compare`'s table against the
#: baseline: (column header, figure)
HEADLINE = (
    ("All@1", "accuracy@1"),
    ("Head − tail@1", "head_tail_gap@1"),
    ("Confusion", "entity_confusion"),
    ("nDCG@10", "ndcg@10"),
)
#: the popularity effect's columns of the table: (header, cell of a `PopularityEffect`)
POPULARITY_COLUMNS = (
    ("Popularity OR per 10x views [95% CI]", PopularityEffect.odds_ratio_cell),
    ("Prefers the popular namesake [95% CI]", PopularityEffect.preference_cell),
)
#: what the systems are ranked by, higher being better (for the confusion, lower is better,
#: but only the rank measure's direction matters)
RANK_BY = "accuracy@1"
#: how a rank is given, on the data and on each resample
RANKING = "1 + the systems with a strictly higher accuracy@1: tied systems share the best rank"


@dataclass(frozen=True)
class Standing:
    """One system of a leaderboard: its name, its predictions file (None for a run made in
    memory), its headline figures with their 95% intervals (as `score` gave them), its rank
    (1: the best accuracy@1) and the 95% bootstrap interval of the rank, and its within-set
    popularity effect (None where not asked for)."""

    name: str
    run: str | None
    figures: dict[str, float]
    intervals: dict[str, tuple[float, float]]
    rank: int
    rank_interval: tuple[int, int]
    popularity: PopularityEffect | None = None


@dataclass(frozen=True)
class PairTest:
    """System b against system a on each headline measure (differences b - a)."""

    a: str
    b: str
    verdicts: list[PairedVerdict]

    def reversed(self) -> PairTest:
        """a against b: the differences and their intervals negated, the p-values the same
        (the test is two-sided)."""
        return PairTest(
            self.b,
            self.a,
            [
                dataclasses.replace(
                    v,
                    a=v.b,
                    b=v.a,
                    difference=0.0 - v.difference,  # 0.0 - x: never a -0.0 to print
                    interval=(0.0 - v.interval[1], 0.0 - v.interval[0]),
                )
                for v in self.verdicts
            ],
        )

    def verdict(self, measure: str) -> PairedVerdict:
        return next(v for v in self.verdicts if v.measure == measure)

    def significant(self) -> str:
        """How many of the tested headline measures differ significantly: ``1 of 4``."""
        tested = [v for v in self.verdicts if not math.isnan(v.p_holm)]
        return f"{sum(v.significant for v in tested)} of {len(tested)}"

    def cells(self) -> list[str]:
        """Per headline measure: ``Δ[*] [low, high] (p Holm)``, * when significant."""
        cells = []
        for _, measure in HEADLINE:
            verdict = self.verdict(measure)
            low, high = verdict.interval
            mark = "*" if verdict.significant else ""
            cells.append(
                f"{verdict.difference:+.1f}{mark} [{low:+.1f}, {high:+.1f}] ({verdict.p_holm:.3f})"
            )
        return cells

    def record(self) -> dict:
        return {"a": self.a, "b": self.b, "measures": [v.record() for v in self.verdicts]}


@dataclass(frozen=True)
class Leaderboard:
    """N systems on one config (`leaderboard`): ``systems`` in the order given, ``pairs``
    every pair (a before b in that order), ``baseline`` the system the others are set
    against (`against_baseline`), or None.

    >>> board = leaderboard(evaluations, baseline="bm25")
    >>> print(board.table()); board.top_group; board.record()
    """

    dataset: str
    config: str
    num_queries: int
    num_sets: int
    systems: list[Standing]
    pairs: list[PairTest]
    baseline: str | None
    statistics: StatisticsSettings

    def ranked(self) -> list[Standing]:
        """The systems by rank, ties in the order given."""
        return sorted(self.systems, key=lambda standing: standing.rank)

    def pair(self, a: str, b: str) -> PairTest:
        """System b against system a, whichever order the pair was tested in."""
        for test in self.pairs:
            if (test.a, test.b) == (a, b):
                return test
            if (test.a, test.b) == (b, a):
                return test.reversed()
        raise KeyError((a, b))

    @property
    def best(self) -> str:
        """The system ranked first (the first given of those tied there)."""
        return self.ranked()[0].name

    @property
    def top_group(self) -> list[str]:
        """The best system and every system whose accuracy@1 is not significantly below it
        (Holm-adjusted over every pair x measure), by rank."""
        best = self.best
        return [
            standing.name
            for standing in self.ranked()
            if standing.name == best
            or not self.pair(best, standing.name).verdict(RANK_BY).significant
        ]

    def table(self) -> str:
        """Markdown, one row per system by rank: its rank and the rank's 95% interval, its
        name, ✓ in the top group, each headline measure with its 95% interval, then its
        within-set popularity effect: the odds ratio per 10x page views and the popularity
        preference rate, each with its 95% interval (when the board has them)."""
        top = set(self.top_group)
        popularity = self._popularity_cells()
        header = ["Rank", "Rank 95% CI", "System", "Top group"]
        header += [f"{title} [95% CI]" for title, _ in HEADLINE] + list(popularity)
        lines = [
            [
                str(standing.rank),
                f"[{standing.rank_interval[0]}, {standing.rank_interval[1]}]",
                standing.name,
                "✓" if standing.name in top else "",
                *(
                    figure_cell(standing.figures[measure], standing.intervals[measure])
                    for _, measure in HEADLINE
                ),
                *(cells[standing.name] for cells in popularity.values()),
            ]
            for standing in self.ranked()
        ]
        return markdown_table(header, lines, "rrll" + "r")

    def _popularity_cells(self) -> dict[str, dict[str, str]]:
        """Header -> system -> cell of the popularity effect's columns; none without effects."""
        if any(standing.popularity is None for standing in self.systems):
            return {}
        return {
            header: {standing.name: cell(standing.popularity) for standing in self.systems}
            for header, cell in POPULARITY_COLUMNS
        }

    def top_group_line(self) -> str:
        family = len(self.pairs) * len(HEADLINE)
        return (
            f"Top group: {', '.join(self.top_group)} (not significantly below {self.best} on "
            f"{RANK_BY}: paired randomization test over AmbER sets, Holm-adjusted p < {ALPHA} "
            f"over {len(self.pairs)} pairs x {len(HEADLINE)} measures = {family} tests)."
        )

    def pairs_table(self) -> str:
        """Markdown: every pair of systems, B against A on each headline measure."""
        header = ["A", "B", *(f"Δ {title} (B − A) [95% CI] (p Holm)" for title, _ in HEADLINE)]
        lines = [[test.a, test.b, *test.cells(), test.significant()] for test in self.pairs]
        table = markdown_table([*header, "Significant"], lines, "llr")
        return f"{table}\n\n{_footnote([self])}"

    def against_baseline(self) -> str:
        """Markdown: every system against the baseline (`baseline_table`)."""
        return baseline_table([self])

    def rows(self) -> list[dict]:
        """One row per system by rank (leaderboard.csv): rank, its interval, name, top group,
        predictions file, and each headline measure with its interval's bounds."""
        top = set(self.top_group)
        rows = []
        for standing in self.ranked():
            row = {
                "rank": standing.rank,
                "rank_low": standing.rank_interval[0],
                "rank_high": standing.rank_interval[1],
                "system": standing.name,
                "top_group": standing.name in top,
                "run": standing.run,
            }
            for _, measure in HEADLINE:
                low, high = standing.intervals[measure]
                row |= {measure: standing.figures[measure], f"{measure}_low": low}
                row[f"{measure}_high"] = high
            if standing.popularity is not None:
                effect = standing.popularity
                row |= {
                    "popularity_odds_ratio": effect.odds_ratio,
                    "popularity_odds_ratio_low": effect.interval[0],
                    "popularity_odds_ratio_high": effect.interval[1],
                    "preference_rate": effect.preference_rate,
                    "preference_rate_low": effect.preference_interval[0],
                    "preference_rate_high": effect.preference_interval[1],
                }
            rows.append(row)
        return rows

    def to_csv(self) -> str:
        rows = self.rows()
        text = io.StringIO()
        writer = csv.DictWriter(text, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        return text.getvalue()

    def record(self) -> dict:
        """leaderboard.json: the settings, every system with its figures and rank, every
        pair's verdicts and the top group."""
        top = set(self.top_group)
        return {
            "dataset": self.dataset,
            "config": self.config,
            "num_queries": self.num_queries,
            "num_sets": self.num_sets,
            "settings": {
                **self.statistics.record(),
                "confidence": CONFIDENCE,
                "alpha": ALPHA,
                "measures": [measure for _, measure in HEADLINE],
                "rank_by": RANK_BY,
                "ranking": RANKING,
                "test": "paired randomization test, sign flips of whole AmbER sets",
                "correction": "holm over every pair of systems x measure",
            },
            "baseline": self.baseline,
            "systems": [
                {
                    "name": standing.name,
                    "run": standing.run,
                    "rank": standing.rank,
                    "rank_95ci": list(standing.rank_interval),
                    "top_group": standing.name in top,
                    "figures": {
                        measure: {
                            "value": standing.figures[measure],
                            "95ci": list(standing.intervals[measure]),
                        }
                        for _, measure in HEADLINE
                    },
                    "popularity_effect": (
                        None if standing.popularity is None else standing.popularity.record()
                    ),
                }
                for standing in self.ranked()
            ],
            "pairs": [test.record() for test in self.pairs],
            "top_group": self.top_group,
        }

    def markdown(self) -> str:
        """leaderboard.md: the table, the top group, every pair, and the table against the
        baseline when there is one."""
        against = (
            f"\n## Against {self.baseline}\n\n{self.against_baseline()}\n" if self.baseline else ""
        )
        return (
            f"# Leaderboard on {self.config}\n\n"
            f"{len(self.systems)} systems, {self.num_queries} queries in {self.num_sets} AmbER "
            f"sets of {self.dataset}, ranked by {RANK_BY}.\n\n{self.table()}\n\n"
            f"{self.top_group_line()}\n\n{_rank_line(self.statistics)}\n\n"
            f"## Every pair of systems\n\n{self.pairs_table()}\n{against}"
        )


def _rank_line(statistics: StatisticsSettings) -> str:
    return (
        f"Rank: {RANKING}. Rank 95% CI: the {100 * CONFIDENCE:g}% percentile interval of the "
        f"system's rank over {statistics.bootstrap_resamples} resamples of the AmbER sets, the "
        "same sets drawn for every system (and for each figure's [low, high])."
    )


def baseline_table(boards: Sequence[Leaderboard]) -> str:
    """Markdown: on each board (a config), every system against the board's baseline (the
    first system when it has none): the difference with its 95% interval and the
    Holm-adjusted p-value of each headline measure, and how many of them differ
    significantly."""
    lines = []  # one list of cells per system and config
    for board in boards:
        base = board.baseline or board.systems[0].name
        for standing in board.systems:
            if standing.name != base:
                test = board.pair(base, standing.name)
                lines.append([standing.name, base, board.config, *test.cells(), test.significant()])
    headers = [f"Δ {title} [95% CI] (p Holm)" for title, _ in HEADLINE]
    header = ["System", "Baseline", "Config", *headers, "Significant"]
    table = markdown_table(header, lines, "lll" + "r" * len(headers) + "l")
    return f"{table}\n\n{_footnote(boards)}"


def _footnote(boards: Sequence[Leaderboard]) -> str:
    """What the * of a table of pairs means, and the size of the family Holm corrects over."""
    tests = {len(board.pairs) * len(HEADLINE) for board in boards}
    family = f"{tests.pop()} tests" if len(tests) == 1 else "per config"
    return (
        f"* : significant at {ALPHA} after Holm's correction over every pair of systems x the "
        f"{len(HEADLINE)} measures ({family}; paired randomization test flipping whole AmbER "
        "sets, `namesake leaderboard`). With few sets nothing can be significant: the intervals "
        "say how little a small sample shows."
    )


def leaderboard(
    evaluations: Sequence[Evaluation],
    statistics: StatisticsSettings | None = None,
    baseline: str | None = None,
    popularity: bool = True,
) -> Leaderboard:
    """The leaderboard of ``evaluations`` (at least two, distinct names, scored on the same
    queries with accuracy@1 among their cut-offs), from what `score` computed; ``baseline``:
    the name of the system `Leaderboard.against_baseline` sets the others against;
    ``popularity``: whether each system's within-set popularity effect is estimated (a
    second per system at AmbER's full size; `amber compare`'s table against the baseline
    does without). ``statistics``: by default the first evaluation's resampling.

    >>> board = leaderboard([score(bm25, queries), score(dense, queries)])
    """
    statistics = statistics or evaluations[0].statistics
    evaluations = list(evaluations)
    check_comparable(evaluations)
    check_baseline(baseline, [evaluation.name for evaluation in evaluations])
    numerators, denominators = _rank_columns(evaluations)
    ranks = _ranks(numerators.sum(axis=0) / denominators.sum())
    intervals = _rank_intervals(evaluations, statistics)
    first = evaluations[0]
    return Leaderboard(
        dataset=first.about["dataset"],
        config=first.about["config"],
        num_queries=len(first.query_ids),
        num_sets=first.per_query.num_sets,
        systems=[
            Standing(
                evaluation.name,
                evaluation.about.get("predictions"),
                {measure: evaluation.metrics[measure] for _, measure in HEADLINE},
                {measure: evaluation.intervals()[measure] for _, measure in HEADLINE},
                int(rank),
                interval,
                popularity_effect(evaluation, statistics) if popularity else None,
            )
            for evaluation, rank, interval in zip(evaluations, ranks, intervals, strict=True)
        ],
        pairs=_pair_tests(evaluations, statistics),
        baseline=baseline,
        statistics=statistics,
    )


def _ranks(accuracies: np.ndarray) -> np.ndarray:
    """Each system's rank (last axis) in each row: 1 + the systems strictly better."""
    return 1 + (accuracies[..., None, :] > accuracies[..., :, None]).sum(axis=-1)


def _rank_columns(evaluations: Sequence[Evaluation]) -> tuple[np.ndarray, np.ndarray]:
    """(sets x systems) numerators of RANK_BY, and its (sets,) denominators, the same for all."""
    column = evaluations[0].sums.names.index(RANK_BY)
    numerators = np.column_stack([e.sums.numerators[:, column] for e in evaluations])
    return numerators, evaluations[0].sums.denominators[:, column]


def _rank_intervals(
    evaluations: Sequence[Evaluation], statistics: StatisticsSettings
) -> list[tuple[int, int]]:
    """Each system's 95% interval of its rank: the systems ranked on each resample of the
    sets (one weight matrix per batch for all of them), the interval the percentiles of its
    ranks (``inverted_cdf``: ranks that some resample gave)."""
    numerators, denominators = _rank_columns(evaluations)
    draws = [
        _ranks((weights @ numerators) / (weights @ denominators)[:, None])
        for weights in resampled_sets(
            len(numerators), statistics.bootstrap_resamples, statistics.seed
        )
    ]
    tail = 100 * (1 - CONFIDENCE) / 2
    low, high = np.percentile(np.vstack(draws), [tail, 100 - tail], axis=0, method="inverted_cdf")
    return list(zip(low.astype(int).tolist(), high.astype(int).tolist(), strict=True))


def _headline_sums(sums: SetSums, tag: str) -> SetSums:
    """``sums`` cut to the headline measures (a gap with the two figures it is the difference
    of), every name prefixed with ``tag``."""
    gaps = {measure: sums.gaps[measure] for _, measure in HEADLINE if measure in sums.gaps}
    ratios = list(dict.fromkeys(n for _, m in HEADLINE for n in gaps.get(m, (m,))))
    columns = [sums.names.index(name) for name in ratios]
    return SetSums(
        [tag + name for name in ratios],
        sums.numerators[:, columns],
        sums.denominators[:, columns],
        {
            tag + gap: (tag + minuend, tag + subtrahend)
            for gap, (minuend, subtrahend) in gaps.items()
        },
    )


def _side_by_side(parts: Sequence[SetSums]) -> SetSums:
    """One SetSums holding the figures of every part (their names distinct)."""
    return SetSums(
        [name for part in parts for name in part.names],
        np.hstack([part.numerators for part in parts]),
        np.hstack([part.denominators for part in parts]),
        {gap: pair for part in parts for gap, pair in part.gaps.items()},
    )


def _pair_tests(
    evaluations: Sequence[Evaluation], statistics: StatisticsSettings
) -> list[PairTest]:
    """Every pair of systems on the headline measures: the paired test and the difference's
    interval of all pairs in one call each, Holm over every pair x measure."""
    pairs = list(itertools.combinations(range(len(evaluations)), 2))
    tags = [f"{i}-{j}:" for i, j in pairs]
    a, b = (
        _side_by_side(
            [
                _headline_sums(evaluations[pair[side]].sums, tag)
                for pair, tag in zip(pairs, tags, strict=True)
            ]
        )
        for side in (0, 1)
    )
    seed = statistics.seed
    pvalues = paired_randomization_test(a, b, resamples=statistics.test_resamples, seed=seed)
    intervals = bootstrap_intervals(
        difference(a, b), resamples=statistics.bootstrap_resamples, seed=seed
    )
    adjusted = holm({tag + m: pvalues[tag + m] for tag in tags for _, m in HEADLINE})
    figures = (a.figures(), b.figures())
    return [
        PairTest(
            evaluations[i].name,
            evaluations[j].name,
            [
                PairedVerdict(
                    measure=measure,
                    a=figures[0][tag + measure],
                    b=figures[1][tag + measure],
                    difference=figures[1][tag + measure] - figures[0][tag + measure],
                    interval=intervals[tag + measure],
                    p_value=pvalues[tag + measure],
                    p_holm=adjusted[tag + measure],
                    p_per_query=None,
                )
                for _, measure in HEADLINE
            ],
        )
        for (i, j), tag in zip(pairs, tags, strict=True)
    ]


def check_comparable(evaluations: Sequence[Evaluation]) -> None:
    """What a leaderboard needs of its evaluations: two or more, distinct names, each scored
    with accuracy@1 on the same queries, answering the same of them."""
    if len(evaluations) < 2:
        raise NamesakeError("a leaderboard needs at least two runs")
    _check_distinct_names(
        [(e.name, e.about.get("predictions") or "a run in memory") for e in evaluations]
    )
    first = evaluations[0]
    for evaluation in evaluations:
        check_cutoffs(evaluation.per_query.k_values)
        if evaluation.query_ids != first.query_ids:
            raise NamesakeError(
                f"{first.name} and {evaluation.name} were scored on different queries "
                f"({len(first.query_ids)} of {first.about['config']}, "
                f"{len(evaluation.query_ids)} of {evaluation.about['config']}): a leaderboard "
                "ranks runs on the same queries"
            )
    covered = [(e.name, e.coverage) for e in evaluations if e.coverage is not None]
    if covered:
        check_same_coverage(covered, first.about["config"])


def check_cutoffs(k_values: Sequence[int]) -> None:
    """A leaderboard ranks by accuracy@1 and shows the head-tail gap at 1."""
    if 1 not in k_values:
        raise NamesakeError(
            f"a leaderboard ranks by accuracy@1: the cut-offs ({' '.join(map(str, k_values))}) "
            "must include 1"
        )


def check_baseline(baseline: str | None, names: Sequence[str]) -> None:
    if baseline is not None and baseline not in names:
        raise NamesakeError(
            f"--baseline {baseline} is not one of the runs' names ({', '.join(names)})"
        )


def check_same_coverage(coverages: Sequence[tuple[str, Coverage]], config: str) -> None:
    """Runs that answer different queries of ``config`` (with ``--allow-missing``, each
    missing query an empty ranking) are refused: each would be ranked on queries the
    others never saw."""
    first_name, first = coverages[0]
    for name, coverage in coverages[1:]:
        if coverage.missing != first.missing:
            raise NamesakeError(
                f"{first_name} and {name} answer different queries of {config} "
                f"({first.queries - len(first.missing)} and "
                f"{coverage.queries - len(coverage.missing)} of {first.queries}): a leaderboard "
                "ranks runs on the same queries"
            )


def run_names(paths: Sequence[str | os.PathLike], names: Sequence[str] | None = None) -> list[str]:
    """The names of a leaderboard's runs: ``names`` (one per run, distinct), else each
    file's stem, or its path where two runs' stems are the same. Fewer than two runs, or one
    file given twice, are refused."""
    paths = [str(path) for path in paths]
    if len(paths) < 2:
        raise NamesakeError(
            f"a leaderboard needs at least two runs, got {len(paths)}"
            + (f": {paths[0]}" if paths else "")
        )
    seen: dict[Path, str] = {}
    for path in paths:
        key = Path(path).resolve()
        if key in seen:
            first = seen[key]
            twice = (
                f"{path} is given twice" if first == path else f"{first} and {path} are one file"
            )
            raise NamesakeError(f"{twice}: give each run once")
        seen[key] = path
    if names is None:
        stems = Counter(Path(path).stem for path in paths)
        names = [Path(path).stem if stems[Path(path).stem] == 1 else path for path in paths]
    elif len(names) != len(paths):
        raise NamesakeError(f"--names gives {len(names)} names for {len(paths)} runs")
    _check_distinct_names(list(zip(names, paths, strict=True)))
    return list(names)


def _check_distinct_names(named: Sequence[tuple[str, str]]) -> None:
    """(name, file) of each run: two runs of one name are refused, naming both files."""
    files: dict[str, str] = {}
    for name, path in named:
        if name in files:
            raise NamesakeError(
                f"the name {name} is given to both {files[name]} and {path}: give each run "
                "its own name (--names)"
            )
        files[name] = path


def write_leaderboard(
    out: str | os.PathLike,
    board: Leaderboard,
    evaluations: Sequence[Evaluation] | None = None,
) -> None:
    """Writes leaderboard.md, leaderboard.csv and leaderboard.json into ``out``, replacing it
    atomically, and the popularity curve of the ``evaluations`` (the board's systems):
    popularity_curve.png, .svg and the .csv they are drawn from."""
    with atomic_directory(out, writer="leaderboard") as staging:
        (staging / "leaderboard.md").write_text(board.markdown(), encoding="utf-8")
        (staging / "leaderboard.csv").write_text(board.to_csv(), encoding="utf-8")
        (staging / "leaderboard.json").write_text(
            json.dumps(board.record(), indent=2, allow_nan=True) + "\n", encoding="utf-8"
        )
        if evaluations:
            write_popularity_curve(evaluations, staging, board.statistics)
