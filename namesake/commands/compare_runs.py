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
    add_seed,
    positive_int,
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
        "over all measures, and beside the IR measures the same test with queries as units."
    )
    add_input(parser, "run_a", metavar="A", help="the baseline run")
    add_input(parser, "run_b", metavar="B", help="the run compared with it")
    add_amber_config(parser)
    parser.add_argument(
        "--names", nargs=2, metavar=("NAME_A", "NAME_B"), help="labels (default: file stems)"
    )
    add_scoring(parser)
    parser.add_argument(
        "--test-resamples",
        type=positive_int,
        default=10_000,
        metavar="N",
        help="random sign flips of the sets (and of the queries) in the paired tests "
        "(default: 10000; all of them when there are fewer)",
    )
    add_seed(parser, "of the resampling (default: 0)")
    add_output(
        parser,
        "--out",
        "also write comparison.md and comparison.json into this folder",
        kind="folder",
        writer="compare-runs",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> None:
    from namesake.amber.evaluation.compare_runs import compare_runs
    from namesake.outputs import atomic_directory

    comparison = compare_runs(
        args.dataset,
        args.config,
        args.run_a,
        args.run_b,
        names=tuple(args.names) if args.names else None,
        k_values=tuple(sorted(set(args.cutoffs))),
        predictions_format=args.format,
        allow_missing=args.allow_missing,
        bootstrap_resamples=args.bootstrap_resamples,
        test_resamples=args.test_resamples,
        seed=args.seed,
    )
    table, summary, coverage = comparison.table(), comparison.summary(), comparison.coverage_lines()
    print(table)
    print(summary)
    print("\n".join(coverage))
    if args.out:
        with atomic_directory(args.out, writer="compare-runs") as staging:
            (staging / "comparison.md").write_text(
                f"# {comparison.names[1]} against {comparison.names[0]} on {args.config}\n\n"
                f"{summary}\n\n" + "".join(f"- {line}\n" for line in coverage) + f"\n{table}\n",
                encoding="utf-8",
            )
            (staging / "comparison.json").write_text(
                json.dumps(comparison.record(), indent=2, allow_nan=True) + "\n", encoding="utf-8"
            )
        print(f"Wrote {args.out}/comparison.md and comparison.json")
