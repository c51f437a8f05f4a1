"""Fusion of several runs into one, through ranx's `fuse`: reciprocal rank fusion (RRF) of a
lexical and a dense run is the cheap fix for what each misses, and the fused run is scored
like any other.

Runs are read as `namesake evaluate` reads them (TREC runs or KILT JSON lines, told from the
content) and must answer the same queries: a run with other queries is refused, naming it and
a query it lacks or adds. Rank-based methods (rrf, isr, rbc, borda, condorcet) read only the
order; score-based ones (combsum, combmnz, ..., wsum) need each page's score, normalised per
query (ranx's ``norm``, default min-max).

Weights, one per run, go to the methods ranx has a weighted form of (`METHODS`): borda,
condorcet, combsum (ranx's wsum) and combmnz (ranx's wmnz); wsum needs them. Each is a run's
share of the vote, so a weight is a finite number of at least 0 and one at least is above 0;
anything else, or weights for a method without a weighted form, is refused before a run is
read.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass

from namesake.amber.evaluation.predictions import read_scored_predictions
from namesake.errors import BadInputError, NamesakeError


@dataclass(frozen=True)
class Method:
    """One fusion method: ranx's name for it without weights and with a weight per run (None
    where ranx has no such form), and whether it reads only the order of each run."""

    unweighted: str | None
    weighted: str | None
    rank_based: bool


#: our name -> ranx's methods (ranx 0.3's `fusion_switch`)
METHODS = {
    "rrf": Method("rrf", None, rank_based=True),
    "isr": Method("isr", None, rank_based=True),
    "rbc": Method("rbc", None, rank_based=True),
    "borda": Method("bordafuse", "w_bordafuse", rank_based=True),
    "condorcet": Method("condorcet", "w_condorcet", rank_based=True),
    "combsum": Method("sum", "wsum", rank_based=False),
    "combmnz": Method("mnz", "wmnz", rank_based=False),
    "combmax": Method("max", None, rank_based=False),
    "combmin": Method("min", None, rank_based=False),
    "combmed": Method("med", None, rank_based=False),
    "combanz": Method("anz", None, rank_based=False),
    "wsum": Method(None, "wsum", rank_based=False),
}
RANK_BASED = frozenset(name for name, method in METHODS.items() if method.rank_based)
WEIGHTED = tuple(name for name, method in METHODS.items() if method.weighted)
NORMS = ("min-max", "max", "sum", "zmuv", "rank", "borda")
RRF_K = 60
#: rbc's persistence: how far down each run its votes reach (0.8: about 5 ranks' worth)
RBC_PHI = 0.8
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
    phi: float = RBC_PHI,
) -> dict[str, list[tuple[str, float]]]:
    """The fused run: query -> its top ``top_k`` (page, fused score), best first. ``k``: RRF's
    constant; ``phi``: RBC's persistence, in (0, 1); ``weights``: one per run, for the methods
    with a weighted form (`METHODS`), checked with the other arguments before a run is read."""
    if method not in METHODS:
        raise NamesakeError(f"no fusion method {method!r}; one of {', '.join(METHODS)}")
    if len(paths) < 2:
        raise NamesakeError("fusion needs at least two runs")
    ranx_method = _ranx_method(method, weights, len(paths))
    if not 0 < phi < 1:
        raise NamesakeError(f"rbc's phi must be above 0 and below 1, not {phi!r}")
    from ranx import Run, fuse  # numba's seconds of loading: only for arguments that hold

    rank_based = METHODS[method].rank_based
    runs = read_runs(paths, need_scores=not rank_based)
    params = {"rrf": {"k": k}, "rbc": {"phi": phi}}.get(method, {})
    if weights is not None:
        params["weights"] = [float(weight) for weight in weights]
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
            ranx_runs, norm=None if rank_based else norm, method=ranx_method, params=params
        )
        for query_id, pages in fused.to_dict().items():
            ranked = sorted(pages.items(), key=lambda item: (-item[1], item[0]))[:top_k]
            result[query_id] = [(doc, float(score)) for doc, score in ranked]
    return {query: result[query] for query in queries}  # the first run's query order


def _ranx_method(method: str, weights: Sequence[float] | None, runs: int) -> str:
    """ranx's name of ``method`` with or without ``weights``; weights that ranx's method
    does not take, or that are not one share of the vote per run, are refused."""
    forms = METHODS[method]
    if weights is None:
        if forms.unweighted is None:
            raise NamesakeError(f"{method} weighs the runs: give --weights, one per run")
        return forms.unweighted
    if forms.weighted is None:
        raise NamesakeError(
            f"{method} takes no weights: drop --weights, or fuse with a method that weighs "
            f"the runs ({', '.join(WEIGHTED)})"
        )
    if len(weights) != runs:
        raise NamesakeError(f"{len(weights)} weights for {runs} runs: give one per run")
    for weight in weights:
        if not math.isfinite(weight) or weight < 0:
            raise NamesakeError(
                f"--weights {weight!r}: a weight is a run's share of the vote, a finite number "
                "of at least 0"
            )
    if not any(weights):
        raise NamesakeError("every weight is 0: give at least one run a weight above 0")
    return forms.weighted
