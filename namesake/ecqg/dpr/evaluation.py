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
cosine for models that declare nothing. ``similarity="dot"`` or ``"cosine"`` forces one (the
same encoders, normalised for cosine, one flat inner-product index).
"""

from __future__ import annotations

import json
import os
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import regex

from namesake.io import BadInputError, NamesakeError, atomic_file

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


WHOLE = 10**9  # passage length that never splits a (pre-split) passage again
PARQUET_MAGIC = b"PAR1"


def model_dir_encoders(model_dir: str | os.PathLike) -> tuple[str, str]:
    """(question encoder, passage encoder): the sentence-transformers folders that
    ``training/train_dpr.py`` writes into its output directory."""
    root = Path(model_dir)
    return str(root / "st_question_encoder"), str(root / "st_passage_encoder")


def read_passage_documents(path: str | os.PathLike) -> list:
    """Passages as one-passage ``Document``s (``wikipedia_id`` = passage id), from a passages
    Parquet file or a KILT knowledge source (told apart by the Parquet magic bytes)."""
    from namesake.ecqg.passages import read_passages
    from namesake.retrieval.corpus import Document, read_kilt_documents, split_passages

    try:
        with open(path, "rb") as f:
            magic = f.read(len(PARQUET_MAGIC))
    except FileNotFoundError:
        raise BadInputError(path, None, "no such passages file") from None
    if magic == PARQUET_MAGIC:
        rows = read_passages(path, columns=["id", "title", "text"]).to_pylist()
        return [Document(str(r["id"]), r["title"] or "", r["text"] or "") for r in rows]
    counts: dict[str, int] = {}
    out = []
    for passage in split_passages(read_kilt_documents(path)):
        n = counts.get(passage.wikipedia_id, 0)
        counts[passage.wikipedia_id] = n + 1
        out.append(Document(f"{passage.wikipedia_id}_{n}", passage.title, passage.text))
    return out


def _forced_rankings(
    passage_model, question_model, passages, questions, k, batch_size, device, normalize
) -> list[list[str]]:
    import faiss
    import numpy as np
    from sentence_transformers import SentenceTransformer

    from namesake.retrieval.dense import passage_input

    passage_encoder = SentenceTransformer(passage_model, device=device)
    question_encoder = (
        SentenceTransformer(question_model, device=device) if question_model else passage_encoder
    )
    separator = getattr(passage_encoder.tokenizer, "sep_token", None) or "."
    texts = [passage_input(p.title, p.text, separator) for p in passages]
    options = {"batch_size": batch_size, "convert_to_numpy": True}
    p = passage_encoder.encode(texts, normalize_embeddings=normalize, **options)
    q = question_encoder.encode(questions, normalize_embeddings=normalize, **options)
    index = faiss.IndexFlatIP(p.shape[1])
    index.add(np.ascontiguousarray(p, dtype=np.float32))
    _, labels = index.search(np.ascontiguousarray(q, dtype=np.float32), min(k, len(passages)))
    return [[passages[i].wikipedia_id for i in row if i >= 0] for row in labels]


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
) -> dict:
    """Top-k retrieval accuracy of a DPR bi-encoder (see the module docstring).

    `passage_model` / `question_model` are sentence-transformers folders or Hub ids (the
    question encoder defaults to the passage encoder); `similarity` None searches with the one
    the passage model declares, ``"dot"`` / ``"cosine"`` force one. Returns ``{"metrics":
    {"top_1": ...}, "questions", "skipped_questions", "passages", "similarity", ...}``, also
    written to `out` as JSON (atomically) when given.
    """
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
    questions = [qa["question"] for qa in qas]
    k = cutoffs[-1]
    if similarity is not None:
        rankings = _forced_rankings(
            passage_model,
            question_model,
            passages,
            questions,
            k,
            batch_size,
            device,
            normalize=similarity == "cosine",
        )
    else:
        from namesake.retrieval import DenseRetriever

        retriever = DenseRetriever.build(
            passages,
            model=passage_model,
            query_model=question_model,
            index="flat",
            batch_size=batch_size,
            words=WHOLE,
            device=device,
            show_progress=False,
        )
        rankings = [[pid for pid, _ in hits] for hits in retriever.search(questions, k)]
        similarity = "cosine" if retriever.settings.get("normalized", True) else "dot"
    metrics = top_k_accuracy(rankings, [qa["answers"] for qa in qas], texts, cutoffs)
    result = {
        "metrics": metrics,
        "questions": len(qas),
        "skipped_questions": report.get("skipped", 0),
        "passages": len(passages),
        "similarity": similarity,
        "question_model": question_model,
        "passage_model": passage_model,
        "test_file": str(test_file),
    }
    if out is not None:
        with atomic_file(out, "w") as f:
            f.write(json.dumps(result, indent=2) + "\n")
    return result
