"""WES link mining throughput against the raw bz2 decompression rate of the same dump.

The goal: reading pages and extracting their links runs at >= 80% of
the speed at which one core merely decompresses the dump, and scales with workers on a
multistream dump.

The dump is synthetic but made of real pages: the 206-page enwiki excerpt in tests/data,
repeated with new titles and ids, cut into bz2 streams of 100 pages like the real
`pages-articles-multistream` dumps. Every figure comes from a fresh subprocess (this script
re-run with --measure), so each peak RSS belongs to that measurement alone. Rates are in
MB (10^6 bytes) of *compressed* dump per second; the decompressed rate is also printed.
"""

from __future__ import annotations

import argparse
import bz2
import json
import os
import re
import subprocess
import sys
import time
from multiprocessing import get_context
from pathlib import Path

from measuring import cpu_seconds, measure_in_subprocess, peak_rss_mb, print_measurement

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # namesake, when not installed

# Imported before any clock starts.
from namesake.dumps.reading import open_dump  # noqa: E402
from namesake.wikipedia.dump import iter_pages, iter_pages_between, stream_ranges  # noqa: E402
from namesake.wikipedia.links import extract_links  # noqa: E402

SAMPLE = HERE.parent / "tests" / "data" / "enwiki-sample-pages-articles.xml.bz2"
PAGES_PER_STREAM = 100


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--copies", type=int, default=25, help="copies of the sample (25: ~150 MB of XML)"
    )
    parser.add_argument("--workers", type=int, default=2, help="processes for the ranges row")
    parser.add_argument(
        "--output", default=str(HERE / "output"), help="cache of the dump and results (git-ignored)"
    )
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # internal: one measurement
    parser.add_argument("--dump", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def build_dump(copies: int, path: Path) -> Path:
    """Writes the synthetic multistream dump once (streams compressed on every core)."""
    if path.exists():
        return path
    xml = bz2.decompress(SAMPLE.read_bytes())
    first, closing = xml.index(b"  <page>"), xml.rindex(b"</mediawiki>")
    pages = [b"  <page>" + chunk for chunk in xml[first:closing].split(b"  <page>")[1:]]
    renamed = []
    for copy in range(copies):
        for number, page in enumerate(pages):
            page = re.sub(
                rb"<title>([^<]*)</title>", rb"<title>\1 %d</title>" % copy, page, count=1
            )
            page_id = copy * len(pages) + number + 1
            renamed.append(re.sub(rb"<id>\d+</id>", b"<id>%d</id>" % page_id, page, count=1))
    groups = [
        b"".join(renamed[i : i + PAGES_PER_STREAM])
        for i in range(0, len(renamed), PAGES_PER_STREAM)
    ]
    with get_context("fork").Pool() as pool:
        streams = pool.map(bz2.compress, [xml[:first], *groups, xml[closing:]], chunksize=8)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    partial.write_bytes(b"".join(streams))
    partial.rename(path)
    return path


def decompress_only(path: Path) -> int:
    total = 0
    with open_dump(path, threads=1) as stream:
        while chunk := stream.read(1 << 20):
            total += len(chunk)
    return total


def pages_only(path: Path) -> int:
    return sum(1 for _ in iter_pages(path, threads=1))


def pages_and_links(path: Path, threads: int = 1) -> int:
    return sum(len(extract_links(page.text)) for page in iter_pages(path, threads=threads))


def _range_links(task: tuple[str, int, int]) -> int:
    path, start, end = task
    return sum(len(extract_links(page.text)) for page in iter_pages_between(path, start, end))


def ranges_and_links(path: Path, workers: int) -> int:
    # More ranges than workers, so that a slow range does not leave a core idle at the end.
    ranges = stream_ranges(path, 8 * workers)
    with get_context("fork").Pool(workers) as pool:
        return sum(pool.imap_unordered(_range_links, [(str(path), *r) for r in ranges]))


MEASUREMENTS = {
    "decompress": ("bz2 decompression only (rapidgzip, 1 thread)", decompress_only),
    "pages": ("iter_pages only, 1 core", pages_only),
    "links": ("iter_pages + extract_links, 1 core", pages_and_links),
    "links-threads": (
        "iter_pages + extract_links, decompression in a 2nd thread",
        lambda path: pages_and_links(path, threads=2),
    ),
}


def run_measurement(name: str, dump: Path, workers: int) -> dict:
    """Entry point of the subprocess: one measurement, with CPU time and peak RSS."""
    if name == "ranges":
        label, function = f"{workers} worker processes over stream ranges", ranges_and_links
        args = (dump, workers)
    else:
        (label, function), args = MEASUREMENTS[name], (dump,)
    started, cpu_started = time.perf_counter(), cpu_seconds("self", "children")
    count = function(*args)
    wall, cpu = time.perf_counter() - started, cpu_seconds("self", "children") - cpu_started
    return {
        "name": name,
        "label": label,
        "count": count,
        "wall_s": wall,
        "cpu_s": cpu,
        "rss_self_mb": peak_rss_mb(),
        "rss_child_mb": peak_rss_mb("children"),
    }


def main(argv=None) -> None:
    args = parse_args(argv)
    dump = Path(args.output) / f"wes-multistream-{args.copies}.xml.bz2"
    if args.measure == "build":
        build_dump(args.copies, dump)
        return
    if args.measure:
        print_measurement(run_measurement(args.measure, Path(args.dump), args.workers))
        return
    # Each step runs in its own process: Linux keeps a parent's peak RSS across fork + exec,
    # so this one must stay small for the children's figures to be their own.
    run = [sys.executable, __file__]
    build = ["--measure", "build", "--copies", str(args.copies), "--output", args.output]
    subprocess.run([*run, *build], check=True, capture_output=True)
    compressed_mb = dump.stat().st_size / 1e6
    rows = []
    for name in [*MEASUREMENTS, "ranges"]:
        measurement = ["--measure", name, "--dump", str(dump), "--workers", str(args.workers)]
        rows.append(measure_in_subprocess([*run, *measurement]))
    base, base_cpu = rows[0]["wall_s"], rows[0]["cpu_s"]
    xml_mb = rows[0]["count"] / 1e6  # what decompression counts: bytes out
    print(f"dump: {dump} ({compressed_mb:.1f} MB bz2, {xml_mb:.1f} MB XML)\n")
    print(
        "| measurement | wall s | CPU s | MB/s bz2 | MB/s XML | vs decompression "
        "| bz2 MB per CPU-s | vs decompression, CPU | peak RSS main / child (MB) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        print(
            f"| {row['label']} | {row['wall_s']:.1f} | {row['cpu_s']:.1f} "
            f"| {compressed_mb / row['wall_s']:.2f} | {xml_mb / row['wall_s']:.1f} "
            f"| {base / row['wall_s']:.0%} "
            f"| {compressed_mb / row['cpu_s']:.2f} | {base_cpu / row['cpu_s']:.0%} "
            f"| {row['rss_self_mb']:.0f} / {row['rss_child_mb']:.0f} |"
        )
    links = next(row["count"] for row in rows if row["name"] == "links")
    print(f"\nlinks extracted: {links:,}; load average after: {os.getloadavg()[0]:.1f}")
    results = Path(args.output) / "results-wes-mining.json"
    results.write_text(json.dumps({"dump": str(dump), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
