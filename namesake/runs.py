"""`Run`: one system's rankings of one query set, held as columns, the object that every
evaluation stage takes and returns (retrieve, fuse, rerank, score, compare).

A run of AmbER's 80,000 queries x 100 pages is 8M ranked pages. As Python dictionaries of
strings it took 2.2 GB and minutes to read, fuse or score; as columns it is one array of page
ids (Arrow strings: ~90 MB), one of scores and one of offsets, and every stage is a handful
of vectorised operations over them. Query ``i`` ranks ``page_ids[offsets[i]:offsets[i + 1]]``,
best first; ranks are implied by the order.

A page id is compared as text (KILT's ``wikipedia_id`` is a string of digits in one file and a
number in another; both are read as the same text). `shared_vocabulary` and `Run.page_codes`
turn the ids of several runs into integers that mean the same page in each, which is how runs
are fused and scored against the gold pages without a dictionary per query.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

#: a ranked page as the writers and the rerankers hand it over: (page id, score) or, after
#: reranking, (page id, score, first-stage score)
RankedPage = tuple


@dataclass(eq=False)
class Run:
    """One system's rankings: ``query_ids`` (str, in the run's order), ``offsets`` (int64,
    one more than the queries), the flat ``page_ids`` (Arrow strings) and ``scores``
    (float64; NaN where the file gave a page no score), and after reranking the
    ``first_stage_scores`` beside them. ``name`` labels the run in tables (a file's stem, a
    retriever's kind); ``provenance`` says what made it (the TREC tag, the retriever kind,
    its index and models), as far as it is known.

    >>> run = Run.read("bm25-human_qa.trec")        # or made in memory: retrieve(...)
    >>> len(run), run.ranking(0)[:2]
    >>> run.top(10).write("bm25-top10.jsonl")
    """

    query_ids: np.ndarray
    offsets: np.ndarray
    page_ids: pa.Array
    scores: np.ndarray
    first_stage_scores: np.ndarray | None = None
    name: str = "run"
    provenance: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.query_ids = np.asarray(self.query_ids, dtype=object)
        self.offsets = np.asarray(self.offsets, dtype=np.int64)
        self.scores = np.asarray(self.scores, dtype=np.float64)
        if not isinstance(self.page_ids, pa.Array):
            self.page_ids = pa.array(self.page_ids, type=pa.string())
        entries = len(self.page_ids)
        if (
            len(self.offsets) != len(self.query_ids) + 1
            or self.offsets[0] != 0
            or self.offsets[-1] != entries
            or np.any(np.diff(self.offsets) < 0)
            or len(self.scores) != entries
            or (self.first_stage_scores is not None and len(self.first_stage_scores) != entries)
        ):
            raise ValueError("a Run's offsets, page ids and scores do not describe one run")

    @classmethod
    def from_rankings(
        cls,
        rankings: Iterable[tuple[str, Sequence[RankedPage]]],
        name: str = "run",
        provenance: dict | None = None,
    ) -> Run:
        """A run from (query id, ranked pages) pairs, each page (id, score) or (id, score,
        first-stage score); a score of None is kept as NaN (no score). How a retriever's
        rankings become a run in memory, without a file."""
        query_ids, lengths, pages, scores, firsts = [], [], [], [], []
        for query_id, ranking in rankings:
            query_ids.append(str(query_id))
            lengths.append(len(ranking))
            for item in ranking:
                pages.append(str(item[0]))
                scores.append(np.nan if item[1] is None else float(item[1]))
                firsts.append(float(item[2]) if len(item) > 2 else np.nan)
        offsets = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])
        first_stage = np.asarray(firsts, dtype=np.float64)
        return cls(
            np.asarray(query_ids, dtype=object),
            offsets,
            pa.array(pages, type=pa.string()),
            np.asarray(scores, dtype=np.float64),
            first_stage if firsts and not np.isnan(first_stage).all() else None,
            name,
            dict(provenance or {}),
        )

    def __len__(self) -> int:
        return len(self.query_ids)

    @property
    def lengths(self) -> np.ndarray:
        """The number of pages of each query's ranking."""
        return np.diff(self.offsets)

    def query_index(self) -> np.ndarray:
        """Per ranked page, the index of its query."""
        return np.repeat(np.arange(len(self), dtype=np.int64), self.lengths)

    def ranks(self) -> np.ndarray:
        """Per ranked page, its 0-based rank in its query's ranking."""
        return np.arange(len(self.page_ids), dtype=np.int64) - np.repeat(
            self.offsets[:-1], self.lengths
        )

    def has_scores(self) -> bool:
        """Whether every ranked page has a score (score-based fusion needs them)."""
        return not np.isnan(self.scores).any()

    def page_codes(self, vocabulary: pa.Array) -> np.ndarray:
        """Per ranked page, its position in ``vocabulary`` (`shared_vocabulary`), -1 where
        the vocabulary lacks it."""
        return _codes(self.page_ids, vocabulary)

    def ranking(self, index: int) -> list[RankedPage]:
        """Query ``index``'s ranked pages as (page id, score[, first-stage score]) tuples,
        a score None where none was given."""
        start, stop = self.offsets[index], self.offsets[index + 1]
        pages = self.page_ids[start:stop].to_pylist()
        scores = [None if s != s else s for s in self.scores[start:stop].tolist()]
        if self.first_stage_scores is None:
            return list(zip(pages, scores, strict=True))
        firsts = self.first_stage_scores[start:stop].tolist()
        return [
            (page, score) if first != first else (page, score, first)
            for page, score, first in zip(pages, scores, firsts, strict=True)
        ]

    def ranked_ids(self) -> list[list[str]]:
        """Each query's page ids in rank order, as lists: what the entity_confusion metric
        and the readers take."""
        pages = self.page_ids.to_pylist()
        bounds = self.offsets.tolist()
        return [pages[start:stop] for start, stop in zip(bounds[:-1], bounds[1:], strict=True)]

    def rankings(self) -> Iterator[tuple[str, list[RankedPage]]]:
        """(query id, ranked pages) of every query, in the run's order: what the writers and
        the per-query stages (reranking) read."""
        for index, query_id in enumerate(self.query_ids):
            yield query_id, self.ranking(index)

    def select(self, query_ids: Sequence[str]) -> Run:
        """The rankings of ``query_ids``, in that order; a query the run lacks gets an empty
        ranking (`namesake evaluate --allow-missing` scores it so)."""
        position = {query_id: i for i, query_id in enumerate(self.query_ids)}
        chosen = np.array([position.get(query_id, -1) for query_id in query_ids], dtype=np.int64)
        lengths = np.where(chosen >= 0, self.lengths[np.maximum(chosen, 0)], 0)
        starts = self.offsets[:-1][np.maximum(chosen, 0)]
        return self._taken(np.asarray(list(query_ids), dtype=object), starts, lengths)

    def top(self, k: int) -> Run:
        """Each ranking cut to its first ``k`` pages."""
        return self._taken(self.query_ids, self.offsets[:-1], np.minimum(self.lengths, k))

    def _taken(self, query_ids: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> Run:
        """The run of ``query_ids`` whose query i holds this run's ranked pages
        starts[i] .. starts[i] + lengths[i] - 1."""
        take = _spans(starts, lengths)
        first = self.first_stage_scores
        return Run(
            query_ids,
            np.concatenate([[0], np.cumsum(lengths)]),
            self.page_ids.take(pa.array(take)),
            self.scores[take],
            None if first is None else first[take],
            self.name,
            dict(self.provenance),
        )


def _spans(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The indices starts[i] .. starts[i] + lengths[i] - 1 of every i, concatenated."""
    total = int(lengths.sum())
    if not total:
        return np.zeros(0, dtype=np.int64)
    base = np.repeat(starts - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    return base + np.arange(total, dtype=np.int64)


def shared_vocabulary(*page_ids: pa.Array) -> pa.Array:
    """The distinct page ids of several arrays, sorted (as Python sorts str: by code point),
    so that a code's order is its id's order and a tie broken by code is broken by id."""
    distinct = pc.unique(pa.chunked_array([ids.cast(pa.string()) for ids in page_ids]))
    return distinct.take(pc.sort_indices(distinct))


def _codes(values: pa.Array, vocabulary: pa.Array) -> np.ndarray:
    found = pc.index_in(values.cast(pa.string()), value_set=vocabulary)
    return found.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
