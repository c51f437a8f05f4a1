"""The standard IR measures on AmbER: trec_eval's semantics on a hand-made run and qrels (values
worked out by hand below), the same figures as ir-measures (trec_eval's own code) on random
runs, and as a second library (ranx)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from ranked_ids import rankings_run

from namesake.amber.evaluation.ir_metrics import (
    IR_MEASURES,
    NONE_ID,
    PageLists,
    cleaned_ranks,
    ranking_measures,
)

QRELS = {
    "q1": {"d1": 1, "d2": 1},  # two gold pages, found at ranks 2 and 4
    "q2": {"d5": 1},  # found at rank 11: outside every @10 cut-off, inside @20
    "q3": {"d9": 1},  # not retrieved
    "q4": {"g": 1},  # a KILT ranking with "None" and a repeat: gold at cleaned rank 2
    "q5": {"a": 1},  # found at rank 21: only recall@100 sees it
    "q6": {"z": 1},  # no prediction at all: an empty ranking
}
FILLER = [f"x{i}" for i in range(30)]
RANKINGS = [
    ["x0", "d1", "x1", "d2", *FILLER[2:8]],
    [*FILLER[:10], "d5", *FILLER[10:15]],
    FILLER[:12],
    ["None", "d7", "d7", "g", "x0"],
    [*FILLER[:20], "a"],
    [],
]


def measures(qrels: dict[str, dict[str, int]], rankings: list[list[str]]) -> dict:
    """`ranking_measures` of rankings aligned with the queries of ``qrels``."""
    run = rankings_run(list(qrels), rankings)
    return ranking_measures(run, PageLists.from_lists(qrels.values()))


def cleaned(ranking: list[str]) -> list[str]:
    """The reference cleaning, as the AmbER authors' script does it: "None" dropped, each page
    at its first rank."""
    return [page for page in dict.fromkeys(ranking) if page != NONE_ID]


def by_hand() -> dict[str, list[float]]:
    """trec_eval's definitions, query by query (binary relevance, linear-gain nDCG with
    log2(rank + 1) discounts, ideal ranking of all the query's relevant pages)."""
    ndcg_q1 = (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3))
    return {
        # q1: gold at 2 and 4; q4: gold at 2 once "None" and the repeat are gone
        "ndcg@10": [ndcg_q1, 0, 0, 1 / math.log2(3), 0, 0],
        "mrr@10": [1 / 2, 0, 0, 1 / 2, 0, 0],
        # R = number of gold pages: q1's first 2 hold one of its 2; q4's first 1 holds none
        "r-precision": [1 / 2, 0, 0, 0, 0, 0],
        "recall@20": [1, 1, 0, 1, 0, 0],
        "recall@100": [1, 1, 0, 1, 1, 0],
    }


def test_measures_follow_trec_eval_by_hand():
    found = measures(QRELS, RANKINGS)
    assert set(found) == set(IR_MEASURES)
    for name, expected in by_hand().items():
        np.testing.assert_allclose(found[name], 100 * np.array(expected), atol=1e-9, err_msg=name)


def random_case(rng: np.random.Generator, queries: int) -> tuple[dict, list[list[str]]]:
    """Qrels of 1-5 gold pages per query (a few with more than 10, where nDCG@10's ideal
    ranking is cut) and rankings of 0-160 pages from a small id space
    (so that pages repeat), with "None" ids, gold pages ranked anywhere (beyond 100 too) or not
    at all, and empty rankings."""
    qrels, rankings = {}, []
    for index in range(queries):
        gold_pages = rng.integers(1, 6) if rng.random() < 0.9 else rng.integers(11, 15)
        gold = [f"p{page}" for page in rng.choice(400, size=gold_pages, replace=False)]
        qrels[f"q{index}"] = dict.fromkeys(gold, 1)
        size = 0 if rng.random() < 0.1 else int(rng.integers(1, 161))
        ranking = [f"p{page}" for page in rng.integers(0, 400, size)]
        for position in rng.integers(0, size, size // 15) if size else []:
            ranking[position] = NONE_ID
        for page in gold:
            if size and rng.random() < 0.6:
                ranking[int(rng.integers(0, size))] = page
        rankings.append(ranking)
    return qrels, rankings


def ir_measures_values(qrels: dict, rankings: list[list[str]]) -> dict[str, np.ndarray]:
    """The reference: ir-measures (trec_eval's code) on the cleaned rankings, scores falling
    by rank; a query without a ranking scores 0."""
    import ir_measures

    run = {
        query_id: {page: float(-rank) for rank, page in enumerate(cleaned(ranking))}
        for query_id, ranking in zip(qrels, rankings, strict=True)
        if cleaned(ranking)
    }
    names = {ir_measures.parse_measure(spec): name for name, spec in IR_MEASURES.items()}
    position = {query_id: index for index, query_id in enumerate(qrels)}
    values = {name: np.zeros(len(qrels)) for name in IR_MEASURES}
    for result in ir_measures.iter_calc(list(names), qrels, run):
        values[names[result.measure]][position[result.query_id]] = 100.0 * result.value
    return values


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_measures_equal_ir_measures_on_random_runs(seed):
    qrels, rankings = random_case(np.random.default_rng(seed), queries=300)
    assert any(  # some gold page lies beyond the cut-off of recall@100
        set(cleaned(ranking)[100:]) & set(gold)
        for gold, ranking in zip(qrels.values(), rankings, strict=True)
    )
    found = measures(qrels, rankings)
    expected = ir_measures_values(qrels, rankings)
    for name in IR_MEASURES:
        assert expected[name].any(), name  # the case exercises every measure
        np.testing.assert_allclose(found[name], expected[name], rtol=0, atol=1e-9, err_msg=name)


def test_cleaned_ranks_are_the_ranks_in_the_cleaned_ranking():
    _, rankings = random_case(np.random.default_rng(5), queries=200)
    ranks = cleaned_ranks(rankings_run([f"q{i}" for i in range(len(rankings))], rankings))
    expected = []
    for ranking in rankings:
        rank_of = {page: rank for rank, page in enumerate(cleaned(ranking))}
        expected.extend(
            rank_of[page] if page != NONE_ID and ranking.index(page) == position else -1
            for position, page in enumerate(ranking)
        )
    assert (ranks == -1).any() and ranks.max() > 100
    np.testing.assert_array_equal(ranks, expected)


def test_gold_pages_are_text_and_count_once():
    """Gold ids given as numbers match the run's text ids, and a gold page listed twice is
    one relevant page, as in a qrels dictionary."""
    gold = PageLists.from_lists([[7, "7", 8]])
    assert gold.page_ids.to_pylist() == ["7", "8"] and gold.lengths.tolist() == [2]
    found = ranking_measures(rankings_run(["q"], [["7", "x"]]), gold)
    assert found["recall@20"][0] == pytest.approx(50.0)


def test_ranx_gives_the_same_figures():
    """ranx is an independent implementation (numba, not trec_eval's C code)."""
    from ranx import Qrels, Run, evaluate

    found = measures(QRELS, RANKINGS)
    run = {
        query_id: {doc: float(len(ranking) - rank) for rank, doc in enumerate(ranking)}
        for query_id, ranking in zip(QRELS, map(cleaned, RANKINGS), strict=True)
    }
    ranx_scores = evaluate(
        Qrels(QRELS),
        Run(run),
        list(IR_MEASURES),
        return_mean=False,
        make_comparable=True,
    )
    order = sorted(QRELS)  # ranx returns per-query values in sorted query-id order
    for name in IR_MEASURES:
        ours = dict(zip(QRELS, found[name], strict=True))
        np.testing.assert_allclose(
            [ours[q] for q in order], 100 * np.asarray(ranx_scores[name]), atol=1e-9, err_msg=name
        )


def test_the_run_order_wins_over_document_ids():
    """trec_eval breaks score ties by document id; the run's order is the one scored."""
    found = measures({"q": {"a": 1}}, [["z", "a"]])  # "z" sorts after "a"
    assert found["mrr@10"][0] == pytest.approx(50.0)


def test_rankings_must_match_the_queries():
    with pytest.raises(ValueError, match="2 queries' page lists, 1 rankings"):
        ranking_measures(rankings_run(["a"], [["d"]]), PageLists.from_lists([["d"], ["d"]]))
