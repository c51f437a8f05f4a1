"""Stage-1 throughput of the AmbER build against the raw decompression rate of the same dump.

The goals: stage 1 (Wikidata entities) runs at >= 80% of the speed at which one core can
merely decompress the dump, and scales with --workers (issue 2); with one worker it takes
<= 1.25x the time of `bzcat` on the same file, with two <= 0.7x (issue 10).

Every figure comes from a fresh subprocess (this script re-run with --measure), so each
peak RSS (resource.getrusage of the process and of its waited-for children, i.e. the pool
workers, or `bzcat` for the reference row) belongs to that measurement alone and no cache
of one warms up another. Each measurement runs --repeat times, in rounds (every row once,
then again), so the reference and the rows compared with it are measured side by side;
the fastest run is kept. Rates are in MB (10^6 bytes) of *decompressed* dump per second.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # make_synthetic_dumps, when run as a script
sys.path.insert(0, str(HERE.parent))  # namesake, when not installed

import make_synthetic_dumps  # noqa: E402
from measuring import cpu_seconds, measure_in_subprocess, peak_rss_mb, print_measurement  # noqa: E402


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--entities",
        type=int,
        default=30_000,
        help="items in the synthetic dump (default 30k: ~0.5 GB decompressed, ~30 s single-core)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--compression", choices=["bz2", "gz", "plain"], default="bz2")
    parser.add_argument(
        "--shape",
        choices=make_synthetic_dumps.SHAPES,
        default="realistic",
        help="of the Wikidata lines: realistic (~17.6 KB, ~7.5:1 with bz2) or compressible "
        "(~8.5 KB, ~39:1); see make_synthetic_dumps.py",
    )
    parser.add_argument(
        "--workers", default="1,2", help="comma-separated --workers values to measure"
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=os.cpu_count() or 1,
        help="rapidgzip threads for the parallel decompression figure",
    )
    parser.add_argument(
        "--output", default=str(HERE / "output"), help="cache of dumps and results (git-ignored)"
    )
    parser.add_argument("--no-build", action="store_true", help="skip the full build_amber runs")
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs of each measurement; the fastest is kept"
    )
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # internal: one measurement
    parser.add_argument("--data", help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, default=1, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


# ---------------------------------------------------------------------------------------
# Dumps
# ---------------------------------------------------------------------------------------


def ensure_dumps(args) -> Path:
    """Generates the dumps once per (entities, seed, compression, shape); meta.json marks
    completion."""
    shape = "" if args.shape == "realistic" else f"-{args.shape}"
    folder = Path(args.output) / f"dumps-{args.entities}-s{args.seed}-{args.compression}{shape}"
    if (folder / "meta.json").exists():
        print(f"Reusing {folder}", file=sys.stderr)
        return folder
    staging = folder.with_name(folder.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    print(f"Generating {args.entities:,} entities into {folder} ...", file=sys.stderr)
    make_synthetic_dumps.generate(args.entities, staging, args.seed, args.compression, args.shape)
    staging.rename(folder)
    return folder


def dump_files(folder: Path) -> dict[str, Path]:
    meta = json.loads((folder / "meta.json").read_text())
    return make_synthetic_dumps.dump_paths(folder, meta["compression"])


# ---------------------------------------------------------------------------------------
# Measurements (each runs in its own process)
# ---------------------------------------------------------------------------------------


REFERENCE_TOOLS = {"bz2": "bzcat", "gzip": "zcat", "plain": "cat"}


def measure_reference(path: Path) -> dict:
    """`bzcat` (or `zcat`, `cat`) of the file to /dev/null: the yardstick of issue 10."""
    from namesake.dumps.reading import detect_compression

    started, cpu_before = time.perf_counter(), cpu_seconds("self", "children")
    tool = REFERENCE_TOOLS[detect_compression(path)]
    subprocess.run([tool, str(path)], stdout=subprocess.DEVNULL, check=True)
    return {
        "seconds": time.perf_counter() - started,
        "cpu_seconds": cpu_seconds("self", "children") - cpu_before,
    }


def _read_all(stream, block: int = 8 << 20) -> int:
    total = 0
    while data := stream.read(block):
        total += len(data)
    return total


def measure_decompress(path: Path, how: str, threads: int) -> dict:
    """Reads the whole file and throws the bytes away: the floor for any single pass."""
    import bz2
    import gzip

    from namesake.dumps.reading import detect_compression, open_dump

    compression = detect_compression(path)
    started, cpu_before = time.perf_counter(), cpu_seconds("self", "children")
    if how == "stdlib":
        opener = {"bz2": bz2.open, "gzip": gzip.open, "plain": open}[compression]
        stream = opener(path, "rb")
    else:  # the reader the pipeline uses
        stream = open_dump(path, threads)
    with stream:
        total = _read_all(stream)
    return {
        "bytes": total,
        "seconds": time.perf_counter() - started,
        "cpu_seconds": cpu_seconds("self", "children") - cpu_before,
    }


def wanted_pids() -> frozenset[str]:
    from namesake.amber.build.reference import COLLECTIONS, PRACTICED_BY, USED_BY, load_collection

    pids = frozenset().union(*(load_collection(name).pids for name in COLLECTIONS))
    return pids | {PRACTICED_BY, USED_BY}


def measure_pageviews(files: dict[str, Path]) -> dict:
    from namesake.amber.build.pageviews import read_pageviews
    from namesake.errors import InputProblems

    views = read_pageviews(files["pageviews"], InputProblems())
    return {"rows": views.num_rows, "arrow_bytes": views.nbytes}


def measure_stage1(files: dict[str, Path], workers: int) -> dict:
    """extract_entities as build_amber calls it; page views are read before the clock starts."""
    from namesake.amber.build.entities import extract_entities
    from namesake.amber.build.pageviews import read_pageviews
    from namesake.errors import InputProblems

    problems = InputProblems()
    views = read_pageviews(files["pageviews"], problems)
    started = time.perf_counter()
    cpu_before = cpu_seconds("self", "children")
    entities = extract_entities(files["wikidata"], views, wanted_pids(), problems, workers)
    return {
        "seconds": time.perf_counter() - started,
        "cpu_seconds": cpu_seconds("self", "children") - cpu_before,
        "kept_entities": len(entities),
        "table_bytes": entities.table.nbytes,
        "relations_bytes": entities.relations.nbytes,
        "relations": entities.relations.num_rows,
        "pageviews_bytes": views.nbytes,
        "problems": problems.total(),
    }


def measure_parse_only(files: dict[str, Path]) -> dict:
    """parse_block over blocks already in memory: the parsing cost alone, one core."""
    from namesake.amber.build import wikidata
    from namesake.dumps.reading import iter_line_blocks

    blocks = list(iter_line_blocks(files["wikidata"]))
    wikidata.init_worker(wanted_pids())
    wikidata.parse_block(blocks[0])  # lazy imports inside pyarrow happen outside the clock
    started = time.perf_counter()
    cpu_before = cpu_seconds("self", "children")
    for block in blocks:
        wikidata.parse_block(block)
    return {
        "seconds": time.perf_counter() - started,
        "cpu_seconds": cpu_seconds("self", "children") - cpu_before,
    }


def measure_build(files: dict[str, Path], workers: int) -> dict:
    """The whole build_amber (all stages, Parquet and JSON-lines outputs) on the same dumps."""
    from namesake.amber.build.pipeline import build_amber

    with tempfile.TemporaryDirectory() as tmp:
        cpu_before = cpu_seconds("self", "children")
        report = build_amber(
            files["wikidata"],
            files["pageviews"],
            files["kilt"],
            Path(tmp) / "amber",
            workers=workers,
            jsonl_dir=Path(tmp) / "jsonl",
        )
        cpu = cpu_seconds("self", "children") - cpu_before
    return {
        "seconds": sum(report.seconds.values()),
        "cpu_seconds": cpu,
        "stages": report.seconds,
        "counts": report.counts,
    }


def run_measurement(args) -> None:
    """Entry point of the subprocess: prints one JSON line with the result and peak RSS."""
    files = dump_files(Path(args.data))
    started = time.perf_counter()
    kind = args.measure
    if kind == "reference":
        result = measure_reference(files["wikidata"])
    elif kind.startswith("decompress-"):
        result = measure_decompress(files["wikidata"], kind.split("-", 1)[1], args.n)
    elif kind == "pageviews":
        result = measure_pageviews(files)
    elif kind == "stage1":
        result = measure_stage1(files, args.n)
    elif kind == "parse-only":
        result = measure_parse_only(files)
    elif kind == "build":
        result = measure_build(files, args.n)
    else:
        raise SystemExit(f"unknown measurement {kind}")
    result.setdefault("seconds", time.perf_counter() - started)
    result.setdefault("cpu_seconds", cpu_seconds("self", "children"))
    result["loadavg_1min_after"] = os.getloadavg()[0]
    result["rss_self_mb"] = peak_rss_mb()
    result["rss_child_mb"] = peak_rss_mb("children")
    print_measurement(result)


def measure(args, folder: Path, kind: str, n: int = 1) -> dict:
    """Runs one measurement in a fresh interpreter and returns its result."""
    command = [sys.executable, __file__, "--measure", kind, "--data", str(folder), "--n", str(n)]
    env = {**os.environ, "TQDM_DISABLE": "1"}
    result = measure_in_subprocess(command, env)
    print(f"  {kind} n={n}: {result['seconds']:.1f}s", file=sys.stderr)
    return result


# ---------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------


def run_all(args) -> dict:
    folder = ensure_dumps(args)
    meta = json.loads((folder / "meta.json").read_text())
    workers = [int(w) for w in args.workers.split(",")]
    results: dict[str, dict] = {"meta": meta}
    rows = [("reference", 1), ("decompress-stdlib", 1), ("decompress-open_dump", 1)]
    if args.threads > 1:
        rows.append(("decompress-open_dump", args.threads))
    rows += [("parse-only", 1), ("pageviews", 1)] + [("stage1", w) for w in workers]
    if not args.no_build:
        rows += [("build", w) for w in workers]
    runs: dict[str, list[dict]] = {}
    for _ in range(max(1, args.repeat)):
        for kind, n in rows:
            runs.setdefault(f"{kind} {n}", []).append(measure(args, folder, kind, n))
    for key, measured in runs.items():
        results[key] = min(measured, key=lambda r: r["seconds"])
        results[key]["all_seconds"] = [round(r["seconds"], 2) for r in measured]
    out = Path(args.output) / f"results-{folder.name}.json"
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"Results: {out}", file=sys.stderr)
    return results


READERS = {("bz2", False): "libbz2", ("bz2", True): "rapidgzip", ("gz", False): "zlib"}
LABELS = {
    "reference": "`{tool}` (reference)",
    "decompress-stdlib": "decompress only, Python's {module} module, 1 thread",
    "decompress-open_dump": "decompress only, open_dump ({reader}), {n} thread(s)",
    "parse-only": "stage-1 parsing only (parse_block on blocks in memory), 1 core",
    "pageviews": "read_pageviews (pagecounts-ez, {pv_mb:.0f} MB)",
    "stage1": "**stage 1 extract_entities, --workers {n}**",
    "build": "full build_amber, --workers {n}",
}


def markdown(results: dict, threads: int) -> str:
    meta = results["meta"]
    mb = meta["wikidata_bytes"] / 1e6
    items = meta["counts"]["items"] + meta["counts"]["properties"]
    compression = meta["compression"]
    tool = REFERENCE_TOOLS["gzip" if compression == "gz" else compression]
    reference = results.get("reference 1")
    lines = [
        f"Dump: {meta.get('shape', 'realistic')} shape, {meta['counts']['items']:,} items "
        f"({meta['counts']['items with enwiki']:,} with enwiki), {mb:,.0f} MB decompressed, "
        f"{meta['wikidata_compressed_bytes'] / 1e6:,.0f} MB {compression} "
        f"({meta['wikidata_bytes'] / meta['wikidata_compressed_bytes']:.1f}:1), mean line "
        f"{meta['mean_entity_line_bytes'] / 1e3:.1f} KB; {os.cpu_count()} cores; fastest of "
        f"{len(reference['all_seconds']) if reference else 1} run(s).",
        "",
        f"| measurement | wall s | × `{tool}` | CPU s | MB/s (decompressed) | MB per CPU-s "
        "| entities/s | peak RSS main / largest child (MB) | load avg after | all runs (s) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for key, r in results.items():
        if key == "meta":
            continue
        kind, n = key.rsplit(" ", 1)
        label = LABELS[kind].format(
            tool=tool,
            module={"gz": "gzip", "plain": "io"}.get(compression, compression),
            reader=READERS.get((compression, int(n) > 1), "rapidgzip" if int(n) > 1 else "-"),
            n=n,
            pv_mb=meta["pageviews_bytes"] / 1e6,
        )
        per_dump = kind != "pageviews"
        rate = f"{mb / r['seconds']:.1f}" if per_dump else "-"
        per_cpu = f"{mb / r['cpu_seconds']:.1f}" if per_dump and r["cpu_seconds"] else "-"
        ents = f"{items / r['seconds']:,.0f}" if per_dump else f"{r['rows'] / r['seconds']:,.0f}"
        ratio = f"{r['seconds'] / reference['seconds']:.2f}" if reference and per_dump else "-"
        lines.append(
            f"| {label} | {r['seconds']:.1f} | {ratio} | {r['cpu_seconds']:.1f} | {rate} "
            f"| {per_cpu} | {ents} | {r['rss_self_mb']:,.0f} / {r['rss_child_mb']:,.0f} "
            f"| {r['loadavg_1min_after']:.1f} | {', '.join(map(str, r['all_seconds']))} |"
        )
    lines += ["", *summary(results, threads)]
    return "\n".join(lines)


def summary(results: dict, threads: int) -> list[str]:
    """The goal's ratio, scaling, per-stage build times and the memory extrapolation."""
    meta = results["meta"]
    mb = meta["wikidata_bytes"] / 1e6
    rate = {key: mb / r["seconds"] for key, r in results.items() if key != "meta"}
    lines = []
    reference = results.get("reference 1")
    goals = {1: 1.25, 2: 0.7}  # issue 10: stage 1 time ÷ bzcat time
    for key, r in results.items():
        if key.startswith("stage1 ") and reference:
            n = int(key.split()[1])
            goal = f" (goal ≤ {goals[n]})" if n in goals else ""
            lines.append(
                f"- Stage 1 --workers {n} ÷ reference: {r['seconds']:.1f} / "
                f"{reference['seconds']:.1f} s = **{r['seconds'] / reference['seconds']:.2f}**"
                f"{goal}."
            )
    decompress = rate["decompress-open_dump 1"]
    if "stage1 1" in results:
        s1 = results["stage1 1"]
        lines.append(
            f"- Stage 1 (--workers 1) ÷ decompression alone (open_dump, 1 thread): "
            f"{rate['stage1 1']:.1f} / {decompress:.1f} = **{rate['stage1 1'] / decompress:.2f}** "
            f"(goal ≥ 0.8); by CPU time (decompression and parsing overlap, in two threads): "
            f"{mb / s1['cpu_seconds']:.1f} MB per CPU-s = "
            f"{mb / s1['cpu_seconds'] / decompress:.2f}."
        )
        parse = rate.get("parse-only 1")
        if parse:
            lines.append(
                f"- Parsing alone runs at {parse:.1f} MB/s per core: one thread that "
                f"decompresses then parses would reach at most 1/(1/{decompress:.1f} + "
                f"1/{parse:.1f}) = {1 / (1 / decompress + 1 / parse):.1f} MB/s; two threads "
                f"that overlap them, {min(decompress, parse):.1f} MB/s."
            )
    for key in results:
        if key.startswith("stage1 ") and key != "stage1 1" and "stage1 1" in results:
            lines.append(
                f"- Scaling: {key.replace('stage1', '--workers')} runs "
                f"{rate[key] / rate['stage1 1']:.2f}x --workers 1 "
                f"(open_dump alone with {threads} threads: "
                f"{rate.get(f'decompress-open_dump {threads}', float('nan')):.1f} MB/s)."
            )
    for key, r in results.items():
        if key.startswith("build "):
            stages = ", ".join(f"{stage} {s:.1f}s" for stage, s in r["stages"].items())
            lines.append(f"- build_amber {key.split()[1]} worker(s): {stages}.")
    lines += memory_extrapolation(results)
    return lines


FULL_ITEMS, FULL_ENWIKI, FULL_PAGEVIEW_TITLES = 100_000_000, 8_000_000, 20_000_000


def memory_extrapolation(results: dict) -> list[str]:
    """Scales the Arrow state per kept entity (and per page-view title) to a full dump."""
    s1 = results.get("stage1 1")
    pv = results.get("pageviews 1")
    if not s1 or not s1["kept_entities"] or not pv:
        return []
    per_entity = (s1["table_bytes"] + s1["relations_bytes"]) / s1["kept_entities"]
    per_title = pv["arrow_bytes"] / pv["rows"]
    state = per_entity * FULL_ENWIKI
    views = per_title * FULL_PAGEVIEW_TITLES
    return [
        f"- Arrow state per kept entity: {per_entity:,.0f} B (entities "
        f"{s1['table_bytes'] / s1['kept_entities']:,.0f} B + relations "
        f"{s1['relations_bytes'] / s1['kept_entities']:,.0f} B); page views "
        f"{per_title:,.0f} B per title.",
        f"- Full dump (~{FULL_ITEMS / 1e6:.0f}M items, ~{FULL_ENWIKI / 1e6:.0f}M with enwiki, "
        f"~{FULL_PAGEVIEW_TITLES / 1e6:.0f}M viewed titles): stage-1 state ≈ "
        f"{state / 2**30:.1f} GiB + page views ≈ {views / 2**30:.1f} GiB; x2 for the copies "
        f"made while filtering/sorting ≈ {2 * (state + views) / 2**30:.1f} GiB peak "
        f"(budget 16 GiB).",
    ]


def main(argv=None) -> None:
    args = parse_args(argv)
    if args.measure:
        run_measurement(args)
        return
    results = run_all(args)
    print(markdown(results, args.threads))


if __name__ == "__main__":
    main()
