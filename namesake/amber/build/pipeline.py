"""The AmbER build: dumps in, a Hub dataset folder (and optionally the published JSON-lines
layout) out. Each stage lives in the module named after it; this file only wires them."""

from __future__ import annotations

import os
from pathlib import Path

from namesake.amber.build.alignment import align_to_pages
from namesake.amber.build.dataset import (
    config_tables,
    dataset_card,
    entity_rows,
    query_rows,
    statistics,
    write_configs,
    write_jsonl_layout,
)
from namesake.amber.build.entities import extract_entities
from namesake.amber.build.instances import build_instances
from namesake.amber.build.kilt import read_pages
from namesake.amber.build.names import find_polysemous_names
from namesake.amber.build.pageviews import read_pageviews
from namesake.amber.build.reference import COLLECTIONS, PRACTICED_BY, USED_BY, load_collection
from namesake.amber.build.relations import keep_distinguishing_relations
from namesake.build_report import BuildReport, warn_skipped
from namesake.dumps.reading import require_regular_file
from namesake.dumps.restart import RESUMING_NEEDS_A_FILE
from namesake.errors import InputProblems, NamesakeError
from namesake.outputs import atomic_directory
from namesake.timing import StageTimer


def build_amber(
    wikidata: str | os.PathLike,
    pageviews: str | os.PathLike,
    kilt: str | os.PathLike,
    out: str | os.PathLike,
    collections: tuple[str, ...] = COLLECTIONS,
    workers: int = 1,
    jsonl_dir: str | os.PathLike | None = None,
    strict: bool = False,
    reference_dir: str | os.PathLike | None = None,
    work_dir: str | os.PathLike | None = None,
) -> BuildReport:
    """Builds AmbER from the three dumps; outputs appear atomically, or not at all.

    `work_dir`: where stage 1's pass over the Wikidata dump is kept chunk by chunk
    (`namesake.amber.build.entity_chunks`), so that a rerun goes on after the last chunk."""
    if work_dir is not None:  # refused before the page views are read, not after
        require_regular_file(wikidata, RESUMING_NEEDS_A_FILE)
    report = BuildReport()
    problems = InputProblems(strict)
    loaded = [load_collection(name, reference_dir) for name in collections]
    lap = StageTimer(report.seconds).lap

    views = read_pageviews(pageviews, problems, threads=workers)
    report.counts["English pages with views"] = views.num_rows
    lap("pageviews")

    wanted_pids = frozenset().union(*(c.pids for c in loaded)) | {PRACTICED_BY, USED_BY}
    entities = extract_entities(wikidata, views, wanted_pids, problems, workers, work_dir)
    if work_dir is not None:
        report.resumed.append(f"stage-1 chunks reused from {work_dir}: {entities.reused_chunks:,}")
    report.counts["entities with views (stage 1)"] = len(entities)
    lap("stage 1 (entities)")

    candidates = {}
    for collection in loaded:
        sets = find_polysemous_names(entities, collection)
        keep_distinguishing_relations(sets, collection)
        candidates[collection.name] = sets
        report.counts[f"{collection.name}: polysemous names (stages 2-3)"] = len(sets)
    del entities
    lap("stages 2-3 (names, relations)")

    wanted_qids = {qid for sets in candidates.values() for s in sets for qid in s["qids"]}
    pages = read_pages(kilt, wanted_qids, problems, workers)
    lap("stage 4 (KILT pages)")

    configs, outputs = {}, {}
    for collection in loaded:
        tuples = align_to_pages(candidates[collection.name], pages)
        instances, omitted = build_instances(tuples, collection)
        queries, members = query_rows(tuples, instances), entity_rows(tuples)
        outputs[collection.name] = (tuples, instances)
        report.counts[f"{collection.name}: AmbER sets (stage 4)"] = len(tuples)
        report.counts[f"{collection.name}: queries"] = queries.num_rows
        report.counts[f"{collection.name}: REFUTES claims omitted (no other value)"] = omitted
        if not tuples:  # an empty Parquet config would not load; say so instead
            report.problems.append(f"{collection.name}: no AmbER set survived; no config written")
            continue
        for config, table in config_tables(collection.name, queries, members).items():
            if table.num_rows:
                configs[config] = table
            else:  # an empty Parquet split does not load; say so instead
                report.problems.append(f"{config}: no row; config not written")
        report.statistics[collection.name] = statistics(queries, members)
    lap("stages 4-5 (alignment, instances)")

    report.problems += problems.summary()
    if not configs:
        raise NamesakeError(
            "no AmbER set survived in any collection, nothing written: " + "; ".join(report.lines())
        )
    report.configs = list(configs)
    sources = {
        "Wikidata": Path(wikidata).name,
        "page views": Path(pageviews).name,
        "KILT": Path(kilt).name,
    }
    with atomic_directory(out, writer="amber build") as staging:
        written = write_configs(staging, configs)
        card = dataset_card(report.statistics, sources, report.notes(), written)
        (staging / "README.md").write_text(card, encoding="utf-8")
    if jsonl_dir is not None:
        with atomic_directory(jsonl_dir, writer="amber build") as staging:
            for name, (tuples, instances) in outputs.items():
                write_jsonl_layout(staging, name, tuples, instances)
    lap("writing")
    warn_skipped(problems, "bad input line(s)")
    return report
