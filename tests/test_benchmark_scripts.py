"""The GPU benchmark and the encode-feeder benchmark run end to end on a CPU, small, so
that neither rots between the sessions that have a GPU (issue 36); so does issue 49's
benchmark of the evaluation stages at AmbER's full size, tiny."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run_script(script: str, arguments: list[str], timeout: int, env: dict | None = None):
    """The benchmark script, offline, from the checkout, with ``env`` added to the
    environment; its output shown if it fails."""
    done = subprocess.run(
        [sys.executable, f"benchmarks/{script}", *arguments],
        cwd=ROOT,
        env={**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done


def test_gpu_benchmark_runs_tiny_on_a_cpu(tmp_path):
    done = _run_script("bench_gpu.py", ["--tiny", "--work", str(tmp_path)], timeout=900)
    results = json.loads((tmp_path / "bench_gpu.json").read_text())
    for step in ("encode_minilm", "plain_minilm", "encode_dpr", "plain_dpr", "train_dpr"):
        assert results[step]["rc"] == 0, step
    for model in ("minilm", "dpr"):
        encoded = results[f"encode_{model}"]
        assert encoded["passages"] == 200 and encoded["per_s_steady"] > 0
        # namesake's vectors are the plain library's
        assert results[f"plain_{model}"]["compare"]["ok"]
    assert results["train_dpr"]["steps_total"] == 3 and results["train_dpr"]["questions_per_s"] > 0
    # the table comes last, one row per run
    lines = done.stdout.strip().splitlines()
    assert lines[-1].startswith("| BERT-base bi-encoder | `train_dpr.py`")
    assert sum(line.startswith("| ") for line in lines[-7:]) == 7


def test_encode_feeder_benchmark_runs_small(tmp_path):
    report = tmp_path / "feeder.json"
    arguments = ["--docs", "120", "--chunk-passages", "64", "--batch-size", "16"]
    arguments += ["--stage-passages", "100", "--workers", "0", "1", "2"]
    arguments += ["--output", str(tmp_path), "--json", str(report)]
    done = _run_script("bench_encode_feeder.py", arguments, timeout=600)
    results = json.loads(report.read_text())
    assert results["stages"]["tokenizer_strategy"] == "fast"
    assert 100 < results["stages"]["mean_tokens"] < 200  # whole 100-word passages
    passages = {run["passages"] for run in results["runs"]}
    assert len(passages) == 1 and passages.pop() > 120  # every run saw the whole corpus
    assert all(rate > 0 for rate in results["stages"]["rates"].values())
    assert results["projection"]["rate"] > 0
    assert "**" in done.stdout.strip().splitlines()[-1]  # the projection, last


def _feeder_results(full_cpu_s: float, one_chunk_cpu_s: float) -> dict:
    """What `bench_encode_feeder.main` hands `project`: a one-worker run of 360 passages and a
    run of one 64-passage chunk, with these CPU seconds in the encoding process."""
    return {
        "stages": {"rates": {"read, count": 9000.0}},
        "runs": [
            {"workers": 1, "passages": 360, "workers_cpu_s": 1.2, "process_cpu_s": full_cpu_s}
        ],
        "one_chunk_run": {"passages": 64, "process_cpu_s": one_chunk_cpu_s},
    }


def test_feeder_projection_takes_the_fixed_cost_off_only_when_the_runs_tell_it_apart():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from bench_encode_feeder import project
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    separable = project(_feeder_results(full_cpu_s=2.0, one_chunk_cpu_s=1.5), workers=14)
    assert separable["fixed_cost_taken_off"]
    assert separable["process_ceiling"] == (360 - 64) / (2.0 - 1.5)
    # timing noise on a small corpus: the one-chunk run took more CPU than the whole run
    noisy = project(_feeder_results(full_cpu_s=1.4, one_chunk_cpu_s=1.5), workers=14)
    assert not noisy["fixed_cost_taken_off"]
    assert noisy["process_ceiling"] == 360 / 1.4
    assert 0 < noisy["rate"] <= noisy["feeder_rate"]


def test_popularity_effect_benchmark_runs_tiny(tmp_path):
    done = _run_script(
        "bench_popularity_effect.py",
        ["--queries", "600", "--sets", "60", "--bootstrap-resamples", "50"],
        timeout=300,
    )
    figures = json.loads(done.stdout)
    low, high = figures["interval"]
    assert low <= figures["odds_ratio"] <= high and figures["informative_sets"] > 0


def test_amber_at_scale_benchmark_measures_every_step_tiny(tmp_path):
    """Issue 49's benchmark end to end at a tiny size: every step timed in its process, the
    scored run neither all right nor all wrong, and the 18 runs to rerank (2 first stages and
    their fusion on 6 configs) read in one pass over the corpus."""
    queries, depth = 600, 20
    report = tmp_path / "results.json"
    arguments = ["--queries", str(queries), "--sets", "60", "--pages", "20000"]
    arguments += ["--depth", str(depth), "--corpus-pages", "3000"]
    arguments += ["--output", str(tmp_path), "--out", str(report)]
    lock = {"NAMESAKE_BENCH_LOCK": str(tmp_path / "bench.lock")}  # not a real benchmark's
    done = _run_script("bench_amber_at_scale.py", arguments, timeout=600, env=lock)
    steps = json.loads(report.read_text())["steps"]
    assert set(steps) == {
        "read_trec",
        "read_kilt",
        "score",
        "fuse",
        "compare",
        "score_and_compare",
        "rerank_pages",
        "analysis",
    }
    for step, figures in steps.items():
        assert figures["seconds"] > 0, step
        assert figures["peak_rss_mb"] >= figures["peak_rss_before_mb"] > 0, step
    for read in ("read_trec", "read_kilt"):
        assert (steps[read]["queries"], steps[read]["pages"]) == (queries, queries * depth)
    assert all(0 < value < 100 for value in steps["score"]["figures"].values())
    assert len(steps["compare"]["significant_figures"]) == 5  # 5 runs against the baseline
    analysis = steps["analysis"]  # issue 50's: breakdowns, effects, a 5-system leaderboard
    assert len(analysis["odds_ratios"]) == 5 and analysis["top_group"]
    assert set(analysis["parts_seconds"]) == {
        "score_5_runs",
        "report_with_4_breakdowns_and_effect",
        "leaderboard_with_5_effects",
        "write_leaderboard_and_curve",
    }
    rerank = steps["rerank_pages"]
    assert (rerank["runs"], rerank["passes"]) == (18, 1)
    assert 0 < rerank["pages"] <= rerank["corpus_pages"] == 3000
    table = [line for line in done.stdout.splitlines() if line.startswith("| ")]
    assert len(table) == 1 + len(steps)  # the header, then a row a step
