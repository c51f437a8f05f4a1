"""The `entity_confusion` evaluate module: hand-computed cases, parity, validation."""

import math
import random
from pathlib import Path

import evaluate
import numpy as np
import pytest

from namesake.metrics import metric_module

MODULE_DIR = Path(__file__).parent.parent / "metrics" / "entity_confusion"


@pytest.fixture(scope="module")
def metric():
    return evaluate.load(str(MODULE_DIR))


@pytest.fixture(scope="module")
def bare_compute():
    """The module's plain function, without evaluate's machinery (`metric_module`)."""
    return metric_module("entity_confusion").compute_entity_confusion


def ref(gold, confusers, is_head, set_id):
    return {"gold_ids": gold, "confuser_ids": confusers, "is_head": is_head, "set_id": set_id}


def same(a, b):
    """Equal dicts, NaN equal to NaN, floats compared exactly."""
    assert a.keys() == b.keys()
    for key in a:
        if isinstance(a[key], float) and math.isnan(a[key]):
            assert isinstance(b[key], float) and math.isnan(b[key]), key
        else:
            assert a[key] == b[key], (key, a[key], b[key])
            assert type(a[key]) is type(b[key]), key
    return True


# Two sets mixing head and tail queries.
#   q0 head s1: gold a1 at rank 0, confusers after it            -> right at 1, not confused
#   q1 tail s1: gold b1 at rank 1, confuser a1 at rank 0         -> right at 2, confused
#   q2 head s2: gold z at rank 2, confuser w not retrieved       -> right at 3, not confused
#   q3 tail s2: gold not retrieved, confuser x at rank 0         -> never right, confused
#   q4 tail s2: empty ranking                                    -> never right, not confused
BASIC_PREDICTIONS = [["a1", "b1", "c1"], ["a1", "b1"], ["x", "y", "z"], ["x", "y"], []]
BASIC_REFERENCES = [
    ref(["a1"], ["b1", "c1"], True, "s1"),
    ref(["b1"], ["a1"], False, "s1"),
    ref(["z"], ["w"], True, "s2"),
    ref(["v"], ["x"], False, "s2"),
    ref(["v2"], ["u"], False, "s2"),
]
BASIC_EXPECTED = {
    "accuracy@1": 20.0,
    "accuracy@1_head": 50.0,
    "accuracy@1_tail": 0.0,
    "all_correct@1": 0.0,
    "accuracy@2": 40.0,
    "accuracy@2_head": 50.0,
    "accuracy@2_tail": 100 / 3,
    "all_correct@2": 50.0,
    "accuracy@3": 60.0,
    "accuracy@3_head": 100.0,
    "accuracy@3_tail": 100 / 3,
    "all_correct@3": 50.0,
    "entity_confusion": 40.0,
    "entity_confusion_head": 0.0,
    "entity_confusion_tail": 200 / 3,
    "num_queries": 5,
    "num_sets": 2,
}


def test_hand_computed_every_key(metric):
    result = metric.compute(
        predictions=BASIC_PREDICTIONS, references=BASIC_REFERENCES, k_values=[1, 2, 3]
    )
    assert list(result) == list(BASIC_EXPECTED)
    assert same(result, BASIC_EXPECTED)
    assert result["accuracy@2_tail"] == 33.333333333333336
    assert result["entity_confusion_tail"] == 66.66666666666667


def test_default_k_values_and_key_names(metric):
    result = metric.compute(predictions=BASIC_PREDICTIONS, references=BASIC_REFERENCES)
    assert list(result) == [
        "accuracy@1",
        "accuracy@1_head",
        "accuracy@1_tail",
        "all_correct@1",
        "accuracy@20",
        "accuracy@20_head",
        "accuracy@20_tail",
        "all_correct@20",
        "entity_confusion",
        "entity_confusion_head",
        "entity_confusion_tail",
        "num_queries",
        "num_sets",
    ]
    # k = 20 is larger than every ranking: whatever was retrieved counts.
    assert result["accuracy@20"] == 60.0
    assert result["accuracy@20_head"] == 100.0
    assert result["accuracy@20_tail"] == 100 / 3
    assert result["all_correct@20"] == 50.0
    assert isinstance(result["num_queries"], int) and isinstance(result["num_sets"], int)


def test_evaluate_arrow_path_and_bare_function_agree(metric, bare_compute):
    fast = metric.compute(
        predictions=BASIC_PREDICTIONS, references=BASIC_REFERENCES, k_values=[1, 2, 3]
    )
    # add_batch + compute() goes through evaluate's Arrow cache (the standard path).
    metric.add_batch(predictions=BASIC_PREDICTIONS[:2], references=BASIC_REFERENCES[:2])
    metric.add_batch(predictions=BASIC_PREDICTIONS[2:], references=BASIC_REFERENCES[2:])
    arrow = metric.compute(k_values=[1, 2, 3])
    bare = bare_compute(BASIC_PREDICTIONS, BASIC_REFERENCES, k_values=[1, 2, 3])
    assert same(fast, BASIC_EXPECTED)
    assert same(arrow, BASIC_EXPECTED)
    assert same(bare, BASIC_EXPECTED)


def test_duplicates_and_none_are_removed_before_ranking(metric):
    predictions = [
        # cleaned: a, b, g -> gold at rank 2 (raw position 6); confuser b above it
        ["None", "a", "a", "None", "b", "a", "g"],
        # cleaned: x, g2 -> gold at rank 1 (raw position 3)
        ["x", "x", "x", "g2"],
        # only "None": an empty ranking
        ["None", "None"],
    ]
    references = [
        ref(["g"], ["b"], True, "s1"),
        ref(["g2"], [], False, "s1"),
        ref(["g3"], ["c"], False, "s2"),
    ]
    result = metric.compute(predictions=predictions, references=references, k_values=[1, 2, 3])
    assert result["accuracy@1"] == 0.0
    assert result["accuracy@2"] == 100 / 3  # only the second query
    assert result["accuracy@2_head"] == 0.0
    assert result["accuracy@2_tail"] == 50.0
    assert result["accuracy@3"] == 200 / 3  # the first query's gold is third once cleaned
    assert result["accuracy@3_head"] == 100.0
    assert result["all_correct@2"] == 0.0
    assert result["all_correct@3"] == 50.0  # s1 right, s2 never retrieved
    assert result["entity_confusion"] == 100 / 3
    assert result["entity_confusion_head"] == 100.0
    assert result["entity_confusion_tail"] == 0.0


def test_none_is_never_a_gold_id(metric):
    # The published script drops "None" from the gold pages as well.
    result = metric.compute(
        predictions=[["None", "p"]], references=[ref(["None"], [], True, "s")], k_values=[2]
    )
    assert result["accuracy@2"] == 0.0


def test_several_gold_ids_best_one_counts(metric):
    predictions = [["c", "g2", "g1"], ["g1", "c", "g2"], ["c", "d", "e", "g2"]]
    references = [
        ref(["g1", "g2"], ["c"], True, "s"),
        ref(["g1", "g2"], ["c"], False, "s"),
        ref(["g1", "g2"], ["e", "d"], False, "t"),
    ]
    result = metric.compute(predictions=predictions, references=references, k_values=[1, 2])
    assert result["accuracy@1"] == 100 / 3
    assert result["accuracy@1_head"] == 0.0
    assert result["accuracy@1_tail"] == 50.0
    assert result["accuracy@2"] == 200 / 3
    assert result["all_correct@2"] == 50.0
    # first: c above g2; second: g1 first; third: d above g2
    assert result["entity_confusion"] == 200 / 3
    assert result["entity_confusion_head"] == 100.0
    assert result["entity_confusion_tail"] == 50.0


def test_confusion_is_on_the_whole_ranking(metric):
    # Gold at rank 50, confuser at rank 30: confused although neither is in the top 20.
    ranking = [f"d{i}" for i in range(60)]
    references = [ref(["d50"], ["d30", "absent"], True, "s"), ref(["d10"], ["d30"], True, "s")]
    result = metric.compute(predictions=[ranking, ranking], references=references)
    assert result["accuracy@20"] == 50.0
    assert result["entity_confusion"] == 50.0


def test_gold_not_retrieved_and_confuser_absent(metric):
    predictions = [["a", "b"], ["a", "b"], ["a", "b"], ["g"]]
    references = [
        ref(["g"], ["b"], True, "s"),  # gold missing, confuser retrieved -> confused
        ref(["g"], ["c"], True, "s"),  # both missing -> not confused
        ref(["b"], ["c"], True, "s"),  # confuser missing -> not confused
        ref(["g"], [], True, "s"),  # no confusers at all -> not confused
    ]
    result = metric.compute(predictions=predictions, references=references, k_values=[5])
    assert result["entity_confusion"] == 25.0
    assert result["accuracy@5"] == 50.0
    assert result["all_correct@5"] == 0.0


def test_gold_id_listed_as_confuser_counts_as_gold(metric):
    result = metric.compute(
        predictions=[["g", "c"], ["c", "g"]],
        references=[ref(["g"], ["g", "c"], True, "s"), ref(["g"], ["g", "c"], False, "s")],
        k_values=[1],
    )
    assert result["entity_confusion_head"] == 0.0
    assert result["entity_confusion_tail"] == 100.0


def test_empty_subsets_are_nan(metric):
    result = metric.compute(
        predictions=[["a"], ["b"]],
        references=[ref(["a"], ["b"], True, "s"), ref(["a"], [], True, "t")],
        k_values=[1],
    )
    assert result["accuracy@1"] == 50.0
    assert result["accuracy@1_head"] == 50.0
    assert math.isnan(result["accuracy@1_tail"])
    assert math.isnan(result["entity_confusion_tail"])
    assert result["entity_confusion_head"] == 0.0
    assert result["all_correct@1"] == 50.0
    assert result["num_sets"] == 2


def test_no_queries_gives_nan_scores(bare_compute):
    result = bare_compute([], [], k_values=[1])
    assert result["num_queries"] == 0 and result["num_sets"] == 0
    for key in ("accuracy@1", "accuracy@1_head", "all_correct@1", "entity_confusion"):
        assert math.isnan(result[key]), key


def test_sets_are_counted_by_id_not_by_adjacency(metric):
    # Queries of one set need not be contiguous.
    predictions = [["a"], ["x"], ["b"], ["y"]]
    references = [
        ref(["a"], [], True, "s1"),
        ref(["x"], [], True, "s2"),
        ref(["c"], [], False, "s1"),
        ref(["y"], [], False, "s2"),
    ]
    result = metric.compute(predictions=predictions, references=references, k_values=[1])
    assert result["num_sets"] == 2
    assert result["all_correct@1"] == 50.0


# --- parity with a straightforward implementation of the published definitions -------------


def published_clean(ids):
    """Drop "None", then keep the first occurrence of each id."""
    cleaned = []
    for page in ids:
        if page != "None" and page not in cleaned:
            cleaned.append(page)
    return cleaned


def reference_scores(predictions, references, k_values):
    def percent(values):
        return 100 * sum(values) / len(values) if values else float("nan")

    out = {}
    for k in k_values:
        scores = []
        for pred, r in zip(predictions, references, strict=True):
            gold = published_clean(r["gold_ids"])
            retrieved = published_clean(pred)[:k]
            scores.append(int(len(set(gold).intersection(retrieved)) > 0))
        out[f"accuracy@{k}"] = percent(scores)
        out[f"accuracy@{k}_head"] = percent(
            [s for s, r in zip(scores, references, strict=True) if r["is_head"]]
        )
        out[f"accuracy@{k}_tail"] = percent(
            [s for s, r in zip(scores, references, strict=True) if not r["is_head"]]
        )
        by_set = {}
        for s, r in zip(scores, references, strict=True):
            by_set.setdefault(r["set_id"], []).append(s)
        out[f"all_correct@{k}"] = percent([int(len(v) == sum(v)) for v in by_set.values()])
    confused = []
    for pred, r in zip(predictions, references, strict=True):
        ranking = published_clean(pred)
        gold = [g for g in published_clean(r["gold_ids"])]
        confusers = [c for c in r["confuser_ids"] if c not in gold]
        gold_rank = min((ranking.index(g) for g in gold if g in ranking), default=math.inf)
        conf_rank = min((ranking.index(c) for c in confusers if c in ranking), default=math.inf)
        confused.append(int(conf_rank < gold_rank))
    out["entity_confusion"] = percent(confused)
    out["entity_confusion_head"] = percent(
        [c for c, r in zip(confused, references, strict=True) if r["is_head"]]
    )
    out["entity_confusion_tail"] = percent(
        [c for c, r in zip(confused, references, strict=True) if not r["is_head"]]
    )
    out["num_queries"] = len(predictions)
    out["num_sets"] = len({r["set_id"] for r in references})
    return out


def random_case(rng, n_queries):
    pages = [f"p{i}" for i in range(40)] + ["None"]
    predictions, references = [], []
    set_number = 0
    while len(predictions) < n_queries:
        entities = rng.randint(2, 4)
        entity_pages = [rng.sample(pages[:-1], rng.randint(1, 3)) for _ in range(entities)]
        head = rng.randrange(entities)
        for e in range(entities):
            gold = list(entity_pages[e])
            others = {p for o in range(entities) if o != e for p in entity_pages[o]}
            confusers = sorted(others - set(gold))
            for _ in range(rng.randint(1, 3)):
                length = rng.choice([0, 1, 3, 10, 25, 60])
                # Small vocabulary: repeats, "None" and hits are frequent.
                ranking = [rng.choice(pages) for _ in range(length)]
                if rng.random() < 0.5:  # a retriever that often finds the gold page early
                    ranking.insert(rng.randrange(min(length, 4) + 1), rng.choice(gold))
                predictions.append(ranking)
                references.append(ref(gold, confusers, e == head, f"set{set_number}"))
        set_number += 1
    order = list(range(len(predictions)))
    rng.shuffle(order)
    return [predictions[i] for i in order], [references[i] for i in order]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_parity_with_published_definitions(metric, bare_compute, seed):
    rng = random.Random(seed)
    predictions, references = random_case(rng, 300)
    k_values = [1, 2, 5, 20, 100]
    expected = reference_scores(predictions, references, k_values)
    result = metric.compute(predictions=predictions, references=references, k_values=k_values)
    assert same(result, expected)
    assert same(bare_compute(predictions, references, k_values), expected)
    # The case is not degenerate: scores strictly between 0 and 100.
    assert 0 < expected["accuracy@1"] < expected["accuracy@20"] < 100
    assert 0 < expected["entity_confusion"] < 100
    assert 0 < expected["all_correct@5"] < expected["all_correct@100"] < 100


def test_parity_through_evaluate_arrow_path(metric):
    rng = random.Random(7)
    predictions, references = random_case(rng, 200)
    expected = reference_scores(predictions, references, [1, 3, 20])
    for start in range(0, len(predictions), 64):
        metric.add_batch(
            predictions=predictions[start : start + 64], references=references[start : start + 64]
        )
    assert same(metric.compute(k_values=[1, 3, 20]), expected)


def test_reference_implementation_detects_a_wrong_score():
    # Guard that the parity comparison can fail: an off-by-one in k changes the scores.
    rng = random.Random(3)
    predictions, references = random_case(rng, 300)
    right = reference_scores(predictions, references, [2])
    shifted = reference_scores(predictions, references, [3])
    assert right["accuracy@2"] != shifted["accuracy@3"]


# --- validation -----------------------------------------------------------------------------


def test_lengths_differ(metric):
    with pytest.raises(ValueError, match="differ in length: 2 predictions, 1 references"):
        metric.compute(predictions=[["a"], ["b"]], references=[ref(["a"], [], True, "s")])


@pytest.mark.parametrize("k_values", [[0], [1, -3], []])
def test_k_not_positive(metric, k_values):
    with pytest.raises(ValueError, match="k_values"):
        metric.compute(
            predictions=[["a"]], references=[ref(["a"], [], True, "s")], k_values=k_values
        )


@pytest.mark.parametrize("k_values", [["1"], [1.5], "20", [True]])
def test_k_not_integer(metric, k_values):
    with pytest.raises(TypeError, match="k_values"):
        metric.compute(
            predictions=[["a"]], references=[ref(["a"], [], True, "s")], k_values=k_values
        )


@pytest.mark.parametrize("key", ["gold_ids", "confuser_ids", "is_head", "set_id"])
def test_missing_reference_key(metric, key):
    bad = ref(["a"], [], True, "s")
    del bad[key]
    with pytest.raises(ValueError, match=rf"references\[1\] lacks '{key}'"):
        metric.compute(predictions=[["a"], ["a"]], references=[ref(["a"], [], True, "s"), bad])


def test_missing_reference_key_in_add_batch(metric):
    bad = ref(["a"], [], True, "s")
    del bad["set_id"]
    with pytest.raises(ValueError, match=r"references\[0\] lacks 'set_id'"):
        metric.add_batch(predictions=[["a"]], references=[bad])
    # Nothing was added: the module still computes on fresh inputs.
    result = metric.compute(predictions=[["a"]], references=[ref(["a"], [], True, "s")])
    assert result["num_queries"] == 1


@pytest.mark.parametrize(
    ("predictions", "references", "message"),
    [
        ([["a"]], ["a"], r"references\[0\] must be a dict"),
        (["abc"], [ref(["a"], [], True, "s")], r"predictions\[0\] must be a list"),
        ([[1, 2]], [ref(["a"], [], True, "s")], "predictions must hold strings"),
        ([["a"]], [ref("a", [], True, "s")], r"references\[0\]\['gold_ids'\] must be a list"),
        ([["a"]], [ref(["a"], [3], True, "s")], "confuser_ids must hold strings"),
        ([["a"]], [ref(["a"], [], "yes", "s")], r"references\[0\]\['is_head'\] must be a bool"),
    ],
)
def test_wrong_types(metric, predictions, references, message):
    with pytest.raises(TypeError, match=message):
        metric.compute(predictions=predictions, references=references)


@pytest.mark.parametrize("is_head", [1, 0, np.int64(1), 1.0, "yes", "True", [True]])
def test_is_head_must_be_a_bool(metric, bare_compute, is_head):
    """The card promises a TypeError for a non-bool is_head: 1 and 0 included."""
    references = [ref(["a"], [], True, "s"), ref(["b"], [], is_head, "s")]
    message = r"^references\[1\]\['is_head'\] must be a bool \(True or False\), got "
    with pytest.raises(TypeError, match=message):
        metric.compute(predictions=[["a"], ["b"]], references=references)
    with pytest.raises(TypeError, match=message):
        bare_compute([["a"], ["b"]], references)
    with pytest.raises(TypeError, match=message):
        metric.add_batch(predictions=[["a"], ["b"]], references=references)
    numpy_bools = [ref(["a"], [], np.bool_(True), "s")] * 2  # bools all the same
    result = metric.compute(predictions=[["a"], ["b"]], references=numpy_bools)
    assert result["accuracy@1_head"] == 50.0


RANKINGS = r"must be a list of rankings \(lists of document ids\), one per query, got"


@pytest.mark.parametrize(
    ("predictions", "references", "message"),
    [
        (None, [ref(["a"], [], True, "s")], rf"^predictions {RANKINGS} None$"),
        ([["a"]], None, r"^references must be a list of dicts, one per query, got None$"),
        ("a", [ref(["a"], [], True, "s")], rf"^predictions {RANKINGS} str$"),
        ([["a"]], ref(["a"], [], True, "s"), r"^references must be a list of dicts, .* got dict$"),
        (3, [ref(["a"], [], True, "s")], rf"^predictions {RANKINGS} int$"),
    ],
)
def test_arguments_that_are_not_lists_are_named(
    metric, bare_compute, predictions, references, message
):
    with pytest.raises(TypeError, match=message):
        metric.compute(predictions=predictions, references=references)
    with pytest.raises(TypeError, match=message):
        bare_compute(predictions, references)
    with pytest.raises(TypeError, match=message):
        metric.add_batch(predictions=predictions, references=references)


def test_missing_arguments_with_nothing_added_name_the_argument():
    fresh = evaluate.load(str(MODULE_DIR))
    with pytest.raises(TypeError, match=rf"^predictions {RANKINGS} None$"):
        fresh.compute()
    with pytest.raises(TypeError, match=rf"^predictions {RANKINGS} None$"):
        fresh.compute(references=[ref(["a"], [], True, "s")])
    # the refused calls added nothing: the next batch is the only one
    fresh.add_batch(predictions=[["a"]], references=[ref(["a"], [], True, "s")])
    assert fresh.compute()["num_queries"] == 1
