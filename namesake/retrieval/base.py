"""What every retriever of `namesake retrieve` is: the contract, written down.

Five retriever classes (BM25, TF-IDF, dense and DPR, SPLADE, the entity linker) build an index
over KILT pages, save it, load it back and rank pages for queries. `Retriever` is that contract
as a `typing.Protocol` (as KILT's ``base_retriever.py`` and beir's ``search/base.py`` write
theirs down): `namesake.amber.evaluation.retrieve` is typed against it, and a test checks that every
kind of ``RETRIEVERS`` satisfies it, signatures included. A new retriever (a reranked one, another
model) implements these members and is added to ``RETRIEVERS``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import ClassVar, Protocol, runtime_checkable

import numpy as np

from namesake.retrieval.corpus import Document

#: a query's ranking: (page id, score) pairs, best first
Ranking = list[tuple[str, float]]


class CandidatePages(Protocol):
    """A retriever's ``candidate_rows`` (`namesake.retrieval.candidates.CandidateRows`)."""

    def __contains__(self, page: str) -> bool: ...

    def __call__(self, pages: Sequence[str]) -> np.ndarray: ...


@runtime_checkable
class Retriever(Protocol):
    """An index over pages that ranks them for queries, saved to and loaded from a folder."""

    #: the kind its settings file records (`namesake.retrieval.storage.read_settings`)
    INDEX_KIND: ClassVar[str]
    #: build option -> (recorded field, what it is): the models a reopening command may name,
    #: checked against the saved index's (`namesake.retrieval.provenance`)
    NAMED_MODELS: ClassVar[dict[str, tuple[str, str]]]
    #: what built it (corpus and models), recorded by `save`
    provenance: dict | None

    @property
    def candidate_rows(self) -> CandidatePages:
        """The index rows of given pages; ``page in candidate_rows`` says whether it is held."""
        ...

    @classmethod
    def build(cls, documents: Iterable[Document]) -> Retriever:
        """An index over `documents` (each kind takes its own keyword options too)."""
        ...

    @classmethod
    def load(cls, path: str | os.PathLike, *, mmap: bool = False) -> Retriever:
        """The index `save` wrote at `path`; `mmap` (by keyword) pages it in as it is searched
        instead of reading it whole."""
        ...

    def save(self, path: str | os.PathLike) -> None:
        """Writes the index to the folder `path`, replacing it only once complete."""
        ...

    def search(self, queries: list[str], k: int) -> list[Ranking]:
        """Per query, up to `k` pages of the whole index, best first."""
        ...

    def rank_candidates(self, queries: list[str], candidates: list[list[str]]) -> list[Ranking]:
        """Per query, its own candidate pages that the index holds, best first, with the
        scores `search` gives them."""
        ...
