"""`namesake compare-runs` on the AmbER sample: a TREC run against KILT JSON lines, every
figure of `evaluate` compared with its interval, an exact clustered p-value, Holm's
adjustment and the per-query test; bad pairs of runs are refused before any scoring."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from conftest import SAMPLE_KILT
from test_popularity_effect import statsmodels_slope

from namesake.amber.evaluation.statistics import MIN_SETS
from namesake.cli import main

NAMESAKE = Path(sys.executable).with_name("namesake")


@pytest.fixture(scope="module")
def two_runs(sample_build, tmp_path_factory):
    out, _ = sample_build
    dataset = str(out / "dataset")
    work = tmp_path_factory.mktemp("compare_runs_command")
    base = ["retrieve", "--corpus", str(SAMPLE_KILT), "--dataset", dataset]
    main(
        [*base, "--config", "human_qa", "--retriever", "tfidf", "--out", str(work / "tfidf.jsonl")]
    )
    main(
        [*base, "--config", "human_qa", "--retriever", "bm25", "--format", "trec"]
        + ["--out", str(work / "bm25.trec")]
    )
    for run in ("tfidf.jsonl", "bm25.trec"):
        main(
            ["evaluate", "--dataset", dataset, "--config", "human_qa", "--predictions"]
            + [str(work / run), "--out", str(work / f"report-{run}")]
        )
    return dataset, work


@pytest.fixture(scope="module")
def compared(two_runs):
    dataset, work = two_runs
    main(
        ["compare-runs", str(work / "tfidf.jsonl"), str(work / "bm25.trec"), "--dataset"]
        + [dataset, "--config", "human_qa", "--out", str(work / "comparison")]
    )
    return json.loads((work / "comparison" / "comparison.json").read_text()), work


def test_every_figure_of_evaluate_is_compared(compared):
    record, work = compared
    tfidf = json.loads((work / "report-tfidf.jsonl" / "metrics.json").read_text())["metrics"]
    bm25 = json.loads((work / "report-bm25.trec" / "metrics.json").read_text())["metrics"]
    measures = {row["measure"]: row for row in record["measures"]}
    assert set(measures) == set(bm25["intervals"])  # every figure with an interval
    for name, row in measures.items():
        assert row["a"] == pytest.approx(tfidf[name]), name
        assert row["b"] == pytest.approx(bm25[name]), name
        assert row["difference"] == pytest.approx(bm25[name] - tfidf[name]), name
        low, high = row["difference_95ci"]
        assert low - 1e-9 <= row["difference"] <= high + 1e-9, name


def test_p_values_are_exact_over_the_sample_s_eight_sets_and_holm_adjusted(compared):
    record, _ = compared
    assert record["num_sets"] == 8 and record["correction"] == "holm"
    tested = [row for row in record["measures"] if not math.isnan(row["p_value"])]
    assert len(tested) == len(record["measures"])
    for row in tested:
        assert 0 < row["p_value"] <= 1
        assert (row["p_value"] * 2**8) == pytest.approx(round(row["p_value"] * 2**8))
        assert row["p_holm"] >= row["p_value"]
        assert row["significant"] is False  # 2/256 x 28 measures > 0.05: cannot be
        if row["difference"] == 0:
            assert row["p_value"] == 1.0
    per_query = [r for r in record["measures"] if r["p_per_query"] is not None]
    assert {r["measure"] for r in per_query} == {
        "ndcg@10",
        "mrr@10",
        "r-precision",
        "recall@20",
        "recall@100",
    }
    assert all(0 <= r["p_per_query"] <= 1 for r in per_query)


def test_the_report_says_why_nothing_can_be_significant_here(compared):
    _, work = compared
    text = (work / "comparison" / "comparison.md").read_text()
    assert "of 28 measures, bm25 is significantly higher than tfidf on 0 and lower on 0" in text
    assert "on so few sets no difference can be significant" in text
    assert "| accuracy@1 | " in text and "no significant difference" in text


def test_each_run_s_popularity_effect_and_their_difference_are_recorded(compared):
    """comparison.json's popularity effect, from each run's per_query.parquet (as `evaluate`
    wrote it): the odds ratio per 10x page views is statsmodels' conditional logit of
    success@1 on popularity with the sets as strata, the preference rate the share of
    confused rows whose namesake has the smaller popularity rank; B's against A's is their
    ratio and difference, within paired intervals; comparison.md shows them."""
    record, work = compared
    effect = record["popularity_effect"]
    for run, report in (("a", "report-tfidf.jsonl"), ("b", "report-bm25.trec")):
        rows = pq.read_table(work / report / "per_query.parquet").to_pylist()
        success = np.array([row["gold_rank"] == 1 for row in rows])
        popularity = np.array([row["popularity"] for row in rows])
        sets = np.unique([row["set"] for row in rows], return_inverse=True)[1]
        slope = statsmodels_slope(success, popularity, sets)
        assert effect[run]["odds_ratio_per_10x_views"] == pytest.approx(math.exp(slope))
        low, high = effect[run]["odds_ratio_95ci"]
        assert low <= math.exp(slope) <= high
        confused = [row for row in rows if row["entity_confusion"] == 100]
        more_popular = sum(
            row["confused_with_popularity_rank_in_set"] < row["popularity_rank_in_set"]
            for row in confused
        )
        assert effect[run]["confused_queries"] == len(confused) > 0
        assert effect[run]["preference_rate"] == pytest.approx(more_popular / len(confused))
    a, b = effect["a"], effect["b"]
    ratio = b["odds_ratio_per_10x_views"] / a["odds_ratio_per_10x_views"]
    assert effect["odds_ratio_ratio"] == pytest.approx(ratio)
    low, high = effect["odds_ratio_ratio_95ci"]
    assert low <= ratio <= high
    gap = b["preference_rate"] - a["preference_rate"]
    assert effect["preference_rate_difference"] == pytest.approx(gap)
    low, high = effect["preference_rate_difference_95ci"]
    assert low - 1e-12 <= gap <= high + 1e-12
    text = (work / "comparison" / "comparison.md").read_text()
    assert "| odds ratio of success@1 per 10× page views (1: no effect) | " in text
    few = min(a["informative_sets"], b["informative_sets"]) < MIN_SETS  # the sample's 8 sets
    assert ("| too few sets |" if few else f"| ×{effect['odds_ratio_ratio']:.2f} [") in text


def _refusal(capsys, args) -> str:
    with pytest.raises(SystemExit) as caught:
        main(args)
    return str(caught.value)


def test_a_run_compared_with_itself_is_refused(two_runs, capsys):
    dataset, work = two_runs
    run = str(work / "bm25.trec")
    message = _refusal(
        capsys, ["compare-runs", run, run, "--dataset", dataset, "--config", "human_qa"]
    )
    assert message == f"namesake: error: {run} is compared with itself: give two different runs"


def test_a_run_of_another_config_is_refused_naming_it(two_runs, capsys):
    dataset, work = two_runs
    message = _refusal(
        capsys,
        ["compare-runs", str(work / "tfidf.jsonl"), str(work / "bm25.trec"), "--dataset"]
        + [dataset, "--config", "nonhuman_qa"],
    )
    assert message.startswith(f"namesake: error: {work / 'tfidf.jsonl'}: none of the 18")


def test_the_command_line_defaults_are_the_library_s():
    """The literal defaults of the parser (kept literal so that `namesake --help` does not
    import the statistics) are the library's, the same in the three commands that resample."""
    from namesake.amber.evaluation.statistics import StatisticsSettings
    from namesake.cli import build_parser
    from namesake.commands.arguments import statistics_settings

    parser = build_parser()
    for argv in (
        ["compare-runs", "a", "b", "--config", "c"],
        ["evaluate", "--predictions", "p", "--config", "c"],
        ["amber", "compare", "--corpus", "k"],
    ):
        args = parser.parse_args([*argv, "--dataset", "d", "--out", "o"])
        assert statistics_settings(args) == StatisticsSettings()
        args = parser.parse_args([*argv, "--dataset", "d", "--out", "o", "--seed", "3"])
        assert statistics_settings(args).seed == 3


def test_allow_missing_prints_and_records_each_run_s_coverage(two_runs, tmp_path):
    """A run lacking three queries and holding one of no query of the config, compared under
    --allow-missing through the installed command: each run's coverage is printed, in
    `evaluate`'s words and named, and recorded in comparison.json and comparison.md."""
    dataset, work = two_runs
    lines = (work / "bm25.trec").read_text().splitlines(keepends=True)
    queries = list(dict.fromkeys(line.split()[0] for line in lines))
    dropped = queries[2:5]
    partial = tmp_path / "partial.trec"
    partial.write_text(
        "".join(line for line in lines if line.split()[0] not in dropped) + "nope Q0 307 1 1.0 t\n"
    )
    out = tmp_path / "comparison"
    done = subprocess.run(
        [str(NAMESAKE), "compare-runs", str(work / "tfidf.jsonl"), str(partial)]
        + ["--dataset", dataset, "--config", "human_qa", "--allow-missing", "--out", str(out)],
        capture_output=True,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"},
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    expected = [
        "tfidf: 0 of 18 queries of human_qa had no prediction, scored as empty rankings",
        "tfidf: 0 of 18 predictions matched no query of human_qa, not scored",
        "partial: 3 of 18 queries of human_qa had no prediction, scored as empty rankings "
        f"(e.g. {', '.join(dropped)})",
        "partial: 1 of 16 predictions matched no query of human_qa, not scored (e.g. nope)",
    ]
    assert [line for line in done.stdout.splitlines() if " of human_qa" in line] == expected
    record = json.loads((out / "comparison.json").read_text())
    assert record["a"]["coverage"]["queries_without_prediction"] == 0
    assert record["b"]["coverage"] == {
        "queries": 18,
        "predictions": 16,
        "queries_without_prediction": 3,
        "predictions_without_query": 1,
        "examples": {"queries_without_prediction": dropped, "predictions_without_query": ["nope"]},
    }
    markdown = (out / "comparison.md").read_text()
    assert all(f"- {line}\n" in markdown for line in expected)
    refused = subprocess.run(  # without --allow-missing: one line, nothing written
        [str(NAMESAKE), "compare-runs", str(work / "tfidf.jsonl"), str(partial)]
        + ["--dataset", dataset, "--config", "human_qa", "--out", str(tmp_path / "again")],
        capture_output=True,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"},
        timeout=600,
    )
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert refused.stderr.strip().splitlines()[-1] == (
        f"namesake: error: {partial}: 3 of 18 queries have no prediction (e.g. "
        f"{', '.join(dropped)}); --allow-missing scores them as empty rankings"
    )
    assert not (tmp_path / "again").exists()
