"""The namesake command line: ``namesake <group> <command> ...``."""

from __future__ import annotations

import argparse
import json
import os
import sys

from namesake.io import BadInputError, NamesakeError


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="namesake", description=__doc__)
    groups = parser.add_subparsers(dest="group", required=True)
    _add_amber(groups.add_parser("amber", help="build, inspect and publish the AmbER benchmark"))
    _add_retrieve(groups.add_parser("retrieve", help="answer AmbER queries with a retriever"))
    _add_evaluate(groups.add_parser("evaluate", help="score AmbER predictions, with a report"))
    _add_ecqg(groups.add_parser("ecqg", help="entity-conditioned question generation steps"))
    report = groups.add_parser(
        "attention-report",
        add_help=False,
        help="passage-encoder attention statistics (entropy, first sentence vs rest) per model",
    )
    report.set_defaults(run=_attention_report, delegated=True)
    _add_wes(groups.add_parser("wes", help="mine WES entity synonyms from a Wikipedia dump"))
    # Some commands hand their own options to the module that defines them (`delegated`).
    args, extra = parser.parse_known_args(argv)
    if extra and not getattr(args, "delegated", False):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    args.extra = extra
    try:
        args.run(args)
    except (NamesakeError, FileNotFoundError) as exc:
        sys.exit(f"namesake: error: {exc}")


def _add_amber(parser: argparse.ArgumentParser) -> None:
    commands = parser.add_subparsers(dest="command", required=True)

    build = commands.add_parser(
        "build", help="rebuild AmbER from Wikidata, page-view and KILT dumps"
    )
    build.add_argument("--wikidata", required=True, help="Wikidata JSON dump (.json.bz2/.gz/plain)")
    build.add_argument(
        "--pageviews",
        required=True,
        help="monthly page views: pagecounts-ez totals or pageviews-complete (bz2/gz/plain)",
    )
    build.add_argument("--kilt", required=True, help="KILT knowledge source (JSON lines)")
    build.add_argument("--out", required=True, help="output Hub dataset folder")
    build.add_argument(
        "--collections", default="human,nonhuman", help="comma-separated: human,nonhuman"
    )
    build.add_argument(
        "--workers", type=int, default=os.cpu_count() or 1, help="processes (default: all cores)"
    )
    build.add_argument("--jsonl-dir", help="also write the published JSON-lines layout here")
    build.add_argument("--strict", action="store_true", help="fail on the first bad input line")
    build.add_argument(
        "--reference", help="folder with <collection>/ templates and type lists (default: bundled)"
    )
    build.set_defaults(run=_amber_build)

    stats = commands.add_parser("stats", help="print the paper's Table 4 figures for a build")
    stats.add_argument("dataset", help="a folder written by `namesake amber build`")
    stats.add_argument("--json", action="store_true", help="print the full statistics as JSON")
    stats.set_defaults(run=_amber_stats)

    push = commands.add_parser("push", help="upload a build to the Hugging Face Hub")
    push.add_argument("dataset", help="a folder written by `namesake amber build`")
    push.add_argument("--repo-id", required=True, help="e.g. your-name/amber")
    push.add_argument("--private", action="store_true")
    push.add_argument("--token", help="Hub token (default: the logged-in one)")
    push.add_argument("--dry-run", action="store_true", help="list the files, upload nothing")
    push.set_defaults(run=_amber_push)

    compare = commands.add_parser(
        "compare", help="run and score retrievers on every AmbER config; print one table"
    )
    compare.add_argument("--corpus", required=True, help="KILT knowledge source (JSON lines)")
    compare.add_argument("--dataset", required=True, help="AmbER folder or Hub id")
    compare.add_argument("--out", required=True, help="folder for predictions and reports")
    compare.add_argument(
        "--retriever", action="append", choices=["bm25", "dense"], help="default: both"
    )
    compare.add_argument("--collections", default="human,nonhuman")
    compare.add_argument("--k", type=int, default=100, help="documents retrieved per query")
    compare.add_argument("--metric", help="entity_confusion module folder (default: metrics/)")
    compare.add_argument(
        "--index-dir", help="keep the indexes in <index-dir>/bm25|dense (reused when present)"
    )
    compare.set_defaults(run=_amber_compare)


def _add_ecqg(parser: argparse.ArgumentParser) -> None:
    commands = parser.add_subparsers(dest="command", required=True)
    passages = commands.add_parser(
        "passages", help="100-word passages (title kept) from a KILT file or a Wikipedia dump"
    )
    source = passages.add_mutually_exclusive_group(required=True)
    source.add_argument("--kilt", help="KILT knowledge source (JSON lines)")
    source.add_argument("--wikipedia", help="pages-articles XML dump (bz2 or plain)")
    passages.add_argument("--out", required=True, help="output Parquet")
    passages.set_defaults(run=_ecqg_passages)

    rank = commands.add_parser(
        "rank-entities", add_help=False, help="NER, then entities ranked by encoder attention"
    )
    rank.set_defaults(run=_ecqg_rank, delegated=True)

    warm = commands.add_parser(
        "warm-start", help="a BERT2BERT question generator warm-started from an encoder"
    )
    warm.add_argument("--encoder", help="BERT-style encoder path or Hub id (default: bundled)")
    warm.add_argument("--out", required=True)
    warm.set_defaults(run=_ecqg_warm_start)


def _ecqg_passages(args) -> None:
    from namesake.ecqg.passages import passages_from_kilt, passages_from_wikipedia, write_passages

    source = passages_from_kilt(args.kilt) if args.kilt else passages_from_wikipedia(args.wikipedia)
    counts = write_passages(source, args.out)
    print(f"Wrote {counts['passages']:,} passages to {args.out}")


def _ecqg_rank(args) -> None:
    from namesake.ecqg.attention import rank_main

    rank_main(args.extra)


def _attention_report(args) -> None:
    from namesake.ecqg.attention import report_main

    report_main(args.extra)


def _ecqg_warm_start(args) -> None:
    from namesake.ecqg.generation import warm_start_generator
    from namesake.retrieval import DEFAULT_MODEL

    print(f"Wrote {warm_start_generator(args.encoder or DEFAULT_MODEL, args.out)}")


def _add_retrieve(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--corpus", help="KILT knowledge source; needed unless --index exists")
    parser.add_argument("--dataset", required=True, help="AmbER folder or Hub id")
    parser.add_argument("--config", required=True, help="e.g. human_qa, nonhuman_fc")
    parser.add_argument("--retriever", required=True, choices=["bm25", "dense"])
    parser.add_argument("--model", help="dense: sentence-transformers model path or Hub id")
    parser.add_argument("--query-model", help="dense, DPR-style: separate question encoder")
    parser.add_argument("--index", help="saved index folder: loaded if present, else built there")
    parser.add_argument("--index-type", default="flat", choices=["flat", "ivf", "hnsw"])
    parser.add_argument("--k", type=int, default=100, help="documents per query")
    parser.add_argument("--out", required=True, help="predictions file (JSON lines)")
    parser.set_defaults(run=_retrieve)


def _add_evaluate(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dataset", required=True, help="AmbER folder or Hub id")
    parser.add_argument("--config", required=True, help="e.g. human_qa, nonhuman_fc")
    parser.add_argument("--predictions", required=True, help="predictions file (JSON lines)")
    parser.add_argument(
        "--k", type=int, action="append", help="accuracy@k cut-offs (repeat; default 1 and 20)"
    )
    parser.add_argument("--out", required=True, help="report folder")
    parser.add_argument(
        "--allow-missing", action="store_true", help="score queries without a prediction as empty"
    )
    parser.add_argument("--metric", help="entity_confusion module folder (default: metrics/)")
    parser.set_defaults(run=_evaluate)


def _add_wes(parser: argparse.ArgumentParser) -> None:
    commands = parser.add_subparsers(dest="command", required=True)
    build = commands.add_parser(
        "build",
        help="mine WES (link-text synonyms, pairs with negatives) from a pages-articles dump",
    )
    build.add_argument(
        "--dump",
        required=True,
        nargs="+",
        help="pages-articles XML dump(s), bz2 (multistream split over workers) or plain; "
        "glob patterns allowed, e.g. 'enwiki-*-pages-articles*.xml.bz2'",
    )
    build.add_argument("--out", required=True, help="output Hub dataset folder")
    build.add_argument(
        "--thresholds",
        default="5,10,20",
        help="minimum distinct linking articles, one corpus per value (default: 5,10,20)",
    )
    build.add_argument(
        "--year", type=int, help="config name prefix (default: the year in the dump's file name)"
    )
    build.add_argument("--seed", type=int, default=0, help="negatives and splits (default: 0)")
    build.add_argument(
        "--workers", type=int, default=os.cpu_count() or 1, help="processes (default: all cores)"
    )
    build.add_argument(
        "--dictionary-filter",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="drop link texts that are dictionary words when the title is not (default: on)",
    )
    build.add_argument(
        "--hard-negatives",
        choices=["lexical"],
        help="lexical: the other article's link text sharing most tokens with the title",
    )
    build.add_argument(
        "--redirects",
        action="store_true",
        help="follow redirects: links to a redirect count for its target, redirect titles "
        "become synonyms of it",
    )
    build.add_argument(
        "--all-targets",
        action="store_true",
        help="keep links to pages missing from the dump (for excerpts; default: existing "
        "articles only)",
    )
    build.add_argument("--strict", action="store_true", help="fail on the first bad page")
    build.set_defaults(run=_wes_build)

    score = commands.add_parser(
        "score", help="score QA answers against references with the wes_similarity metric"
    )
    score.add_argument(
        "--answer",
        nargs="+",
        action="append",
        required=True,
        metavar="TEXT",
        help="a prediction followed by its reference answers (repeat for more examples)",
    )
    score.add_argument("--model", help="cross-encoder or bi-encoder (default: the metric's)")
    score.add_argument("--threshold", type=float, default=0.5)
    score.add_argument("--metric", help="wes_similarity module folder (default: metrics/)")
    score.set_defaults(run=_wes_score)


def _wes_build(args) -> None:
    from namesake.wes.build import build_wes, threshold_list
    from namesake.wes.dataset import statistics_table

    report = build_wes(
        args.dump,
        args.out,
        thresholds=threshold_list(args.thresholds),
        year=args.year,
        seed=args.seed,
        workers=args.workers,
        dictionary=args.dictionary_filter,
        hard_negatives=args.hard_negatives,
        redirects=args.redirects,
        all_targets=args.all_targets,
        strict=args.strict,
    )
    print("\n".join(report.lines()))
    print(statistics_table(report.statistics))
    print(f"Wrote {args.out}: configs {', '.join(report.configs)}")


def _wes_score(args) -> None:
    from namesake.metrics import load_metric

    if any(len(answer) < 2 for answer in args.answer):
        raise NamesakeError("each --answer needs a prediction and at least one reference")
    predictions = [answer[0] for answer in args.answer]
    references = [answer[1:] for answer in args.answer]
    result = load_metric("wes_similarity", args.metric).compute(
        predictions=predictions,
        references=references,
        model_name_or_path=args.model,
        threshold=args.threshold,
    )
    print(f"Scorer: {result['scorer']} ({result['model']})")
    print("| Prediction | References | WES score | Same? |\n|---|---|---:|---|")
    for prediction, refs, score in zip(predictions, references, result["scores"], strict=True):
        same = "yes" if score >= args.threshold else "no"
        print(f"| {prediction} | {' / '.join(refs)} | {score:.3f} | {same} |")
    print(
        f"Mean WES score {result['score']:.3f}, accuracy {result['accuracy']:.2f}; "
        f"exact match {result['exact_match']:.1f}, token F1 {result['f1']:.1f} "
        "(AmbER-normalised, 0-100)"
    )


def _retrieve(args) -> None:
    from namesake.amber.retrieve import open_retriever, retrieve_config

    options = {}
    if args.retriever == "dense":
        options = {"index": args.index_type, "query_model": args.query_model}
        if args.model:
            options["model"] = args.model
    retriever = open_retriever(args.retriever, args.corpus, args.index, **options)
    count = retrieve_config(retriever, args.dataset, args.config, args.k, args.out)
    print(f"Wrote {count} predictions to {args.out}")


def _evaluate(args) -> None:
    from namesake.amber.report import evaluate_run, results_table
    from namesake.metrics import load_metric

    k_values = args.k or [1, 20]
    metrics = evaluate_run(
        args.dataset,
        args.config,
        args.predictions,
        args.out,
        k_values,
        load_metric("entity_confusion", args.metric),
        allow_missing=args.allow_missing,
    )
    print(results_table([({"Config": args.config}, metrics)], k_values))
    print(f"Report: {args.out}/report.md, metrics.json, popularity_gap.png")


def _amber_compare(args) -> None:
    from namesake.amber.compare import compare_retrievers

    table = compare_retrievers(
        args.corpus,
        args.dataset,
        args.out,
        retrievers=tuple(args.retriever or ("bm25", "dense")),
        collections=tuple(c.strip() for c in args.collections.split(",") if c.strip()),
        k=args.k,
        metric_path=args.metric,
        index_dir=args.index_dir,
    )
    print(table)
    print(f"Predictions, per-run reports and plots: {args.out}")


def _amber_build(args) -> None:
    from namesake.amber.build import build_amber
    from namesake.amber.dataset import statistics_table

    collections = tuple(c.strip() for c in args.collections.split(",") if c.strip())
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
    )
    print("\n".join(report.lines()))
    print(statistics_table(report.statistics))
    print(f"Wrote {args.out}" + (f" and {args.jsonl_dir}" if args.jsonl_dir else ""))


def _amber_stats(args) -> None:
    from namesake.amber.dataset import read_config, statistics, statistics_table
    from namesake.amber.reference import COLLECTIONS

    found = {
        c: statistics(read_config(args.dataset, c), read_config(args.dataset, f"{c}_entities"))
        for c in COLLECTIONS
        if os.path.isdir(os.path.join(args.dataset, c))
    }
    if not found:
        raise BadInputError(args.dataset, None, "no human/ or nonhuman/ config: not an AmbER build")
    print(json.dumps(found, indent=2) if args.json else statistics_table(found))


def _amber_push(args) -> None:
    from namesake.hub import list_upload, push_folder

    files = list_upload(args.dataset)
    if args.dry_run:
        print(f"Would upload {len(files)} file(s) to datasets/{args.repo_id}:")
        print("\n".join(f"  {name}" for name in files))
        return
    url = push_folder(args.dataset, args.repo_id, private=args.private, token=args.token)
    print(f"Uploaded {len(files)} file(s): {url}")
