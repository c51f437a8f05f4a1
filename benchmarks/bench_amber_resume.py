"""What `amber build --work-dir` costs and what a restart costs, on a synthetic Wikidata dump.

Rows (each a fresh subprocess, so that its peak RSS is its own; the fastest of --repeat):
- stage 1 as today, and with a work folder that keeps a chunk every --restart-every bytes
  of text (the default 4 GiB would give one chunk at this size, so a small value magnifies
  the cost of keeping chunks and of following rapidgzip's bz2 blocks);
- the rerun of a build killed in its last chunk (the last chunk folder removed): chunks read
  back, the restart, and the last chunk parsed again;
- the restart alone: a `DumpReading` opened at the last restart point, to its first block;
- the search for the next bz2 stream, which a restart inside a stream does once: its speed
  over --scan-mb of random bytes gives its time on a full dump.

    python benchmarks/bench_amber_resume.py --entities 20000 --workers 1,2
"""

from __future__ import annotations

import argparse
import json
import mmap
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from measuring import measure_in_subprocess, peak_rss_mb, print_measurement

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # bench_amber_stage1, when run as a script
sys.path.insert(0, str(HERE.parent))  # namesake, when not installed

import bench_amber_stage1 as stage1_bench  # noqa: E402


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entities", type=int, default=20_000, help="default: ~0.35 GB of text")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", default="1,2", help="comma-separated --workers values")
    parser.add_argument("--restart-every", type=int, default=64 << 20, help="bytes of text")
    parser.add_argument("--scan-mb", type=int, default=1024, help="random bytes searched")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--output", default=str(HERE / "output"))
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    parser.add_argument("--work", help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, default=1, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def stage1(files, workers: int, work: str | None, restart_every: int) -> dict:
    import namesake.dumps.restart as dump_restart
    from namesake.amber.build.entities import extract_entities
    from namesake.amber.build.pageviews import read_pageviews
    from namesake.errors import InputProblems

    dump_restart.RESTART_EVERY_BYTES = restart_every
    problems = InputProblems()
    views = read_pageviews(files["pageviews"], problems)
    started = time.perf_counter()
    entities = extract_entities(
        files["wikidata"], views, stage1_bench.wanted_pids(), problems, workers, work
    )
    return {
        "seconds": time.perf_counter() - started,
        "kept_entities": len(entities),
        "reused_chunks": entities.reused_chunks,
    }


def restart_alone(files, workers: int, work: str) -> dict:
    from namesake.dumps.reading import iter_line_blocks
    from namesake.dumps.restart import DumpReading

    chunks = sorted(Path(work).glob("chunk-*"))
    start = json.loads((chunks[-2] / "chunk.json").read_text())["next"]
    started = time.perf_counter()
    reading = DumpReading(files["wikidata"], workers, start)
    blocks = iter_line_blocks(files["wikidata"], workers, reading=reading)
    next(blocks)
    seconds = time.perf_counter() - started
    blocks.close()
    return {
        "seconds": seconds,
        "restart_offset": start["offset"],
        "inside_a_stream": not start["bz2"]["opens_stream"],
    }


def scan(megabytes: int, folder: str) -> dict:
    """How fast the restart's search for a bz2 stream start runs over ``megabytes`` of random
    bytes, written to a temporary file in ``folder`` (the --output folder, made if missing)."""
    from namesake.dumps.restart import _STREAM_START

    Path(folder).mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=folder) as f:
        for _ in range(megabytes):
            f.write(os.urandom(1 << 20))
        f.flush()
        with (
            open(f.name, "rb") as data_file,
            mmap.mmap(data_file.fileno(), 0, access=mmap.ACCESS_READ) as data,
        ):
            started = time.perf_counter()
            found = _STREAM_START.search(data, 0)
            seconds = time.perf_counter() - started
    return {"seconds": seconds, "mb_per_s": megabytes * 1.048576 / seconds, "found": bool(found)}


def run_measurement(args) -> None:
    files = stage1_bench.dump_files(Path(args.data)) if args.data else None
    kind = args.measure
    if kind == "stage1":
        result = stage1(files, args.n, args.work, int(os.environ["RESTART_EVERY"]))
    elif kind == "restart":
        result = restart_alone(files, args.n, args.work)
    elif kind == "scan":
        result = scan(args.n, args.output)
    else:
        raise SystemExit(f"unknown measurement {kind}")
    result["rss_self_mb"] = peak_rss_mb()
    result["rss_child_mb"] = peak_rss_mb("children")
    print_measurement(result)


def measure(args, kind: str, n: int, folder=None, work=None) -> dict:
    command = [sys.executable, __file__, "--measure", kind, "--n", str(n)]
    command += ["--output", str(args.output)]
    command += ["--data", str(folder)] if folder else []
    command += ["--work", str(work)] if work else []
    env = {**os.environ, "TQDM_DISABLE": "1", "RESTART_EVERY": str(args.restart_every)}
    result = measure_in_subprocess(command, env)
    print(f"  {kind} n={n} work={work}: {result['seconds']:.2f}s", file=sys.stderr)
    return result


def fastest(results: list[dict]) -> dict:
    return min(results, key=lambda r: r["seconds"])


def main() -> None:
    args = parse_args()
    if args.measure:
        run_measurement(args)
        return
    dump_args = argparse.Namespace(
        entities=args.entities,
        seed=args.seed,
        compression="bz2",
        shape="realistic",
        output=args.output,
    )
    folder = stage1_bench.ensure_dumps(dump_args)
    files = stage1_bench.dump_files(folder)
    text_bytes = json.loads((folder / "meta.json").read_text()).get("wikidata_bytes")
    rows = []
    for workers in [int(w) for w in args.workers.split(",")]:
        plain, kept, rerun, restart = [], [], [], []
        for _ in range(args.repeat):
            plain.append(measure(args, "stage1", workers, folder))
            work = Path(tempfile.mkdtemp(dir=args.output, prefix="resume-work-"))
            try:
                kept.append(measure(args, "stage1", workers, folder, work))
                chunks = sorted(work.glob("chunk-*"))
                restart.append(measure(args, "restart", workers, folder, work))
                shutil.rmtree(chunks[-1])  # killed during its last chunk
                rerun.append(measure(args, "stage1", workers, folder, work))
                rerun[-1]["chunks"] = len(chunks)
            finally:
                shutil.rmtree(work, ignore_errors=True)
        rows.append(
            {
                "workers": workers,
                "as today": fastest(plain),
                "with --work-dir": fastest(kept),
                "rerun after a kill in the last chunk": fastest(rerun),
                "restart alone": fastest(restart),
            }
        )
    scanned = measure(args, "scan", args.scan_mb)
    result = {
        "entities": args.entities,
        "text_bytes": text_bytes,
        "compressed_bytes": files["wikidata"].stat().st_size,
        "restart_every": args.restart_every,
        "rows": rows,
        "next-stream search": scanned,
    }
    print(json.dumps(result, indent=2))
    print(markdown(result))


def markdown(result: dict) -> str:
    lines = [
        "| workers | row | seconds | peak RSS MB (self / largest child) | note |",
        "| --- | --- | --- | --- | --- |",
    ]
    for row in result["rows"]:
        for name in (
            "as today",
            "with --work-dir",
            "rerun after a kill in the last chunk",
            "restart alone",
        ):
            r = row[name]
            note = ""
            if name == "rerun after a kill in the last chunk":
                note = f"{r['reused_chunks']} of {r['chunks']} chunks reused"
            if name == "restart alone":
                where = "inside a bz2 stream" if r["inside_a_stream"] else "at a stream's start"
                note = f"at text byte {r['restart_offset']:,}, {where}"
            rss = f"{r['rss_self_mb']:,.0f} / {r['rss_child_mb']:,.0f}"
            lines.append(f"| {row['workers']} | {name} | {r['seconds']:.2f} | {rss} | {note} |")
    s = result["next-stream search"]
    lines.append(f"\nnext-stream search: {s['mb_per_s']:,.0f} MB/s of compressed dump")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
