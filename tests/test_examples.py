"""The five scripts of examples/ run as a user runs them (``python examples/X.py ...``, in a
fresh process, offline) on the bundled sample, their inputs made by namesake itself; what each
prints is checked against what namesake's own commands give for the same inputs."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SAMPLE_KILT, load_module

from namesake.cli import main as namesake
from namesake.runs import Run

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
CONFIG = "human_qa"


def example(script: str, *arguments, cwd: Path) -> str:
    """The script's stdout; a failure shows the end of its stderr."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / script), *map(str, arguments)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, f"{script} failed:\n{done.stderr[-3000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def dataset(sample_build) -> str:
    return str(sample_build[0] / "dataset")


@pytest.fixture(scope="module")
def runs(dataset, tmp_path_factory) -> dict[str, Path]:
    """A BM25 run as a TREC run and a TF-IDF run as KILT JSON lines on human_qa, by
    `namesake retrieve`."""
    folder = tmp_path_factory.mktemp("example_runs")
    made = {"bm25": folder / "bm25.trec", "tfidf": folder / "tfidf.jsonl"}
    for kind, out in made.items():
        namesake(
            [*("retrieve", "--retriever", kind, "--corpus", str(SAMPLE_KILT), "--dataset"), dataset]
            + ["--config", CONFIG, "--format", out.suffix.lstrip(".").replace("jsonl", "kilt")]
            + ["--out", str(out)]
        )
    return made


def cell(value: float, interval: list[float]) -> str:
    return f"{value:.1f} [{interval[0]:.1f}, {interval[1]:.1f}]"


def test_score_trec_run_prints_the_figures_of_namesake_evaluate(dataset, runs, tmp_path):
    out = example("score_trec_run.py", runs["bm25"], "--dataset", dataset, cwd=tmp_path)
    namesake(
        ["evaluate", "--dataset", dataset, "--config", CONFIG, "--predictions", str(runs["bm25"])]
        + ["--out", str(tmp_path / "report")]
    )
    metrics = json.loads((tmp_path / "report" / "metrics.json").read_text())["metrics"]
    lines = out.splitlines()
    assert lines[0] == f"bm25 on {CONFIG}, 18 queries in 8 AmbER sets"
    rows = {line.split()[0]: re.split(r"\s{2,}", line)[1:] for line in lines[3:]}
    expected = [m for m in metrics["intervals"] if not m.endswith(("_head", "_tail"))]
    assert list(rows) == [m for m in expected if f"{m}_head" in metrics] + [
        m for m in expected if f"{m}_head" not in metrics
    ]
    for measure, cells in rows.items():
        names = [measure, f"{measure}_head", f"{measure}_tail"][: len(cells)]
        assert cells == [cell(metrics[n], metrics["intervals"][n]) for n in names], measure
    assert rows["accuracy@1"][1] != rows["accuracy@1"][2], "head and tail differ on the sample"


def test_compare_runs_prints_the_table_of_namesake_compare_runs(dataset, runs, tmp_path):
    a, b = str(runs["bm25"]), str(runs["tfidf"])
    names = ["--names", "BM25", "TF-IDF"]
    out = example("compare_runs.py", a, b, "--dataset", dataset, *names, cwd=tmp_path)
    namesake(
        ["compare-runs", a, b, "--dataset", dataset, "--config", CONFIG, *names]
        + ["--out", str(tmp_path / "cmp")]
    )
    report = (tmp_path / "cmp" / "comparison.md").read_text()
    table = [line for line in report.splitlines() if line.startswith("| ")]
    assert len(table) > 28 and all(line in out.splitlines() for line in table)
    record = json.loads((tmp_path / "cmp" / "comparison.json").read_text())
    assert out.startswith(f"{CONFIG}, {record['num_queries']} queries in {record['num_sets']} ")
    assert "on so few sets no difference can be significant" in out


def test_rerank_and_fuse_writes_the_runs_namesake_fuse_and_rerank_give(dataset, runs, tmp_path):
    bm25, tfidf = runs["bm25"], runs["tfidf"]
    depth = 5
    out = example(
        "rerank_and_fuse.py",
        *(bm25, tfidf, "--dataset", dataset, "--corpus", SAMPLE_KILT),
        *("--depth", depth, "--out", tmp_path / "out"),
        cwd=tmp_path,
    )
    namesake(["fuse", str(bm25), str(tfidf), "--method", "rrf", "--out", str(tmp_path / "cli")])
    fused, by_cli = Run.read(tmp_path / "out" / "rrf.trec"), Run.read(tmp_path / "cli")
    queries = Run.read(bm25).query_ids.tolist()
    assert sorted(fused.query_ids.tolist()) == sorted(queries)
    assert [fused.ranking(i) for i in range(len(fused))] == [
        by_cli.ranking(i) for i in range(len(by_cli))
    ]
    reranked, first = Run.read(tmp_path / "out" / "bm25+rerank.jsonl"), Run.read(bm25)
    assert reranked.first_stage_scores is not None
    for i in range(len(first)):  # the first stage's top pages, in the cross-encoder's order
        top = [page for page, *_ in first.ranking(i)[:depth]]
        assert sorted(page for page, *_ in reranked.ranking(i)[:depth]) == sorted(top)

    from namesake import AmberQueries, score

    amber = AmberQueries.load(dataset, CONFIG)
    printed = dict(line.split(" | ", 1) for line in out.splitlines()[2:])
    labels = ["bm25", "tfidf", "rrf(bm25, tfidf)", "bm25+rerank"]
    assert list(printed) == labels
    for label, run in zip(labels, [first, Run.read(tfidf), fused, reranked], strict=True):
        metrics = score(run, amber).metrics
        assert printed[label].split(" | ")[0] == cell(
            metrics["accuracy@1"], metrics["intervals"]["accuracy@1"]
        )


def test_score_answers_judges_the_right_answer_above_the_wrong_one(tmp_path):
    """The script's own answers, given back as a user's file (``--answers``): both ways in."""
    built_in = load_module(EXAMPLES / "score_answers.py", "score_answers_example").ANSWERS
    answers = tmp_path / "answers.jsonl"
    with answers.open("w") as f:
        for question, gold, answer in built_in:
            f.write(json.dumps({"question": question, "answer": answer, "gold": gold}) + "\n")
    out = example("score_answers.py", "--answers", answers, cwd=tmp_path).splitlines()
    assert out[0].startswith("namesake-wes-scorer-v5 (hybrid): an answer is right at ")
    rows = [line.split(" | ") for line in out[2:-3]]
    assert [row[:3] for row in rows] == [[q, " / ".join(g), a] for q, g, a in built_in]
    scores = [[float(cell.split()[0]) for cell in row[3:]] for row in rows]
    assert all(0 <= s <= 1 for pair in scores for s in pair)
    for right, wrong in zip(scores[0::2], scores[1::2], strict=True):
        assert right[0] > wrong[0] and right[1] > wrong[1]  # without and with the question
    assert out[-3].startswith("without questions: ") and out[-2].startswith("with questions: ")


def test_beir_folder_is_scored_alike_by_beir_and_namesake(dataset, tmp_path):
    from beir.datasets.data_loader import GenericDataLoader

    from namesake import AmberQueries

    folder = tmp_path / "beir"
    out = example(
        "beir_folder.py",
        *("--dataset", dataset, "--corpus", SAMPLE_KILT, "--distractors", 5, "--out", folder),
        cwd=tmp_path,
    ).splitlines()
    corpus, queries, qrels = GenericDataLoader(str(folder)).load(split="test")
    assert out[0] == (
        f"{CONFIG}: {len(queries)} queries, {sum(map(len, qrels.values()))} relevance "
        f"judgments, {len(corpus)} documents ({len(corpus) - 5} set pages + 5 distractors, seed 0)"
    )
    assert qrels == AmberQueries.load(dataset, CONFIG).qrels()
    beir = dict(re.findall(r"(\S+@\d+) ([\d.]+)", out[1]))
    ours = dict(re.findall(r"(\S+@\S+) ([\d.]+)", out[2]))
    assert out[1].startswith("beir: ") and out[2].startswith("namesake: ")
    assert 0 < float(beir["NDCG@10"]) < 1
    assert float(ours["ndcg@10"]) == pytest.approx(100 * float(beir["NDCG@10"]), abs=0.006)
