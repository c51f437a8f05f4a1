"""Speed of the statistics behind `namesake evaluate` and `namesake compare-runs` at AmbER's
full size: 80,000 queries in 7,330 AmbER sets (the paper's Table 4: 2,093 AmbER-H + 5,237
AmbER-N sets, 79,000 queries) and two systems.

Goal (issue 34): the bootstrap and the paired test on 80,000 queries x 2 systems in under
30 s on 2 cores. Timed, each on synthetic per-query outcomes with set-level difficulty:

- ``sums``: the per-set sums of every figure (`set_sums`), for both systems;
- ``intervals``: each system's 95% bootstrap intervals (1,000 resamples of the sets), as
  `evaluate` gives every figure of its report;
- ``difference``: the bootstrap interval of B - A on every figure (1,000 resamples);
- ``paired test``: the clustered paired randomization test (10,000 sign flips) and Holm;
- ``per-query test``: the paired randomization test with every query its own unit (10,000
  sign flips) on the five IR measures, the extra column of `compare-runs`;
- ``IR measures``: for scale, computing the IR measures of one run of 80,000 rankings of 100
  pages (`ranking_measures`, over the run's columns), which `evaluate` does once per run; with
  ir-measures (trec_eval's code, one dictionary per query) it took 17-20 s and 2.2 GB.

Peak RSS is the process's (``ru_maxrss``).

    .venv/bin/python benchmarks/bench_amber_statistics.py [--queries 80000] [--sets 7330]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pyarrow as pa
from measuring import peak_rss_mb

from namesake.amber.evaluation.ir_metrics import IR_MEASURES, PageLists, ranking_measures
from namesake.amber.evaluation.query_scores import QueryScores, set_sums
from namesake.amber.evaluation.statistics import (
    ALPHA,
    bootstrap_intervals,
    difference,
    holm,
    paired_randomization_test,
    per_query_randomization_test,
)
from namesake.runs import Run


def synthetic(rng, queries: int, sets: int, effect: float):
    """Two systems' per-query scores: queries spread over sets, one head per set."""
    set_index = np.sort(rng.integers(0, sets, queries))
    set_index = np.unique(set_index, return_inverse=True)[1]
    first = np.r_[True, set_index[1:] != set_index[:-1]]
    difficulty = rng.normal(0, 1.5, sets)[set_index]
    runs = []
    for lift in (0.0, effect):
        p = 1 / (1 + np.exp(-(difficulty + lift)))
        values = {f"accuracy@{k}": 100.0 * (rng.random(queries) < p ** (1 / k)) for k in (1, 20)}
        values["entity_confusion"] = 100.0 * (rng.random(queries) < 1 - p)
        for name in IR_MEASURES:
            values[name] = 100.0 * np.clip(p + rng.normal(0, 0.2, queries), 0, 1)
        runs.append(QueryScores(set_index, first, values, [1, 20]))
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=80_000)
    parser.add_argument("--sets", type=int, default=7_330)
    parser.add_argument("--bootstrap-resamples", type=int, default=1000)
    parser.add_argument("--test-resamples", type=int, default=10_000)
    parser.add_argument("--ir-pages", type=int, default=100, help="ranked pages per query")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    a, b = synthetic(rng, args.queries, args.sets, effect=0.05)
    timings = {}
    start = time.perf_counter()
    sums = [set_sums(a), set_sums(b)]
    timings["sums"] = time.perf_counter() - start
    start = time.perf_counter()
    for s in sums:
        bootstrap_intervals(s, resamples=args.bootstrap_resamples)
    timings["intervals (both runs)"] = time.perf_counter() - start
    start = time.perf_counter()
    bootstrap_intervals(difference(*sums), resamples=args.bootstrap_resamples)
    timings["difference"] = time.perf_counter() - start
    start = time.perf_counter()
    pvalues = paired_randomization_test(*sums, resamples=args.test_resamples)
    adjusted = holm(pvalues)
    timings["paired test + Holm"] = time.perf_counter() - start
    total = sum(timings.values())

    start = time.perf_counter()
    per_query_randomization_test(  # as `compare-runs` runs it: IR measures, all queries
        *({measure: run.values[measure] for measure in IR_MEASURES} for run in (a, b)),
        resamples=args.test_resamples,
    )
    timings["per-query test (IR measures)"] = time.perf_counter() - start

    gold = PageLists.from_lists([i] for i in range(args.queries))
    pages = rng.integers(0, 6_000_000, (args.queries, args.ir_pages)).astype(str)
    for i in range(0, args.queries, 3):
        pages[i][i % args.ir_pages] = str(i)
    run = Run(
        [f"q{i}" for i in range(args.queries)],
        np.arange(0, pages.size + 1, args.ir_pages),
        pa.array(pages.ravel().tolist(), type=pa.string()),
        np.full(pages.size, np.nan),
    )
    del pages
    start = time.perf_counter()
    ranking_measures(run, gold)
    timings["IR measures, one run"] = time.perf_counter() - start

    peak = peak_rss_mb()
    print(
        f"{args.queries} queries in {len(sums[0].numerators)} sets, 2 systems, "
        f"{len(pvalues)} figures; {sum(p < ALPHA for p in adjusted.values())} significant"
    )
    print("| step | seconds |\n|---|---:|")
    for step, seconds in timings.items():
        print(f"| {step} | {seconds:.2f} |")
    print(f"| **bootstrap + paired test (goal < 30 s)** | **{total:.2f}** |")
    print(f"peak RSS {peak:.0f} MiB")


if __name__ == "__main__":
    main()
