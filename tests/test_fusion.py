"""`namesake fuse` and `namesake.amber.evaluation.fusion`: ranx's fusion against hand-computed RRF
and CombSUM, runs of other queries refused naming the file, and the fused run scored."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SAMPLE_KILT
from folders import folder_files

from namesake.amber.evaluation.fusion import WEIGHTED, fuse_runs
from namesake.cli import main
from namesake.errors import BadInputError, NamesakeError
from namesake.trec import read_scored_run

NAMESAKE = Path(sys.executable).with_name("namesake")
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


def test_rbc_by_hand(runs):
    """RBC: a page at rank r (from 0) of a run gets (1 - phi) phi^r, summed over runs; q1 with
    phi 0.5: a 0.5 + 0.25, c 0.125 + 0.5, b 0.25."""
    fused = fuse_runs(runs, "rbc", phi=0.5)
    assert dict(fused["q1"]) == pytest.approx({"a": 0.75, "c": 0.625, "b": 0.25})
    assert [doc for doc, _ in fuse_runs(runs, "rbc")["q1"]] == ["a", "c", "b"]  # phi 0.8


@pytest.mark.parametrize("method", WEIGHTED)
def test_weights_of_one_give_the_unweighted_method(runs, method):
    """Each method's weighted form in ranx, with every run weighing 1, is the method itself
    (wsum's unweighted self is combsum)."""
    unweighted = fuse_runs(runs, "combsum" if method == "wsum" else method)
    assert fuse_runs(runs, method, weights=[1.0, 1.0]) == unweighted


def test_weights_shift_the_vote_by_hand(runs):
    """Borda over q1's three pages: A gives a 3, b 2, c 1; B gives c 3, a 2 and the page it
    lacks the point left, b 1. Weighing B three times: c 1 + 9, a 3 + 6, b 2 + 3. CombSUM of
    min-max scores, B weighing 3: c 0 + 3, a 1 + 0, b 0.5."""
    borda = fuse_runs(runs, "borda", weights=[1, 3])
    assert borda["q1"] == [("c", 10.0), ("a", 9.0), ("b", 5.0)]
    assert dict(fuse_runs(runs, "combsum", weights=[1, 3])["q1"]) == pytest.approx(
        {"c": 3.0, "a": 1.0, "b": 0.5}
    )
    condorcet = fuse_runs(runs, "condorcet", weights=[3, 1])  # A outvotes B on every pair
    assert [doc for doc, _ in condorcet["q1"]] == ["a", "b", "c"]


def _fuse(folder: Path, *options: str) -> subprocess.CompletedProcess:
    """`namesake fuse a.trec b.trec OPTIONS --out fused.trec` as a process, in ``folder``."""
    return subprocess.run(
        [str(NAMESAKE), "fuse", "a.trec", "b.trec", *options, "--out", "fused.trec"],
        capture_output=True,
        text=True,
        cwd=folder,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"},
        timeout=300,
    )


def _refused_fusion(folder: Path, *options: str) -> str:
    """`namesake fuse a.trec b.trec OPTIONS --out fused.trec` as a process, over an earlier
    fused.trec: exit status 1, one error line (returned), and every file of ``folder``, the
    runs and the earlier output, unchanged byte for byte."""
    before = folder_files(folder)
    done = _fuse(folder, *options)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    (line,) = [line for line in done.stderr.splitlines() if line.startswith("namesake: error: ")]
    assert folder_files(folder) == before
    return line


@pytest.fixture
def fused_before(runs) -> Path:
    """The runs' folder, holding an earlier fused.trec that namesake wrote (a rerun may
    replace it: only a refusal keeps it)."""
    folder = Path(runs[0]).parent
    done = _fuse(folder, "--run-name", "earlier")
    assert done.returncode == 0, done.stderr
    return folder


@pytest.mark.parametrize(
    "options, message",
    [
        (
            ["--method", "rrf", "--weights", "1", "2"],
            "rrf takes no weights: drop --weights, or fuse with a method that weighs the runs "
            "(borda, condorcet, combsum, combmnz, wsum)",
        ),
        (
            ["--method", "wsum", "--weights", "nan", "1"],
            "--weights nan: a weight is a run's share of the vote, a finite number of at least 0",
        ),
        (
            ["--method", "combsum", "--weights", "1", "inf"],
            "--weights inf: a weight is a run's share of the vote, a finite number of at least 0",
        ),
        (
            ["--method", "borda", "--weights", "-1", "2"],
            "--weights -1.0: a weight is a run's share of the vote, a finite number of at least 0",
        ),
        (
            ["--method", "wsum", "--weights", "0", "0"],
            "every weight is 0: give at least one run a weight above 0",
        ),
        (["--method", "rbc", "--rbc-phi", "1"], "rbc's phi must be above 0 and below 1, not 1.0"),
    ],
    ids=["rrf weighted", "nan", "inf", "negative", "all zero", "rbc phi"],
)
def test_weights_a_method_cannot_take_are_refused_before_a_run_is_read(
    fused_before, options, message
):
    assert _refused_fusion(fused_before, *options) == f"namesake: error: {message}"


@pytest.mark.parametrize("format", ["trec", "kilt"])
def test_a_fused_score_that_overflows_is_refused_by_the_writer(fused_before, format):
    """Finite weights can still overflow: a page first in both runs (min-max 1) weighed 1e308
    by each sums to inf. The writer refuses it, naming query and rank, and the earlier
    output stays (a JSON line would have held null, a TREC run inf)."""
    (fused_before / "b.trec").write_text(RUN_A.replace(" A\n", " B\n"))
    line = _refused_fusion(
        fused_before, "--method", "combsum", "--weights", "1e308", "1e308", "--format", format
    )
    assert (
        line
        == "namesake: error: query q1: the score of rank 1 is inf: a run holds finite scores only"
    )


def test_a_run_name_that_splits_the_line_is_refused_before_the_fusion(fused_before):
    line = _refused_fusion(fused_before, "--run-name", "my run")
    assert line == (
        "namesake: error: --run-name 'my run' cannot be written to fused.trec: it is empty or "
        "holds white space"
    )


def test_amber_compare_offers_only_methods_it_can_run_without_weights(capsys):
    """amber compare has no --weights: wsum, which needs them, is refused by the parser,
    before any retrieval, not after every first stage ran."""
    from namesake.amber.evaluation.fusion import METHODS
    from namesake.cli import build_parser

    base = ["amber", "compare", "--corpus", "c", "--dataset", "d", "--out", "o", "--fuse"]
    with pytest.raises(SystemExit):
        build_parser().parse_args([*base, "wsum"])
    assert "invalid choice: 'wsum'" in capsys.readouterr().err
    for name in METHODS.keys() - {"wsum"}:
        assert build_parser().parse_args([*base, name]).fuse == name
