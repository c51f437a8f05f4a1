"""Retrieval runs on AmbER: a retriever over a KILT corpus answers one config's queries and
the rankings are written in the published predictions format."""

from __future__ import annotations

import os
from pathlib import Path

from datasets import load_dataset

from namesake.amber.predictions import write_predictions
from namesake.retrieval import BM25Retriever, DenseRetriever, read_kilt_documents

RETRIEVERS = {"bm25": BM25Retriever, "dense": DenseRetriever}


def open_retriever(
    kind: str,
    corpus: str | os.PathLike | None = None,
    saved: str | os.PathLike | None = None,
    **build_options,
):
    """Loads the retriever saved at ``saved``, or builds it from ``corpus`` (saving it there).

    A saved dense index is memory-mapped: a large one is paged in as it is searched.
    """
    retriever_class = RETRIEVERS[kind]
    if saved is not None and Path(saved).exists():
        return (
            retriever_class.load(saved, mmap=True)
            if kind == "dense"
            else retriever_class.load(saved)
        )
    if corpus is None:
        raise FileNotFoundError(f"{saved}: no saved index, and no --corpus to build one from")
    retriever = retriever_class.build(read_kilt_documents(corpus), **build_options)
    if saved is not None:
        retriever.save(saved)
    return retriever


def retrieve_config(retriever, dataset: str, config: str, k: int, out: str | os.PathLike) -> int:
    """Answers every query of ``config``; returns the number of queries."""
    queries = load_dataset(dataset, config, split="test")
    rankings = retriever.search(list(queries["input"]), k)
    write_predictions(out, zip(queries["id"], rankings, strict=True))
    return len(queries)
