"""training/train_wes_bi_encoder.py on the tiny hand-made WES data and a tiny BERT: the loss,
the sentence-transformers folder and scorer.json, card and metrics, learning, resume from a
checkpoint, and two processes against one."""

import json
import math

import datasets
import numpy as np
import pytest
import torch
import training_runs as runs
from tiny_models import without_dropout
from wes_data import (
    CONFIG,
    HARD_CONFIG,
    SYNONYMS,
    assert_local_scorer_card_header,
    checked_test_metrics,
    train_args,
    wes_fixtures,
    wes_rows,
)

from namesake.wes.scoring.thresholds import roc_auc

# `trained`: a run on the *hardpairs config, whose extra column the script must ignore
script, tiny, trained = wes_fixtures("train_wes_bi_encoder", config=HARD_CONFIG)


def cosines(model_path, articles, texts) -> np.ndarray:
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(model_path), device="cpu")
    a = model.encode(list(articles), normalize_embeddings=True, convert_to_numpy=True)
    t = model.encode(list(texts), normalize_embeddings=True, convert_to_numpy=True)
    return (a * t).sum(1).astype(np.float64)


# --- the loss ---


def test_pair_masks_take_labelled_and_in_batch_negatives(script):
    # rows: (article 0, text 10, same), (article 0, text 11, same), (article 1, text 12, not),
    # (article 2, text 0 = article 0's own string, same)
    labels = torch.tensor([1, 1, 0, 1])
    articles = torch.tensor([0, 0, 1, 2])
    texts = torch.tensor([10, 11, 12, 0])
    positive, negative = script.pair_masks(labels, articles, texts)
    assert positive.tolist() == [
        [True, False, False, False],
        [False, True, False, False],
        [False, False, False, False],
        [False, False, False, True],
    ]
    assert negative.tolist() == [
        # article 0: texts 10, 11 are its own rows; 12 is in-batch; 0 is its own string
        [False, False, True, False],
        [False, False, True, False],
        # article 1: its labelled negative, and the other rows' link texts
        [True, True, True, True],
        # article 2: the other articles' link texts
        [True, True, True, False],
    ]
    # A link text that is a labelled positive of article 0 in another row is no negative of it.
    labels = torch.tensor([1, 1])
    positive, negative = script.pair_masks(labels, torch.tensor([0, 1]), torch.tensor([5, 5]))
    assert not negative.any()


def test_cosent_loss_is_the_pairwise_sum_and_deterministic(script):
    torch.manual_seed(0)
    a = torch.nn.functional.normalize(torch.randn(6, 8), dim=-1).requires_grad_()
    t = torch.nn.functional.normalize(torch.randn(6, 8), dim=-1)
    labels = torch.tensor([1, 0, 1, 0, 1, 1])
    articles, texts = torch.arange(6), torch.arange(10, 16)
    loss = script.cosent_loss(a, t, labels, articles, texts, scale=20.0)
    positive, negative = script.pair_masks(labels, articles, texts)
    c = (a @ t.T).detach()
    pairs = [
        (tuple(p), tuple(n))
        for p in positive.nonzero().tolist()
        for n in negative.nonzero().tolist()
    ]
    expected = math.log1p(sum(math.exp(20.0 * (c[n] - c[p]).item()) for p, n in pairs))
    assert loss.item() == pytest.approx(expected, rel=1e-5)
    assert script.cosent_loss(a, t, labels, articles, texts, 20.0).item() == loss.item()
    loss.backward()
    assert torch.isfinite(a.grad).all()
    # No positive pair: zero, still back-propagates.
    empty = script.cosent_loss(a, t, torch.zeros(6, dtype=torch.long), articles, texts, 20.0)
    assert empty.item() == 0.0 and empty.requires_grad


# --- outputs ---


def test_output_is_a_sentence_transformer_with_scorer_json(tiny, trained):
    from namesake.wes.scoring.answer_scorer import read_scorer_config

    out, metrics = trained
    names = {p.name for p in out.iterdir()}
    assert {
        "modules.json",
        "sentence_bert_config.json",
        "config.json",
        "model.safetensors",
        "tokenizer.json",
        "1_Pooling",
        "2_Normalize",
        "scorer.json",
        "metrics.json",
        "README.md",
    } <= names
    modules = [m["type"].rsplit(".", 1)[-1] for m in json.loads((out / "modules.json").read_text())]
    assert modules == ["Transformer", "Pooling", "Normalize"]
    pooling = json.loads((out / "1_Pooling" / "config.json").read_text())
    # sentence-transformers >= 6 writes "pooling_mode"; older versions one flag per mode.
    assert pooling.get("pooling_mode") == "mean" or pooling.get("pooling_mode_mean_tokens")
    # Written to a temporary sibling, then renamed: nothing left beside it but checkpoints.
    assert sorted(p.name for p in out.parent.iterdir()) == [out.name, f"{out.name}-checkpoints"]

    scorer = read_scorer_config(out)
    assert scorer["kind"] == "bi-encoder"
    assert -1 <= scorer["threshold"] <= 1
    assert scorer["threshold"] == pytest.approx(metrics["thresholds"]["bi_encoder"])
    assert scorer["threshold_chosen_on"].endswith(f"/{HARD_CONFIG}")
    assert scorer["threshold_chosen_on"].startswith("validation split of ")

    # SentenceTransformer(out) scores as training did: the same validation metrics, and the
    # threshold is the best one on its validation cosines.
    validation = datasets.load_dataset(str(tiny[0]), HARD_CONFIG)["validation"]
    scores = cosines(out, validation["article"], validation["link_text"])
    assert np.all((scores >= -1 - 1e-5) & (scores <= 1 + 1e-5))
    final = metrics["final_validation"]
    assert roc_auc(validation["is_same"], scores) == pytest.approx(final["roc_auc"])
    assert np.mean((scores >= scorer["threshold"]) == np.asarray(validation["is_same"])) == (
        pytest.approx(final["accuracy"])
    )


def test_metrics_json_reports_every_scorer(trained):
    metrics = checked_test_metrics(*trained)
    assert set(metrics["test"]) == {"bi_encoder", "zero_shot", "exact_match", "token_f1"}
    assert metrics["num_pairs"] == {"train": 28, "validation": 10, "test": 10}
    assert metrics["config"] == HARD_CONFIG and metrics["steps"] == 8
    assert [e["epoch"] for e in metrics["validation"]] == [1, 2]
    assert {"roc_auc", "accuracy", "threshold", "train_loss"} <= set(metrics["validation"][0])
    assert metrics["zero_shot_validation"]["threshold"] == metrics["thresholds"]["zero_shot"]
    assert metrics["test"]["zero_shot"]["threshold"] == metrics["thresholds"]["zero_shot"]
    assert metrics["test"]["exact_match"]["accuracy"] == 0.5


def test_model_card_has_model_index(trained):
    out, metrics = trained
    header, card = runs.read_card(out)
    assert_local_scorer_card_header(header)
    assert header["pipeline_tag"] == "sentence-similarity"
    (index,) = header["model-index"]
    assert index["name"] == "wes-bi-encoder"
    (result,) = index["results"]
    assert result["dataset"]["config"] == HARD_CONFIG and result["dataset"]["split"] == "test"
    values = {m["type"]: m["value"] for m in result["metrics"]}
    assert values == {
        k: pytest.approx(metrics["test"]["bi_encoder"][k], abs=1e-4)
        for k in ("accuracy", "f1", "roc_auc")
    }
    assert "| bi-encoder (this model) |" in card
    assert "| bi-encoder cosine, zero-shot (starting model) |" in card
    assert "| exact match (AmbER-normalised) |" in card
    assert f"cosine ≥ {metrics['thresholds']['bi_encoder']:.3f}" in card


def test_card_keeps_hub_ids(script, tmp_path):
    args = script.parse_args(["--dataset", "org/wes", "--output_dir", "y"])
    header = script.card_data(args, "org/model")
    assert header["base_model"] == "org/model" and header["datasets"] == ["org/wes"]
    assert script.card_data(args, str(tmp_path))["base_model"] is None  # a local folder


def test_validation_file_replaces_the_validation_split(tiny, script, tmp_path):
    """--validation_file (Parquet here, with a column the script ignores) is what each epoch
    is validated on and where the cosine threshold is chosen."""
    from namesake.wes.scoring.answer_scorer import read_scorer_config

    rows = [row | {"note": ""} for row in wes_rows(SYNONYMS[19:22])]
    held_out = tmp_path / "held_out.parquet"
    datasets.Dataset.from_list(rows).to_parquet(str(held_out))
    out = tmp_path / "out"
    extra = ["--validation_file", str(held_out), "--num_train_epochs", "1"]
    metrics = script.main(train_args(tiny, out, *extra, "--max_train_samples", "8"))
    assert metrics["num_pairs"]["validation"] == len(rows) == 6
    assert metrics["settings"]["validation_file"] == str(held_out)
    assert metrics["final_validation"]["threshold"] == metrics["thresholds"]["bi_encoder"]
    assert read_scorer_config(out)["threshold_chosen_on"] == str(held_out)


# --- training ---


def test_training_learns_the_training_pairs(tiny, script, tmp_path):
    """From the random tiny BERT, 6 epochs on 14 synonym pairs and their negatives raise the
    ROC-AUC of the saved model's cosine on the training pairs well above the start's."""
    out = tmp_path / "learn"
    script.main(train_args(tiny, out, "--num_train_epochs", "6", "--max_eval_samples", "4"))
    train = datasets.load_dataset(str(tiny[0]), CONFIG)["train"]
    before = roc_auc(train["is_same"], cosines(tiny[1], train["article"], train["link_text"]))
    after = roc_auc(train["is_same"], cosines(out, train["article"], train["link_text"]))
    assert after >= before + 0.2 and after >= 0.85, (before, after)


def test_resume_from_a_mid_training_checkpoint_matches(tiny, trained, script, tmp_path):
    """Resuming at step 4 of 8 (the end of epoch 1, saved before its validation) gives the
    uninterrupted run's steps, losses, validation and threshold.

    (A resume in mid epoch sees the same batches, but with dropout it trains on other noise:
    the skipping loader's iterator draws its seed from the restored RNG.)"""
    out, metrics = trained
    assert runs.checkpoint_steps(out) == [2, 4, 6, 8]
    resumed = script.main(
        train_args(tiny, tmp_path / "resumed", *runs.resume_arguments(out, 4), config=HARD_CONFIG)
    )
    assert resumed["steps"] == 8 and resumed["loss_steps"] == list(range(1, 9))
    assert resumed["losses"] == pytest.approx(metrics["losses"], rel=1e-4, abs=1e-5)
    assert resumed["learning_rates"] == pytest.approx(metrics["learning_rates"])
    assert [e["epoch"] for e in resumed["validation"]] == [1, 2]
    # The zero-shot scores are those of the starting model, not of the checkpoint.
    assert resumed["zero_shot_validation"] == pytest.approx(metrics["zero_shot_validation"])
    assert resumed["thresholds"]["bi_encoder"] == pytest.approx(
        metrics["thresholds"]["bi_encoder"], abs=1e-4
    )
    for name in ("roc_auc", "accuracy"):
        assert resumed["test"]["bi_encoder"][name] == pytest.approx(
            metrics["test"]["bi_encoder"][name]
        )


def test_two_processes_match_one(tiny, script, tmp_path):
    """2 processes × batch 4 against 1 process × batch 8, dropout off, 24 pairs (3 global
    batches an epoch): the same optimizer steps and learning rates, and since the loss is over
    the gathered global batch, the same losses and the same trained model, up to float noise."""
    model = without_dropout(tiny[1], tmp_path / "no-dropout")
    extra = ["--num_warmup_steps", "2", "--max_train_samples", "24"]
    two, one = runs.two_processes_and_one(
        script, lambda out, *more: train_args(tiny, out, *extra, *more, model=model), tmp_path
    )
    runs.assert_same_training(two, one, steps=6, warmup=2, peak=1e-3)
    assert two["thresholds"]["bi_encoder"] == pytest.approx(
        one["thresholds"]["bi_encoder"], abs=1e-3
    )
    for scorer in ("bi_encoder", "zero_shot"):
        for name in ("roc_auc", "accuracy"):
            assert two["test"][scorer][name] == pytest.approx(one["test"][scorer][name])


# --- arguments ---


def test_arguments_add_the_data_and_loss_options(script, monkeypatch):
    """Beside the shared options (test_training_scripts.py checks those in every script)."""
    options = runs.script_options(script, monkeypatch)
    assert {"--dataset", "--config", "--max_length", "--scale", "--max_train_samples"} <= set(
        options
    )


def test_bad_arguments_are_refused(script):
    with pytest.raises(SystemExit):
        script.parse_args(["--dataset", "x", "--output_dir", "y", "--push_to_hub"])
    with pytest.raises(SystemExit):
        script.parse_args(["--dataset", "x", "--output_dir", "y", "--scale", "0"])
