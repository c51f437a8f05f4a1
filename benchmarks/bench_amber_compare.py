"""`namesake amber compare` at scale: BM25 and dense (IVF-PQ) on a 1M-document KILT corpus
with >= 20k AmbER queries, end to end; wall time and peak RSS of every step.

Data: ``make_synthetic_amber_kilt.py`` with the same ``--entities/--docs/--seed/--output``
(a real AmbER build on synthetic dumps, its KILT pages padded with distractors to
``--docs``; run it first, or let this script run it). Steps, each a fresh subprocess run
under ``/usr/bin/time`` (wall time, peak RSS of the process and its children); the run
holds ``/tmp/namesake-bench.lock`` from the first step to the last, so no other benchmark
shares the 2 cores meanwhile:

1. ``bm25 index``: ``open_retriever("bm25", corpus, <index-dir>/bm25)``, the code path
   ``amber compare`` takes when the index is missing (read, tokenise, index, save).
2. ``bm25 compare``: ``namesake amber compare --retriever bm25 --index-dir <index-dir>``,
   the index now present: load, search every query of the 6 configs (k = 100), score.
3. ``dense encode``: ``namesake encode --max-passages N``, the first N passages of the
   corpus on CPU. The corpus starts with the AmbER entity pages, and N defaults to the
   passages they take, so every gold page is encoded; the distractors are not.
4. ``dense index``: ``namesake index --index-type ivfpq`` on those embeddings.
5. ``dense compare``: ``namesake amber compare --retriever dense --index-dir <index-dir>``.

A step's index or embeddings are deleted before it runs, so each is measured from scratch.
Prints a markdown table (and each run's accuracy table) and writes
``results-amber-compare-<entities>-<docs>-s<seed>.json`` to ``--output``, merged with
the rows of earlier runs (``--only dense`` adds the dense rows to a BM25 run's).

    .venv/bin/python benchmarks/bench_amber_compare.py                   # 210k entities, 1M docs
    .venv/bin/python benchmarks/bench_amber_compare.py --only dense --dense-passages 20000
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import make_synthetic_amber_kilt

from namesake.outputs import atomic_file

HERE = Path(__file__).resolve().parent
RETRIEVERS = ("bm25", "dense")


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entities", type=int, default=210_000, help="synthetic items")
    parser.add_argument("--docs", type=int, default=1_000_000, help="pages of the KILT corpus")
    parser.add_argument(
        "--dense-passages",
        type=int,
        help="passages to encode (default: those of the AmbER entity pages)",
    )
    parser.add_argument("--only", default="bm25,dense", help="retrievers to run")
    parser.add_argument(
        "--namesake",
        default=str(Path(sys.executable).with_name("namesake")),
        help="the namesake command to measure (default: this venv's)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--output", default=str(HERE / "output" / "amber_compare"), help="data and results"
    )
    return parser.parse_args(argv)


def dataset(args) -> dict:
    """make_synthetic_amber_kilt's counts (it generates the data unless already there)."""
    data_args = ["--entities", str(args.entities), "--docs", str(args.docs)]
    data_args += ["--seed", str(args.seed), "--output", args.output]
    where = make_synthetic_amber_kilt.paths(make_synthetic_amber_kilt.parse_args(data_args))
    if not where["counts"].exists():
        make_synthetic_amber_kilt.main(data_args)
    return json.loads(where["counts"].read_text())


def measure(step: str, command: list[str], log: Path, items: int, unit: str) -> dict:
    """Runs `command` under /usr/bin/time; its output goes to `log`."""
    print(f"[{step}] {' '.join(command)}", file=sys.stderr)
    with tempfile.NamedTemporaryFile("r") as usage, open(log, "w") as out:
        load_before = os.getloadavg()
        timed = ["/usr/bin/time", "-o", usage.name, "-f", "%e %M %U %S", *command]
        code = subprocess.run(timed, stdout=out, stderr=subprocess.STDOUT).returncode
        load_after = os.getloadavg()
        wall, rss_kb, user, system = (float(x) for x in usage.read().split()[-4:])
    if code:
        raise SystemExit(f"[{step}] failed with exit code {code}; see {log}")
    row = {
        "step": step,
        "command": " ".join(command),
        "wall_s": wall,
        "peak_rss_mb": round(rss_kb / 1024),
        "cpu_s": round(user + system, 1),
        "items": items,
        "unit": unit,
        "per_s": round(items / wall, 1),
        "loadavg_1min_before_after": [round(load_before[0], 2), round(load_after[0], 2)],
        "log": str(log),
    }
    print(f"[{step}] {wall:.1f} s, peak RSS {row['peak_rss_mb']:,} MB", file=sys.stderr)
    return row


def dense_commands_available(namesake: str) -> bool:
    return all(
        subprocess.run([namesake, name, "--help"], capture_output=True).returncode == 0
        for name in ("encode", "index")
    )


def run(args, data: dict) -> list[dict]:
    out = Path(args.output)
    tag = f"{args.entities}-{args.docs}-s{args.seed}"
    corpus, amber = data["paths"]["corpus"], data["paths"]["amber"]
    index_dir, runs, logs = out / f"index-{tag}", out / f"compare-{tag}", out / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    queries = data["queries"]["total"]

    def compare(retriever: str) -> dict:
        command = [args.namesake, "amber", "compare", "--corpus", corpus, "--dataset", amber]
        command += ["--out", str(runs / retriever), "--retriever", retriever]
        command += ["--index-dir", str(index_dir)]
        return measure(
            f"{retriever} compare",
            command,
            logs / f"{tag}-{retriever}-compare.log",
            queries,
            "queries",
        )

    rows = []
    only = args.only.split(",")
    if "bm25" in only:
        shutil.rmtree(index_dir / "bm25", ignore_errors=True)
        build = "import sys; from namesake.amber.evaluation.retrieve import open_retriever; "
        build += "open_retriever('bm25', sys.argv[1], sys.argv[2])"
        command = [sys.executable, "-c", build, corpus, str(index_dir / "bm25")]
        documents = data["documents"]["total"]
        rows.append(
            measure("bm25 index", command, logs / f"{tag}-bm25-index.log", documents, "docs")
        )
        rows.append(compare("bm25"))
    if "dense" in only:
        passages = args.dense_passages or data["entity_page_passages"]
        embeddings = out / f"embeddings-{tag}-{passages}"
        encode = [args.namesake, "encode", "--corpus", corpus, "--out", str(embeddings)]
        encode += ["--max-passages", str(passages)]
        index = [args.namesake, "index", "--embeddings", str(embeddings), "--index-type", "ivfpq"]
        index += ["--out", str(index_dir / "dense")]
        if not dense_commands_available(args.namesake):
            print(
                "\ndense: PENDING, `namesake encode` / `namesake index` are not there yet; "
                "then run:\n  " + " ".join(encode) + "\n  " + " ".join(index) + "\n  "
                f"{sys.executable} {__file__} --only dense",
                file=sys.stderr,
            )
        else:
            shutil.rmtree(embeddings, ignore_errors=True)
            shutil.rmtree(index_dir / "dense", ignore_errors=True)
            rows.append(
                measure(
                    "dense encode", encode, logs / f"{tag}-dense-encode.log", passages, "passages"
                )
            )
            rows.append(
                measure("dense index", index, logs / f"{tag}-dense-index.log", passages, "passages")
            )
            rows.append(compare("dense"))
    for retriever in RETRIEVERS:
        results = runs / retriever / "results.md"
        if retriever in only and results.exists():
            print(results.read_text())
    return rows


def table(rows: list[dict]) -> str:
    lines = [
        "| step | wall s | peak RSS (MB) | CPU s | items | rate | load avg (1 min) before/after |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for row in rows:
        before, after = row["loadavg_1min_before_after"]
        lines.append(
            f"| {row['step']} | {row['wall_s']:.1f} | {row['peak_rss_mb']:,} | {row['cpu_s']:.0f} "
            f"| {row['items']:,} {row['unit']} | {row['per_s']:,.1f} {row['unit']}/s "
            f"| {before:.2f} / {after:.2f} |"
        )
    return "\n".join(lines)


def main(argv=None) -> None:
    args = parse_args(argv)
    data = dataset(args)
    with make_synthetic_amber_kilt.bench_lock():  # all steps: none interleaves with others
        rows = run(args, data)
    path = (
        Path(args.output) / f"results-amber-compare-{args.entities}-{args.docs}-s{args.seed}.json"
    )
    results = json.loads(path.read_text()) if path.exists() else {"steps": {}}
    results["data"] = data
    results["steps"].update({row["step"]: row for row in rows})
    with atomic_file(path, "w") as f:
        json.dump(results, f, indent=2)
    print(f"{data['queries']['total']:,} queries, {data['documents']['total']:,} documents")
    print(table(list(results["steps"].values())))
    print(f"Results: {path}")


if __name__ == "__main__":
    main()
