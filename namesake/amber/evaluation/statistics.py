"""Is a figure, or a difference between two runs, real? Confidence intervals by bootstrap over
AmbER sets, a paired randomization test clustered by set, and Holm's correction.

Both resample sets, not queries (`namesake.amber.evaluation.query_scores`): the queries of one set
are about entities sharing a name, and one retriever's confusion between them moves them
together, so treating them as independent would give intervals too narrow and p-values too
small. Both are vectorised over resamples (one matrix product per batch), so that AmbER's
79,000 queries in 7,330 sets take seconds (``benchmarks/bench_amber_statistics.py``).

They are the textbook procedures, checked against ``scipy.stats.bootstrap`` and
``scipy.stats.permutation_test`` in ``tests/test_amber_statistics.py``, rather than calls of
them: scipy's permutation test took 50 s for the 40 figures of a report on 5,000 sets (every
figure is a separate statistic there), and scipy's percentile interval is NaN as soon as one
resample has no head (or no tail) query, where here a figure's interval is taken over the
resamples that define it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from namesake.amber.evaluation.query_scores import SetSums

CONFIDENCE = 0.95
BOOTSTRAP_RESAMPLES = 1000
TEST_RESAMPLES = 10_000
ALPHA = 0.05
#: a figure drawn from fewer AmbER sets than this says so instead of an interval (a breakdown's
#: group, the popularity effect's informative sets): a bootstrap over two or three sets gives
#: an interval that means nothing
MIN_SETS = 5
_BATCH = 250  # resamples per matrix product: (batch x sets) weights stay ~100 MB at 50k sets
# sign flips in one matrix product of the paired test: ~100 MB, also with 80,000 queries as units
_SIGNS_PER_BATCH = 12_500_000


@dataclass(frozen=True)
class StatisticsSettings:
    """The resampling behind every interval and paired test, one set for `evaluate`, `amber
    compare` and `compare-runs` (``--seed``, ``--bootstrap-resamples``, ``--test-resamples``),
    so that the same run gets the same interval in every command; recorded in their outputs.

    >>> settings = StatisticsSettings(seed=1, bootstrap_resamples=2000)
    >>> score(run, queries, ScoringOptions(statistics=settings))
    """

    seed: int = 0
    bootstrap_resamples: int = BOOTSTRAP_RESAMPLES
    test_resamples: int = TEST_RESAMPLES

    def record(self) -> dict:
        return {
            "seed": self.seed,
            "bootstrap_resamples": self.bootstrap_resamples,
            "test_resamples": self.test_resamples,
        }


def bootstrap_intervals(
    sums: SetSums,
    resamples: int = BOOTSTRAP_RESAMPLES,
    confidence: float = CONFIDENCE,
    seed: int = 0,
) -> dict[str, tuple[float, float]]:
    """Figure -> (low, high): the percentile bootstrap interval, sets drawn with replacement
    ``resamples`` times. A figure undefined on a resample (no tail query drawn) is left out of
    that resample; a figure undefined on the data itself gets (NaN, NaN)."""
    gap_matrix = sums.gap_matrix()
    draws = []
    for weights in resampled_sets(len(sums.numerators), resamples, seed):
        with np.errstate(invalid="ignore", divide="ignore"):
            ratios = (weights @ sums.numerators) / (weights @ sums.denominators)
        gaps = ratios @ gap_matrix if gap_matrix.size else np.zeros((len(weights), 0))
        draws.append(np.hstack([ratios, gaps]))
    drawn = np.vstack(draws) if draws else np.zeros((0, len(sums.names) + len(sums.gaps)))
    tail = 100 * (1 - confidence) / 2
    observed = sums.figures()
    intervals = {}
    for column, name in enumerate([*sums.names, *sums.gaps]):
        values = drawn[:, column]
        values = values[np.isfinite(values)]
        if math.isnan(observed[name]) or not values.size:
            intervals[name] = (math.nan, math.nan)
        else:
            low, high = np.percentile(values, [tail, 100 - tail])
            intervals[name] = (float(low), float(high))
    return intervals


def figure_cell(value: float | None, interval=None) -> str:
    """A figure to one decimal, with its 95% interval when there is one: ``44.4 [33.3, 55.6]``;
    how every table of the reports prints a figure, ``–`` for none."""
    if value is None or math.isnan(value):
        return "–"
    if interval is None or any(bound is None or math.isnan(bound) for bound in interval):
        return f"{value:.1f}"
    return f"{value:.1f} [{interval[0]:.1f}, {interval[1]:.1f}]"


def resampled_sets(sets: int, resamples: int, seed: int = 0) -> Iterator[np.ndarray]:
    """The bootstrap's resamples in batches of (resamples, sets) counts: how many times each
    set is drawn, ``sets`` draws with replacement. Every bootstrap over AmbER sets draws
    them here, so that figures, runs or a leaderboard's systems resampled with one seed are
    resampled on the same sets: their differences and ranks on a resample are paired."""
    rng = np.random.default_rng(seed)
    for start in range(0, resamples, _BATCH):
        size = min(_BATCH, resamples - start)
        yield rng.multinomial(sets, np.full(sets, 1.0 / sets), size=size).astype(float)


def difference(a: SetSums, b: SetSums) -> SetSums:
    """The sums whose figures are b's minus a's, on the same queries: what a bootstrap of the
    difference between two runs resamples (both runs take the same sets in a resample)."""
    _check_paired(a, b)
    return SetSums(a.names, b.numerators - a.numerators, a.denominators, a.gaps)


def _check_paired(a: SetSums, b: SetSums) -> None:
    if a.names != b.names or not np.array_equal(a.denominators, b.denominators):
        raise ValueError("the two runs were not scored on the same queries, sets and measures")


def paired_randomization_test(
    a: SetSums, b: SetSums, resamples: int = TEST_RESAMPLES, seed: int = 0
) -> dict[str, float]:
    """Figure -> two-sided p-value of "a and b do equally well", by a paired randomization
    (permutation) test clustered by set: under the null hypothesis the two runs' results on a
    set are exchangeable, so each set's contribution to the difference flips sign at random.

    With at most ``resamples`` sign patterns (13 sets or fewer) all are enumerated and the
    p-value is exact; otherwise p = (1 + extreme resamples) / (1 + resamples), which never
    claims more than the resamples can show. A figure undefined on the data gets NaN.
    """
    _check_paired(a, b)
    totals = a.denominators.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        contributions = (b.numerators - a.numerators) / totals  # set s's share of the difference
    gap_matrix = a.gap_matrix()
    if gap_matrix.size:
        contributions = np.hstack([contributions, contributions @ gap_matrix])
    defined = np.isfinite(contributions).all(axis=0)
    contributions = np.where(defined, contributions, 0.0)
    observed = np.abs(contributions.sum(axis=0))
    # a flipped sum equal to the observed one (up to rounding) counts as at least as extreme
    tolerance = 1e-9 * np.maximum(np.abs(contributions).sum(axis=0), 1e-300)
    sets = len(contributions)
    if 2**sets <= resamples:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=sets)))
        extreme = (np.abs(signs @ contributions) >= observed - tolerance).sum(axis=0)
        pvalues = extreme / len(signs)
    else:
        rng = np.random.default_rng(seed)
        extreme = np.zeros(contributions.shape[1])
        rows = max(1, min(_BATCH * 4, _SIGNS_PER_BATCH // sets))
        for start in range(0, resamples, rows):
            size = min(rows, resamples - start)
            signs = rng.choice((-1.0, 1.0), size=(size, sets))
            extreme += (np.abs(signs @ contributions) >= observed - tolerance).sum(axis=0)
        pvalues = (1 + extreme) / (1 + resamples)
    names = [*a.names, *a.gaps]
    return {
        name: float(p) if ok else math.nan
        for name, p, ok in zip(names, pvalues, defined, strict=True)
    }


def per_query_randomization_test(
    a: Mapping[str, np.ndarray],
    b: Mapping[str, np.ndarray],
    resamples: int = TEST_RESAMPLES,
    seed: int = 0,
) -> dict[str, float]:
    """Measure -> two-sided p-value of the paired randomization test with every query its own
    unit, given each run's per-query values of each measure: Fisher's randomization test as
    IR papers run it (Smucker et al., CIKM 2007), each query's pair of results swapped at
    random. It is `paired_randomization_test` with one query a set, so the same seed gives the
    same p-values (ranx's numba version, used before, drew from per-thread generators and
    moved from run to run); 10,000 flips of 80,000 queries take under 2 s a measure
    (``benchmarks/bench_amber_statistics.py``)."""
    names = list(a)
    if list(b) != names or any(len(a[name]) != len(b[name]) for name in names):
        raise ValueError("the two runs were not scored on the same queries and measures")

    def one_query_a_set(values: Mapping[str, np.ndarray]) -> SetSums:
        columns = np.column_stack([np.asarray(values[name], dtype=float) for name in names])
        return SetSums(names, columns, np.ones_like(columns), {})

    return paired_randomization_test(one_query_a_set(a), one_query_a_set(b), resamples, seed)


def holm(pvalues: Mapping[str, float]) -> dict[str, float]:
    """Holm's step-down adjustment over the family ``pvalues`` (NaNs left out of it and kept):
    the i-th smallest of m p-values becomes max over j <= i of min(1, (m - j + 1) p_(j))."""
    tested = sorted((p, name) for name, p in pvalues.items() if not math.isnan(p))
    adjusted = {name: math.nan for name in pvalues}
    running = 0.0
    for position, (p, name) in enumerate(tested):
        running = max(running, min(1.0, (len(tested) - position) * p))
        adjusted[name] = running
    return adjusted


@dataclass
class PairedVerdict:
    """One figure of a paired comparison: both runs' values, the difference (b - a) with its
    bootstrap interval, the clustered p-value, Holm's adjustment and the verdict at ALPHA."""

    measure: str
    a: float
    b: float
    difference: float
    interval: tuple[float, float]
    p_value: float
    p_holm: float
    p_per_query: float | None  # the paired randomization test, queries as the unit

    @property
    def significant(self) -> bool:
        return not math.isnan(self.p_holm) and self.p_holm < ALPHA

    def record(self) -> dict:
        return {
            "measure": self.measure,
            "a": self.a,
            "b": self.b,
            "difference": self.difference,
            "difference_95ci": list(self.interval),
            "p_value": self.p_value,
            "p_holm": self.p_holm,
            "p_per_query": self.p_per_query,
            "significant": self.significant,
        }
