"""Scoring retrieval predictions on AmbER with the `entity_confusion` evaluate module.

This module builds the metric's references from a loaded AmbER dataset (gold pages, and
the pages of the other entities of the same set as confusers) and runs the popularity-gap
analysis of the paper's Figure 4. The metric itself lives, self-contained, in
``metrics/entity_confusion``.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from datasets import Dataset, load_dataset

from namesake.amber.evaluation.paper import PaperRow
from namesake.errors import BadInputError, NamesakeError
from namesake.runs import Run

# 20%-wide bins of (p_head - p_tail) / p_tail, everything above 100% in the last one.
GAP_BINS = ((0, 20), (20, 40), (40, 60), (60, 80), (80, 100), (100, math.inf))


def load_amber(dataset: str, config: str) -> tuple[Dataset, Dataset]:
    """The queries of ``config`` and the members of its collection's sets (path or Hub id).

    A config of set members (``human_entities``) is refused, and a dataset or config that
    does not load is a BadInputError naming the dataset (`_load_config`)."""
    queries = load_queries(dataset, config)
    entities = _load_config(dataset, f"{config.partition('_')[0]}_entities")
    return queries, entities


def load_queries(dataset: str, config: str) -> Dataset:
    """The queries of ``config`` alone; refused as in `load_amber`."""
    collection, _, task = config.partition("_")
    if task == "entities":
        raise NamesakeError(  # not a BadInputError: `set_pages` rewords those
            f"{dataset}: {config} holds the members of the {collection} sets, not queries: use "
            f"{collection}, {collection}_qa, {collection}_sf or {collection}_fc"
        )
    return _load_config(dataset, config)


def _load_config(dataset: str, config: str) -> Dataset:
    """The test split of one config; what `datasets` raises for a dataset that is neither a
    folder nor a Hub dataset that loads, or for a config it lacks, becomes one line."""
    from datasets.exceptions import DatasetGenerationError

    try:
        return load_dataset(dataset, config, split="test")
    except ValueError as exc:
        text = str(exc)
        if "BuilderConfig" not in text:
            if "Unknown split" in text:
                raise BadInputError(dataset, None, f"config {config} has no test split") from None
            raise
        available = re.findall(r"'([^']*)'", text.partition("Available:")[2])
        queries = [name for name in available if not name.endswith("_entities")]
        raise BadInputError(
            dataset,
            None,
            f"no config {config!r}; its query configs: {', '.join(queries) or 'none'}",
        ) from None
    except DatasetGenerationError as exc:
        cause = exc.__cause__ or exc
        raise BadInputError(dataset, None, f"config {config} does not load ({cause})") from None
    except (FileNotFoundError, ConnectionError) as exc:
        if Path(dataset).exists():
            raise BadInputError(dataset, None, f"not an AmbER dataset folder ({exc})") from None
        if Path(dataset).is_absolute() or dataset.startswith((".", "~")) or dataset.count("/") > 1:
            raise BadInputError(dataset, None, "no such dataset folder") from None
        raise BadInputError(
            dataset, None, f"no such dataset folder, nor a Hub dataset that loads ({exc})"
        ) from None


def build_references(queries: Dataset, entities: Dataset) -> list[dict]:
    """Per query: gold pages, the other set members' pages (confusers), head flag, set id."""
    pages: dict[str, dict[str, list[str]]] = defaultdict(dict)
    for name, qid, ids in zip(
        entities["name"], entities["qid"], entities["wikipedia_ids"], strict=True
    ):
        pages[name][qid] = ids
    references = []
    for name, qid, is_head, gold in zip(
        queries["name"],
        queries["qid"],
        queries["is_head"],
        queries["gold_wikipedia_ids"],
        strict=True,
    ):
        confusers = dict.fromkeys(
            page
            for other, other_pages in pages[name].items()
            if other != qid
            for page in other_pages
            if page not in gold
        )
        references.append(
            {"gold_ids": gold, "confuser_ids": list(confusers), "is_head": is_head, "set_id": name}
        )
    return references


def amber_qrels(queries: Dataset) -> dict[str, dict[str, int]]:
    """TREC-style relevance judgments of a query config: every gold page of a query is
    relevant (1), nothing else is judged. One source for `amber qrels` and the BEIR export;
    the standard IR measures judge by the same gold pages (`query_scores.QueryJudgments`)."""
    return {
        query_id: dict.fromkeys(map(str, gold), 1)
        for query_id, gold in zip(queries["id"], queries["gold_wikipedia_ids"], strict=True)
    }


#: the columns that scoring reads, of a query config and of its ``_entities`` config
QUERY_COLUMNS = ("id", "name", "qid", "is_head", "gold_wikipedia_ids")
ENTITY_COLUMNS = ("name", "qid", "is_head", "popularity", "wikipedia_ids")


def check_columns(queries: Dataset, entities: Dataset, dataset: str, config: str) -> None:
    """A config without the columns that scoring reads is a BadInputError naming them."""
    members = f"{config.partition('_')[0]}_entities"
    for name, table, needed in (
        (config, queries, QUERY_COLUMNS),
        (members, entities, ENTITY_COLUMNS),
    ):
        missing = [column for column in needed if column not in table.column_names]
        if missing:
            raise BadInputError(
                dataset, None, f"config {name} has no column {', '.join(missing)}: not AmbER?"
            )


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


def prediction_coverage(queries: Dataset, predictions: dict[str, list[str]]) -> Coverage:
    query_ids = list(queries["id"])
    known = set(query_ids)
    return Coverage(
        queries=len(query_ids),
        predictions=len(predictions),
        missing=[query_id for query_id in query_ids if query_id not in predictions],
        unmatched=[query_id for query_id in predictions if query_id not in known],
    )


def coverage_lines(record: dict, config: str) -> list[str]:
    """What `evaluate` prints of a `Coverage.record`: queries without a prediction and
    predictions without a query, with a few ids of each."""
    examples = record["examples"]

    def ids(kind: str) -> str:
        shown = examples[kind]
        return f" (e.g. {', '.join(shown)})" if shown else ""

    return [
        f"{record['queries_without_prediction']} of {record['queries']} queries of {config} "
        "had no prediction, scored as empty rankings" + ids("queries_without_prediction"),
        f"{record['predictions_without_query']} of {record['predictions']} predictions "
        f"matched no query of {config}, not scored" + ids("predictions_without_query"),
    ]


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


def rankings_for(
    queries: Dataset, predictions: dict[str, list[str]], allow_missing: bool = False
) -> list[list[str]]:
    """The ranking of every query, in dataset order; predictions that match no query are an
    error, and so are missing ones unless allowed (`check_coverage`)."""
    check_coverage(prediction_coverage(queries, predictions), "this config", allow_missing)
    return [predictions.get(query_id, []) for query_id in queries["id"]]


def rankings_run(query_ids: Sequence[str], rankings: Sequence[Sequence[str]]) -> Run:
    """Rankings of page ids, one per query of ``query_ids`` (as `rankings_for` gives them),
    as a `Run` without scores: what `query_scores` scores."""
    return Run.from_rankings(
        (query_id, [(page, None) for page in ranking])
        for query_id, ranking in zip(query_ids, rankings, strict=True)
    )


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
    """One predictions file scored on one config.

    ``about``: dataset, config, predictions path, retriever kind (or None) and candidates
    ("all", or "set" when each query was ranked within its AmbER set); ``paper``: the paper's
    figures for the kind the run sits beside (`paper_kind`)."""

    about: dict
    metrics: dict
    bins: list[GapBin]
    paper: PaperRow


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


def popularity_gap(
    queries: Dataset,
    entities: Dataset,
    rankings: list[list[str]],
    references: list[dict],
    metric,
) -> list[GapBin]:
    """Figure 4: head - tail accuracy@1 by popularity gap, over (head, tail entity) pairs.

    Each tail entity of a set forms a pair with the set's head (the most popular head where
    two tie); pairs are binned by (p_head - p_tail) / p_tail on the dataset's popularity
    (log10 page views). A bin's accuracies pool the queries of its heads and of its tails.
    """
    queries_of: dict[tuple[str, str], list[int]] = defaultdict(list)
    for index, (name, qid) in enumerate(zip(queries["name"], queries["qid"], strict=True)):
        queries_of[(name, qid)].append(index)
    members: dict[str, list[tuple[str, bool, float]]] = defaultdict(list)
    for name, qid, is_head, popularity in zip(
        entities["name"],
        entities["qid"],
        entities["is_head"],
        entities["popularity"],
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

    def accuracy(indices: set[int]) -> float:
        if not indices:
            return math.nan
        chosen = sorted(indices)
        result = metric.compute(
            predictions=[rankings[i] for i in chosen],
            references=[references[i] for i in chosen],
            k_values=[1],
        )
        return result["accuracy@1"]

    return [
        GapBin(low, high, pairs, accuracy(head_queries), accuracy(tail_queries))
        for index, (low, high) in enumerate(GAP_BINS)
        for head_queries, tail_queries, pairs in [binned.get(index, (set(), set(), 0))]
    ]


def score_predictions(
    queries: Dataset,
    entities: Dataset,
    predictions: dict[str, list[str]],
    k_values: list[int],
    metric,
    allow_missing: bool = False,
    resamples: int | None = None,
    seed: int = 0,
) -> tuple[dict, list[GapBin]]:
    """The metric's scores on every query of ``queries``, the standard IR measures beside them
    (`namesake.amber.evaluation.ir_metrics`), the head-tail gap of each accuracy@k, and the
    popularity-gap bins; ``metrics["intervals"]``: each figure's 95% bootstrap interval over AmbER
    sets (``resamples`` of them, default `statistics.BOOTSTRAP_RESAMPLES`);
    ``metrics["coverage"]``: what `Coverage.record` says of the predictions."""
    from namesake.amber.evaluation.query_scores import QueryJudgments, query_scores, set_sums
    from namesake.amber.evaluation.statistics import (
        BOOTSTRAP_RESAMPLES,
        CONFIDENCE,
        bootstrap_intervals,
    )

    references = build_references(queries, entities)
    rankings = rankings_for(queries, predictions, allow_missing)
    metrics = metric.compute(predictions=rankings, references=references, k_values=k_values)
    judgments = QueryJudgments.from_references(references)
    sums = set_sums(query_scores(rankings_run(queries["id"], rankings), judgments, k_values))
    # AmbER's own figures stay the metric's; the IR measures and the gaps come from the sums
    for name, value in sums.figures().items():
        metrics.setdefault(name, value)
    resamples = BOOTSTRAP_RESAMPLES if resamples is None else resamples
    intervals = bootstrap_intervals(sums, resamples=resamples, seed=seed)
    metrics["intervals"] = {name: list(interval) for name, interval in intervals.items()}
    metrics["bootstrap"] = {
        "unit": "AmbER set",
        "resamples": resamples,
        "confidence": CONFIDENCE,
        "method": "percentile",
        "seed": seed,
    }
    metrics["coverage"] = prediction_coverage(queries, predictions).record()
    return metrics, popularity_gap(queries, entities, rankings, references, metric)
