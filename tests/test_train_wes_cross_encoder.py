"""training/train_wes_cross_encoder.py on a tiny hand-made WES pairs dataset and a tiny BERT:
outputs, card, metrics, resume from a checkpoint, and the schedule under two processes."""

import json
import math
from pathlib import Path

import datasets
import numpy as np
import pytest
import yaml
from conftest import load_script
from tiny_models import accelerate_launch, assert_linear_schedule, save_tiny_bert

ROOT = Path(__file__).parent.parent
SCRIPT = ROOT / "training" / "train_wes_cross_encoder.py"
CONFIG = "2018thresh5pairs"

SYNONYMS = [
    ("New York City", "NYC"),
    ("New York City", "New York"),
    ("United States", "USA"),
    ("United States", "America"),
    ("United Kingdom", "UK"),
    ("United Kingdom", "Britain"),
    ("John F. Kennedy", "JFK"),
    ("John F. Kennedy", "Kennedy"),
    ("The Beatles", "Beatles"),
    ("The Beatles", "the Fab Four"),
    ("Albert Einstein", "Einstein"),
    ("Los Angeles", "LA"),
    ("Los Angeles", "L.A."),
    ("World War II", "WWII"),
    ("World War II", "Second World War"),
    ("European Union", "EU"),
    ("Federal Bureau of Investigation", "FBI"),
    ("Massachusetts Institute of Technology", "MIT"),
    ("William Shakespeare", "Shakespeare"),
    ("Apple Inc.", "Apple"),
    ("International Business Machines", "IBM"),
    ("Barack Obama", "Obama"),
    ("National Aeronautics and Space Administration", "NASA"),
    ("Leonardo da Vinci", "da Vinci"),
]


def wes_rows(pairs):
    """Positives plus one negative per positive: the link text of the next article."""
    rows = [{"article": a, "link_text": t, "is_same": 1} for a, t in pairs]
    articles = list(dict.fromkeys(a for a, _ in pairs))
    for a, _ in pairs:
        other = articles[(articles.index(a) + 1) % len(articles)]
        text = next(t for b, t in pairs if b == other)
        rows.append({"article": a, "link_text": text, "is_same": 0})
    return rows


def make_wes_folder(root: Path) -> Path:
    """A Hub-style dataset folder: <config>/<split>-*.parquet, configs in the card's header."""
    splits = {"train": SYNONYMS[:14], "validation": SYNONYMS[14:19], "test": SYNONYMS[19:]}
    features = datasets.Features(
        {
            "article": datasets.Value("string"),
            "link_text": datasets.Value("string"),
            "is_same": datasets.Value("int64"),
        }
    )
    for split, pairs in splits.items():
        path = root / CONFIG / f"{split}-00000-of-00001.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        datasets.Dataset.from_list(wes_rows(pairs), features=features).to_parquet(str(path))
    header = {
        "configs": [
            {
                "config_name": CONFIG,
                "data_files": [{"split": s, "path": f"{CONFIG}/{s}-*.parquet"} for s in splits],
            }
        ]
    }
    (root / "README.md").write_text("---\n" + yaml.safe_dump(header) + "---\n# tiny WES\n")
    return root


@pytest.fixture(scope="module")
def script():
    return load_script("train_wes_cross_encoder")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """The tiny WES folder and the tiny BERT."""
    tmp = tmp_path_factory.mktemp("wes_train")
    return make_wes_folder(tmp / "wes"), save_tiny_bert(tmp / "tiny-bert")


def train_args(tiny, out, *extra):
    data, model = tiny
    return [
        "--dataset", str(data),
        "--config", CONFIG,
        "--model_name_or_path", str(model),
        "--output_dir", str(out),
        "--num_train_epochs", "2",
        "--per_device_train_batch_size", "8",
        "--learning_rate", "1e-3",
        "--max_length", "24",
        "--seed", "0",
        *extra,
    ]  # fmt: skip


@pytest.fixture(scope="module")
def trained(tiny, tmp_path_factory, script):
    """One tiny training run, checkpointed every 2 steps: (output folder, returned metrics)."""
    out = tmp_path_factory.mktemp("wes_out") / "out" / "wes-cross-encoder"
    metrics = script.main(train_args(tiny, out, "--checkpointing_steps", "2"))
    return out, metrics


def test_tiny_dataset_loads_like_a_wes_config(tmp_path):
    data = datasets.load_dataset(str(make_wes_folder(tmp_path)), CONFIG)
    assert set(data) == {"train", "validation", "test"}
    assert data["train"].column_names == ["article", "link_text", "is_same"]
    assert sum(data["test"]["is_same"]) * 2 == len(data["test"])


def test_checkpoint_loads_as_cross_encoder_and_predicts(trained):
    from sentence_transformers import CrossEncoder

    out, _ = trained
    model = CrossEncoder(str(out))
    assert model.num_labels == 1
    scores = model.predict([("New York City", "NYC"), ("New York City", "Banana")])
    assert scores.shape == (2,)
    assert np.all((scores > 0) & (scores < 1))  # sigmoid probabilities


def test_output_folder_has_checkpoint_card_and_metrics_only(trained):
    out, _ = trained
    names = {p.name for p in out.iterdir()}
    assert {
        "config.json",
        "model.safetensors",
        "tokenizer.json",
        "README.md",
        "metrics.json",
    } <= names
    # Written to a temporary sibling, then renamed: nothing left beside it but checkpoints.
    assert sorted(p.name for p in out.parent.iterdir()) == [out.name, f"{out.name}-checkpoints"]


def test_scorer_json_carries_the_validation_threshold(tiny, trained, script):
    """scorer.json: kind "cross-encoder" and the sigmoid threshold with the best accuracy on
    the validation split, as the saved model scores it."""
    from sentence_transformers import CrossEncoder

    from namesake.wes.answer_scorer import read_scorer_config

    out, metrics = trained
    scorer = read_scorer_config(out)
    assert scorer["kind"] == "cross-encoder"
    assert 0 <= scorer["threshold"] <= 1
    assert scorer["threshold"] == pytest.approx(metrics["thresholds"]["scorer"])
    assert scorer["threshold_chosen_on"].startswith("validation split of ")
    validation = datasets.load_dataset(str(tiny[0]), CONFIG)["validation"]
    probabilities = CrossEncoder(str(out)).predict(
        list(zip(validation["article"], validation["link_text"], strict=True))
    )
    chosen = script.best_threshold(validation["is_same"], probabilities)
    assert scorer["threshold"] == pytest.approx(chosen, abs=1e-4)


def test_validation_file_replaces_the_validation_split(tiny, script, tmp_path):
    """--validation_file (JSON lines here) is what each epoch is validated on and where the
    scorer's threshold is chosen."""
    from namesake.wes.answer_scorer import read_scorer_config

    rows = wes_rows(SYNONYMS[19:22])
    held_out = tmp_path / "held_out.jsonl"
    held_out.write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = tmp_path / "out"
    extra = ["--validation_file", str(held_out), "--num_train_epochs", "1"]
    metrics = script.main(train_args(tiny, out, *extra, "--max_train_samples", "8"))
    assert metrics["num_pairs"]["validation"] == len(rows) == 6
    assert metrics["settings"]["validation_file"] == str(held_out)
    assert len(metrics["validation"]) == 1
    assert read_scorer_config(out)["threshold_chosen_on"] == str(held_out)


def test_metrics_json_reports_every_scorer(trained):
    out, returned = trained
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["test"] == json.loads(json.dumps(returned["test"]))
    assert set(metrics["test"]) == {"cross_encoder", "exact_match", "token_f1", "bi_encoder"}
    for scorer, m in metrics["test"].items():
        assert set(m) == {"accuracy", "f1", "roc_auc", "threshold"}, scorer
        assert 0 <= m["accuracy"] <= 1 and 0 <= m["f1"] <= 1 and 0 <= m["roc_auc"] <= 1
    assert metrics["num_pairs"] == {"train": 28, "validation": 10, "test": 10}
    assert [e["epoch"] for e in metrics["validation"]] == [1, 2]
    # Test pairs: 5 synonyms that never match exactly, so EM says "not same" everywhere.
    assert metrics["test"]["exact_match"]["accuracy"] == 0.5
    assert metrics["test"]["exact_match"]["f1"] == 0.0
    assert metrics["thresholds"]["token_f1"] == 0.5
    # The zero-shot bi-encoder separates these well-known synonyms from random names.
    assert metrics["test"]["bi_encoder"]["roc_auc"] >= 0.8


def test_model_card_is_filled(trained):
    out, _ = trained
    card = (out / "README.md").read_text()
    assert "{{" not in card
    header = yaml.safe_load(card.split("---")[1])
    assert header["library_name"] == "sentence-transformers"
    assert header["pipeline_tag"] == "text-classification"
    assert header["license"] == "apache-2.0"
    assert header["metrics"] == ["accuracy", "f1", "roc_auc"]
    # Local base model and dataset: no Hub ids to claim in the header.
    assert "base_model" not in header and "datasets" not in header
    assert "| cross-encoder (this model) |" in card
    assert "| bi-encoder cosine, zero-shot |" in card
    assert CONFIG in card


def test_card_keeps_hub_ids(script):
    args = script.parse_args(
        ["--dataset", "org/wes", "--output_dir", "y", "--model_name_or_path", "org/model"]
    )
    header = script.card_data(args, "org/model")
    assert header["base_model"] == "org/model" and header["datasets"] == ["org/wes"]
    default = script.card_data(script.parse_args(["--dataset", "x", "--output_dir", "y"]), "")
    from namesake.bundled_models import MINILM_HUB_ID

    assert default["base_model"] == MINILM_HUB_ID


def test_resume_from_a_mid_training_checkpoint_matches(tiny, trained, script, tmp_path):
    """Resuming at step 4 of 8 (mid epoch 2) gives the uninterrupted run's steps and losses."""
    out, metrics = trained
    checkpoints = out.parent / f"{out.name}-checkpoints"
    assert sorted(p.name for p in checkpoints.iterdir()) == [f"step_{n}" for n in (2, 4, 6, 8)]
    assert metrics["steps"] == 8  # 28 pairs, batch 8: 4 steps an epoch, 2 epochs
    resumed = script.main(
        train_args(
            tiny,
            tmp_path / "resumed",
            "--checkpoint_dir",
            str(checkpoints),
            "--resume_from_checkpoint",
            str(checkpoints / "step_4"),
            "--with_tracking",  # no tracker installed here: the code path runs, logs nowhere
        )
    )
    assert resumed["steps"] == 8 and resumed["loss_steps"] == list(range(1, 9))
    assert resumed["losses"] == pytest.approx(metrics["losses"], rel=1e-4, abs=1e-5)
    assert resumed["learning_rates"] == pytest.approx(metrics["learning_rates"])
    assert [e["epoch"] for e in resumed["validation"]] == [1, 2]
    assert resumed["validation"][-1]["accuracy"] == pytest.approx(
        metrics["validation"][-1]["accuracy"]
    )


def test_two_processes_schedule_and_steps_match_one(tiny, script, tmp_path):
    """2 processes × batch 4 and 1 process × batch 8: the same global batch, so the same
    optimizer steps and the same learning rate at each; warm-up, peak, 0 at the last step."""
    out = tmp_path / "two"
    accelerate_launch(
        SCRIPT,
        train_args(tiny, out, "--per_device_train_batch_size", "4", "--num_warmup_steps", "2"),
    )
    two = json.loads((out / "metrics.json").read_text())
    one = script.main(train_args(tiny, tmp_path / "one", "--num_warmup_steps", "2"))
    assert two["num_processes"] == 2 and one["num_processes"] == 1
    assert two["steps"] == one["steps"] == 8
    assert_linear_schedule(two["learning_rates"], 1e-3, warmup=2, steps=8)
    assert two["learning_rates"] == pytest.approx(one["learning_rates"])


def test_metric_helpers(script):
    labels = [1, 1, 0, 0]
    assert script.roc_auc(labels, [0.9, 0.8, 0.1, 0.2]) == 1.0
    assert script.roc_auc(labels, [0.5, 0.5, 0.5, 0.5]) == 0.5
    assert math.isnan(script.roc_auc([1, 1], [0.1, 0.2]))
    m = script.binary_metrics(labels, [0.9, 0.4, 0.6, 0.1], 0.5)
    assert m["accuracy"] == 0.5 and m["f1"] == 0.5
    assert 0.1 < script.best_threshold(labels, [0.9, 0.8, 0.1, 0.2]) < 0.8


def test_roc_auc_matches_sklearn(script):
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, 200)
    scores = np.round(rng.random(200), 1)  # many ties
    assert script.roc_auc(labels, scores) == pytest.approx(metrics.roc_auc_score(labels, scores))


def test_push_to_hub_needs_an_id(script):
    with pytest.raises(SystemExit):
        script.parse_args(["--dataset", "x", "--output_dir", "y", "--push_to_hub"])
