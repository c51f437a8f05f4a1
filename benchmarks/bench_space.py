"""The Space's response times and memory: the page store at corpus scale, and each tab's
computation on the sample artifacts.

- ``store``: writes a synthetic page store of ``--pages`` pages (KILT-like: ids, 2-3 word
  titles, log-normal lengths with a median of 70 words), then times opening it and looking
  up the 10 pages a search shows (each lookup scans the memory-mapped id column).
- ``tabs``: builds the bundled AmbER sample, loads it as the app does (indexes built on
  first start), then times a search (BM25 + dense, k = 5) for every example query, opening
  every set (both retrievers, top 100, per query), an attention heatmap and an answer score.

Each part runs in a fresh subprocess (this script with --measure), so its peak RSS
(``ru_maxrss``) is its own. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from measuring import measure_in_subprocess, peak_rss_mb, print_measurement

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # namesake, when not installed
SAMPLE = HERE.parent / "dataset_scripts" / "amber" / "sample"


def synthetic_pages(count: int, seed: int = 0):
    from namesake.retrieval.corpus import Document

    rng = np.random.default_rng(seed)
    vocabulary = np.array([f"w{i}" for i in range(50_000)])
    for start in range(0, count, 10_000):
        n = min(10_000, count - start)
        lengths = np.clip(rng.lognormal(np.log(70), 0.6, n).astype(int), 5, 400)
        words = vocabulary[rng.zipf(1.2, lengths.sum()) % len(vocabulary)]
        offset = 0
        for i, length in enumerate(lengths):
            text = " ".join(words[offset : offset + length])
            offset += length
            yield Document(str(start + i), f"Title {start + i} {text[:8]}", text)


def measure_store(pages: int) -> dict:
    from namesake.space.documents import DocumentStore, write_documents

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder, "documents.arrow")
        start = time.perf_counter()
        write_documents(synthetic_pages(pages), path)
        write_s = time.perf_counter() - start
        start = time.perf_counter()
        store = DocumentStore(path)
        open_s = time.perf_counter() - start
        rng = np.random.default_rng(1)
        lookups = []
        for _ in range(20):
            ids = [str(i) for i in rng.integers(0, pages, 10)]
            start = time.perf_counter()
            found = store.get(ids)
            lookups.append(time.perf_counter() - start)
            assert len(found) == len(set(ids))
        return {
            "part": "store",
            "pages": pages,
            "file_mb": path.stat().st_size / 2**20,
            "write_pages_per_s": pages / write_s,
            "open_ms": open_s * 1000,
            "lookup_ms": statistics.median(lookups) * 1000,
            "peak_rss_mb": peak_rss_mb(),
        }


def timed(calls) -> float:
    """Median milliseconds of the calls (each a zero-argument function)."""
    times = []
    for call in calls:
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def measure_tabs() -> dict:
    from namesake.amber.build.pipeline import build_amber
    from namesake.space.artifacts import load_artifacts
    from namesake.space.explorer import Explorer

    kilt = SAMPLE / "kilt_knowledgesource-sample.json"
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        # the first start builds its indexes in namesake's cache: here, not in ~/.cache
        os.environ["NAMESAKE_CACHE"] = str(folder / "cache")
        build_amber(
            SAMPLE / "wikidata-sample-all.json.bz2",
            SAMPLE / "pagecounts-sample-views-ge-5-totals.bz2",
            kilt,
            folder / "amber",
        )
        start = time.perf_counter()
        explorer = Explorer(load_artifacts(folder, corpus=kilt, report=lambda _: None))
        first_start_s = time.perf_counter() - start
        examples = explorer.examples()
        explorer.search(examples[0])  # loads the dense model
        search_ms = timed([lambda q=q: explorer.search(q, 5) for q in examples])
        open_set_ms = timed([lambda n=n: explorer.open_set(n) for n in explorer.set_names()])
        title, text = explorer.first_passage(explorer.passage_choices(1)[0][1])
        explorer.attention(title, text)  # loads the encoder and spaCy
        attention_ms = timed([lambda: explorer.attention(title, text)] * 5)
        explorer.score_answer("New York City", "NYC")  # loads the scorer
        answer_ms = timed([lambda: explorer.score_answer("New York City", "NYC")] * 5)
        return {
            "part": "tabs",
            "first_start_s": first_start_s,
            "searches": len(examples),
            "search_ms": search_ms,
            "sets": len(explorer.set_names()),
            "open_set_ms": open_set_ms,
            "attention_ms": attention_ms,
            "answer_ms": answer_ms,
            "peak_rss_mb": peak_rss_mb(),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=1_000_000, help="page store size")
    parser.add_argument("--measure", choices=["store", "tabs"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure == "store":
        print_measurement(measure_store(args.pages))
        return
    if args.measure == "tabs":
        print_measurement(measure_tabs())
        return
    results = {}
    for part in ("store", "tabs"):
        command = [sys.executable, __file__, "--measure", part, "--pages", str(args.pages)]
        env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")
        results[part] = measure_in_subprocess(command, env)
    store, tabs = results["store"], results["tabs"]
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}\n")
    print(
        "| page store | pages | file MB | write pages/s | open ms | 10-page lookup ms "
        "| peak RSS MB |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    print(
        f"| synthetic | {store['pages']:,} | {store['file_mb']:,.0f} | "
        f"{store['write_pages_per_s']:,.0f} | {store['open_ms']:.1f} | "
        f"{store['lookup_ms']:.1f} | {store['peak_rss_mb']:,.0f} |\n"
    )
    print(
        "| sample artifacts | first start s | search ms | open set ms | attention ms | "
        "answer ms | peak RSS MB |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {tabs['searches']} searches, {tabs['sets']} sets | {tabs['first_start_s']:.1f} | "
        f"{tabs['search_ms']:.1f} | {tabs['open_set_ms']:.1f} | {tabs['attention_ms']:.1f} | "
        f"{tabs['answer_ms']:.1f} | {tabs['peak_rss_mb']:,.0f} |"
    )


if __name__ == "__main__":
    main()
