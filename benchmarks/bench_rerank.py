"""Reranking throughput: pairs/s of the bundled cross-encoder (int8 ONNX
cross-encoder/ms-marco-MiniLM-L-12-v2) and of bundled ColBERT MaxSim (int8 ONNX
answerai-colbert-small-v1), on ``--threads`` CPU cores (default 2), with peak RSS.

A pair is (query, "title: opening 100 words"), as reranking reads a page: the 47 pages of
the AmbER sample's KILT file, each page's text continued with the next pages' until it has
100 words (real English, ~130-150 tokens a pair), against 24 hand-written AmbER-style
questions; a query's pages are scored in one call, as `namesake.retrieval.rerank` does.

Ways of running, each in a fresh process pinned to ``--threads`` cores (peak RSS is that
process's ``ru_maxrss``, model and tokenizer included):

- ``alone``: what `open_reranker` does for an int8 graph: every pair (every ColBERT text)
  in its own run on one thread, ``--threads`` runs side by side. Scores never depend on the
  rest of the call.
- ``batch N``: N pairs of similar length per run, on ``--threads`` intra-op threads, for
  comparison; the columns "Δ vs alone" say how far an int8 graph's per-run activation scale
  moves the scores from their values alone (max and median over the pairs, in logits for
  the cross-encoder, in MaxSim units, out of 32, for ColBERT).

    .venv/bin/python benchmarks/bench_rerank.py [--pairs 320] [--threads 2] [--batch-sizes 16 32 64]

Prints a markdown table and the full-KILT extrapolation (79k queries x 100 pages).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from measuring import cpu_seconds, measure_in_subprocess, peak_rss_mb, print_measurement

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SAMPLE_KILT = ROOT / "dataset_scripts" / "amber" / "sample" / "kilt_knowledgesource-sample.json"
PASSAGE_WORDS = 100
KILT_QUERIES, KILT_DEPTH = 79_000, 100
QUERIES = [
    "Which battle did Abe Lincoln fight in?",
    "What instrument did Abe Lincoln play?",
    "How many championships did Michael Jordan win?",
    "Which university does Michael Jordan teach at?",
    "Which position did Michael Jordan play in football?",
    "Which band is The Edge the guitarist of?",
    "Which wrestling championships did Edge win?",
    "Which band was Sting the lead singer of?",
    "Which wrestling promotion was Sting with?",
    "Which Apollo mission did Michael Collins fly?",
    "What army did Michael Collins lead intelligence for?",
    "Which club did Tom Jones play for?",
    "Who directed Chicago?",
    "Which record label released Chicago's albums?",
    "Who directed Dune?",
    "Who wrote Dune?",
    "Who directed Help!?",
    "What is the population of Fargo?",
    "Who created Fargo?",
    "Who wrote Amsterdam?",
    "Who founded Apple?",
    "Which band recorded Apple?",
    "Which county is Paris the seat of?",
    "Which buildings did John Nash design?",
]


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=320, help="pairs scored per way of running")
    parser.add_argument("--threads", type=int, default=2, help="CPU cores (and threads) used")
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[16, 32, 64])
    parser.add_argument("--one", help=argparse.SUPPRESS)  # child: "scorer:mode"
    parser.add_argument("--alone-scores", help=argparse.SUPPRESS)  # child: .npy to compare to
    return parser.parse_args(argv)


def passages() -> list[str]:
    """'title: opening 100 words' of the sample's pages, continued with the next pages'
    words where a page is shorter (the sample's pages are excerpts)."""
    pages = [json.loads(line) for line in SAMPLE_KILT.read_text(encoding="utf-8").splitlines()]
    words = [
        " ".join(t.strip() for t in p["text"][1:] if not t.startswith("Section::::")).split()
        for p in pages
    ]
    out = []
    for i, page in enumerate(pages):
        opening = []
        for j in range(len(pages)):
            opening += words[(i + j) % len(pages)]
            if len(opening) >= PASSAGE_WORDS:
                break
        out.append(f"{page['wikipedia_title']}: {' '.join(opening[:PASSAGE_WORDS])}")
    return out


def workload(n_pairs: int) -> list[tuple[str, list[str]]]:
    """(query, its pages) calls adding up to ``n_pairs`` pairs."""
    texts = passages()
    calls, left = [], n_pairs
    for query in QUERIES * (1 + n_pairs // (len(QUERIES) * len(texts))):
        if left <= 0:
            break
        calls.append((query, texts[: min(left, len(texts))]))
        left -= len(calls[-1][1])
    return calls


# --- one way of running, in a child process -----------------------------------------------


def _pin(threads: int) -> None:
    if hasattr(os, "sched_setaffinity"):
        cpus = sorted(os.sched_getaffinity(0))[:threads]
        os.sched_setaffinity(0, cpus)


def _batched_cross_encoder(scorer, threads: int, batch_size: int):
    """score(query, texts) with ``batch_size`` pairs of similar length per run."""
    from namesake.retrieval.rerankers import _session

    session, _ = _session(scorer.model_file, threads)
    scorer.session = session

    def score(query: str, texts: list[str]) -> np.ndarray:
        encodings = scorer.encode(query, texts)
        out = np.zeros(len(texts), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            out[rows] = scorer._run([encodings[i] for i in rows])
        return out

    return score


def _batched_colbert(scorer, threads: int, batch_size: int):
    """score(query, texts) with the texts run ``batch_size`` at a time."""
    from namesake.retrieval.rerankers import _arrays, _session

    session, inputs = _session(scorer.model_file, threads)
    scorer.session = session

    def score(query: str, texts: list[str]) -> np.ndarray:
        q = scorer.query_vectors(query)
        ids = [scorer.document_tokens(text) for text in texts]
        out = np.zeros(len(texts), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(ids[i]))
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            feed = _arrays([(ids[i], [0] * len(ids[i]), [1] * len(ids[i])) for i in rows], inputs)
            hidden = session.run(None, feed)[0]
            for row, i in enumerate(rows):
                keep = [k for k, token in enumerate(ids[i]) if token not in scorer.skip]
                d = hidden[row, keep]
                d = d / np.maximum(np.linalg.norm(d, axis=1, keepdims=True), 1e-12)
                out[i] = (q @ d.T).max(axis=1).sum()
        return out

    return score


def run_one(args) -> dict:
    _pin(args.threads)
    kind, mode = args.one.split(":")
    from namesake.retrieval.rerankers import open_reranker

    calls = workload(args.pairs)
    started = time.perf_counter()
    scorer = open_reranker("bundled" if kind == "cross-encoder" else "colbert")
    scorer.threads = args.threads
    load_s = time.perf_counter() - started
    score = scorer.score
    if mode != "alone":
        batched = _batched_cross_encoder if kind == "cross-encoder" else _batched_colbert
        score = batched(scorer, args.threads, int(mode))
    score(*calls[0])  # warm-up (first-run allocations), not timed
    cpu = cpu_seconds("self")
    started = time.perf_counter()
    scores = np.concatenate([score(query, texts) for query, texts in calls])
    elapsed = time.perf_counter() - started
    cpu = cpu_seconds("self") - cpu
    result = {
        "kind": kind,
        "mode": mode,
        "pairs": len(scores),
        "seconds": elapsed,
        "load_s": load_s,
        "pairs_per_s": len(scores) / elapsed,
        "cpu_ms_per_pair": 1000 * cpu / len(scores),
        "peak_rss_mib": peak_rss_mb(),
    }
    if kind == "cross-encoder" and mode == "alone":
        lengths = [len(e.ids) for q, texts in calls for e in scorer.encode(q, texts)]
        result["tokens_per_pair"] = float(np.mean(lengths))
    if args.alone_scores and Path(args.alone_scores).exists():
        delta = np.abs(scores - np.load(args.alone_scores))
        result.update(delta_max=float(delta.max()), delta_median=float(np.median(delta)))
    elif mode == "alone" and args.alone_scores:
        np.save(args.alone_scores, scores)
        result["score_sd"] = float(scores.std())
    return result


# --- the parent: every way, in its own process -------------------------------------------


def main(argv=None) -> None:
    args = parse_args(argv)
    if args.one:
        print_measurement(run_one(args))
        return
    env = dict(os.environ, HF_HUB_OFFLINE="1", OMP_NUM_THREADS=str(args.threads))
    results = []
    with tempfile.TemporaryDirectory() as scratch:
        for kind in ("cross-encoder", "colbert"):
            alone_file = str(Path(scratch) / f"{kind}.npy")
            for mode in ["alone", *map(str, args.batch_sizes)]:
                command = [sys.executable, __file__, "--one", f"{kind}:{mode}"]
                command += ["--pairs", str(args.pairs), "--threads", str(args.threads)]
                command += ["--alone-scores", alone_file]
                results.append(measure_in_subprocess(command, env, cwd=ROOT))
                print(f"  {kind} {mode}: {results[-1]['pairs_per_s']:.1f} pairs/s", flush=True)
    report(results, args)


def report(results: list[dict], args) -> None:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    tokens = next((r["tokens_per_pair"] for r in results if "tokens_per_pair" in r), 0)
    print(
        f"\n{args.pairs} pairs per row ({tokens:.0f} cross-encoder tokens a pair on average), "
        f"{args.threads} cores; load average (1 min) at the end: "
        f"{load:.1f}. CPU ms/pair is the process's CPU time per pair: what contention from "
        "other processes changes least; for pairs run alone, side by side, "
        f"{args.threads} x 1000 / (CPU ms/pair) is the rate on {args.threads} idle cores.\n"
    )
    print("| scorer | runs | pairs/s | CPU ms/pair | peak RSS (MiB) | Δ vs alone: max | median |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for r in results:
        runs = (
            f"each alone, {args.threads} side by side"
            if r["mode"] == "alone"
            else f"batches of {r['mode']}, {args.threads} threads"
        )
        scorer = "cross-encoder" if r["kind"] == "cross-encoder" else "ColBERT MaxSim"
        if r["mode"] == "alone":
            delta = ("0 (by design)", f"(score s.d. {r.get('score_sd', float('nan')):.2f})")
        else:
            delta = (f"{r.get('delta_max', float('nan')):.3f}", f"{r.get('delta_median', 0):.3f}")
        print(
            f"| {scorer} | {runs} | {r['pairs_per_s']:.1f} | {r['cpu_ms_per_pair']:.0f} | "
            f"{r['peak_rss_mib']:.0f} | {delta[0]} | {delta[1]} |"
        )
    total = KILT_QUERIES * KILT_DEPTH
    print(f"\nFull KILT reranking: {KILT_QUERIES:,} queries x {KILT_DEPTH} pages = {total:,} pairs")
    for kind in ("cross-encoder", "colbert"):
        alone = next(r for r in results if r["kind"] == kind and r["mode"] == "alone")
        idle = args.threads * 1000 / alone["cpu_ms_per_pair"]
        print(
            f"- {kind}, as open_reranker runs it: {total / alone['pairs_per_s'] / 3600:.0f} h at "
            f"the measured {alone['pairs_per_s']:.1f} pairs/s; {total / idle / 3600:.0f} h at "
            f"{idle:.1f} pairs/s on {args.threads} idle cores (estimate, from CPU time); "
            f"{total / (8 * idle) / 3600:.0f} h on 16 cores (estimate, linear in cores)"
        )


if __name__ == "__main__":
    main()
