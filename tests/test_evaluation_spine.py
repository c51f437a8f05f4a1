"""The evaluation side's spine (issue 49): every command loads each config once, reads each run
file once and reads the corpus once for all the runs it reranks; the stages are functions of a
few objects; and the Python API, used as a notebook would, gives the figures the CLI writes."""

from __future__ import annotations

import inspect
import json
from collections import Counter

import pytest
from conftest import SAMPLE_KILT

import namesake
from namesake.amber.evaluation import queries as queries_module
from namesake.cli import main

#: the stage functions and what bounds them: objects or an options object, not strings to reload
STAGES = (
    "namesake.amber.evaluation.retrieve:retrieve",
    "namesake.amber.evaluation.retrieve:rerank",
    "namesake.amber.evaluation.retrieve:read_pages",
    "namesake.amber.evaluation.fusion:fuse",
    "namesake.amber.evaluation.scoring:score",
    "namesake.amber.evaluation.compare_runs:compare_pair",
    "namesake.amber.evaluation.compare_runs:compare",
    "namesake.amber.evaluation.compare:compare_retrievers",
    "namesake.amber.evaluation.compare:mitigations",
)


@pytest.mark.parametrize("stage", STAGES)
def test_a_stage_takes_at_most_six_parameters(stage):
    import importlib

    module, name = stage.split(":")
    function = getattr(importlib.import_module(module), name)
    assert len(inspect.signature(function).parameters) <= 6, stage


@pytest.fixture(scope="module")
def dataset(sample_build):
    out, _ = sample_build
    return str(out / "dataset")


@pytest.fixture
def counted(monkeypatch):
    """Counts, while a command runs: each config loaded (dataset, config), each run file
    read, and each pass over a KILT corpus."""
    import namesake.amber.evaluation.retrieve as retrieve_module
    import namesake.retrieval.corpus as corpus_module
    import namesake.retrieval.rerank as rerank_module
    from namesake.runs import Run

    counts = {"configs": Counter(), "runs": Counter(), "corpus": 0, "rerank_reads": 0}
    load_config = queries_module._load_config

    def counting_load(dataset, config):
        counts["configs"][config] += 1
        return load_config(dataset, config)

    monkeypatch.setattr(queries_module, "_load_config", counting_load)
    read = Run.read.__func__

    def counting_read(cls, path, *args, **kwargs):
        counts["runs"][str(path)] += 1
        return read(cls, path, *args, **kwargs)

    monkeypatch.setattr(Run, "read", classmethod(counting_read))
    read_documents = corpus_module.read_kilt_documents

    def counting_documents(*args, **kwargs):
        counts["corpus"] += 1
        return read_documents(*args, **kwargs)

    for module in (corpus_module, rerank_module, retrieve_module):
        if hasattr(module, "read_kilt_documents"):
            monkeypatch.setattr(module, "read_kilt_documents", counting_documents)
    opening = rerank_module.opening_passages

    def counting_opening(*args, **kwargs):
        counts["rerank_reads"] += 1
        return opening(*args, **kwargs)

    monkeypatch.setattr(rerank_module, "opening_passages", counting_opening)
    return counts


def test_amber_compare_loads_each_config_once_and_reads_the_corpus_once_to_rerank(
    dataset, tmp_path, counted
):
    """Two first stages and their fusion, each reranked, over the six configs: 18 reranked
    runs, and one pass over the corpus for all of them (the indexes already built, so that
    no build reads it)."""
    argv = ["amber", "compare", "--corpus", str(SAMPLE_KILT), "--dataset", dataset]
    argv += ["--index-dir", str(tmp_path / "indexes"), "--retriever", "bm25", "tfidf"]
    main([*argv, "--out", str(tmp_path / "first"), "--tasks", "qa"])
    for counter in ("configs", "runs"):
        counted[counter].clear()
    counted["corpus"] = counted["rerank_reads"] = 0
    main(
        [*argv, "--out", str(tmp_path / "all"), "--rerank", "--rerank-depth", "3", "--fuse", "rrf"]
    )
    configs = [f"{c}_{t}" for c in ("human", "nonhuman") for t in ("qa", "sf", "fc")]
    assert counted["configs"] == Counter(
        {**dict.fromkeys(configs, 1), "human_entities": 1, "nonhuman_entities": 1}
    )
    assert counted["rerank_reads"] == 1 and counted["corpus"] == 1
    reranked = list((tmp_path / "all" / "predictions").glob("*+rerank-*.jsonl"))
    assert len(reranked) == 3 * 6
    assert not counted["runs"]  # the runs are passed on in memory, never read back


def test_evaluate_compare_runs_and_fuse_read_each_run_file_once(dataset, tmp_path, counted):
    runs = [tmp_path / "bm25.jsonl", tmp_path / "tfidf.trec"]
    for retriever, path in zip(("bm25", "tfidf"), runs, strict=True):
        main(
            ["retrieve", "--corpus", str(SAMPLE_KILT), "--dataset", dataset, "--config"]
            + ["human_qa", "--retriever", retriever, "--out", str(path)]
            + (["--format", "trec"] if path.suffix == ".trec" else [])
        )
    for argv in (
        ["evaluate", "--predictions", str(runs[0]), "--out", str(tmp_path / "report")],
        ["compare-runs", *map(str, runs), "--out", str(tmp_path / "comparison")],
    ):
        counted["configs"].clear()
        counted["runs"].clear()
        main([*argv, "--dataset", dataset, "--config", "human_qa"])
        assert counted["configs"] == Counter({"human_qa": 1, "human_entities": 1}), argv[0]
        wanted = runs if argv[0] == "compare-runs" else runs[:1]
        assert counted["runs"] == Counter({str(path): 1 for path in wanted}), argv[0]
    counted["runs"].clear()
    main(["fuse", *map(str, runs), "--out", str(tmp_path / "fused.trec")])
    assert counted["runs"] == Counter({str(path): 1 for path in runs})


def test_the_python_api_gives_the_figures_the_cli_writes(dataset, tmp_path):
    """A notebook's five lines: load AmbER-H QA, read two runs, score them, compare them with
    BM25, look at the figures in pandas; the figures are those of `namesake evaluate`'s
    metrics.json and `namesake compare-runs`' comparison.json."""
    paths = {}
    for retriever in ("bm25", "tfidf"):
        paths[retriever] = tmp_path / f"{retriever}.jsonl"
        main(
            ["retrieve", "--corpus", str(SAMPLE_KILT), "--dataset", dataset, "--config"]
            + ["human_qa", "--retriever", retriever, "--out", str(paths[retriever])]
        )
    main(
        ["evaluate", "--dataset", dataset, "--config", "human_qa", "--predictions"]
        + [str(paths["tfidf"]), "--out", str(tmp_path / "report")]
    )
    main(
        ["compare-runs", str(paths["bm25"]), str(paths["tfidf"]), "--dataset", dataset]
        + ["--config", "human_qa", "--out", str(tmp_path / "comparison")]
    )

    queries = namesake.AmberQueries.load(dataset, "human_qa")
    bm25 = namesake.score(namesake.Run.read(paths["bm25"]), queries)
    tfidf = namesake.score(namesake.Run.read(paths["tfidf"]), queries)
    (comparison,) = namesake.compare([bm25, tfidf])
    frame = tfidf.to_pandas()

    written = json.loads((tmp_path / "report" / "metrics.json").read_text())["metrics"]
    assert set(frame.index) == set(written["intervals"])
    for figure, row in frame.iterrows():
        assert row["value"] == pytest.approx(written[figure], nan_ok=True), figure
        assert [row["low"], row["high"]] == pytest.approx(written["intervals"][figure], nan_ok=True)
    per_query = tfidf.to_pandas(per_query=True)
    assert list(per_query["query_id"]) == queries.ids
    assert per_query["accuracy@1"].mean() == pytest.approx(written["accuracy@1"])
    compared = json.loads((tmp_path / "comparison" / "comparison.json").read_text())["measures"]
    records = [verdict.record() for verdict in comparison.verdicts]
    assert json.dumps(records) == json.dumps(compared)  # NaN where untested, in both
    assert "| Run |" in tfidf.to_markdown() and comparison.table().startswith("| Measure |")


def test_the_api_is_lazy_and_documented():
    import subprocess
    import sys

    code = (
        "import sys, namesake; print(sorted(m for m in sys.modules if m.startswith('namesake.')))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert loaded.stdout.strip() == "[]"  # importing namesake loads none of its modules
    for name in namesake.__all__:  # each with a docstring holding a short example
        assert ">>>" in (getattr(namesake, name).__doc__ or ""), name


def test_a_users_metric_module_scores_as_the_default_does(dataset, tmp_path):
    """AmbER's figures and the popularity gap come from the per-query ranks by default, and
    from the module `--metric` names otherwise: on the bundled module's copy they agree."""
    import shutil
    from pathlib import Path

    from namesake.metrics import metric_path

    run = tmp_path / "bm25.jsonl"
    main(
        ["retrieve", "--corpus", str(SAMPLE_KILT), "--dataset", dataset, "--config", "human_qa"]
        + ["--retriever", "bm25", "--out", str(run)]
    )
    mine = tmp_path / "mine" / "entity_confusion"  # evaluate names a module by its folder
    shutil.copytree(metric_path("entity_confusion"), mine)
    reports = {}
    for name, extra in (("default", []), ("mine", ["--metric", str(mine)])):
        main(
            ["evaluate", "--dataset", dataset, "--config", "human_qa", "--predictions", str(run)]
            + ["--out", str(tmp_path / f"report-{name}"), *extra]
        )
        reports[name] = json.loads(Path(tmp_path / f"report-{name}" / "metrics.json").read_text())
    assert reports["mine"]["metrics"] == reports["default"]["metrics"]
    assert list(reports["mine"]["metrics"]) == list(reports["default"]["metrics"])
    assert reports["mine"]["popularity_gap"] == reports["default"]["popularity_gap"]
