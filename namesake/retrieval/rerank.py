"""A second stage for any first stage: its top pages rescored by a pair scorer (a cross-encoder
reading the query beside each page, or ColBERT's MaxSim; `namesake.retrieval.rerankers`).

A page is read as its title and opening passage (the first 100 words, DPR's passage): what
tells namesakes apart (a president, a trombonist) is said in a page's first lines. The top
``depth`` pages of each ranking are reordered by the scorer; pages below ``depth`` keep their
first-stage order beneath them. Each reranked page keeps its first-stage score beside the new
one, so that a predictions file says what each stage thought.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

import numpy as np

from namesake.errors import NamesakeError
from namesake.retrieval.corpus import PASSAGE_WORDS, read_kilt_documents

DEFAULT_DEPTH = 100


def opening_passages(corpus: str | os.PathLike, pages: Iterable[str]) -> dict[str, str]:
    """Page id -> "title: its first 100 words", for the ``pages`` asked, in one streaming pass
    over the KILT file (at full KILT the pages of 79k x 100 rankings fit in memory, the
    corpus does not)."""
    from tqdm.auto import tqdm

    wanted = set(pages)
    texts: dict[str, str] = {}
    for document in tqdm(read_kilt_documents(corpus), desc="Reading pages to rerank", unit="page"):
        if document.wikipedia_id in wanted:
            opening = " ".join(document.text.split()[:PASSAGE_WORDS])
            texts[document.wikipedia_id] = (
                f"{document.title}: {opening}" if opening else document.title
            )
            if len(texts) == len(wanted):
                break
    return texts


def check_pages(wanted: set[str], texts: dict[str, str], source=None) -> None:
    """A page to rerank without a text (not in the corpus ``source`` that ``texts`` came
    from) is an error: the run was made on another corpus."""
    missing = sorted(wanted - texts.keys())
    if missing:
        where = f" in {source}" if source is not None else ""
        raise NamesakeError(
            f"{len(missing)} ranked pages are not{where} (e.g. wikipedia_id "
            f"{', '.join(missing[:3])}): rerank with the corpus the first stage searched"
        )


def pages_to_rerank(rankings: Sequence[Sequence[tuple]], depth: int) -> set[str]:
    return {item[0] for ranking in rankings for item in ranking[:depth]}


def rerank(
    queries: Sequence[str],
    rankings: Sequence[Sequence[tuple]],
    texts: dict[str, str],
    scorer,
    depth: int = DEFAULT_DEPTH,
    source: str | os.PathLike | None = None,
) -> list[list[tuple[str, float, float]]]:
    """Per query, (page, score, first-stage score): the top ``depth`` pages ordered by
    ``scorer.score(query, page texts)`` (ties keep the first-stage order), the rest below in
    first-stage order with scores under the lowest reranked one. A page without a text (not
    in the corpus ``source`` that ``texts`` came from) is an error: the run was made on
    another corpus."""
    from tqdm.auto import tqdm

    if depth < 1:
        raise ValueError(f"depth must be at least 1, got {depth}")
    check_pages(pages_to_rerank(rankings, depth), texts, source)
    reranked = []
    progress = tqdm(total=len(queries), desc="Reranking", unit="query")
    for query, ranking in zip(queries, rankings, strict=True):
        head, tail = list(ranking[:depth]), list(ranking[depth:])
        if not head:
            reranked.append([])
            progress.update()
            continue
        scores = np.asarray(scorer.score(query, [texts[item[0]] for item in head]), np.float64)
        order = np.argsort(-scores, kind="stable")
        result = [(head[i][0], float(scores[i]), float(head[i][1])) for i in order]
        floor = float(scores.min())
        result += [(item[0], floor - 1.0 - j, float(item[1])) for j, item in enumerate(tail)]
        reranked.append(result)
        progress.update()
    progress.close()
    return reranked
