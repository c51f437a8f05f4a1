"""Issue 49's table: the evaluation stages over `Run` and `AmberQueries` at AmbER's full size
(80,000 queries in 7,330 AmbER sets, runs of 100 pages per query from a 5.9M-page id space),
each step timed in a fresh subprocess (`measuring.py`): wall and CPU seconds, peak RSS.

- ``read_trec`` / ``read_kilt``: `Run.read` of one run written as a TREC file (8M lines) and
  as KILT JSON lines. Goal (TREC): <= 5 s; the reader before issue 49 took ~50 s (18.7 s on
  this machine, on this file).
- ``score``: `score(run, queries)` with the default `ScoringOptions` (entity_confusion's
  figures, the IR measures, every figure's interval from 1,000 bootstrap resamples of the
  sets, the popularity-gap bins): all of `namesake evaluate`'s work but reading the run and
  writing the report, the metric module's loading included. Goal: <= 30 s, <= 1.5 GB.
- ``fuse``: `fuse([a, b], "rrf")` of two runs (half of each query's pages shared). Goal:
  <= 10 s, <= 1.5 GB; ranx took 201 s and 5.8 GB.
- ``compare``: `compare([e0, ..., e5], baseline=0)`, five runs against a baseline, every
  figure, Holm per comparison, the default statistics (1,000 bootstrap resamples, 10,000
  sign flips), given the six evaluations. Goal: <= 60 s. ``score_and_compare``: the same
  process's six `score` calls and the comparison together.
- ``rerank_pages``: `read_pages(corpus, runs, depth)` of `amber compare --rerank --fuse rrf`'s
  18 runs (2 first stages and their RRF fusion on each of the 6 configs, each config's runs
  over its share of the queries) from a synthetic 1M-page KILT corpus, with the passes over
  the corpus counted (`read_kilt_documents` wrapped). Goal: 1 pass (before: 18). The
  reranking itself, a cross-encoder over 18 runs x queries x depth pages, is out of scope:
  see the "Reranking" section of benchmarks/README.md.

The data, synthetic, have AmbER's shape: sets of 2-30 queries, each about one head entity
(more queries) and 1-5 tails (namesakes, less popular); 1-3 gold pages per entity; all the
queries in one config (``human_qa``) for the steps that score. Six systems of different
quality rank 100 distinct pages per query, with a query's gold pages near the top more often
for heads, and a namesake's page (the head's for a tail query) near the top more often for
tails, so that no figure is degenerate (the score step reports a few). The rerank runs draw
their pages from the corpus (ids 1..1M) instead.

A step's inputs are loaded before its clock starts, from Arrow files that a ``prepare``
process writes once (cached in ``--output``), so that no reader's peak is in another step's
figure; ``peak_rss_before_mb`` is the process's peak once they are loaded.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_amber_at_scale.py \\
        [--queries 80000] [--sets 7330] [--pages 5900000] [--depth 100] \\
        [--corpus-pages 1000000] [--steps read_trec score ...] [--out results.json]

Prints a Markdown table and writes the figures as JSON (``--out``; default beside the data in
``benchmarks/output/amber_at_scale/``, git-ignored). The corpus is ``bench_retrieval``'s
synthetic KILT (``benchmarks/output/retrieval/``), shared with that benchmark. The
measurements hold the benchmarks' lock (`make_synthetic_amber_kilt.bench_lock`), so that
they never overlap another benchmark's. Small sizes (``--queries 600 --sets 60 --pages 20000
--depth 20 --corpus-pages 3000``) run in a minute, as ``tests/test_benchmark_scripts.py`` does.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from measuring import cpu_seconds, measure_in_subprocess, peak_rss_mb, print_measurement

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # namesake, when not installed

from namesake.outputs import atomic_file  # noqa: E402

#: the config the scored runs answer: every synthetic query is in it
CONFIG = "human_qa"
#: the quality of each system (the first is the baseline of `compare`, the first two fused):
#: how often it finds a query's gold pages, and how seldom a namesake's page
QUALITIES = (0.6, 0.7, 0.62, 0.75, 0.55, 0.8)
#: a set's members: its head and at most this many tails
MOST_TAILS = 5
#: the gold pages of an entity: 1 to this many
MOST_GOLD = 3
#: the Wikidata properties the synthetic queries ask about (AmbER-H QA asks about ~20)
PROPERTIES = tuple(f"P{number}" for number in range(100, 120))
#: bumped when the synthetic data change, so that a cached older copy is not measured
DATA_VERSION = 2
#: the share of a query's pages that two systems' random pages draw from a common pool
OVERLAP = 0.5
GIB = 1024
#: step -> (seconds, peak RSS in MiB) it should stay within (None: no such goal)
GOALS = {
    "read_trec": (5, None),
    "score": (30, 1.5 * GIB),
    "fuse": (10, 1.5 * GIB),
    "compare": (60, None),
    "analysis": (90, 2 * GIB),
}
#: what a step's row of the table says it measures
LABELS = {
    "read_trec": "read one TREC run: `Run.read`",
    "read_kilt": "read the same run as KILT JSON lines: `Run.read`",
    "score": "score one run: `score(run, queries)`, 1,000 bootstrap resamples",
    "fuse": "fuse two runs: `fuse([a, b], 'rrf')`",
    "compare": "compare 5 runs against a baseline: `compare(evaluations)`",
    "score_and_compare": "score the 6 runs, then compare them",
    "rerank_pages": "`read_pages` of the 18 runs to rerank",
    "analysis": "issue 50's analysis: 5 runs scored, one report with per_query.parquet and the "
    "4 breakdowns, each run's popularity effect, the 5-system leaderboard with its curve",
}


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=80_000)
    parser.add_argument("--sets", type=int, default=7_330, help="AmbER sets (2-30 queries each)")
    parser.add_argument("--pages", type=int, default=5_900_000, help="the runs' page id space")
    parser.add_argument("--depth", type=int, default=100, help="ranked pages per query")
    parser.add_argument("--corpus-pages", type=int, default=1_000_000, help="the rerank corpus")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", nargs="+", choices=WORKERS_MEASURED, default=WORKERS_MEASURED)
    parser.add_argument("--output", default=str(HERE / "output"), help="data (cached)")
    parser.add_argument("--out", help="the figures as JSON (default: beside the data)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)  # internal: one measurement
    args = parser.parse_args(argv)
    if not 2 * args.sets <= args.queries <= 30 * args.sets:
        parser.error("--queries must be 2 to 30 times --sets")
    if args.depth < 2 * (MOST_GOLD + 1) or min(args.pages, args.corpus_pages) < 10 * args.depth:
        parser.error("--depth must be at least 8, and the id spaces 10 times --depth")
    if args.pages < 3 * MOST_GOLD * (MOST_TAILS + 1) * args.sets:
        parser.error("--pages too small for the entities' gold pages")
    return args


def work_folder(args) -> Path:
    """The data of these sizes, written once by ``prepare``."""
    sizes = f"{args.queries}q-{args.sets}s-{args.pages}p-{args.depth}d-{args.corpus_pages}c"
    return Path(args.output) / "amber_at_scale" / f"{sizes}-s{args.seed}-v{DATA_VERSION}"


# --- synthetic AmbER ------------------------------------------------------------------------


@dataclass
class SyntheticAmber:
    """The query config (``rows``) and its set members (``members``), as `AmberQueries`
    holds them, and per query what a run places near the top: its gold pages (``gold``,
    queries x MOST_GOLD page numbers, -1 past the entity's last) and the page a confused
    retriever ranks (``namesake``: the head's first page for a tail query, a tail's for a
    head query)."""

    rows: pa.Table
    members: pa.Table
    gold: np.ndarray
    namesake: np.ndarray


def set_sizes(rng, queries: int, sets: int, smallest: int = 2, largest: int = 30) -> np.ndarray:
    """Queries per set, ``smallest`` to ``largest``, summing to ``queries``: a few large sets
    and many small ones, as in AmbER (log-normal shares of what is left above the smallest)."""
    sizes = np.full(sets, smallest)
    weights = rng.lognormal(0, 1, sets)
    while (left := queries - int(sizes.sum())) > 0:
        room = largest - sizes
        shares = weights * (room > 0)
        sizes += np.minimum(rng.multinomial(left, shares / shares.sum()), room)
    return sizes


def synthetic_amber(rng, queries: int, sets: int, pages: int) -> SyntheticAmber:
    """AmbER's shape (see the module docstring), set by set."""
    rows, members, gold, namesake = [], [], [], []
    page_pool = iter(rng.choice(pages, MOST_GOLD * (MOST_TAILS + 1) * sets, replace=False))
    for set_number, size in enumerate(set_sizes(rng, queries, sets)):
        name = f"Name {set_number}"
        tails = int(rng.integers(1, min(size - 1, MOST_TAILS) + 1))
        head_weight = 3.0  # the head entity is asked about more
        shares = np.array([head_weight] + [1.0] * tails)
        counts = 1 + rng.multinomial(size - tails - 1, shares / shares.sum())
        head_popularity = rng.normal(5, 0.8)
        entity_pages = []
        for entity, count in enumerate(counts):
            qid = f"Q{len(members) + 1}"
            own = [int(next(page_pool)) for _ in range(rng.integers(1, MOST_GOLD + 1))]
            entity_pages.append(own)
            popularity = head_popularity - (entity > 0) * abs(rng.normal(1.5, 0.8))
            members.append(
                {
                    "name": name,
                    "qid": qid,
                    "label": f"{name} ({qid})",
                    "is_head": entity == 0,
                    "popularity": max(popularity, 0.0),
                    "wikipedia_ids": list(map(str, own)),
                }
            )
            for _ in range(count):
                amber_id = rng.bytes(16).hex()
                rows.append(
                    {
                        "id": f"{amber_id}={rng.bytes(16).hex()}",
                        "amber_id": amber_id,
                        "name": name,
                        "qid": qid,
                        "is_head": entity == 0,
                        "popularity": members[-1]["popularity"],
                        "task": "qa",
                        "pid": PROPERTIES[int(rng.integers(len(PROPERTIES)))],
                        "input": f"Which instrument does {name} play?",
                        "gold_wikipedia_ids": list(map(str, own)),
                    }
                )
                gold.append(own + [-1] * (MOST_GOLD - len(own)))
        for entity, count in enumerate(counts):
            other = int(rng.integers(1, len(counts))) if entity == 0 else 0
            namesake += [entity_pages[other][0]] * count
    return SyntheticAmber(
        pa.Table.from_pylist(rows),
        pa.Table.from_pylist(members),
        np.array(gold, dtype=np.int64),
        np.array(namesake, dtype=np.int64),
    )


# --- synthetic runs -------------------------------------------------------------------------


@dataclass
class IdSpace:
    """The page numbers a run draws from: ``first`` .. ``first + size - 1``."""

    first: int
    size: int

    def draw(self, rng, shape) -> np.ndarray:
        return rng.integers(self.first, self.first + self.size, shape)


def random_pages(rng, shared: np.ndarray, space: IdSpace) -> np.ndarray:
    """Queries x depth page numbers: about OVERLAP of them from ``shared`` (a pool common to
    the systems, in an order of this run's own), the others drawn from ``space``."""
    own = space.draw(rng, shared.shape)
    pooled = shared[:, rng.permutation(shared.shape[1])]
    return np.where(rng.random(shared.shape) < OVERLAP, pooled, own)


def place(pages: np.ndarray, placed: np.ndarray, page: np.ndarray, found, mean_rank, rng):
    """Puts ``page[q]`` into the ranking of each query q where ``found[q]``, at a rank drawn
    near the top (geometric, mean ``mean_rank``), or the next rank below it that holds no
    page placed before (``placed``), wrapping to the top."""
    rows = np.flatnonzero(found & (page >= 0))
    depth = pages.shape[1]
    ranks = np.minimum(rng.geometric(1 / mean_rank, len(rows)) - 1, depth - 1)
    while (taken := placed[rows, ranks]).any():
        ranks[taken] = (ranks[taken] + 1) % depth
    pages[rows, ranks] = page[rows]
    placed[rows, ranks] = True


def redraw_repeats(pages: np.ndarray, placed: np.ndarray, space: IdSpace, rng) -> None:
    """Draws again the pages not placed in every ranking that holds a page twice, until no
    ranking does (a TREC run must not rank a page twice for a query)."""
    while True:
        ordered = np.sort(pages, axis=1)
        repeats = np.flatnonzero((ordered[:, 1:] == ordered[:, :-1]).any(axis=1))
        if not repeats.size:
            return
        block, free = pages[repeats], ~placed[repeats]
        block[free] = space.draw(rng, int(free.sum()))
        pages[repeats] = block


def as_run(pages: np.ndarray, query_ids, name: str, rng):
    """The Run of a queries x depth matrix of page numbers, best first, with scores falling
    down each ranking."""
    from namesake.runs import Run

    scores = -np.sort(-rng.random(pages.shape), axis=1) * 30
    depth = pages.shape[1]
    return Run(
        query_ids,
        np.arange(0, pages.size + 1, depth),
        pc.cast(pa.array(pages.ravel()), pa.string()),
        scores.ravel(),
        name=name,
    )


def system_run(amber: SyntheticAmber, quality: float, shared, space: IdSpace, rng, name: str):
    """One system's run on the synthetic AmbER: each query's namesake page near the top for
    most tail queries and some head ones, its gold pages for most head queries and fewer
    tail ones, the better the system the more gold and the less namesake."""
    is_head = amber.rows["is_head"].to_numpy(zero_copy_only=False)
    pages = random_pages(rng, shared, space)
    placed = np.zeros(pages.shape, dtype=bool)
    confused = rng.random(len(pages)) < np.where(is_head, 0.3, 0.8) * (1.2 - quality)
    place(pages, placed, amber.namesake, confused, 3, rng)
    for nth in range(MOST_GOLD):  # the first gold page found most often
        found = rng.random(len(pages)) < np.where(is_head, 1.0, 0.75) * quality * 0.6**nth
        place(pages, placed, amber.gold[:, nth], found, 2, rng)
    redraw_repeats(pages, placed, space, rng)
    return as_run(pages, amber.rows["id"].to_numpy(zero_copy_only=False), name, rng)


def plain_run(query_ids, shared, space: IdSpace, rng, name: str):
    """A run of random pages of ``space`` (a first stage over the rerank corpus)."""
    pages = random_pages(rng, shared, space)
    redraw_repeats(pages, np.zeros(pages.shape, dtype=bool), space, rng)
    return as_run(pages, query_ids, name, rng)


# --- the data on disk -----------------------------------------------------------------------


def write_arrow(table: pa.Table, path: Path) -> None:
    with pa.ipc.new_file(str(path), table.schema) as writer:
        writer.write_table(table)


def read_arrow(path: Path) -> pa.Table:
    with pa.OSFile(str(path)) as f:
        return pa.ipc.open_file(f).read_all().combine_chunks()


def save_run(run, path: Path) -> None:
    """A Run as an Arrow file, a row a query: what a step loads before its clock starts."""
    offsets = pa.array(run.offsets.astype(np.int32))
    table = pa.table(
        {
            "query_id": pa.array(run.query_ids.tolist(), type=pa.string()),
            "pages": pa.ListArray.from_arrays(offsets, run.page_ids),
            "scores": pa.ListArray.from_arrays(offsets, pa.array(run.scores)),
        }
    )
    write_arrow(table, path)


def load_run(path: str | Path):
    from namesake.runs import Run

    table = read_arrow(Path(path))
    pages, scores = table["pages"].chunk(0), table["scores"].chunk(0)
    return Run(
        table["query_id"].to_numpy(zero_copy_only=False),
        pages.offsets.to_numpy(),
        pages.flatten(),
        scores.flatten().to_numpy(),
        name=Path(path).stem,
    )


def load_queries(manifest: dict):
    from namesake.amber.evaluation.queries import AmberQueries

    files = manifest["files"]
    queries = AmberQueries(
        "synthetic", CONFIG, read_arrow(Path(files["rows"])), read_arrow(Path(files["members"]))
    )
    queries.check_columns()
    return queries


def prepare(args) -> dict:
    """Writes the data of every step into the work folder, the manifest last."""
    import bench_retrieval

    work = work_folder(args)
    (work / "runs").mkdir(parents=True, exist_ok=True)
    (work / "rerank").mkdir(exist_ok=True)
    rng = np.random.default_rng(args.seed)
    amber = synthetic_amber(rng, args.queries, args.sets, args.pages)
    files = {"rows": work / "rows.arrow", "members": work / "members.arrow"}
    write_arrow(amber.rows, files["rows"])
    write_arrow(amber.members, files["members"])
    files["trec"], files["kilt"] = work / "run.trec", work / "run.jsonl"
    systems = write_system_runs(amber, args, work, rng)
    corpus_args = argparse.Namespace(docs=args.corpus_pages, seed=args.seed, output=args.output)
    files["corpus"] = bench_retrieval.ensure_kilt(corpus_args)
    rerank_runs = write_rerank_runs(amber.rows["id"], args, work / "rerank", rng)
    data = {
        "queries": len(amber.rows),
        "sets": len(set(amber.rows["name"].to_pylist())),
        "entities": len(amber.members),
        "gold_pages": int((amber.gold >= 0).sum()),
        "run_pages": args.queries * args.depth,
        "bytes": {name: os.path.getsize(files[name]) for name in ("trec", "kilt", "corpus")},
        "corpus_pages": args.corpus_pages,
        "rerank_runs": len(rerank_runs),
    }
    manifest = {
        "files": {name: str(path) for name, path in files.items()},
        "systems": list(map(str, systems)),
        "rerank_runs": list(map(str, rerank_runs)),
        "depth": args.depth,
        "data": data,
    }
    with atomic_file(work / "manifest.json", "w") as f:
        json.dump(manifest, f, indent=2)
    return data


def write_system_runs(amber: SyntheticAmber, args, work: Path, rng) -> list[Path]:
    """The six systems' runs (QUALITIES), and the first also as the TREC run and the KILT
    JSON lines that the reading steps read."""
    space = IdSpace(0, args.pages)
    shared = space.draw(rng, (args.queries, args.depth))
    paths = []
    for number, quality in enumerate(QUALITIES):
        run = system_run(amber, quality, shared, space, rng, f"system{number}")
        paths.append(work / "runs" / f"{run.name}.arrow")
        save_run(run, paths[-1])
        if number == 0:
            run.write(work / "run.trec", "trec", run.name)
            run.write(work / "run.jsonl", "kilt")
    return paths


def write_rerank_runs(query_ids: pa.ChunkedArray, args, folder: Path, rng) -> list[Path]:
    """`amber compare --rerank --fuse rrf`'s 18 runs: per config (the queries cut in 6
    parts), two first stages over the corpus's pages and their RRF fusion."""
    from make_synthetic_amber_kilt import query_configs

    from namesake.amber.evaluation.fusion import FusionSettings, fuse

    space = IdSpace(1, args.corpus_pages)  # the ids of bench_retrieval's corpus: 1 .. pages
    paths = []
    configs = query_configs()
    parts = np.array_split(np.arange(args.queries), len(configs))
    for config, part in zip(configs, parts, strict=True):
        ids = query_ids.take(pa.array(part)).to_numpy(zero_copy_only=False)
        shared = space.draw(rng, (len(ids), args.depth))
        stages = [plain_run(ids, shared, space, rng, f"{kind}-{config}") for kind in ("a", "b")]
        fused = fuse(stages, "rrf", FusionSettings(top_k=args.depth))
        fused.name = f"fused-{config}"
        for run in (*stages, fused):
            paths.append(folder / f"{run.name}.arrow")
            save_run(run, paths[-1])
    return paths


# --- the measurements, each in its own process ------------------------------------------------


def timed(work) -> tuple:
    """(what ``work()`` returns, its wall and CPU seconds and the peak RSS before it)."""
    before = peak_rss_mb()
    wall, cpu = time.perf_counter(), cpu_seconds("self")
    result = work()
    return result, {
        "seconds": time.perf_counter() - wall,
        "cpu_seconds": cpu_seconds("self") - cpu,
        "peak_rss_before_mb": before,
    }


def measure_reading(manifest: dict, format: str) -> dict:
    from namesake.runs import Run

    run, figures = timed(lambda: Run.read(manifest["files"][format], format))
    return {f"read_{format}": {**figures, "queries": len(run), "pages": len(run.page_ids)}}


def measure_score(manifest: dict) -> dict:
    from namesake.amber.evaluation.scoring import score

    queries = load_queries(manifest)
    run = load_run(manifest["systems"][0])
    evaluation, figures = timed(lambda: score(run, queries))
    headline = ("accuracy@1_head", "accuracy@1_tail", "entity_confusion", "ndcg@10")
    figures["figures"] = {name: evaluation.metrics[name] for name in headline}
    return {"score": figures}


def measure_fuse(manifest: dict) -> dict:
    from namesake.amber.evaluation.fusion import FusionSettings, fuse

    runs = [load_run(path) for path in manifest["systems"][:2]]
    settings = FusionSettings(top_k=manifest["depth"])
    fused, figures = timed(lambda: fuse(runs, "rrf", settings))
    return {"fuse": {**figures, "pages": len(fused.page_ids)}}


def measure_compare(manifest: dict) -> dict:
    from namesake.amber.evaluation.compare_runs import compare
    from namesake.amber.evaluation.scoring import score

    queries = load_queries(manifest)
    runs = [load_run(path) for path in manifest["systems"]]
    evaluations, scoring = timed(lambda: [score(run, queries) for run in runs])
    comparisons, comparing = timed(lambda: compare(evaluations, baseline=0))
    significant = [sum(v.significant for v in c.verdicts) for c in comparisons]
    total = {name: scoring[name] + comparing[name] for name in ("seconds", "cpu_seconds")}
    return {
        "compare": {**comparing, "significant_figures": significant},
        "score_and_compare": {**total, "peak_rss_before_mb": scoring["peak_rss_before_mb"]},
    }


def measure_analysis(manifest: dict) -> dict:
    """`namesake evaluate --by` all four fields on one run and `namesake leaderboard` of five,
    as their handlers do it: each run scored as it is read (from its Arrow file here; reading
    a TREC file is the ``read_trec`` step), the report written with per_query.parquet, the
    breakdowns and the popularity effect, then the leaderboard of the five (ranks, every pair
    tested, each run's popularity effect) and its files with the popularity curve, written.
    Timed in parts as well."""
    import tempfile

    from namesake.amber.evaluation.breakdowns import BREAKDOWN_FIELDS
    from namesake.amber.evaluation.leaderboard import leaderboard, write_leaderboard
    from namesake.amber.evaluation.report import write_report
    from namesake.amber.evaluation.scoring import score

    queries = load_queries(manifest)
    out = Path(tempfile.mkdtemp(prefix="bench_analysis_"))
    parts: dict[str, float] = {}

    def part(name: str, work):
        started = time.perf_counter()
        result = work()
        parts[name] = parts.get(name, 0.0) + time.perf_counter() - started
        return result

    def analysis():
        evaluations = [
            part("score_5_runs", lambda path=path: score(load_run(path), queries))
            for path in manifest["systems"][:5]
        ]
        report = out / "report"
        part(
            "report_with_4_breakdowns_and_effect",
            lambda: write_report(report, evaluations[0], [1, 20], by=BREAKDOWN_FIELDS),
        )
        board = part(
            "leaderboard_with_5_effects",
            lambda: leaderboard(evaluations, baseline=evaluations[0].name),
        )
        part(
            "write_leaderboard_and_curve",
            lambda: write_leaderboard(out / "board", board, evaluations),
        )
        return board

    board, figures = timed(analysis)
    figures["parts_seconds"] = parts
    figures["odds_ratios"] = [standing.popularity.odds_ratio for standing in board.systems]
    figures["top_group"] = board.top_group
    return {"analysis": figures}


def measure_rerank_pages(manifest: dict) -> dict:
    from namesake.amber.evaluation.retrieve import read_pages

    runs = [load_run(path) for path in manifest["rerank_runs"]]
    passes = count_corpus_passes()
    pages, figures = timed(lambda: read_pages(manifest["files"]["corpus"], runs, manifest["depth"]))
    counts = {"runs": len(runs), "pages": len(pages), "passes": passes[0]}
    corpus_pages = manifest["data"]["corpus_pages"]
    return {"rerank_pages": {**figures, **counts, "corpus_pages": corpus_pages}}


def count_corpus_passes() -> list[int]:
    """Wraps `read_kilt_documents` where the corpus is read from with a counter of the
    passes it starts; returns the counter (a one-item list)."""
    import namesake.retrieval.corpus as corpus_module
    import namesake.retrieval.rerank as rerank_module

    passes = [0]
    read_documents = corpus_module.read_kilt_documents

    def counted(*args, **kwargs):
        passes[0] += 1
        return read_documents(*args, **kwargs)

    for module in (corpus_module, rerank_module):
        module.read_kilt_documents = counted
    return passes


MEASUREMENTS = {
    "read_trec": lambda manifest: measure_reading(manifest, "trec"),
    "read_kilt": lambda manifest: measure_reading(manifest, "kilt"),
    "score": measure_score,
    "fuse": measure_fuse,
    "compare": measure_compare,
    "rerank_pages": measure_rerank_pages,
    "analysis": measure_analysis,
}
WORKERS_MEASURED = list(MEASUREMENTS)


def worker(args) -> dict:
    """What the subprocess ``--worker NAME`` measures, its peak RSS added to each step."""
    if args.worker == "prepare":
        return prepare(args)
    manifest = json.loads((work_folder(args) / "manifest.json").read_text())
    steps = MEASUREMENTS[args.worker](manifest)
    peak = peak_rss_mb()
    return {step: {**figures, "peak_rss_mb": peak} for step, figures in steps.items()}


# --- the table --------------------------------------------------------------------------------


def met(step: str, figures: dict) -> str:
    """Whether ``step`` met its goal (GOALS; for rerank_pages: one pass), else "–"."""
    if step == "rerank_pages":
        return "yes" if figures["passes"] == 1 else "no"
    if step not in GOALS:
        return "–"
    seconds, rss = GOALS[step]
    ok = figures["seconds"] <= seconds and (rss is None or figures["peak_rss_mb"] <= rss)
    return "yes" if ok else "no"


def goal_text(step: str) -> str:
    if step == "rerank_pages":
        return "1 pass"
    if step not in GOALS:
        return "–"
    seconds, rss = GOALS[step]
    return f"<= {seconds} s" + ("" if rss is None else f", <= {rss / GIB:.1f} GiB")


def table(steps: dict) -> str:
    lines = [
        "| step | seconds | CPU s | peak RSS (MiB) | goal | met |",
        "|---|---:|---:|---:|---|---|",
    ]
    for step, figures in steps.items():
        label = LABELS[step]
        if step == "rerank_pages":
            label += (
                f": {figures['passes']} pass(es) over {figures['corpus_pages']:,} pages, "
                f"{figures['pages']:,} kept"
            )
        lines.append(
            f"| {label} | {figures['seconds']:.1f} | {figures['cpu_seconds']:.1f} | "
            f"{figures['peak_rss_mb']:,.0f} | {goal_text(step)} | {met(step, figures)} |"
        )
    return "\n".join(lines)


def child_command(args, name: str) -> list[str]:
    sizes = ["--queries", args.queries, "--sets", args.sets, "--pages", args.pages]
    sizes += ["--depth", args.depth, "--corpus-pages", args.corpus_pages, "--seed", args.seed]
    sizes += ["--output", args.output, "--worker", name]
    return [sys.executable, __file__, *map(str, sizes)]


def main(argv=None) -> None:
    args = parse_args(argv)
    if args.worker:
        print_measurement(worker(args))
        return
    from make_synthetic_amber_kilt import bench_lock

    work = work_folder(args)
    steps = {}
    with bench_lock():
        if not (work / "manifest.json").exists():
            started = time.perf_counter()
            measure_in_subprocess(child_command(args, "prepare"))
            print(f"data written in {time.perf_counter() - started:.0f} s", file=sys.stderr)
        for name in args.steps:
            load = os.getloadavg()[0]
            measured = measure_in_subprocess(child_command(args, name))
            for step, figures in measured.items():
                steps[step] = {**figures, "load_average_before": load}
                print(f"{step}: {figures['seconds']:.1f} s", file=sys.stderr)
    manifest = json.loads((work / "manifest.json").read_text())
    results = {
        "parameters": {
            name: getattr(args, name)
            for name in ("queries", "sets", "pages", "depth", "corpus_pages", "seed")
        },
        "machine": {"cpus": os.cpu_count(), "load_average_after": os.getloadavg()},
        "data": manifest["data"],
        "steps": steps,
    }
    out = Path(args.out) if args.out else work.parent / f"results-{work.name}.json"
    out.write_text(json.dumps(results, indent=2) + "\n")
    data = manifest["data"]
    print(
        f"{data['queries']:,} queries in {data['sets']:,} sets ({data['entities']:,} entities), "
        f"runs of {args.depth} pages from {args.pages:,} ids; {os.cpu_count()} CPUs\n"
    )
    print(table(steps))
    print(f"\nfigures: {out}")


if __name__ == "__main__":
    main()
