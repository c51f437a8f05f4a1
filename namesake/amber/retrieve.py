"""Retrieval runs on AmbER: a retriever over a KILT corpus answers one config's queries and
the rankings are written in the published predictions format.

RETRIEVERS names every retriever kind that `namesake retrieve` and `namesake amber compare`
run, as "module:Class", imported only when used, so that the CLI starts fast."""

from __future__ import annotations

import importlib
import os
from pathlib import Path

from namesake.amber.predictions import write_predictions

RETRIEVERS = {
    "bm25": "namesake.retrieval.bm25:BM25Retriever",
    "dense": "namesake.retrieval.dense:DenseRetriever",
    "dpr": "namesake.retrieval.dpr:DPRRetriever",
    "tfidf": "namesake.retrieval.tfidf:TfidfRetriever",
    "link": "namesake.retrieval.linker:EntityLinkRetriever",
}
RETRIEVER_KINDS = tuple(RETRIEVERS)


def retriever_class(kind: str):
    """The class behind a kind of RETRIEVERS."""
    module, name = RETRIEVERS[kind].split(":")
    return getattr(importlib.import_module(module), name)


def open_retriever(
    kind: str,
    corpus: str | os.PathLike | None = None,
    saved: str | os.PathLike | None = None,
    **build_options,
):
    """Loads the retriever saved at ``saved``, or builds it from ``corpus`` (saving it there).

    Saved indexes are memory-mapped, paged in as they are searched (a full-KILT TF-IDF or
    dense index is larger than memory), except BM25's, which keeps its in-memory load
    (`BM25Retriever.load(path, mmap=True)` maps it).
    """
    from namesake.retrieval.corpus import read_kilt_documents

    retriever = retriever_class(kind)
    if saved is not None and Path(saved).exists():
        # A saved index is searched as it was built: a similarity asked for must agree with it
        # (the dense kinds' load refuses another one, naming the index's settings file).
        similarity = build_options.get("similarity")
        load_options = {"similarity": similarity} if similarity else {}
        return retriever.load(saved, mmap=kind != "bm25", **load_options)
    if corpus is None:
        raise FileNotFoundError(f"{saved}: no saved index, and no --corpus to build one from")
    built = retriever.build(read_kilt_documents(corpus), **build_options)
    if saved is not None:
        built.save(saved)
    return built


def retrieve_config(retriever, dataset: str, config: str, k: int, out: str | os.PathLike) -> int:
    """Answers every query of ``config``; returns the number of queries."""
    from datasets import load_dataset

    queries = load_dataset(dataset, config, split="test")
    rankings = retriever.search(list(queries["input"]), k)
    write_predictions(out, zip(queries["id"], rankings, strict=True))
    return len(queries)
