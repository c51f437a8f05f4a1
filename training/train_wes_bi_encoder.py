"""Train a WES bi-encoder: does this link text name this Wikipedia article?

A linear script in the style of transformers' ``examples/pytorch/*_no_trainer.py``, with
Accelerate, the sibling of ``train_wes_cross_encoder.py`` (same arguments, same data, same
plumbing from ``namesake.training``, the same data, baselines and results table from
``namesake.wes.scoring.scorer_training``). The bi-encoder is the sentence-transformers recipe:
``AutoModel`` (``--model_name_or_path``, default the bundled all-MiniLM-L6-v2), mean pooling
over the attention mask, L2 normalisation; the article and the link text are embedded
separately and their cosine is the score. Any config with the columns ``article``,
``link_text`` and ``is_same`` works (``*pairs``, ``*hardpairs``; other columns are ignored).

**Loss: CoSENT over the labelled pairs plus the in-batch negatives.** Every batch gives a set
of positive pairs (the labelled ``is_same = 1`` rows) and a set of negative pairs: the
labelled ``is_same = 0`` rows (random or look-alike link texts of other articles) and every
in-batch cross pair (article of row i, link text of row j). A cross pair is left out when row
j is about the same article, when its link text is a labelled positive of row i's article in
the batch, or when it is the very string of row i's article (its cosine is 1 whatever the
weights: no signal). The loss is CoSENT (Su 2022, sentence-transformers' ``CoSENTLoss``)::

    log(1 + sum over positive p, negative n of exp(scale * (cos_n - cos_p)))

Why this one: the scorer is used with one cosine threshold for every pair, and it is judged by
ROC-AUC and accuracy over all pairs, across articles. ROC-AUC is the share of (positive,
negative) pairs ranked right; CoSENT is the smooth (log-sum-exp) version of exactly that count
over the batch, so it trains what is measured. MultipleNegativesRankingLoss only ranks the
candidates of each article against each other (a softmax per anchor), which leaves the scale
of cosines across articles free, and a threshold needs that scale; BCE on a scaled cosine
needs a learned offset and, averaged over the B² in-batch pairs, is dominated by easy
negatives, while the log-sum-exp weights each (positive, negative) pair by how badly it is
ordered, so the labelled (hard) negatives keep their weight next to the many in-batch ones.
It is deterministic: no sampling; the negatives are fixed by the batch (the seeded sampler
fixes the batches). With several processes every process gathers the embeddings, labels and
ids of the global batch (``gather_with_grad``, as ``train_dpr.py``), so the loss is the one a
single process with the global batch would compute; it is multiplied by the process count
before ``backward`` so that DDP's gradient average gives its gradient.

Each epoch ends with validation: ROC-AUC of the cosine, and accuracy and F1 at the cosine
threshold with the best validation accuracy (so an optimistic accuracy). The starting model
is scored the same way before training (zero-shot). At the end the threshold of the
finished model is chosen on the validation split, and the test split is scored by the
bi-encoder, the zero-shot starting model (threshold chosen on validation the same way),
exact match and token F1 (as in ``train_wes_cross_encoder.py``). Outputs, in ``--output_dir``
(written to a temporary sibling folder first, then renamed):

- a sentence-transformers folder (Transformer, mean Pooling, Normalize; ``modules.json``,
  ``sentence_bert_config.json``, ...): ``SentenceTransformer(output_dir)`` loads it;
- ``scorer.json`` (``namesake.wes.scoring.answer_scorer``): kind ``bi-encoder`` and the validation
  cosine threshold;
- ``metrics.json``: settings, loss and learning rate per optimizer step, zero-shot and
  per-epoch validation metrics, test metrics of every scorer;
- ``README.md``: the model card, filled from ``model_cards/wes_bi_encoder.md`` (with a
  ``model-index`` of the test results).

``--validation_file`` (CSV, JSON lines or Parquet with the same columns) replaces the
dataset's validation split: the per-epoch validation and the thresholds then come from it.
``--checkpointing_steps N`` saves the full training state every N optimizer steps to
``CHECKPOINT_DIR/step_N`` (default ``OUTPUT_DIR-checkpoints``); ``--resume_from_checkpoint
PATH|latest`` continues from one.

    accelerate launch training/train_wes_bi_encoder.py --dataset DIR_OR_HUB_ID \\
        --config 2018thresh5pairs --output_dir wes-bi-encoder \\
        [--model_name_or_path PATH_OR_HUB_ID] [--num_train_epochs 1] \\
        [--per_device_train_batch_size 32] [--learning_rate 2e-5] [--max_length 64] [--seed 0] \\
        [--scale 20] [--max_train_samples N] [--validation_file PAIRS.parquet] \\
        [--checkpointing_steps N] [--resume_from_checkpoint latest] [--max_grad_norm 1.0] \\
        [--mixed_precision no|fp16|bf16|auto] [--push_to_hub --hub_model_id USER/NAME]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from transformers import AutoModel, AutoTokenizer

from namesake import training
from namesake.bundled_models import MINILM_HUB_ID, minilm_path
from namesake.ecqg.dpr.modeling import gather_with_grad
from namesake.wes.scoring import scorer_training
from namesake.wes.scoring.answer_scorer import write_scorer_config
from namesake.wes.scoring.thresholds import best_threshold, binary_metrics

CARD_TEMPLATE = Path(__file__).resolve().parent.parent / "model_cards" / "wes_bi_encoder.md"
logger = training.setup_logging(__name__)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="Train a WES bi-encoder with Accelerate.")
    scorer_training.add_pair_data_arguments(
        parser,
        config_help="a config of the dataset with article, link_text and is_same columns "
        "(*pairs, *hardpairs)",
    )
    training.add_training_arguments(
        parser,
        model_help="sentence encoder to start from, path or Hub id (default: the bundled "
        "all-MiniLM-L6-v2); mean pooling and L2 normalisation are added",
        validation_help="pairs (CSV, JSON lines or Parquet; article, link_text, is_same) that "
        "replace the dataset's validation split: per-epoch validation and the cosine "
        "thresholds of the trained and the starting model",
        learning_rate=2e-5,
        **training.ENCODER_FINE_TUNING_DEFAULTS,
    )
    parser.add_argument(
        "--max_length", type=int, default=64, help="tokens kept per article and per link text"
    )
    parser.add_argument(
        "--scale",
        type=float,
        default=20.0,
        help="CoSENT scale: cosine differences are multiplied by it before the log-sum-exp",
    )
    args = parser.parse_args(argv)
    training.check_training_arguments(parser, args, "max_length")
    if args.scale <= 0:
        parser.error("--scale must be positive")
    return args


# --- model and loss ---


def embed(model, inputs) -> torch.Tensor:
    """Mean of the last hidden states over the attention mask, L2-normalised
    (sentence-transformers' Pooling(mean) + Normalize)."""
    hidden = model(**inputs).last_hidden_state
    mask = inputs["attention_mask"].unsqueeze(-1).to(hidden.dtype)
    pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
    return F.normalize(pooled.float(), dim=-1)


def pair_masks(labels, article_ids, text_ids) -> tuple[torch.Tensor, torch.Tensor]:
    """``(positive, negative)``: boolean [B, B] masks over (article of row i, link text of
    row j) of a batch. Positives: the labelled ``is_same = 1`` rows (diagonal). Negatives: the
    labelled ``is_same = 0`` rows, and the cross pairs i != j where row j is about another
    article, its link text is no labelled positive of article i in the batch, and it is not
    article i's own string."""
    labels = labels.bool()
    diagonal = torch.eye(len(labels), dtype=torch.bool, device=labels.device)
    positive = diagonal & labels[:, None]
    same_article = article_ids[:, None] == article_ids[None, :]
    same_text = text_ids[:, None] == text_ids[None, :]
    # known[i, j]: some positive row k of article i has the link text of row j.
    known = ((same_article & labels[None, :]).float() @ same_text.float()) > 0
    is_article = text_ids[None, :] == article_ids[:, None]
    cross = ~diagonal & ~same_article & ~known & ~is_article
    negative = (diagonal & ~labels[:, None]) | cross
    return positive, negative


def cosent_loss(articles, texts, labels, article_ids, text_ids, scale: float) -> torch.Tensor:
    """CoSENT over the batch: ``log(1 + Σ_{p, n} exp(scale (cos_n - cos_p)))`` for every
    positive pair p and negative pair n of :func:`pair_masks`; ``articles`` and ``texts``
    are L2-normalised [B, d] embeddings (row i: the pair of row i).

    The double sum factorises, ``Σ_p Σ_n e^{s(n - p)} = (Σ_n e^{s n}) (Σ_p e^{-s p})``, so
    the loss is ``softplus(LSE(s cos_N) + LSE(-s cos_P))``, O(B²). Zero (with a gradient
    graph) when the batch has no positive or no negative pair."""
    cosines = articles @ texts.T
    positive, negative = pair_masks(labels, article_ids, text_ids)
    if not positive.any() or not negative.any():
        return cosines.sum() * 0.0
    negatives = torch.logsumexp(scale * cosines[negative], 0)
    positives = torch.logsumexp(-scale * cosines[positive], 0)
    return F.softplus(negatives + positives)


# --- model card ---


def card_data(args, base_model: str, test: dict | None = None, model_id: str = "") -> dict:
    """The card's YAML header (a local base model or dataset is left out), with a
    ``model-index`` of the test results when given."""
    from huggingface_hub import EvalResult

    dataset = training.hub_id(args.dataset)
    eval_results = None
    if test:
        eval_results = [
            EvalResult(
                task_type="text-classification",
                task_name="Entity name similarity (same entity or not)",
                dataset_type=dataset or "wes",
                dataset_name=f"WES {args.config}",
                dataset_config=args.config,
                dataset_split="test",
                metric_type=metric,
                metric_name=name,
                metric_value=round(float(test["bi_encoder"][metric]), 4),
            )
            for metric, name in (("accuracy", "Accuracy"), ("f1", "F1"), ("roc_auc", "ROC-AUC"))
        ]
    return scorer_training.card_data(
        args,
        base_model,
        "sentence-similarity",
        [
            "sentence-transformers",
            "bi-encoder",
            "entity-similarity",
            "wes",
            "question-answering-evaluation",
        ],
        model_name=model_id or None,
        eval_results=eval_results,
    )


def results_table(test: dict) -> str:
    return scorer_training.scorer_table(
        [
            (
                "bi-encoder (this model)",
                test["bi_encoder"],
                "cosine ≥ {:.3f} (best on validation)".format(test["bi_encoder"]["threshold"]),
            ),
            (
                "bi-encoder cosine, zero-shot (starting model)",
                test["zero_shot"],
                "cosine ≥ {:.3f} (best on validation)".format(test["zero_shot"]["threshold"]),
            ),
            *scorer_training.baseline_rows(test),
        ]
    )


def save_sentence_transformer(model, tokenizer, folder: Path, max_length: int) -> None:
    """``folder`` as a sentence-transformers model: Transformer (the trained encoder),
    mean Pooling, Normalize; cosine similarity."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import (
        Normalize,
        Pooling,
        Transformer,
    )

    with tempfile.TemporaryDirectory() as tmp:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        transformer = Transformer(tmp, max_seq_length=max_length)
        dimension = model.config.hidden_size
        st = SentenceTransformer(
            modules=[transformer, Pooling(dimension, pooling_mode="mean"), Normalize()],
            device="cpu",
            similarity_fn_name="cosine",
        )
        st.save(str(folder))


def main(argv=None):
    args = parse_args(argv)
    accelerator = training.make_accelerator(args)
    model_path = args.model_name_or_path or minilm_path()
    base_model = args.model_name_or_path or MINILM_HUB_ID
    started = time.time()

    # --- data: any config with article, link_text, is_same (other columns ignored) ---
    splits = scorer_training.load_pair_splits(args, logger)
    # One id per distinct string of the training pairs (the same in every process), so the
    # loss can tell a batch's articles and link texts apart after gathering.
    strings = dict.fromkeys([*splits.train["article"], *splits.train["link_text"]])
    string_ids = {s: i for i, s in enumerate(strings)}

    # --- model: the encoder; mean pooling and normalisation in `embed` ---
    tokenizer = AutoTokenizer.from_pretrained(model_path)
    model = AutoModel.from_pretrained(model_path)
    training.freeze_unused_pooler(model)

    def tokenize(texts):
        return tokenizer(
            texts, truncation=True, max_length=args.max_length, padding=True, return_tensors="pt"
        )

    def collate(rows):
        return {
            # One forward pass for both sides (DDP expects one forward per backward):
            # rows 0..B-1 are the articles, B..2B-1 the link texts.
            "inputs": dict(tokenize([r["article"] for r in rows] + [r["link_text"] for r in rows])),
            "labels": torch.tensor([int(r["is_same"]) for r in rows]),
            "article_ids": torch.tensor([string_ids.get(r["article"], -1) for r in rows]),
            "text_ids": torch.tensor([string_ids.get(r["link_text"], -2) for r in rows]),
        }

    train_loader, validation_loader, test_loader = splits.loaders(args, collate)
    optimizer = training.create_optimizer(model, args)
    model, optimizer, train_loader, validation_loader, test_loader = accelerator.prepare(
        model, optimizer, train_loader, validation_loader, test_loader
    )

    def predict(loader):
        """Cosines and labels of a split, gathered from every process."""
        model.eval()
        cosines, labels = [], []
        with torch.no_grad():
            for batch in loader:
                articles, texts = embed(model, batch["inputs"]).chunk(2)
                cos = (articles * texts).sum(-1)
                cos, batch_labels = accelerator.gather_for_metrics((cos, batch["labels"]))
                cosines.append(cos.cpu())
                labels.append(batch_labels.cpu())
        model.train()
        return torch.cat(cosines).numpy().astype(np.float64), torch.cat(labels).numpy()

    def scored(cosines, labels) -> dict:
        """Metrics of `predict`'s output at the cosine threshold with the best accuracy on
        these pairs."""
        return binary_metrics(labels, cosines, best_threshold(labels, cosines))

    # --- zero-shot: the starting model, before any resume restores trained weights ---
    with training.rng_untouched():
        zero_shot_validation = scored(*predict(validation_loader))
        zero_shot_test_cosines, _ = predict(test_loader)
    logger.info(
        "zero-shot validation: ROC-AUC {roc_auc:.4f}, accuracy {accuracy:.4f} at "
        "cosine ≥ {threshold:.3f}".format(**zero_shot_validation)
    )

    run = training.TrainingRun(
        accelerator, args, logger, optimizer, train_loader, "train_wes_bi_encoder"
    )
    history = run.checkpointed_list("validation")

    def validate(epoch: int) -> None:
        """Validation metrics at the end of `epoch`, with its mean training loss."""
        with training.rng_untouched():
            epoch_metrics = scored(*predict(validation_loader))
        epoch_metrics.update(run.epoch_summary(epoch))
        history.append(epoch_metrics)
        logger.info(
            f"epoch {epoch + 1}: train loss {epoch_metrics['train_loss']:.4f}, validation "
            f"ROC-AUC {epoch_metrics['roc_auc']:.4f}, accuracy {epoch_metrics['accuracy']:.4f} "
            f"at cosine ≥ {epoch_metrics['threshold']:.3f} (zero-shot: ROC-AUC "
            f"{zero_shot_validation['roc_auc']:.4f}, accuracy "
            f"{zero_shot_validation['accuracy']:.4f})"
        )

    # --- training, validated at the end of every epoch ---
    model.train()
    for epoch in run.epochs(end_of_epoch=validate):
        for batch in run.batches(epoch):
            with accelerator.accumulate(model):
                articles, texts = embed(model, batch["inputs"]).chunk(2)
                # the global batch's loss (every process's rows gathered), × processes for DDP
                inputs = (articles, texts, batch["labels"], batch["article_ids"], batch["text_ids"])
                loss = cosent_loss(*map(gather_with_grad, inputs), args.scale)
                run.backward_and_step(loss * accelerator.num_processes, model)
            if run.after_batch(loss, epoch):
                break

    # --- threshold on validation; test: the bi-encoder, zero-shot, EM and token F1 ---
    validation_cosines, validation_labels = predict(validation_loader)
    threshold = best_threshold(validation_labels, validation_cosines)
    validation = binary_metrics(validation_labels, validation_cosines, threshold)
    test_cosines, test_labels = predict(test_loader)
    test = {
        "bi_encoder": binary_metrics(test_labels, test_cosines, threshold),
        "zero_shot": binary_metrics(
            test_labels, zero_shot_test_cosines, zero_shot_validation["threshold"]
        ),
    }
    test.update(scorer_training.string_baselines(splits.test))
    logger.info(f"\nTest split ({len(splits.test)} pairs):\n{results_table(test)}\n")

    # --- save: sentence-transformers folder, scorer.json, metrics.json, model card ---
    metrics = {
        "base_model": base_model,
        "dataset": args.dataset,
        "config": args.config,
        "loss": "CoSENT over labelled pairs and in-batch negatives",
        "num_processes": accelerator.num_processes,
        "num_pairs": splits.sizes(),
        **run.report("max_length", "scale", "max_train_samples"),
        "thresholds": {
            "bi_encoder": threshold,
            "zero_shot": zero_shot_validation["threshold"],
            **scorer_training.BASELINE_THRESHOLDS,
        },
        "zero_shot_validation": zero_shot_validation,
        "final_validation": validation,
        "test": test,
        "train_seconds": round(time.time() - started, 1),
    }

    def write(folder: Path):
        save_sentence_transformer(
            accelerator.unwrap_model(model), tokenizer, folder, args.max_length
        )
        write_scorer_config(
            folder,
            "bi-encoder",
            threshold,
            similarity="cosine",
            validation_accuracy=validation["accuracy"],
            **scorer_training.scorer_provenance(args, base_model),
        )

    def card() -> str:
        values = run.card_values()
        return training.render_card(
            CARD_TEMPLATE,
            card_data(args, base_model, test, values["model_id"]),
            base_model_text=f"`{base_model}`",
            results_table=results_table(test),
            max_length=args.max_length,
            scale=f"{args.scale:g}",
            threshold=f"{threshold:.3f}",
            validation_accuracy=f"{validation['accuracy']:.3f}",
            validation_roc_auc=f"{validation['roc_auc']:.3f}",
            zero_shot_validation_roc_auc=f"{zero_shot_validation['roc_auc']:.3f}",
            **splits.card_values(),
            **values,
        )

    return training.finish(accelerator, args, logger, metrics, write, card)


if __name__ == "__main__":
    main()
