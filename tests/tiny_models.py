"""Tiny randomly initialised models for fast tests (no real weights are needed offline), and
a launcher that runs a training script on them under several CPU processes."""

from __future__ import annotations

from pathlib import Path

# The sizes of every tiny random BERT-like model the tests train: small enough for seconds on
# a CPU, with two layers and two heads so that layer and head choices mean something.
TINY_SIZES = {
    "hidden_size": 32,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "intermediate_size": 64,
}


def save_tiny_bert(root: Path, num_labels: int | None = None, seed: int = 0) -> Path:
    """A 2-layer, hidden-32 BERT with the bundled MiniLM's tokenizer, saved in `root`.

    With `num_labels`, a sequence-classification head (a cross-encoder when 1).
    """
    import torch
    from transformers import (
        AutoTokenizer,
        BertConfig,
        BertForSequenceClassification,
        BertModel,
    )

    from namesake.bundled_models import minilm_path

    tokenizer = AutoTokenizer.from_pretrained(minilm_path())
    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        **TINY_SIZES,
        max_position_embeddings=128,
        **({"num_labels": num_labels} if num_labels else {}),
    )
    model = BertForSequenceClassification(config) if num_labels else BertModel(config)
    model.save_pretrained(root)
    tokenizer.save_pretrained(root)
    return root


def without_dropout(model: Path, root: Path) -> Path:
    """A copy of the saved `model` (its files linked) with dropout off, in `root`: processes
    that draw different dropout masks could not be compared step for step."""
    import json

    root.mkdir()
    for f in model.iterdir():
        if f.name != "config.json":
            (root / f.name).symlink_to(f)
    config = json.loads((model / "config.json").read_text())
    config.update(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    (root / "config.json").write_text(json.dumps(config))
    return root


# --- running a training script under several processes -------------------------------------


def accelerate_launch(
    script: Path | str,
    args: list[str],
    num_processes: int = 2,
    timeout: int = 300,
    module: bool = False,
):
    """Runs `script` (a module name with `module`, as `accelerate launch -m`) with
    `accelerate launch` on `num_processes` CPU processes; returns the finished process
    (stdout and stderr captured).

    `accelerate launch --cpu --num_processes N` starts one process (several only through
    mpirun), so this is torchrun's launcher (`--multi_gpu`) with ACCELERATE_USE_CPU: N CPU
    processes talking over gloo, as `accelerate launch --cpu` would on a multi-CPU setup.
    """
    import os
    import socket
    import subprocess
    import sys

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    root = Path(__file__).resolve().parent.parent
    env = dict(
        os.environ,
        HF_HUB_OFFLINE="1",
        OMP_NUM_THREADS="1",
        ACCELERATE_USE_CPU="true",
        CUDA_VISIBLE_DEVICES="",
        PYTHONPATH=str(root),
    )
    command = [
        str(Path(sys.executable).parent / "accelerate"),
        "launch",
        "--num_processes",
        str(num_processes),
        "--num_machines",
        "1",
        "--multi_gpu",
        "--mixed_precision",
        "no",
        "--dynamo_backend",
        "no",
        "--main_process_port",
        str(port),
        *(["--module"] if module else []),
        str(script),
        *args,
    ]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    return done


def assert_linear_schedule(learning_rates: list[float], peak: float, warmup: int, steps: int):
    """The learning rate of every optimizer step follows a linear schedule over `steps` steps:
    it rises to `peak` at step `warmup`, then falls to 0 at the last step (not earlier, not
    stopping half way)."""
    import pytest

    assert len(learning_rates) == steps
    rising = learning_rates[:warmup]
    assert rising == sorted(rising) and rising[-1] == pytest.approx(peak)
    falling = learning_rates[warmup - 1 :]
    assert all(a > b for a, b in zip(falling, falling[1:], strict=False))
    assert learning_rates[-1] == pytest.approx(0.0, abs=peak * 1e-6)
    assert learning_rates[-2] > 0


# --- tiny readers for `namesake amber read` (fact checking, slot filling, QA) ---------------


def save_tiny_fever_classifier(
    root: Path,
    labels: tuple[str, ...] = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO"),
    seed: int = 0,
    always: str | None = None,
) -> Path:
    """A tiny BERT sequence classifier whose classes are named `labels` (FEVER's by default);
    with `always`, that label's bias outweighs every input, so it is always predicted."""
    import torch
    from transformers import AutoConfig, BertForSequenceClassification

    save_tiny_bert(root, num_labels=len(labels), seed=seed)
    config = AutoConfig.from_pretrained(root)
    config.id2label = dict(enumerate(labels))
    config.label2id = {label: index for index, label in enumerate(labels)}
    model = BertForSequenceClassification.from_pretrained(root, config=config)
    if always is not None:
        with torch.no_grad():
            model.classifier.bias[labels.index(always)] += 100.0
    model.save_pretrained(root)
    return root


def save_tiny_bert_qa(root: Path, seed: int = 0) -> Path:
    """A tiny BERT with an extractive question-answering head and the MiniLM tokenizer."""
    import torch
    from transformers import BertConfig, BertForQuestionAnswering

    save_tiny_bert(root, seed=seed)
    torch.manual_seed(seed)
    BertForQuestionAnswering(BertConfig.from_pretrained(root)).save_pretrained(root)
    return root


def save_tiny_bart(
    root: Path,
    seed: int = 0,
    max_position_embeddings: int = 128,
    decoder_start: str = "[SEP]",
    force_eos: bool = True,
) -> Path:
    """A 1-layer, hidden-32 BART generator speaking the MiniLM tokenizer's word pieces
    ([CLS] starts and [SEP] ends a sequence), saved with that tokenizer.

    The slot-filling reader's (the defaults) starts decoding at [SEP] and always ends with
    it; the question generator's starts at [CLS] and ends when it predicts [SEP]."""
    import torch
    from transformers import AutoTokenizer, BartConfig, BartForConditionalGeneration

    from namesake.bundled_models import minilm_path

    tokenizer = AutoTokenizer.from_pretrained(minilm_path())
    torch.manual_seed(seed)
    config = BartConfig(
        vocab_size=tokenizer.vocab_size,
        d_model=32,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        max_position_embeddings=max_position_embeddings,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.cls_token_id,
        eos_token_id=tokenizer.sep_token_id,
        decoder_start_token_id=tokenizer.convert_tokens_to_ids(decoder_start),
        forced_bos_token_id=None,
        forced_eos_token_id=tokenizer.sep_token_id if force_eos else None,
    )
    BartForConditionalGeneration(config).save_pretrained(root)
    tokenizer.save_pretrained(root)
    return root


def save_tiny_dpr(root: Path, seed: int = 0) -> tuple[Path, Path]:
    """A tiny random DPR pair (hidden 32, 2 layers) with the MiniLM tokenizer, saved as
    `root`/question (DPRQuestionEncoder) and `root`/context (DPRContextEncoder)."""
    import torch
    from transformers import AutoTokenizer, DPRConfig, DPRContextEncoder, DPRQuestionEncoder

    from namesake.bundled_models import minilm_path

    tokenizer = AutoTokenizer.from_pretrained(minilm_path())
    config = DPRConfig(
        vocab_size=tokenizer.vocab_size,
        **TINY_SIZES,
        max_position_embeddings=128,
        initializer_range=0.5,  # spread-out random embeddings: scores differ by input
    )
    torch.manual_seed(seed)
    folders = []
    for name, model_class in (("question", DPRQuestionEncoder), ("context", DPRContextEncoder)):
        model_class(config).save_pretrained(root / name)
        tokenizer.save_pretrained(root / name)
        folders.append(root / name)
    return folders[0], folders[1]
