"""TF-IDF (DrQA) at scale: build time, peak RSS, index size and queries/s, extrapolated to KILT.

Corpus and queries are ``make_synthetic_amber_kilt.py``'s (run it first; its defaults give a
1M-page KILT file with 24,528 AmbER queries): ``--docs`` first pages of the corpus (the AmbER
entity pages, ~680 words, come first, then Zipfian distractors of median 70 words). Each
measurement runs in a fresh subprocess, so each peak RSS (``ru_maxrss``) is its own:

1. ``read``: ``read_kilt_documents`` alone, counting pages, words and bytes of text;
2. ``build``: ``TfidfRetriever.build`` (``--workers`` hashing processes) and ``save``;
3. ``search``: ``TfidfRetriever.load`` (memory-mapped) and ``search`` of every query of the
   six AmbER configs, k = 100, with the share of queries whose gold page is in the top 100.
   Peak RSS counts the mapped index pages it touched (page cache, reclaimable), so the
   anonymous memory (``RssAnon`` at the end) is given too.

Run it alone on the machine:

    flock /tmp/namesake-bench.lock .venv/bin/python benchmarks/bench_tfidf.py --docs 1000000

It prints a markdown table and writes ``benchmarks/output/results-tfidf-<docs>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from itertools import islice
from pathlib import Path

from measuring import measure_in_subprocess, peak_rss_mb, print_measurement

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # namesake, when not installed

from namesake.outputs import atomic_file  # noqa: E402

AMBER = HERE / "output" / "amber_compare"
CONFIGS = [f"{c}_{t}" for c in ("human", "nonhuman") for t in ("fc", "qa", "sf")]


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", default=str(AMBER / "kilt-210000-1000000-s0.jsonl"))
    parser.add_argument("--dataset", default=str(AMBER / "amber-210000-s0"), help="AmbER folder")
    parser.add_argument("--docs", type=int, default=1_000_000, help="first pages of the corpus")
    parser.add_argument("--workers", type=int, default=1, help="hashing processes")
    parser.add_argument("--shard-documents", type=int, default=None, help="default: the module's")
    parser.add_argument("--k", type=int, default=100)
    parser.add_argument("--output", default=str(HERE / "output" / "tfidf"))
    parser.add_argument("--step", choices=["read", "build", "search"], help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def memory() -> dict:
    """Peak RSS (this process; its largest hashing worker), and the current resident
    anonymous / file-backed memory, in MB."""
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    current = {
        f"{name.lower()}_mb": int(status[name].split()[0]) / 1024 for name in ("RssAnon", "RssFile")
    }
    return {
        "peak_rss_mb": peak_rss_mb(),
        "largest_child_peak_rss_mb": peak_rss_mb("children"),
        **current,
    }


def index_path(args) -> Path:
    return Path(args.output) / f"index-{args.docs}"


def step_read(args) -> dict:
    from namesake.retrieval import read_kilt_documents

    started = time.perf_counter()
    pages = words = text_bytes = 0
    for document in islice(read_kilt_documents(args.corpus), args.docs):
        pages += 1
        words += len(document.text.split()) + len(document.title.split())
        text_bytes += len(document.text) + len(document.title) + 1
    return {
        "wall_s": time.perf_counter() - started,
        "pages": pages,
        "words": words,
        "text_bytes": text_bytes,
    }


def step_build(args) -> dict:
    from namesake.retrieval import TfidfRetriever, read_kilt_documents

    options = {"workers": args.workers, "temp_dir": args.output}
    if args.shard_documents:
        options["shard_documents"] = args.shard_documents
    started = time.perf_counter()
    retriever = TfidfRetriever.build(islice(read_kilt_documents(args.corpus), args.docs), **options)
    built = time.perf_counter()
    retriever.save(index_path(args))
    saved = time.perf_counter()
    folder = index_path(args)
    postings = (
        sum(os.path.getsize(path) for path in folder.glob("shard-*.indices.npy")) // 4
    )  # int32 document rows, one per posting (the .npy header is ~128 bytes)
    return {
        "build_s": built - started,
        "save_s": saved - built,
        "documents": len(retriever),
        "shards": len(retriever.shard_sizes),
        "postings": postings,
        "index_bytes": sum(path.stat().st_size for path in folder.iterdir()),
        **memory(),
    }


def load_queries(dataset: str) -> tuple[list[str], list[set[str]]]:
    import pyarrow.parquet as pq

    texts, gold = [], []
    for config in CONFIGS:
        for path in sorted((Path(dataset) / config).glob("*.parquet")):
            table = pq.read_table(path, columns=["input", "gold_wikipedia_ids"]).to_pydict()
            texts.extend(table["input"])
            gold.extend(map(set, table["gold_wikipedia_ids"]))
    return texts, gold


def step_search(args) -> dict:
    from namesake.retrieval import TfidfRetriever

    queries, gold = load_queries(args.dataset)
    started = time.perf_counter()
    retriever = TfidfRetriever.load(index_path(args))
    loaded = time.perf_counter()
    rankings = retriever.search(queries, args.k)
    searched = time.perf_counter()
    hits = [
        next((rank for rank, (doc, _) in enumerate(ranking) if doc in pages), None)
        for ranking, pages in zip(rankings, gold, strict=True)
    ]
    return {
        "load_s": loaded - started,
        "search_s": searched - loaded,
        "queries": len(queries),
        "queries_per_s": len(queries) / (searched - loaded),
        "gold_at_1": sum(hit == 0 for hit in hits) / len(hits),
        f"gold_at_{args.k}": sum(hit is not None for hit in hits) / len(hits),
        **memory(),
    }


def run_step(step: str, argv: list[str]) -> dict:
    """Runs one step in a fresh interpreter; returns what it printed last (JSON)."""
    started = time.perf_counter()
    result = measure_in_subprocess([sys.executable, __file__, *argv, "--step", step])
    result["process_s"] = time.perf_counter() - started
    result["loadavg_after"] = os.getloadavg()
    print(f"{step}: {result}", file=sys.stderr)
    return result


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.step:
        print_measurement(globals()[f"step_{args.step}"](args))
        return
    for path in (args.corpus, args.dataset):
        if not Path(path).exists():
            sys.exit(f"{path} not found: run benchmarks/make_synthetic_amber_kilt.py first")
    Path(args.output).mkdir(parents=True, exist_ok=True)
    results = {"docs": args.docs, "workers": args.workers}
    for step in ("read", "build", "search"):
        results[step] = run_step(step, argv)
    shutil.rmtree(index_path(args))
    read, build, search = results["read"], results["build"], results["search"]
    print(f"\n{read['pages']:,} pages, {read['words']:,} words, {read['text_bytes'] / 1e6:,.0f} MB")
    print("| measurement | wall s | rate | peak RSS (MB) |\n|---|---:|---:|---:|")
    print(f"| read_kilt_documents only | {read['wall_s']:.1f} | - | - |")
    print(
        f"| TfidfRetriever.build, {build['documents']:,} docs, {args.workers} worker(s), "
        f"{build['shards']} shard(s) | {build['build_s']:.1f} | "
        f"{build['documents'] / build['build_s']:,.0f} docs/s | {build['peak_rss_mb']:,.0f} |"
    )
    print(f"| save (hard links) | {build['save_s']:.1f} | - | - |")
    print(
        f"| search, {search['queries']:,} AmbER queries, k={args.k} | {search['search_s']:.1f} | "
        f"{search['queries_per_s']:,.0f} queries/s | {search['peak_rss_mb']:,.0f} "
        f"(anonymous {search['rssanon_mb']:,.0f}) |"
    )
    print(
        f"\npostings {build['postings']:,} ({build['postings'] / build['documents']:.0f} a page, "
        f"{build['postings'] / read['words']:.2f} a word); index {build['index_bytes'] / 1e9:.2f} "
        f"GB; gold@1 {search['gold_at_1']:.3f}, gold@{args.k} {search[f'gold_at_{args.k}']:.3f}"
    )
    out = HERE / "output" / f"results-tfidf-{args.docs}.json"
    with atomic_file(out, "w") as f:
        json.dump(results, f, indent=2)
    print(f"Wrote {out}")


if __name__ == "__main__":
    main()
