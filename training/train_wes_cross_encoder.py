"""Train a WES cross-encoder: does this link text name this Wikipedia article?

A linear script in the style of transformers' ``examples/pytorch/*_no_trainer.py``, with
Accelerate; the plumbing it shares with the other training scripts (arguments, schedule,
checkpoints, card, saving, push) is in ``namesake.training``. The cross-encoder is
``AutoModelForSequenceClassification`` with one label (a new head on the encoder given by
``--model_name_or_path``), fed the pair (article, link_text) and trained with BCE-with-logits on
``is_same``. Each epoch ends with an evaluation on the validation split; at the end the test
split is scored by the cross-encoder and by three baselines on the same pairs:

- **exact match**: link_text == article after AmbER's answer normalisation
  (``namesake.text``); "same" when they are equal;
- **token F1**: AmbER-normalised token F1 of link_text against article; "same" when F1 >= 0.5;
- **bi-encoder cosine**: zero-shot cosine of all-MiniLM-L6-v2 embeddings (``--bi_encoder``);
  "same" when the cosine reaches the threshold that maximises accuracy on the validation split.

The cross-encoder says "same" when sigmoid(logit) >= 0.5. ROC-AUC uses the continuous score
of each scorer (the 0/1 match for exact match). Outputs, in ``--output_dir`` (written to a
temporary sibling folder first, then renamed, so a crash never leaves half a model):

- the checkpoint (``save_pretrained`` of model and tokenizer): loads with
  ``sentence_transformers.CrossEncoder(output_dir)`` and ``transformers`` pipelines;
- ``metrics.json``: settings, loss and learning rate per optimizer step, per-epoch validation
  metrics, test metrics of every scorer;
- ``scorer.json`` (``namesake.wes.answer_scorer``): kind ``cross-encoder`` and the sigmoid threshold
  with the best accuracy on the validation split (the scorer's decision threshold);
- ``README.md``: the model card, filled from ``model_cards/wes_cross_encoder.md``.

``--validation_file`` (CSV, JSON lines or Parquet with the same columns) replaces the
dataset's validation split: the per-epoch validation and both thresholds then come from it.
``--checkpointing_steps N`` saves the full training state every N optimizer steps to
``CHECKPOINT_DIR/step_N`` (default ``OUTPUT_DIR-checkpoints``); ``--resume_from_checkpoint
PATH|latest`` continues from one.

Point the ``wes_similarity`` metric at it with ``model_name_or_path=output_dir``: it reads
the kind and threshold from ``scorer.json``.

    accelerate launch training/train_wes_cross_encoder.py --dataset DIR_OR_HUB_ID \\
        --config 2018thresh5pairs --output_dir wes-cross-encoder \\
        [--model_name_or_path PATH_OR_HUB_ID] [--num_train_epochs 1] \\
        [--per_device_train_batch_size 32] [--learning_rate 5e-5] [--max_length 64] [--seed 0] \\
        [--max_train_samples N] [--validation_file PAIRS.parquet] [--checkpointing_steps N] \\
        [--resume_from_checkpoint latest] [--max_grad_norm 1.0] \\
        [--mixed_precision no|fp16|bf16|auto] [--push_to_hub --hub_model_id USER/NAME]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import datasets
import numpy as np
import torch
from accelerate.utils import set_seed
from torch.utils.data import DataLoader
from transformers import AutoModelForSequenceClassification, AutoTokenizer

from namesake import training
from namesake.bundled_models import MINILM_HUB_ID, minilm_path
from namesake.text import exact_match, token_f1
from namesake.wes.answer_scorer import write_scorer_config
from namesake.wes.thresholds import (  # one definition, shared with `namesake wes judge`
    best_threshold,
    binary_metrics,
    roc_auc,  # noqa: F401 (part of the script's API: tests call script.roc_auc)
)

CARD_TEMPLATE = Path(__file__).resolve().parent.parent / "model_cards" / "wes_cross_encoder.md"
CROSS_ENCODER_THRESHOLD = 0.5
TOKEN_F1_THRESHOLD = 0.5
logger = training.setup_logging(__name__)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="Train a WES cross-encoder with Accelerate.")
    parser.add_argument("--dataset", required=True, help="WES dataset folder or Hub id")
    parser.add_argument(
        "--config", default="2018thresh5pairs", help="a *pairs config of the dataset"
    )
    training.add_training_arguments(
        parser,
        model_help="encoder to start from, path or Hub id (default: the bundled all-MiniLM-L6-v2)",
        validation_help="pairs (CSV, JSON lines or Parquet; article, link_text, is_same) that "
        "replace the dataset's validation split: per-epoch validation, the scorer's threshold "
        "and the cosine baseline's",
        per_device_train_batch_size=32,
        per_device_eval_batch_size=128,
        num_train_epochs=1,
        learning_rate=5e-5,
        warmup_share=0.1,
        weight_decay=0.01,
    )
    parser.add_argument(
        "--bi_encoder",
        default=None,
        help="sentence-transformers model of the cosine baseline (default: bundled MiniLM)",
    )
    parser.add_argument(
        "--max_length", type=int, default=64, help="tokens kept per (article, link text) pair"
    )
    parser.add_argument(
        "--max_train_samples", type=int, default=None, help="train on the first N pairs only"
    )
    parser.add_argument(
        "--max_eval_samples",
        type=int,
        default=None,
        help="score the first N validation and test pairs only",
    )
    args = parser.parse_args(argv)
    training.check_training_arguments(parser, args, "max_length")
    return args


# --- model card ---


def card_data(args, base_model: str) -> dict:
    """The card's YAML header; a local base model or dataset is no Hub id and is left out."""
    dataset = training.hub_id(args.dataset)
    return {
        "library_name": "sentence-transformers",
        "pipeline_tag": "text-classification",
        "license": args.license,
        "base_model": training.hub_id(args.model_name_or_path)
        or (MINILM_HUB_ID if args.model_name_or_path is None else None),
        "datasets": [dataset] if dataset else None,
        "language": ["en"],
        "metrics": ["accuracy", "f1", "roc_auc"],
        "tags": ["cross-encoder", "entity-similarity", "wes", "question-answering-evaluation"],
    }


def results_table(test: dict) -> str:
    rows = [
        ("cross-encoder (this model)", test["cross_encoder"], "sigmoid ≥ 0.5"),
        ("exact match (AmbER-normalised)", test["exact_match"], "equal"),
        ("token F1 (AmbER-normalised)", test["token_f1"], f"F1 ≥ {TOKEN_F1_THRESHOLD}"),
        (
            "bi-encoder cosine, zero-shot",
            test["bi_encoder"],
            "cosine ≥ {:.3f} (best on validation)".format(test["bi_encoder"]["threshold"]),
        ),
    ]
    out = ['| scorer | accuracy | F1 | ROC-AUC | "same" when |', "|---|---:|---:|---:|---|"]
    for name, m, rule in rows:
        out.append(
            f"| {name} | {m['accuracy']:.3f} | {m['f1']:.3f} | {m['roc_auc']:.3f} | {rule} |"
        )
    return "\n".join(out)


def main(argv=None):
    args = parse_args(argv)
    accelerator = training.make_accelerator(args)
    set_seed(args.seed)
    model_path = args.model_name_or_path or minilm_path()
    bi_encoder_path = args.bi_encoder or minilm_path()
    started = time.time()

    # --- data: the *pairs config of a WES dataset folder or Hub id ---
    raw = datasets.load_dataset(args.dataset, args.config)
    if args.validation_file:
        raw["validation"] = training.read_data_file(args.validation_file)
    for split in ("train", "validation", "test"):
        if split not in raw:
            sys.exit(f"{args.dataset} / {args.config} has no {split!r} split (has {list(raw)})")
        missing = {"article", "link_text", "is_same"} - set(raw[split].column_names)
        if missing:
            sys.exit(f"{split} split lacks columns {sorted(missing)}")
    train_set = raw["train"].shuffle(seed=args.seed)
    if args.max_train_samples is not None:
        train_set = train_set.select(range(min(args.max_train_samples, len(train_set))))
    validation_set, test_set = raw["validation"], raw["test"]
    if args.max_eval_samples is not None:
        validation_set = validation_set.select(
            range(min(args.max_eval_samples, len(validation_set)))
        )
        test_set = test_set.select(range(min(args.max_eval_samples, len(test_set))))
    logger.info(
        f"pairs: train {len(train_set)}, validation {len(validation_set)}, test {len(test_set)}"
    )

    # --- model: the encoder with a new one-logit classification head ---
    tokenizer = AutoTokenizer.from_pretrained(model_path)
    model = AutoModelForSequenceClassification.from_pretrained(
        model_path, num_labels=1, id2label={0: "is_same"}, label2id={"is_same": 0}
    )
    # Tell sentence-transformers' CrossEncoder to apply a sigmoid in predict().
    model.config.sentence_transformers = {"activation_fn": "torch.nn.modules.activation.Sigmoid"}

    def collate(rows):
        features = tokenizer(
            [r["article"] for r in rows],
            [r["link_text"] for r in rows],
            truncation=True,
            max_length=args.max_length,
            padding=True,
            return_tensors="pt",
        )
        features["labels"] = torch.tensor([float(r["is_same"]) for r in rows])
        return features

    train_loader = DataLoader(
        train_set, batch_size=args.per_device_train_batch_size, shuffle=True, collate_fn=collate
    )
    validation_loader = DataLoader(
        validation_set, batch_size=args.per_device_eval_batch_size, collate_fn=collate
    )
    test_loader = DataLoader(
        test_set, batch_size=args.per_device_eval_batch_size, collate_fn=collate
    )
    optimizer = torch.optim.AdamW(
        training.optimizer_groups(model, args.weight_decay), lr=args.learning_rate
    )
    model, optimizer, train_loader, validation_loader, test_loader = accelerator.prepare(
        model, optimizer, train_loader, validation_loader, test_loader
    )
    run = training.TrainingRun(
        accelerator, args, logger, optimizer, train_loader, "train_wes_cross_encoder"
    )
    history = list(run.state.get("validation", []))
    run.extra_state["validation"] = history
    loss_fn = torch.nn.BCEWithLogitsLoss()

    def predict(loader):
        """Sigmoid probabilities and labels of a split, gathered from every process."""
        model.eval()
        probabilities, labels = [], []
        with torch.no_grad():
            for batch in loader:
                batch_labels = batch.pop("labels")
                logits = model(**batch).logits.squeeze(-1)
                logits, batch_labels = accelerator.gather_for_metrics((logits, batch_labels))
                probabilities.append(torch.sigmoid(logits.float()).cpu())
                labels.append(batch_labels.cpu())
        model.train()
        return torch.cat(probabilities).numpy(), torch.cat(labels).numpy().astype(int)

    def validate(epoch: int) -> None:
        """Validation metrics at the end of `epoch`, with its mean training loss."""
        with training.rng_untouched():
            probabilities, labels = predict(validation_loader)
        epoch_metrics = binary_metrics(labels, probabilities, CROSS_ENCODER_THRESHOLD)
        epoch_metrics.update(run.epoch_summary(epoch))
        history.append(epoch_metrics)
        logger.info(
            f"epoch {epoch + 1}: train loss {epoch_metrics['train_loss']:.4f}, validation "
            f"accuracy {epoch_metrics['accuracy']:.4f}, F1 {epoch_metrics['f1']:.4f}, "
            f"ROC-AUC {epoch_metrics['roc_auc']:.4f}"
        )

    # --- training ---
    if len(history) < run.start_epoch:  # resumed at an epoch's end, saved before its validation
        validate(run.start_epoch - 1)
    model.train()
    for epoch in run.epochs():
        for batch in run.batches(epoch):
            with accelerator.accumulate(model):
                labels = batch.pop("labels")
                loss = loss_fn(model(**batch).logits.squeeze(-1), labels)
                accelerator.backward(loss)
                run.clip_gradients(model)
                optimizer.step()
                run.scheduler.step()
                optimizer.zero_grad()
            if run.after_batch(loss, epoch):
                break
        validate(epoch)

    # --- the threshold scorer.json carries: the best accuracy on the validation split ---
    validation_probabilities, validation_labels = predict(validation_loader)
    scorer_threshold = best_threshold(validation_labels, validation_probabilities)

    # --- test: the cross-encoder next to EM, token F1 and the bi-encoder cosine ---
    probabilities, gathered_labels = predict(test_loader)
    test = {
        "cross_encoder": binary_metrics(gathered_labels, probabilities, CROSS_ENCODER_THRESHOLD)
    }
    test_pairs = list(zip(test_set["article"], test_set["link_text"], strict=True))
    labels = np.asarray(test_set["is_same"], dtype=int)
    em = [exact_match(t, a) for a, t in test_pairs]
    test["exact_match"] = binary_metrics(labels, em, 0.5)
    test["token_f1"] = binary_metrics(
        labels, [token_f1(t, a) for a, t in test_pairs], TOKEN_F1_THRESHOLD
    )

    from sentence_transformers import SentenceTransformer

    bi_encoder = SentenceTransformer(bi_encoder_path, device=str(accelerator.device))
    validation_pairs = list(
        zip(validation_set["article"], validation_set["link_text"], strict=True)
    )
    texts = list(dict.fromkeys(x for pair in validation_pairs + test_pairs for x in pair))
    embeddings = bi_encoder.encode(
        texts,
        batch_size=args.per_device_eval_batch_size,
        normalize_embeddings=True,
        convert_to_numpy=True,
    )
    index = {text: i for i, text in enumerate(texts)}

    def cosines(pairs):
        return [float(embeddings[index[a]] @ embeddings[index[t]]) for a, t in pairs]

    cosine_threshold = best_threshold(validation_set["is_same"], cosines(validation_pairs))
    test["bi_encoder"] = binary_metrics(labels, cosines(test_pairs), cosine_threshold)
    logger.info(f"\nTest split ({len(test_pairs)} pairs):\n{results_table(test)}\n")

    # --- save: checkpoint, metrics.json, model card; temp folder then rename ---
    base_model = args.model_name_or_path or MINILM_HUB_ID
    metrics = {
        "base_model": base_model,
        "dataset": args.dataset,
        "config": args.config,
        "bi_encoder": args.bi_encoder or MINILM_HUB_ID,
        "num_processes": accelerator.num_processes,
        "num_pairs": {
            "train": len(train_set),
            "validation": len(validation_set),
            "test": len(test_set),
        },
        "settings": run.settings("max_length", "max_train_samples"),
        "steps": run.completed_steps,
        **run.log.state(),
        "thresholds": {
            "cross_encoder": CROSS_ENCODER_THRESHOLD,
            "exact_match": "normalised strings equal",
            "token_f1": TOKEN_F1_THRESHOLD,
            "bi_encoder": cosine_threshold,
            "scorer": scorer_threshold,
        },
        "validation": history,
        "test": test,
        "train_seconds": round(time.time() - started, 1),
    }
    local_dataset = training.hub_id(args.dataset) is None

    def write(folder: Path):
        accelerator.unwrap_model(model).save_pretrained(folder, save_function=accelerator.save)
        tokenizer.save_pretrained(folder)
        write_scorer_config(
            folder,
            "cross-encoder",
            scorer_threshold,
            score="sigmoid",
            threshold_chosen_on=args.validation_file
            or f"validation split of {args.dataset}/{args.config}",
            base_model=base_model,
            dataset=args.dataset,
            config=args.config,
        )

    def card() -> str:
        return training.render_card(
            CARD_TEMPLATE,
            card_data(args, base_model),
            base_model_text=f"`{base_model}`",
            dataset_text=f"`{args.dataset}`" + (" (a local folder)" if local_dataset else ""),
            config=args.config,
            results_table=results_table(test),
            n_train=f"{len(train_set):,}",
            n_validation=f"{len(validation_set):,}",
            n_test=f"{len(test_set):,}",
            max_length=args.max_length,
            cosine_threshold=f"{cosine_threshold:.3f}",
            scorer_threshold=f"{scorer_threshold:.3f}",
            validation_accuracy=f"{history[-1]['accuracy']:.3f}" if history else "n/a",
            **run.card_values(),
        )

    return training.finish(accelerator, args, logger, metrics, write, card)


if __name__ == "__main__":
    main()
