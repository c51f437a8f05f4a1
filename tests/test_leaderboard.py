"""`namesake leaderboard` and `namesake.amber.evaluation.leaderboard`: ranks and their bootstrap
intervals, every pair tested with Holm over pairs x measures (checked against the paired test
and `holm` called pair by pair), the top group, the three files agreeing with each other, the
command end to end on the bundled sample, every bad input refused in one line before anything
is written, and `amber compare`'s table against the baseline made by the leaderboard."""

from __future__ import annotations

import csv
import io
import itertools
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import SAMPLE_KILT

from namesake.amber.evaluation.ir_metrics import IR_MEASURES
from namesake.amber.evaluation.leaderboard import HEADLINE, _ranks, leaderboard
from namesake.amber.evaluation.popularity_effect import popularity_effect
from namesake.amber.evaluation.query_scores import QueryScores, set_sums
from namesake.amber.evaluation.scoring import Evaluation
from namesake.amber.evaluation.statistics import (
    StatisticsSettings,
    bootstrap_intervals,
    difference,
    figure_cell,
    holm,
    paired_randomization_test,
)
from namesake.cli import main

NAMESAKE = Path(sys.executable).with_name("namesake")
SETTINGS = StatisticsSettings(seed=3, bootstrap_resamples=400, test_resamples=2000)
SETS, PER_SET = 60, 3


def _scores(hits: np.ndarray, rng) -> QueryScores:
    """Per-query scores of a system whose accuracy@1 is ``hits`` (booleans), the other
    measures following it with some noise; the first query of each set is its head's."""
    queries = SETS * PER_SET
    set_index = np.repeat(np.arange(SETS), PER_SET)
    values = {
        "accuracy@1": 100.0 * hits,
        "accuracy@20": 100.0 * (hits | (rng.random(queries) < 0.5)),
        "entity_confusion": 100.0 * (~hits & (rng.random(queries) < 0.7)),
    }
    for measure in IR_MEASURES:
        values[measure] = 100.0 * np.clip(hits * 0.8 + rng.random(queries) * 0.2, 0, 1)
    return QueryScores(set_index, np.arange(queries) % PER_SET == 0, values, [1, 20])


def _evaluation(name: str, scores: QueryScores) -> Evaluation:
    """What `score` returns, made from per-query scores: the figures and their intervals."""
    sums = set_sums(scores)
    metrics = dict(sums.figures())
    intervals = bootstrap_intervals(sums, SETTINGS.bootstrap_resamples, seed=SETTINGS.seed)
    metrics["intervals"] = {figure: list(bounds) for figure, bounds in intervals.items()}
    about = {"dataset": "synthetic", "config": "human_qa", "predictions": f"{name}.trec"}
    query_ids = [f"q{i}" for i in range(len(scores.set_index))]
    return Evaluation(about, metrics, [], None, name, scores, sums, None, query_ids)


def _systems(accuracies: dict[str, float], seed: int = 0) -> list[Evaluation]:
    rng = np.random.default_rng(seed)
    queries = SETS * PER_SET
    return [
        _evaluation(name, _scores(rng.random(queries) < accuracy, rng))
        for name, accuracy in accuracies.items()
    ]


def test_ranks_are_scipy_s_min_ranks_of_the_negated_accuracies():
    """The vectorised ranking of each resample is scipy's competition ranking ("min": tied
    systems share the best rank), on random rows with many ties."""
    from scipy.stats import rankdata

    rng = np.random.default_rng(0)
    accuracies = rng.integers(0, 4, size=(200, 6)).astype(float) / 3
    np.testing.assert_array_equal(
        _ranks(accuracies), rankdata(-accuracies, method="min", axis=1).astype(int)
    )


def test_a_clearly_best_system_ranks_first_with_the_interval_one_to_one():
    board = leaderboard(
        _systems({"weak": 0.2, "best": 0.9, "weaker": 0.1}), SETTINGS, popularity=False
    )
    standing = {s.name: s for s in board.systems}
    assert standing["best"].rank == 1 and standing["best"].rank_interval == (1, 1)
    assert standing["weak"].rank == 2 and standing["weaker"].rank == 3
    assert board.top_group == ["best"]
    assert [s.name for s in board.ranked()] == ["best", "weak", "weaker"]


def test_systems_of_the_same_quality_get_overlapping_rank_intervals():
    board = leaderboard(
        _systems({"one": 0.6, "two": 0.6, "poor": 0.05}), SETTINGS, popularity=False
    )
    standing = {s.name: s for s in board.systems}
    one, two = standing["one"].rank_interval, standing["two"].rank_interval
    assert max(one[0], two[0]) <= min(one[1], two[1])  # they overlap
    assert one[0] == two[0] == 1 and one[1] == two[1] == 2  # each is first on some resamples
    assert standing["poor"].rank_interval == (3, 3)
    assert set(board.top_group) == {"one", "two"}


def test_tied_systems_share_the_best_rank():
    evaluations = _systems({"a": 0.7, "b": 0.3})
    same = evaluations[0]
    twin = _evaluation("a twin", same.per_query)
    board = leaderboard([*evaluations, twin], SETTINGS, popularity=False)
    ranks = {s.name: (s.rank, s.rank_interval) for s in board.systems}
    assert ranks == {"a": (1, (1, 1)), "a twin": (1, (1, 1)), "b": (3, (3, 3))}
    verdict = board.pair("a", "a twin").verdict("accuracy@1")
    assert verdict.difference == 0 and verdict.p_value == 1.0


def test_every_pair_is_tested_and_holm_runs_over_all_pairs_and_measures():
    """Each pair's p-values and difference intervals are those of the paired test and the
    bootstrap called on that pair alone (the same seed: the same flips and resamples), and
    the adjusted p-values are `holm` over every pair x headline measure."""
    evaluations = _systems({"a": 0.5, "b": 0.55, "c": 0.4, "d": 0.65})
    board = leaderboard(evaluations, SETTINGS, popularity=False)
    raw, intervals = {}, {}
    for x, y in itertools.combinations(evaluations, 2):
        pvalues = paired_randomization_test(
            x.sums, y.sums, SETTINGS.test_resamples, seed=SETTINGS.seed
        )
        bounds = bootstrap_intervals(
            difference(x.sums, y.sums), SETTINGS.bootstrap_resamples, seed=SETTINGS.seed
        )
        for _, measure in HEADLINE:
            raw[(x.name, y.name, measure)] = pvalues[measure]
            intervals[(x.name, y.name, measure)] = bounds[measure]
    adjusted = holm(raw)
    assert len(board.pairs) == 6
    for test in board.pairs:
        assert [v.measure for v in test.verdicts] == [measure for _, measure in HEADLINE]
        for verdict in test.verdicts:
            key = (test.a, test.b, verdict.measure)
            assert verdict.p_value == pytest.approx(raw[key], abs=1e-12)
            assert verdict.p_holm == pytest.approx(adjusted[key], abs=1e-12)
            np.testing.assert_allclose(verdict.interval, intervals[key], atol=1e-9)
            figures = [e.metrics[verdict.measure] for e in evaluations if e.name in key[:2]]
            assert verdict.difference == pytest.approx(figures[1] - figures[0])
    assert any(adjusted[key] > raw[key] for key in raw)  # the family is all pairs x measures


def test_the_top_group_is_the_best_and_every_system_not_significantly_below_it():
    rng = np.random.default_rng(1)
    hits = rng.random(SETS * PER_SET) < 0.8
    close = hits.copy()
    close[:3] = ~close[:3]  # three queries apart: no test can tell
    evaluations = [
        _evaluation("best", _scores(hits, rng)),
        _evaluation("poor", _scores(rng.random(SETS * PER_SET) < 0.2, rng)),
        _evaluation("close", _scores(close, rng)),
    ]
    board = leaderboard(evaluations, SETTINGS, popularity=False)
    best = board.best
    assert best in {"best", "close"}
    assert set(board.top_group) == {"best", "close"}
    assert board.pair(best, "poor").verdict("accuracy@1").significant
    assert not board.pair(best, "close").verdict("accuracy@1").significant
    assert "Top group: " in board.top_group_line() and "poor" not in board.top_group_line()


def test_a_pair_read_the_other_way_negates_the_differences():
    board = leaderboard(_systems({"a": 0.4, "b": 0.7}), SETTINGS, popularity=False)
    forward, backward = board.pair("a", "b"), board.pair("b", "a")
    for one, other in zip(forward.verdicts, backward.verdicts, strict=True):
        assert other.difference == -one.difference
        assert other.interval == (-one.interval[1], -one.interval[0])
        assert (other.p_value, other.p_holm) == (one.p_value, one.p_holm)
        assert (other.a, other.b) == (one.b, one.a)


def test_the_csv_the_json_and_the_markdown_agree():
    board = leaderboard(
        _systems({"a": 0.4, "b": 0.7, "c": 0.45}), SETTINGS, popularity=False, baseline="a"
    )
    record = json.loads(json.dumps(board.record()))
    rows = list(csv.DictReader(io.StringIO(board.to_csv())))
    table = board.table()
    assert [row["system"] for row in rows] == [s["name"] for s in record["systems"]]
    assert record["top_group"] == board.top_group and record["baseline"] == "a"
    assert record["settings"]["rank_by"] == "accuracy@1"
    assert len(record["pairs"]) == 3
    for row, system in zip(rows, record["systems"], strict=True):
        assert int(row["rank"]) == system["rank"]
        assert [int(row["rank_low"]), int(row["rank_high"])] == system["rank_95ci"]
        assert (row["top_group"] == "True") == system["top_group"]
        cells = [str(system["rank"]), f"[{row['rank_low']}, {row['rank_high']}]", row["system"]]
        cells.append("✓" if system["top_group"] else "")
        for _, measure in HEADLINE:
            figure = system["figures"][measure]
            assert float(row[measure]) == pytest.approx(figure["value"])
            bounds = [float(row[f"{measure}_low"]), float(row[f"{measure}_high"])]
            assert bounds == pytest.approx(figure["95ci"])
            cells.append(figure_cell(figure["value"], figure["95ci"]))
        assert "| " + " | ".join(cells) + " |" in table.splitlines()
    markdown = board.markdown()
    assert table in markdown and board.pairs_table() in markdown
    assert "## Against a" in markdown and board.against_baseline() in markdown


def test_against_baseline_sets_every_system_against_it():
    board = leaderboard(
        _systems({"a": 0.4, "b": 0.7, "c": 0.5}), SETTINGS, popularity=False, baseline="b"
    )
    rows = [line for line in board.against_baseline().splitlines() if line.startswith("| ")]
    assert rows[0].startswith("| System | Baseline | Config | Δ All@1 [95% CI] (p Holm) |")
    body = rows[1:]
    assert [row.split(" | ")[:3] for row in body] == [
        ["| a", "b", "human_qa"],
        ["| c", "b", "human_qa"],
    ]
    difference = board.pair("b", "a").verdict("accuracy@1").difference
    assert difference < 0 and body[0].split(" | ")[3].startswith(f"{difference:+.1f}")
    assert body[0].endswith(f"| {board.pair('b', 'a').significant()} |")


# --- the command on the bundled sample ---------------------------------------------------


@pytest.fixture(scope="module")
def sample_runs(sample_build, tmp_path_factory):
    """Three runs of AmbER-H QA: TF-IDF (KILT lines), BM25 (TREC), BM25 within the sets; and
    one of AmbER-H fact checking (fc.jsonl), for a bad input."""
    out, _ = sample_build
    dataset = str(out / "dataset")
    work = tmp_path_factory.mktemp("leaderboard")
    base = ["retrieve", "--corpus", str(SAMPLE_KILT), "--dataset", dataset, "--config", "human_qa"]
    main([*base, "--retriever", "tfidf", "--out", str(work / "tfidf.jsonl")])
    main([*base, "--retriever", "bm25", "--format", "trec", "--out", str(work / "bm25.trec")])
    main([*base, "--retriever", "bm25", "--candidates", "set", "--out", str(work / "set.jsonl")])
    fact_checking = ["--config", "human_fc", "--retriever", "tfidf"]
    main([*base[:-2], *fact_checking, "--out", str(work / "fc.jsonl")])  # for a bad input
    return dataset, work, [work / "tfidf.jsonl", work / "bm25.trec", work / "set.jsonl"]


def test_the_command_ranks_the_sample_s_runs_and_writes_three_files(
    sample_runs, capsys, monkeypatch
):
    from namesake import AmberQueries, Run, score

    dataset, work, runs = sample_runs
    out = work / "board"
    read, reads = Run.read.__func__, Counter()

    def counting_read(cls, path, *args, **kwargs):
        reads[str(path)] += 1
        return read(cls, path, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(Run, "read", classmethod(counting_read))
        main(
            ["leaderboard", *map(str, runs), "--dataset", dataset, "--config", "human_qa"]
            + ["--baseline", "bm25", "--out", str(out), "--seed", "2"]
        )
    assert reads == Counter({str(path): 1 for path in runs})  # each run file read once
    printed = capsys.readouterr().out
    record = json.loads((out / "leaderboard.json").read_text())
    assert record["num_sets"] == 8 and record["num_queries"] == 18
    assert record["settings"]["seed"] == 2 and record["baseline"] == "bm25"
    queries = AmberQueries.load(dataset, "human_qa")
    for system in record["systems"]:
        path = next(run for run in runs if run.stem == system["name"])
        scored = score(Run.read(path), queries)
        for _, measure in HEADLINE:
            assert system["figures"][measure]["value"] == pytest.approx(scored.metrics[measure])
        assert system["run"] == str(path)
        effect = popularity_effect(scored, StatisticsSettings(seed=2))
        assert system["popularity_effect"] == json.loads(json.dumps(effect.record()))
        assert f"| {effect.odds_ratio_cell()} | {effect.preference_cell()} |" in printed
    assert [pair["a"] for pair in record["pairs"]] == ["tfidf", "tfidf", "bm25"]
    # 2/256 is the smallest p-value of 8 sets: x 12 tests, nothing can be significant
    assert sorted(record["top_group"]) == ["bm25", "set", "tfidf"]
    markdown = (out / "leaderboard.md").read_text()
    table = markdown.split("\n\n")[2]
    assert table in printed and "Top group: " in printed
    assert "| System | Baseline | Config |" in printed and "## Against bm25" in markdown
    assert (out / "leaderboard.csv").read_text().count("\n") == 4
    assert printed.rstrip().endswith("popularity_curve.png, .svg, .csv")
    curve = pd.read_csv(out / "popularity_curve.csv")
    assert sorted(set(curve["system"])) == sorted(path.stem for path in runs)
    assert (out / "popularity_curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "popularity_curve.svg").stat().st_size > 0


def _refused(argv: list[str]) -> str:
    with pytest.raises(SystemExit) as caught:
        main(argv)
    return str(caught.value)


def test_every_bad_input_is_one_line_before_anything_is_written(sample_runs, tmp_path):
    dataset, work, runs = sample_runs
    tfidf, bm25, in_set = map(str, runs)
    partial = tmp_path / "partial.trec"
    lines = Path(bm25).read_text().splitlines(keepends=True)
    first = lines[0].split()[0]
    partial.write_text("".join(line for line in lines if line.split()[0] != first))
    config = ["--dataset", dataset, "--config", "human_qa"]
    same_file = f"{Path(bm25).parent}/./bm25.trec"  # another spelling of the same file
    fc = str(work / "fc.jsonl")  # a run of AmbER-H fact checking
    cases = {
        f"a leaderboard needs at least two runs, got 1: {bm25}": [bm25],
        f"{bm25} is given twice: give each run once": [tfidf, bm25, bm25],
        f"{bm25} and {same_file} are one file: give each run once": [bm25, same_file],
        "--names gives 2 names for 3 runs": [tfidf, bm25, in_set, "--names", "a", "b"],
        f"the name x is given to both {bm25} and {in_set}: give each run its own name (--names)": [
            tfidf,
            bm25,
            in_set,
            "--names",
            "t",
            "x",
            "x",
        ],
        "--baseline dense is not one of the runs' names (tfidf, bm25)": [
            *(tfidf, bm25, "--baseline", "dense")
        ],
        "a leaderboard ranks by accuracy@1: the cut-offs (5 20) must include 1": [
            *(tfidf, bm25, "--cutoffs", "20", "5")
        ],
        f"{fc}: none of the ": [tfidf, fc],  # runs of two configs
        f"{partial}: 1 of 18 queries have no prediction": [tfidf, str(partial)],
        "tfidf and partial answer different queries of human_qa (18 and 17 of 18): a "
        "leaderboard ranks runs on the same queries": [tfidf, str(partial), "--allow-missing"],
    }
    for expected, argv in cases.items():
        out = tmp_path / "never"
        message = _refused(["leaderboard", *argv, *config, "--out", str(out)])
        assert message.startswith(f"namesake: error: {expected}"), (expected, message)
        assert "\n" not in message
        assert not out.exists()


def test_the_installed_command_exits_1_with_one_line(sample_runs, tmp_path):
    dataset, _, runs = sample_runs
    done = subprocess.run(
        [str(NAMESAKE), "leaderboard", str(runs[0]), "--dataset", dataset, "--config"]
        + ["human_qa", "--out", str(tmp_path / "never")],
        capture_output=True,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"},
        timeout=600,
    )
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"namesake: error: a leaderboard needs at least two runs, got 1: {runs[0]}"
    ]
    assert not (tmp_path / "never").exists()


def test_amber_compare_s_table_against_the_baseline_is_the_leaderboard_s(sample_runs):
    from namesake import AmberQueries, Run, score
    from namesake.amber.evaluation.compare import against_baseline
    from namesake.amber.evaluation.leaderboard import baseline_table

    dataset, _, runs = sample_runs
    queries = AmberQueries.load(dataset, "human_qa")
    evaluations = [score(Run.read(path), queries) for path in runs]
    table = against_baseline({"human_qa": evaluations}, StatisticsSettings(), baseline="bm25")
    board = leaderboard(evaluations, StatisticsSettings(), baseline="bm25")
    assert table == board.against_baseline() == baseline_table([board])
    rows = [line for line in table.splitlines() if line.startswith("| ") and "---" not in line]
    assert [row.split(" | ")[:2] for row in rows[1:]] == [["| tfidf", "bm25"], ["| set", "bm25"]]
    assert "Holm's correction over every pair of systems x the 4 measures (12 tests" in table
    # no BM25 among them: the first is the baseline
    first = against_baseline({"human_qa": evaluations[::2]}, StatisticsSettings())
    assert [line.split(" | ")[:2] for line in first.splitlines()[2:3]] == [["| set", "tfidf"]]
