"""The standard IR measures of a run on AmbER, per query, computed over the run's columns.

They mean exactly what trec_eval means by them (through ir-measures, the reference that
``tests/test_ir_metrics.py`` checks them against on random runs, beside ranx and a
hand-worked example): nDCG@10 with gain 1, log2 discounts and the ideal ranking of
min(R, 10) gold pages; RR@10; R-precision, the share of gold pages among the first R; and
Recall@20 and @100, R being the number of a query's gold pages. AmbER judges a query's gold
pages relevant (1) and nothing else (`AmberQueries.qrels`), so
R-precision is KILT's page-level R-precision. A query whose ranking is empty scores 0.

Rankings are cleaned as the entity_confusion metric cleans them ("None" dropped, a repeated
page kept at its first rank), and the run's order is the one scored (trec_eval's tie-break by
document id never applies). ir-measures took 17-20 s and 2.2 GB for one run of AmbER's
80,000 queries x 100 pages, one dictionary per query; over the columns it is a sort and a few
vectorised passes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from namesake.runs import Run

#: our name -> the ir-measures measure, each in points (0-100) like AmbER's own measures
IR_MEASURES = {
    "ndcg@10": "nDCG@10",
    "mrr@10": "RR@10",
    "r-precision": "Rprec",
    "recall@20": "R@20",
    "recall@100": "R@100",
}
#: our name -> its column header in the reports' tables
IR_HEADERS = {
    "ndcg@10": "nDCG@10",
    "mrr@10": "MRR@10",
    "r-precision": "R-prec",
    "recall@20": "R@20",
    "recall@100": "R@100",
}
NONE_ID = "None"  # the placeholder id the AmbER authors' script drops
#: the rank of a page that is not retrieved: after every retrieved one
NOT_RETRIEVED = np.iinfo(np.int64).max
_CUTOFF = 10  # of nDCG@10 and RR@10


@dataclass(eq=False)
class PageLists:
    """A set of pages per query, as columns: query ``i``'s pages are
    ``page_ids[offsets[i]:offsets[i + 1]]`` (Arrow strings), each once. A query's gold pages,
    or its confusers, aligned with a `Run` of the same queries."""

    offsets: np.ndarray
    page_ids: pa.Array

    @classmethod
    def from_lists(cls, lists: Iterable[Iterable]) -> PageLists:
        """One list of page ids per query; each id is taken as text and kept once, as a
        qrels dictionary keeps a page once."""
        pages: list[str] = []
        lengths: list[int] = []
        for listed in lists:
            distinct = dict.fromkeys(map(str, listed))
            pages.extend(distinct)
            lengths.append(len(distinct))
        offsets = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])
        return cls(offsets, pa.array(pages, type=pa.string()))

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def lengths(self) -> np.ndarray:
        """The number of pages of each query."""
        return np.diff(self.offsets)


def cleaned_ranks(run: Run) -> np.ndarray:
    """Per ranked page, its 0-based rank in its query's ranking as scored ("None" dropped, a
    repeated page kept at its first rank); -1 for a page that cleaning drops."""
    none = pc.equal(run.page_ids, NONE_ID).fill_null(False).to_numpy(zero_copy_only=False)
    kept = ~(none | _repeats(run))
    kept_so_far = np.cumsum(kept)
    kept_before_query = np.concatenate([[0], kept_so_far])[run.offsets[:-1]]
    ranks = kept_so_far - 1 - np.repeat(kept_before_query, run.lengths)
    return np.where(kept, ranks, -1)


def _repeats(run: Run) -> np.ndarray:
    """Per ranked page, whether the same page stands earlier in its query's ranking. A stable
    sort by (query, page) puts the occurrences of a page side by side, the first one first;
    sorting the strings once is cheaper than hashing millions of distinct ids."""
    query = run.query_index()
    order = pc.sort_indices(
        pa.table({"query": query, "page": run.page_ids}),
        sort_keys=[("query", "ascending"), ("page", "ascending")],
    ).to_numpy()
    pages = run.page_ids.take(order)
    same_page = pc.equal(pages[1:], pages[:-1]).fill_null(False).to_numpy(zero_copy_only=False)
    sorted_query = query[order]
    repeats = np.zeros(len(order), dtype=bool)
    repeats[order[1:]] = same_page & (sorted_query[1:] == sorted_query[:-1])
    return repeats


def listed(run: Run, lists: PageLists) -> np.ndarray:
    """Per ranked page, whether it is among its query's pages in ``lists`` (query ``i`` of
    the run is query ``i`` of the lists). Only the pages of the lists are coded: the run's
    millions of other ids are matched against them, never against each other."""
    _check_aligned(run, lists)
    encoded = lists.page_ids.dictionary_encode()
    codes = run.page_codes(encoded.dictionary)  # -1: in no query's list
    width = len(encoded.dictionary)
    listed_keys = np.repeat(np.arange(len(lists), dtype=np.int64), lists.lengths) * width
    listed_keys += encoded.indices.to_numpy(zero_copy_only=False)
    candidates = np.flatnonzero(codes >= 0)
    candidate_keys = run.query_index()[candidates] * width + codes[candidates]
    found = np.zeros(len(codes), dtype=bool)
    found[candidates] = np.isin(candidate_keys, listed_keys)
    return found


def _check_aligned(run: Run, lists: PageLists) -> None:
    if len(run) != len(lists):
        raise ValueError(f"{len(lists)} queries' page lists, {len(run)} rankings")


def best_ranks(run: Run, ranks: np.ndarray, chosen: np.ndarray) -> np.ndarray:
    """Per query, the lowest of the ``ranks`` of its ``chosen`` ranked pages;
    `NOT_RETRIEVED` where it has none."""
    best = np.full(len(run), NOT_RETRIEVED, dtype=np.int64)
    np.minimum.at(best, run.query_index()[chosen], ranks[chosen])
    return best


def ranking_measures(run: Run, gold: PageLists) -> dict[str, np.ndarray]:
    """Measure name (`IR_MEASURES`) -> per-query values in points, query ``i`` of the run
    judged by the gold pages of query ``i`` of ``gold``."""
    ranks = cleaned_ranks(run)
    return gold_measures(run, ranks, (ranks >= 0) & listed(run, gold), gold.lengths)


def gold_measures(
    run: Run, ranks: np.ndarray, gold: np.ndarray, relevant: np.ndarray
) -> dict[str, np.ndarray]:
    """`ranking_measures` from the run's `cleaned_ranks`, the mask of its ranked pages that
    are gold (kept by cleaning, each gold page once) and each query's number of gold pages."""
    query, rank = run.query_index()[gold], ranks[gold]

    def per_query(weights: np.ndarray) -> np.ndarray:
        return np.bincount(query, weights=weights, minlength=len(run))

    def share(found: np.ndarray, of: np.ndarray) -> np.ndarray:
        return 100.0 * np.divide(found, of, out=np.zeros(len(run)), where=of > 0)

    discount = 1.0 / np.log2(np.arange(_CUTOFF) + 2.0)
    ideal = np.concatenate([[0.0], np.cumsum(discount)])[np.minimum(relevant, _CUTOFF)]
    gain = np.zeros(len(rank))
    top = rank < _CUTOFF
    gain[top] = discount[rank[top]]
    first = best_ranks(run, ranks, gold)
    reciprocal = np.zeros(len(run))
    at_top = first < _CUTOFF
    reciprocal[at_top] = 1.0 / (first[at_top] + 1.0)
    return {
        "ndcg@10": share(per_query(gain), ideal),
        "mrr@10": 100.0 * reciprocal,
        "r-precision": share(per_query(rank < relevant[query]), relevant),
        "recall@20": share(per_query(rank < 20), relevant),
        "recall@100": share(per_query(rank < 100), relevant),
    }
