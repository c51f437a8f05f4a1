"""Breakdowns of an evaluation (issue 50, item 2): the report's headline measures per group of
queries (popularity decile, property asked, task, size of the AmbER set), each figure with
its 95% interval from the set-clustered bootstrap of the report's own figures.

A group's figure is a ratio of per-set sums restricted to the group's queries (its queries'
values over their number), so every group of every field asked for becomes columns of one
`SetSums`, and one call of `bootstrap_intervals`, with the evaluation's seed, resamples
them all: the sets drawn are those behind the report's intervals. A group whose queries come
from fewer than MIN_SETS sets says so instead of a figure: a bootstrap over two or three
sets gives an interval that means nothing.

>>> evaluation = score(run, queries)
>>> for breakdown in breakdowns(evaluation, ["popularity", "property"]):
...     print(breakdown.about, breakdown.table(), sep="\\n\\n")
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import numpy as np

from namesake.amber.evaluation.ir_metrics import IR_HEADERS
from namesake.amber.evaluation.query_scores import QueryScores, SetSums
from namesake.amber.evaluation.statistics import (
    MIN_SETS,
    StatisticsSettings,
    bootstrap_intervals,
    figure_cell,
)
from namesake.errors import BadInputError, NamesakeError
from namesake.markdown import markdown_table

if TYPE_CHECKING:
    from namesake.amber.evaluation.queries import AmberQueries
    from namesake.amber.evaluation.scoring import Evaluation

#: what queries can be grouped by (`namesake evaluate --by`)
BREAKDOWN_FIELDS = ("popularity", "property", "task", "set-size")
#: the measures of a group, after accuracy@k at each of the report's cut-offs
HEADLINE_MEASURES = ("entity_confusion", "ndcg@10", "mrr@10")
DECILES = 10
#: the bins of the number of entities in a query's AmbER set: (smallest, largest)
SET_SIZE_BINS = ((2, 2), (3, 3), (4, 4), (5, 9), (10, math.inf))
#: the query column each field reads (set-size reads the set members)
_FIELD_COLUMNS = {"popularity": "popularity", "property": "pid", "task": "task"}


def check_fields(fields: Sequence[str]) -> None:
    """A field that is not one of BREAKDOWN_FIELDS is a NamesakeError naming it: checked
    before any work, so that nothing is written for a mistyped ``--by``."""
    for name in fields:
        if name not in BREAKDOWN_FIELDS:
            raise NamesakeError(
                f"--by: unknown field {name!r}; choose from {', '.join(BREAKDOWN_FIELDS)}"
            )


def headline_measures(k_values: Sequence[int]) -> list[str]:
    """The measures of a breakdown's groups, in table order."""
    return [f"accuracy@{k}" for k in k_values] + list(HEADLINE_MEASURES)


def popularity_deciles(queries: AmberQueries) -> np.ndarray:
    """The edges of the popularity bins: the deciles of the queries' popularity (log10 monthly
    page views; numpy's linear quantiles, as ``pandas.qcut``'s), ascending. Where ties make
    decile edges equal they are merged, and there are fewer bins than ten (one at least)."""
    popularity = queries.popularity
    unknown = np.flatnonzero(np.isnan(popularity))
    if unknown.size:
        raise BadInputError(
            queries.dataset,
            None,
            f"config {queries.config}: no popularity for {unknown.size} of its {len(queries)} "
            f"queries (e.g. {queries.ids[unknown[0]]}), which the popularity bins need",
        )
    edges = np.unique(np.quantile(popularity, np.linspace(0, 1, DECILES + 1)))
    return edges if len(edges) > 1 else np.repeat(edges, 2)


def popularity_bins(popularity: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Per query, its bin (0-based) among ``edges``: bins are closed on the right, (low,
    high], the first also holding its low edge, as ``pandas.qcut``'s."""
    return np.searchsorted(edges[1:-1], popularity, side="left")


def bin_label(low: float, high: float) -> str:
    """A popularity bin as tables and plots label it: its edges, log10 monthly page views."""
    return f"{low:.2f}–{high:.2f}"


@dataclass
class Group:
    """One group of a breakdown: its label, its queries and the sets they come from, and
    each measure's figure with its 95% interval, or (None, None) and a note saying why not."""

    label: str
    queries: int
    sets: int
    figures: dict[str, float] | None
    intervals: dict[str, tuple[float, float]] | None
    note: str = ""

    def record(self) -> dict:
        """For metrics.json (the intervals' pairs become lists)."""
        return asdict(self)

    def cells(self, measures: Sequence[str]) -> list[str]:
        """The group's figures as the report prints them, ``–`` where it has none."""
        if self.figures is None:
            return ["–"] * len(measures)
        return [figure_cell(self.figures[name], self.intervals[name]) for name in measures]


@dataclass
class Breakdown:
    """The headline measures of one field's groups; ``edges``: the popularity bins' edges
    (None for the other fields); ``about``: what the groups are, the edges printed."""

    field: str
    measures: list[str]
    groups: list[Group]
    edges: list[float] | None
    about: str

    def record(self) -> dict:
        """For metrics.json."""
        return {
            "field": self.field,
            "about": self.about,
            "edges": self.edges,
            "min_sets": MIN_SETS,
            "measures": self.measures,
            "groups": [group.record() for group in self.groups],
        }

    def to_markdown(self) -> str:
        """What the groups are (the popularity edges), then the table: what `evaluate`
        prints and report.md holds."""
        return f"{self.about}\n\n{self.table()}"

    def table(self) -> str:
        """Markdown: a row per group, its queries and sets, each figure with its interval
        (``44.4 [33.3, 55.6]``), and the note of a group too small for figures."""
        noted = any(group.note for group in self.groups)
        header = [self.field.capitalize(), "Queries", "Sets"]
        header += [_HEADERS.get(name) or name.replace("accuracy", "Acc") for name in self.measures]
        rows = [
            [group.label, str(group.queries), str(group.sets), *group.cells(self.measures)]
            + ([group.note] if noted else [])
            for group in self.groups
        ]
        align = "l" + "r" * (len(header) - 1) + ("l" if noted else "")
        return markdown_table(header + (["Note"] if noted else []), rows, align)


_HEADERS = {"entity_confusion": "Confusion", **IR_HEADERS}


@dataclass
class _Grouping:
    """Queries in groups: per query its group (0-based), the groups' labels, and what they
    are (the popularity edges where there are some)."""

    codes: np.ndarray
    labels: list[str]
    about: str
    edges: np.ndarray | None = None


def breakdowns(
    evaluation: Evaluation,
    fields: Sequence[str],
    statistics: StatisticsSettings | None = None,
    min_sets: int = MIN_SETS,
) -> list[Breakdown]:
    """The headline measures (`headline_measures`) of each field's groups of queries, in the
    order of ``fields`` (BREAKDOWN_FIELDS), each figure the plain mean of its group's
    per-query values with its 95% interval from one set-clustered bootstrap for every group
    of every field; ``statistics``: its resampling (default: the evaluation's own, so the
    sets drawn are those behind the report's intervals). A group from fewer than
    ``min_sets`` sets has a note instead of figures.

    >>> by_property, = breakdowns(score(run, queries), ["property"])
    >>> print(by_property.to_markdown())
    """
    check_fields(fields)
    fields = list(dict.fromkeys(fields))
    queries, scores = evaluation.queries, evaluation.per_query
    _check_columns(queries, fields)
    settings = statistics or evaluation.statistics
    measures = headline_measures(scores.k_values)
    groupings = [_grouping(queries, name) for name in fields]
    parts = [_group_sums(scores, grouping, measures) for grouping in groupings]
    sums = _side_by_side([part for part, _ in parts])
    figures = sums.figures()
    intervals = bootstrap_intervals(sums, settings.bootstrap_resamples, seed=settings.seed)

    def group(number: int, index: int, label: str, counts: np.ndarray) -> Group:
        keys = {measure: f"{number}:{index}:{measure}" for measure in measures}
        sets = int((counts > 0).sum())
        if sets < min_sets:
            note = f"{sets} set{'' if sets == 1 else 's'}: too few for a figure"
            return Group(label, int(counts.sum()), sets, None, None, note)
        return Group(
            label,
            int(counts.sum()),
            sets,
            {measure: figures[key] for measure, key in keys.items()},
            {measure: intervals[key] for measure, key in keys.items()},
        )

    return [
        Breakdown(
            name,
            measures,
            [group(number, i, label, counts[:, i]) for i, label in enumerate(grouping.labels)],
            None if grouping.edges is None else grouping.edges.tolist(),
            grouping.about,
        )
        for number, (name, grouping, (_, counts)) in enumerate(
            zip(fields, groupings, parts, strict=True)
        )
    ]


def _side_by_side(parts: Sequence[SetSums]) -> SetSums:
    """The columns of every field's sums in one `SetSums`, each name prefixed with its
    field's position, that one bootstrap resamples them together."""
    return SetSums(
        [f"{number}:{name}" for number, part in enumerate(parts) for name in part.names],
        np.hstack([part.numerators for part in parts]),
        np.hstack([part.denominators for part in parts]),
        {},
    )


def _check_columns(queries: AmberQueries, fields: Sequence[str]) -> None:
    """A config without the column a field reads is one line naming the dataset."""
    for name in fields:
        column = _FIELD_COLUMNS.get(name)
        if column is not None and column not in queries.rows.column_names:
            raise BadInputError(
                queries.dataset,
                None,
                f"config {queries.config} has no column {column}, which --by {name} reads",
            )


def _group_sums(
    scores: QueryScores, grouping: _Grouping, measures: Sequence[str]
) -> tuple[SetSums, np.ndarray]:
    """Per set, each (group, measure)'s numerator (the measure summed over the set's queries
    in the group) and denominator (their number), columns ``group:measure`` group-major, and
    the (sets, groups) counts of queries: one bincount over (set, group) cells a measure."""
    sets, groups = scores.num_sets, len(grouping.labels)
    cells = scores.set_index * groups + grouping.codes

    def per_cell(weights: np.ndarray | None = None) -> np.ndarray:
        return np.bincount(cells, weights=weights, minlength=sets * groups).reshape(sets, groups)

    counts = per_cell().astype(float)
    numerators = np.stack([per_cell(scores.values[name]) for name in measures], axis=2)
    denominators = np.repeat(counts[:, :, None], len(measures), axis=2)
    names = [f"{group}:{name}" for group in range(groups) for name in measures]
    return SetSums(names, numerators.reshape(sets, -1), denominators.reshape(sets, -1), {}), counts


def _grouping(queries: AmberQueries, field: str) -> _Grouping:
    if field == "popularity":
        return _popularity_grouping(queries)
    if field == "set-size":
        return _set_size_grouping(queries)
    if field == "property":
        names = _property_names(queries)
        return _categories(
            queries.properties, names, "Property: the Wikidata property each query asks about."
        )
    return _categories(
        queries.tasks, {}, "Task: qa (question answering), sf (slot filling), fc (fact checking)."
    )


def _popularity_grouping(queries: AmberQueries) -> _Grouping:
    edges = popularity_deciles(queries)
    bins = len(edges) - 1
    merged = (
        f"; ties among the queries' popularity merge decile edges: {bins} bins"
        if bins < DECILES
        else ""
    )
    labels = list(map(bin_label, edges[:-1], edges[1:]))
    about = (
        f"Popularity: deciles of the {len(queries)} queries' log10 monthly page views, bins "
        f"(low, high] (the first holding its low edge); edges "
        f"{', '.join(f'{edge:.2f}' for edge in edges)}{merged}."
    )
    return _Grouping(popularity_bins(queries.popularity, edges), labels, about, edges)


def _set_size_grouping(queries: AmberQueries) -> _Grouping:
    """Groups by the number of entities in the query's AmbER set (SET_SIZE_BINS that hold a
    query)."""
    sizes_of = Counter(queries.members["name"].to_pylist())  # scoring needed the members
    sizes = np.array([sizes_of[name] for name in queries.rows["name"].to_pylist()])
    bin_of = np.array([_set_size_bin(size) for size in range(int(sizes.max()) + 1)])
    used = np.unique(bin_of[sizes])
    labels = [
        str(low) if low == high else f"{low}+" if math.isinf(high) else f"{low}-{high}"
        for low, high in (SET_SIZE_BINS[index] for index in used)
    ]
    return _Grouping(
        np.searchsorted(used, bin_of[sizes]),
        labels,
        "Set-size: the number of entities in the query's AmbER set.",
    )


def _set_size_bin(size: int) -> int:
    """The SET_SIZE_BINS index of a set of ``size`` entities (a set of one falls in the first)."""
    return next(
        (index for index, (_, high) in enumerate(SET_SIZE_BINS) if size <= high),
        len(SET_SIZE_BINS) - 1,
    )


def _property_names(queries: AmberQueries) -> dict[str, str]:
    """pid -> its label, where the config holds the labels (AmbER's ``property`` column)."""
    if "property" not in queries.rows.column_names:
        return {}
    return dict(zip(queries.properties, queries.rows["property"].to_pylist(), strict=True))


def _categories(values: list[str], names: dict[str, str], about: str) -> _Grouping:
    """Groups by a query's value, the most frequent first (ties by value), labelled
    ``name (value)`` where ``names`` has one."""
    counts = Counter(values)
    ordered = sorted(counts, key=lambda value: (-counts[value], value))
    code = {value: index for index, value in enumerate(ordered)}
    labels = [f"{names[value]} ({value})" if names.get(value) else value for value in ordered]
    return _Grouping(
        np.array([code[value] for value in values], dtype=np.int64),
        labels,
        about,
    )
