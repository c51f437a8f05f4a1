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

import inspect
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from namesake.amber.evaluation.ir_metrics import IR_MEASURES, per_query_ir_measures

PARTS = ("", "_head", "_tail")


@dataclass
class QueryScores:
    """Per query (dataset order): its set (0-based codes), whether it is about the set's
    head entity, and each measure's value in points (accuracy@k: 0 or 100)."""

    set_index: np.ndarray
    is_head: np.ndarray
    values: dict[str, np.ndarray]
    k_values: list[int]

    @property
    def num_sets(self) -> int:
        return int(self.set_index.max()) + 1 if self.set_index.size else 0


def query_scores(
    rankings: Sequence[Sequence[str]],
    references: Sequence[dict],
    qrels: dict[str, dict[str, int]],
    k_values: Sequence[int],
    metric,
) -> QueryScores:
    """AmbER's measures (from the entity_confusion module's own per-query ranks, so that they
    add up to its figures exactly) and the standard IR measures, query by query.

    ``metric``: the loaded entity_confusion module (its script supplies `per_query_ranks`);
    ``qrels``: `amber_qrels` of the same queries, in the same order as ``rankings``."""
    module = inspect.getmodule(type(metric)) if not inspect.ismodule(metric) else metric
    gold_rank, confused = module.per_query_ranks(
        rankings,
        [reference["gold_ids"] for reference in references],
        [reference["confuser_ids"] for reference in references],
    )
    codes: dict[str, int] = {}
    set_index = np.array(
        [codes.setdefault(reference["set_id"], len(codes)) for reference in references],
        dtype=np.int64,
    )
    values = {f"accuracy@{k}": 100.0 * (gold_rank < k) for k in k_values}
    values["entity_confusion"] = 100.0 * confused
    values.update(per_query_ir_measures(qrels, rankings))
    is_head = np.array([bool(reference["is_head"]) for reference in references])
    return QueryScores(set_index, is_head, values, list(k_values))


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
