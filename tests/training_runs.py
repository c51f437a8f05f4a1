"""Helpers of the tests of the training scripts in training/: a script loaded as a fixture,
the options its parser declares, its metrics.json and model card, the arguments that resume a
run from a checkpoint, and the same run on two processes and on one."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from conftest import load_script
from tiny_models import accelerate_launch, assert_linear_schedule

#: What add_training_arguments gives every script, under the transformers examples' names.
SHARED_OPTIONS = {
    "--model_name_or_path",
    "--output_dir",
    "--validation_file",
    "--per_device_train_batch_size",
    "--per_device_eval_batch_size",
    "--num_train_epochs",
    "--max_train_steps",
    "--learning_rate",
    "--weight_decay",
    "--lr_scheduler_type",
    "--num_warmup_steps",
    "--gradient_accumulation_steps",
    "--max_grad_norm",
    "--mixed_precision",
    "--seed",
    "--logging_steps",
    "--checkpointing_steps",
    "--checkpoint_dir",
    "--resume_from_checkpoint",
    "--with_tracking",
    "--report_to",
    "--license",
    "--push_to_hub",
    "--hub_model_id",
}


def script_fixture(name: str):
    """A module-scoped ``script`` fixture: ``training/<name>.py`` loaded once per test file
    (``script = script_fixture("train_qg")`` at a test module's top level)."""

    @pytest.fixture(scope="module", name="script")
    def script():
        return load_script(name)

    return script


def script_options(script, monkeypatch) -> dict[str, argparse.Action]:
    """The ``--`` options (but ``--help``) that `script`'s ``parse_args`` declares, with their
    argparse actions: its parser is captured where it would parse."""
    parsers = []

    def capture(self, args=None, namespace=None):
        parsers.append(self)
        raise SystemExit(0)

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", capture)
    with pytest.raises(SystemExit):
        script.parse_args([])
    return {
        option: action
        for action in parsers[0]._actions
        for option in action.option_strings
        if option.startswith("--") and option != "--help"
    }


def read_metrics(output_dir: Path) -> dict:
    """The metrics.json a run wrote in its output folder."""
    return json.loads((Path(output_dir) / "metrics.json").read_text())


def read_card(output_dir: Path) -> tuple[dict, str]:
    """The model card a run wrote, as (its YAML header, its text), checked to have every
    template field filled."""
    card = (Path(output_dir) / "README.md").read_text()
    assert "{{" not in card
    return yaml.safe_load(card.split("---")[1]), card


def checkpoint_steps(output_dir: Path) -> list[int]:
    """The steps of the checkpoints a run left in its default --checkpoint_dir."""
    folder = Path(f"{output_dir}-checkpoints")
    return sorted(int(p.name.removeprefix("step_")) for p in folder.iterdir())


def resume_arguments(output_dir: Path, step: int) -> list[str]:
    """The arguments that resume from the step-`step` checkpoint of the run that wrote
    `output_dir`."""
    checkpoints = Path(f"{output_dir}-checkpoints")
    return [
        "--checkpoint_dir",
        str(checkpoints),
        "--resume_from_checkpoint",
        str(checkpoints / f"step_{step}"),
    ]


def two_processes_and_one(
    script, args_for: Callable[..., list[str]], tmp_path: Path
) -> tuple[dict, dict]:
    """The metrics of one run on 2 processes × batch 4 (``accelerate launch``) and on 1
    process × batch 8: the same global batch. ``args_for(output_dir, *more)`` gives the run's
    arguments, `more` setting the batch size."""
    two_out, one_out = tmp_path / "two", tmp_path / "one"
    accelerate_launch(script.__file__, args_for(two_out, "--per_device_train_batch_size", "4"))
    one = script.main(args_for(one_out, "--per_device_train_batch_size", "8"))
    two = read_metrics(two_out)
    assert two["num_processes"] == 2 and one["num_processes"] == 1
    return two, one


def assert_same_schedule(run: dict, reference: dict, steps: int, warmup: int, peak: float):
    """`run` and `reference` made `steps` optimizer steps at the same learning rates, on a
    linear schedule peaking at `peak` after `warmup` steps."""
    assert run["steps"] == reference["steps"] == steps
    assert_linear_schedule(run["learning_rates"], peak, warmup=warmup, steps=steps)
    assert run["learning_rates"] == pytest.approx(reference["learning_rates"])


def assert_same_training(run: dict, reference: dict, steps: int, warmup: int, peak: float):
    """:func:`assert_same_schedule`, and the same loss at every step up to float noise: what
    two runs of a script whose loss is over the gathered global batch give, dropout off,
    whatever the number of processes."""
    assert_same_schedule(run, reference, steps, warmup, peak)
    assert run["losses"] == pytest.approx(reference["losses"], rel=1e-3, abs=1e-4)
