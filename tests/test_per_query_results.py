"""Per-query results (issue 50, item 1): `namesake evaluate` writes every query's measures,
entity, popularity rank in its set and the namesake it was confused with, in per_query.parquet
or trec_eval -q's lines, and aggregating them gives back every figure of the report."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
from conftest import SAMPLE_KILT

from namesake.amber.evaluation.queries import AmberQueries
from namesake.cli import main


@pytest.fixture(scope="module")
def report(sample_build, tmp_path_factory):
    out, _ = sample_build
    dataset = str(out / "dataset")
    work = tmp_path_factory.mktemp("per_query")
    run = work / "tfidf.jsonl"
    main(
        ["retrieve", "--corpus", str(SAMPLE_KILT), "--dataset", dataset, "--config", "human_sf"]
        + ["--retriever", "tfidf", "--out", str(run)]
    )
    base = ["evaluate", "--dataset", dataset, "--config", "human_sf", "--predictions", str(run)]
    main([*base, "--cutoffs", "1", "3", "--out", str(work / "report")])
    main([*base, "--cutoffs", "1", "3", "--per-query-format", "trec", "--out", str(work / "trec")])
    metrics = json.loads((work / "report" / "metrics.json").read_text())["metrics"]
    rows = pq.read_table(work / "report" / "per_query.parquet").to_pylist()
    return dataset, work, metrics, rows


def test_aggregating_the_rows_gives_back_every_figure_of_the_report(report):
    _, _, metrics, rows = report
    measures = ["accuracy@1", "accuracy@3", "entity_confusion", "ndcg@10", "mrr@10"]
    measures += ["r-precision", "recall@20", "recall@100"]
    assert metrics["num_queries"] == len(rows)
    assert metrics["num_sets"] == len({row["set"] for row in rows})
    for measure in measures:
        for part, chosen in (
            ("", rows),
            ("_head", [r for r in rows if r["is_head"]]),
            ("_tail", [r for r in rows if not r["is_head"]]),
        ):
            values = [row[measure] for row in chosen]
            assert sum(values) / len(values) == pytest.approx(metrics[measure + part], abs=1e-9)
    for k in (1, 3):
        sets = {}
        for row in rows:
            sets.setdefault(row["set"], []).append(row[f"accuracy@{k}"] == 100.0)
        share = 100 * sum(all(right) for right in sets.values()) / len(sets)
        assert share == pytest.approx(metrics[f"all_correct@{k}"])
        assert all(
            (row["gold_rank"] is not None and row["gold_rank"] <= k)
            == (row[f"accuracy@{k}"] == 100)
            for row in rows
        )


def test_a_confused_query_names_the_namesake_it_was_confused_with(report):
    dataset, _, _, rows = report
    members = AmberQueries.load(dataset, "human_sf").members.to_pylist()
    popularity = {(m["name"], m["qid"]): m["popularity"] for m in members}
    confused = [row for row in rows if row["entity_confusion"] == 100.0]
    assert confused, "the sample's TF-IDF run confuses some queries"
    for row in rows:
        namesake = row["confused_with_qid"]
        if row["entity_confusion"] != 100.0:
            assert namesake is None and row["confused_with_popularity_rank_in_set"] is None
            continue
        assert namesake != row["entity_qid"] and (row["set"], namesake) in popularity
        more_popular = sum(
            p > popularity[(row["set"], namesake)]
            for (s, _), p in popularity.items()
            if s == row["set"]
        )
        assert row["confused_with_popularity_rank_in_set"] == more_popular + 1
    for row in rows:
        more_popular = sum(
            p > row["popularity"] for (s, _), p in popularity.items() if s == row["set"]
        )
        assert row["popularity_rank_in_set"] == more_popular + 1


def test_the_trec_layout_holds_every_query_and_the_report_s_figures(report):
    _, work, metrics, rows = report
    assert not (work / "trec" / "per_query.parquet").exists()
    lines = [
        line.split("\t") for line in (work / "trec" / "per_query.txt").read_text().splitlines()
    ]
    assert all(len(fields) == 3 for fields in lines)
    by_query = {(measure, query): float(value) for measure, query, value in lines}
    for row in rows:
        assert by_query[("ndcg@10", row["query_id"])] == pytest.approx(row["ndcg@10"], abs=5e-5)
    for measure in ("accuracy@1", "accuracy@3", "entity_confusion", "ndcg@10", "recall@100"):
        assert by_query[(measure, "all")] == pytest.approx(metrics[measure], abs=5e-5)


def test_the_report_holds_the_run_s_within_set_popularity_effect(report):
    from namesake.amber.evaluation.popularity_effect import popularity_effect
    from namesake.amber.evaluation.scoring import ScoringOptions, score
    from namesake.runs import Run

    dataset, work, _, _ = report
    queries = AmberQueries.load(dataset, "human_sf")
    evaluation = score(Run.read(work / "tfidf.jsonl"), queries, ScoringOptions(k_values=(1, 3)))
    effect = popularity_effect(evaluation)
    record = json.loads((work / "report" / "metrics.json").read_text())["popularity_effect"]
    assert record == json.loads(json.dumps(effect.record()))
    assert record["informative_sets"] > 0
    markdown = (work / "report" / "report.md").read_text()
    assert f"## Within-set popularity effect\n\n{effect.summary()}" in markdown
