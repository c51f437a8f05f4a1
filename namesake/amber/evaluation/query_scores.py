"""Every measure of a run, query by query, and the figures a report prints as sums over AmbER
sets: what the confidence intervals and the paired tests of `namesake.amber.evaluation.statistics`
resample.

A figure is a ratio of two sums over the queries it covers (accuracy@1 on tail queries: the
tail queries' hits over their number; all-correct@k: the sets all right over the sets), so
each set contributes one numerator and one denominator to each figure. Resampling sets and
re-adding their contributions gives the figure on a resampled benchmark; the head-tail gaps
are differences of two such figures. Queries of one set share a name and a retriever's
confusion between them, so they are not independent: the set is the unit of resampling.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from namesake.amber.evaluation.ir_metrics import (
    IR_MEASURES,
    PageLists,
    best_ranks,
    cleaned_ranks,
    gold_measures,
    listed,
)
from namesake.runs import Run

PARTS = ("", "_head", "_tail")


@dataclass
class QueryScores:
    """Per query (dataset order): its set (0-based codes), whether it is about the set's
    head entity, each measure's value in points (accuracy@k: 0 or 100), and the 0-based rank
    of its best gold page in the cleaned ranking (``NOT_RETRIEVED`` where none is) and, for a
    confused query, the namesake's page that ranks above every gold page (None otherwise)."""

    set_index: np.ndarray
    is_head: np.ndarray
    values: dict[str, np.ndarray]
    k_values: list[int]
    gold_rank: np.ndarray | None = None
    confused_by: list[str | None] | None = None

    @property
    def num_sets(self) -> int:
        return int(self.set_index.max()) + 1 if self.set_index.size else 0


@dataclass(eq=False)
class QueryJudgments:
    """What AmbER says of each query (dataset order), as columns: its gold pages, its
    confusers (the pages of the other entities of its set; a page that is also gold counts
    as gold), its set (0-based codes, in the order sets first appear) and whether it is
    about the set's head entity."""

    gold: PageLists
    confusers: PageLists
    set_index: np.ndarray
    is_head: np.ndarray

    @classmethod
    def from_references(cls, references: Sequence[dict]) -> QueryJudgments:
        """From the entity_confusion metric's references (`AmberQueries.references`)."""
        codes: dict[str, int] = {}
        return cls(
            PageLists.from_lists(reference["gold_ids"] for reference in references),
            PageLists.from_lists(reference["confuser_ids"] for reference in references),
            np.array(
                [codes.setdefault(reference["set_id"], len(codes)) for reference in references],
                dtype=np.int64,
            ),
            np.array([bool(reference["is_head"]) for reference in references], dtype=bool),
        )


def query_scores(run: Run, judgments: QueryJudgments, k_values: Sequence[int]) -> QueryScores:
    """AmbER's measures and the standard IR measures (`ir_metrics`), query by query; query
    ``i`` of ``run`` is query ``i`` of ``judgments``.

    Accuracy@k and entity confusion are the entity_confusion metric's (`per_query_ranks`,
    which ``tests/test_query_scores.py`` checks them against): the gold rank is the best
    gold page's rank in the cleaned ranking, and a query is confused when a confuser ranks
    above every gold page."""
    ranks = cleaned_ranks(run)
    kept = ranks >= 0
    gold = kept & listed(run, judgments.gold)
    # a confuser that is also gold ranks at or below the best gold page: it never confuses
    confusers = kept & listed(run, judgments.confusers)
    gold_rank = best_ranks(run, ranks, gold)
    values = {f"accuracy@{k}": 100.0 * (gold_rank < k) for k in k_values}
    confused = best_ranks(run, ranks, confusers) < gold_rank
    values["entity_confusion"] = 100.0 * confused
    values.update(gold_measures(run, ranks, gold, judgments.gold.lengths))
    return QueryScores(
        judgments.set_index,
        judgments.is_head,
        values,
        list(k_values),
        gold_rank,
        first_pages(run, ranks, confusers, confused),
    )


def first_pages(
    run: Run, ranks: np.ndarray, chosen: np.ndarray, wanted: np.ndarray
) -> list[str | None]:
    """Per query, its best-ranked ``chosen`` page where ``wanted`` (None elsewhere): which
    namesake's page a confused query ranked first. Only the chosen pages are sorted."""
    positions = np.flatnonzero(chosen)
    query = run.query_index()[positions]
    order = np.lexsort((ranks[positions], query))
    positions, query = positions[order], query[order]
    first = np.r_[True, query[1:] != query[:-1]] if len(query) else np.zeros(0, dtype=bool)
    found: list[str | None] = [None] * len(run)
    pages = run.page_ids.take(pa.array(positions[first])).to_pylist()
    for index, page in zip(query[first].tolist(), pages, strict=True):
        if wanted[index]:
            found[index] = page
    return found


@dataclass
class SetSums:
    """Per set (rows) and figure (columns): the numerator and denominator it adds; ``gaps``:
    figures that are a difference of two others (name -> (minuend, subtrahend))."""

    names: list[str]
    numerators: np.ndarray
    denominators: np.ndarray
    gaps: dict[str, tuple[str, str]]

    def figures(self, weights: np.ndarray | None = None) -> dict[str, float]:
        """Each figure (ratios, then gaps) with every set counted ``weights`` times (default 1);
        a figure over no query is NaN."""
        weights = np.ones(len(self.numerators)) if weights is None else weights
        with np.errstate(invalid="ignore", divide="ignore"):
            ratios = (weights @ self.numerators) / (weights @ self.denominators)
        found = dict(zip(self.names, ratios.tolist(), strict=True))
        for name, (minuend, subtrahend) in self.gaps.items():
            found[name] = found[minuend] - found[subtrahend]
        return found

    def gap_matrix(self) -> np.ndarray:
        """(figures, gaps): the ±1 weights that turn the ratio figures into the gaps."""
        matrix = np.zeros((len(self.names), len(self.gaps)))
        for column, (minuend, subtrahend) in enumerate(self.gaps.values()):
            matrix[self.names.index(minuend), column] = 1.0
            matrix[self.names.index(subtrahend), column] = -1.0
        return matrix


def measure_names(k_values: Sequence[int]) -> list[str]:
    """The per-query measures, in report order."""
    return [f"accuracy@{k}" for k in k_values] + ["entity_confusion", *IR_MEASURES]


def set_sums(scores: QueryScores) -> SetSums:
    """The figures of a report as per-set sums: every measure on all, head and tail queries,
    all-correct@k per set, and the head-tail gap of each accuracy@k."""
    sets = scores.num_sets
    is_head = scores.is_head.astype(float)
    covered = {"": np.ones_like(is_head), "_head": is_head, "_tail": 1.0 - is_head}

    def per_set(values: np.ndarray) -> np.ndarray:
        return np.bincount(scores.set_index, weights=values, minlength=sets)

    names, numerators, denominators = [], [], []
    for measure in measure_names(scores.k_values):
        values = scores.values[measure]
        for part in PARTS:
            names.append(measure + part)
            numerators.append(per_set(values * covered[part]))
            denominators.append(per_set(covered[part]))
        if measure.startswith("accuracy@"):
            k = measure.partition("@")[2]
            wrong = per_set(values < 100.0)
            names.append(f"all_correct@{k}")
            numerators.append(100.0 * (wrong == 0))
            denominators.append(np.ones(sets))
    gaps = {
        f"head_tail_gap@{k}": (f"accuracy@{k}_head", f"accuracy@{k}_tail") for k in scores.k_values
    }
    return SetSums(
        names,
        np.stack(numerators, axis=1) if names else np.zeros((sets, 0)),
        np.stack(denominators, axis=1) if names else np.zeros((sets, 0)),
        gaps,
    )
