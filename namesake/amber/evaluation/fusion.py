"""Fusion of several runs into one by ranx's methods: reciprocal rank fusion (RRF) of a lexical
and a dense run is the cheap fix for what each misses, and the fused run is scored like any
other.

`fuse` takes `namesake.runs.Run` objects and returns one; `fuse_runs` reads the runs first,
as `namesake evaluate` reads them (TREC runs or KILT JSON lines, told from the content). The
runs must answer the same queries: a run with other queries is refused, naming it and a query
it lacks or adds. Rank-based methods (rrf, isr, rbc, borda, condorcet) read only the order;
score-based ones (combsum, combmnz, ..., wsum) need each page's score, normalised per query
(ranx's ``norm``, default min-max). The common methods are fused by numpy
(`namesake.amber.evaluation.fusion_arrays`: two runs of AmbER's 80,000 queries in seconds,
where ranx took minutes), the others by ranx; the output is ranx's either way.

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
from typing import TYPE_CHECKING

from namesake.errors import BadInputError, NamesakeError

if TYPE_CHECKING:  # numpy and pyarrow load when a fusion runs, not at every command's start
    from namesake.runs import Run


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


@dataclass(frozen=True)
class FusionSettings:
    """The knobs of a fusion: RRF's constant ``rrf_k``; RBC's persistence ``rbc_phi``, in
    (0, 1); ``weights``, one per run, for the methods with a weighted form (`METHODS`); the
    per-query normalisation of the scores that score-based methods add (``norm``, one of
    `NORMS`); and how many pages each query keeps (``top_k``).
    >>> fuse([bm25, dense], "combsum", FusionSettings(norm="zmuv", top_k=20))
    """

    rrf_k: int = RRF_K
    rbc_phi: float = RBC_PHI
    weights: tuple[float, ...] | None = None
    norm: str = "min-max"
    top_k: int = 100


def fuse(runs: Sequence[Run], method: str = "rrf", settings: FusionSettings | None = None) -> Run:
    """The fusion of ``runs`` by ``method``, a run named by the method: each query of the
    first run, in its order, with its top ``settings.top_k`` pages, best first, equal scores
    by page id. The arguments are checked before any work (`check_fusion`); a run that lacks
    scores a score-based method needs, or answers other queries than the first, is refused
    naming it (its ``name``). A page repeated in one ranking counts once, at its first rank.

    rrf, isr, rbc, and combsum, wsum and combmnz of min-max, max, sum or zmuv scores are
    fused by numpy (`fusion_arrays`), equal to ranx's output and in seconds at AmbER's size;
    the rest by ranx's `fuse`, `CHUNK_QUERIES` queries at a time.
    >>> fused = fuse([Run.read("bm25.trec"), Run.read("dense.trec")], "rrf")
    >>> fused.write("rrf.trec", "trec")
    """
    from namesake.amber.evaluation import fusion_arrays

    settings = settings or FusionSettings()
    ranx_method = check_fusion(method, settings, len(runs))
    _check_runs(runs, need_scores=not METHODS[method].rank_based)
    aligned = [runs[0], *(_aligned(run, runs[0]) for run in runs[1:])]
    how = fusion_arrays.votes(method, settings.norm, settings.rrf_k, settings.rbc_phi)
    if how is None:
        distinct, _ = fusion_arrays.distinct_pages(aligned)
        result = _fused_by_ranx(distinct, method, ranx_method, settings)
    else:
        result = fusion_arrays.fused(aligned, how, settings.weights, settings.top_k, method)
    result.provenance = {"method": method, "runs": [run.name for run in runs]}
    return result


def fuse_runs(
    paths: Sequence[str | os.PathLike],
    method: str = "rrf",
    k: int = RRF_K,
    weights: Sequence[float] | None = None,
    norm: str = "min-max",
    top_k: int = 100,
    phi: float = RBC_PHI,
) -> Run:
    """The fusion (`fuse`) of the runs in ``paths`` (TREC runs or KILT JSON lines), each
    named by its path, which the refusals name: what `namesake fuse` and `amber compare
    --fuse` call. The arguments are checked before a run is read."""
    from namesake.runs import Run

    settings = FusionSettings(k, phi, None if weights is None else tuple(weights), norm, top_k)
    check_fusion(method, settings, len(paths))
    runs = [Run.read(path, name=str(path)) for path in paths]
    return fuse(runs, method, settings)


def check_fusion(method: str, settings: FusionSettings, runs: int) -> str:
    """ranx's name of ``method`` with ``settings``' weights, once the method, the number of
    runs and every setting hold; else a NamesakeError saying what to change."""
    if method not in METHODS:
        raise NamesakeError(f"no fusion method {method!r}; one of {', '.join(METHODS)}")
    if runs < 2:
        raise NamesakeError("fusion needs at least two runs")
    ranx_method = _ranx_method(method, settings.weights, runs)
    if not 0 < settings.rbc_phi < 1:
        raise NamesakeError(f"rbc's phi must be above 0 and below 1, not {settings.rbc_phi!r}")
    if settings.norm not in NORMS:
        raise NamesakeError(f"no normalisation {settings.norm!r}; one of {', '.join(NORMS)}")
    for name, value in (("rrf_k", settings.rrf_k), ("top_k", settings.top_k)):
        if not isinstance(value, int) or value < 1:
            raise NamesakeError(f"{name} must be a whole number of at least 1, not {value!r}")
    return ranx_method


def _check_runs(runs: Sequence[Run], need_scores: bool) -> None:
    """Scores where the method reads them, and every run answering the first run's queries,
    each once; else a BadInputError naming the run."""
    if need_scores:
        for run in runs:
            if not run.has_scores():
                index = next(
                    i for i in range(len(run)) if any(item[1] is None for item in run.ranking(i))
                )
                raise BadInputError(
                    run.name,
                    None,
                    f"query {run.query_ids[index]} has pages without a score: fuse it with a "
                    f"rank-based method ({', '.join(sorted(RANK_BASED))})",
                )
    for run in runs:
        seen = set()
        for query in run.query_ids.tolist():
            if query in seen:
                raise BadInputError(
                    run.name, None, f"query {query} comes twice: a run ranks a query once"
                )
            seen.add(query)
    first = set(runs[0].query_ids.tolist())
    for run in runs[1:]:
        queries = set(run.query_ids.tolist())
        if queries != first:
            lacks = sorted(first - queries)
            adds = sorted(queries - first)
            detail = f"lacks query {lacks[0]}" if lacks else f"adds query {adds[0]}"
            raise BadInputError(
                run.name,
                None,
                f"{detail} of {runs[0].name} ({len(lacks)} missing, {len(adds)} added): fused "
                "runs must answer the same queries",
            )


def _aligned(run: Run, first: Run) -> Run:
    """``run``'s rankings in the order of ``first``'s queries."""
    if run.query_ids.tolist() == first.query_ids.tolist():
        return run
    return run.select(first.query_ids.tolist())


def _fused_by_ranx(
    runs: Sequence[Run], method: str, ranx_method: str, settings: FusionSettings
) -> Run:
    """The fusion by ranx's `fuse`, of runs whose pages each appear once a ranking."""
    from ranx import Run as RanxRun  # numba's seconds of loading: only for what ranx fuses
    from ranx import fuse as ranx_fuse

    from namesake.runs import Run

    rank_based = METHODS[method].rank_based
    params = {"rrf": {"k": settings.rrf_k}, "rbc": {"phi": settings.rbc_phi}}.get(method, {})
    if settings.weights is not None:
        params["weights"] = [float(weight) for weight in settings.weights]
    queries = runs[0].query_ids.tolist()
    rankings = []
    # ranx holds a run as numba dictionaries: built for all 80,000 queries at once, two runs
    # of 100 pages took 14.5 GB; a slice of queries at a time bounds it, the result the same
    # (every method fuses each query on its own; min-max and the other norms are per query)
    for start in range(0, len(queries), CHUNK_QUERIES):
        stop = min(start + CHUNK_QUERIES, len(queries))
        ranx_runs = [
            RanxRun(_ranx_rankings(run, start, stop, rank_based), name=run.name) for run in runs
        ]
        fused = ranx_fuse(
            ranx_runs,
            norm=None if rank_based else settings.norm,
            method=ranx_method,
            params=params,
        ).to_dict()
        for query_id in queries[start:stop]:
            ranked = sorted(fused[query_id].items(), key=lambda item: (-item[1], item[0]))
            rankings.append(
                (query_id, [(doc, float(score)) for doc, score in ranked[: settings.top_k]])
            )
    return Run.from_rankings(rankings, name=method)


def _ranx_rankings(run: Run, start: int, stop: int, by_rank: bool) -> dict[str, dict[str, float]]:
    """Queries ``start`` to ``stop`` of ``run`` as ranx reads a run, {query: {page: score}};
    ``by_rank``: scores falling by rank, for the rank-based methods, which read the order
    alone (a run may have no scores)."""
    first, last = run.offsets[start], run.offsets[stop]
    pages = run.page_ids[first:last].to_pylist()
    scores = run.scores[first:last].tolist()
    rankings = {}
    for index in range(start, stop):
        a, b = run.offsets[index] - first, run.offsets[index + 1] - first
        values = [float(b - a - rank) for rank in range(b - a)] if by_rank else scores[a:b]
        rankings[run.query_ids[index]] = dict(zip(pages[a:b], values, strict=True))
    return rankings


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
