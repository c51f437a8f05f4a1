"""The within-set popularity effect (issue 50, item 4): the vectorised conditional logit equals
statsmodels' ``ConditionalLogit`` (weighted strata too), the bootstrap's interpolated roots
equal exact weighted refits, a seeded simulation recovers known odds ratios within their
intervals, and the preference rate counts what it says on a hand-made case."""

from __future__ import annotations

import math
import warnings
from types import SimpleNamespace

import numpy as np
import pyarrow as pa
import pytest
from statsmodels.discrete.conditional_models import ConditionalLogit

from namesake.amber.evaluation.popularity_effect import (
    conditional_logit_slope,
    effect_difference,
    popularity_effect,
    within_set_effect,
)
from namesake.amber.evaluation.query_scores import QueryScores
from namesake.amber.evaluation.statistics import StatisticsSettings, resampled_sets


def amber_like(rng, sets: int, odds_ratio: float):
    """Per query: success@1, its entity's log10 page views and its set. Sets of 2-6 entities,
    each with log10 views ~ N(3, 1) and 1-4 queries, and each set its own baseline log odds
    (the fixed effect the conditional likelihood removes)."""
    entities = rng.integers(2, 7, sets)
    set_of_entity = np.repeat(np.arange(sets), entities)
    views = rng.normal(3, 1, len(set_of_entity))
    entity = np.repeat(np.arange(len(set_of_entity)), rng.integers(1, 5, len(set_of_entity)))
    set_index = set_of_entity[entity]
    log_odds = rng.normal(0, 1, sets)[set_index] + math.log(odds_ratio) * (views[entity] - 3)
    return rng.random(len(entity)) < 1 / (1 + np.exp(-log_odds)), views[entity], set_index


def statsmodels_slope(success, covariate, strata) -> float:
    """statsmodels' estimate, by its own Newton's method run to convergence (its default,
    BFGS, stops with the score still ~1e-4 from 0, about 1e-5 off the maximum)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # strata without both outcomes, dropped with a warning
        model = ConditionalLogit(success.astype(int), covariate[:, None], groups=strata)
        return float(model.fit(method="newton", tol=1e-12, maxiter=100, disp=False).params[0])


@pytest.mark.parametrize("seed", range(4))
def test_the_slope_is_statsmodels_conditional_logit(seed):
    """On random strata of 1-14 queries (some without both outcomes, some with one covariate
    value, many with more successes than failures, covariates tied within an entity)."""
    rng = np.random.default_rng(seed)
    success, views, set_index = amber_like(rng, 40, [0.5, 1.0, 2.0, 4.0][seed])
    views[set_index == 3] = 2.5  # one stratum without information
    assert conditional_logit_slope(success, views, set_index) == pytest.approx(
        statsmodels_slope(success, views, set_index), abs=1e-6
    )


def test_a_weighted_stratum_counts_as_that_many_copies_of_it():
    rng = np.random.default_rng(7)
    success, views, set_index = amber_like(rng, 40, 2.0)
    weights = rng.integers(0, 4, 40)  # as a bootstrap resample draws them, zeros included
    copies = [np.flatnonzero(set_index == s) for s in range(40) for _ in range(weights[s])]
    rows = np.concatenate(copies)
    copy_index = np.repeat(np.arange(len(copies)), [len(c) for c in copies])
    assert conditional_logit_slope(success, views, set_index, weights) == pytest.approx(
        statsmodels_slope(success[rows], views[rows], copy_index), abs=1e-6
    )


@pytest.mark.parametrize("sets", [12, 60, 300])
def test_the_resampled_slopes_are_exact_weighted_refits(sets):
    """Each resample's slope, interpolated on the grid (or refitted where its root is off
    it, or infinite where its sets are separated, frequent with 12 sets), is the exact fit on
    the resampled sets, drawn as every bootstrap draws them."""
    rng = np.random.default_rng(sets)
    success, views, set_index = amber_like(rng, sets, 1.5)
    settings = StatisticsSettings(seed=3, bootstrap_resamples=40)
    effect = within_set_effect(success, views, set_index, settings)
    weights = next(resampled_sets(sets, 40, seed=3))
    exact = [conditional_logit_slope(success, views, set_index, row) for row in weights]
    np.testing.assert_allclose(effect.resampled_slopes, exact, rtol=0, atol=1e-4)
    assert effect.informative_sets <= sets and effect.informative_queries <= len(set_index)


def test_separated_sets_give_an_odds_ratio_of_infinity_or_zero():
    """Every success the most popular entity of its set: no finite slope explains it."""
    views = np.array([1.0, 2.0, 3.0, 0.5, 4.0, 2.0, 2.0])
    set_index = np.array([0, 0, 0, 1, 1, 2, 2])
    success = np.array([0, 0, 1, 0, 1, 1, 0])  # set 2: one popularity, no information
    assert conditional_logit_slope(success, views, set_index) == math.inf
    assert conditional_logit_slope(1 - success, views, set_index) == -math.inf
    effect = within_set_effect(
        success, views, set_index, StatisticsSettings(bootstrap_resamples=50)
    )
    assert effect.odds_ratio == math.inf and effect.interval == (math.inf, math.inf)
    assert (effect.informative_sets, effect.informative_queries) == (2, 5)


def test_the_slope_is_refused_for_inputs_that_are_not_outcomes_covariates_and_codes():
    with pytest.raises(ValueError, match="0 or 1"):
        conditional_logit_slope([0, 2], [1.0, 2.0], [0, 0])
    with pytest.raises(ValueError, match="finite"):
        conditional_logit_slope([0, 1], [1.0, math.nan], [0, 0])
    with pytest.raises(ValueError, match="one of each"):
        conditional_logit_slope([0, 1], [1.0], [0, 0])


def test_known_odds_ratios_are_recovered_within_their_intervals():
    """Seeded simulation: 200 AmbER-like sets a trial, 150 trials per odds ratio. Each true
    odds ratio lies within the 95% interval in at least 90% of trials (no effect included:
    there the interval covers 1.0), and an odds ratio of 3 is told from 1 in 90% of them."""
    rng = np.random.default_rng(50)
    trials = 150
    for odds_ratio in (1.0, 1.5, 3.0):
        covered = told_from_one = 0
        for trial in range(trials):
            success, views, set_index = amber_like(rng, 200, odds_ratio)
            settings = StatisticsSettings(seed=trial, bootstrap_resamples=200)
            low, high = within_set_effect(success, views, set_index, settings).interval
            covered += low <= odds_ratio <= high
            told_from_one += not low <= 1.0 <= high
        assert covered >= 0.9 * trials, (odds_ratio, covered)
        if odds_ratio == 3.0:
            assert told_from_one >= 0.9 * trials, told_from_one


def scored_run(success, views, set_index, ranks=None, confused_with=None, name="run"):
    """What `popularity_effect` reads of a scored run (an `Evaluation`), made by hand: per
    query its success@1, its entity's log10 views, its set, its entity's popularity rank in
    the set and, for a confused query, the rank of the namesake it was confused with (None:
    not confused)."""
    count = len(views)
    ranks, confused_with = ranks or [None] * count, confused_with or [None] * count
    confused = np.array([0.0 if rank is None else 100.0 for rank in confused_with])
    scores = QueryScores(
        np.asarray(set_index),
        np.zeros(count, dtype=bool),
        {"entity_confusion": confused},
        [1],
        np.where(success, 0, 1),
    )
    table = pa.table(
        {
            "popularity_rank_in_set": pa.array(ranks, pa.int64()),
            "confused_with_popularity_rank_in_set": pa.array(confused_with, pa.int64()),
        }
    )
    return SimpleNamespace(
        name=name,
        per_query=scores,
        query_ids=[f"q{i}" for i in range(count)],
        queries=SimpleNamespace(popularity=np.asarray(views, dtype=float)),
        per_query_table=lambda: table,
        statistics=StatisticsSettings(),
    )


def test_the_preference_rate_is_the_share_of_confusions_with_a_more_popular_namesake():
    """Two sets of three entities, one query each (popularity ranks 1-3 within the set). Set
    0: rank 2 confused with rank 1 and rank 3 with rank 2 (more popular namesakes); set 1:
    rank 1 confused with rank 3 (less popular); the other queries right."""
    views = [4.0, 3.0, 2.0, 5.0, 1.0, 0.5]
    set_index = [0, 0, 0, 1, 1, 1]
    confused_with = [None, 1, 2, 3, None, None]
    success = [rank is None for rank in confused_with]
    run = scored_run(success, views, set_index, [1, 2, 3, 1, 2, 3], confused_with)
    effect = popularity_effect(run, StatisticsSettings(bootstrap_resamples=200))
    assert effect.confused_queries == 3
    assert effect.preference_rate == pytest.approx(2 / 3)
    low, high = effect.preference_interval  # a resample of the 2 sets: 1, 2/3 or 0
    assert 0 <= low <= 2 / 3 <= high <= 1 and low < high
    assert effect.record()["preference_rate"] == pytest.approx(2 / 3)
    slope = statsmodels_slope(np.array(success), np.array(views), np.array(set_index))
    assert effect.odds_ratio == pytest.approx(math.exp(slope))
    assert (effect.informative_sets, effect.informative_queries) == (2, 6)
    nobody = popularity_effect(scored_run([True] * 6, views, set_index))
    assert math.isnan(nobody.preference_rate) and nobody.confused_queries == 0
    assert all(math.isnan(bound) for bound in nobody.preference_interval)


def test_the_difference_between_two_runs_is_paired_on_the_same_resamples():
    """Run b: run a with a fifth of its outcomes flipped. B's odds ratio over a's, and its
    interval: the percentiles of the two runs' slope differences on the same resamples."""
    rng = np.random.default_rng(11)
    success_a, views, set_index = amber_like(rng, 80, 2.0)
    success_b = success_a ^ (rng.random(len(success_a)) < 0.2)
    settings = StatisticsSettings(seed=5, bootstrap_resamples=100)
    effects = [within_set_effect(s, views, set_index, settings) for s in (success_a, success_b)]
    difference = effect_difference(
        scored_run(success_a, views, set_index, name="a"),
        scored_run(success_b, views, set_index, name="b"),
        settings,
    )
    assert difference.a.odds_ratio == pytest.approx(effects[0].odds_ratio)
    assert difference.b.interval == pytest.approx(effects[1].interval)
    assert difference.odds_ratio_ratio == pytest.approx(
        effects[1].odds_ratio / effects[0].odds_ratio
    )
    log_ratios = effects[1].resampled_slopes - effects[0].resampled_slopes
    assert difference.odds_ratio_ratio_interval == pytest.approx(
        tuple(np.exp(np.percentile(log_ratios, [2.5, 97.5])))
    )
    record = difference.record()
    assert record["b"]["odds_ratio_per_10x_views"] == pytest.approx(effects[1].odds_ratio)
    assert math.isnan(record["preference_rate_difference"])  # neither run confused a query


def test_an_odds_ratio_from_too_few_sets_says_so_instead_of_a_figure():
    from namesake.amber.evaluation.popularity_effect import PopularityEffect
    from namesake.amber.evaluation.statistics import MIN_SETS

    def effect(sets: int) -> PopularityEffect:
        return PopularityEffect(1.84, (1.52, 2.21), sets, 4 * sets, 0.7, (0.6, 0.8), 10)

    few, enough = effect(MIN_SETS - 1), effect(MIN_SETS)
    assert few.odds_ratio_cell() == f"too few sets ({MIN_SETS - 1})"
    assert "1.84 [1.52, 2.21], from too few sets to say anything" in few.summary()
    assert enough.odds_ratio_cell() == "1.84 [1.52, 2.21]" and "too few" not in enough.summary()
    assert few.preference_cell() == "0.70 [0.60, 0.80] of 10"
