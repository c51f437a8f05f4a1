"""The GPU benchmark and the encode-feeder benchmark run end to end on a CPU, small, so
that neither rots between the sessions that have a GPU (issue 36)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run_script(script: str, arguments: list[str], timeout: int):
    """The benchmark script, offline, from the checkout; its output shown if it fails."""
    done = subprocess.run(
        [sys.executable, f"benchmarks/{script}", *arguments],
        cwd=ROOT,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
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
