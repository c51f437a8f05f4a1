"""Speed of `namesake fuse` at AmbER's full size: two runs of 80,000 queries x 100 pages (a
lexical and a dense run over a 5.9M-page id space, overlapping as such runs do), fused by RRF
and by CombSUM, each step timed: reading both TREC runs, reading them into columnar runs and
fusing them (`fuse_runs`), writing the fused run. Peak RSS is the process's.

    .venv/bin/python benchmarks/bench_fusion.py [--queries 80000] [--depth 100] [--read-only]

``--read-only``: only the reading, in CPU seconds too (the TREC reader's own cost, which a
busy machine's wall clock blurs).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
from measuring import peak_rss_mb

from namesake.amber.evaluation.fusion import fuse_runs
from namesake.runs import Run


def write_run(path: Path, rng, queries: int, depth: int, shared: np.ndarray) -> None:
    """A TREC run: per query, half its pages from a pool it shares with the other run."""
    with open(path, "w") as f:
        for q in range(queries):
            own = rng.integers(0, 5_900_000, depth)
            pages = np.where(rng.random(depth) < 0.5, shared[q], own)
            pages = list(dict.fromkeys(pages.tolist()))
            scores = np.sort(rng.random(len(pages)))[::-1] * 30
            f.writelines(
                f"q{q} Q0 {page} {rank} {score!r} run\n"
                for rank, (page, score) in enumerate(zip(pages, scores.tolist(), strict=True), 1)
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=80_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--read-only", action="store_true", help="time the reading alone")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    shared = rng.integers(0, 5_900_000, (args.queries, args.depth))
    timings = {}
    with tempfile.TemporaryDirectory() as folder:
        runs = [Path(folder, "lexical.trec"), Path(folder, "dense.trec")]
        for path in runs:
            write_run(path, rng, args.queries, args.depth, shared)
        start, cpu = time.perf_counter(), time.process_time()
        for path in runs:
            Run.read(path)
        timings["reading both runs"] = time.perf_counter() - start
        timings["reading both runs (CPU)"] = time.process_time() - cpu
        for method in () if args.read_only else ("rrf", "combsum"):
            start = time.perf_counter()
            fused = fuse_runs(runs, method, top_k=args.depth)
            timings[f"{method}: read + fuse"] = time.perf_counter() - start
        if not args.read_only:
            start = time.perf_counter()
            fused.write(Path(folder, "fused.trec"), "trec", "fused")
            timings["writing the fused run"] = time.perf_counter() - start
    peak = peak_rss_mb()
    print(f"{args.queries} queries x {args.depth} pages, 2 runs")
    print("| step | seconds |\n|---|---:|")
    for step, seconds in timings.items():
        print(f"| {step} | {seconds:.1f} |")
    print(f"peak RSS {peak:.0f} MiB")


if __name__ == "__main__":
    main()
