"""`namesake fuse` and `namesake.amber.evaluation.fusion`: ranx's fusion against hand-computed RRF
and CombSUM, runs of other queries refused naming the file, and the fused run scored."""

from __future__ import annotations

import json

import pytest
from conftest import SAMPLE_KILT

from namesake.amber.evaluation.fusion import fuse_runs
from namesake.cli import main
from namesake.errors import BadInputError, NamesakeError
from namesake.trec import read_scored_run

RUN_A = "q1 Q0 a 1 9.0 A\nq1 Q0 b 2 5.0 A\nq1 Q0 c 3 1.0 A\nq2 Q0 x 1 2.0 A\n"
RUN_B = "q1 Q0 c 1 0.9 B\nq1 Q0 a 2 0.8 B\nq2 Q0 y 1 3.0 B\nq2 Q0 x 2 1.0 B\n"


@pytest.fixture
def runs(tmp_path):
    a, b = tmp_path / "a.trec", tmp_path / "b.trec"
    a.write_text(RUN_A)
    b.write_text(RUN_B)
    return str(a), str(b)


def test_rrf_by_hand(runs):
    """RRF: sum over runs of 1 / (k + rank), k = 60, ranks from 1."""
    fused = fuse_runs(runs, "rrf")
    expected_q1 = {
        "a": 1 / 61 + 1 / 62,
        "c": 1 / 63 + 1 / 61,
        "b": 1 / 62,
    }
    assert [doc for doc, _ in fused["q1"]] == ["a", "c", "b"]
    for doc, score in fused["q1"]:
        assert score == pytest.approx(expected_q1[doc])
    assert dict(fused["q2"]) == pytest.approx({"x": 1 / 61 + 1 / 62, "y": 1 / 61})


def test_rrf_k_changes_the_constant(runs):
    fused = fuse_runs(runs, "rrf", k=1)
    assert dict(fused["q1"])["b"] == pytest.approx(1 / 3)


def test_combsum_by_hand(runs):
    """CombSUM of min-max normalised scores per query: q1 in A: a 1, b 0.5, c 0; in B:
    c 1, a 0 -> a 1, c 1, b 0.5."""
    fused = dict(fuse_runs(runs, "combsum")["q1"])
    assert fused == pytest.approx({"a": 1.0, "c": 1.0, "b": 0.5})


def test_top_k_cuts_each_query(runs):
    assert len(fuse_runs(runs, "rrf", top_k=2)["q1"]) == 2


def test_runs_of_other_queries_are_refused_naming_the_file(runs, tmp_path):
    other = tmp_path / "other.trec"
    other.write_text("q1 Q0 a 1 1.0 C\n")
    with pytest.raises(BadInputError) as caught:
        fuse_runs([runs[0], str(other)], "rrf")
    assert caught.value.path == str(other)
    assert "lacks query q2" in caught.value.message


def test_score_methods_need_scores(tmp_path, runs):
    unscored = tmp_path / "unscored.jsonl"
    unscored.write_text(
        json.dumps({"id": "q1", "output": {"provenance": [{"wikipedia_id": "a"}]}})
        + "\n"
        + json.dumps({"id": "q2", "output": {"provenance": [{"wikipedia_id": "x"}]}})
        + "\n"
    )
    with pytest.raises(BadInputError, match="without a score") as caught:
        fuse_runs([runs[0], str(unscored)], "combsum")
    assert caught.value.path == str(unscored)
    assert [doc for doc, _ in fuse_runs([runs[0], str(unscored)], "rrf")["q1"]] == ["a", "b", "c"]


def test_wrong_arguments_are_refused(runs):
    with pytest.raises(NamesakeError, match="at least two runs"):
        fuse_runs(runs[:1], "rrf")
    with pytest.raises(NamesakeError, match="give --weights"):
        fuse_runs(runs, "wsum")
    with pytest.raises(NamesakeError, match="3 weights for 2 runs"):
        fuse_runs(runs, "wsum", weights=[1, 2, 3])


def test_fuse_command_writes_a_run_that_evaluate_scores(sample_build, tmp_path):
    out, _ = sample_build
    dataset = str(out / "dataset")
    base = ["retrieve", "--corpus", str(SAMPLE_KILT), "--dataset", dataset, "--config"]
    for kind in ("bm25", "tfidf"):
        main([*base, "human_qa", "--retriever", kind, "--out", str(tmp_path / f"{kind}.jsonl")])
    fused = tmp_path / "fused.trec"
    main(
        ["fuse", str(tmp_path / "bm25.jsonl"), str(tmp_path / "tfidf.jsonl"), "--method", "rrf"]
        + ["--out", str(fused)]
    )
    scored = read_scored_run(fused)
    assert len(scored) == 18
    assert {line.split()[5] for line in fused.read_text().splitlines()} == {"rrf"}
    main(
        ["evaluate", "--dataset", dataset, "--config", "human_qa", "--predictions", str(fused)]
        + ["--out", str(tmp_path / "report")]
    )
    metrics = json.loads((tmp_path / "report" / "metrics.json").read_text())["metrics"]
    assert 0 <= metrics["accuracy@1"] <= 100 and "ndcg@10" in metrics["intervals"]


def test_fusing_a_slice_of_queries_at_a_time_changes_nothing(runs, monkeypatch):
    import namesake.amber.evaluation.fusion as fusion

    whole = {method: fuse_runs(runs, method) for method in ("rrf", "combsum", "combmnz")}
    monkeypatch.setattr(fusion, "CHUNK_QUERIES", 1)
    for method, fused in whole.items():
        assert fuse_runs(runs, method) == fused, method
