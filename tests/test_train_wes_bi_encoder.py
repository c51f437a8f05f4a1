"""training/train_wes_bi_encoder.py on the tiny hand-made WES data and a tiny BERT: the loss,
the sentence-transformers folder and scorer.json, card and metrics, learning, resume from a
checkpoint, and two processes against one."""

import argparse
import json
import math
from pathlib import Path

import datasets
import numpy as np
import pytest
import torch
import yaml
from conftest import load_script
from test_train_wes_cross_encoder import CONFIG, SYNONYMS, wes_rows
from test_training_scripts import SHARED_OPTIONS
from tiny_models import accelerate_launch, assert_linear_schedule, save_tiny_bert, without_dropout

ROOT = Path(__file__).parent.parent
SCRIPT = ROOT / "training" / "train_wes_bi_encoder.py"
HARD_CONFIG = CONFIG.replace("pairs", "hardpairs")


def make_wes_folder(root: Path) -> Path:
    """The cross-encoder tests' tiny WES folder, plus a *hardpairs config: the same rows with
    an extra `negative_kind` column, which the script must ignore."""
    splits = {"train": SYNONYMS[:14], "validation": SYNONYMS[14:19], "test": SYNONYMS[19:]}
    configs = []
    for config in (CONFIG, HARD_CONFIG):
        for split, pairs in splits.items():
            rows = wes_rows(pairs)
            if config == HARD_CONFIG:
                rows = [r | {"negative_kind": "" if r["is_same"] else "random"} for r in rows]
            path = root / config / f"{split}-00000-of-00001.parquet"
            path.parent.mkdir(parents=True, exist_ok=True)
            datasets.Dataset.from_list(rows).to_parquet(str(path))
        configs.append(
            {
                "config_name": config,
                "data_files": [{"split": s, "path": f"{config}/{s}-*.parquet"} for s in splits],
            }
        )
    header = yaml.safe_dump({"configs": configs})
    (root / "README.md").write_text("---\n" + header + "---\n# tiny WES\n")
    return root


@pytest.fixture(scope="module")
def script():
    return load_script("train_wes_bi_encoder")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """The tiny WES folder and the tiny BERT (a bare encoder, as a bi-encoder starts from)."""
    tmp = tmp_path_factory.mktemp("wes_bi")
    return make_wes_folder(tmp / "wes"), save_tiny_bert(tmp / "tiny-bert")


def train_args(tiny, out, *extra, config=CONFIG, model=None):
    data, tiny_model = tiny
    return [
        "--dataset", str(data),
        "--config", config,
        "--model_name_or_path", str(model or tiny_model),
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
    """One tiny run on the *hardpairs config (extra column), checkpointed every 2 steps:
    (output folder, returned metrics)."""
    out = tmp_path_factory.mktemp("wes_bi_out") / "out" / "wes-bi-encoder"
    metrics = script.main(train_args(tiny, out, "--checkpointing_steps", "2", config=HARD_CONFIG))
    return out, metrics


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
    from namesake.wes.answer_scorer import read_scorer_config

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
    assert load_script("train_wes_cross_encoder").roc_auc(
        validation["is_same"], scores
    ) == pytest.approx(final["roc_auc"])
    assert np.mean((scores >= scorer["threshold"]) == np.asarray(validation["is_same"])) == (
        pytest.approx(final["accuracy"])
    )


def test_metrics_json_reports_every_scorer(trained):
    out, returned = trained
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["test"] == json.loads(json.dumps(returned["test"]))
    assert set(metrics["test"]) == {"bi_encoder", "zero_shot", "exact_match", "token_f1"}
    for scorer, m in metrics["test"].items():
        assert set(m) == {"accuracy", "f1", "roc_auc", "threshold"}, scorer
        assert 0 <= m["accuracy"] <= 1 and 0 <= m["f1"] <= 1 and 0 <= m["roc_auc"] <= 1
    assert metrics["num_pairs"] == {"train": 28, "validation": 10, "test": 10}
    assert metrics["config"] == HARD_CONFIG and metrics["steps"] == 8
    assert [e["epoch"] for e in metrics["validation"]] == [1, 2]
    assert {"roc_auc", "accuracy", "threshold", "train_loss"} <= set(metrics["validation"][0])
    assert metrics["zero_shot_validation"]["threshold"] == metrics["thresholds"]["zero_shot"]
    assert metrics["test"]["zero_shot"]["threshold"] == metrics["thresholds"]["zero_shot"]
    assert metrics["test"]["exact_match"]["accuracy"] == 0.5


def test_model_card_has_model_index(trained):
    out, metrics = trained
    card = (out / "README.md").read_text()
    assert "{{" not in card
    header = yaml.safe_load(card.split("---")[1])
    assert header["library_name"] == "sentence-transformers"
    assert header["pipeline_tag"] == "sentence-similarity"
    assert header["metrics"] == ["accuracy", "f1", "roc_auc"]
    assert "base_model" not in header and "datasets" not in header  # local paths
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


def test_card_keeps_hub_ids(script):
    args = script.parse_args(
        ["--dataset", "org/wes", "--output_dir", "y", "--model_name_or_path", "org/model"]
    )
    header = script.card_data(args, "org/model")
    assert header["base_model"] == "org/model" and header["datasets"] == ["org/wes"]
    default = script.card_data(script.parse_args(["--dataset", "x", "--output_dir", "y"]), "")
    from namesake.bundled_models import MINILM_HUB_ID

    assert default["base_model"] == MINILM_HUB_ID


def test_validation_file_replaces_the_validation_split(tiny, script, tmp_path):
    """--validation_file (Parquet here, with a column the script ignores) is what each epoch
    is validated on and where the cosine threshold is chosen."""
    from namesake.wes.answer_scorer import read_scorer_config

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
    roc_auc = load_script("train_wes_cross_encoder").roc_auc
    before = roc_auc(train["is_same"], cosines(tiny[1], train["article"], train["link_text"]))
    after = roc_auc(train["is_same"], cosines(out, train["article"], train["link_text"]))
    assert after >= before + 0.2 and after >= 0.85, (before, after)


def test_resume_from_a_mid_training_checkpoint_matches(tiny, trained, script, tmp_path):
    """Resuming at step 4 of 8 (the end of epoch 1, saved before its validation) gives the
    uninterrupted run's steps, losses, validation and threshold.

    (A resume in mid epoch sees the same batches, but with dropout it trains on other noise:
    the skipping loader's iterator draws its seed from the restored RNG.)"""
    out, metrics = trained
    checkpoints = out.parent / f"{out.name}-checkpoints"
    assert sorted(p.name for p in checkpoints.iterdir()) == [f"step_{n}" for n in (2, 4, 6, 8)]
    resumed = script.main(
        train_args(
            tiny,
            tmp_path / "resumed",
            "--checkpoint_dir",
            str(checkpoints),
            "--resume_from_checkpoint",
            str(checkpoints / "step_4"),
            config=HARD_CONFIG,
        )
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
    out = tmp_path / "two"
    accelerate_launch(
        SCRIPT,
        train_args(tiny, out, "--per_device_train_batch_size", "4", *extra, model=model),
    )
    two = json.loads((out / "metrics.json").read_text())
    one = script.main(train_args(tiny, tmp_path / "one", *extra, model=model))
    assert two["num_processes"] == 2 and one["num_processes"] == 1
    assert two["steps"] == one["steps"] == 6
    assert_linear_schedule(two["learning_rates"], 1e-3, warmup=2, steps=6)
    assert two["learning_rates"] == pytest.approx(one["learning_rates"])
    assert two["losses"] == pytest.approx(one["losses"], rel=1e-3, abs=1e-4)
    assert two["thresholds"]["bi_encoder"] == pytest.approx(
        one["thresholds"]["bi_encoder"], abs=1e-3
    )
    for scorer in ("bi_encoder", "zero_shot"):
        for name in ("roc_auc", "accuracy"):
            assert two["test"][scorer][name] == pytest.approx(one["test"][scorer][name])


# --- arguments ---


def test_arguments_follow_the_shared_convention(script, monkeypatch):
    parsers = []

    def capture(self, args=None, namespace=None):
        parsers.append(self)
        raise SystemExit(0)

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", capture)
    with pytest.raises(SystemExit):
        script.parse_args([])
    options = {
        option: action
        for action in parsers[0]._actions
        for option in action.option_strings
        if option.startswith("--") and option != "--help"
    }
    assert set(options) >= SHARED_OPTIONS | {"--dataset", "--config", "--max_length"}
    assert [o for o, action in options.items() if not action.help] == []


def test_bad_arguments_are_refused(script):
    with pytest.raises(SystemExit):
        script.parse_args(["--dataset", "x", "--output_dir", "y", "--push_to_hub"])
    with pytest.raises(SystemExit):
        script.parse_args(["--dataset", "x", "--output_dir", "y", "--scale", "0"])
