"""`namesake evaluate`: AmbER predictions scored, with a report beside the paper's numbers
(`namesake.amber.evaluation.evaluate`)."""

from __future__ import annotations

import argparse

from namesake.amber.evaluation.retrieve import RETRIEVER_KINDS
from namesake.commands.arguments import (
    add_amber_config,
    add_input,
    add_metric,
    add_output,
    add_scoring,
    scoring_options,
)


def register(groups) -> None:
    _add_evaluate(groups.add_parser("evaluate", help="score AmbER predictions, with a report"))


def _add_evaluate(parser: argparse.ArgumentParser) -> None:
    add_amber_config(parser)
    add_input(
        parser,
        "--predictions",
        required=True,
        help="predictions file: KILT JSON lines or a TREC run (told from the content)",
    )
    add_output(
        parser,
        "--out",
        "report folder",
        kind="folder",
        writer="evaluate",
        required=True,
    )
    add_scoring(parser)
    add_metric(parser)
    from namesake.amber.evaluation.paper import PAPER_KINDS

    parser.add_argument(
        "--retriever",
        choices=tuple(dict.fromkeys(RETRIEVER_KINDS + PAPER_KINDS)),
        help="the kind of retriever that made the predictions: the table shows the AmbER "
        "paper's figure for the same kind beside ours (default: unknown, no figure)",
    )
    parser.add_argument(
        "--per-query-format",
        choices=["parquet", "trec"],
        default="parquet",
        help="the report's per-query results: per_query.parquet (default: every measure, the "
        "entity, its popularity rank in its set, the namesake it was confused with), or "
        "per_query.txt in trec_eval -q's lines",
    )
    parser.add_argument(
        "--by",
        nargs="+",
        default=[],
        metavar="FIELD",
        help="break the headline measures down by popularity (deciles of log10 page views), "
        "property, task or set-size, each group's figure with its 95%% interval, in the "
        "report and printed (several, space-separated)",
    )
    parser.set_defaults(run=_evaluate)


def _evaluate(args) -> None:
    from namesake import AmberQueries, Run, score
    from namesake.amber.evaluation.breakdowns import check_fields
    from namesake.amber.evaluation.paper import paper_line
    from namesake.amber.evaluation.report import (
        IR_LINE,
        coverage_lines,
        intervals_line,
        write_report,
    )

    check_fields(args.by)  # before any work: a mistyped field writes nothing
    options = scoring_options(args)
    queries = AmberQueries.load(args.dataset, args.config)
    run = Run.read(args.predictions, args.format)
    run.provenance["retriever"] = args.retriever  # the kind whose paper figures go beside
    evaluation = score(run, queries, options)
    analysis = write_report(
        args.out, evaluation, list(options.k_values), args.per_query_format, args.by
    )
    metrics = evaluation.metrics
    print(evaluation.to_markdown(label={"Config": args.config}))
    print(paper_line(args.retriever))
    print(f"{intervals_line(metrics)} {IR_LINE}")
    print("\n".join(coverage_lines(metrics["coverage"], args.config)))
    print(analysis.popularity_effect.summary())
    for breakdown in analysis.breakdowns:
        print(f"\n{breakdown.to_markdown()}\n")
    per_query = "per_query.txt" if args.per_query_format == "trec" else "per_query.parquet"
    print(
        f"Report: {args.out}/report.md, metrics.json, popularity_gap.png, "
        f"popularity_curve.png, popularity_curve.svg, popularity_curve.csv, {per_query}"
    )
