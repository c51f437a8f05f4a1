"""SPLADE and ONNX bi-encoder throughput on 2 CPU cores (issue 35, item 3).

Command::

    python benchmarks/bench_splade.py            # about 5 minutes on 2 cores

Measures, each in a fresh subprocess pinned to 2 cores (so each peak RSS, ``ru_maxrss``,
belongs to that measurement alone):

- ``model``: a tiny random SPLADE model (2-layer, hidden-32 BERT masked language model with
  the bundled MiniLM's 30,522-entry vocabulary, SpladePooling; output bias lowered so that
  a 100-word passage has a few hundred nonzero weights and a query a few dozen, about what
  real SPLADE models give) through ``SpladeRetriever.build`` on a synthetic KILT file
  (``bench_retrieval.py``'s generator: Zipfian words, log-normal page lengths): encode
  passages/s (the build, whose index layout takes well under 1% of it), then queries/s of
  ``search`` (encoding included, k=100) and of the index search alone. No SPLADE weights
  are available offline: a real model (BERT-base) encodes far slower on a CPU; the tiny
  model's cost is dominated by the 30,522-wide output per token, which real models share.
- ``index``: the inverted index at scale without a model: random sparse vectors for
  ``--index-passages`` passages, 2 per page, and the queries: ``--doc-terms`` and
  ``--query-terms`` draws of a Zipfian (s = 1.07) dimension (the distinct ones kept: about
  100 and 25), log-normal weights. A pessimistic case: the commonest dimensions are in
  nearly every passage, so a query reads about 8% of all postings. Index layout
  (``_term_major``) and search queries/s on 1 and 2 threads, k=100.
- ``bge``: ``bundled:bge-small`` (int8 ONNX bge-small-en-v1.5, onnxruntime) encoding 100-word
  passages: as namesake runs it (every text alone, 2 side by side) and batched 32 at a time,
  with how far the batched vectors move from the lone ones (1 - cosine).

Prints a markdown table and writes ``output/results-splade.json``.
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
sys.path.insert(0, str(HERE))  # bench_retrieval, when run as a script
sys.path.insert(0, str(HERE.parent))  # namesake, when not installed

import bench_retrieval  # noqa: E402  (the synthetic KILT generator)

CORES = 2


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=200, help="synthetic KILT pages to encode")
    parser.add_argument("--queries", type=int, default=500, help="queries searched")
    parser.add_argument("--batch-size", type=int, default=16, help="SPLADE encoding batch")
    parser.add_argument("--index-passages", type=int, default=500_000, help="index: passages")
    parser.add_argument(
        "--doc-terms", type=int, default=150, help="index: Zipfian draws a passage (distinct kept)"
    )
    parser.add_argument(
        "--query-terms", type=int, default=30, help="index: Zipfian draws a query (distinct kept)"
    )
    parser.add_argument("--bge-passages", type=int, default=256, help="bge: passages encoded")
    parser.add_argument("--only", default="model,index,bge", help="measurements to run")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", default=str(HERE / "output"), help="data and results")
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # internal: one measurement
    return parser.parse_args(argv)


def pin_cores() -> None:
    """This process on the first CORES CPUs it may use, torch on as many threads."""
    cpus = sorted(os.sched_getaffinity(0))[:CORES]
    os.sched_setaffinity(0, cpus)
    import torch

    torch.set_num_threads(len(cpus))


def tiny_splade(folder: Path) -> Path:
    """The tiny random SPLADE model (see the module docstring), saved once in `folder`."""
    if (folder / "modules.json").is_file():
        return folder
    import torch
    from sentence_transformers import SparseEncoder
    from sentence_transformers.base.modules import Transformer
    from sentence_transformers.sparse_encoder.modules import SpladePooling
    from transformers import AutoTokenizer, BertConfig, BertForMaskedLM

    from namesake.bundled_models import minilm_path

    tokenizer = AutoTokenizer.from_pretrained(minilm_path())
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
    )
    model = BertForMaskedLM(config)
    with torch.no_grad():
        model.cls.predictions.bias.normal_(-0.45, 0.05)
    mlm = folder.parent / (folder.name + "-mlm")
    model.save_pretrained(mlm)
    tokenizer.save_pretrained(mlm)
    transformer = Transformer(str(mlm), transformer_task="fill-mask")
    SparseEncoder(modules=[transformer, SpladePooling("max")], device="cpu").save(str(folder))
    return folder


def queries(seed: int, n: int) -> list[str]:
    """Queries of 4-8 words from the documents' Zipfian vocabulary (as bench_retrieval's)."""
    return bench_retrieval.bm25_queries(seed, n)


# --- measurements (each in its own process) -------------------------------------------------


def measure_model(args) -> list[dict]:
    from namesake.retrieval import read_kilt_documents
    from namesake.retrieval.splade import SpladeRetriever

    model = str(tiny_splade(Path(args.output) / "splade" / "tiny-splade"))
    corpus = bench_retrieval.ensure_kilt(
        argparse.Namespace(docs=args.pages, seed=args.seed, output=args.output), stem="splade"
    )
    started = time.perf_counter()
    retriever = SpladeRetriever.build(
        read_kilt_documents(corpus), model=model, batch_size=args.batch_size, show_progress=False
    )
    build_s = time.perf_counter() - started
    settings = retriever.settings
    passages, postings = settings["num_passages"], settings["num_postings"]
    rows = [
        {
            "measurement": f"SPLADE encode + index, tiny model, {passages:,} passages of "
            f"{settings['num_documents']:,} pages (batch {args.batch_size}, "
            f"{postings / passages:.0f} nonzeros a passage)",
            "wall_s": build_s,
            "items": passages,
            "unit": "passages",
            "peak_rss_mb": peak_rss_mb(),
        }
    ]
    found = queries(args.seed, args.queries)
    retriever.search(found[:8], 100)  # warm-up: loads the cached numba kernels
    started = time.perf_counter()
    encoded = retriever.encode_queries(found)
    encode_s = time.perf_counter() - started
    retriever.n_threads = CORES
    started = time.perf_counter()
    results = retriever.search_rows(*encoded, 100)
    search_s = time.perf_counter() - started
    terms = np.diff(encoded[2]).mean()
    rows.append(
        {
            "measurement": f"SPLADE search, {len(found):,} queries of 4-8 words ({terms:.0f} "
            f"nonzeros each), k=100: query encoding + index search",
            "wall_s": encode_s + search_s,
            "items": len(found),
            "unit": "queries",
            "peak_rss_mb": peak_rss_mb(),
        }
    )
    rows.append(
        {
            "measurement": f"  of which index search alone ({CORES} threads, mean "
            f"{np.mean([len(r) for r in results]):.0f} pages returned)",
            "wall_s": search_s,
            "items": len(found),
            "unit": "queries",
            "peak_rss_mb": peak_rss_mb(),
        }
    )
    return rows


def random_rows(rng, count: int, terms: int, vocabulary: int, cdf: np.ndarray):
    """`count` random sparse vectors of about `terms` distinct Zipfian dimensions each, with
    log-normal weights, as :func:`namesake.retrieval.splade.sparse_rows` gives them."""
    draws = np.searchsorted(cdf, rng.random((count, terms)))
    draws = np.minimum(draws, vocabulary - 1)
    draws.sort(axis=1)
    keep = np.ones_like(draws, dtype=bool)
    keep[:, 1:] = draws[:, 1:] != draws[:, :-1]  # distinct dimensions
    dims = draws[keep].astype(np.int32)
    offsets = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(keep.sum(axis=1), out=offsets[1:])
    weights = rng.lognormal(-0.5, 0.6, size=len(dims)).astype(np.float32)
    return dims, weights, offsets


def measure_index(args) -> list[dict]:
    from namesake.retrieval.splade import SpladeRetriever, _term_major

    vocabulary = 30522
    rng = np.random.default_rng(args.seed)
    zipf = 1.0 / np.arange(1, vocabulary + 1) ** 1.07
    cdf = np.cumsum(zipf / zipf.sum())
    n = args.index_passages
    parts = []
    for start in range(0, n, 50_000):  # as the build gathers chunks
        count = min(50_000, n - start)
        dims, weights, offsets = random_rows(rng, count, args.doc_terms, vocabulary, cdf)
        rows = np.repeat(np.arange(start, start + count, dtype=np.int32), np.diff(offsets))
        parts.append((rows, dims, weights))
    postings = sum(len(p[0]) for p in parts)
    started = time.perf_counter()
    matrix = _term_major(parts, vocabulary)
    layout_s = time.perf_counter() - started
    pages = (n + 1) // 2
    owners = (np.arange(n) // 2).astype(np.int32)
    settings = {"model": "none", "num_passages": n, "num_documents": pages}
    retriever = SpladeRetriever(matrix, owners, [str(i) for i in range(pages)], settings)
    rows = [
        {
            "measurement": f"SPLADE index layout, {n:,} random passages x {postings / n:.0f} "
            f"nonzeros ({postings:,} postings, {postings * 8 / 1e6:,.0f} MB)",
            "wall_s": layout_s,
            "items": n,
            "unit": "passages",
            "peak_rss_mb": peak_rss_mb(),
        }
    ]
    encoded = random_rows(rng, args.queries, args.query_terms, vocabulary, cdf)
    dims, weights, offsets = encoded
    retriever.search_rows(dims[: offsets[8]], weights[: offsets[8]], offsets[:9], 100)  # warm-up
    results = None
    for threads in (1, 2):
        retriever.n_threads = threads
        started = time.perf_counter()
        found = retriever.search_rows(*encoded, 100)
        search_s = time.perf_counter() - started
        assert results is None or found == results, "thread counts disagree"
        results = found
        lengths = np.diff(matrix[2])
        spans = zip(offsets[:-1], offsets[1:], strict=True)
        touched = np.mean([lengths[dims[a:b]].sum() for a, b in spans])
        rows.append(
            {
                "measurement": f"SPLADE index search, {args.queries:,} random queries x "
                f"{len(encoded[0]) / args.queries:.0f} nonzeros (mean {touched:,.0f} postings "
                f"read), k=100, {threads} thread{'s' if threads > 1 else ''}",
                "wall_s": search_s,
                "items": args.queries,
                "unit": "queries",
                "peak_rss_mb": peak_rss_mb(),
            }
        )
    return rows


def measure_bge(args) -> list[dict]:
    from namesake.bundled_models import BGE_SMALL, bge_small_path
    from namesake.retrieval.encoders import load_encoder
    from namesake.retrieval.onnx_encoder import OnnxEncoder

    generator = bench_retrieval.TextGenerator(args.seed + 3)
    n = args.bge_passages
    titles = generator.titles(n)
    texts = [
        f"{t} [SEP] {x}" for t, x in zip(titles, generator.texts(np.full(n, 100)), strict=True)
    ]
    alone = load_encoder(BGE_SMALL, None)
    tokens = np.mean([len(ids) for ids in alone.tokenizer(texts[:100])["input_ids"]])
    alone.encode_document(texts[:4])  # warm-up
    started = time.perf_counter()
    lone = alone.encode_document(texts, batch_size=32, normalize_embeddings=True)
    alone_s = time.perf_counter() - started
    batched = OnnxEncoder(bge_small_path(), pooling="cls", alone=False)
    batched.encode_document(texts[:4])
    started = time.perf_counter()
    together = batched.encode_document(texts, batch_size=32, normalize_embeddings=True)
    batched_s = time.perf_counter() - started
    distance = 1 - (lone * together).sum(axis=1)
    return [
        {
            "measurement": f"bge-small int8 ONNX encode, {n} 100-word passages (~{tokens:.0f} "
            f"tokens), every text alone, {alone.workers} side by side (namesake's way)",
            "wall_s": alone_s,
            "items": n,
            "unit": "passages",
            "peak_rss_mb": peak_rss_mb(),
        },
        {
            "measurement": f"bge-small int8 ONNX encode, batches of 32, {batched.workers} "
            f"threads (1 - cosine to the lone vectors: mean {distance.mean():.1e}, max "
            f"{distance.max():.1e})",
            "wall_s": batched_s,
            "items": n,
            "unit": "passages",
            "peak_rss_mb": peak_rss_mb(),
        },
    ]


MEASURES = {"model": measure_model, "index": measure_index, "bge": measure_bge}


def run_child(args, name: str) -> list[dict]:
    command = [sys.executable, __file__, "--measure", name]
    for option in (
        "pages",
        "queries",
        "batch_size",
        "index_passages",
        "doc_terms",
        "query_terms",
        "bge_passages",
        "seed",
        "output",
    ):
        command += [f"--{option.replace('_', '-')}", str(getattr(args, option))]
    return measure_in_subprocess(command)


def table(rows: list[dict]) -> str:
    lines = ["| measurement | wall s | rate | peak RSS (MB) |", "|---|---:|---:|---:|"]
    for row in rows:
        rate = row["items"] / row["wall_s"]
        lines.append(
            f"| {row['measurement']} | {row['wall_s']:.2f} | {rate:,.1f} {row['unit']}/s "
            f"| {row['peak_rss_mb']:,.0f} |"
        )
    return "\n".join(lines)


def main(argv=None) -> None:
    args = parse_args(argv)
    if args.measure:
        pin_cores()
        print_measurement(MEASURES[args.measure](args))
        return
    rows = []
    for name in args.only.split(","):
        rows += run_child(args, name)
        print("\n".join(table(rows).splitlines()[-1:]), file=sys.stderr)
    print(f"\n{CORES} of {os.cpu_count()} CPUs, load average after: {os.getloadavg()[0]:.1f}\n")
    print(table(rows))
    out = Path(args.output) / "results-splade.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"args": vars(args), "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
