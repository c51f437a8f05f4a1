"""Answer scorers: loading any saved WES scorer as a callable, and fitting the hybrid one.

A scorer is called as `scorer(questions, references, candidates)` and returns one score per
candidate answer (higher: more likely correct); `namesake wes judge` measures such callables
against human judgments. The scoring code itself is the `wes_similarity` metric's, imported
from the bundled module file, so the metric and namesake can never score differently.

The hybrid scorer (`kind: "hybrid"` in scorer.json) is a logistic regression over lexical
evidence (exact match, token F1, token recall, containment, ...) and the best-span cosine of
a bi-encoder (see the metric's `SpanEncoder`). `fit_hybrid_scorer` fits it on judged
answers of a dev split (EVOUNA's, question-disjoint from its test split) and, optionally, on
WES validation pairs, and saves it with the accuracy-maximising threshold of that dev split.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from namesake.io import NamesakeError, atomic_directory

BUNDLED_ENCODER = "sentence-transformers/all-MiniLM-L6-v2"
# Products of base features the combiner also weighs: the evidence that changes meaning
# with another (a contained gold answer next to a negation, a span match in a long answer).
PRODUCTS = (
    "containment*hedges",
    "token_recall*span_cosine",
    "span_cosine*span_cosine",
    "span_cosine*log_candidate_tokens",
    "containment*log_candidate_tokens",
    "hedges*log_candidate_tokens",
)


def combiner_features(base_features: Sequence[str]) -> list[str]:
    """The combiner's inputs: the base features, PRODUCTS, and every one of them again times
    `has_question`. Judged QA answers come with a question, WES name pairs without one, and
    the same evidence means different things in each (a sentence that contains the gold
    answer vs. a name that shares a word with the title): the products give each regime its
    own weights inside one regression."""
    plain = [f for f in base_features if f != "has_question"] + list(PRODUCTS)
    return ["has_question", *plain, *(f"{f}*has_question" for f in plain)]


@functools.cache
def metric_module():
    """The bundled `wes_similarity.py`, imported as a plain module."""
    from namesake.metrics import metric_path

    path = metric_path("wes_similarity") / "wes_similarity.py"
    spec = importlib.util.spec_from_file_location("namesake_wes_similarity", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_scorer_config(folder: str | os.PathLike, kind: str, threshold: float, **info) -> Path:
    """Writes `folder/scorer.json`: the format the metric reads (`read_scorer_config`), the
    scorer's kind, its threshold and any JSON-able `info`. The threshold travels with the
    model because a score's scale is the model's own (a sigmoid, a cosine, a regression's
    probability): only a threshold chosen on held-out data for this model means anything."""
    module = metric_module()
    path = Path(folder) / module.SCORER_FILE
    config = {
        "format": module.SCORER_FORMAT,
        "format_version": module.SCORER_FORMAT_VERSION,
        "kind": kind,
        "threshold": float(threshold),
        **info,
    }
    path.write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    read_scorer_config(folder)  # the metric can read what was written
    return path


def read_scorer_config(folder: str | os.PathLike) -> dict:
    """A saved scorer's checked `scorer.json`, read as the metric reads it."""
    config = metric_module().read_scorer_config(str(folder))
    if config is None:
        raise NamesakeError(f"{folder}: no scorer.json, not a saved WES scorer")
    return config


class AnswerScorer:
    """A saved scorer (or the metric's default, `name=None`) as a callable."""

    def __init__(self, name: str | None, batch_size: int = 64):
        self.scorer = metric_module().resolve_scorer(name)
        self.name = name or self.scorer.model
        self.kind, self.threshold = self.scorer.kind, self.scorer.threshold
        self.batch_size = batch_size

    def __call__(self, questions, references, candidates) -> np.ndarray:
        return self.scorer.score(questions, references, candidates, self.batch_size)


def load_answer_scorer(name: str | None, batch_size: int = 64) -> AnswerScorer:
    """A saved scorer folder or Hub id; None is the metric's versioned default."""
    return AnswerScorer(name, batch_size)


def hybrid_features(
    questions,
    references,
    candidates,
    encoder: str,
    max_length: int = 64,
    batch_size: int = 64,
    quantize: bool = True,
) -> np.ndarray:
    """The metric's HYBRID_FEATURES of each answer, with the bi-encoder `encoder`."""
    module = metric_module()
    span_encoder = module.SpanEncoder(
        module._local_model(encoder), max_length, batch_size, quantize, progress=True
    )
    return module.hybrid_features(questions, references, candidates, span_encoder)


def fit_combiner(features: np.ndarray, labels, weights=None, c: float = 1.0) -> dict:
    """A logistic regression over `combiner_features`, as the plain numbers the metric's
    LogisticCombiner reads."""
    from sklearn.linear_model import LogisticRegression

    module = metric_module()
    names = combiner_features(module.HYBRID_FEATURES)
    design = module.LogisticCombiner(
        {"features": names, "mean": [0], "scale": [1], "coef": [0], "intercept": 0}
    ).design(features)
    mean = design.mean(axis=0)
    scale = design.std(axis=0)
    scale[scale == 0] = 1.0
    model = LogisticRegression(C=c, max_iter=10_000)
    model.fit((design - mean) / scale, np.asarray(labels, dtype=int), sample_weight=weights)
    return {
        "type": "logistic-regression",
        "features": names,
        "mean": mean.tolist(),
        "scale": scale.tolist(),
        "coef": model.coef_[0].tolist(),
        "intercept": float(model.intercept_[0]),
    }


def fit_hybrid_scorer(
    out: str | os.PathLike,
    encoder: str,
    records: Sequence,
    max_length: int = 64,
    c: float = 1.0,
    batch_size: int = 64,
    trained_on: dict | None = None,
) -> tuple[dict, np.ndarray]:
    """Fits a hybrid scorer on the dev split of `records` and writes it to `out`
    (atomically); returns its scorer.json and its score of every record.

    `records`: judged answers (`namesake.wes.judgments.JudgedAnswer`), both splits; those
    without a question are WES name pairs (`wes_judged_answers`), weighed to count as much
    in total as the judged QA answers. The threshold is the one with the best accuracy on
    the dev QA answers. `encoder`: a bi-encoder folder (copied into the scorer, which then
    stands alone) or Hub id."""
    from namesake.wes.judge import best_threshold

    dev = np.array([r.split == "dev" for r in records], dtype=bool)
    has_question = np.array([bool(r.question) for r in records], dtype=bool)
    if not (dev & has_question).any():
        raise NamesakeError("fitting a hybrid scorer needs judged QA answers of a dev split")
    features = hybrid_features(
        [r.question or None for r in records],
        [list(r.references) for r in records],
        [r.candidate for r in records],
        encoder,
        max_length,
        batch_size,
    )
    labels = np.array([r.label for r in records])
    weights = np.ones(len(records))
    pairs = dev & ~has_question
    if pairs.any():
        weights[pairs] = (dev & has_question).sum() / pairs.sum()
    combiner = fit_combiner(features[dev], labels[dev], weights[dev], c)
    scores = metric_module().LogisticCombiner(combiner).predict_proba(features)
    qa_dev = dev & has_question
    threshold = best_threshold(labels[qa_dev], scores[qa_dev])
    with atomic_directory(out) as staging:
        encoder_ref = encoder
        if Path(encoder).is_dir():
            shutil.copytree(encoder, staging / "encoder")
            encoder_ref = "encoder"
        write_scorer_config(
            staging,
            "hybrid",
            threshold,
            encoder=encoder_ref,
            max_length=max_length,
            quantize=True,
            combiner=combiner,
            threshold_chosen_on="accuracy on the judged dev answers",
            trained_on=trained_on or {},
        )
    return read_scorer_config(out), scores


# Also at model_cards/wes_scorer.md (a link); here so that an installed namesake has it.
CARD_TEMPLATE = Path(__file__).resolve().parent / "scorer_card.md"


def scorer_card(name: str, config: dict, result: dict, results_table: str) -> str:
    """The model card of a fitted hybrid scorer, its `model-index` filled with the test
    ROC-AUC and accuracy per judged dataset of `result` (`namesake.wes.judge`)."""
    from huggingface_hub import EvalResult

    from namesake.training import render_card

    eval_results = []
    for dataset, block in result["datasets"].items():
        if dataset == "all":
            continue
        row = block["groups"]["all"]["scorers"][name]
        for metric, key in (("roc_auc", "roc_auc"), ("accuracy", "accuracy_saved")):
            if row.get(key) is not None:
                eval_results.append(
                    EvalResult(
                        task_type="text-classification",
                        task_name="QA answer correctness (human judgments)",
                        dataset_type="evouna" if not dataset.startswith("wes-") else "wes",
                        dataset_name=str(dataset),
                        dataset_split="test",
                        metric_type=metric,
                        metric_value=round(float(row[key]), 4),
                    )
                )
    trained = config.get("trained_on", {})
    encoder = config["encoder"]
    return render_card(
        CARD_TEMPLATE,
        {
            "library_name": "namesake",
            "license": "apache-2.0",
            "language": ["en"],
            "tags": ["wes", "question-answering-evaluation", "answer-equivalence"],
            "base_model": BUNDLED_ENCODER if encoder == BUNDLED_ENCODER else None,
            "model_name": name,
            "eval_results": eval_results,
        },
        model_id=name,
        encoder_text=f"`{encoder}`" + (" (in `encoder/`)" if encoder == "encoder" else ""),
        threshold=f"{config['threshold']:.3f}",
        training_text="; ".join(f"{k}: {v}" for k, v in trained.items()) or "see scorer.json",
        results_table=results_table,
    )
