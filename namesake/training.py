"""Plumbing shared by the training scripts in ``training/`` (``train_qg.py``,
``train_dpr.py``, ``train_entity_linker.py``, ``train_wes_cross_encoder.py``,
``train_wes_bi_encoder.py``).

The scripts keep one linear ``main()`` each, as transformers' ``examples/pytorch/*_no_trainer.py``
do; what would otherwise be written five times, and drift apart, lives here:

- :func:`add_training_arguments` / :func:`check_training_arguments`: one argument convention,
  the transformers examples' names (``--model_name_or_path``, ``--validation_file``,
  ``--per_device_train_batch_size``, ``--num_train_epochs``, ``--max_train_steps``,
  ``--mixed_precision``, ``--max_grad_norm``, ...);
- :func:`make_accelerator`, :func:`setup_logging`: the ``Accelerator`` (``--mixed_precision``
  through :func:`resolve_mixed_precision`; seedable sampler, so a resumed run sees the same
  batches; trackers with ``--with_tracking``) and accelerate's ``get_logger`` logging;
- :func:`create_optimizer`, :func:`training_steps` and :func:`create_scheduler`: AdamW, and
  the learning-rate schedule sized right under any number of processes;
- :class:`TrainingRun`: a loop's schedule, position (epochs left, batches to skip after a
  resume), optimizer step with gradient clipping (``--max_grad_norm``) and checkpoints, with a
  :class:`StepLog` of the loss and learning rate of every optimizer step for ``metrics.json``,
  the console and the trackers, and the run's part of ``metrics.json`` (settings, steps, that
  log, per-epoch validation);
- :func:`freeze_unused_pooler`: an encoder that DistributedDataParallel accepts;
- :func:`read_data_file`: a ``--validation_file`` in CSV, JSON (lines) or Parquet;
- :func:`rng_untouched`: evaluation during training that leaves the RNG alone, so a resumed
  run continues exactly;
- :func:`save_checkpoint`, :func:`find_checkpoint`, :func:`resume`: one checkpoint
  layout (``CHECKPOINT_DIR/step_N``, holding ``accelerator.save_state`` and
  :data:`STATE_FILE`) and ``--resume_from_checkpoint PATH|latest``;
- :func:`render_card`: every card in ``model_cards/`` is a Jinja template rendered by
  ``huggingface_hub.ModelCard`` (the YAML header from ``ModelCardData``, which drops unset
  fields);
- :func:`finish`: the output folder (model, ``metrics.json``, card) written through
  :func:`namesake.outputs.atomic_directory` (never half a model) and, when asked, staged,
  checked and uploaded by :func:`namesake.publish.models.publish_model`, as
  ``namesake publish model`` does (the repo id and the token are checked before training).
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path

from namesake.errors import NamesakeError
from namesake.outputs import (
    Output,
    OutputRefused,
    add_input,
    atomic_directory,
    check_outputs,
    declared_inputs,
    overwriting,
)
from namesake.publish.models import publish_model
from namesake.publish.upload import check_repo_id, resolve_token

#: The file beside ``accelerator.save_state``'s files that makes a folder a checkpoint.
STATE_FILE = "training_state.json"
STEP_DIR = re.compile(r"^step_(\d+)$")
SCHEDULER_TYPES = (
    "linear",
    "cosine",
    "cosine_with_restarts",
    "polynomial",
    "constant",
    "constant_with_warmup",
)
MIXED_PRECISION_CHOICES = ("auto", "no", "fp16", "bf16")


# --- arguments ------------------------------------------------------------------------------


def add_training_arguments(
    parser: argparse.ArgumentParser,
    *,
    model_help: str,
    model_default: str | None = None,
    validation_help: str,
    per_device_train_batch_size: int,
    per_device_eval_batch_size: int,
    num_train_epochs: int,
    learning_rate: float,
    num_warmup_steps: int | None = None,
    warmup_share: float | None = None,
    weight_decay: float = 0.0,
    logging_steps: int = 10,
) -> None:
    """Adds the arguments every training script shares, with the transformers examples' names,
    so that one name means one thing in all of them.

    The warm-up default is either a number of steps (`num_warmup_steps`) or, for scripts whose
    length depends on the data, a share of the training steps (`warmup_share`), which
    :class:`TrainingRun` turns into steps once it knows them (``args.warmup_share``).
    """
    if (num_warmup_steps is None) == (warmup_share is None):
        raise TypeError("give either num_warmup_steps or warmup_share")
    warmup_help = "linear warm-up steps (optimizer steps) before the schedule's peak"
    if warmup_share is not None:
        warmup_help += f" (default: {warmup_share * 100:g}%% of the training steps)"
    parser.set_defaults(warmup_share=warmup_share)
    add = parser.add_argument
    add_input(parser, "--model_name_or_path", default=model_default, help=model_help)
    add("--output_dir", required=True, help="folder of the trained model (replaced atomically)")
    add(
        "--overwrite_output_dir",
        action="store_true",
        help="write into an --output_dir that this script did not write (files it did not "
        "write are kept)",
    )
    add_input(parser, "--validation_file", default=None, help=validation_help)
    add(
        "--per_device_train_batch_size",
        type=int,
        default=per_device_train_batch_size,
        help="training batch size per process (the global batch is this × processes × "
        "--gradient_accumulation_steps)",
    )
    add(
        "--per_device_eval_batch_size",
        type=int,
        default=per_device_eval_batch_size,
        help="evaluation batch size per process",
    )
    add("--num_train_epochs", type=int, default=num_train_epochs, help="passes over the data")
    add(
        "--max_train_steps",
        type=int,
        default=None,
        help="stop after this many optimizer steps (overrides --num_train_epochs when smaller)",
    )
    add("--learning_rate", type=float, default=learning_rate, help="peak learning rate (AdamW)")
    add("--weight_decay", type=float, default=weight_decay, help="AdamW weight decay")
    add(
        "--lr_scheduler_type",
        default="linear",
        choices=SCHEDULER_TYPES,
        help="learning-rate schedule after warm-up (transformers' get_scheduler)",
    )
    add("--num_warmup_steps", type=int, default=num_warmup_steps, help=warmup_help)
    add(
        "--gradient_accumulation_steps",
        type=int,
        default=1,
        help="batches whose gradients are summed before each optimizer step",
    )
    # No clipping by default, as in transformers' no_trainer examples: four of the five
    # scripts never clipped, and the figures README.md records were trained so (DPR's recipe
    # passes its 2.0 where its figures come from).
    add(
        "--max_grad_norm",
        type=float,
        default=0.0,
        help="clip the gradients to this global norm before each optimizer step (default 0: "
        "no clipping)",
    )
    add(
        "--mixed_precision",
        default=None,
        choices=MIXED_PRECISION_CHOICES,
        help="the Accelerator's mixed precision; auto: bf16 on a GPU that has it, else fp16 on "
        "a GPU, else no. Default: what accelerate launch --mixed_precision or accelerate "
        "config set, and no under plain python (a default of the script's own would "
        "override the launcher's)",
    )
    add("--seed", type=int, default=0, help="random seed (initialisation and data order)")
    add("--logging_steps", type=int, default=logging_steps, help="log every N optimizer steps")
    add(
        "--checkpointing_steps",
        type=int,
        default=None,
        help="save the full training state every N optimizer steps (CHECKPOINT_DIR/step_N)",
    )
    add(
        "--checkpoint_dir",
        default=None,
        help="where the step_N checkpoints go (default: OUTPUT_DIR-checkpoints)",
    )
    add_input(
        parser,
        "--resume_from_checkpoint",
        default=None,
        help="a step_N checkpoint folder, or 'latest' (the last one in --checkpoint_dir; "
        "starts afresh when there is none)",
    )
    add(
        "--with_tracking",
        action="store_true",
        help="log loss and learning rate to Accelerate's experiment trackers (local ones "
        "write to OUTPUT_DIR-runs)",
    )
    add(
        "--report_to",
        default="all",
        help="with --with_tracking: the trackers (Accelerate's log_with: 'all', "
        "'tensorboard', 'wandb', ...)",
    )
    add("--license", default="apache-2.0", help="licence written in the model card")
    add("--push_to_hub", action="store_true", help="upload the output folder to the Hub")
    add("--hub_model_id", default=None, help="the Hub repository, USER/NAME (--push_to_hub)")


#: The defaults of the three scripts that fine-tune a small sentence encoder on pairs or
#: mentions (the WES cross- and bi-encoder, the entity linker), for add_training_arguments:
#: one recipe, kept in one place so that the three stay comparable (each picks its learning
#: rate).
ENCODER_FINE_TUNING_DEFAULTS = {
    "per_device_train_batch_size": 32,
    "per_device_eval_batch_size": 128,
    "num_train_epochs": 1,
    "warmup_share": 0.1,
    "weight_decay": 0.01,
}


# The arguments of add_training_arguments that shape the optimisation: each metrics.json
# records them (TrainingRun.settings), so that runs compare under the same names.
OPTIMISATION_SETTINGS = (
    "num_train_epochs",
    "per_device_train_batch_size",
    "gradient_accumulation_steps",
    "learning_rate",
    "weight_decay",
    "lr_scheduler_type",
    "seed",
    "max_train_steps",
    "max_grad_norm",
)


def check_training_arguments(parser: argparse.ArgumentParser, args, *positive: str) -> None:
    """Rejects values the scripts cannot run with, and fills ``--checkpoint_dir``'s default.

    ``positive`` names further integer options that must be at least 1.
    """
    if args.push_to_hub and not args.hub_model_id:
        parser.error("--push_to_hub needs --hub_model_id")
    if args.push_to_hub:  # before the training, not after it: the id and a token
        try:
            check_repo_id(args.hub_model_id, "--hub_model_id")
            resolve_token(None)
        except NamesakeError as exc:
            parser.error(str(exc))
    names = (
        "per_device_train_batch_size",
        "per_device_eval_batch_size",
        "num_train_epochs",
        "gradient_accumulation_steps",
        "logging_steps",
        "max_train_steps",
        "checkpointing_steps",
        *positive,
    )
    for name in names:
        value = getattr(args, name)
        if value is not None and value < 1:
            parser.error(f"--{name} must be at least 1")
    if args.num_warmup_steps is not None and args.num_warmup_steps < 0:
        parser.error("--num_warmup_steps must be at least 0")
    if args.max_grad_norm < 0:
        parser.error("--max_grad_norm must be at least 0")
    if args.checkpoint_dir is None:
        args.checkpoint_dir = str(Path(args.output_dir).resolve()) + "-checkpoints"
    # The script that called: its file names the writer in --output_dir's marker.
    args.output_writer = f"training/{Path(sys._getframe(1).f_globals['__file__']).name}"
    output = Output(Path(args.output_dir), "folder", args.output_writer, "--output_dir")
    try:
        with overwriting(args.overwrite_output_dir):
            check_outputs([output], inputs=declared_inputs(args))
    except OutputRefused as exc:
        parser.error(str(exc))


#: ``datasets``' loader for each extension of a data file, as the transformers examples read
#: their ``--train_file`` / ``--validation_file``.
DATA_FILE_LOADERS = {".csv": "csv", ".json": "json", ".jsonl": "json", ".parquet": "parquet"}


def read_data_file(path: str | os.PathLike):
    """The rows of a CSV, JSON (a list or JSON lines) or Parquet file, as a
    ``datasets.Dataset``; its format is told by its extension."""
    import datasets

    loader = DATA_FILE_LOADERS.get(Path(path).suffix.lower())
    if loader is None:
        raise SystemExit(f"{path}: not a data file ({', '.join(DATA_FILE_LOADERS)})")
    return datasets.load_dataset(loader, data_files=str(path), split="train")


# --- accelerator and logging ----------------------------------------------------------------


def setup_logging(name: str):
    """Accelerate's logger for ``name``: INFO on the main process only (``main_process_only``
    is its default), so N processes do not print every line N times."""
    from accelerate.logging import get_logger

    logging.basicConfig(
        format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
        datefmt="%H:%M:%S",
        level=logging.INFO,
    )
    return get_logger(name, log_level="INFO")


def make_accelerator(args):
    """The ``Accelerator`` of a training script, in ``--mixed_precision``
    (``accelerator.mixed_precision`` says which one it resolved to), with every RNG seeded
    with ``--seed``.

    The seedable sampler makes the shuffled order a function of the seed and the epoch, so a
    resumed run (``skip_first_batches``) sees exactly the batches it would have seen. It takes
    its seed from torch's when the loaders are prepared, which is why the seeding belongs here,
    before any script builds a loader.
    """
    from accelerate import Accelerator
    from accelerate.utils import DataLoaderConfiguration, set_seed

    accelerator = Accelerator(
        mixed_precision=resolve_mixed_precision(args.mixed_precision),
        gradient_accumulation_steps=args.gradient_accumulation_steps,
        log_with=args.report_to if args.with_tracking else None,
        # Beside the output folder, which is replaced whole at the end.
        project_dir=str(Path(args.output_dir).resolve()) + "-runs" if args.with_tracking else None,
        dataloader_config=DataLoaderConfiguration(use_seedable_sampler=True),
    )
    set_seed(args.seed)
    return accelerator


def resolve_mixed_precision(choice: str | None) -> str | None:
    """The Accelerator's ``mixed_precision`` for ``--mixed_precision`` `choice`: None (not
    given) leaves it to Accelerate's launcher and config, ``auto`` picks what the machine
    has."""
    if choice != "auto":
        return choice
    import torch

    if torch.cuda.is_available():
        return "bf16" if torch.cuda.is_bf16_supported() else "fp16"
    return "no"


def start_tracking(accelerator, args, project: str) -> None:
    """Starts the trackers with the run's settings as their config (``--with_tracking``)."""
    if args.with_tracking:
        config = {k: v for k, v in vars(args).items() if isinstance(v, (int, float, str, bool))}
        accelerator.init_trackers(project, config)


# --- the learning-rate schedule ---------------------------------------------------------------


def training_steps(
    batches_per_epoch: int,
    num_train_epochs: int,
    gradient_accumulation_steps: int = 1,
    max_train_steps: int | None = None,
) -> tuple[int, int]:
    """``(optimizer steps per epoch, optimizer steps in all)`` of one process.

    ``batches_per_epoch`` must be the length of the *prepared* (sharded) loader: under N
    processes each process sees 1/N of the batches, and the optimizer steps once per
    ``gradient_accumulation_steps`` of them (and at the end of each epoch, where Accelerate
    syncs a partial accumulation), so an epoch is ``ceil(batches / accumulation)`` steps.
    """
    steps_per_epoch = max(1, math.ceil(batches_per_epoch / gradient_accumulation_steps))
    total = num_train_epochs * steps_per_epoch
    if max_train_steps is not None:
        total = min(total, max_train_steps)
    return steps_per_epoch, total


def create_scheduler(
    accelerator, optimizer, name: str, num_warmup_steps: int, num_training_steps: int
):
    """transformers' ``get_scheduler``, prepared by ``accelerator``, sized so that the learning
    rate peaks after ``num_warmup_steps`` and reaches its end value (0 for ``linear``) at
    ``num_training_steps``, both counted in optimizer steps of one process
    (:func:`training_steps`).

    Why the factor: the prepared scheduler (``AcceleratedScheduler.step``) advances the wrapped
    scheduler ``num_processes`` times per optimizer step, because without ``split_batches``
    each process's batch is a 1/N share of a global batch N times larger, and the examples size
    schedules in per-process batches. A schedule sized in optimizer steps must therefore be
    stretched by the same factor; with ``split_batches`` it steps once and needs none.
    Sizing from the sharded loader without the factor ends the schedule after 1/N of training;
    sizing from the un-sharded loader *with* it makes it N times too long.
    """
    from transformers import get_scheduler

    factor = 1 if accelerator.split_batches else accelerator.num_processes
    scheduler = get_scheduler(
        name,
        optimizer=optimizer,
        num_warmup_steps=num_warmup_steps * factor,
        num_training_steps=max(num_training_steps, 1) * factor,
    )
    return accelerator.prepare(scheduler)


def create_optimizer(model, args):
    """AdamW over :func:`optimizer_groups`, at ``--learning_rate`` with ``--weight_decay``: the
    one optimizer every script trains with, built in one place."""
    import torch

    return torch.optim.AdamW(optimizer_groups(model, args.weight_decay), lr=args.learning_rate)


def optimizer_groups(model, weight_decay: float) -> list[dict]:
    """AdamW parameter groups: no weight decay on biases and layer norms (BERT's recipe).

    Parameters shared between modules (a shared DPR encoder) are listed once.
    """
    no_decay = ("bias", "LayerNorm.weight", "layer_norm.weight")
    params = list(dict((id(p), (n, p)) for n, p in model.named_parameters()).values())
    return [
        {
            "params": [p for n, p in params if not any(k in n for k in no_decay)],
            "weight_decay": weight_decay,
        },
        {"params": [p for n, p in params if any(k in n for k in no_decay)], "weight_decay": 0.0},
    ]


def freeze_unused_pooler(model) -> None:
    """Freezes a transformers encoder's pooler (BERT's ``pooler``), if it has one.

    The encoders trained with mean pooling never use it, and DistributedDataParallel refuses
    trainable parameters that get no gradient. It stays in the model, so the saved folder loads
    without newly initialised weights.
    """
    pooler = getattr(model, "pooler", None)
    if pooler is not None:
        pooler.requires_grad_(False)


def epoch_batches(accelerator, loader, epoch: int, start_epoch: int, skip_batches: int):
    """The loader for ``epoch``: its shuffle seeded by the epoch, and in the epoch a resumed
    run starts in, without the ``skip_batches`` batches the checkpoint already trained on."""
    if hasattr(loader, "set_epoch"):
        loader.set_epoch(epoch)
    if epoch == start_epoch and skip_batches:
        return accelerator.skip_first_batches(loader, skip_batches)
    return loader


def rng_untouched():
    """A context in which evaluation during training leaves torch's RNG as it found it.

    Every DataLoader iterator draws its base seed from the global RNG, so an evaluation would
    shift the dropout noise of all later training steps; a run resumed from a checkpoint
    (saved before that evaluation) would then train on different noise than the uninterrupted
    run.
    """
    import torch

    devices = [torch.cuda.current_device()] if torch.cuda.is_available() else []
    return torch.random.fork_rng(devices=devices)


# --- per-step log -------------------------------------------------------------------------------


class StepLog:
    """The loss and learning rate of every optimizer step.

    ``metrics.json`` gets ``losses``, ``loss_steps`` and ``learning_rates`` (the rate after
    each step's scheduler step), so a run's schedule can be checked afterwards; the console
    gets a line every ``--logging_steps``; the trackers, with ``--with_tracking``, every step.
    A checkpoint stores the lists, so a resumed run reports its whole history.
    """

    def __init__(self, accelerator, args, logger, state: dict | None = None):
        self.accelerator, self.args, self.logger = accelerator, args, logger
        state = state or {}
        self.losses: list[float] = list(state.get("losses", []))
        self.loss_steps: list[int] = list(state.get("loss_steps", []))
        self.learning_rates: list[float] = list(state.get("learning_rates", []))
        self._window: list[float] = []

    def add(self, loss) -> None:
        """One batch's loss (a tensor), averaged over the processes."""
        self._window.append(self.accelerator.reduce(loss.detach().float(), "mean").item())

    def step(self, step: int, total: int, epoch: int, learning_rate: float) -> float:
        """Closes optimizer step ``step``: its loss is the mean of the batches added since the
        last one (gradient accumulation); returns it."""
        loss = sum(self._window) / max(len(self._window), 1)
        self._window = []
        self.losses.append(loss)
        self.loss_steps.append(step)
        self.learning_rates.append(learning_rate)
        if step % self.args.logging_steps == 0 or step in (1, total):
            self.logger.info(
                f"epoch {epoch + 1} step {step}/{total}: loss {loss:.4f}, lr {learning_rate:.2e}"
            )
        if self.args.with_tracking:
            self.accelerator.log({"train_loss": loss, "lr": learning_rate}, step=step)
        return loss

    def state(self) -> dict:
        return {
            "losses": self.losses,
            "loss_steps": self.loss_steps,
            "learning_rates": self.learning_rates,
        }


class TrainingRun:
    """One training loop's schedule, position and log, after ``accelerator.prepare``.

    Sizes the schedule from the prepared (sharded) ``train_loader`` (:func:`training_steps`,
    :func:`create_scheduler`), starts the trackers, resumes from ``--resume_from_checkpoint``
    and keeps the :class:`StepLog`. A script loops over ``run.epochs()`` and, in each, over
    ``run.batches(epoch)``; each batch's loss goes to ``run.backward_and_step(loss, model)``
    (inside ``accelerator.accumulate``) and then to ``run.after_batch(loss, epoch)``, which
    says when the last step is done.

    What a script reports beyond the per-step log (per-epoch validation, say) goes in a
    :meth:`checkpointed_list`, saved with every checkpoint and restored on resume.
    """

    def __init__(
        self,
        accelerator,
        args,
        logger,
        optimizer,
        train_loader,
        project: str,
    ):
        self.accelerator, self.args, self.logger = accelerator, args, logger
        self.optimizer, self.train_loader = optimizer, train_loader
        self.steps_per_epoch, self.total_steps = training_steps(
            len(train_loader),
            args.num_train_epochs,
            args.gradient_accumulation_steps,
            args.max_train_steps,
        )
        self.num_warmup_steps = args.num_warmup_steps
        if self.num_warmup_steps is None:  # add_training_arguments' warmup_share
            self.num_warmup_steps = int(args.warmup_share * self.total_steps)
        self.scheduler = create_scheduler(
            accelerator, optimizer, args.lr_scheduler_type, self.num_warmup_steps, self.total_steps
        )
        start_tracking(accelerator, args, project)
        self.state, self.start_epoch, self.skip_batches = resume(
            accelerator, args, logger, self.steps_per_epoch
        )
        self.completed_steps = self.state["completed_steps"]
        self.log = StepLog(accelerator, args, logger, self.state)
        self._checkpointed_lists: dict[str, list] = {}
        logger.info(
            f"{accelerator.num_processes} process(es), {self.steps_per_epoch} optimizer steps "
            f"an epoch, {self.total_steps} in all, {self.num_warmup_steps} of warm-up"
        )

    def clip_gradients(self, model) -> None:
        """``--max_grad_norm``: clips `model`'s gradients to that global norm (0: leaves them
        alone). Only once they are complete, at the batch that steps the optimizer: under
        gradient accumulation the earlier batches' gradients are partial sums."""
        if self.args.max_grad_norm > 0 and self.accelerator.sync_gradients:
            self.accelerator.clip_grad_norm_(model.parameters(), self.args.max_grad_norm)

    def backward_and_step(self, loss, model) -> None:
        """A batch's ``accelerator.backward(loss)`` and what follows it, inside
        ``accelerator.accumulate``: :meth:`clip_gradients`, the optimizer and schedule steps,
        and the gradients zeroed; the same in every script, so written once. Under gradient
        accumulation the prepared optimizer and scheduler skip the batches that do not step, so
        a script calls it for every batch."""
        self.accelerator.backward(loss)
        self.clip_gradients(model)
        self.optimizer.step()
        self.scheduler.step()
        self.optimizer.zero_grad()

    def checkpointed_list(self, key: str) -> list:
        """A list the script appends to (its per-epoch validation, say), saved under ``key``
        with every checkpoint and restored from the one a run resumed from, so that
        ``metrics.json`` reports the whole run however it was interrupted."""
        values = list(self.state.get(key, []))
        self._checkpointed_lists[key] = values
        return values

    def settings(self, *script_arguments: str, **script_settings) -> dict:
        """What ``metrics.json`` records of the run's settings: the optimisation arguments
        every script shares (:data:`OPTIMISATION_SETTINGS`), ``--validation_file``, the warm-up
        and mixed precision actually used, the script's own `script_arguments` and the
        settings it derived (`script_settings`)."""
        names = (*OPTIMISATION_SETTINGS, "validation_file", *script_arguments)
        return {name: getattr(self.args, name) for name in names} | {
            "num_warmup_steps": self.num_warmup_steps,
            "mixed_precision": self.accelerator.mixed_precision,
            **script_settings,
        }

    def report(self, *script_arguments: str, **script_settings) -> dict:
        """The run's own part of ``metrics.json``, under the same keys in every script: its
        ``settings`` (:meth:`settings`), the optimizer ``steps`` made, the per-step log
        (:class:`StepLog`) and every :meth:`checkpointed_list`."""
        return {
            "settings": self.settings(*script_arguments, **script_settings),
            "steps": self.completed_steps,
            **self.log.state(),
            **self._checkpointed_lists,
        }

    def card_values(self) -> dict:
        """The settings every model card states, under the same names in every template."""
        args = self.args
        return {
            "model_id": args.hub_model_id or Path(args.output_dir).resolve().name,
            "epochs": args.num_train_epochs,
            "batch_size": args.per_device_train_batch_size,
            "gradient_accumulation_steps": args.gradient_accumulation_steps,
            "num_processes": self.accelerator.num_processes,
            "learning_rate": f"{args.learning_rate:g}",
            "warmup_steps": self.num_warmup_steps,
            "steps": self.completed_steps,
            "seed": args.seed,
        }

    def epoch_summary(self, epoch: int) -> dict:
        """`epoch` (1-based), the last optimizer step it reached and its mean training loss:
        what each script's end-of-epoch validation records beside its metrics."""
        first, last = epoch * self.steps_per_epoch, (epoch + 1) * self.steps_per_epoch
        losses = [
            loss
            for step, loss in zip(self.log.loss_steps, self.log.losses, strict=True)
            if first < step <= last
        ]
        return {
            "epoch": epoch + 1,
            "step": min(last, self.completed_steps),
            "train_loss": sum(losses) / max(len(losses), 1),
        }

    @property
    def done(self) -> bool:
        return self.completed_steps >= self.total_steps

    def epochs(self, end_of_epoch: Callable[[int], None] | None = None):
        """The epochs still to train, from the one a resumed run stopped in.

        ``end_of_epoch(epoch)`` (a script's per-epoch validation, say) runs after each epoch's
        batches. A checkpoint taken at an epoch's last step is saved before it, so a run
        resumed from one first calls it for that epoch: the resumed run reports what the
        uninterrupted one would have.
        """
        if end_of_epoch is not None and self.start_epoch > 0 and not self.skip_batches:
            end_of_epoch(self.start_epoch - 1)
        for epoch in range(self.start_epoch, self.args.num_train_epochs):
            if self.done:
                return
            yield epoch
            if end_of_epoch is not None:
                end_of_epoch(epoch)

    def batches(self, epoch: int):
        return epoch_batches(
            self.accelerator, self.train_loader, epoch, self.start_epoch, self.skip_batches
        )

    def after_batch(self, loss, epoch: int) -> bool:
        """Records a batch's loss; after an optimizer step, logs it, checkpoints every
        ``--checkpointing_steps``, and returns True once the last step is done."""
        self.log.add(loss)
        if not self.accelerator.sync_gradients:
            return False
        self.completed_steps += 1
        rate = self.scheduler.get_last_lr()[0]
        self.log.step(self.completed_steps, self.total_steps, epoch, rate)
        every = self.args.checkpointing_steps
        if every and self.completed_steps % every == 0:
            save_checkpoint(
                self.accelerator,
                self.args.checkpoint_dir,
                self.completed_steps,
                {**self.log.state(), **self._checkpointed_lists},
            )
        return self.done


# --- checkpoints ------------------------------------------------------------------------------


def save_checkpoint(accelerator, checkpoint_dir, completed_steps: int, state: dict) -> Path:
    """``accelerator.save_state`` (weights, optimizer, scheduler, RNG) into
    ``checkpoint_dir/step_N``, plus :data:`STATE_FILE` with the step count and ``state``.

    The state file is written last, so a folder without it is an interrupted save that
    :func:`find_checkpoint` ignores.
    """
    path = Path(checkpoint_dir) / f"step_{completed_steps}"
    accelerator.save_state(str(path))
    if accelerator.is_main_process:
        state = {"completed_steps": completed_steps, **state}
        (path / STATE_FILE).write_text(json.dumps(state) + "\n", encoding="utf-8")
    accelerator.wait_for_everyone()
    return path


def find_checkpoint(resume_from_checkpoint: str | None, checkpoint_dir) -> Path | None:
    """The checkpoint ``--resume_from_checkpoint`` names: a ``step_N`` folder, or ``latest``
    (the highest complete ``step_N`` in ``checkpoint_dir``; None when there is none).

    A folder without :data:`STATE_FILE` raises ``ValueError``.
    """
    if not resume_from_checkpoint:
        return None
    if resume_from_checkpoint == "latest":
        folder = Path(checkpoint_dir)
        steps = [
            (int(m.group(1)), p)
            for p in (folder.iterdir() if folder.is_dir() else ())
            if (m := STEP_DIR.match(p.name)) and (p / STATE_FILE).is_file()
        ]
        return max(steps)[1] if steps else None
    path = Path(resume_from_checkpoint)
    if not (path / STATE_FILE).is_file():
        raise ValueError(f"{path}: not a training checkpoint (no {STATE_FILE})")
    return path


def resume(accelerator, args, logger, steps_per_epoch: int) -> tuple[dict, int, int]:
    """``--resume_from_checkpoint``: restores the checkpoint into the prepared objects and
    returns ``(state, start_epoch, skip_batches)``: the saved state (``completed_steps`` and
    what the script stored), the epoch to go on in, and how many of its batches were already
    trained on. Without a checkpoint: ``({"completed_steps": 0}, 0, 0)``."""
    try:
        path = find_checkpoint(args.resume_from_checkpoint, args.checkpoint_dir)
    except ValueError as error:
        raise SystemExit(str(error)) from None
    if path is None:
        if args.resume_from_checkpoint:
            logger.info(f"no checkpoint in {args.checkpoint_dir}: starting afresh")
        return {"completed_steps": 0}, 0, 0
    accelerator.load_state(str(path))
    state = json.loads((path / STATE_FILE).read_text(encoding="utf-8"))
    done = state["completed_steps"]
    logger.info(f"resumed from {path} at step {done}")
    skip = (done % steps_per_epoch) * args.gradient_accumulation_steps
    return state, done // steps_per_epoch, skip


# --- model cards, saving and pushing -----------------------------------------------------------


def render_card(template: str | os.PathLike, card_data: dict, **values) -> str:
    """The model card from ``template`` (a file of ``model_cards/``), a Jinja template
    (``{{ name }}``; ``{{ card_data }}`` is the YAML header).

    ``card_data`` becomes the YAML header through ``huggingface_hub.ModelCardData``, which
    leaves out fields that are None (a local base model or dataset is no Hub id to claim).
    """
    from huggingface_hub import ModelCard, ModelCardData

    card = ModelCard.from_template(
        ModelCardData(**card_data), template_path=str(template), **values
    )
    return str(card)


def hub_id(name: str | None) -> str | None:
    """``name`` when it can be a Hub id, None for a local folder (or no name)."""
    return None if not name or os.path.isdir(name) else name


def write_json(path: Path, data) -> None:
    Path(path).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def finish(
    accelerator,
    args,
    logger,
    metrics: dict,
    write: Callable[[Path], None],
    card: Callable[[], str],
) -> dict | None:
    """Saves the run and ends it; returns ``metrics`` on the main process, None elsewhere.

    On the main process, ``write(folder)`` saves the model into a temporary sibling of
    ``--output_dir``, ``metrics.json`` and ``README.md`` (``card()``) go beside it, and the
    folder then replaces ``--output_dir`` (:func:`namesake.outputs.atomic_directory`: never half a
    model); with ``--push_to_hub`` it goes to ``--hub_model_id``. Every process waits for it.
    """
    output_dir = Path(args.output_dir).resolve()
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        with (
            overwriting(args.overwrite_output_dir),
            atomic_directory(output_dir, writer=args.output_writer) as staging,
        ):
            write(staging)
            write_json(staging / "metrics.json", metrics)
            (staging / "README.md").write_text(card(), encoding="utf-8")
        logger.info(f"saved {output_dir}")
        if args.push_to_hub:
            url = publish_model(output_dir, args.hub_model_id)
            logger.info(f"pushed to https://huggingface.co/{args.hub_model_id}: {url}")
    accelerator.wait_for_everyone()
    accelerator.end_training()
    return metrics if accelerator.is_main_process else None
