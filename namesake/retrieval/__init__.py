"""Retrievers for AmbER: BM25 (bm25s) and dense (sentence-transformers + FAISS).

Both rank whole documents (KILT ``wikipedia_id`` strings) through one interface::

    retriever.search(queries: list[str], k: int) -> list[list[tuple[str, float]]]

per query up to ``k`` (document id, score) pairs, best first, no id twice; ``save(path)``
writes an index directory atomically and ``Retriever.load(path)`` reads it back.
"""

from namesake.retrieval.bm25 import BM25Retriever
from namesake.retrieval.corpus import Document, Passage, read_kilt_documents, split_passages
from namesake.retrieval.dense import DEFAULT_MODEL, DenseRetriever
from namesake.retrieval.tfidf import TfidfRetriever

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
