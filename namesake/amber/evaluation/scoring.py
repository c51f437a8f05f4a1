"""The score stage: a `Run` scored on `AmberQueries` with the `entity_confusion` evaluate
module, the standard IR measures and bootstrap intervals over AmbER sets, and the
popularity-gap analysis of the paper's Figure 4; an `Evaluation` holds the result. The metric
itself lives, self-contained, in ``metrics/entity_confusion``.
"""

from __future__ import annotations

import functools
import math
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from namesake.amber.evaluation.paper import PaperRow
from namesake.amber.evaluation.statistics import StatisticsSettings
from namesake.errors import BadInputError, NamesakeError

if TYPE_CHECKING:
    from namesake.amber.evaluation.queries import AmberQueries
    from namesake.amber.evaluation.query_scores import QueryScores, SetSums
    from namesake.runs import Run

# 20%-wide bins of (p_head - p_tail) / p_tail, everything above 100% in the last one.
GAP_BINS = ((0, 20), (20, 40), (40, 60), (60, 80), (80, 100), (100, math.inf))


@dataclass
class Coverage:
    """How the predictions of a file meet the queries of a config: the ids of the queries
    without a prediction (dataset order) and of the predictions that are no query of the
    config (file order)."""

    queries: int
    predictions: int
    missing: list[str]
    unmatched: list[str]

    EXAMPLES = 5

    @property
    def matched(self) -> int:
        return self.predictions - len(self.unmatched)

    def record(self) -> dict:
        """For metrics.json: the counts and the first few ids of each kind."""
        return {
            "queries": self.queries,
            "predictions": self.predictions,
            "queries_without_prediction": len(self.missing),
            "predictions_without_query": len(self.unmatched),
            "examples": {
                "queries_without_prediction": self.missing[: self.EXAMPLES],
                "predictions_without_query": self.unmatched[: self.EXAMPLES],
            },
        }


def run_coverage(queries: AmberQueries, run: Run) -> Coverage:
    """How ``run`` meets the queries of ``queries``' config."""
    query_ids = queries.ids
    known = set(query_ids)
    answered = set(run.query_ids)
    return Coverage(
        queries=len(query_ids),
        predictions=len(run),
        missing=[query_id for query_id in query_ids if query_id not in answered],
        unmatched=[query_id for query_id in run.query_ids if query_id not in known],
    )


def check_coverage(
    coverage: Coverage, config: str, allow_missing: bool = False, source=None
) -> None:
    """Predictions that match no query are an error, and so are queries without a
    prediction unless allowed; `source`, the predictions file, is named in it."""
    if not coverage.matched:
        problem = (
            f"none of the {coverage.predictions} predictions is for a query of {config} "
            f"(e.g. {', '.join(coverage.unmatched[:3])}): predictions of another config?"
            if coverage.predictions
            else "no predictions"
        )
    elif coverage.missing and not allow_missing:
        problem = (
            f"{len(coverage.missing)} of {coverage.queries} queries have no prediction "
            f"(e.g. {', '.join(coverage.missing[:3])}); --allow-missing scores them as empty "
            "rankings"
        )
    else:
        return
    raise NamesakeError(problem) if source is None else BadInputError(source, None, problem)


@dataclass
class GapBin:
    low: float
    high: float
    pairs: int
    head_accuracy: float
    tail_accuracy: float

    @property
    def label(self) -> str:
        return f">{self.low:g}%" if math.isinf(self.high) else f"{self.low:g}-{self.high:g}%"

    @property
    def gap(self) -> float:
        return self.head_accuracy - self.tail_accuracy


@dataclass(frozen=True)
class Evaluation:
    """One run scored on one config: what `score` returns, and what the reports, the tables
    and the paired tests (`compare`) read.

    ``about``: dataset, config, predictions path (None for a run made in memory), retriever
    kind (or None) and candidates ("all", or "set" when each query was ranked within its
    AmbER set); ``metrics``: every figure, ``metrics["intervals"]`` their 95% intervals;
    ``paper``: the paper's figures for the kind the run sits beside (`paper_kind`);
    ``per_query``: every measure query by query, ``sums``: per AmbER set, which the
    resampling reads; ``coverage``: how the run met the config's queries.

    >>> evaluation = score(Run.read("bm25.trec"), AmberQueries.load(folder, "human_qa"))
    >>> evaluation.metrics["accuracy@1_tail"], evaluation.intervals()["accuracy@1_tail"]
    >>> evaluation.to_pandas()  # one row per figure: value, low, high
    """

    about: dict
    metrics: dict
    bins: list[GapBin]
    paper: PaperRow
    name: str = "run"
    per_query: QueryScores | None = None
    sums: SetSums | None = None
    coverage: Coverage | None = None
    query_ids: list[str] | None = None
    queries: AmberQueries | None = None

    def figures(self) -> dict[str, float]:
        """Every figure with an interval: AmbER's measures, the gaps and the IR measures."""
        return {name: self.metrics[name] for name in self.metrics.get("intervals", {})}

    @property
    def statistics(self) -> StatisticsSettings:
        """The resampling this evaluation's intervals were drawn with (``metrics
        ["statistics"]``): what its breakdowns, popularity effect and comparisons resample
        too unless told otherwise, so that one run gets one set of resamples."""
        recorded = self.metrics.get("statistics")
        return StatisticsSettings(**recorded) if recorded else StatisticsSettings()

    def intervals(self) -> dict[str, tuple[float, float]]:
        return {name: tuple(bounds) for name, bounds in self.metrics.get("intervals", {}).items()}

    def to_pandas(self, per_query: bool = False):
        """The figures as a DataFrame (one row per figure: value, low, high), or with
        ``per_query`` one row per query (`per_query_table`)."""
        import pandas as pd

        if per_query:
            return self.per_query_table().to_pandas()
        intervals = self.intervals()
        return pd.DataFrame(
            [(name, value, *intervals[name]) for name, value in self.figures().items()],
            columns=["figure", "value", "low", "high"],
        ).set_index("figure")

    def per_query_table(self):
        """One row per query (an Arrow table, `per_query.parquet` of a report): its id, AmbER
        set, entity (QID, label), head flag, popularity and popularity rank within its set (1:
        the set's most popular entity), task and property asked, the 1-based rank of its
        first gold page (null: none retrieved), every measure of the report in points, and
        for a confused query the namesake whose page ranked above every gold page (QID and
        popularity rank within the set). Its means over all, head and tail queries, and the
        share of sets whose every query is right, are the report's figures. Built once per
        evaluation (the report's parquet and the popularity effect's preference rate both read
        it; an Arrow table is immutable, so they can share it)."""
        return self._per_query_table

    @functools.cached_property
    def _per_query_table(self):
        import pyarrow as pa

        from namesake.amber.evaluation.ir_metrics import NOT_RETRIEVED

        queries, scores = self.queries, self.per_query
        names = queries.rows["name"].to_pylist()
        sets: dict[str, list[dict]] = defaultdict(list)  # each set's members, grouped once
        for member in queries.members.to_pylist():
            sets[member["name"]].append(member)
        rank_in_set, label, owner = {}, {}, {}
        for name, members in sets.items():
            ordered = sorted(members, key=lambda m: -m["popularity"])
            for position, member in enumerate(ordered, 1):
                rank_in_set[(name, member["qid"])] = position
                label[(name, member["qid"])] = member["label"]
                for page in member["wikipedia_ids"]:
                    owner.setdefault((name, page), member["qid"])
        entities = list(zip(names, queries.entity_ids, strict=True))
        confused_with = [
            None if page is None else owner.get((name, page))
            for name, page in zip(names, scores.confused_by, strict=True)
        ]
        columns = {
            "query_id": queries.ids,
            "set": names,
            "entity_qid": queries.entity_ids,
            "entity_label": [label.get(key) for key in entities],
            "is_head": queries.is_head,
            "popularity": queries.popularity,
            "popularity_rank_in_set": [rank_in_set.get(key) for key in entities],
            "task": queries.tasks,
            "property": queries.properties,
            "gold_rank": [None if r == NOT_RETRIEVED else r + 1 for r in scores.gold_rank.tolist()],
            **scores.values,
            "confused_with_qid": confused_with,
            "confused_with_popularity_rank_in_set": [
                None if qid is None else rank_in_set.get((name, qid))
                for name, qid in zip(names, confused_with, strict=True)
            ],
        }
        return pa.table(columns)

    def to_markdown(self, label: dict[str, str] | None = None) -> str:
        """The run's row of the results table, the paper's figures beside ours; ``label``:
        the row's label columns (default: the run's name)."""
        from namesake.amber.evaluation.report import TableRow, results_table

        row = TableRow(label or {"Run": self.name}, self.metrics, self.paper)
        return results_table([row], list(self.per_query.k_values))


def _gap_bin(head_popularity: float, tail_popularity: float) -> int:
    """The GAP_BINS index of (p_head - p_tail) / p_tail, in percent.

    A tail of popularity 0 (log10 of one page view) is infinitely far below any more
    popular head, so it lands in the last, open-ended bin; a head as unpopular has no gap.
    """
    if tail_popularity:
        gap = 100 * (head_popularity - tail_popularity) / tail_popularity
    else:
        gap = math.inf if head_popularity > 0 else 0.0
    return next(
        i for i, (low, high) in enumerate(GAP_BINS) if low <= gap < high or gap == high == math.inf
    )


def popularity_gap(queries: AmberQueries, accuracy: Callable[[list[int]], float]) -> list[GapBin]:
    """Figure 4: head - tail accuracy@1 by popularity gap, over (head, tail entity) pairs.

    Each tail entity of a set forms a pair with the set's head (the most popular head where
    two tie); pairs are binned by (p_head - p_tail) / p_tail on the dataset's popularity
    (log10 page views). A bin's accuracies pool the queries of its heads and of its tails;
    ``accuracy`` gives the accuracy@1 of the queries at the indices it is given, in order.
    """
    queries_of: dict[tuple[str, str], list[int]] = defaultdict(list)
    names, qids = queries.rows["name"].to_pylist(), queries.rows["qid"].to_pylist()
    for index, (name, qid) in enumerate(zip(names, qids, strict=True)):
        queries_of[(name, qid)].append(index)
    members: dict[str, list[tuple[str, bool, float]]] = defaultdict(list)
    table = queries.members
    for name, qid, is_head, popularity in zip(
        table["name"].to_pylist(),
        table["qid"].to_pylist(),
        table["is_head"].to_pylist(),
        table["popularity"].to_pylist(),
        strict=True,
    ):
        members[name].append((qid, is_head, popularity))

    binned: dict[int, tuple[set[int], set[int], int]] = {}
    for name, entity_list in members.items():
        heads = [(p, qid) for qid, is_head, p in entity_list if is_head and queries_of[(name, qid)]]
        if not heads:
            continue
        head_popularity, head = max(heads)
        for qid, is_head, popularity in entity_list:
            if is_head or not queries_of[(name, qid)]:
                continue
            index = _gap_bin(head_popularity, popularity)
            head_queries, tail_queries, pairs = binned.get(index, (set(), set(), 0))
            head_queries.update(queries_of[(name, head)])
            tail_queries.update(queries_of[(name, qid)])
            binned[index] = (head_queries, tail_queries, pairs + 1)

    def pooled(indices: set[int]) -> float:
        return accuracy(sorted(indices)) if indices else math.nan

    return [
        GapBin(low, high, pairs, pooled(head_queries), pooled(tail_queries))
        for index, (low, high) in enumerate(GAP_BINS)
        for head_queries, tail_queries, pairs in [binned.get(index, (set(), set(), 0))]
    ]


@dataclass(frozen=True)
class ScoringOptions:
    """How a run is scored: the accuracy@k cut-offs, the entity_confusion module (a folder;
    None: the bundled one), whether queries without a prediction count as empty rankings
    (else they are an error), and the resampling of the intervals.

    >>> score(run, queries, ScoringOptions(k_values=(1, 5, 20), allow_missing=True))
    """

    k_values: tuple[int, ...] = (1, 20)
    metric: str | None = None
    allow_missing: bool = False
    statistics: StatisticsSettings = field(default_factory=StatisticsSettings)


@functools.cache
def entity_confusion(path: str):
    """A user's entity_confusion evaluate module (``--metric``), loaded once per process."""
    from namesake.metrics import load_metric

    return load_metric("entity_confusion", path)


def score(run: Run, queries: AmberQueries, options: ScoringOptions | None = None) -> Evaluation:
    """``run`` scored on ``queries``: AmbER's figures (accuracy@k on all, head and tail
    queries, all-correct@k, entity confusion), the standard IR measures beside them
    (`namesake.amber.evaluation.ir_metrics`), the head-tail gap of each accuracy@k, each
    figure's 95% bootstrap interval over AmbER sets, and the popularity-gap bins (the
    paper's Figure 4). A run answering no query of the config, or (unless
    ``options.allow_missing``) not every query, is refused, naming the run's file.

    AmbER's figures are the entity_confusion metric's, computed from the per-query gold
    ranks and confusions (`query_scores`, checked equal to the metric's own per-query ranks)
    with its arithmetic, so that 80,000 rankings are never made Python lists; with
    ``options.metric`` (a folder holding a user's entity_confusion module) that module
    computes them, and the popularity gap, from the rankings.

    >>> queries = AmberQueries.load("demo_output/amber", "human_qa")
    >>> evaluation = score(Run.read("bm25-human_qa.jsonl"), queries)
    >>> print(evaluation.to_markdown())
    """
    from namesake.amber.evaluation.paper import paper_kind, paper_row, split_config
    from namesake.amber.evaluation.query_scores import query_scores, set_sums
    from namesake.amber.evaluation.statistics import CONFIDENCE, bootstrap_intervals

    options = options or ScoringOptions()
    coverage = run_coverage(queries, run)
    check_coverage(coverage, queries.config, options.allow_missing, run.provenance.get("path"))
    aligned = run.select(queries.ids)
    k_values = list(options.k_values)
    per_query = query_scores(aligned, queries.judgments(), k_values)
    sums = set_sums(per_query)
    figures = sums.figures()
    if options.metric is None:
        metrics = amber_figures(per_query, figures)
        hits = per_query.gold_rank < 1
        bins = popularity_gap(queries, lambda chosen: _percent(hits[chosen].sum(), len(chosen)))
    else:
        metrics, bins = _user_metric(aligned, queries, options)
    # the IR measures and the gaps come from the sums, after AmbER's own figures
    for name, value in figures.items():
        metrics.setdefault(name, value)
    settings = options.statistics
    intervals = bootstrap_intervals(
        sums, resamples=settings.bootstrap_resamples, seed=settings.seed
    )
    metrics["intervals"] = {name: list(interval) for name, interval in intervals.items()}
    metrics["bootstrap"] = {
        "unit": "AmbER set",
        "resamples": settings.bootstrap_resamples,
        "confidence": CONFIDENCE,
        "method": "percentile",
        "seed": settings.seed,
    }
    metrics["statistics"] = settings.record()  # as `compare-runs` would resample this run
    metrics["coverage"] = coverage.record()
    retriever = run.provenance.get("retriever")
    candidates = run.provenance.get("candidates", "all")
    about = {
        "dataset": queries.dataset,
        "config": queries.config,
        "predictions": run.provenance.get("path"),
        "retriever": retriever,
        "candidates": candidates,
    }
    return Evaluation(
        about,
        metrics,
        bins,
        paper_row(paper_kind(retriever, candidates), *split_config(queries.config)),
        run.name,
        per_query,
        sums,
        coverage,
        queries.ids,
        queries,
    )


def amber_figures(per_query: QueryScores, figures: dict[str, float]) -> dict:
    """AmbER's figures in the entity_confusion metric's order and arithmetic
    (``100 * hits / total``, which the per-set sums reproduce exactly: every addend is a
    whole number of points), then the counts of queries and sets."""
    names = [
        f"{measure}{part}"
        for k in per_query.k_values
        for measure, part in (
            (f"accuracy@{k}", ""),
            (f"accuracy@{k}", "_head"),
            (f"accuracy@{k}", "_tail"),
            (f"all_correct@{k}", ""),
        )
    ]
    names += ["entity_confusion", "entity_confusion_head", "entity_confusion_tail"]
    found = {name: figures[name] for name in names}
    found["num_queries"] = len(per_query.set_index)
    found["num_sets"] = per_query.num_sets
    return found


def _percent(hits, total: int) -> float:
    """``100 * hits / total``, the entity_confusion metric's arithmetic."""
    return 100 * int(hits) / int(total) if total else math.nan


def _user_metric(run: Run, queries: AmberQueries, options: ScoringOptions) -> tuple[dict, list]:
    """AmbER's figures and the popularity-gap bins by the user's entity_confusion module,
    from the rankings as lists."""
    metric = entity_confusion(options.metric)
    rankings = run.ranked_ids()
    references = queries.references()
    k_values = list(options.k_values)
    metrics = metric.compute(predictions=rankings, references=references, k_values=k_values)

    def accuracy(chosen: list[int]) -> float:
        return metric.compute(
            predictions=[rankings[i] for i in chosen],
            references=[references[i] for i in chosen],
            k_values=[1],
        )["accuracy@1"]

    return metrics, popularity_gap(queries, accuracy)
