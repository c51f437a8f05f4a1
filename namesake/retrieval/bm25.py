"""BM25 over whole documents (title + text) with bm25s.

Tokens are lower-cased words of two or more letters or digits (bm25s' default pattern),
English stopwords removed, stemmed with PyStemmer's English (Porter 2) stemmer. Scores are
bm25s' defaults (Lucene variant, k1 = 1.5, b = 0.75).

An index directory holds bm25s' own files (the score matrix as ``.npy`` arrays, its
vocabulary and parameters as JSON), the tokenizer's vocabulary and stopwords (JSON), the
document ids in index order (``document_ids.arrow``) and ``retriever.json``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import bm25s
import numpy as np
import Stemmer
from bm25s.tokenization import Tokenizer
from tqdm.auto import tqdm

from namesake.io import atomic_directory
from namesake.retrieval.corpus import Document
from namesake.retrieval.storage import read_index_files, write_index_files

KIND = "bm25"
STEMMER_LANGUAGE = "english"
STOPWORDS = "en"


def _tokenizer() -> Tokenizer:
    return Tokenizer(stopwords=STOPWORDS, stemmer=Stemmer.Stemmer(STEMMER_LANGUAGE))


class BM25Retriever:
    """Ranks documents for a query with BM25; see the module docstring."""

    def __init__(self, model: bm25s.BM25, tokenizer: Tokenizer, document_ids: list[str]):
        self.model = model
        self.tokenizer = tokenizer
        self.document_ids = document_ids
        self._ids = np.asarray(document_ids, dtype=object)
        self._empty_token = tokenizer.word_to_id.get("")
        #: threads for scoring queries (bm25s' ``n_threads``: 0 = in this thread, -1 = all)
        self.n_threads = 0

    @classmethod
    def build(cls, documents: Iterable[Document], show_progress: bool = True) -> BM25Retriever:
        """Indexes `documents` (streamed once; only their token ids are kept)."""
        tokenizer = _tokenizer()
        document_ids: list[str] = []

        def texts():
            for document in documents:
                document_ids.append(document.wikipedia_id)
                yield f"{document.title} {document.text}"

        progress = tqdm(texts(), desc="BM25 tokenising", unit="doc", disable=not show_progress)
        token_ids = list(tokenizer.streaming_tokenize(progress, update_vocab=True))
        if not token_ids:
            raise ValueError("no documents to index")
        model = bm25s.BM25()
        model.index(
            (token_ids, tokenizer.get_vocab_dict()),
            show_progress=show_progress,
        )
        return cls(model, tokenizer, document_ids)

    def __len__(self) -> int:
        return len(self.document_ids)

    def search(self, queries: list[str], k: int) -> list[list[tuple[str, float]]]:
        """Per query, up to `k` (document id, score) pairs, best first.

        Documents that share no token with the query (score 0) are left out, so a query of
        only stopwords or unknown words gets an empty list. Ties keep bm25s' order.
        """
        if isinstance(queries, str):
            raise TypeError("queries must be a list of strings, not one string")
        if k < 1 or not queries:
            return [[] for _ in queries]
        query_ids = self.tokenizer.tokenize(
            list(queries), update_vocab=False, show_progress=False, return_as="ids"
        )
        k = min(k, len(self.document_ids))
        found, scores = self.model.retrieve(
            query_ids, k=k, show_progress=False, n_threads=self.n_threads
        )
        results = []
        for tokens, row_docs, row_scores in zip(query_ids, found, scores, strict=True):
            if not tokens or tokens == [self._empty_token]:
                results.append([])
                continue
            keep = row_scores > 0
            results.append(
                list(
                    zip(
                        self._ids[row_docs[keep]].tolist(),
                        row_scores[keep].astype(float).tolist(),
                        strict=True,
                    )
                )
            )
        return results

    def save(self, path: str | os.PathLike) -> None:
        """Writes the index to directory `path`, replacing it only once complete."""
        with atomic_directory(path) as staging:
            self.model.save(str(staging), show_progress=False)
            self.tokenizer.save_vocab(str(staging))
            self.tokenizer.save_stopwords(str(staging))
            settings = {
                "num_documents": len(self.document_ids),
                "stemmer": STEMMER_LANGUAGE,
                "stopwords": STOPWORDS,
                "bm25s_version": bm25s.__version__,
            }
            write_index_files(staging, KIND, settings, self.document_ids)

    @classmethod
    def load(cls, path: str | os.PathLike, mmap: bool = False) -> BM25Retriever:
        """Reads an index :meth:`save` wrote; `mmap` maps the score arrays instead."""
        path = Path(path)
        _, document_ids = read_index_files(path, KIND)
        model = bm25s.BM25.load(str(path), mmap=mmap, show_progress=False)
        tokenizer = _tokenizer()
        tokenizer.load_vocab(str(path))
        tokenizer.load_stopwords(str(path))
        return cls(model, tokenizer, document_ids)
