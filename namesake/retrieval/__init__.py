"""Retrievers for AmbER: BM25 (bm25s) and dense (sentence-transformers + FAISS).

Both rank whole documents (KILT ``wikipedia_id`` strings) through one interface::

    retriever.search(queries: list[str], k: int) -> list[list[tuple[str, float]]]

per query up to ``k`` (document id, score) pairs, best first, no id twice; ``save(path)``
writes an index directory atomically and ``Retriever.load(path)`` reads it back.

The names below are imported on first use (PEP 562), not with the package: importing
`namesake.retrieval.corpus` (as `namesake amber read` does) or one retriever does not pay
for the others (bm25s and numba, faiss, scikit-learn), and bm25s is imported only when BM25
is used (see `namesake.retrieval.bm25s_without_jax`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from namesake.retrieval.bm25 import BM25Retriever
    from namesake.retrieval.corpus import Document, Passage, read_kilt_documents, split_passages
    from namesake.retrieval.dense import DEFAULT_MODEL, DenseRetriever
    from namesake.retrieval.tfidf import TfidfRetriever

#: each re-exported name -> the module that defines it
_LAZY = {
    "BM25Retriever": "namesake.retrieval.bm25",
    "Document": "namesake.retrieval.corpus",
    "Passage": "namesake.retrieval.corpus",
    "read_kilt_documents": "namesake.retrieval.corpus",
    "split_passages": "namesake.retrieval.corpus",
    "DEFAULT_MODEL": "namesake.retrieval.dense",
    "DenseRetriever": "namesake.retrieval.dense",
    "TfidfRetriever": "namesake.retrieval.tfidf",
}

__all__ = [
    "DEFAULT_MODEL",
    "BM25Retriever",
    "DenseRetriever",
    "Document",
    "Passage",
    "TfidfRetriever",
    "read_kilt_documents",
    "split_passages",
]


def __getattr__(name: str):
    """Imports a re-exported name's module on first use (PEP 562). Other names raise
    AttributeError, so ``from namesake.retrieval import dense`` still finds the submodule."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
