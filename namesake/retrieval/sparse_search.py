"""What the term-at-a-time retrievers (BM25 and SPLADE) share when they search: postings
added into per-row scores, the top-k heap that keeps the best rows (equal scores: the row
indexed first first), and queries searched in threads, a range of queries per task.

The kernels release the GIL, so a search's threads run in parallel; they are compiled on
first use and cached beside this file.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np

from namesake.retrieval.base import Ranking


@numba.njit(cache=True, nogil=True)
def add_postings(data, rows, indptr, term, weight, scores, touched, n_touched):
    """Adds `term`'s postings times `weight` into `scores`, listing each row it scores for
    the first time in `touched`; returns how many rows `touched` lists now."""
    for j in range(indptr[term], indptr[term + 1]):
        row = rows[j]
        if scores[row] == 0:
            touched[n_touched] = row
            n_touched += 1
        scores[row] += data[j] * weight
    return n_touched


@numba.njit(cache=True, nogil=True)
def _worse(score, doc, other_score, other_doc):
    """Ranking order: higher score first, then lower document index (deterministic ties)."""
    return score < other_score or (score == other_score and doc > other_doc)


@numba.njit(cache=True, nogil=True)
def _sift_down(scores, docs, size):
    """Restores the heap (worst at the root) after its root was replaced."""
    i = 0
    while True:
        child = 2 * i + 1
        if child >= size:
            return
        if child + 1 < size and _worse(
            scores[child + 1], docs[child + 1], scores[child], docs[child]
        ):
            child += 1
        if not _worse(scores[child], docs[child], scores[i], docs[i]):
            return
        scores[i], scores[child] = scores[child], scores[i]
        docs[i], docs[child] = docs[child], docs[i]
        i = child


@numba.njit(cache=True, nogil=True)
def offer(heap_scores, heap_docs, size, score, doc):
    """Puts (score, doc) into the top-k heap if it belongs there; returns the new size."""
    if size < heap_scores.size:  # append, then sift up
        i = size
        heap_scores[i] = score
        heap_docs[i] = doc
        while i > 0:
            parent = (i - 1) // 2
            if not _worse(heap_scores[i], heap_docs[i], heap_scores[parent], heap_docs[parent]):
                break
            heap_scores[i], heap_scores[parent] = heap_scores[parent], heap_scores[i]
            heap_docs[i], heap_docs[parent] = heap_docs[parent], heap_docs[i]
            i = parent
        return size + 1
    if _worse(heap_scores[0], heap_docs[0], score, doc):
        heap_scores[0] = score
        heap_docs[0] = doc
        _sift_down(heap_scores, heap_docs, size)
    return size


@numba.njit(cache=True, nogil=True)
def pop_best_first(heap_scores, heap_docs, size, scores_out, docs_out):
    """Empties the heap of `size` entries into ``scores_out[:size]`` and ``docs_out[:size]``,
    best first."""
    for i in range(size - 1, -1, -1):  # pop the worst into the last free slot
        scores_out[i] = heap_scores[0]
        docs_out[i] = heap_docs[0]
        heap_scores[0] = heap_scores[i]
        heap_docs[0] = heap_docs[i]
        _sift_down(heap_scores, heap_docs, i)


def search_top_k(
    search_queries: Callable[..., None],
    inputs: tuple,
    count: int,
    k: int,
    n_threads: int,
    ids: np.ndarray,
) -> list[Ranking]:
    """Per query of `count`, up to `k` (id, score) pairs, best first, found by the kernel
    ``search_queries(*inputs, k, first, last, found_docs, found_scores, found)``: it fills,
    for queries ``first:last``, their best rows and scores and how many it found. `ids`
    names the rows.

    Queries run in `n_threads` threads (-1: one per CPU; 0 or 1: the calling thread alone),
    a few ranges per thread so that one slow range does not leave the others idle."""
    k = min(k, len(ids))
    found_docs = np.empty((count, k), dtype=np.int32)
    found_scores = np.empty((count, k), dtype=np.float32)
    found = np.zeros(count, dtype=np.int64)

    def run(first: int, last: int) -> None:
        search_queries(*inputs, k, first, last, found_docs, found_scores, found)

    threads = os.cpu_count() if n_threads == -1 else max(1, n_threads)
    if threads == 1 or count <= 1:
        run(0, count)
    else:
        cuts = np.linspace(0, count, min(count, 4 * threads) + 1).astype(int)
        with ThreadPoolExecutor(max_workers=threads) as pool:
            list(pool.map(run, cuts[:-1].tolist(), cuts[1:].tolist()))
    return [
        list(
            zip(
                ids[found_docs[q, :n]].tolist(),
                found_scores[q, :n].astype(float).tolist(),
                strict=True,
            )
        )
        for q, n in enumerate(found.tolist())
    ]
