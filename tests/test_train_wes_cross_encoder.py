"""training/train_wes_cross_encoder.py on a tiny hand-made WES pairs dataset and a tiny BERT:
outputs, card, metrics, resume from a checkpoint, and the schedule under two processes."""

import json
import math

import datasets
import numpy as np
import pytest
import training_runs as runs
from wes_data import (
    CONFIG,
    SYNONYMS,
    assert_local_scorer_card_header,
    checked_test_metrics,
    make_wes_folder,
    train_args,
    wes_fixtures,
    wes_rows,
)

script, tiny, trained = wes_fixtures("train_wes_cross_encoder")


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
    saved = {"config.json", "model.safetensors", "tokenizer.json", "README.md", "metrics.json"}
    assert saved <= {p.name for p in out.iterdir()}
    # Written to a temporary sibling, then renamed: nothing left beside it but checkpoints.
    assert sorted(p.name for p in out.parent.iterdir()) == [out.name, f"{out.name}-checkpoints"]


def test_scorer_json_carries_the_validation_threshold(tiny, trained, script):
    """scorer.json: kind "cross-encoder" and the sigmoid threshold with the best accuracy on
    the validation split, as the saved model scores it."""
    from sentence_transformers import CrossEncoder

    from namesake.wes.scoring.answer_scorer import read_scorer_config

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
    from namesake.wes.scoring.answer_scorer import read_scorer_config

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
    metrics = checked_test_metrics(*trained)
    assert set(metrics["test"]) == {"cross_encoder", "exact_match", "token_f1", "bi_encoder"}
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
    header, card = runs.read_card(out)
    assert_local_scorer_card_header(header)
    assert header["pipeline_tag"] == "text-classification"
    assert "| cross-encoder (this model) |" in card
    assert "| bi-encoder cosine, zero-shot |" in card
    assert CONFIG in card


def test_card_keeps_hub_ids(script, tmp_path):
    args = script.parse_args(["--dataset", "org/wes", "--output_dir", "y"])
    header = script.card_data(args, "org/model")
    assert header["base_model"] == "org/model" and header["datasets"] == ["org/wes"]
    assert script.card_data(args, str(tmp_path))["base_model"] is None  # a local folder


def test_resume_from_a_mid_training_checkpoint_matches(tiny, trained, script, tmp_path):
    """Resuming at step 4 of 8 (mid epoch 2) gives the uninterrupted run's steps and losses."""
    out, metrics = trained
    assert runs.checkpoint_steps(out) == [2, 4, 6, 8]
    assert metrics["steps"] == 8  # 28 pairs, batch 8: 4 steps an epoch, 2 epochs
    # --with_tracking: no tracker installed here, so the code path runs and logs nowhere
    resume = [*runs.resume_arguments(out, 4), "--with_tracking"]
    resumed = script.main(train_args(tiny, tmp_path / "resumed", *resume))
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
    two, one = runs.two_processes_and_one(
        script, lambda out, *more: train_args(tiny, out, "--num_warmup_steps", "2", *more), tmp_path
    )
    runs.assert_same_schedule(two, one, steps=8, warmup=2, peak=1e-3)


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
