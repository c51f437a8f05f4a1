"""Retrieval runs on AmbER: a retriever over a KILT corpus answers one config's queries and
the rankings are written in the published predictions format.

RETRIEVERS names every retriever kind that `namesake retrieve` and `namesake amber compare`
run, as "module:Class", imported only when used, so that the CLI starts fast."""

from __future__ import annotations

import importlib
import logging
import os
from pathlib import Path

from namesake.amber.predictions import write_predictions
from namesake.io import NamesakeError

logger = logging.getLogger(__name__)

RETRIEVERS = {
    "bm25": "namesake.retrieval.bm25:BM25Retriever",
    "dense": "namesake.retrieval.dense:DenseRetriever",
    "dpr": "namesake.retrieval.dpr:DPRRetriever",
    "tfidf": "namesake.retrieval.tfidf:TfidfRetriever",
    "link": "namesake.linking.linker:EntityLinkRetriever",
}
RETRIEVER_KINDS = tuple(RETRIEVERS)
#: what a query's ranking is drawn from: the whole corpus, or the pages of its AmbER set
CANDIDATES = ("all", "set")


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
    if kind == "bm25" and saved is not None:  # what a BM25 build spills goes beside its index
        Path(saved).parent.mkdir(parents=True, exist_ok=True)
        build_options.setdefault("spill_dir", Path(saved).parent)
    built = retriever.build(read_kilt_documents(corpus), **build_options)
    if saved is not None:
        built.save(saved)
    return built


def retrieve_config(
    retriever,
    dataset: str,
    config: str,
    k: int,
    out: str | os.PathLike,
    candidates: str = "all",
) -> int:
    """Answers every query of ``config``; returns the number of queries.

    ``candidates``: "all" searches the whole corpus; "set" ranks only the pages of the query's
    own AmbER set (the paper's Table 8 setting), at most ``k`` of them.
    """
    from datasets import load_dataset

    if candidates not in CANDIDATES:
        raise ValueError(f"candidates must be one of {CANDIDATES}, not {candidates!r}")
    if candidates == "set":
        queries, pages = set_pages(dataset, config)
        rankings = retriever.rank_candidates(list(queries["input"]), pages)
        rankings = [ranking[:k] for ranking in rankings]
        held = retriever.candidate_rows
        unknown = {page for query_pages in pages for page in query_pages if page not in held}
        if unknown:
            logger.warning(
                "%s: %d set pages are not in the retriever's corpus and cannot be ranked (e.g. %s)",
                config,
                len(unknown),
                ", ".join(sorted(unknown)[:3]),
            )
    else:
        queries = load_dataset(dataset, config, split="test")
        rankings = retriever.search(list(queries["input"]), k)
    write_predictions(out, zip(queries["id"], rankings, strict=True))
    return len(queries)


def set_pages(dataset: str, config: str):
    """The queries of ``config`` and, per query, the pages of its AmbER set (its entity's and
    the namesakes'), from the collection's ``<collection>_entities`` config."""
    from namesake.amber.evaluation import build_references, load_amber

    needs = (
        f"--candidates set ranks the pages of each query's AmbER set: {dataset} needs a 'name' "
        f"column in {config} and a '{config.split('_')[0]}_entities' config"
    )
    try:
        queries, entities = load_amber(dataset, config)
    except ValueError as error:  # datasets: no such config
        if "_entities" not in str(error):
            raise
        raise NamesakeError(f"{needs}; it has no such config") from None
    missing = {"name", "qid", "is_head", "gold_wikipedia_ids"} - set(queries.column_names)
    missing |= {"name", "qid", "wikipedia_ids"} - set(entities.column_names)
    if missing:
        raise NamesakeError(f"{needs}; columns missing: {', '.join(sorted(missing))}")
    references = build_references(queries, entities)
    return queries, [ref["gold_ids"] + ref["confuser_ids"] for ref in references]
