"""`namesake compare-runs`: two runs on one AmbER config, every measure with a paired
significance test clustered by AmbER set, Holm-corrected, and the difference's 95% interval."""

from __future__ import annotations

import argparse
import json

from namesake.commands.arguments import (
    add_amber_config,
    add_input,
    add_output,
    add_scoring,
    scoring_options,
)


def register(groups) -> None:
    parser = groups.add_parser(
        "compare-runs",
        help="is run B better than run A on AmbER? paired tests over AmbER sets, every measure",
    )
    parser.description = (
        "Compare two runs (TREC runs or KILT JSON lines, told from the content) on one AmbER "
        "config: for every measure, B - A with its 95%% bootstrap interval over AmbER sets, "
        "the p-value of a paired randomization test that flips whole sets, Holm's adjustment "
        "over all measures, and beside the IR measures the same test with queries as units; then "
        "each run's within-set popularity effect (odds ratio of success@1 per 10x page views, "
        "share of confusions with the more popular namesake) and B's against A's."
    )
    add_input(parser, "run_a", metavar="A", help="the baseline run")
    add_input(parser, "run_b", metavar="B", help="the run compared with it")
    add_amber_config(parser)
    parser.add_argument(
        "--names", nargs=2, metavar=("NAME_A", "NAME_B"), help="labels (default: file stems)"
    )
    add_scoring(parser)
    add_output(
        parser,
        "--out",
        "also write comparison.md and comparison.json into this folder",
        kind="folder",
        writer="compare-runs",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> None:
    from namesake import AmberQueries, Run, compare_pair, score
    from namesake.amber.evaluation.compare_runs import check_distinct, default_names
    from namesake.outputs import atomic_directory

    paths = (args.run_a, args.run_b)
    check_distinct(paths)
    names = tuple(args.names) if args.names else default_names(tuple(map(str, paths)))
    options = scoring_options(args)
    queries = AmberQueries.load(args.dataset, args.config)
    a, b = (
        score(Run.read(path, args.format, name=name), queries, options)
        for path, name in zip(paths, names, strict=True)
    )
    comparison = compare_pair(a, b, options.statistics)
    table, summary, coverage = comparison.table(), comparison.summary(), comparison.coverage_lines()
    popularity = comparison.popularity_table()
    print(table)
    print(f"\n{popularity}\n")
    print(summary)
    print("\n".join(coverage))
    if args.out:
        with atomic_directory(args.out, writer="compare-runs") as staging:
            (staging / "comparison.md").write_text(
                f"# {comparison.names[1]} against {comparison.names[0]} on {args.config}\n\n"
                f"{summary}\n\n"
                + "".join(f"- {line}\n" for line in coverage)
                + f"\n{table}\n\n{popularity}\n",
                encoding="utf-8",
            )
            (staging / "comparison.json").write_text(
                json.dumps(comparison.record(), indent=2, allow_nan=True) + "\n", encoding="utf-8"
            )
        print(f"Wrote {args.out}/comparison.md and comparison.json")
