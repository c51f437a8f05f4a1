"""Scaling of `namesake encode`: one process against N processes under `accelerate launch`.

Every process gets the same number of torch threads (``--threads``, default 1), so the
figure is the speed-up from adding processes, not threads. Each run encodes the first
``--passages`` passages of a synthetic KILT file (``bench_retrieval.py``'s generator,
cached in ``benchmarks/output/retrieval/``) into a fresh folder with the bundled MiniLM on
the CPU, and is timed from the command's start to its end (model loading, Accelerate
start-up and the final barrier included) and in steady state: the passages of the chunks
written after each process's first one, over the time from the last of those first
writes to the last write (chunk folders' modification times), which leaves start-up out.
Peak RSS is the largest process's (``wait4`` on the launcher covers its children).

Multi-process runs use ``accelerate launch --multi_gpu --num_processes N`` with
``ACCELERATE_USE_CPU=1`` (torchrun's launcher, N CPU processes over gloo; ``accelerate
launch --cpu`` alone starts a single process without MPI).

    python benchmarks/bench_encode.py --passages 3000 --processes 1 2
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--passages", type=int, default=3000, help="passages encoded per run")
    parser.add_argument("--processes", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--threads", type=int, default=1, help="torch threads per process")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--chunk-passages", type=int, default=250)
    parser.add_argument("--docs", type=int, default=20_000, help="synthetic corpus size")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", default=str(HERE / "output"))
    return parser.parse_args(argv)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(args, corpus: Path, processes: int) -> dict:
    out = Path(args.output) / "encode" / f"emb-{processes}"
    shutil.rmtree(out, ignore_errors=True)
    bin_dir = Path(sys.executable).parent
    encode = ["encode", "--corpus", str(corpus), "--out", str(out)]
    encode += ["--max-passages", str(args.passages), "--batch-size", str(args.batch_size)]
    encode += ["--chunk-passages", str(args.chunk_passages)]
    threads = str(args.threads)
    env = dict(os.environ, HF_HUB_OFFLINE="1", OMP_NUM_THREADS=threads, MKL_NUM_THREADS=threads)
    env["PYTHONPATH"] = str(ROOT)
    if processes == 1:
        command = [str(bin_dir / "namesake"), *encode]
    else:
        env.update(ACCELERATE_USE_CPU="true", CUDA_VISIBLE_DEVICES="")
        command = [str(bin_dir / "accelerate"), "launch", "--multi_gpu"]
        command += ["--num_processes", str(processes), "--num_machines", "1"]
        command += ["--mixed_precision", "no", "--dynamo_backend", "no"]
        command += ["--main_process_port", str(free_port()), "--module", "namesake", *encode]
    load = os.getloadavg()[0]
    log = out.with_suffix(".log")
    log.parent.mkdir(parents=True, exist_ok=True)
    started = time.time()
    with open(log, "w") as f:
        child = subprocess.Popen(command, env=env, stdout=f, stderr=subprocess.STDOUT)
        # wait4's usage covers the child and every descendant it waited for (the processes)
        _, status, usage = os.wait4(child.pid, 0)
    wall = time.time() - started
    if status:
        raise SystemExit(log.read_text()[-4000:])
    written = sorted(p.stat().st_mtime for p in out.glob("chunk-*"))
    encoding = written[-1] - started
    # steady state: the passages of the chunks written after each process's first one, over
    # the time from the last of those first writes to the last write (start-up left out)
    steady = (args.passages - processes * args.chunk_passages) / (
        written[-1] - written[processes - 1]
    )
    peak = usage.ru_maxrss / 1024
    return {
        "processes": processes,
        "threads_per_process": args.threads,
        "passages": args.passages,
        "wall_s": round(wall, 1),
        "passages_per_s": round(args.passages / wall, 1),
        "until_last_chunk_s": round(encoding, 1),
        "steady_passages_per_s": round(steady, 1),
        "peak_rss_mb_largest_process": round(peak),
        "load_average_before": round(load, 2),
    }


def tokenize_rate(args, corpus: Path) -> dict:
    """Passages/s that one process tokenises (what one DataLoader worker supplies)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from namesake.retrieval.dense import DEFAULT_MODEL, passage_input
    from namesake.retrieval.encode import corpus_passages
    from namesake.retrieval.encoders import load_encoder

    encoder = load_encoder(DEFAULT_MODEL, "cpu")
    texts = [
        passage_input(p.title, p.text, "[SEP]")
        for _, _, p in corpus_passages(corpus, 100, args.passages)
    ]
    started = time.perf_counter()
    for start in range(0, len(texts), args.batch_size):
        encoder.preprocess(texts[start : start + args.batch_size], task="document")
    seconds = time.perf_counter() - started
    rate = round(len(texts) / seconds)
    return {"passages": len(texts), "seconds": round(seconds, 2), "per_s": rate}


def main(argv=None) -> None:
    args = parse_args(argv)
    from bench_retrieval import ensure_kilt

    corpus = ensure_kilt(argparse.Namespace(output=args.output, docs=args.docs, seed=args.seed))
    rows = [run(args, corpus, n) for n in args.processes]
    base, steady_base = rows[0]["passages_per_s"], rows[0]["steady_passages_per_s"]
    print(
        "| processes × threads | passages | wall s | passages/s (speed-up) "
        "| steady passages/s (speed-up) | peak RSS MB | load before |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        row["speedup"] = round(row["passages_per_s"] / base, 2)
        row["steady_speedup"] = round(row["steady_passages_per_s"] / steady_base, 2)
        print(
            f"| {row['processes']} × {row['threads_per_process']} | {row['passages']:,} | "
            f"{row['wall_s']} | {row['passages_per_s']} ({row['speedup']}×) | "
            f"{row['steady_passages_per_s']} ({row['steady_speedup']}×) | "
            f"{row['peak_rss_mb_largest_process']} | {row['load_average_before']} |"
        )
    tokenizing = tokenize_rate(args, corpus)
    print(
        f"tokenising alone, one process: {tokenizing['per_s']:,} passages/s "
        f"({tokenizing['passages']:,} in {tokenizing['seconds']} s)"
    )
    results = Path(args.output) / "encode" / f"results-encode-{args.passages}.json"
    results.write_text(json.dumps({"runs": rows, "tokenizing": tokenizing}, indent=2) + "\n")
    print(f"results: {results}")


if __name__ == "__main__":
    main()
