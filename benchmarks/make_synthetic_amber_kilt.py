"""Synthetic AmbER at scale: a real AmbER build with >= 20k queries, in a 1M-document KILT.

For `namesake amber compare` at the size of a real evaluation (see bench_amber_compare.py).
Steps, each skipped when its output is already there:

1. Synthetic dumps (``make_synthetic_dumps.generate``, gzip, realistic shape) of
   ``--entities`` items: Wikidata JSON, pagecounts-ez and the KILT pages of the same items.
   ~11 queries come out per 100 entities (30k entities: 3,292 queries), so the default
   210,000 gives ~23k.
2. ``namesake amber build`` on them: the AmbER dataset folder (the 12 Hub configs).
3. Distractor pages: the synthetic KILT of ``bench_retrieval.ensure_kilt`` (Zipfian text,
   median 70 words; cached and shared with bench_retrieval.py).
4. The knowledge source: ``--docs`` pages, in this order:
   the pages of the AmbER entities (every page named in a ``*_entities`` config or as a
   query's gold page), the build's other KILT pages, then distractors with their
   ``wikipedia_id`` shifted by 10^9 (the build's ids are below that, so none collide).
   The AmbER entity pages come first so that the first N passages of the corpus (what
   ``namesake encode --max-passages N`` encodes) cover every gold page; the number of
   passages they take is recorded as ``entity_page_passages``.
5. ``amber-kilt-<entities>-<docs>-s<seed>.json``: queries per config, pages per part,
   file sizes and step times.

Everything is streamed and written atomically (temp file, then rename); the heavy steps
hold ``/tmp/namesake-bench.lock`` (``flock``; ``$NAMESAKE_BENCH_LOCK`` overrides the path), so
they never overlap another benchmark.

    .venv/bin/python benchmarks/make_synthetic_amber_kilt.py  # 210k entities, 1M docs
    .venv/bin/python benchmarks/make_synthetic_amber_kilt.py --entities 30000 --docs 50000

Outputs in ``--output`` (default ``benchmarks/output/amber_compare/``, git-ignored):
``dumps-<entities>-s<seed>-gz/``, ``amber-<entities>-s<seed>/`` and
``kilt-<entities>-<docs>-s<seed>.jsonl``.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import itertools
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import msgspec
from tqdm.auto import tqdm

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # namesake, when not installed

import bench_retrieval  # noqa: E402
import make_synthetic_dumps  # noqa: E402

from namesake.amber.build.instances import TASKS  # noqa: E402
from namesake.amber.build.reference import COLLECTIONS  # noqa: E402
from namesake.outputs import atomic_file  # noqa: E402
from namesake.retrieval import read_kilt_documents, split_passages  # noqa: E402

LOCK = os.environ.get("NAMESAKE_BENCH_LOCK", "/tmp/namesake-bench.lock")
DISTRACTOR_ID_OFFSET = 10**9
COMPRESSION = "gz"  # 5x faster to write than bz2; the build's speed is not measured here


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--entities", type=int, default=210_000, help="synthetic items (~11 queries per 100)"
    )
    parser.add_argument("--docs", type=int, default=1_000_000, help="pages of the KILT corpus")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--output", default=str(HERE / "output" / "amber_compare"), help="outputs (git-ignored)"
    )
    return parser.parse_args(argv)


@contextlib.contextmanager
def bench_lock(path: str = LOCK):
    """Holds the benchmarks' flock(2) lock (the one `flock /tmp/namesake-bench.lock` takes)."""
    with open(path, "a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"waiting for {path} (another benchmark is running) ...", file=sys.stderr)
            fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def paths(args) -> dict[str, Path]:
    out = Path(args.output)
    tag = f"{args.entities}-s{args.seed}"
    return {
        "dumps": out / f"dumps-{tag}-{COMPRESSION}",
        "amber": out / f"amber-{tag}",
        "corpus": out / f"kilt-{args.entities}-{args.docs}-s{args.seed}.jsonl",
        "counts": out / f"amber-kilt-{args.entities}-{args.docs}-s{args.seed}.json",
    }


def ensure_dumps(args, folder: Path) -> dict[str, Path]:
    """make_synthetic_dumps into `folder` (meta.json marks completion)."""
    if not (folder / "meta.json").exists():
        staging = folder.with_name(folder.name + ".partial")
        shutil.rmtree(staging, ignore_errors=True)
        print(f"generating {args.entities:,} entities into {folder} ...", file=sys.stderr)
        make_synthetic_dumps.generate(args.entities, staging, args.seed, COMPRESSION)
        staging.rename(folder)
    return make_synthetic_dumps.dump_paths(folder, COMPRESSION)


def ensure_amber(dumps: dict[str, Path], folder: Path) -> None:
    """`namesake amber build` (it publishes the folder atomically)."""
    if folder.exists():
        return
    command = [sys.executable, "-m", "namesake", "amber", "build", "--workers", "2"]
    command += ["--wikidata", str(dumps["wikidata"]), "--pageviews", str(dumps["pageviews"])]
    command += ["--kilt", str(dumps["kilt"]), "--out", str(folder)]
    subprocess.run(command, check=True)


def query_configs() -> list[str]:
    return [f"{collection}_{task}" for collection in COLLECTIONS for task in TASKS]


def amber_pages(folder: Path) -> tuple[dict[str, int], set[str]]:
    """Queries per config, and the pages of the AmbER entities (gold or set members)."""
    from datasets import load_dataset

    counts, pages = {}, set()
    for config in query_configs():
        queries = load_dataset(str(folder), config, split="test")
        counts[config] = len(queries)
        pages.update(itertools.chain.from_iterable(queries["gold_wikipedia_ids"]))
    for collection in COLLECTIONS:
        entities = load_dataset(str(folder), f"{collection}_entities", split="test")
        pages.update(itertools.chain.from_iterable(entities["wikipedia_ids"]))
    return counts, pages


class _PageId(msgspec.Struct):
    wikipedia_id: str | int


def write_corpus(
    kilt: Path, distractors: Path, entity_pages: set[str], docs: int, out: Path
) -> dict[str, int]:
    """Entity pages, the build's other pages, then distractors up to `docs` (see docstring)."""
    read_id = msgspec.json.Decoder(_PageId)
    encode = msgspec.json.Encoder().encode
    counts = {"entity pages": 0, "other AmbER KILT pages": 0, "distractor pages": 0}
    with atomic_file(out, "wb") as f, tqdm(total=docs, desc="KILT corpus", unit="page") as bar:
        for first in (True, False):  # two passes over the build's pages: entity pages first
            with open(kilt, "rb") as pages:
                for line in pages:
                    page_id = str(read_id.decode(line).wikipedia_id)
                    if int(page_id) >= DISTRACTOR_ID_OFFSET:
                        raise ValueError(f"{kilt}: wikipedia_id {page_id} is too large")
                    if (page_id in entity_pages) == first:
                        f.write(line if line.endswith(b"\n") else line + b"\n")
                        counts["entity pages" if first else "other AmbER KILT pages"] += 1
                        bar.update()
        if counts["entity pages"] != len(entity_pages):
            raise ValueError(f"{kilt} lacks {len(entity_pages) - counts['entity pages']} pages")
        wanted = docs - bar.n
        if wanted < 0:
            raise ValueError(f"--docs {docs:,} < the build's {bar.n:,} KILT pages")
        with open(distractors, "rb") as pages:
            for line in itertools.islice(pages, wanted):
                page = msgspec.json.decode(line)
                page["_id"] = page["wikipedia_id"] = str(
                    int(page["wikipedia_id"]) + DISTRACTOR_ID_OFFSET
                )
                f.write(encode(page) + b"\n")
                counts["distractor pages"] += 1
                bar.update()
        if bar.n != docs:
            raise ValueError(f"{distractors}: {wanted - counts['distractor pages']} pages short")
    return counts


def main(argv=None) -> None:
    args = parse_args(argv)
    where = paths(args)
    if where["counts"].exists():
        print(where["counts"].read_text())
        return
    seconds = {}
    lap = time.perf_counter()

    def done(step: str) -> None:
        nonlocal lap
        seconds[step] = round(time.perf_counter() - lap, 1)
        lap = time.perf_counter()

    with bench_lock():
        dumps = ensure_dumps(args, where["dumps"])
        done("dumps")
        ensure_amber(dumps, where["amber"])
        done("amber build")
        distractors = bench_retrieval.ensure_kilt(
            argparse.Namespace(docs=args.docs, seed=args.seed, output=str(HERE / "output"))
        )
        done("distractors")
        queries, entity_pages = amber_pages(where["amber"])
        if not where["corpus"].exists():
            write_corpus(dumps["kilt"], distractors, entity_pages, args.docs, where["corpus"])
        done("corpus")
        # the parts, counted from the file itself (also when it was already there)
        documents = read_kilt_documents(where["corpus"])
        first = list(itertools.islice(documents, len(entity_pages)))
        if {d.wikipedia_id for d in first} != entity_pages:
            raise ValueError(f"{where['corpus']} does not start with the AmbER entity pages")
        amber_kilt = sum(1 for _ in read_kilt_documents(dumps["kilt"]))
        total = len(first) + sum(1 for _ in documents)
        done("count")
    counts = {
        "entities": args.entities,
        "seed": args.seed,
        "queries": {**queries, "total": sum(queries.values())},
        "documents": {
            "total": total,
            "AmbER entity pages (first)": len(entity_pages),
            "other AmbER KILT pages": amber_kilt - len(entity_pages),
            "distractor pages": total - amber_kilt,
        },
        "entity_page_passages": sum(1 for _ in split_passages(first)),
        "paths": {name: str(path) for name, path in where.items()},
        "corpus_bytes": where["corpus"].stat().st_size,
        "seconds": seconds,
        "loadavg_after": os.getloadavg(),
    }
    with atomic_file(where["counts"], "w") as f:
        json.dump(counts, f, indent=2)
    print(json.dumps(counts, indent=2))


if __name__ == "__main__":
    main()
