"""BM25's build memory at growing corpus sizes: the default (a 2 GB budget: chunks and the
score matrix go to disk once the chunks pass a quarter of it) against the build that holds
everything (today's, before the budget).

Synthetic pages with KILT's shape: log-normal lengths (median 300 words, mean about 500; KILT
has 5.9M pages and ~4 billion words), two-to-four-word titles, words drawn from a Zipfian
vocabulary of 300,000 made-up words, generated as they are indexed (no corpus file).
Each build runs in a fresh process (this script with --measure), which samples its own
RssAnon (anonymous memory: not the page cache that holds the memory-mapped matrix) every
50 ms and reports the peak, the wall time, and the (document, term) pairs indexed.

    .venv/bin/python benchmarks/bench_bm25_memory.py --docs 500000 1000000 2000000 \
        --held-docs 1000000
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
from measuring import measure_in_subprocess, print_measurement

VOCABULARY = 300_000
MEDIAN_WORDS = 300


def pages(count: int, seed: int = 0):
    from namesake.retrieval.corpus import Document

    rng = np.random.default_rng(seed)
    words = np.array([f"w{i:x}q" for i in range(VOCABULARY)])
    for start in range(0, count, 10_000):
        n = min(10_000, count - start)
        lengths = np.clip(rng.lognormal(np.log(MEDIAN_WORDS), 1.0, n), 10, 20_000).astype(int)
        drawn = words[(rng.zipf(1.1, lengths.sum() + 3 * n) - 1) % VOCABULARY]
        offset = 0
        for i, length in enumerate(lengths.tolist()):
            title = " ".join(drawn[offset : offset + 3])
            text = " ".join(drawn[offset + 3 : offset + 3 + length])
            offset += 3 + length
            yield Document(str(start + i), title, text)


def rss_anon_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def measure(docs: int, budget: int) -> dict:
    from namesake.retrieval.bm25 import BM25Retriever

    peak = [rss_anon_mb()]
    done = threading.Event()

    def sample():
        while not done.wait(0.05):
            peak[0] = max(peak[0], rss_anon_mb())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        retriever = BM25Retriever.build(
            pages(docs), show_progress=False, memory_budget=budget, spill_dir=folder
        )
        seconds = time.perf_counter() - start
        pairs = int(retriever.model.scores["indptr"][-1])
        mapped = isinstance(retriever.model.scores["data"], np.memmap)
    done.set()
    sampler.join()
    return {
        "docs": docs,
        "budget": budget,
        "seconds": seconds,
        "docs_per_second": docs / seconds,
        "pairs": pairs,
        "peak_rss_anon_mb": max(peak[0], rss_anon_mb()),
        "matrix_on_disk": mapped,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, nargs="+", default=[500_000, 1_000_000, 2_000_000])
    parser.add_argument("--held-docs", type=int, nargs="*", default=[1_000_000])
    parser.add_argument("--budget", type=float, default=2.0, help="GB (default 2)")
    parser.add_argument("--measure", nargs=2, type=int, metavar=("DOCS", "BUDGET"))
    args = parser.parse_args()
    if args.measure:
        print_measurement(measure(*args.measure))
        return
    budget = int(args.budget * 1024**3)
    runs = [(docs, budget, "budget") for docs in args.docs]
    runs += [(docs, 1024**5, "held in memory") for docs in args.held_docs]
    print("| build | pages | (doc, term) pairs | wall s | pages/s | peak RssAnon MB | matrix |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for docs, size, label in runs:
        command = [sys.executable, __file__, "--measure", str(docs), str(size)]
        row = measure_in_subprocess(command)
        name = f"{args.budget:g} GB budget" if label == "budget" else label
        where = "memory-mapped" if row["matrix_on_disk"] else "in memory"
        print(
            f"| {name} | {docs:,} | {row['pairs']:,} | {row['seconds']:.0f} "
            f"| {row['docs_per_second']:,.0f} | {row['peak_rss_anon_mb']:,.0f} | {where} |",
            flush=True,
        )


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    main()
