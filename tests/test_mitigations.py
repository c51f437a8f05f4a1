"""Reranking and fusion through the commands, with the bundled int8 ONNX cross-encoder on the
AmbER sample: `retrieve --rerank` (with `--candidates set` too), and `amber compare --rerank
--fuse rrf`, whose results.md holds every system and the table against BM25."""

from __future__ import annotations

import json

import pytest
from conftest import SAMPLE_KILT

from namesake.cli import main

DEPTH = 5


@pytest.fixture(scope="module")
def dataset(sample_build):
    out, _ = sample_build
    return str(out / "dataset")


def _lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_retrieve_rerank_keeps_both_scores_and_reorders_only_the_top(dataset, tmp_path):
    base = ["retrieve", "--corpus", str(SAMPLE_KILT), "--dataset", dataset, "--config"]
    base += ["human_qa", "--retriever", "bm25", "--index", str(tmp_path / "index")]
    main([*base, "--out", str(tmp_path / "first.jsonl")])
    main([*base, "--rerank", "--rerank-depth", str(DEPTH), "--out", str(tmp_path / "rr.jsonl")])
    first, reranked = _lines(tmp_path / "first.jsonl"), _lines(tmp_path / "rr.jsonl")
    assert [p["id"] for p in first] == [p["id"] for p in reranked]
    moved = 0
    for one, two in zip(first, reranked, strict=True):
        before = [p["wikipedia_id"] for p in one["output"]["provenance"]]
        after = [p["wikipedia_id"] for p in two["output"]["provenance"]]
        assert sorted(after[:DEPTH]) == sorted(before[:DEPTH])  # the same top pages
        assert after[DEPTH:] == before[DEPTH:]  # the rest untouched
        moved += after != before
        scores = [p["score"] for p in two["output"]["provenance"]]
        assert scores == sorted(scores, reverse=True)
        firsts = {p["wikipedia_id"]: p["score"] for p in one["output"]["provenance"]}
        for page in two["output"]["provenance"]:
            assert page["first_stage_score"] == pytest.approx(firsts[page["wikipedia_id"]])
    assert moved  # the cross-encoder changed some order


def test_rerank_within_the_sets(dataset, tmp_path):
    out = tmp_path / "set.trec"
    main(
        ["retrieve", "--corpus", str(SAMPLE_KILT), "--dataset", dataset, "--config", "human_sf"]
        + ["--retriever", "tfidf", "--candidates", "set", "--rerank", "--format", "trec"]
        + ["--out", str(out)]
    )
    lines = out.read_text().splitlines()
    assert {line.split()[5] for line in lines} == {"tfidf+rerank"}
    main(
        ["evaluate", "--dataset", dataset, "--config", "human_sf", "--predictions", str(out)]
        + ["--out", str(tmp_path / "report")]
    )


def test_a_bad_reranker_fails_before_the_first_stage(dataset, tmp_path):
    with pytest.raises(SystemExit) as caught:
        main(
            ["retrieve", "--corpus", str(SAMPLE_KILT), "--dataset", dataset, "--config"]
            + ["human_qa", "--retriever", "bm25", "--index", str(tmp_path / "index")]
            + ["--rerank", str(tmp_path), "--out", str(tmp_path / "rr.jsonl")]
        )
    assert str(tmp_path) in str(caught.value)
    assert not (tmp_path / "index").exists() and not (tmp_path / "rr.jsonl").exists()


def test_rerank_needs_the_corpus(dataset, tmp_path):
    with pytest.raises(SystemExit, match="give --corpus"):
        main(
            ["retrieve", "--index", str(tmp_path / "none"), "--dataset", dataset, "--config"]
            + ["human_qa", "--retriever", "bm25", "--rerank", "--out", str(tmp_path / "r.jsonl")]
        )


@pytest.fixture(scope="module")
def mitigated(dataset, tmp_path_factory):
    work = tmp_path_factory.mktemp("mitigations")
    main(
        ["amber", "compare", "--corpus", str(SAMPLE_KILT), "--dataset", dataset]
        + ["--out", str(work / "out"), "--collections", "human", "--top-k", "20"]
        + ["--retriever", "bm25", "tfidf", "--rerank", "--rerank-depth", str(DEPTH)]
        + ["--fuse", "rrf"]
    )
    return work / "out"


def test_compare_has_a_row_for_every_system(mitigated):
    results = (mitigated / "results.md").read_text()
    main_table = results.split("## Against the baseline")[0]
    systems = ["bm25", "tfidf", "fused:rrf", "bm25+rerank", "tfidf+rerank", "fused:rrf+rerank"]
    for system in systems:
        assert main_table.count(f"| {system} | AmbER-H |") == 3, system
    predictions = {path.name for path in (mitigated / "predictions").iterdir()}
    assert {"fused-rrf-human_qa.jsonl", "bm25+rerank-human_qa.jsonl"} <= predictions
    assert "fused-rrf+rerank-human_fc.jsonl" in predictions


def test_compare_tests_every_system_against_bm25(mitigated):
    against = (mitigated / "results.md").read_text().split("## Against the baseline")[1]
    rows = [line for line in against.splitlines() if line.startswith("| ") and "---" not in line]
    body = rows[1:]
    assert len(body) == 5 * 3  # five systems besides BM25, three configs
    assert all(row.split("|")[2].strip() == "bm25" for row in body)
    assert all(row.endswith(" of 4 |") for row in body)  # the headline measures


def test_fusion_then_rerank_is_the_fused_run_reranked(mitigated):
    fused = {p["id"]: p for p in _lines(mitigated / "predictions" / "fused-rrf-human_qa.jsonl")}
    path = mitigated / "predictions" / "fused-rrf+rerank-human_qa.jsonl"
    reranked = {p["id"]: p for p in _lines(path)}
    assert fused.keys() == reranked.keys()
    for query_id, one in fused.items():
        two = reranked[query_id]
        before = [p["wikipedia_id"] for p in one["output"]["provenance"]]
        after = [p["wikipedia_id"] for p in two["output"]["provenance"]]
        assert sorted(after[:DEPTH]) == sorted(before[:DEPTH])
        assert after[DEPTH:] == before[DEPTH:]


def test_compare_s_literal_task_default_is_every_task():
    from namesake.amber.build.instances import TASKS
    from namesake.cli import build_parser

    args = build_parser().parse_args(
        ["amber", "compare", "--corpus", "c", "--dataset", "d", "--out", "o"]
    )
    assert tuple(args.tasks) == TASKS and args.rerank is None and args.rerank_depth == 100


def test_bge_small_and_colbert_through_compare_and_evaluate(dataset, tmp_path):
    """The bundled ONNX first stage (bge-small) and second stage (ColBERT MaxSim) through
    `amber compare`, within the sets too, each row scored."""
    for candidates in ("all", "set"):
        out = tmp_path / candidates
        main(
            ["amber", "compare", "--corpus", str(SAMPLE_KILT), "--dataset", dataset]
            + ["--out", str(out), "--collections", "human", "--tasks", "qa", "--top-k", "10"]
            + ["--retriever", "bm25", "--dense-run", "bge=bundled:bge-small"]
            + ["--rerank", "colbert", "--rerank-depth", "3", "--candidates", candidates]
        )
        table = (out / "results.md").read_text().split("## Against the baseline")[0]
        for system in ("bm25", "dense:bge", "bm25+rerank", "dense:bge+rerank"):
            assert table.count(f"| {system} | AmbER-H | QA |") == 1, (candidates, system)
        metrics = json.loads(
            (out / "reports" / "dense-bge+rerank-human_qa" / "metrics.json").read_text()
        )
        assert metrics["retriever"] == "dense:bge+rerank"
        assert 0 <= metrics["metrics"]["accuracy@1"] <= 100
