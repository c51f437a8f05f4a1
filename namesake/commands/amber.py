"""`namesake amber`: build, import, inspect, compare and publish the AmbER benchmark."""

from __future__ import annotations

import argparse
import json

from namesake.amber.build.reference import COLLECTIONS
from namesake.amber.evaluation.beir_export import PAGES
from namesake.amber.evaluation.retrieve import RETRIEVER_KINDS
from namesake.commands.arguments import (
    add_amber_config,
    add_amber_dataset,
    add_batch_size,
    add_candidates,
    add_collections,
    add_corpus,
    add_dataset_output,
    add_dpr_encoders,
    add_input,
    add_memory_budget,
    add_metric,
    add_output,
    add_rerank,
    add_seed,
    add_similarity,
    add_statistics,
    add_top_k,
    add_workers,
    dpr_options,
    labelled_dense_run,
    non_negative_int,
    positive_int,
    scoring_options,
)


def register(groups) -> None:
    _add_amber(groups.add_parser("amber", help="build, inspect and publish the AmbER benchmark"))


def _add_amber(parser: argparse.ArgumentParser) -> None:
    commands = parser.add_subparsers(dest="command", required=True)

    build = commands.add_parser(
        "build", help="rebuild AmbER from Wikidata, page-view and KILT dumps"
    )
    add_input(build, "--wikidata", required=True, help="Wikidata JSON dump (.json.bz2/.gz/plain)")
    add_input(
        build,
        "--pageviews",
        required=True,
        help="monthly page views: pagecounts-ez totals or pageviews-complete (bz2/gz/plain)",
    )
    add_input(build, "--kilt", required=True, help="KILT knowledge source (JSON lines)")
    add_dataset_output(build, "amber build")
    add_collections(build, "build")
    add_workers(build)
    add_output(
        build,
        "--jsonl-dir",
        "also write the published JSON-lines layout here",
        kind="folder",
        writer="amber build",
    )
    build.add_argument("--strict", action="store_true", help="fail on the first bad input line")
    add_input(
        build,
        "--reference",
        help="folder with <collection>/ templates and type lists (default: bundled)",
    )
    add_output(
        build,
        "--work-dir",
        kind="work",
        help="keep stage 1's pass over the Wikidata dump here, chunk by chunk, so that a rerun "
        "after a crash or a kill goes on after the last chunk (another dump is refused by name)",
    )
    build.set_defaults(run=_amber_build)

    imported = commands.add_parser(
        "import", help="convert the AmbER authors' released JSON lines into a Hub dataset folder"
    )
    add_input(
        imported,
        "--released",
        required=True,
        help="folder of the release: <collection>/amber_set_tuples.jsonl and "
        "<collection>/<task>/amber_sets.jsonl",
    )
    add_dataset_output(imported, "amber import")
    add_collections(imported, "import")
    imported.set_defaults(run=_amber_import)

    stats = commands.add_parser("stats", help="print the paper's Table 4 figures for a build")
    _add_build_folder(stats)
    stats.add_argument("--json", action="store_true", help="print the full statistics as JSON")
    stats.set_defaults(run=_amber_stats)

    qrels = commands.add_parser(
        "qrels", help="write a config's gold pages as TREC qrels, for trec_eval, ranx, ir-measures"
    )
    add_amber_config(qrels)
    add_output(
        qrels, "--out", "qrels file ('qid 0 docid 1' per gold page)", kind="file", required=True
    )
    qrels.set_defaults(run=_amber_qrels)

    # Removed: it is `namesake publish dataset amber`. Its old options still parse, so that
    # any old command line gets that one line rather than a usage error.
    push = commands.add_parser("push", help="removed: see `namesake publish dataset amber`")
    push.add_argument("removed", nargs="*", help=argparse.SUPPRESS)
    for option in ("--repo-id", "--token"):
        push.add_argument(option, help=argparse.SUPPRESS)
    for option in ("--private", "--dry-run"):
        push.add_argument(option, action="store_true", help=argparse.SUPPRESS)
    push.set_defaults(run=_amber_push)

    export = commands.add_parser(
        "export", help="write a config as a BEIR folder (corpus, queries, qrels) for beir and mteb"
    )
    export.add_argument(
        "--format", choices=["beir"], default="beir", help="folder layout (default: beir)"
    )
    add_amber_dataset(export)
    export.add_argument("--config", required=True, help="a query config, e.g. human_qa")
    add_corpus(export)
    add_output(
        export,
        "--out",
        "folder: corpus.jsonl, queries.jsonl, qrels/test.tsv",
        kind="folder",
        writer="amber export",
        required=True,
    )
    export.add_argument(
        "--pages",
        choices=PAGES,
        default="all",
        help="all: every KILT page (default); set: only the pages of the config's AmbER sets "
        "and --distractors other pages (a small corpus)",
    )
    export.add_argument(
        "--distractors",
        type=non_negative_int,
        default=0,
        help="--pages set: KILT pages drawn at random from outside the sets (default 0)",
    )
    add_seed(export, "--pages set: seed of the distractor draw (0)")
    export.set_defaults(run=_amber_export)

    compare = commands.add_parser(
        "compare", help="run and score retrievers on every AmbER config; print one table"
    )
    add_corpus(compare)
    add_amber_dataset(compare)
    add_output(
        compare,
        "--out",
        "folder for predictions and reports",
        kind="filling",
        writer="amber compare",
        required=True,
    )
    add_memory_budget(compare)
    compare.add_argument(
        "--retriever",
        action="extend",
        nargs="+",
        choices=RETRIEVER_KINDS,
        help="retrievers to run: --retriever bm25 dense, or --retriever bm25 --retriever dense "
        "(default: bm25 dense)",
    )
    add_input(
        compare,
        "--dense-run",
        nargs="+",
        type=labelled_dense_run,
        metavar="LABEL=SPEC",
        help="also run named dense encoders, rows 'dense:LABEL': --dense-run Gold=gold_dpr "
        "Mixed-DPR=mixed_dpr; SPEC is a training/train_dpr.py output folder (its st_* "
        "encoders) or a sentence-transformers model; a folder that was not trained gets rows "
        "saying why",
    )
    add_collections(compare, "score")
    compare.add_argument(
        "--tasks",
        nargs="+",
        choices=["qa", "sf", "fc"],
        default=["qa", "sf", "fc"],
        help="tasks to score (default: qa sf fc)",
    )
    add_top_k(compare)
    add_metric(compare)
    add_statistics(compare)
    add_input(
        compare,
        "--linker",
        metavar="MODEL",
        help="link retriever: a trained linker folder or Hub id (default: the bundled MiniLM)",
    )
    add_input(
        compare,
        "--splade-model",
        metavar="MODEL",
        help="splade retriever: a SparseEncoder Hub id or folder (default: "
        "naver/splade-cocondenser-ensembledistil, from the Hub)",
    )
    add_dpr_encoders(compare)
    add_similarity(compare)
    add_candidates(compare)
    add_rerank(compare)
    from namesake.amber.evaluation.fusion import METHODS as FUSION_METHODS

    compare.add_argument(
        "--fuse",
        # amber compare has no --weights: a method that needs them is not offered
        choices=[name for name, method in FUSION_METHODS.items() if method.unweighted],
        metavar="METHOD",
        help="also fuse the first stages of each config (ranx's methods: rrf, combsum, ...; "
        "`namesake fuse --help` lists them), the fusion reranked too under --rerank; "
        "results.md then compares every system with BM25",
    )
    add_input(
        compare,
        "--index-dir",
        help="keep the indexes in <index-dir>/bm25|dense|dense-LABEL (reused when present)",
    )
    compare.set_defaults(run=_amber_compare)

    read = commands.add_parser(
        "read", help="answer AmbER queries with a reader (the paper's Table 7); score them"
    )
    read.add_argument("--task", required=True, choices=["fc", "sf", "qa"], help="which task")
    add_input(
        read,
        "--reader",
        required=True,
        help="Hub id or folder: FEVER classifier (fc), seq2seq generator (sf), extractive QA (qa)",
    )
    add_amber_dataset(read)
    read.add_argument(
        "--collection", required=True, choices=COLLECTIONS, help="config <collection>_<task>"
    )
    add_input(read, "--corpus", required=True, help="KILT knowledge source (document texts)")
    read.add_argument(
        "--setting",
        required=True,
        choices=["oracle", "retrieved"],
        help="read the gold pages (oracle) or the top retrieved pages of --predictions",
    )
    add_input(read, "--predictions", help="retrieved: predictions file of `namesake retrieve`")
    read.add_argument(
        "--top-k", type=positive_int, default=20, help="retrieved: documents read per query (20)"
    )
    add_batch_size(read, 16, "windows per forward pass (16)")
    read.add_argument(
        "--max-length", type=positive_int, default=384, help="tokens per window (384)"
    )
    read.add_argument(
        "--stride", type=non_negative_int, default=128, help="tokens shared by windows (128)"
    )
    read.add_argument(
        "--labels",
        nargs="+",
        help="fc: the classifier's class names in index order, for a config that names them "
        "LABEL_0...: e.g. SUPPORTS REFUTES 'NOT ENOUGH INFO' (see the model card)",
    )
    add_output(
        read,
        "--out",
        "folder: per-query outputs, metrics, table",
        kind="filling",
        writer="amber read",
        required=True,
    )
    read.set_defaults(run=_amber_read)


def _add_build_folder(parser: argparse.ArgumentParser) -> None:
    add_input(parser, "dataset", help="a folder written by `namesake amber build`")


def _amber_qrels(args) -> None:
    from namesake.amber.evaluation.queries import AmberQueries
    from namesake.trec import write_qrels

    qrels = AmberQueries.load(args.dataset, args.config, members=False).qrels()
    write_qrels(args.out, qrels)
    pages = sum(map(len, qrels.values()))
    print(f"Wrote {args.out}: {pages} gold pages of {len(qrels)} queries of {args.config}")


def _amber_read(args) -> None:
    from namesake.amber.evaluation.readers import read_amber, readers_table

    run, per_query = read_amber(
        args.reader,
        args.task,
        args.dataset,
        args.collection,
        args.corpus,
        args.setting,
        args.out,
        predictions=args.predictions,
        k=args.top_k,
        batch_size=args.batch_size,
        max_length=args.max_length,
        stride=args.stride,
        labels=args.labels,
    )
    print(readers_table([run]))
    print(f"Per-query outputs: {per_query}; every run so far: {args.out}/readers.md, metrics.json")


def _amber_compare(args) -> None:
    from namesake.amber.evaluation.compare import ComparePlan, compare_retrievers

    options = {"link": {"model": args.linker}} if args.linker else {}
    if args.splade_model:
        options["splade"] = {"model": args.splade_model}
    if dpr_options(args):
        options["dpr"] = dpr_options(args)
    if args.similarity:
        options["dense"] = {"similarity": args.similarity}
    if args.memory_budget:
        options["bm25"] = {"memory_budget": args.memory_budget}
    plan = ComparePlan(
        retrievers=tuple(dict.fromkeys(args.retriever or ["bm25", "dense"])),
        collections=tuple(dict.fromkeys(args.collections)),
        tasks=tuple(dict.fromkeys(args.tasks)),
        k=args.top_k,
        index_dir=args.index_dir,
        retriever_options=options,
        candidates=args.candidates,
        dense_runs=tuple(args.dense_run or ()),
        rerank=args.rerank,
        rerank_depth=args.rerank_depth,
        fuse=args.fuse,
        scoring=scoring_options(args),
    )
    print(compare_retrievers(args.corpus, args.dataset, args.out, plan))
    print(f"Predictions, per-run reports and plots: {args.out}")


def _amber_build(args) -> None:
    from namesake.amber.build.pipeline import build_amber

    collections = tuple(dict.fromkeys(args.collections))
    report = build_amber(
        args.wikidata,
        args.pageviews,
        args.kilt,
        args.out,
        collections=collections,
        workers=args.workers,
        jsonl_dir=args.jsonl_dir,
        strict=args.strict,
        reference_dir=args.reference,
        work_dir=args.work_dir,
    )
    _print_build_report(report)
    print(f"Wrote {args.out}" + (f" and {args.jsonl_dir}" if args.jsonl_dir else ""))


def _amber_import(args) -> None:
    from namesake.amber.build.released import import_released

    collections = tuple(dict.fromkeys(args.collections))
    report = import_released(args.released, args.out, collections=collections)
    _print_build_report(report)
    print(f"Wrote {args.out}")


def _print_build_report(report) -> None:
    """What `amber build` and `amber import` print of the dataset they wrote."""
    from namesake.amber.build.dataset import statistics_table

    print("\n".join(report.lines()))
    print(statistics_table(report.statistics))


def _amber_stats(args) -> None:
    from namesake.amber.build.dataset import folder_statistics, statistics_table

    found = folder_statistics(args.dataset)
    print(json.dumps(found, indent=2) if args.json else statistics_table(found))


def _amber_push(args) -> None:
    from namesake.errors import NamesakeError

    raise NamesakeError(
        "`namesake amber push` is removed: run `namesake publish dataset amber FOLDER "
        "--repo-id OWNER/NAME` (--stage-only DIR stages and checks it, uploading nothing)"
    )


def _amber_export(args) -> None:
    from namesake.amber.evaluation.beir_export import export_beir
    from namesake.errors import NamesakeError

    if args.distractors and args.pages != "set":
        raise NamesakeError("--distractors goes with --pages set")
    summary = export_beir(
        args.dataset,
        args.config,
        args.corpus,
        args.out,
        pages=args.pages,
        distractors=args.distractors,
        seed=args.seed,
    )
    print("\n".join(summary.lines()))
    print(f"Wrote {args.out}")
