"""Retrieval runs on AmbER: a retriever over a KILT corpus answers one config's queries and
the rankings are written in the published predictions format.

RETRIEVERS names every retriever kind that `namesake retrieve` and `namesake amber compare`
run, as "module:Class", imported only when used, so that the CLI starts fast. Each class
satisfies `namesake.retrieval.base.Retriever` (a test checks every kind)."""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from namesake.errors import NamesakeError

if TYPE_CHECKING:  # the retrievers import their libraries only when used
    from namesake.amber.evaluation.queries import AmberQueries
    from namesake.retrieval.base import Retriever
    from namesake.runs import Run

logger = logging.getLogger(__name__)

RETRIEVERS = {
    "bm25": "namesake.retrieval.bm25:BM25Retriever",
    "dense": "namesake.retrieval.dense:DenseRetriever",
    "dpr": "namesake.retrieval.dpr:DPRRetriever",
    "tfidf": "namesake.retrieval.tfidf:TfidfRetriever",
    "link": "namesake.linking.linker:EntityLinkRetriever",
    "splade": "namesake.retrieval.splade:SpladeRetriever",
}
RETRIEVER_KINDS = tuple(RETRIEVERS)
#: what a query's ranking is drawn from: the whole corpus, or the pages of its AmbER set
CANDIDATES = ("all", "set")


def retriever_class(kind: str) -> type[Retriever]:
    """The class behind a kind of RETRIEVERS."""
    module, name = RETRIEVERS[kind].split(":")
    return getattr(importlib.import_module(module), name)


def open_retriever(
    kind: str,
    corpus: str | os.PathLike | None = None,
    saved: str | os.PathLike | None = None,
    **build_options,
) -> Retriever:
    """Loads the retriever saved at ``saved``, or builds it from ``corpus`` (saving it there).

    A saved index answers only for what built it (`namesake.retrieval.provenance`): a
    ``corpus``, or a model among ``build_options`` (``model``, ``query_model``, DPR's
    ``context_encoder`` / ``question_encoder``), other than the recorded one is refused,
    naming the index's settings file, the field, the recorded and the requested value; what
    is not named is taken from the record, and a line on stderr says what is used. So is an index
    type (``index``) other than the recorded one. The other build options (batch size,
    memory budget) only shape a new build.

    Saved indexes are memory-mapped, paged in as they are searched (a full-KILT TF-IDF or
    dense index is larger than memory), except BM25's, which keeps its in-memory load
    (`BM25Retriever.load(path, mmap=True)` maps it).

    >>> bm25 = open_retriever("bm25", "kilt.json", "indexes/bm25")  # built once, then loaded
    >>> dense = open_retriever("dense", "kilt.json", model="bundled:bge-small")
    """
    from namesake.retrieval.corpus import read_kilt_documents
    from namesake.retrieval.provenance import check_reopening, corpus_identity, tell
    from namesake.retrieval.storage import read_settings

    retriever = retriever_class(kind)
    if saved is not None and Path(saved).exists():
        models = {
            field: (what, build_options[option])
            for option, (field, what) in retriever.NAMED_MODELS.items()
            if build_options.get(option)
        }
        settings = read_settings(saved, retriever.INDEX_KIND)
        notice = check_reopening(
            saved, settings, corpus=corpus, models=models, index_type=build_options.get("index")
        )
        # A saved index is searched as it was built: a similarity asked for must agree with it
        # (the dense kinds' load refuses another one, naming the index's settings file).
        similarity = build_options.get("similarity")
        load_options = {"similarity": similarity} if similarity else {}
        loaded = retriever.load(saved, mmap=kind != "bm25", **load_options)
        tell(notice)  # once loaded: a damaged index ends in the one line naming its file
        return loaded
    if corpus is None:
        raise FileNotFoundError(f"{saved}: no saved index, and no --corpus to build one from")
    if kind == "bm25" and saved is not None:  # what a BM25 build spills goes beside its index
        Path(saved).parent.mkdir(parents=True, exist_ok=True)
        build_options.setdefault("spill_dir", Path(saved).parent)
    identity = corpus_identity(corpus)  # before reading it: what the build reads
    pages = 0

    def documents():
        nonlocal pages
        for document in read_kilt_documents(corpus):
            pages += 1
            yield document

    built = retriever.build(documents(), **build_options)
    built.provenance = {**(built.provenance or {}), "corpus": {**identity, "pages": pages}}
    if saved is not None:
        built.save(saved)
    return built


def retrieve(
    retriever: Retriever, queries: AmberQueries, k: int = 100, candidates: str = "all"
) -> Run:
    """The run of ``retriever`` on ``queries``: each query's top ``k`` pages of the whole
    corpus (``candidates="all"``), or of its own AmbER set only (``"set"``, the paper's Table 8
    setting; the queries need their set members). Named after the retriever's kind.

    >>> run = retrieve(open_retriever("bm25", "kilt.jsonl"), AmberQueries.load(path, "human_qa"))
    """
    from namesake.runs import Run

    if candidates not in CANDIDATES:
        raise ValueError(f"candidates must be one of {CANDIDATES}, not {candidates!r}")
    if candidates == "set":
        pages = queries.set_pages()
        rankings = [ranking[:k] for ranking in retriever.rank_candidates(queries.inputs, pages)]
        held = retriever.candidate_rows
        unknown = {page for query_pages in pages for page in query_pages if page not in held}
        if unknown:
            logger.warning(
                "%s: %d set pages are not in the retriever's corpus and cannot be ranked (e.g. %s)",
                queries.config,
                len(unknown),
                ", ".join(sorted(unknown)[:3]),
            )
    else:
        rankings = retriever.search(queries.inputs, k)
    kind = retriever.INDEX_KIND
    provenance = {"retriever": kind, **(retriever.provenance or {})}
    return Run.from_rankings(zip(queries.ids, rankings, strict=True), kind, provenance)


def pages_to_rerank(runs: Iterable[Run], depth: int) -> set[str]:
    """The pages that reranking ``runs`` to ``depth`` reads: their union, so that a command
    reads the corpus once for every run and config it reranks."""
    return {page for run in runs for page in run.top(depth).page_ids.to_pylist()}


def rerank(
    run: Run, queries: AmberQueries, reranker, pages: dict[str, str], depth: int = 100
) -> Run:
    """``run`` with each query's top ``depth`` pages rescored by ``reranker`` (a cross-encoder
    or ColBERT, `namesake.retrieval.rerankers.open_reranker`) reading ``pages`` (page id ->
    its title and opening passage, `namesake.retrieval.rerank.opening_passages`, read once
    for every run a command reranks); the first-stage scores kept beside the new ones.
    Queries of the run that ``queries`` lacks are refused.

    >>> reranker = open_reranker("bundled")  # the int8 ONNX ms-marco MiniLM cross-encoder
    >>> reranked = rerank(run, queries, reranker, read_pages("kilt.json", [run], 100), 100)
    """
    from namesake.retrieval.rerank import rerank as rerank_rankings
    from namesake.runs import Run

    inputs = dict(zip(queries.ids, queries.inputs, strict=True))
    unknown = [query_id for query_id in run.query_ids if query_id not in inputs]
    if unknown:
        raise NamesakeError(
            f"{run.name}: {len(unknown)} queries are not queries of {queries.config} "
            f"(e.g. {', '.join(unknown[:3])})"
        )
    rankings = [
        [(page, 0.0 if score is None else score) for page, score, *_ in ranking]
        for _, ranking in run.rankings()
    ]
    reranked = rerank_rankings([inputs[q] for q in run.query_ids], rankings, pages, reranker, depth)
    return Run.from_rankings(
        zip(run.query_ids, reranked, strict=True),
        name=f"{run.name}+rerank",
        provenance={**run.provenance, "reranker": str(getattr(reranker, "name", reranker))},
    )


def retrieve_config(
    retriever: Retriever,
    dataset: str,
    config: str,
    k: int,
    out: str | os.PathLike,
    candidates: str = "all",
    format: str = "kilt",
    run_name: str | None = None,
    reranker=None,
    rerank_depth: int = 100,
    corpus: str | os.PathLike | None = None,
) -> int:
    """Answers every query of ``config``; returns the number of queries.

    ``candidates``: "all" searches the whole corpus; "set" ranks only the pages of the query's
    own AmbER set (the paper's Table 8 setting), at most ``k`` of them. ``format``: KILT JSON
    lines or a TREC run, tagged ``run_name`` (the command line's default: the retriever's kind).
    ``reranker`` (`namesake.retrieval.rerankers.open_reranker`): rescores the top
    ``rerank_depth`` pages of each ranking, reading their text from ``corpus``.
    """
    from namesake.amber.evaluation.queries import AmberQueries

    if candidates == "set":
        queries = set_queries(dataset, config)
    else:
        queries = AmberQueries.load(dataset, config, members=False)
    run = retrieve(retriever, queries, k, candidates)
    if reranker is not None:
        run = rerank(run, queries, reranker, read_pages(corpus, [run], rerank_depth), rerank_depth)
    run.write(out, format, run_name or "namesake")
    return len(queries)


def read_pages(corpus: str | os.PathLike | None, runs: Iterable[Run], depth: int) -> dict[str, str]:
    """The title and opening passage of every page that reranking ``runs`` to ``depth``
    reads, in one pass over ``corpus``; a page the corpus lacks is an error naming it.

    >>> pages = read_pages("kilt.json", [bm25_run, dense_run], depth=100)  # one pass for both
    """
    from namesake.retrieval.rerank import check_pages, opening_passages

    if corpus is None:
        raise NamesakeError("reranking reads each page's title and opening passage: give --corpus")
    wanted = pages_to_rerank(runs, depth)
    texts = opening_passages(corpus, wanted)
    check_pages(wanted, texts, corpus)
    return texts


def set_queries(dataset: str, config: str):
    """The queries of ``config`` with their collection's set members, whose pages
    ``--candidates set`` ranks (`AmberQueries.set_pages`); a dataset without them is one line
    saying what the setting needs."""
    from namesake.amber.evaluation.queries import AmberQueries, load_members, members_config

    needs = (
        f"--candidates set ranks the pages of each query's AmbER set: {dataset} needs a 'name' "
        f"column in {config} and a '{members_config(config)}' config"
    )
    try:
        queries = AmberQueries.load(dataset, config, members=False)
        members = load_members(dataset, config)
    except ValueError as error:  # datasets: no such config
        if "_entities" not in str(error):
            raise
        raise NamesakeError(f"{needs}; it has no such config") from None
    missing = {"name", "qid", "is_head", "gold_wikipedia_ids"} - set(queries.rows.column_names)
    missing |= {"name", "qid", "wikipedia_ids"} - set(members.column_names)
    if missing:
        raise NamesakeError(f"{needs}; columns missing: {', '.join(sorted(missing))}")
    queries.members = members
    return queries
