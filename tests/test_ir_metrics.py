"""The standard IR measures on AmbER: trec_eval's semantics on a hand-made run and qrels (values
worked out by hand below), and the same figures from a second library (ranx)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from namesake.amber.evaluation.ir_metrics import IR_MEASURES, clean_ranking, per_query_ir_measures

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
    found = per_query_ir_measures(QRELS, RANKINGS)
    assert set(found) == set(IR_MEASURES)
    for name, expected in by_hand().items():
        np.testing.assert_allclose(found[name], 100 * np.array(expected), atol=1e-9, err_msg=name)


def test_ranx_gives_the_same_figures():
    """ranx is an independent implementation (numba, not trec_eval's C code)."""
    from ranx import Qrels, Run, evaluate

    found = per_query_ir_measures(QRELS, RANKINGS)
    run = {
        query_id: {doc: float(len(ranking) - rank) for rank, doc in enumerate(ranking)}
        for query_id, ranking in zip(QRELS, map(clean_ranking, RANKINGS), strict=True)
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
    """trec_eval breaks score ties by document id; the ranking is handed over with falling
    scores, so the run's order is the one scored."""
    qrels = {"q": {"a": 1}}
    found = per_query_ir_measures(qrels, [["z", "a"]])  # "z" sorts after "a"
    assert found["mrr@10"][0] == pytest.approx(50.0)


def test_rankings_must_match_the_queries():
    with pytest.raises(ValueError, match="2 queries in the qrels, 1 rankings"):
        per_query_ir_measures({"a": {"d": 1}, "b": {"d": 1}}, [["d"]])
