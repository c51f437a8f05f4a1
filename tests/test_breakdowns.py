"""Breakdowns (issue 50, item 2): the headline measures by popularity decile, property, task
and set size, each group's figure the plain mean of its queries' per-query values, with its
interval from the report's set-clustered bootstrap; `namesake evaluate --by` writes them into
report.md and metrics.json and prints them."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from synthetic_evaluations import RARE_PROPERTY, synthetic_evaluation, synthetic_queries

from namesake.amber.evaluation.breakdowns import (
    BREAKDOWN_FIELDS,
    MIN_SETS,
    breakdowns,
    check_fields,
    headline_measures,
    popularity_deciles,
)
from namesake.amber.evaluation.queries import AmberQueries
from namesake.amber.evaluation.query_scores import SetSums
from namesake.amber.evaluation.statistics import StatisticsSettings, bootstrap_intervals
from namesake.cli import main
from namesake.errors import NamesakeError


@pytest.fixture(scope="module")
def evaluation():
    return synthetic_evaluation(synthetic_queries())


@pytest.fixture(scope="module")
def found(evaluation):
    return {breakdown.field: breakdown for breakdown in breakdowns(evaluation, BREAKDOWN_FIELDS)}


@pytest.fixture(scope="module")
def table(evaluation):
    """The per-query table, with each query's set size counted from the set members."""
    frame = evaluation.to_pandas(per_query=True)
    sizes = evaluation.queries.members.to_pandas().groupby("name").size()
    frame["set_size"] = frame["set"].map(sizes)
    frame["property_label"] = evaluation.queries.rows["property"].to_pylist()
    return frame


def _groups_of(frame: pd.DataFrame, codes: pd.Series):
    """pandas' own grouping of the per-query table: each group's queries, sets and means."""
    grouped = frame.groupby(codes, sort=False)
    measures = headline_measures([1, 5])
    return grouped.size(), grouped["set"].nunique(), grouped[measures].mean()


def _check_groups(breakdown, labels: dict, frame: pd.DataFrame, codes: pd.Series) -> None:
    """Every group of ``breakdown`` (``labels``: its label -> pandas' group key) holds pandas'
    count of queries and sets and, where it has figures, pandas' means."""
    sizes, sets, means = _groups_of(frame, codes)
    assert sorted(labels) == sorted(group.label for group in breakdown.groups)
    assert sum(group.queries for group in breakdown.groups) == len(frame)
    for group in breakdown.groups:
        key = labels[group.label]
        assert (group.queries, group.sets) == (sizes[key], sets[key])
        assert (group.figures is None) == (sets[key] < MIN_SETS)
        for measure, value in (group.figures or {}).items():
            assert value == pytest.approx(means.loc[key, measure], abs=1e-9)


def test_the_figures_by_property_and_task_are_the_means_of_their_queries(found, table):
    pairs = zip(table["property"], table["property_label"], strict=True)
    labels = {f"{name} ({pid})": pid for pid, name in pairs}
    _check_groups(found["property"], labels, table, table["property"])
    _check_groups(found["task"], {task: task for task in set(table["task"])}, table, table["task"])
    counts = [group.queries for group in found["task"].groups]
    assert counts == sorted(counts, reverse=True)


def test_the_popularity_bins_are_pandas_qcut_deciles(evaluation, found, table):
    breakdown = found["popularity"]
    codes, edges = pd.qcut(table["popularity"], 10, labels=False, retbins=True, duplicates="drop")
    assert breakdown.edges == pytest.approx(list(edges))
    assert breakdown.edges == pytest.approx(
        np.quantile(evaluation.queries.popularity, np.linspace(0, 1, 11)).tolist()
    )
    labels = {group.label: index for index, group in enumerate(breakdown.groups)}
    _check_groups(breakdown, labels, table, codes)
    assert all(f"{edge:.2f}" in breakdown.about for edge in edges)
    assert "merge" not in breakdown.about


def test_the_set_size_bins(found, table):
    bins = pd.cut(
        table["set_size"], [1, 2, 3, 4, 9, math.inf], labels=["2", "3", "4", "5-9", "10+"]
    )
    present = [label for label in bins.cat.categories if (bins == label).any()]
    breakdown = found["set-size"]
    assert [group.label for group in breakdown.groups] == present
    _check_groups(breakdown, {label: label for label in present}, table, bins.astype(str))


def test_tied_popularity_merges_decile_edges_and_says_so():
    queries = synthetic_queries(seed=4, sets=30)
    popularity = np.where(np.arange(len(queries)) % 3 == 0, 5.0, queries.popularity)
    tied = AmberQueries(
        queries.dataset,
        queries.config,
        queries.rows.set_column(
            queries.rows.column_names.index("popularity"), "popularity", pa.array(popularity)
        ),
        queries.members,
    )
    edges = popularity_deciles(tied)
    _, expected = pd.qcut(popularity, 10, retbins=True, duplicates="drop")
    assert edges.tolist() == pytest.approx(list(expected)) and len(edges) < 11
    (breakdown,) = breakdowns(synthetic_evaluation(tied), ["popularity"])
    assert len(breakdown.groups) == len(edges) - 1
    assert f"merge decile edges: {len(edges) - 1} bins" in breakdown.about


def test_each_interval_is_the_seeded_set_bootstrap_of_its_group(evaluation, found, table):
    """A group's interval is what one bootstrap over the sets, with the evaluation's seed,
    gives for that group alone (the sets drawn do not depend on the other columns); it
    holds the figure, and another seed moves it."""
    settings = StatisticsSettings(**evaluation.metrics["statistics"])
    group = found["task"].groups[0]
    chosen = table["task"] == group.label
    set_codes = pd.Categorical(table["set"], categories=list(dict.fromkeys(table["set"]))).codes
    numerators = np.bincount(set_codes, weights=table["accuracy@1"] * chosen)
    denominators = np.bincount(set_codes, weights=chosen.astype(float))
    alone = SetSums(["a"], numerators[:, None], denominators[:, None], {})
    expected = bootstrap_intervals(alone, settings.bootstrap_resamples, seed=settings.seed)["a"]
    assert group.intervals["accuracy@1"] == pytest.approx(expected)
    for breakdown in found.values():
        for one in breakdown.groups:
            for measure, (low, high) in (one.intervals or {}).items():
                assert low - 1e-9 <= one.figures[measure] <= high + 1e-9
    again = breakdowns(evaluation, ["task"])[0].groups[0]
    assert again.intervals == group.intervals
    moved = breakdowns(evaluation, ["task"], StatisticsSettings(seed=11, bootstrap_resamples=200))
    assert moved[0].groups[0].intervals != group.intervals
    assert moved[0].groups[0].figures == group.figures


def test_a_group_from_too_few_sets_says_so_instead_of_a_figure(found):
    breakdown = found["property"]
    rare = next(
        group for group in breakdown.groups if group.label.endswith(f"({RARE_PROPERTY[0]})")
    )
    assert (rare.sets, rare.figures, rare.intervals) == (2, None, None)
    assert rare.note == "2 sets: too few for a figure"
    row = next(line for line in breakdown.table().splitlines() if RARE_PROPERTY[1] in line)
    assert row.endswith("| – | – | – | – | – | 2 sets: too few for a figure |")
    record = breakdown.record()
    assert record["field"] == "property" and record["edges"] is None
    assert json.loads(json.dumps(record))["groups"][-1]["note"] == rare.note


def test_an_unknown_field_is_refused_naming_the_choices():
    with pytest.raises(NamesakeError) as caught:
        check_fields(["popularity", "nonsense"])
    assert str(caught.value) == (
        "--by: unknown field 'nonsense'; choose from popularity, property, task, set-size"
    )


def test_queries_without_popularity_or_property_are_one_line_naming_the_dataset():
    from namesake.errors import BadInputError

    queries = synthetic_queries(sets=10)
    rows = queries.rows
    unknown = pa.array([None] + rows["popularity"].to_pylist()[1:], type=pa.float64())
    blank = AmberQueries(
        "synthetic",
        "human",
        rows.set_column(rows.column_names.index("popularity"), "popularity", unknown),
        queries.members,
    )
    with pytest.raises(BadInputError) as caught:
        popularity_deciles(blank)
    assert str(caught.value) == (
        f"synthetic: config human: no popularity for 1 of its {len(queries)} queries (e.g. q0), "
        "which the popularity bins need"
    )
    no_property = AmberQueries(
        "synthetic", "human", rows.drop_columns(["pid", "property"]), queries.members
    )
    with pytest.raises(BadInputError) as caught:
        breakdowns(synthetic_evaluation(no_property), ["task", "property"])
    assert (
        str(caught.value) == "synthetic: config human has no column pid, which --by property reads"
    )


# --- namesake evaluate --by, on the bundled sample ----------------------------------------


@pytest.fixture(scope="module")
def sample_run(sample_build, tmp_path_factory):
    from conftest import SAMPLE_KILT

    out, _ = sample_build
    dataset = str(out / "dataset")
    run = tmp_path_factory.mktemp("breakdowns") / "tfidf.jsonl"
    main(
        ["retrieve", "--corpus", str(SAMPLE_KILT), "--dataset", dataset, "--config", "human"]
        + ["--retriever", "tfidf", "--out", str(run)]
    )
    return dataset, run


def test_evaluate_by_writes_and_prints_the_breakdowns(sample_run, tmp_path, capsys):
    dataset, run = sample_run
    out = tmp_path / "report"
    main(
        ["evaluate", "--dataset", dataset, "--config", "human", "--predictions", str(run)]
        + ["--out", str(out), "--by", "popularity", "property", "popularity"]
    )
    printed = capsys.readouterr().out
    record = json.loads((out / "metrics.json").read_text())
    assert [b["field"] for b in record["breakdowns"]] == ["popularity", "property"]
    queries = AmberQueries.load(dataset, "human")
    edges = record["breakdowns"][0]["edges"]
    assert edges == pytest.approx(np.quantile(queries.popularity, np.linspace(0, 1, 11)).tolist())
    edges_line = ", ".join(f"{edge:.2f}" for edge in edges)
    report = (out / "report.md").read_text()
    for text in (printed, report):
        assert f"edges {edges_line}" in text
        assert "| Popularity | Queries | Sets | Acc@1 | Acc@20 | Confusion |" in text
        assert "| Property | Queries | Sets |" in text
    assert "## By popularity" in report and "## By property" in report
    assert "![popularity curve](popularity_curve.png)" in report
    for name in ("popularity_curve.csv", "popularity_curve.png", "popularity_curve.svg"):
        assert (out / name).is_file()
    assert (
        printed.rstrip()
        .splitlines()[-1]
        .endswith(
            "popularity_curve.png, popularity_curve.svg, popularity_curve.csv, per_query.parquet"
        )
    )
    groups = record["breakdowns"][1]["groups"]
    assert sum(group["queries"] for group in groups) == len(queries)
    assert all(group["figures"] is None and group["note"] for group in groups)  # 8 sets in all


def test_evaluate_by_an_unknown_field_exits_1_in_one_line_writing_nothing(sample_run, tmp_path):
    dataset, run = sample_run
    out = tmp_path / "report"
    done = subprocess.run(
        [sys.executable, "-m", "namesake", "evaluate", "--dataset", dataset, "--config", "human"]
        + ["--predictions", str(run), "--out", str(out), "--by", "task", "nonsense"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "namesake: error: --by: unknown field 'nonsense'; choose from popularity, property, "
        "task, set-size"
    ]
    assert not out.exists()


def test_the_help_of_by_names_every_field():
    """``--by``'s help is literal (so that ``namesake --help`` imports no numpy): it names
    every field the library knows."""
    from namesake.cli import build_parser

    evaluate = build_parser()._subparsers._group_actions[0].choices["evaluate"]
    (by,) = [action for action in evaluate._actions if action.dest == "by"]
    assert all(field in by.help for field in BREAKDOWN_FIELDS)
