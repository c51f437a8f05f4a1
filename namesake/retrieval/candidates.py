"""Ranking a given list of pages per query instead of the whole corpus (AmbER's Table 8).

Every retriever's ``rank_candidates(queries, candidates)`` takes, per query, the ids of the
pages it may return (for AmbER, the pages of the query's own set) and returns them best first
with the score the retriever's ``search`` gives them, so a set-restricted ranking is the full
ranking with the other pages removed. Pages the index does not hold cannot be scored and are
left out (``page in retriever.candidate_rows`` tells the caller which). The helpers here are
what the retrievers share: the rows of the candidate pages, the ordering, and the stored
vectors of a faiss index.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

import faiss
import numpy as np


class CandidateRows:
    """Turns page ids into the index's rows for one retriever (a dictionary built once)."""

    def __init__(self, document_ids: Sequence[str]):
        self._rows = {document: row for row, document in enumerate(document_ids)}

    def __contains__(self, document: str) -> bool:
        return document in self._rows

    def __call__(self, candidates: Sequence[str]) -> np.ndarray:
        """The rows of `candidates` the index holds: distinct, in the order given."""
        found = (self._rows.get(document) for document in dict.fromkeys(candidates))
        return np.asarray([row for row in found if row is not None], dtype=np.int64)


def _rows_of(retriever) -> CandidateRows:
    return CandidateRows(retriever.document_ids)


#: every retriever's ``candidate_rows``: its CandidateRows, built on first use, then kept
candidate_rows = cached_property(_rows_of)


def ranked(
    rows: np.ndarray, scores: np.ndarray, ids: np.ndarray, positive_only: bool = False
) -> list[tuple[str, float]]:
    """(page id, score) pairs, best first; equal scores: the page indexed first first, as in
    ``search``. `positive_only` leaves out pages with no score, as the sparse retrievers'
    ``search`` does for pages that share nothing with the query."""
    rows = np.asarray(rows, dtype=np.int64)
    scores = np.asarray(scores, dtype=np.float64)
    if positive_only:
        keep = scores > 0
        rows, scores = rows[keep], scores[keep]
    order = np.lexsort((rows, -scores))
    return list(zip(ids[rows[order]].tolist(), scores[order].tolist(), strict=True))


def stored_vectors(shards: Sequence[tuple[int, faiss.Index]], rows: np.ndarray) -> np.ndarray:
    """float32 vectors of the given rows (any order) as the faiss shards hold them.

    Flat and HNSW indexes reconstruct their vectors exactly; IVF ones need their direct map,
    made once here. (Product-quantised indexes keep only codes: their retrievers read the
    stored float16 embeddings instead.)
    """
    rows = np.asarray(rows, dtype=np.int64)
    dimension = shards[0][1].d
    out = np.empty((len(rows), dimension), dtype=np.float32)
    for offset, index in shards:
        inside = np.flatnonzero((rows >= offset) & (rows < offset + index.ntotal))
        if not len(inside):
            continue
        ivf = faiss.try_extract_index_ivf(index)
        if ivf is not None and ivf.direct_map.type == faiss.DirectMap.NoMap:
            ivf.make_direct_map()
        out[inside] = index.reconstruct_batch(rows[inside] - offset)
    return out
