"""DPR's retrieval accuracy: answer matching with DPR's tokenizer, top-k accuracy, and the
``namesake ecqg evaluate-dpr`` run (:func:`evaluate_retrieval`).

:func:`evaluate_retrieval` reads passages from a passages Parquet file (one row per passage,
not split further; :func:`namesake.ecqg.passages.read_passages`) or a KILT JSON-lines knowledge
source (split into DPR's 100-word passages, ids ``{wikipedia_id}_{n}``). Every passage is its
own entry of a flat index, so the ranking is over passages, as in DPR. Questions come from DPR's
``question \\t ["answers"]`` CSV/TSV or a JSON file
(:func:`namesake.ecqg.dpr.data.read_qa_file`). A question is answered at k when one of its
first k passages contains an answer (:func:`has_answer`).

By default the search is :class:`namesake.retrieval.DenseRetriever`'s, with the similarity the
passage model declares: the dot product, as trained, for the DPR encoders namesake exports;
cosine for models that declare nothing. ``similarity="dot"`` or ``"cosine"`` forces one.

:func:`evaluate_runs` puts several encoders side by side on the same questions and passages
(the ECQG paper's Table 3): labelled dense runs (a ``train_dpr.py`` folder or any
sentence-transformers model; a folder whose training was skipped keeps its row, with the
reason), Hugging Face DPR checkpoints (inner product unless told otherwise), and DrQA's TF-IDF.
With Lewis et al.'s overlap annotations it adds each run's accuracy on their subsets.
"""

from __future__ import annotations

import json
import os
import stat
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import regex

from namesake.ecqg.dpr.embedding_cache import WHOLE
from namesake.errors import BadInputError, NamesakeError
from namesake.markdown import markdown_table
from namesake.outputs import atomic_file
from namesake.papers import NOT_IN_PAPER, paper

DEFAULT_KS = (1, 5, 20, 100)


# DPR's SimpleTokenizer (dpr/utils/tokenizers.py): runs of letters/digits/marks, or any single
# other non-space, non-control character.
_TOKEN = regex.compile(r"[\p{L}\p{N}\p{M}]+|[^\p{Z}\p{C}]", flags=regex.IGNORECASE | regex.UNICODE)


def dpr_tokens(text: str) -> list[str]:
    """DPR's uncased simple tokens of `text` (after Unicode NFD normalisation)."""
    return [t.lower() for t in _TOKEN.findall(unicodedata.normalize("NFD", text))]


def has_answer(text: str, answers: Iterable[str]) -> bool:
    """Whether `text` contains one of `answers` (DPR's ``has_answer``, string match mode).

    As DPR: both are NFD-normalised, lower-cased and split by DPR's simple tokenizer (runs of
    letters/digits, every punctuation mark its own token); an answer matches when its token
    sequence occurs contiguously in the passage's. So case and spacing around punctuation do
    not matter ("U.S." matches "u . s ."), punctuation itself does, whole tokens only ("art"
    does not match "party"), and articles are *not* removed (unlike SQuAD's EM): "the Beatles"
    does not match a passage with "Beatles" only. Empty answers never match.
    """
    passage = dpr_tokens(text)
    for answer in answers:
        tokens = dpr_tokens(answer)
        if not tokens:
            continue
        n = len(tokens)
        for start in range(len(passage) - n + 1):
            if passage[start : start + n] == tokens:
                return True
    return False


def top_k_accuracy(
    rankings: Sequence[Sequence],
    answers: Sequence[Iterable[str]],
    passages_text: Mapping | Sequence[str],
    ks: Iterable[int] = DEFAULT_KS,
) -> dict[str, float]:
    """DPR's top-k retrieval accuracy: the share of questions with an answer-bearing passage
    among their first k.

    ``rankings[i]`` lists question i's passages best first, as keys (ids or indices) of
    ``passages_text``; ``answers[i]`` its answers. Returns ``{"top_1": ..., "top_5": ...}``;
    a question with fewer than k passages ranked counts as a miss unless one of those hits.
    """
    ks = sorted({int(k) for k in ks})
    if not ks or ks[0] < 1:
        raise ValueError("every k must be at least 1")
    if len(rankings) != len(answers):
        raise ValueError(f"{len(rankings)} rankings for {len(answers)} questions")
    hits = dict.fromkeys(ks, 0)
    for ranking, question_answers in zip(rankings, answers, strict=True):
        question_answers = list(question_answers)
        first = None
        for rank, key in enumerate(list(ranking)[: ks[-1]]):
            if has_answer(passages_text[key], question_answers):
                first = rank
                break
        if first is None:
            continue
        for k in ks:
            if first < k:
                hits[k] += 1
    total = len(rankings)
    return {f"top_{k}": (hits[k] / total if total else 0.0) for k in ks}


PARQUET_MAGIC = b"PAR1"


class EncoderPair(NamedTuple):
    """A dense model's two sides, passage first (as `evaluate_retrieval` and `EncoderRun`
    take them); `question` None: the passage model encodes the questions too."""

    passage: str
    question: str | None


def model_dir_encoders(model_dir: str | os.PathLike) -> EncoderPair:
    """The sentence-transformers folders that ``training/train_dpr.py`` writes into its
    output directory."""
    root = Path(model_dir)
    return EncoderPair(str(root / "st_passage_encoder"), str(root / "st_question_encoder"))


def dense_model_encoders(spec: str | os.PathLike) -> EncoderPair:
    """The encoders of a dense model `spec`: a ``training/train_dpr.py`` output folder gives
    its two sentence-transformers exports; anything else is one sentence-transformers model
    (Hub id or folder) for both sides."""
    if (Path(spec) / "st_passage_encoder").is_dir():
        return model_dir_encoders(spec)
    return EncoderPair(str(spec), None)


def _is_parquet(path: str | os.PathLike) -> bool:
    """Whether `path` is a Parquet file, by its magic bytes. A pipe is not looked into (what
    is read of it would be lost to the KILT reader), and cannot be Parquet, which is read
    by seeking; a missing file is a BadInputError naming it."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open(path, "rb") as f:
            return f.read(len(PARQUET_MAGIC)) == PARQUET_MAGIC
    except FileNotFoundError:
        raise BadInputError(path, None, "no such passages file") from None


def read_passage_documents(path: str | os.PathLike) -> list:
    """Passages as one-passage ``Document``s (``wikipedia_id`` = passage id), from a passages
    Parquet file or a KILT knowledge source (told apart by the Parquet magic bytes)."""
    from namesake.ecqg.passages import read_passages
    from namesake.retrieval.corpus import Document, read_kilt_documents, split_passages

    if _is_parquet(path):
        rows = read_passages(path, columns=["id", "title", "text"]).to_pylist()
        return [Document(str(r["id"]), r["title"] or "", r["text"] or "") for r in rows]
    counts: dict[str, int] = {}
    out = []
    for passage in split_passages(read_kilt_documents(path)):
        n = counts.get(passage.wikipedia_id, 0)
        counts[passage.wikipedia_id] = n + 1
        out.append(Document(f"{passage.wikipedia_id}_{n}", passage.title, passage.text))
    return out


@dataclass(frozen=True)
class EncoderRun:
    """One row of an evaluation: a labelled retriever over the test passages.

    ``kind``: "dense" (sentence-transformers encoders), "dpr" (Hugging Face DPR checkpoints) or
    "tfidf"; ``not_trained``: why a requested encoder does not exist (its row says so)."""

    label: str
    kind: str = "dense"
    passage_model: str | None = None
    question_model: str | None = None
    not_trained: str | None = None


def dense_run(label: str, spec: str) -> EncoderRun:
    """A labelled dense run of `spec`: a ``train_dpr.py`` folder, possibly not trained, or a
    sentence-transformers model."""
    from namesake.ecqg.dpr.not_trained import not_trained_reason

    reason = not_trained_reason(spec)
    if reason is not None:
        return EncoderRun(label, not_trained=reason)
    passage, question = dense_model_encoders(spec)
    return EncoderRun(label, "dense", passage, question)


def encoder_runs(
    model_dir: str | None = None,
    model: str | None = None,
    query_model: str | None = None,
    labelled: Sequence[tuple[str, str]] = (),
    dpr_question_encoder: str | None = None,
    dpr_context_encoder: str | None = None,
    tfidf: bool = False,
) -> list[EncoderRun]:
    """The rows of `namesake ecqg evaluate-dpr`, in its table's order: a ``train_dpr.py``
    folder (`model_dir`) or a sentence-transformers `model` (with its `query_model`), each
    labelled dense run (``(label, spec)``, see `dense_run`), Facebook's DPR checkpoints when
    either side is named (the other its default), and TF-IDF."""
    from namesake.retrieval.encoders import DEFAULT_CONTEXT_ENCODER, DEFAULT_QUESTION_ENCODER

    runs = []
    if model_dir:
        passage, question = model_dir_encoders(model_dir)
        runs.append(EncoderRun(str(model_dir), "dense", passage, question))
    elif model:
        runs.append(EncoderRun(str(model), "dense", model, query_model))
    runs += [dense_run(label, spec) for label, spec in labelled]
    if dpr_question_encoder or dpr_context_encoder:
        question = dpr_question_encoder or DEFAULT_QUESTION_ENCODER
        context = dpr_context_encoder or DEFAULT_CONTEXT_ENCODER
        runs.append(EncoderRun("DPR (checkpoint)", "dpr", context, question))
    if tfidf:
        runs.append(EncoderRun("TF-IDF", "tfidf"))
    return runs


def rank_passages(
    run: EncoderRun,
    passages: list,
    questions: list[str],
    k: int,
    *,
    similarity: str | None = None,
    batch_size: int = 64,
    device: str | None = None,
    embeddings_cache: str | os.PathLike | None = None,
) -> tuple[list[list[str]], str | None]:
    """Each question's top `k` passage ids under `run`, and the similarity searched with.

    A dense run's passage embeddings come from `embeddings_cache` when it holds them for this
    model and these passages, and are stored there otherwise
    (:mod:`namesake.ecqg.dpr.embedding_cache`)."""
    if run.kind == "tfidf":
        from namesake.retrieval.tfidf import TfidfRetriever

        retriever = TfidfRetriever.build(passages)
        found = retriever.search(questions, k)
        return [[pid for pid, _ in hits] for hits in found], None
    options = {"index": "flat", "batch_size": batch_size, "words": WHOLE, "device": device}
    options |= {"show_progress": True, "similarity": similarity}  # minutes per encoder at scale
    if run.kind == "dpr":
        from namesake.retrieval.dpr import DPRRetriever

        retriever = DPRRetriever.build(
            passages,
            question_encoder=run.question_model,
            context_encoder=run.passage_model,
            **options,
        )
    else:
        from namesake.ecqg.dpr.embedding_cache import flat_dense_retriever

        del options["index"], options["words"]
        retriever = flat_dense_retriever(
            passages,
            run.passage_model,
            run.question_model,
            cache=embeddings_cache,
            **options,
        )
    found = retriever.search(questions, k)
    return [[pid for pid, _ in hits] for hits in found], retriever.similarity


def _read_test_inputs(passages_path, test_file, cutoffs, similarity):
    """The checked cut-offs, questions (with the test file's report), passages and their texts."""
    from namesake.ecqg.dpr.data import DPRFileError, read_qa_file

    cutoffs = sorted({int(k) for k in cutoffs})
    if not cutoffs or cutoffs[0] < 1:
        raise ValueError("every cut-off must be at least 1")
    if similarity not in (None, "cosine", "dot"):
        raise ValueError(f"similarity must be cosine or dot, not {similarity!r}")
    report: dict = {}
    try:
        qas = read_qa_file(test_file, report=report)
    except DPRFileError as error:
        raise NamesakeError(str(error)) from None
    if not qas:
        raise BadInputError(
            test_file, None, f"no usable questions ({report.get('skipped', 0)} skipped)"
        )
    passages = read_passage_documents(passages_path)
    if not passages:
        raise BadInputError(passages_path, None, "no passages")
    texts = {p.wikipedia_id: p.text for p in passages}
    if len(texts) != len(passages):
        raise BadInputError(passages_path, None, "passage ids are not unique")
    return cutoffs, qas, report, passages, texts


def evaluate_retrieval(
    passages_path: str | os.PathLike,
    test_file: str | os.PathLike,
    passage_model: str,
    question_model: str | None = None,
    *,
    cutoffs: Iterable[int] = DEFAULT_KS,
    similarity: str | None = None,
    batch_size: int = 64,
    device: str | None = None,
    out: str | os.PathLike | None = None,
    embeddings_cache: str | os.PathLike | None = None,
) -> dict:
    """Top-k retrieval accuracy of one DPR bi-encoder: :func:`evaluate_runs` with one dense
    run, in the flat layout that ``evaluate-dpr --model/--model-dir`` writes.

    `passage_model` / `question_model` are sentence-transformers folders or Hub ids (the
    question encoder defaults to the passage encoder); `similarity` None searches with the one
    the passage model declares, ``"dot"`` / ``"cosine"`` force one. Returns ``{"metrics":
    {"top_1": ...}, "questions", "skipped_questions", "passages", "similarity", ...}``, also
    written to `out` as JSON (atomically) when given. `embeddings_cache`: see
    :func:`evaluate_runs`.
    """
    result = evaluate_runs(
        passages_path,
        test_file,
        [EncoderRun("", "dense", passage_model, question_model)],
        cutoffs=cutoffs,
        similarity=similarity,
        batch_size=batch_size,
        device=device,
        embeddings_cache=embeddings_cache,
    )
    (run,) = result["runs"]
    result = {
        "metrics": run["metrics"],
        "questions": result["questions"],
        "skipped_questions": result["skipped_questions"],
        "passages": result["passages"],
        "similarity": run["similarity"],
        "question_model": question_model,
        "passage_model": passage_model,
        "test_file": str(test_file),
    }
    if out is not None:
        with atomic_file(out, "w") as f:
            f.write(json.dumps(result, indent=2) + "\n")
    return result


def evaluate_runs(
    passages_path: str | os.PathLike,
    test_file: str | os.PathLike,
    runs: Sequence[EncoderRun],
    *,
    cutoffs: Iterable[int] = DEFAULT_KS,
    similarity: str | None = None,
    batch_size: int = 64,
    device: str | None = None,
    overlap_annotations: str | os.PathLike | None = None,
    embeddings_cache: str | os.PathLike | None = None,
) -> dict:
    """Every run's top-k accuracy on the same questions and passages (the corpus and the test
    file read once), and on each of Lewis et al.'s overlap subsets when annotations are given.

    Returns ``{"runs": [{"label", "kind", "passage_model", "question_model", "similarity",
    "metrics", "subsets": {label: {"questions", "metrics"}}, "not_trained"}], "questions",
    "skipped_questions", "passages", "test_file", "cutoffs", "overlap_annotations"}``; a run
    that was not trained has no metrics, only its reason. With `embeddings_cache` (a
    folder), a dense run's passage embeddings are read from there when an earlier step
    encoded these passages with the same model, and stored there otherwise
    (:mod:`namesake.ecqg.dpr.embedding_cache`).
    """
    from namesake.ecqg.dpr.overlap import read_overlap_annotations

    if not runs:
        raise NamesakeError("nothing to evaluate: give --run, --tfidf or --dpr-* encoders")
    labels = [run.label for run in runs]
    if len(set(labels)) != len(labels):
        raise NamesakeError(f"run labels must differ: {labels}")
    cutoffs, qas, report, passages, texts = _read_test_inputs(
        passages_path, test_file, cutoffs, similarity
    )
    subsets = {}
    if overlap_annotations is not None:
        annotated = read_overlap_annotations(overlap_annotations, report["total"])
        for label, indexes in annotated.items():
            subsets[label] = [row for row, qa in enumerate(qas) if qa["index"] in indexes]
    questions = [qa["question"] for qa in qas]
    answers = [qa["answers"] for qa in qas]
    rows = []
    for run in runs:
        row = {
            "label": run.label,
            "kind": run.kind,
            "passage_model": run.passage_model,
            "question_model": run.question_model,
            "not_trained": run.not_trained,
        }
        if run.not_trained is None:
            rankings, row["similarity"] = rank_passages(
                run,
                passages,
                questions,
                cutoffs[-1],
                similarity=None if run.kind == "tfidf" else similarity,
                batch_size=batch_size,
                device=device,
                embeddings_cache=embeddings_cache,
            )
            row["metrics"] = top_k_accuracy(rankings, answers, texts, cutoffs)
            row["subsets"] = {}
            for label, members in subsets.items():
                metrics = top_k_accuracy(
                    [rankings[i] for i in members], [answers[i] for i in members], texts, cutoffs
                )
                row["subsets"][label] = {"questions": len(members), "metrics": metrics}
        rows.append(row)
    return {
        "runs": rows,
        "questions": len(qas),
        "skipped_questions": report.get("skipped", 0),
        "passages": len(passages),
        "test_file": str(test_file),
        "cutoffs": cutoffs,
        "overlap_annotations": None if overlap_annotations is None else str(overlap_annotations),
    }


# The ECQG paper's Table 3 (namesake/data/papers/ecqg.json): its row for a run, by our kind
# or, for the generators' retrievers `make ecqg-demo` trains, by label; its column for a row
# of ours (the whole test file is read as NQ's test set, each overlap subset as its own).
PAPER_SYSTEMS = {"tfidf": "TF-IDF", "dpr": "DPR (ours)"}
PAPER_LABELS = ("UnCon-DPR", "Mixed-DPR")
PAPER_SUBSETS = {
    None: "Full test",
    "total": "Full test",
    "no_answer_overlap": "No ans. ovlp.",
    "no_question_overlap": "No ques. ovlp.",
}
PAPER_CUTOFFS = (1, 5)


def paper_system(run: dict) -> str | None:
    """The row of the paper's Table 3 of the same kind as ``run``, or None."""
    if run["label"] in PAPER_LABELS:
        return run["label"]
    return PAPER_SYSTEMS.get(run.get("kind", ""))


def runs_table(result: dict) -> str:
    """Markdown: one row per run (top-k accuracy in %, one decimal), then one per run and
    overlap subset; a run that was not trained says why in its first cell. Beside top-1 and
    top-5, the paper's Table 3 figure (NQ) for the same kind of retriever and subset."""
    table3 = paper("ecqg").table(3)
    cutoffs = result["cutoffs"]
    columns = [
        (k, theirs)
        for k in cutoffs
        for theirs in ((False, True) if k in PAPER_CUTOFFS else (False,))
    ]
    header = ["Encoder", "questions", "paper system"]
    header += ["paper" if theirs else f"top-{k}" for k, theirs in columns]

    def row(run: dict, label: str, questions: int, metrics, reason, subset=None) -> list[str]:
        system = paper_system(run)
        column = PAPER_SUBSETS.get(subset)
        cells = []
        for k, theirs in columns:
            if theirs:
                fields = {"model": system or "", "dataset": "NQ", "measure": f"top-{k}"}
                cells.append(table3.printed(**fields, subset=column) if column else NOT_IN_PAPER)
            elif metrics is None:
                cells.append(f"not trained: {reason}" if not cells else "—")
            else:
                cells.append(f"{100 * metrics[f'top_{k}']:.1f}")
        named = f"{system}, NQ {column} (paper)" if system and column else NOT_IN_PAPER
        return [label, str(questions), named, *cells]

    rows = [
        row(run, run["label"], result["questions"], run.get("metrics"), run["not_trained"])
        for run in result["runs"]
    ]
    for run in result["runs"]:
        for subset, found in (run.get("subsets") or {}).items():
            label = f"{run['label']}, {subset.replace('_', ' ')}"
            rows.append(row(run, label, found["questions"], found["metrics"], None, subset))
    return markdown_table(header, rows, "lrlr")
