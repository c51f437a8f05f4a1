"""Every measure of a run query by query, over its columns: accuracy@k and entity confusion
are the entity_confusion metric's own (`per_query_ranks`) on random rankings, the IR measures
are `ranking_measures`', and the judgments keep each query's set and head flag."""

from __future__ import annotations

import numpy as np
import pytest
from ranked_ids import rankings_run

from namesake.amber.evaluation.ir_metrics import IR_MEASURES, NONE_ID, ranking_measures
from namesake.amber.evaluation.query_scores import QueryJudgments, query_scores
from namesake.metrics import metric_module

K_VALUES = [1, 3, 20]


def random_references(rng: np.random.Generator, queries: int) -> list[dict]:
    """AmbER-like references: sets of 2-6 queries, 1-3 gold pages each, the other queries'
    gold pages as confusers (some of them also gold: entities sharing a page)."""
    references: list[dict] = []
    while len(references) < queries:
        set_id = f"set{len(references)}"
        entities = [
            [f"p{page}" for page in rng.integers(0, 60, rng.integers(1, 4))]
            for _ in range(rng.integers(2, 7))
        ]
        for index, gold in enumerate(entities):
            others = [page for other in entities if other is not gold for page in other]
            references.append(
                {"gold_ids": gold, "confuser_ids": others, "is_head": index == 0, "set_id": set_id}
            )
    return references[:queries]


def random_rankings(rng: np.random.Generator, references: list[dict]) -> list[list[str]]:
    """Rankings of 0-40 pages from the same small id space: gold pages and confusers ranked
    anywhere or not at all, repeats, "None" ids and empty rankings."""
    rankings = []
    for _ in references:
        size = 0 if rng.random() < 0.1 else int(rng.integers(1, 41))
        ranking = [f"p{page}" for page in rng.integers(0, 60, size)]
        for position in rng.integers(0, size, size // 8) if size else []:
            ranking[position] = NONE_ID
        rankings.append(ranking)
    return rankings


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_accuracy_and_confusion_are_the_metrics_own(seed):
    rng = np.random.default_rng(seed)
    references = random_references(rng, queries=400)
    rankings = random_rankings(rng, references)
    run = rankings_run([f"q{i}" for i in range(len(rankings))], rankings)
    judgments = QueryJudgments.from_references(references)
    scores = query_scores(run, judgments, K_VALUES)

    gold_rank, confused = metric_module("entity_confusion").per_query_ranks(
        rankings,
        [reference["gold_ids"] for reference in references],
        [reference["confuser_ids"] for reference in references],
    )
    assert confused.any() and (~confused).any() and (gold_rank == 0).any()
    for k in K_VALUES:
        np.testing.assert_array_equal(scores.values[f"accuracy@{k}"], 100.0 * (gold_rank < k))
    np.testing.assert_array_equal(scores.values["entity_confusion"], 100.0 * confused)
    expected = ranking_measures(run, judgments.gold)
    for name in IR_MEASURES:
        np.testing.assert_array_equal(scores.values[name], expected[name], err_msg=name)


def test_judgments_keep_sets_heads_and_pages():
    references = [
        {"gold_ids": ["1", "1"], "confuser_ids": ["2"], "is_head": True, "set_id": "b"},
        {"gold_ids": ["2"], "confuser_ids": ["1"], "is_head": False, "set_id": "b"},
        {"gold_ids": [], "confuser_ids": [], "is_head": True, "set_id": "a"},
    ]
    judgments = QueryJudgments.from_references(references)
    assert judgments.set_index.tolist() == [0, 0, 1]  # codes in the order sets first appear
    assert judgments.is_head.tolist() == [True, False, True]
    assert judgments.gold.lengths.tolist() == [1, 1, 0]
    assert judgments.confusers.page_ids.to_pylist() == ["2", "1"]
    scores = query_scores(rankings_run(["x", "y", "z"], [["2", "1"], [], ["1"]]), judgments, [1])
    assert scores.values["accuracy@1"].tolist() == [0.0, 0.0, 0.0]
    assert scores.values["entity_confusion"].tolist() == [100.0, 0.0, 0.0]
    assert scores.values["mrr@10"].tolist() == [50.0, 0.0, 0.0]
    assert scores.num_sets == 2


def test_a_run_of_other_queries_is_refused():
    judgments = QueryJudgments.from_references(
        [{"gold_ids": ["1"], "confuser_ids": [], "is_head": True, "set_id": "s"}]
    )
    with pytest.raises(ValueError, match="1 queries' page lists, 2 rankings"):
        query_scores(rankings_run(["a", "b"], [["1"], ["1"]]), judgments, [1])
