"""The popularity curve (issue 50, item 3): accuracy@1 and entity confusion by popularity
decile for N systems on the same deciles, as a CSV and the figure drawn from it (PNG, SVG),
its figures those of the popularity breakdown; systems scored on other queries are refused."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ElementTree

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from synthetic_evaluations import synthetic_evaluation, synthetic_queries

from namesake.amber.evaluation.breakdowns import MIN_SETS, breakdowns
from namesake.amber.evaluation.popularity_curve import (
    plot_popularity_curve,
    popularity_curve,
    write_popularity_curve,
)
from namesake.errors import NamesakeError

MEASURES = ["accuracy@1", "entity_confusion"]


@pytest.fixture(scope="module")
def systems():
    queries = synthetic_queries(sets=14)  # some deciles from fewer than MIN_SETS sets
    return [synthetic_evaluation(queries, seed, f"system{seed}") for seed in (1, 2, 3)]


@pytest.fixture(scope="module")
def written(systems, tmp_path_factory):
    folder = tmp_path_factory.mktemp("curve") / "curves"
    return write_popularity_curve(systems, folder, stem="three")


def test_the_csv_rows_are_the_popularity_breakdown_of_each_system(systems, written):
    csv = pd.read_csv(written[0])
    assert len(csv) == len(systems) * 10 * len(MEASURES)
    for evaluation in systems:
        (breakdown,) = breakdowns(evaluation, ["popularity"])
        (every,) = breakdowns(evaluation, ["popularity"], min_sets=1)
        rows = csv[csv["system"] == evaluation.name]
        assert rows["decile"].tolist() == [d for d in range(1, 11) for _ in MEASURES]
        assert rows["low_edge"].iloc[::2].tolist() == pytest.approx(breakdown.edges[:-1])
        assert rows["high_edge"].iloc[::2].tolist() == pytest.approx(breakdown.edges[1:])
        for _, row in rows.iterrows():
            group = breakdown.groups[row["decile"] - 1]
            assert (row["queries"], row["sets"]) == (group.queries, group.sets)
            mean = every.groups[row["decile"] - 1].figures[row["measure"]]
            assert row["value"] == pytest.approx(mean, abs=1e-9)  # the mean of its queries
            if group.figures is None:  # too few sets: the figure, no interval
                assert row["few_sets"] and row["sets"] < MIN_SETS
                assert math.isnan(row["low"]) and math.isnan(row["high"])
                continue
            assert not row["few_sets"]
            assert row["value"] == pytest.approx(group.figures[row["measure"]], abs=1e-9)
            assert [row["low"], row["high"]] == pytest.approx(group.intervals[row["measure"]])
    assert csv["few_sets"].any() and not csv["few_sets"].all()
    first = csv[csv["system"] == systems[0].name][["decile", "low_edge", "high_edge"]]
    for evaluation in systems[1:]:
        other = csv[csv["system"] == evaluation.name][["decile", "low_edge", "high_edge"]]
        assert np.array_equal(other.to_numpy(), first.to_numpy())  # the same deciles


def test_the_png_and_svg_are_valid_files(written):
    _, png, svg = written
    assert [path.name for path in written] == ["three.csv", "three.png", "three.svg"]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert ElementTree.parse(svg).getroot().tag.endswith("svg")


def test_the_figure_has_a_line_and_band_per_system_and_few_set_deciles_hollow(systems):
    curve = popularity_curve(systems)
    figure = plot_popularity_curve(curve, "human")
    try:
        for axes, measure in zip(figure.axes, MEASURES, strict=True):
            lines, hollow = axes.get_lines()[::2], axes.get_lines()[1::2]
            assert [line.get_label() for line in lines] == [e.name for e in systems]
            assert len(axes.collections) == len(systems)  # the interval bands
            expected = curve[(curve["measure"] == measure) & (curve["system"] == "system1")]
            drawn = np.asarray(lines[0].get_ydata(), dtype=float)
            assert drawn == pytest.approx(expected["value"].to_numpy(), nan_ok=True)
            few = expected[expected["few_sets"]]
            assert hollow[0].get_markerfacecolor() == "white" and len(few)
            assert list(hollow[0].get_xdata()) == few["decile"].tolist()
            band = axes.collections[0].get_paths()  # no band over a few-set decile
            assert band and all(np.isfinite(path.vertices).all() for path in band)
            labels = [tick.get_text() for tick in axes.get_xticklabels()]
            assert (
                labels[0]
                == f"{expected['low_edge'].iloc[0]:.2f}–{expected['high_edge'].iloc[0]:.2f}"
            )
    finally:
        plt.close(figure)


def test_systems_scored_on_other_queries_are_refused_naming_them(systems, tmp_path):
    other = synthetic_evaluation(synthetic_queries(seed=5, sets=14), 1, "elsewhere")
    with pytest.raises(NamesakeError) as caught:
        write_popularity_curve([systems[0], other], tmp_path / "curve")
    message = str(caught.value)
    assert "system1" in message and "elsewhere" in message and "same queries" in message
    assert not (tmp_path / "curve").exists()


def test_the_interval_resampling_can_be_given(systems):
    from namesake.amber.evaluation.statistics import StatisticsSettings

    default = popularity_curve(systems[:1])
    again = popularity_curve(systems[:1], StatisticsSettings(seed=3, bootstrap_resamples=200))
    moved = popularity_curve(systems[:1], StatisticsSettings(seed=9, bootstrap_resamples=200))
    pd.testing.assert_frame_equal(default, again)  # the evaluation's own settings by default
    assert default["value"].equals(moved["value"]) and not default["low"].equals(moved["low"])
