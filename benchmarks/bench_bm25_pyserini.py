"""Pyserini (Lucene BM25) beside namesake's BM25 on the same synthetic KILT corpus.

Pyserini is what an IR user would reach for instead of bm25s, so this puts figures next to
``bench_retrieval.py --only bm25`` on its corpus (1M documents) and its 1,000 queries
(``bench_retrieval.bm25_queries``): index time and peak RSS, queries/s of
``LuceneSearcher.batch_search(k=100)``, and the mean overlap of the top-10 document ids
with namesake's for the same queries.

Runs in its own virtual environment (``make bench-pyserini`` creates it): Pyserini 0.22.1
with Debian's Java 17, torch pinned to the CPU wheel (Pyserini imports torch, faiss and more
eagerly). The project's environment stays free of them.

- Collection: Pyserini's JsonCollection, one JSON line per document, ``contents`` = title +
  " " + text, exactly the text namesake indexes (KILT text paragraphs after the title,
  whitespace collapsed, as ``namesake.retrieval.corpus`` reads them).
- Index: ``python -m pyserini.index.lucene --collection JsonCollection --threads 2`` and
  nothing stored besides the postings (no positions, document vectors or raw text).
- Search: BM25 with Lucene/Anserini's defaults (k1 = 0.9, b = 0.4) and with bm25s'
  (k1 = 1.5, b = 0.75). Anserini analyses text with Lucene's English analyzer (its 33
  stopwords, Porter stemmer) where namesake uses bm25s' longer English stopword list and
  the Porter 2 stemmer, so top-10s differ a little even with the same k1 and b.

namesake's top 10 come from ``bench_retrieval.py``'s BM25 measurement (its
``bm25-top10-*.json``); when that file is missing this runs the measurement with the
project's Python (``--namesake-python``). Each measurement runs in a fresh subprocess so its
peak RSS (``ru_maxrss``; for indexing, of the Java child) is its own.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import msgspec
from measuring import measure_in_subprocess, peak_rss_mb, print_measurement

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bench_retrieval  # noqa: E402  (the corpus and the queries)

# Pyserini 0.22.1's Anserini jar runs on Java 17 (Debian's openjdk-17-jdk-headless)
os.environ.setdefault("JAVA_HOME", "/usr/lib/jvm/java-17-openjdk-amd64")
SETTINGS = {"Anserini default k1=0.9 b=0.4": (0.9, 0.4), "bm25s' k1=1.5 b=0.75": (1.5, 0.75)}


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=2, help="indexing and search threads")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", default=str(HERE / "output"), help="data and results")
    parser.add_argument(
        "--namesake-python",
        default=str(HERE.parent / ".venv" / "bin" / "python"),
        help="the project's Python, to run bench_retrieval's BM25 measurement when needed",
    )
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # internal: one measurement
    return parser.parse_args(argv)


def folder(args) -> Path:
    return Path(args.output) / "retrieval" / f"pyserini-{args.docs}-s{args.seed}"


class _Page(msgspec.Struct):
    wikipedia_id: str | int
    wikipedia_title: str
    text: list[str]


def write_collection(kilt: Path, collection: Path) -> int:
    """JsonCollection of the KILT file: the text namesake's read_kilt_documents gives."""
    collection.mkdir(parents=True, exist_ok=True)
    decoder = msgspec.json.Decoder(_Page)
    encoder = msgspec.json.Encoder()
    n = 0
    with open(kilt, "rb") as source, open(collection / "docs.jsonl", "wb") as out:
        for line in source:
            page = decoder.decode(line)
            paragraphs = page.text
            if paragraphs and paragraphs[0].strip() == page.wikipedia_title.strip():
                paragraphs = paragraphs[1:]
            text = " ".join(" ".join(paragraphs).split())
            record = {"id": str(page.wikipedia_id), "contents": f"{page.wikipedia_title} {text}"}
            out.write(encoder.encode(record) + b"\n")
            n += 1
    return n


def measure_index(args) -> dict:
    """Converts the corpus, then indexes it in a child (the JVM lives in that child)."""
    kilt = bench_retrieval.ensure_kilt(bench_retrieval.parse_args(common(args)))
    base = folder(args)
    shutil.rmtree(base, ignore_errors=True)
    started = time.perf_counter()
    n_docs = write_collection(kilt, base / "collection")
    convert_s = time.perf_counter() - started
    command = [
        sys.executable, "-m", "pyserini.index.lucene",
        "--collection", "JsonCollection",
        "--input", str(base / "collection"),
        "--index", str(base / "index"),
        "--generator", "DefaultLuceneDocumentGenerator",
        "--threads", str(args.threads),
    ]  # fmt: skip
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    index_s = time.perf_counter() - started
    size = sum(f.stat().st_size for f in (base / "index").iterdir())
    return {
        "docs": n_docs,
        "convert_s": convert_s,
        "index_s": index_s,
        "index_peak_rss_mb": peak_rss_mb("children"),
        "index_mb": size / 1e6,
    }


def measure_search(args) -> dict:
    from pyserini.search.lucene import LuceneSearcher

    queries = bench_retrieval.bm25_queries(args.seed, args.queries)
    qids = [str(i) for i in range(len(queries))]
    namesake = json.loads(top10_path(args).read_text())
    assert namesake["queries"] == queries, "bench_retrieval's queries changed: rerun it"
    searcher = LuceneSearcher(str(folder(args) / "index"))
    rows = {}
    for name, (k1, b) in SETTINGS.items():
        searcher.set_bm25(k1, b)
        # an untimed pass first, so the JVM has compiled the search path for these settings
        searcher.batch_search(queries, qids, k=100, threads=args.threads)
        started = time.perf_counter()
        hits = searcher.batch_search(queries, qids, k=100, threads=args.threads)
        search_s = time.perf_counter() - started
        overlaps = [
            len({h.docid for h in hits[qid][:10]} & set(theirs)) / 10
            for qid, theirs in zip(qids, namesake["top10"], strict=True)
        ]
        rows[name] = {
            "search_s": search_s,
            "queries_per_s": len(queries) / search_s,
            "mean_hits": sum(len(hits[q]) for q in qids) / len(qids),
            "top10_overlap": sum(overlaps) / len(overlaps),
        }
    rows["search_peak_rss_mb"] = peak_rss_mb()
    return rows


def common(args) -> list[str]:
    """bench_retrieval's options for the same corpus and queries."""
    return [
        "--docs", str(args.docs), "--queries", str(args.queries),
        "--seed", str(args.seed), "--output", args.output,
    ]  # fmt: skip


def top10_path(args) -> Path:
    return bench_retrieval.bm25_top10_path(bench_retrieval.parse_args(common(args)))


def run_child(args, name: str) -> dict:
    command = [sys.executable, __file__, "--measure", name, "--threads", str(args.threads)]
    command += common(args)
    return measure_in_subprocess(command)


def main(argv=None) -> None:
    args = parse_args(argv)
    if args.measure:
        measures = {"index": measure_index, "search": measure_search}
        print_measurement(measures[args.measure](args))
        return
    if not top10_path(args).exists():
        print("namesake's top 10 missing: running bench_retrieval --only bm25", file=sys.stderr)
        script = str(HERE / "bench_retrieval.py")
        command = [args.namesake_python, script, "--only", "bm25", *common(args)]
        subprocess.run(command, check=True)
    index = run_child(args, "index")
    search = run_child(args, "search")
    load = os.getloadavg()[0]
    print(f"\n{os.cpu_count()} CPUs, load average after: {load:.1f}\n")
    print("| Pyserini 0.22.1 (Lucene BM25) | wall s | rate | peak RSS (MB) | top-10 overlap |")
    print("|---|---:|---:|---:|---:|")
    print(
        f"| JsonCollection conversion, {index['docs']:,} docs | {index['convert_s']:.1f} "
        f"| {index['docs'] / index['convert_s']:,.0f} docs/s | - | - |"
    )
    print(
        f"| index, {args.threads} threads ({index['index_mb']:,.0f} MB on disk) "
        f"| {index['index_s']:.1f} | {index['docs'] / index['index_s']:,.0f} docs/s "
        f"| {index['index_peak_rss_mb']:,.0f} | - |"
    )
    for name in SETTINGS:
        row = search[name]
        print(
            f"| batch_search {args.queries:,} queries, k=100, {args.threads} threads, {name} "
            f"(mean {row['mean_hits']:.0f} hits) | {row['search_s']:.1f} "
            f"| {row['queries_per_s']:,.0f} queries/s | {search['search_peak_rss_mb']:,.0f} "
            f"| {row['top10_overlap']:.3f} |"
        )
    out = Path(args.output) / f"results-bm25-pyserini-{args.docs}.json"
    out.write_text(json.dumps({"args": vars(args), "index": index, "search": search}, indent=2))


if __name__ == "__main__":
    main()
