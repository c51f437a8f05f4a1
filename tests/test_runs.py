"""`namesake.runs.Run`, the columnar run every evaluation stage passes on: built from
rankings, it gives them back; selecting, cutting and coding pages keep each query's order."""

from __future__ import annotations

import math

import numpy as np
import pytest

from namesake.runs import Run, shared_vocabulary

RANKINGS = [
    ("q1", [("10", 3.0), ("7", 2.5), ("12", 1.0)]),
    ("q2", []),
    ("q3", [("7", None), ("99", None)]),
]


def test_rankings_come_back_as_given():
    run = Run.from_rankings(RANKINGS, name="bm25", provenance={"tag": "bm25"})
    assert list(run.rankings()) == RANKINGS
    assert len(run) == 3 and run.lengths.tolist() == [3, 0, 2]
    assert run.query_index().tolist() == [0, 0, 0, 2, 2]
    assert run.ranks().tolist() == [0, 1, 2, 0, 1]
    assert not run.has_scores() and run.first_stage_scores is None
    assert run.name == "bm25" and run.provenance == {"tag": "bm25"}


def test_first_stage_scores_are_kept_beside_the_scores():
    run = Run.from_rankings([("q", [("a", 2.0, 0.5), ("b", 1.0, 0.7)])])
    assert run.ranking(0) == [("a", 2.0, 0.5), ("b", 1.0, 0.7)]


def test_select_orders_and_fills_missing_queries_with_empty_rankings():
    run = Run.from_rankings(RANKINGS).select(["q3", "q0", "q1"])
    assert list(run.rankings()) == [RANKINGS[2], ("q0", []), RANKINGS[0]]


def test_top_cuts_every_ranking():
    run = Run.from_rankings(RANKINGS).top(1)
    assert [ranking for _, ranking in run.rankings()] == [[("10", 3.0)], [], [("7", None)]]


def test_codes_of_a_shared_vocabulary_follow_the_ids_order():
    a = Run.from_rankings(RANKINGS)
    b = Run.from_rankings([("q1", [("5", 1.0), ("10", 0.5)])])
    vocabulary = shared_vocabulary(a.page_ids, b.page_ids)
    assert vocabulary.to_pylist() == sorted({"10", "7", "12", "99", "5"})
    codes = a.page_codes(vocabulary)
    assert [vocabulary[int(c)].as_py() for c in codes] == a.page_ids.to_pylist()
    assert b.page_codes(shared_vocabulary(b.page_ids)).tolist() == [1, 0]
    assert a.page_codes(b.page_ids).tolist() == [1, -1, -1, -1, -1]


def test_inconsistent_columns_are_refused():
    with pytest.raises(ValueError, match="do not describe one run"):
        Run(np.array(["q"], dtype=object), np.array([0, 2]), ["a"], np.array([1.0]))
    assert math.isnan(Run.from_rankings([("q", [("a", None)])]).scores[0])
