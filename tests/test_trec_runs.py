"""TREC runs in and out: `retrieve --format trec`, `evaluate` reading a run (told from its
content), `amber qrels`, and ranx scoring the same run on those qrels by itself; a bad run is
refused naming its line."""

from __future__ import annotations

import json
import math
import re

import pytest
from conftest import SAMPLE_KILT

from namesake.amber.evaluation.predictions import read_predictions, write_predictions
from namesake.cli import main
from namesake.errors import BadInputError, NamesakeError
from namesake.trec import read_run, write_qrels, write_run

IR = ("ndcg@10", "mrr@10", "r-precision", "recall@20", "recall@100")


@pytest.fixture(scope="module")
def runs(sample_build, tmp_path_factory):
    """BM25 on human_qa written both ways, each scored by `evaluate`."""
    out, _ = sample_build
    dataset = str(out / "dataset")
    work = tmp_path_factory.mktemp("trec")
    common = ["--corpus", str(SAMPLE_KILT), "--dataset", dataset, "--config", "human_qa"]
    common += ["--retriever", "bm25", "--index", str(work / "index")]
    main(["retrieve", *common, "--out", str(work / "bm25.jsonl")])
    main(["retrieve", *common, "--out", str(work / "bm25.trec"), "--format", "trec"])
    for name in ("bm25.jsonl", "bm25.trec"):
        main(
            ["evaluate", "--dataset", dataset, "--config", "human_qa"]
            + ["--predictions", str(work / name), "--out", str(work / f"report-{name}")]
        )
    return dataset, work


def _metrics(folder):
    return json.loads((folder / "metrics.json").read_text())["metrics"]


def test_a_trec_run_holds_the_same_ranking_as_the_json_lines(runs):
    _, work = runs
    lines = (work / "bm25.trec").read_text().splitlines()
    fields = lines[0].split()
    assert len(fields) == 6 and fields[1] == "Q0" and fields[3] == "1" and fields[5] == "bm25"
    assert read_run(work / "bm25.trec") == read_predictions(work / "bm25.jsonl")


def test_evaluate_scores_a_trec_run_as_the_json_lines(runs):
    _, work = runs
    kilt, trec = _metrics(work / "report-bm25.jsonl"), _metrics(work / "report-bm25.trec")
    assert kilt == trec
    assert {f"{name}{part}" for name in IR for part in ("", "_head", "_tail")} <= set(trec)
    assert all(len(trec["intervals"][name]) == 2 for name in IR)


def test_ranx_on_the_qrels_file_gives_evaluate_s_figures(runs, tmp_path):
    """What a user does without namesake: `amber qrels` + the TREC run, scored by ranx."""
    from ranx import Qrels, Run, evaluate

    dataset, work = runs
    qrels = tmp_path / "qrels.txt"
    main(["amber", "qrels", "--dataset", dataset, "--config", "human_qa", "--out", str(qrels)])
    lines = qrels.read_text().splitlines()
    assert all(len(line.split()) == 4 and line.split()[1::2] == ["0", "1"] for line in lines)
    ranx_figures = evaluate(
        Qrels.from_file(str(qrels), kind="trec"),
        Run.from_file(str(work / "bm25.trec"), kind="trec"),
        list(IR),
    )
    ours = _metrics(work / "report-bm25.trec")
    for name in IR:
        assert ours[name] == pytest.approx(100 * ranx_figures[name]), name


def test_run_name_tags_the_run(runs, tmp_path):
    dataset, work = runs
    out = tmp_path / "run.trec"
    main(
        ["retrieve", "--dataset", dataset, "--config", "human_qa", "--retriever", "bm25"]
        + ["--index", str(work / "index"), "--format", "trec", "--run-name", "my-bm25"]
        + ["--out", str(out)]
    )
    assert {line.split()[5] for line in out.read_text().splitlines()} == {"my-bm25"}


@pytest.mark.parametrize(
    "name, message",
    [("my run", "without white space"), ("", "without white space")],
)
def test_a_run_name_that_splits_the_line_is_refused_before_the_work(name, message, tmp_path):
    with pytest.raises(SystemExit) as caught:
        main(
            ["retrieve", "--corpus", str(SAMPLE_KILT), "--dataset", "nowhere", "--config"]
            + ["human_qa", "--retriever", "bm25", "--format", "trec", "--run-name", name]
            + ["--out", str(tmp_path / "run.trec")]
        )
    assert message in str(caught.value)
    assert not (tmp_path / "run.trec").exists()


GOOD = "q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 2.0 t\nq2 Q0 d1 1 1.5 t\n"


@pytest.mark.parametrize(
    "text, line, message",
    [
        (GOOD + "q2 Q0 d3 2 1.0\n", 4, "expected 6 fields"),
        (GOOD + "q2 Q0 d3 two 1.0 t\n", 4, "rank 'two' (4th field) is not an integer"),
        (GOOD + "q2 Q0 d3 2 high t\n", 4, "score 'high' (5th field) is not a number"),
        (GOOD + "q2 Q0 d3 2 nan t\n", 4, "is not finite"),
        (
            GOOD + "q1 Q0 d1 3 1.0 t\n",
            4,
            "document d1 is ranked twice for query q1 (first on line 1)",
        ),
        (GOOD + "q1 Q0 d3 2 1.0 t\n", 4, "rank 2 of query q1 comes after rank 2 (line 2)"),
        (GOOD + "q2 Q0 d3 2 9.0 t\n", 4, "is above the score 1.5 of rank 1 (line 3)"),
        ("q1 Q0 d1 1 3.0 t\nq1 Q0 \xff 2 2.0 t\n", 2, "not UTF-8"),
    ],
)
def test_a_bad_run_is_refused_naming_its_line(tmp_path, text, line, message):
    path = tmp_path / "run.trec"
    path.write_bytes(text.encode("utf-8").replace("\xff".encode(), b"\xff"))
    with pytest.raises(BadInputError) as caught:
        read_predictions(path)
    assert (caught.value.path, caught.value.line) == (str(path), line)
    assert message in caught.value.message


def test_a_file_of_neither_format_is_refused_naming_its_line(tmp_path):
    path = tmp_path / "run.txt"
    path.write_text("\nq1 d1 1\n")
    with pytest.raises(BadInputError, match="neither a KILT JSON line nor a TREC run line") as e:
        read_predictions(path)
    assert e.value.line == 2


def test_a_merged_run_reads_per_query_in_rank_order(tmp_path):
    """Queries interleaved (runs concatenated) read fine; order is the rank order."""
    path = tmp_path / "run.trec"
    path.write_text("q1 Q0 a 1 3 t\nq2 Q0 c 1 5 t\nq1 Q0 b 2 2 t\n\nq2 Q0 d 7 1 t\n")
    assert read_run(path) == {"q1": ["a", "b"], "q2": ["c", "d"]}


def test_writing_refuses_what_trec_eval_would_reorder_or_split(tmp_path):
    with pytest.raises(NamesakeError, match="ordered by score"):
        write_run(tmp_path / "r.trec", [("q", [("a", 1.0), ("b", 2.0)])], "t")
    with pytest.raises(NamesakeError, match="white space"):
        write_run(tmp_path / "r.trec", [("q 1", [("a", 1.0)])], "t")
    assert not (tmp_path / "r.trec").exists()  # nothing half-written


def test_evaluate_scores_a_run_of_unknown_queries_as_an_error_naming_the_file(runs, tmp_path):
    dataset, _ = runs
    path = tmp_path / "other.trec"
    path.write_text("nope Q0 307 1 1.0 t\n")
    with pytest.raises(SystemExit) as caught:
        main(
            ["evaluate", "--dataset", dataset, "--config", "human_qa", "--predictions", str(path)]
            + ["--out", str(tmp_path / "report")]
        )
    assert str(path) in str(caught.value) and "none of the 1 predictions" in str(caught.value)


@pytest.mark.parametrize("format", ["trec", "kilt"])
@pytest.mark.parametrize("score", [math.nan, math.inf, -math.inf])
def test_a_score_that_is_not_finite_is_never_written(tmp_path, format, score):
    """Neither format holds it (namesake refuses nan in a run, JSON has no nan: msgspec
    writes null): the writer refuses it, naming query and rank, before replacing the file."""
    path = tmp_path / "run"
    path.write_bytes(b"earlier\n")
    ranking = [("a", 2.0), ("b", score)]
    with pytest.raises(NamesakeError) as caught:
        write_predictions(path, [("q1", [("z", 1.0)]), ("q2", ranking)], format, "t")
    assert str(caught.value) == (
        f"query q2: the score of rank 2 is {score!r}: a run holds finite scores only"
    )
    reranked = [("a", 2.0, 1.0), ("b", 1.0, score)]  # JSON lines keep the first stage's too
    with pytest.raises(NamesakeError, match="q2: the first-stage score of rank 2 is"):
        write_predictions(path, [("q2", reranked)], "kilt")
    assert path.read_bytes() == b"earlier\n"


@pytest.mark.parametrize("bad", ["q\t1", "q\n1", "q 1", ""])
def test_an_id_that_splits_a_line_is_refused_by_every_trec_writer(tmp_path, bad):
    """`check_token`, the check of every TREC and TSV writer: nothing is written."""
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.trec"
    writes = {
        "query id": lambda: write_qrels(qrels, {bad: {"1": 1}}),
        "document id": lambda: write_qrels(qrels, {"q": {bad: 1}}),
        "run tag": lambda: write_run(run, [("q", [("1", 1.0)])], bad),
    }
    for what, write in writes.items():
        with pytest.raises(NamesakeError) as caught:
            write()
        destination = run if what == "run tag" else qrels
        assert str(caught.value) == (
            f"{what} {bad!r} cannot be written to {destination}: it is empty or holds white space"
        )
    with pytest.raises(NamesakeError, match=re.escape(f"document id {bad!r} cannot be written")):
        write_run(run, [("q", [(bad, 1.0)])], "t")
    assert not qrels.exists() and not run.exists()
