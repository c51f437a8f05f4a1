"""Train a WES cross-encoder: does this link text name this Wikipedia article?

A linear script in the style of transformers' ``examples/pytorch/*_no_trainer.py``, with
Accelerate; the plumbing it shares with the other training scripts (arguments, schedule,
checkpoints, card, saving, push) is in ``namesake.training``, what it shares with
``train_wes_bi_encoder.py`` (data, string baselines, results table) in
``namesake.wes.scoring.scorer_training``. The cross-encoder is
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
- ``scorer.json`` (``namesake.wes.scoring.answer_scorer``): kind ``cross-encoder`` and the sigmoid
  threshold with the best accuracy on the validation split (the scorer's decision threshold);
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
import time
from pathlib import Path

import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer

from namesake import training
from namesake.bundled_models import MINILM_HUB_ID, minilm_path
from namesake.outputs import add_input
from namesake.wes.scoring import scorer_training
from namesake.wes.scoring.answer_scorer import write_scorer_config
from namesake.wes.scoring.thresholds import (  # one definition, shared with `namesake wes judge`
    best_threshold,
    binary_metrics,
    roc_auc,  # noqa: F401 (part of the script's API: tests call script.roc_auc)
)

CARD_TEMPLATE = Path(__file__).resolve().parent.parent / "model_cards" / "wes_cross_encoder.md"
CROSS_ENCODER_THRESHOLD = 0.5
logger = training.setup_logging(__name__)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="Train a WES cross-encoder with Accelerate.")
    scorer_training.add_pair_data_arguments(parser, config_help="a *pairs config of the dataset")
    training.add_training_arguments(
        parser,
        model_help="encoder to start from, path or Hub id (default: the bundled all-MiniLM-L6-v2)",
        validation_help="pairs (CSV, JSON lines or Parquet; article, link_text, is_same) that "
        "replace the dataset's validation split: per-epoch validation, the scorer's threshold "
        "and the cosine baseline's",
        learning_rate=5e-5,
        **training.ENCODER_FINE_TUNING_DEFAULTS,
    )
    add_input(
        parser,
        "--bi_encoder",
        default=None,
        help="sentence-transformers model of the cosine baseline (default: bundled MiniLM)",
    )
    parser.add_argument(
        "--max_length", type=int, default=64, help="tokens kept per (article, link text) pair"
    )
    args = parser.parse_args(argv)
    training.check_training_arguments(parser, args, "max_length")
    return args


# --- model card ---


def card_data(args, base_model: str) -> dict:
    """The card's YAML header (a local base model or dataset is left out)."""
    tags = ["cross-encoder", "entity-similarity", "wes", "question-answering-evaluation"]
    return scorer_training.card_data(args, base_model, "text-classification", tags)


def results_table(test: dict) -> str:
    return scorer_training.scorer_table(
        [
            ("cross-encoder (this model)", test["cross_encoder"], "sigmoid ≥ 0.5"),
            *scorer_training.baseline_rows(test),
            (
                "bi-encoder cosine, zero-shot",
                test["bi_encoder"],
                "cosine ≥ {:.3f} (best on validation)".format(test["bi_encoder"]["threshold"]),
            ),
        ]
    )


def main(argv=None):
    args = parse_args(argv)
    accelerator = training.make_accelerator(args)
    model_path = args.model_name_or_path or minilm_path()
    bi_encoder_path = args.bi_encoder or minilm_path()
    started = time.time()

    # --- data: the *pairs config of a WES dataset folder or Hub id ---
    splits = scorer_training.load_pair_splits(args, logger)

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

    train_loader, validation_loader, test_loader = splits.loaders(args, collate)
    optimizer = training.create_optimizer(model, args)
    model, optimizer, train_loader, validation_loader, test_loader = accelerator.prepare(
        model, optimizer, train_loader, validation_loader, test_loader
    )
    run = training.TrainingRun(
        accelerator, args, logger, optimizer, train_loader, "train_wes_cross_encoder"
    )
    history = run.checkpointed_list("validation")

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

    # --- training, validated at the end of every epoch ---
    loss_fn = torch.nn.BCEWithLogitsLoss()
    model.train()
    for epoch in run.epochs(end_of_epoch=validate):
        for batch in run.batches(epoch):
            with accelerator.accumulate(model):
                labels = batch.pop("labels")
                loss = loss_fn(model(**batch).logits.squeeze(-1), labels)
                run.backward_and_step(loss, model)
            if run.after_batch(loss, epoch):
                break

    # --- the threshold scorer.json carries: the best accuracy on the validation split ---
    validation_probabilities, validation_labels = predict(validation_loader)
    scorer_threshold = best_threshold(validation_labels, validation_probabilities)

    # --- test: the cross-encoder next to EM, token F1 and the bi-encoder cosine ---
    probabilities, gathered_labels = predict(test_loader)
    test = {
        "cross_encoder": binary_metrics(gathered_labels, probabilities, CROSS_ENCODER_THRESHOLD)
    }
    test.update(scorer_training.string_baselines(splits.test))

    from sentence_transformers import SentenceTransformer

    bi_encoder = SentenceTransformer(bi_encoder_path, device=str(accelerator.device))
    validation_pairs = list(
        zip(splits.validation["article"], splits.validation["link_text"], strict=True)
    )
    test_pairs = list(zip(splits.test["article"], splits.test["link_text"], strict=True))
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

    cosine_threshold = best_threshold(splits.validation["is_same"], cosines(validation_pairs))
    test["bi_encoder"] = binary_metrics(
        splits.test["is_same"], cosines(test_pairs), cosine_threshold
    )
    logger.info(f"\nTest split ({len(test_pairs)} pairs):\n{results_table(test)}\n")

    # --- save: checkpoint, metrics.json, model card; temp folder then rename ---
    base_model = args.model_name_or_path or MINILM_HUB_ID
    metrics = {
        "base_model": base_model,
        "dataset": args.dataset,
        "config": args.config,
        "bi_encoder": args.bi_encoder or MINILM_HUB_ID,
        "num_processes": accelerator.num_processes,
        "num_pairs": splits.sizes(),
        **run.report("max_length", "max_train_samples"),
        "thresholds": {
            "cross_encoder": CROSS_ENCODER_THRESHOLD,
            **scorer_training.BASELINE_THRESHOLDS,
            "bi_encoder": cosine_threshold,
            "scorer": scorer_threshold,
        },
        "test": test,
        "train_seconds": round(time.time() - started, 1),
    }

    def write(folder: Path):
        accelerator.unwrap_model(model).save_pretrained(folder, save_function=accelerator.save)
        tokenizer.save_pretrained(folder)
        write_scorer_config(
            folder,
            "cross-encoder",
            scorer_threshold,
            score="sigmoid",
            **scorer_training.scorer_provenance(args, base_model),
        )

    def card() -> str:
        return training.render_card(
            CARD_TEMPLATE,
            card_data(args, base_model),
            base_model_text=f"`{base_model}`",
            results_table=results_table(test),
            max_length=args.max_length,
            cosine_threshold=f"{cosine_threshold:.3f}",
            scorer_threshold=f"{scorer_threshold:.3f}",
            validation_accuracy=f"{history[-1]['accuracy']:.3f}" if history else "n/a",
            **splits.card_values(),
            **run.card_values(),
        )

    return training.finish(accelerator, args, logger, metrics, write, card)


if __name__ == "__main__":
    main()
