"""What the two WES scorer training scripts, ``training/train_wes_cross_encoder.py`` and
``training/train_wes_bi_encoder.py``, share beyond ``namesake.training``: they train on the
same pairs, stand their test results beside the same string baselines, and save a scorer
(``scorer.json``) described the same way. Written once here, the two scripts cannot drift
apart in what they read, compare against or report.

- :func:`add_pair_data_arguments` / :func:`load_pair_splits`: ``--dataset``, ``--config``,
  ``--max_train_samples``, ``--max_eval_samples`` and the :class:`PairSplits` they select
  (``--validation_file`` replacing the validation split), with their DataLoaders, sizes and
  model-card description;
- :func:`string_baselines`, :data:`BASELINE_THRESHOLDS`, :func:`baseline_rows`: exact match
  and token F1 of the test pairs, their thresholds and their rows of the results table;
- :func:`scorer_table`: the results table of every scorer;
- :func:`scorer_provenance`, :func:`card_data`: what ``scorer.json`` records of where a
  trained scorer comes from, and the YAML header of its model card.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from namesake import training
from namesake.markdown import markdown_table
from namesake.outputs import add_input
from namesake.text import exact_match, token_f1
from namesake.wes.scoring.thresholds import binary_metrics

if TYPE_CHECKING:
    import datasets

PAIR_COLUMNS = ["article", "link_text", "is_same"]
SPLITS = ("train", "validation", "test")
#: token F1 at or above it: "same" (the token-F1 baseline's decision)
TOKEN_F1_THRESHOLD = 0.5
#: the string baselines' decision rules, as ``metrics.json``'s ``thresholds`` records them
BASELINE_THRESHOLDS = {"exact_match": "normalised strings equal", "token_f1": TOKEN_F1_THRESHOLD}


def add_pair_data_arguments(parser: argparse.ArgumentParser, config_help: str) -> None:
    """The options :func:`load_pair_splits` reads, beside the shared ones
    (``--validation_file`` comes from :func:`namesake.training.add_training_arguments`)."""
    add_input(parser, "--dataset", required=True, help="WES dataset folder or Hub id")
    parser.add_argument("--config", default="2018thresh5pairs", help=config_help)
    parser.add_argument(
        "--max_train_samples", type=int, default=None, help="train on the first N pairs only"
    )
    parser.add_argument(
        "--max_eval_samples",
        type=int,
        default=None,
        help="score the first N validation and test pairs only",
    )


@dataclass
class PairSplits:
    """The (article, link_text, is_same) pairs a WES scorer is trained, validated and tested
    on, with the dataset and config they come from."""

    dataset: str
    config: str
    train: datasets.Dataset
    validation: datasets.Dataset
    test: datasets.Dataset

    def sizes(self) -> dict[str, int]:
        """Pairs per split, as ``metrics.json``'s ``num_pairs``."""
        return {
            "train": len(self.train),
            "validation": len(self.validation),
            "test": len(self.test),
        }

    def loaders(self, args, collate) -> tuple:
        """``(train, validation, test)`` DataLoaders, all batched by ``collate``: the training
        pairs shuffled in ``--per_device_train_batch_size`` batches, the others in order in
        ``--per_device_eval_batch_size`` batches (to be prepared by the Accelerator)."""
        from torch.utils.data import DataLoader

        return (
            DataLoader(
                self.train,
                batch_size=args.per_device_train_batch_size,
                shuffle=True,
                collate_fn=collate,
            ),
            DataLoader(
                self.validation, batch_size=args.per_device_eval_batch_size, collate_fn=collate
            ),
            DataLoader(self.test, batch_size=args.per_device_eval_batch_size, collate_fn=collate),
        )

    def card_values(self) -> dict:
        """The data, as both model cards describe it (a local folder said as such)."""
        local = training.hub_id(self.dataset) is None
        return {
            "dataset_text": f"`{self.dataset}`" + (" (a local folder)" if local else ""),
            "config": self.config,
            "n_train": f"{len(self.train):,}",
            "n_validation": f"{len(self.validation):,}",
            "n_test": f"{len(self.test):,}",
        }


def load_pair_splits(args, logger) -> PairSplits:
    """The splits of ``--dataset``'s ``--config`` (any config with the columns article,
    link_text and is_same: ``*pairs``, ``*hardpairs``; other columns are dropped), the
    validation split replaced by ``--validation_file`` when given. The training pairs are
    shuffled with ``--seed`` and cut to ``--max_train_samples``, the validation and test pairs
    cut to ``--max_eval_samples``. Exits naming a missing split or column."""
    import datasets

    raw = datasets.load_dataset(args.dataset, args.config)
    if args.validation_file:
        raw["validation"] = training.read_data_file(args.validation_file)
    for split in SPLITS:
        if split not in raw:
            sys.exit(f"{args.dataset} / {args.config} has no {split!r} split (has {list(raw)})")
        missing = set(PAIR_COLUMNS) - set(raw[split].column_names)
        if missing:
            sys.exit(f"{split} split lacks columns {sorted(missing)}")
    train, validation, test = (raw[split].select_columns(PAIR_COLUMNS) for split in SPLITS)
    train = train.shuffle(seed=args.seed)
    if args.max_train_samples is not None:
        train = train.select(range(min(args.max_train_samples, len(train))))
    if args.max_eval_samples is not None:
        validation = validation.select(range(min(args.max_eval_samples, len(validation))))
        test = test.select(range(min(args.max_eval_samples, len(test))))
    logger.info(f"pairs: train {len(train)}, validation {len(validation)}, test {len(test)}")
    return PairSplits(args.dataset, args.config, train, validation, test)


def string_baselines(pairs) -> dict[str, dict]:
    """Exact match and token F1 of each pair's link_text against its article, after AmbER's
    answer normalisation (``namesake.text``), scored like the trained scorer (accuracy, F1,
    ROC-AUC at :data:`BASELINE_THRESHOLDS`): what a trained scorer has to beat."""
    labels = np.asarray(pairs["is_same"], dtype=int)
    texts = list(zip(pairs["link_text"], pairs["article"], strict=True))
    return {
        "exact_match": binary_metrics(labels, [exact_match(t, a) for t, a in texts], 0.5),
        "token_f1": binary_metrics(labels, [token_f1(t, a) for t, a in texts], TOKEN_F1_THRESHOLD),
    }


def baseline_rows(test: dict) -> list[tuple[str, dict, str]]:
    """The :func:`string_baselines` rows of :func:`scorer_table`."""
    return [
        ("exact match (AmbER-normalised)", test["exact_match"], "equal"),
        ("token F1 (AmbER-normalised)", test["token_f1"], f"F1 ≥ {TOKEN_F1_THRESHOLD}"),
    ]


def scorer_table(rows: list[tuple[str, dict, str]]) -> str:
    """The Markdown results table of the console and the model card: one row per scorer
    (name, its test metrics, the rule by which it says "same")."""
    return markdown_table(
        ["scorer", "accuracy", "F1", "ROC-AUC", '"same" when'],
        (
            [name, f"{m['accuracy']:.3f}", f"{m['f1']:.3f}", f"{m['roc_auc']:.3f}", rule]
            for name, m, rule in rows
        ),
        "lrrrl",
    )


def card_data(args, base_model: str, pipeline_tag: str, tags: list[str], **fields) -> dict:
    """The YAML header of a trained scorer's model card: a sentence-transformers model judged
    by accuracy, F1 and ROC-AUC, trained from `base_model` on ``--dataset``, either left out
    when it is a local folder (no Hub id to claim); `fields` adds what one card has beyond
    (its ``model-index`` results, say)."""
    dataset = training.hub_id(args.dataset)
    return {
        "library_name": "sentence-transformers",
        "pipeline_tag": pipeline_tag,
        "license": args.license,
        "base_model": training.hub_id(base_model),
        "datasets": [dataset] if dataset else None,
        "language": ["en"],
        "metrics": ["accuracy", "f1", "roc_auc"],
        "tags": tags,
        **fields,
    }


def scorer_provenance(args, base_model: str) -> dict:
    """What ``scorer.json`` records of where a trained scorer comes from: the pairs its
    threshold was chosen on (``--validation_file``, else the dataset's validation split), its
    base model, dataset and config."""
    return {
        "threshold_chosen_on": args.validation_file
        or f"validation split of {args.dataset}/{args.config}",
        "base_model": base_model,
        "dataset": args.dataset,
        "config": args.config,
    }
