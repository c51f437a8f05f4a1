"""Scoring retrieval predictions on AmbER with the `entity_confusion` evaluate module.

This module builds the metric's references from a loaded AmbER dataset (gold pages, and
the pages of the other entities of the same set as confusers) and runs the popularity-gap
analysis of the paper's Figure 4. The metric itself lives, self-contained, in
``metrics/entity_confusion``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

from datasets import Dataset, load_dataset

from namesake.io import NamesakeError

# 20%-wide bins of (p_head - p_tail) / p_tail, everything above 100% in the last one.
GAP_BINS = ((0, 20), (20, 40), (40, 60), (60, 80), (80, 100), (100, math.inf))


def load_amber(dataset: str, config: str) -> tuple[Dataset, Dataset]:
    """The queries of ``config`` and the members of its collection's sets (path or Hub id)."""
    collection = config.split("_")[0]
    queries = load_dataset(dataset, config, split="test")
    entities = load_dataset(dataset, f"{collection}_entities", split="test")
    return queries, entities


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


def rankings_for(
    queries: Dataset, predictions: dict[str, list[str]], allow_missing: bool = False
) -> list[list[str]]:
    """The ranking of every query, in dataset order; missing ones are an error unless allowed."""
    missing = [query_id for query_id in queries["id"] if query_id not in predictions]
    if missing and not allow_missing:
        raise NamesakeError(
            f"{len(missing)} of {len(queries)} queries have no prediction "
            f"(e.g. {', '.join(missing[:3])}); --allow-missing scores them as empty rankings"
        )
    return [predictions.get(query_id, []) for query_id in queries["id"]]


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
) -> tuple[dict, list[GapBin]]:
    """The metric's scores on every query of ``queries`` and the popularity-gap bins."""
    references = build_references(queries, entities)
    rankings = rankings_for(queries, predictions, allow_missing)
    metrics = metric.compute(predictions=rankings, references=references, k_values=k_values)
    return metrics, popularity_gap(queries, entities, rankings, references, metric)
