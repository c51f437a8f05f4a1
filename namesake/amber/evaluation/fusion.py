"""Fusion of several runs into one, through ranx's `fuse`: reciprocal rank fusion (RRF) of a
lexical and a dense run is the cheap fix for what each misses, and the fused run is scored
like any other.

Runs are read as `namesake evaluate` reads them (TREC runs or KILT JSON lines, told from the
content) and must answer the same queries: a run with other queries is refused, naming it and
a query it lacks or adds. Rank-based methods (rrf, isr, rbc, borda, condorcet) read only the
order; score-based ones (combsum, combmnz, ..., wsum) need each page's score, normalised per
query (ranx's ``norm``, default min-max).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from namesake.amber.evaluation.predictions import read_scored_predictions
from namesake.errors import BadInputError, NamesakeError

#: our name -> ranx's fusion method
METHODS = {
    "rrf": "rrf",
    "isr": "isr",
    "rbc": "rbc",
    "borda": "bordafuse",
    "condorcet": "condorcet",
    "combsum": "sum",
    "combmnz": "mnz",
    "combmax": "max",
    "combmin": "min",
    "combmed": "med",
    "combanz": "anz",
    "wsum": "wsum",
}
RANK_BASED = frozenset({"rrf", "isr", "rbc", "borda", "condorcet"})
NORMS = ("min-max", "max", "sum", "zmuv", "rank", "borda")
RRF_K = 60
CHUNK_QUERIES = 5_000


def read_runs(paths: Sequence[str | os.PathLike], need_scores: bool) -> list[dict]:
    """Each run as {query: {page: score}}; the same queries in every run, and scores where
    the method reads them, else a BadInputError naming the run."""
    runs = []
    for path in paths:
        scored = read_scored_predictions(path)
        run = {}
        for query_id, ranking in scored.items():
            if need_scores and any(score is None for _, score in ranking):
                raise BadInputError(
                    path,
                    None,
                    f"query {query_id} has pages without a score: fuse it with a "
                    f"rank-based method ({', '.join(sorted(RANK_BASED))})",
                )
            # a rank-based method reads the order alone: scores falling by rank keep it
            run[query_id] = {
                doc: float(len(ranking) - rank) if not need_scores else float(score)
                for rank, (doc, score) in enumerate(ranking)
            }
        runs.append(run)
    first = runs[0].keys()
    for path, run in zip(paths[1:], runs[1:], strict=True):
        if run.keys() != first:
            lacks = sorted(first - run.keys())
            adds = sorted(run.keys() - first)
            detail = f"lacks query {lacks[0]}" if lacks else f"adds query {adds[0]}"
            raise BadInputError(
                path,
                None,
                f"{detail} of {paths[0]} ({len(lacks)} missing, {len(adds)} added): fused "
                "runs must answer the same queries",
            )
    return runs


def fuse_runs(
    paths: Sequence[str | os.PathLike],
    method: str = "rrf",
    k: int = RRF_K,
    weights: Sequence[float] | None = None,
    norm: str = "min-max",
    top_k: int = 100,
) -> dict[str, list[tuple[str, float]]]:
    """The fused run: query -> its top ``top_k`` (page, fused score), best first. ``k``: RRF's
    constant; ``weights``: one per run for wsum (and as ranx weighs them elsewhere)."""
    from ranx import Run, fuse

    if method not in METHODS:
        raise NamesakeError(f"no fusion method {method!r}; one of {', '.join(METHODS)}")
    if len(paths) < 2:
        raise NamesakeError("fusion needs at least two runs")
    if weights is not None and len(weights) != len(paths):
        raise NamesakeError(f"{len(weights)} weights for {len(paths)} runs: give one per run")
    if method == "wsum" and weights is None:
        raise NamesakeError("wsum weighs the runs: give --weights, one per run")
    rank_based = method in RANK_BASED
    runs = read_runs(paths, need_scores=not rank_based)
    params = {"k": k} if method == "rrf" else {}
    if weights is not None:
        params["weights"] = list(weights)
    result = {}
    queries = list(runs[0])
    # ranx holds a run as numba dictionaries: built for all 80,000 queries at once, two runs
    # of 100 pages took 14.5 GB; a slice of queries at a time bounds it, the result the same
    # (every method fuses each query on its own; min-max and the other norms are per query)
    for start in range(0, len(queries), CHUNK_QUERIES):
        chunk = queries[start : start + CHUNK_QUERIES]
        ranx_runs = [
            Run({query: run[query] for query in chunk}, name=str(path))
            for run, path in zip(runs, paths, strict=True)
        ]
        fused = fuse(
            ranx_runs, norm=None if rank_based else norm, method=METHODS[method], params=params
        )
        for query_id, pages in fused.to_dict().items():
            ranked = sorted(pages.items(), key=lambda item: (-item[1], item[0]))[:top_k]
            result[query_id] = [(doc, float(score)) for doc, score in ranked]
    return {query: result[query] for query in queries}  # the first run's query order
