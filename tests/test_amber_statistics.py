"""Confidence intervals over AmbER sets and the paired test clustered by set: the figures they
resample add up to the metric's, they agree with scipy's procedures, and a small seeded
simulation shows the test finds a true difference and holds its level when there is none."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats

from namesake.amber.evaluation.query_scores import QueryScores, SetSums, set_sums
from namesake.amber.evaluation.statistics import (
    bootstrap_intervals,
    difference,
    holm,
    paired_randomization_test,
    per_query_randomization_test,
)
from namesake.metrics import metric_module

IR = ("ndcg@10", "mrr@10", "r-precision", "recall@20", "recall@100")


def scores_of(correct: np.ndarray, set_index: np.ndarray, is_head: np.ndarray) -> QueryScores:
    """Per-query scores where every measure is the same 0/100 outcome (enough for the sums)."""
    values = {"accuracy@1": 100.0 * correct, "entity_confusion": 100.0 * ~correct}
    values.update({name: 100.0 * correct for name in IR})
    return QueryScores(set_index, is_head, values, [1])


def simulated(rng, sets: int, per_set: int, effect: float, set_spread: float = 1.5):
    """Two systems on `sets` sets of `per_set` queries; a set's difficulty moves both, and B's
    log-odds of a hit are A's plus `effect`."""
    set_index = np.repeat(np.arange(sets), per_set)
    is_head = np.tile(np.arange(per_set) == 0, sets)
    difficulty = rng.normal(0, set_spread, sets)[set_index]
    base = 1 / (1 + np.exp(-difficulty))
    lifted = 1 / (1 + np.exp(-(difficulty + effect)))
    a = rng.random(set_index.size) < base
    b = rng.random(set_index.size) < lifted
    return scores_of(a, set_index, is_head), scores_of(b, set_index, is_head)


def test_set_sums_add_up_to_the_metric():
    """The per-set numerators and denominators give back the entity_confusion metric's own
    figures: the intervals are intervals of the numbers the report prints."""
    module = metric_module("entity_confusion")
    rng = np.random.default_rng(3)
    set_index = np.repeat(np.arange(12), 3)
    is_head = np.tile([True, False, False], 12)
    rankings = [
        list(rng.permutation(["g", "c", "x", "y"])[: rng.integers(0, 4)]) for _ in set_index
    ]
    references = [
        {"gold_ids": ["g"], "confuser_ids": ["c"], "is_head": bool(h), "set_id": f"s{s}"}
        for s, h in zip(set_index, is_head, strict=True)
    ]
    expected = module.compute_entity_confusion(rankings, references, k_values=[1, 2])
    gold_rank, confused = module.per_query_ranks(
        rankings, [["g"]] * len(rankings), [["c"]] * len(rankings)
    )
    values = {f"accuracy@{k}": 100.0 * (gold_rank < k) for k in (1, 2)}
    values["entity_confusion"] = 100.0 * confused
    values.update({name: np.zeros(len(rankings)) for name in IR})
    figures = set_sums(QueryScores(set_index, is_head, values, [1, 2])).figures()
    for name, value in expected.items():
        if name.startswith(("accuracy", "all_correct", "entity_confusion")):
            assert figures[name] == pytest.approx(value), name
    assert figures["head_tail_gap@1"] == pytest.approx(
        expected["accuracy@1_head"] - expected["accuracy@1_tail"]
    )


def test_bootstrap_interval_agrees_with_scipy():
    """Resampling sets: our vectorised percentile interval and scipy.stats.bootstrap's, on
    the same per-set data (a figure that is a plain mean over sets, all_correct@1, and one
    that is a ratio, accuracy@1), agree within Monte Carlo error."""
    rng = np.random.default_rng(0)
    scores, _ = simulated(rng, sets=80, per_set=4, effect=0.0)
    sums = set_sums(scores)
    ours = bootstrap_intervals(sums, resamples=4000, seed=1)
    column = {name: i for i, name in enumerate(sums.names)}

    def ratio(name):
        numerators = sums.numerators[:, column[name]]
        denominators = sums.denominators[:, column[name]]
        return scipy.stats.bootstrap(
            (numerators, denominators),
            lambda n, d, axis: n.sum(axis=axis) / d.sum(axis=axis),
            paired=True,
            vectorized=True,
            n_resamples=4000,
            method="percentile",
            random_state=2,
        ).confidence_interval

    for name in ("all_correct@1", "accuracy@1", "accuracy@1_tail"):
        theirs = ratio(name)
        width = theirs.high - theirs.low
        assert width > 5  # a real interval, not a degenerate one
        assert ours[name][0] == pytest.approx(theirs.low, abs=0.1 * width), name
        assert ours[name][1] == pytest.approx(theirs.high, abs=0.1 * width), name


def test_interval_of_a_figure_without_queries_is_nan():
    scores = scores_of(np.array([True, False]), np.array([0, 1]), np.array([True, True]))
    intervals = bootstrap_intervals(set_sums(scores), resamples=50)
    assert all(math.isnan(bound) for bound in intervals["accuracy@1_tail"])
    assert not math.isnan(intervals["accuracy@1_head"][0])


def scipy_p_value(sums_a, sums_b, name: str, **options) -> float:
    """scipy's paired permutation test of one figure: each set's share of B - A, swapped
    between the runs ("samples" permutations of paired data)."""
    i = sums_a.names.index(name)
    total = sums_a.denominators[:, i].sum()
    return scipy.stats.permutation_test(
        (sums_b.numerators[:, i] / total, sums_a.numerators[:, i] / total),
        lambda x, y, axis: (x - y).sum(axis=axis),
        permutation_type="samples",
        vectorized=True,
        **options,
    ).pvalue


def test_exact_test_equals_scipy_permutation_test():
    """With 10 sets every sign pattern is enumerated, by us and by scipy: same p-values."""
    rng = np.random.default_rng(5)
    a, b = simulated(rng, sets=10, per_set=3, effect=1.0)
    sums_a, sums_b = set_sums(a), set_sums(b)
    ours = paired_randomization_test(sums_a, sums_b, resamples=10_000)
    for name in ("accuracy@1", "accuracy@1_head", "ndcg@10", "all_correct@1"):
        theirs = scipy_p_value(sums_a, sums_b, name, n_resamples=10_000)
        assert ours[name] == pytest.approx(theirs), name


def test_sampled_test_agrees_with_scipy():
    rng = np.random.default_rng(6)
    a, b = simulated(rng, sets=40, per_set=3, effect=0.6)
    sums_a, sums_b = set_sums(a), set_sums(b)
    ours = paired_randomization_test(sums_a, sums_b, resamples=20_000, seed=3)
    theirs = scipy_p_value(sums_a, sums_b, "accuracy@1", n_resamples=20_000, random_state=4)
    assert 0.001 < theirs < 0.5
    assert ours["accuracy@1"] == pytest.approx(theirs, abs=0.01 + 0.1 * theirs)


def scipy_per_query_p_value(a: np.ndarray, b: np.ndarray, **options) -> float:
    """scipy's paired permutation test of a mean difference: each query's pair swapped."""
    return scipy.stats.permutation_test(
        (b, a),
        lambda x, y, axis: (x - y).mean(axis=axis),
        permutation_type="samples",
        vectorized=True,
        **options,
    ).pvalue


def test_per_query_test_equals_scipy_exactly_on_few_queries_and_within_error_on_many():
    """Queries as units: every swap pattern of 10 queries enumerated, by us and by scipy, gives
    the same p-value; on 300 queries the sampled p-values agree within Monte Carlo error."""
    rng = np.random.default_rng(8)
    few_a, few_b = rng.random(10), rng.random(10) + 0.3
    ours = per_query_randomization_test({"ndcg@10": few_a}, {"ndcg@10": few_b})
    assert ours["ndcg@10"] == pytest.approx(scipy_per_query_p_value(few_a, few_b))
    many_a = 100.0 * (rng.random(300) < 0.5)
    many_b = 100.0 * (rng.random(300) < 0.58)
    ours = per_query_randomization_test(
        {"recall@20": many_a}, {"recall@20": many_b}, resamples=20_000, seed=1
    )
    theirs = scipy_per_query_p_value(many_a, many_b, n_resamples=20_000, rng=2)
    assert 0.001 < theirs < 0.5
    assert ours["recall@20"] == pytest.approx(theirs, abs=0.01 + 0.1 * theirs)


def test_per_query_test_gives_the_same_p_values_for_the_same_seed():
    """Seeded: a rerun of a comparison reports the same p-values (ranx's numba test, used
    before, drew from per-thread generators and did not), and another seed moves them only
    by Monte Carlo error."""
    rng = np.random.default_rng(9)
    a = {name: 100.0 * (rng.random(2_000) < 0.4) for name in IR}
    b = {name: 100.0 * (rng.random(2_000) < 0.43) for name in IR}
    first = per_query_randomization_test(a, b, resamples=2_000, seed=0)
    assert per_query_randomization_test(a, b, resamples=2_000, seed=0) == first
    other = per_query_randomization_test(a, b, resamples=2_000, seed=1)
    assert other != first
    for name in IR:
        assert other[name] == pytest.approx(first[name], abs=0.03)


def test_per_query_test_refuses_runs_on_other_queries():
    with pytest.raises(ValueError, match="same queries"):
        per_query_randomization_test({"ndcg@10": np.zeros(3)}, {"ndcg@10": np.zeros(4)})
    with pytest.raises(ValueError, match="same queries"):
        per_query_randomization_test({"ndcg@10": np.zeros(3)}, {"mrr@10": np.zeros(3)})


def test_simulation_finds_a_true_difference_and_holds_its_level():
    """Seeded: 60 sets of 4 queries. B better by 1.2 log-odds: found in nearly every trial.
    No difference: rejected at about the 5% level, not more."""
    rng = np.random.default_rng(2026)
    trials = 60

    def rejections(effect: float) -> float:
        found = 0
        for _ in range(trials):
            a, b = simulated(rng, sets=60, per_set=4, effect=effect)
            p = paired_randomization_test(set_sums(a), set_sums(b), resamples=1000)
            found += p["accuracy@1"] < 0.05
        return found / trials

    assert rejections(1.2) >= 0.9
    assert rejections(0.0) <= 0.12


def test_clustering_keeps_the_level_where_sets_move_together():
    """Where B beats A on some sets and loses on others (no difference overall), a test that
    treats queries as independent rejects far too often; flipping whole sets does not."""
    rng = np.random.default_rng(7)
    trials, per_set, sets = 60, 10, 30
    clustered = per_query = 0
    set_index = np.repeat(np.arange(sets), per_set)
    is_head = np.tile(np.arange(per_set) == 0, sets)
    for _ in range(trials):
        swing = rng.normal(0, 2.0, sets)[set_index]  # B's advantage, set by set, mean 0
        a = rng.random(set_index.size) < 0.5
        b = rng.random(set_index.size) < 1 / (1 + np.exp(-swing))
        sums_a, sums_b = (
            set_sums(scores_of(a, set_index, is_head)),
            set_sums(scores_of(b, set_index, is_head)),
        )
        clustered += paired_randomization_test(sums_a, sums_b, resamples=1000)["accuracy@1"] < 0.05
        per_query += scipy.stats.ttest_rel(b.astype(float), a.astype(float)).pvalue < 0.05
    assert clustered / trials <= 0.12
    assert per_query / trials > 2 * max(clustered / trials, 0.05)


def test_difference_sums_give_the_difference_of_figures():
    rng = np.random.default_rng(8)
    a, b = simulated(rng, sets=20, per_set=3, effect=0.5)
    sums_a, sums_b = set_sums(a), set_sums(b)
    delta = difference(sums_a, sums_b).figures()
    for name, value in sums_b.figures().items():
        assert delta[name] == pytest.approx(value - sums_a.figures()[name]), name


def test_runs_on_other_queries_are_refused():
    rng = np.random.default_rng(9)
    a, _ = simulated(rng, sets=5, per_set=2, effect=0)
    b, _ = simulated(rng, sets=6, per_set=2, effect=0)
    with pytest.raises(ValueError, match="same queries"):
        paired_randomization_test(set_sums(a), set_sums(b))


def test_holm_by_hand():
    """p = .01, .04, .03, .20 (m = 4): sorted .01, .03, .04, .20 -> 4(.01) = .04, 3(.03) = .09,
    max(.09, 2(.04)) = .09, max(.09, .20) = .20; NaN stays out of the family."""
    adjusted = holm({"a": 0.01, "b": 0.04, "c": 0.03, "d": 0.20, "e": math.nan})
    assert adjusted["a"] == pytest.approx(0.04)
    assert adjusted["c"] == pytest.approx(0.09)
    assert adjusted["b"] == pytest.approx(0.09)
    assert adjusted["d"] == pytest.approx(0.20)
    assert math.isnan(adjusted["e"])


def test_gap_figures_follow_their_parts():
    sums = SetSums(
        ["h", "t"],
        np.array([[100.0, 0.0], [0.0, 100.0]]),
        np.array([[1.0, 1.0], [1.0, 1.0]]),
        {"gap": ("h", "t")},
    )
    assert sums.figures()["gap"] == pytest.approx(0.0)
    assert sums.figures(np.array([2.0, 0.0]))["gap"] == pytest.approx(100.0)
