"""Speed of the `entity_confusion` metric on AmbER-sized inputs .

Goal: 80,000 queries x 100 retrieved ids in under 2 s. Each measurement runs in a fresh
subprocess so that its peak RSS is its own:

- ``bare``: ``compute_entity_confusion`` imported from the module file (no evaluate);
- ``evaluate``: ``evaluate.load("metrics/entity_confusion").compute(predictions=..., ...)``;
- ``evaluate-arrow``: ``add_batch`` then ``compute()``, evaluate's standard path through its
  Arrow cache file (what ``compute`` does for metrics without a shortcut), for comparison.

Two kinds of synthetic rankings over a 1M-page corpus of numeric KILT ids:

- ``documents``: 100 distinct page ids per query (a document-level retriever), 1% "None";
- ``passages``: 100 passages collapsing to ~40 pages (a passage-level retriever: repeats).

Gold pages are found for ~70% of queries (near the top more often), confusers (the other
pages of the set) are retrieved as often. Each query's strings are fresh objects, as when read
from JSON, so the first compute pays for hashing them ("cold"); later runs reuse the cached
hashes ("warm", best of the repeats).

    .venv/bin/python benchmarks/bench_entity_confusion.py [--queries 80000] [--docs 100]
        [--repeat 3] [--modes bare,evaluate,evaluate-arrow] [--rankings documents,passages]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
from measuring import measure_in_subprocess, peak_rss_mb, print_measurement

ROOT = Path(__file__).resolve().parent.parent
MODULE_DIR = ROOT / "metrics" / "entity_confusion"
CORPUS = 1_000_000
K_VALUES = [1, 20]


def make_inputs(n_queries: int, n_docs: int, rankings: str, seed: int = 0):
    """Synthetic AmbER-like predictions and references; sets of 4 queries (1 head, 3 tail)."""
    rng = np.random.default_rng(seed)
    predictions, references = [], []
    per_set = 4
    for s in range(0, n_queries, per_set):
        size = min(per_set, n_queries - s)
        pages = rng.choice(CORPUS, size=(size, 2), replace=False).tolist()
        for e in range(size):
            gold = [str(p) for p in pages[e]]
            confusers = [str(p) for o in range(size) if o != e for p in pages[o]]
            if rankings == "passages":
                docs = rng.integers(0, CORPUS, size=max(n_docs * 2 // 5, 1))
                ids = docs[rng.integers(0, len(docs), size=n_docs)].tolist()
            else:
                ids = rng.integers(0, CORPUS, size=n_docs).tolist()
            ranking = list(map(str, ids))
            if rng.random() < 0.7:  # gold found, more often near the top
                ranking[min(int(rng.exponential(8)), n_docs - 1)] = gold[rng.integers(2)]
            if confusers and rng.random() < 0.5:
                ranking[min(int(rng.exponential(12)), n_docs - 1)] = confusers[
                    rng.integers(len(confusers))
                ]
            for i in np.flatnonzero(rng.random(n_docs) < 0.01).tolist():
                ranking[i] = "None"
            predictions.append(ranking)
            references.append(
                {
                    "gold_ids": gold,
                    "confuser_ids": confusers,
                    "is_head": e == 0,
                    "set_id": f"set{s // per_set}",
                }
            )
    return predictions, references


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def worker(mode: str, rankings: str, n_queries: int, n_docs: int, repeat: int) -> dict:
    if mode == "bare":
        from namesake.metrics import metric_module

        module = metric_module("entity_confusion")

        def run():
            return module.compute_entity_confusion(predictions, references, k_values=K_VALUES)

    else:
        import evaluate

        metric = evaluate.load(str(MODULE_DIR))
        if mode == "evaluate":

            def run():
                return metric.compute(
                    predictions=predictions, references=references, k_values=K_VALUES
                )

        elif mode == "evaluate-arrow":

            def run():
                metric.add_batch(predictions=predictions, references=references)
                return metric.compute(k_values=K_VALUES)

        else:
            raise SystemExit(f"unknown mode {mode}")
    libraries_rss = rss_mb()
    predictions, references = make_inputs(n_queries, n_docs, rankings)
    before_rss = rss_mb()
    times, cpu = [], []
    result = None
    for _ in range(max(repeat, 1)):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = run()
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return {
        "mode": mode,
        "rankings": rankings,
        "queries": n_queries,
        "docs": n_docs,
        "cold_s": times[0],
        "warm_s": min(times[1:]) if len(times) > 1 else None,
        "cold_cpu_s": cpu[0],
        "libraries_rss_mb": libraries_rss,
        "before_rss_mb": before_rss,
        "peak_rss_mb": peak_rss_mb(),
        "result": result,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=80_000)
    parser.add_argument("--docs", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--modes", default="bare,evaluate,evaluate-arrow")
    parser.add_argument("--rankings", default="documents,passages")
    parser.add_argument("--worker", nargs=2, metavar=("MODE", "RANKINGS"), help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.worker:
        out = worker(*args.worker, args.queries, args.docs, args.repeat)
        print_measurement(out)
        return

    rows = []
    for rankings in args.rankings.split(","):
        for mode in args.modes.split(","):
            cmd = [sys.executable, __file__, "--worker", mode, rankings]
            cmd += ["--queries", str(args.queries), "--docs", str(args.docs)]
            cmd += ["--repeat", str(args.repeat)]
            row = measure_in_subprocess(cmd)
            rows.append(row)
            print(
                f"{rankings:9} {mode:14} cold {row['cold_s']:.3f} s  warm "
                f"{row['warm_s'] if row['warm_s'] is None else round(row['warm_s'], 3)} s",
                file=sys.stderr,
            )
    for rankings in args.rankings.split(","):
        same = {json.dumps(r["result"], sort_keys=True) for r in rows if r["rankings"] == rankings}
        assert len(same) == 1, f"the paths disagree on the same {rankings} inputs"

    print(
        f"\n{args.queries:,} queries x {args.docs} ids, k_values={K_VALUES}, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}\n"
    )
    print(
        "| rankings | path | cold s | cold CPU s | warm s | queries/s (cold) | ids/s (cold) | "
        "RSS libraries MB | + inputs MB | peak RSS MB | peak - inputs MB |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        warm = "-" if r["warm_s"] is None else f"{r['warm_s']:.2f}"
        print(
            f"| {r['rankings']} | {r['mode']} | {r['cold_s']:.2f} | {r['cold_cpu_s']:.2f} | "
            f"{warm} | "
            f"{r['queries'] / r['cold_s']:,.0f} | {r['queries'] * r['docs'] / r['cold_s']:,.0f} | "
            f"{r['libraries_rss_mb']:.0f} | {r['before_rss_mb']:.0f} | {r['peak_rss_mb']:.0f} | "
            f"{r['peak_rss_mb'] - r['before_rss_mb']:.0f} |"
        )
    for r in rows:
        if r["mode"] == "bare":
            scores = {k: round(v, 2) for k, v in r["result"].items()}
            print(f"\n{r['rankings']} scores: {scores}")


if __name__ == "__main__":
    main()
