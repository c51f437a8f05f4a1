"""The within-set popularity effect: does a retriever favour popular entities over their
namesakes, once everything but popularity is held fixed?

The head-tail gap mixes popularity with everything else that differs between a set's head and
its tails. Inside an AmbER set the name is the same, so comparing entities *of one set* isolates
popularity: a conditional (fixed-effects) logistic regression of success@1 on log10 page
views, with the AmbER set as the stratum. Each set keeps its own baseline (how hard its name
is), which the conditional likelihood removes instead of estimating, so 7,330 nuisance
intercepts neither bias the slope nor cost a parameter each. The slope on log10 views is
reported as the **odds ratio per 10x page views**: 2.0 means that, within a set, an entity
with ten times the views has twice the odds of its gold page ranking first.

Beside it, the **popularity preference rate**: among confused queries, the share whose
retrieved namesake is more popular than the entity asked about. A retriever that confused
namesakes at random would be at 0.5; above it, confusion pulls towards the popular namesake.

Both have set-clustered bootstrap intervals drawn with `statistics.resampled_sets`, so
that two runs with one seed are resampled on the same sets and their difference
(`effect_difference`, what `compare-runs` prints) is paired.

Why not call statsmodels' ``ConditionalLogit`` (the reference, which
``tests/test_popularity_effect.py`` checks this against): it loops over the strata in Python
with a memoised recursion, so one fit on AmbER's 7,330 sets takes long and 1,000 bootstrap
refits far longer. Here the exact conditional likelihood's denominator (per set, the sum over
every way of choosing its successes: an elementary symmetric polynomial) is a dynamic
programme vectorised across sets of one size, and the bootstrap refits none: each set's score
and information are computed once on a grid of slopes, and a resample's slope is the root of
its weighted score, interpolated between grid points with their derivatives (cubic Hermite).
One run at full size with 1,000 resamples takes seconds
(``benchmarks/bench_popularity_effect.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from namesake.amber.evaluation.query_scores import SetSums
from namesake.amber.evaluation.statistics import (
    CONFIDENCE,
    MIN_SETS,
    StatisticsSettings,
    bootstrap_intervals,
    resampled_sets,
)
from namesake.errors import NamesakeError

if TYPE_CHECKING:
    from namesake.amber.evaluation.scoring import Evaluation

#: the resamples' grid: this many slopes, this many standard errors either side of the estimate
_GRID_POINTS = 25
_GRID_STANDARD_ERRORS = 5.0
#: Newton's steps are at most this long (log odds per unit covariate); it stops when they
#: are shorter than this share of the slope
_LONGEST_STEP = 2.0
_CONVERGED = 1e-12
_NEWTON_ITERATIONS = 100
_BISECTIONS = 50  # of a grid interval, for a resample's root: to 2^-50 of it
#: resamples refitted exactly at once (their root off the grid): bounds the working memory
_REFITS_PER_BATCH = 64


@dataclass(frozen=True, eq=False)
class _StratumGroup:
    """Informative strata of similar sizes, as rows: their codes, their covariate (centred
    within the stratum, negated where the likelihood conditions on the failures, sorted
    ascending, and padded in front to the group's largest size with entries that are not
    ``present``), how many outcomes it conditions on (at most half the stratum) and the
    sufficient statistic, the covariate summed over those outcomes.

    Conditioning on the failures where they are fewer keeps the programme narrow and gives the
    same likelihood in the slope (the successes' sum is the stratum's total minus the
    failures'). Centring keeps the subset weights near 1 whatever the popularity's level, and
    the ascending order lets the rescaling at each step keep the subsets that dominate the
    final sum, for either sign of the slope. Grouping sizes within a factor of 1.5 pads
    little and loops over a few groups, not over every size."""

    codes: np.ndarray
    covariate: np.ndarray
    present: np.ndarray
    chosen: np.ndarray
    statistic: np.ndarray

    @classmethod
    def of(cls, outcome: np.ndarray, value: np.ndarray, starts: np.ndarray, sizes, codes):
        """The strata starting at ``starts`` of the stratum-sorted arrays, ``sizes`` long."""
        columns = np.arange(sizes.max())
        present = columns < sizes[:, None]
        positions = np.where(present, starts[:, None] + columns, 0)
        covariate = np.where(present, value[positions], 0.0)
        conditioned = np.where(present, outcome[positions], 0.0)
        flipped = conditioned.sum(axis=1) > sizes / 2
        sign = np.where(flipped, -1.0, 1.0)[:, None]
        covariate = sign * (covariate - covariate.sum(axis=1, keepdims=True) / sizes[:, None])
        conditioned = np.where(flipped[:, None], 1.0 - conditioned, conditioned) * present
        order = np.argsort(np.where(present, covariate, -np.inf), axis=1)
        present = np.take_along_axis(present, order, axis=1)
        return cls(
            codes,
            np.where(present, np.take_along_axis(covariate, order, axis=1), 0.0),
            present,
            conditioned.sum(axis=1).astype(np.int64),
            (covariate * conditioned).sum(axis=1),
        )

    def extremes(self) -> tuple[np.ndarray, np.ndarray]:
        """The statistic's highest and lowest possible values: the sums of the ``chosen``
        largest and smallest covariate values (the padding, in front, adds 0)."""
        totals = np.cumsum(self.covariate, axis=1)
        rows = np.arange(len(totals))
        padding = (~self.present).sum(axis=1)
        width = self.covariate.shape[1]
        return (
            totals[:, -1] - totals[rows, width - self.chosen - 1],
            totals[rows, padding + self.chosen - 1],
        )


def _size_buckets(sizes: np.ndarray) -> list[np.ndarray]:
    """The distinct sizes in buckets whose largest is at most 1.5 times their smallest."""
    buckets, current = [], []
    for size in np.unique(sizes).tolist():
        if current and size > 1.5 * current[0]:
            buckets.append(np.array(current))
            current = []
        current.append(size)
    return buckets + [np.array(current)] if current else buckets


def _conditional_moments(
    covariate: np.ndarray, present: np.ndarray, chosen: np.ndarray, slopes: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per stratum (rows) and slope (columns), the mean and variance of the statistic T(S),
    the covariate summed over a subset S of ``chosen`` queries, when S is drawn with
    probability proportional to exp(slope T(S)): the conditional likelihood's expected
    statistic and its information.

    The sums over subsets are the elementary symmetric polynomials of exp(slope x_i) and
    their first two derivatives, built one query at a time (sizes 0..chosen as the last axis)
    for every stratum and slope at once (an entry not ``present`` adds nothing); each step
    divides by its largest weight, which leaves every ratio unchanged and keeps the weights
    from overflowing."""
    # the subset weights and their first two derivatives, stacked: (3, strata, slopes, sizes)
    sums = np.zeros((3, len(covariate), len(slopes), int(chosen.max()) + 1))
    sums[0, ..., 0] = 1.0
    values = covariate[:, :, None, None]
    grows = np.exp(values * slopes[:, None]) * present[:, :, None, None]
    for column in range(covariate.shape[1]):
        value, grow = values[:, column], grows[:, column]
        weight, first = sums[0, ..., :-1], sums[1, ..., :-1]
        cross_first = grow * value * weight
        cross_second = (grow * value) * (2 * first + value * weight)
        sums[..., 1:] += grow * sums[..., :-1]  # a subset one larger, with this query
        sums[1, ..., 1:] += cross_first
        sums[2, ..., 1:] += cross_second
        sums /= sums[0].max(axis=2, keepdims=True)
    size = np.broadcast_to(chosen[:, None, None], (*sums.shape[1:3], 1))
    total, first, second = (np.take_along_axis(part, size, axis=2)[..., 0] for part in sums)
    mean = first / total
    return mean, np.maximum(second / total - mean**2, 0.0)


@dataclass(frozen=True, eq=False)
class _Strata:
    """The strata that carry information on the slope (both outcomes, and more than one
    covariate value), grouped by size for the vectorised likelihood, with each one's code,
    statistic and the statistic's highest and lowest values (which tell a separated fit,
    its slope infinite, apart), in one order."""

    groups: list[_StratumGroup]
    codes: np.ndarray
    statistic: np.ndarray
    highest: np.ndarray
    lowest: np.ndarray
    queries: int

    @classmethod
    def of(cls, success: np.ndarray, covariate: np.ndarray, strata: np.ndarray) -> _Strata:
        order = np.argsort(strata, kind="stable")
        codes, starts, sizes = np.unique(strata[order], return_index=True, return_counts=True)
        outcome, value = success[order].astype(float), covariate[order]
        groups = []
        if len(order):
            successes = np.add.reduceat(outcome, starts)
            spread = np.maximum.reduceat(value, starts) - np.minimum.reduceat(value, starts)
            informative = (successes > 0) & (successes < sizes) & (spread > 0)
            for bucket in _size_buckets(sizes[informative]):
                members = informative & np.isin(sizes, bucket)
                groups.append(
                    _StratumGroup.of(
                        outcome, value, starts[members], sizes[members], codes[members]
                    )
                )
        extremes = [group.extremes() for group in groups]
        return cls(
            groups,
            _joined([group.codes for group in groups], np.int64),
            _joined([group.statistic for group in groups]),
            _joined([highest for highest, _ in extremes]),
            _joined([lowest for _, lowest in extremes]),
            sum(int(group.present.sum()) for group in groups),
        )

    def score_information(self, slopes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per stratum (rows) and slope (columns): the score, the log-likelihood's derivative
        in the slope (statistic - its expectation), and the information, minus the score's
        derivative (the statistic's variance)."""
        moments = [
            _conditional_moments(g.covariate, g.present, g.chosen, slopes) for g in self.groups
        ]
        if not moments:
            return np.zeros((0, len(slopes))), np.zeros((0, len(slopes)))
        mean = np.concatenate([mean for mean, _ in moments])
        return self.statistic[:, None] - mean, np.concatenate([var for _, var in moments])

    def fit(self, weights: np.ndarray, start: float = 0.0) -> np.ndarray:
        """Per row of ``weights`` (how many times each stratum counts), the maximum-likelihood
        slope: +inf or -inf where the strata are separated (in every stratum counted, the
        outcomes conditioned on have the highest covariate values, or all the lowest, so the
        likelihood grows without end), NaN where no stratum counts."""
        slopes = np.full(len(weights), np.nan)
        towards_plus = weights @ (self.statistic - self.highest)  # the score's limits, <= 0
        towards_minus = weights @ (self.statistic - self.lowest)  # and >= 0
        tolerance = 1e-9 * (weights @ (self.highest - self.lowest))
        counted = tolerance > 0
        slopes[counted & (towards_plus >= -tolerance)] = np.inf
        slopes[counted & (towards_minus <= tolerance)] = -np.inf
        finite = np.flatnonzero(counted & np.isnan(slopes))
        for begin in range(0, len(finite), _REFITS_PER_BATCH):
            rows = finite[begin : begin + _REFITS_PER_BATCH]
            slopes[rows] = self._newton(weights[rows], start)
        return slopes

    def _newton(self, weights: np.ndarray, start: float) -> np.ndarray:
        """Newton's method on each row's weighted score, which falls as the slope rises (the
        conditional log-likelihood is concave): steps of bounded length, and bisection of
        the bracket the scores seen so far give where a step would leave it."""
        slope = np.full(len(weights), start)
        low, high = np.full(len(weights), -np.inf), np.full(len(weights), np.inf)
        for _ in range(_NEWTON_ITERATIONS):
            score, information = (
                (weights * part.T).sum(axis=1) for part in self.score_information(slope)
            )
            low = np.where(score > 0, slope, low)
            high = np.where(score < 0, slope, high)
            with np.errstate(invalid="ignore", divide="ignore"):
                proposal = slope + np.clip(score / information, -_LONGEST_STEP, _LONGEST_STEP)
            outside = (proposal < low) | (proposal > high)
            proposal = np.where(outside, (low + high) / 2, proposal)
            done = np.abs(proposal - slope) <= _CONVERGED * np.maximum(1.0, np.abs(slope))
            slope = proposal
            if done.all():
                break
        return slope

    def resampled_slopes(self, slope: float, sets: int, statistics: StatisticsSettings):
        """The slope on each bootstrap resample of the ``sets`` sets, drawn as every bootstrap
        here draws them (`resampled_sets`).

        Not a refit per resample: each stratum's score and information are computed once on
        a grid around ``slope`` (±5 standard errors), a resample's weighted score is then a
        matrix product, and its root lies between the two grid slopes where it changes sign,
        found on the cubic that matches the score and its derivative at both. A resample
        whose root is off the grid (or infinite: separated) is refitted exactly."""
        grid = self._grid(slope)
        if grid is not None:
            score, information = self.score_information(grid)
        draws = []
        for weights in resampled_sets(sets, statistics.bootstrap_resamples, statistics.seed):
            weights = weights[:, self.codes]
            if grid is None:
                roots = np.full(len(weights), np.nan)
            else:
                roots = _hermite_roots(weights @ score, weights @ information, grid)
            refit = np.isnan(roots)
            roots[refit] = self.fit(weights[refit], start=slope if math.isfinite(slope) else 0.0)
            draws.append(roots)
        return np.concatenate(draws) if draws else np.zeros(0)

    def _grid(self, slope: float) -> np.ndarray | None:
        if not math.isfinite(slope):
            return None
        information = self.score_information(np.array([slope]))[1].sum()
        spread = _GRID_STANDARD_ERRORS / math.sqrt(information)
        return slope + spread * np.linspace(-1.0, 1.0, _GRID_POINTS)


def _joined(parts: list[np.ndarray], dtype=float) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)


def _hermite_roots(score: np.ndarray, information: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Per row, the root of a falling function known on ``grid`` (``score``) with its
    derivative (``-information``): between the two grid points where it changes sign, the
    root of the cubic matching both values and derivatives there, by bisection; NaN where it
    does not change sign on the grid."""
    rows = np.arange(len(score))
    past = np.argmax(score <= 0, axis=1)  # the first grid point at or past the root
    inside = (score <= 0).any(axis=1) & (past > 0)
    past = np.where(inside, past, 1)
    step = grid[1] - grid[0]
    before, after = score[rows, past - 1], score[rows, past]
    slope_before = -information[rows, past - 1] * step
    slope_after = -information[rows, past] * step
    low, high = np.zeros(len(rows)), np.ones(len(rows))
    for _ in range(_BISECTIONS):
        t = (low + high) / 2
        cubic = (
            (2 * t**3 - 3 * t**2 + 1) * before
            + (t**3 - 2 * t**2 + t) * slope_before
            + (3 * t**2 - 2 * t**3) * after
            + (t**3 - t**2) * slope_after
        )
        low, high = np.where(cubic > 0, t, low), np.where(cubic > 0, high, t)
    return np.where(inside, grid[past - 1] + step * (low + high) / 2, np.nan)


def _percentile_interval(draws: np.ndarray, confidence: float = CONFIDENCE):
    """The percentile interval over the draws that are numbers, as ``np.percentile``'s linear
    method gives it, except that an infinite draw (a separated resample) bounds it as a
    limit would, where numpy's interpolation would make NaN."""
    values = np.sort(draws[~np.isnan(draws)])
    if not values.size:
        return (math.nan, math.nan)
    tail = (1 - confidence) / 2
    positions = np.array([tail, 1 - tail]) * (len(values) - 1)
    below, above = np.floor(positions).astype(int), np.ceil(positions).astype(int)
    a, b = values[below], values[above]
    with np.errstate(invalid="ignore"):
        between = a + (b - a) * (positions - below)
    bounds = np.where((a == b) | np.isinf(a), a, np.where(np.isinf(b), b, between))
    return (float(bounds[0]), float(bounds[1]))


def _checked(success, covariate, strata) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    success, covariate, strata = np.asarray(success), np.asarray(covariate), np.asarray(strata)
    if not len(success) == len(covariate) == len(strata):
        raise ValueError(
            f"{len(success)} outcomes, {len(covariate)} covariate values and {len(strata)} "
            "strata: one of each per observation"
        )
    if not np.isin(success, (0, 1)).all():
        raise ValueError("the outcomes must be 0 or 1 (or booleans)")
    if not np.isfinite(covariate).all():
        raise ValueError("the covariate must be a finite number for every observation")
    if len(strata) and (not np.issubdtype(strata.dtype, np.integer) or strata.min() < 0):
        raise ValueError("the strata must be codes: integers from 0")
    return success.astype(bool), covariate.astype(float), strata


def conditional_logit_slope(success, covariate, strata, weights=None) -> float:
    """The maximum-likelihood slope (log odds per unit of ``covariate``) of the conditional
    logistic regression of ``success`` (0/1) on ``covariate`` with ``strata`` (integer codes)
    as the strata: statsmodels' ``ConditionalLogit(success, covariate, groups=strata).fit()``
    with one covariate, vectorised. ``weights`` (per stratum code, default 1): how many times
    each stratum counts, as a bootstrap resample draws them. +inf or -inf where the strata are
    separated, NaN where none has both outcomes and more than one covariate value."""
    strata_model = _Strata.of(*_checked(success, covariate, strata))
    counts = np.ones(len(strata_model.codes))
    if weights is not None:
        counts = np.asarray(weights, dtype=float)[strata_model.codes]
    return float(strata_model.fit(counts[None])[0])


def _exp(value: float) -> float:
    with np.errstate(over="ignore"):
        return float(np.exp(value))


@dataclass(frozen=True, eq=False)
class WithinSetEffect:
    """The within-set effect of the covariate on success: the conditional logit slope, its
    set-clustered bootstrap interval, how many sets and queries inform it, and the slope on
    each resample (NaN where no informative set was drawn), which a paired difference between
    two runs reads. ``odds_ratio``: exp(slope), per unit of the covariate (log10 page views:
    per 10x views)."""

    slope: float
    slope_interval: tuple[float, float]
    informative_sets: int
    informative_queries: int
    resampled_slopes: np.ndarray = field(repr=False)

    @property
    def odds_ratio(self) -> float:
        return _exp(self.slope)

    @property
    def interval(self) -> tuple[float, float]:
        return (_exp(self.slope_interval[0]), _exp(self.slope_interval[1]))


def within_set_effect(
    success, log10_views, set_index, statistics: StatisticsSettings | None = None
) -> WithinSetEffect:
    """The odds ratio of success per 10x page views within AmbER sets (conditional logit,
    sets as strata), with its 95% bootstrap interval over sets (``statistics``: the seed and
    number of resamples, the same resamples as every interval of the run). The array-level
    core of `popularity_effect`: one value per query, ``set_index`` the 0-based set codes.

    Only sets with a success and a failure among entities of different popularity inform it;
    a resample whose sets are separated (every success more popular than every failure of its
    set, say) has an odds ratio of inf (or 0), which the percentiles take as such."""
    statistics = statistics or StatisticsSettings()
    success, log10_views, set_index = _checked(success, log10_views, set_index)
    strata = _Strata.of(success, log10_views, set_index)
    slope = float(strata.fit(np.ones((1, len(strata.codes))))[0])
    sets = int(set_index.max()) + 1 if len(set_index) else 0
    resampled = strata.resampled_slopes(slope, sets, statistics)
    interval = (math.nan, math.nan) if math.isnan(slope) else _percentile_interval(resampled)
    return WithinSetEffect(slope, interval, len(strata.codes), strata.queries, resampled)


@dataclass(frozen=True)
class PopularityEffect:
    """How much a run's success depends on popularity within AmbER sets.

    ``odds_ratio``: of success@1 per 10x page views, between entities of one set (1.0: no
    effect; 2.0: ten times the views, twice the odds), with its 95% ``interval`` over sets,
    from the ``informative_sets`` (and their ``informative_queries``) that hold a success and
    a failure of different popularity. ``preference_rate``: among the ``confused_queries``,
    the share whose retrieved namesake is more popular than the entity asked about (0.5: no
    preference between more and less popular namesakes; NaN: no confused query), with its
    ``preference_interval``.

    >>> effect = popularity_effect(score(run, queries))
    >>> effect.odds_ratio_cell()  # '1.84 [1.52, 2.21]'
    """

    odds_ratio: float
    interval: tuple[float, float]
    informative_sets: int
    informative_queries: int
    preference_rate: float
    preference_interval: tuple[float, float]
    confused_queries: int

    @classmethod
    def of(cls, within: WithinSetEffect, rate: float, interval, confused: int):
        return cls(
            within.odds_ratio,
            within.interval,
            within.informative_sets,
            within.informative_queries,
            rate,
            tuple(interval),
            confused,
        )

    def record(self) -> dict:
        return {
            "odds_ratio_per_10x_views": self.odds_ratio,
            "odds_ratio_95ci": list(self.interval),
            "informative_sets": self.informative_sets,
            "informative_queries": self.informative_queries,
            "preference_rate": self.preference_rate,
            "preference_rate_95ci": list(self.preference_interval),
            "confused_queries": self.confused_queries,
        }

    @property
    def too_few_sets(self) -> bool:
        """Whether the odds ratio rests on fewer than MIN_SETS informative sets: then its
        cell says so instead of a figure (the record keeps the numbers)."""
        return self.informative_sets < MIN_SETS

    def odds_ratio_cell(self) -> str:
        if self.too_few_sets:
            return f"too few sets ({self.informative_sets})"
        return _with_interval(self.odds_ratio, self.interval)

    def summary(self) -> str:
        """What `evaluate` prints and report.md says of it, in one paragraph."""
        odds_ratio = (
            f"{_with_interval(self.odds_ratio, self.interval)}, from too few sets to say "
            f"anything (at least {MIN_SETS} needed)"
            if self.too_few_sets
            else self.odds_ratio_cell()
        )
        return (
            f"Within-set popularity effect: odds ratio of success@1 per 10x page views "
            f"{odds_ratio} (conditional logistic regression, AmbER sets as strata, from the "
            f"{self.informative_sets} {'set' if self.informative_sets == 1 else 'sets'} with a "
            "success and a failure of different popularity; 1: no effect). Popularity "
            "preference rate "
            f"{_with_interval(self.preference_rate, self.preference_interval)} of the "
            f"{self.confused_queries} confused queries: the share whose retrieved namesake is "
            "more popular than the entity asked about (0.5: no preference)."
        )

    def preference_cell(self) -> str:
        """The rate with its interval and the confused queries it is drawn from."""
        rate = _with_interval(self.preference_rate, self.preference_interval)
        return f"{rate} of {self.confused_queries}"


def _two_places(value: float, signed: bool = False) -> str:
    if math.isnan(value):
        return "–"
    if math.isinf(value):
        return "∞" if value > 0 else "-∞"
    return f"{value:+.2f}" if signed else f"{value:.2f}"


def _with_interval(value: float, interval, signed: bool = False) -> str:
    """``1.84 [1.52, 2.21]``; the figure alone where its interval is undefined."""
    if math.isnan(value) or any(math.isnan(bound) for bound in interval):
        return _two_places(value, signed)
    low, high = (_two_places(bound, signed) for bound in interval)
    return f"{_two_places(value, signed)} [{low}, {high}]"


def _within_set_effect_of(
    evaluation: Evaluation, statistics: StatisticsSettings
) -> WithinSetEffect:
    """success@1 (the best gold page ranked first) on the popularity of each query's entity,
    within its AmbER set."""
    popularity = evaluation.queries.popularity
    unknown = np.flatnonzero(~np.isfinite(popularity))
    if unknown.size:
        raise NamesakeError(
            f"{evaluation.queries.dataset}, {evaluation.queries.config}: the popularity of "
            f"{unknown.size} queries' entities is not a number (e.g. query "
            f"{evaluation.query_ids[unknown[0]]}): the within-set popularity effect needs "
            "every entity's log10 page views"
        )
    scores = evaluation.per_query
    return within_set_effect(scores.gold_rank == 0, popularity, scores.set_index, statistics)


def _preference_counts(evaluation: Evaluation) -> tuple[np.ndarray, np.ndarray]:
    """Per AmbER set: its confused queries whose namesake is more popular than the entity
    asked about (a smaller popularity rank within the set, 1 the most popular), and its
    confused queries."""
    table = evaluation.per_query_table()
    asked, namesake = (
        np.array(table[column].to_pylist(), dtype=float)
        for column in ("popularity_rank_in_set", "confused_with_popularity_rank_in_set")
    )
    scores = evaluation.per_query
    confused = (scores.values["entity_confusion"] == 100) & ~np.isnan(namesake)
    more_popular = confused & (namesake < asked)
    sets = scores.num_sets
    return (
        np.bincount(scores.set_index, weights=more_popular, minlength=sets),
        np.bincount(scores.set_index, weights=confused, minlength=sets),
    )


def popularity_effect(
    evaluation: Evaluation, statistics: StatisticsSettings | None = None
) -> PopularityEffect:
    """The within-set popularity effect of a scored run (see the module docstring): the odds
    ratio of success@1 per 10x page views, and the popularity preference rate of its
    confused queries, each with its 95% interval over AmbER sets (``statistics``: by default
    the run's own, as its other intervals).

    >>> effect = popularity_effect(score(run, queries))
    >>> effect.odds_ratio, effect.interval, effect.preference_rate
    """
    statistics = statistics or evaluation.statistics
    within = _within_set_effect_of(evaluation, statistics)
    more_popular, confused = _preference_counts(evaluation)
    sums = SetSums(["rate"], more_popular[:, None], confused[:, None], {})
    interval = bootstrap_intervals(sums, statistics.bootstrap_resamples, seed=statistics.seed)
    return PopularityEffect.of(
        within, sums.figures()["rate"], interval["rate"], int(confused.sum())
    )


@dataclass(frozen=True)
class EffectDifference:
    """Run b's popularity effect against run a's on the same queries: b's odds ratio over
    a's (1.0: the same dependence on popularity) and b's preference rate minus a's, each
    with a paired 95% bootstrap interval (both runs on the same resampled sets)."""

    a: PopularityEffect
    b: PopularityEffect
    odds_ratio_ratio: float
    odds_ratio_ratio_interval: tuple[float, float]
    preference_difference: float
    preference_difference_interval: tuple[float, float]

    def record(self) -> dict:
        return {
            "a": self.a.record(),
            "b": self.b.record(),
            "odds_ratio_ratio": self.odds_ratio_ratio,
            "odds_ratio_ratio_95ci": list(self.odds_ratio_ratio_interval),
            "preference_rate_difference": self.preference_difference,
            "preference_rate_difference_95ci": list(self.preference_difference_interval),
            "odds_ratio": "of success@1 per 10x page views, conditional logistic regression "
            "with the AmbER set as the stratum",
            "preference_rate": "among confused queries, the share whose retrieved namesake is "
            "more popular than the entity asked about (0.5: no preference)",
        }

    def ratio_cell(self) -> str:
        """``×1.20 [0.95, 1.51]``, or why not where either run's odds ratio rests on too few
        sets."""
        if self.a.too_few_sets or self.b.too_few_sets:
            return "too few sets"
        return "×" + _with_interval(self.odds_ratio_ratio, self.odds_ratio_ratio_interval)

    def difference_cell(self) -> str:
        return _with_interval(
            self.preference_difference, self.preference_difference_interval, signed=True
        )


def effect_difference(
    a: Evaluation, b: Evaluation, statistics: StatisticsSettings | None = None
) -> EffectDifference:
    """Both runs' popularity effects and b's against a's (`EffectDifference`): every
    interval from the same resampled sets, so the differences are paired."""
    statistics = statistics or a.statistics
    if a.query_ids != b.query_ids:
        raise NamesakeError(f"{a.name} and {b.name} were scored on different queries")
    within = [_within_set_effect_of(evaluation, statistics) for evaluation in (a, b)]
    counts = [_preference_counts(evaluation) for evaluation in (a, b)]
    sums = SetSums(
        ["a", "b"],
        np.column_stack([more_popular for more_popular, _ in counts]),
        np.column_stack([confused for _, confused in counts]),
        {"b - a": ("b", "a")},
    )
    figures = sums.figures()
    intervals = bootstrap_intervals(sums, statistics.bootstrap_resamples, seed=statistics.seed)
    effects = [
        PopularityEffect.of(effect, figures[run], intervals[run], int(confused.sum()))
        for effect, (_, confused), run in zip(within, counts, "ab", strict=True)
    ]
    with np.errstate(invalid="ignore"):
        log_ratio = within[1].slope - within[0].slope
        resampled = within[1].resampled_slopes - within[0].resampled_slopes
    low, high = (math.nan, math.nan) if math.isnan(log_ratio) else _percentile_interval(resampled)
    return EffectDifference(
        *effects,
        _exp(log_ratio),
        (_exp(low), _exp(high)),
        figures["b - a"],
        intervals["b - a"],
    )
