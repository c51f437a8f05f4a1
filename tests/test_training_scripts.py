"""The five training scripts of training/ share one argument convention
(namesake.training.add_training_arguments): the same option names with help text, old names
kept with a warning, the warm-up default, and gradient clipping applied the same way."""

import argparse
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from conftest import load_script
from training_runs import SHARED_OPTIONS, script_options

from namesake import training

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = [
    "train_dpr",
    "train_entity_linker",
    "train_qg",
    "train_wes_bi_encoder",
    "train_wes_cross_encoder",
]
DPR_REQUIRED = ["--train_file", "train.json", "--output_dir", "out"]


@pytest.mark.parametrize("name", SCRIPTS)
def test_help_lists_the_shared_options(name):
    done = subprocess.run(
        [sys.executable, str(ROOT / "training" / f"{name}.py"), "--help"],
        env=dict(os.environ, HF_HUB_OFFLINE="1", PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert set(re.findall(r"--\w+", done.stdout)) >= SHARED_OPTIONS


@pytest.mark.parametrize("name", SCRIPTS)
def test_training_scripts_share_one_argument_convention(name, monkeypatch):
    """Every training script takes the transformers examples' option names, and every
    option has help text."""
    options = script_options(load_script(name), monkeypatch)
    assert set(options) >= SHARED_OPTIONS
    assert not {"--model", "--epochs", "--batch_size", "--max_steps", "--warmup_steps"} & set(
        options
    )
    assert [o for o, action in options.items() if not action.help] == []


@pytest.mark.parametrize("old", ["--dev_file", "--dev_split_name", "--dev_passages"])
def test_dpr_takes_no_old_option_names(old, capsys):
    """Before 1.0 there is no compatibility code: the pre-transformers names are gone, and
    argparse says so instead of taking them for anything else."""
    script = load_script("train_dpr")
    with pytest.raises(SystemExit):
        script.parse_args([*DPR_REQUIRED, old, "held_out.json"])
    assert f"unrecognized arguments: {old}" in capsys.readouterr().err


def test_validation_options_warn_nothing_and_keep_their_defaults():
    script = load_script("train_dpr")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        args = script.parse_args(DPR_REQUIRED)
        given = script.parse_args([*DPR_REQUIRED, "--validation_file", "held_out.json"])
    assert args.validation_file is None and args.validation_split_name == "validation"
    assert args.validation_passages is None
    assert given.validation_file == "held_out.json"


def shared_arguments(**warmup) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    training.add_training_arguments(
        parser,
        model_help="model",
        validation_help="held-out data",
        per_device_train_batch_size=8,
        per_device_eval_batch_size=8,
        num_train_epochs=1,
        learning_rate=1e-3,
        **warmup,
    )
    return parser


def test_warm_up_default_is_a_step_count_or_a_share_of_the_steps():
    parser = shared_arguments(warmup_share=0.25)
    args = parser.parse_args(["--output_dir", "out"])
    assert args.num_warmup_steps is None and args.warmup_share == 0.25
    assert "25% of the training steps" in " ".join(parser.format_help().split())
    args = shared_arguments(num_warmup_steps=100).parse_args(["--output_dir", "out"])
    assert args.num_warmup_steps == 100 and args.warmup_share is None
    for both_or_neither in ({"num_warmup_steps": 100, "warmup_share": 0.1}, {}):
        with pytest.raises(TypeError):
            shared_arguments(**both_or_neither)


def test_mixed_precision_and_clipping_defaults():
    """No script sets a mixed precision of its own (Accelerate's launcher and config decide,
    no under plain python) or clips unless asked."""
    args = shared_arguments(num_warmup_steps=0).parse_args(["--output_dir", "out"])
    assert args.mixed_precision is None and args.max_grad_norm == 0.0
    assert training.resolve_mixed_precision(None) is None
    assert training.resolve_mixed_precision("bf16") == "bf16"


def test_clip_gradients_once_the_accumulated_gradients_are_complete():
    model = torch.nn.Linear(4, 1)

    def gradient_norm(max_grad_norm: float, sync_gradients: bool) -> float:
        model.zero_grad()
        (100 * model(torch.ones(2, 4)).sum()).backward()
        run = SimpleNamespace(
            args=SimpleNamespace(max_grad_norm=max_grad_norm),
            accelerator=SimpleNamespace(
                sync_gradients=sync_gradients, clip_grad_norm_=torch.nn.utils.clip_grad_norm_
            ),
        )
        training.TrainingRun.clip_gradients(run, model)
        grads = [p.grad.flatten() for p in model.parameters()]
        return torch.linalg.vector_norm(torch.cat(grads)).item()

    unclipped = gradient_norm(0.0, sync_gradients=True)
    assert unclipped > 1
    assert gradient_norm(0.5, sync_gradients=True) == pytest.approx(0.5)
    assert gradient_norm(0.5, sync_gradients=False) == pytest.approx(unclipped)


@pytest.mark.parametrize("name", SCRIPTS)
def test_every_script_applies_mixed_precision_and_clipping(name):
    """The scripts are linear, transformers-example style, so each writes its own training
    loop: each must build its Accelerator from the arguments (``--mixed_precision``) and
    step through the run, whose step clips (``--max_grad_norm``)."""
    source = (ROOT / "training" / f"{name}.py").read_text()
    assert "training.make_accelerator(args)" in source
    assert re.search(r"\n\s+run\.backward_and_step\(loss.*, model\)\n", source)
