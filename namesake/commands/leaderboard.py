"""`namesake leaderboard`: N runs on one AmbER config, ranked, with the rank's interval, every
pair tested over AmbER sets (Holm over pairs x measures) and the top group marked."""

from __future__ import annotations

import argparse

from namesake.commands.arguments import (
    add_amber_config,
    add_input,
    add_output,
    add_scoring,
    scoring_options,
)


def register(groups) -> None:
    parser = groups.add_parser(
        "leaderboard",
        help="rank N runs on AmbER: headline measures, rank intervals, every pair tested",
    )
    parser.description = (
        "Rank runs (TREC runs or KILT JSON lines, told from the content) on one AmbER config "
        "by accuracy@1: each run's headline measures with their 95%% intervals, its rank with "
        "a bootstrap interval of the rank over AmbER sets, every pair of runs compared by a "
        "paired randomization test flipping whole sets (Holm over all pairs x measures), and "
        "the top group, the runs not significantly below the best."
    )
    add_input(parser, "runs", metavar="RUN", nargs="+", help="the runs, two or more")
    add_amber_config(parser)
    parser.add_argument("--names", nargs="+", metavar="NAME", help="labels (default: file stems)")
    parser.add_argument(
        "--baseline", metavar="NAME", help="also print every run against this one (a name)"
    )
    add_scoring(parser)
    add_output(
        parser,
        "--out",
        "also write leaderboard.md, leaderboard.csv, leaderboard.json and the popularity "
        "curve of every run (popularity_curve.png, .svg, .csv) into this folder",
        kind="folder",
        writer="leaderboard",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> None:
    """Every bad input is refused before anything is written: the names, files and options
    before any run is read, then each run's coverage of the config (and whether it answers
    the queries the runs before it answer) before it is scored. Each run is scored as soon
    as it is read and let go, so that one run at a time is held (five at AmbER's full size
    would take 1.6 GB)."""
    from namesake import AmberQueries, Run, score
    from namesake.amber.evaluation.leaderboard import (
        check_baseline,
        check_cutoffs,
        check_same_coverage,
        leaderboard,
        run_names,
        write_leaderboard,
    )
    from namesake.amber.evaluation.scoring import check_coverage, run_coverage

    names = run_names(args.runs, args.names)
    check_baseline(args.baseline, names)
    options = scoring_options(args)
    check_cutoffs(options.k_values)
    queries = AmberQueries.load(args.dataset, args.config)
    coverages, evaluations = [], []
    for path, name in zip(args.runs, names, strict=True):
        run = Run.read(path, args.format, name=name)
        coverages.append((name, run_coverage(queries, run)))
        check_coverage(coverages[-1][1], args.config, options.allow_missing, path)
        check_same_coverage(coverages, args.config)
        evaluations.append(score(run, queries, options))
        del run  # before the next is read: one run held at a time
    board = leaderboard(evaluations, options.statistics, args.baseline)
    print(f"{board.table()}\n\n{board.top_group_line()}")
    if args.baseline:
        print(f"\n{board.against_baseline()}")
    if args.out:
        write_leaderboard(args.out, board, evaluations)
        print(
            f"Wrote {args.out}/leaderboard.md, leaderboard.csv, leaderboard.json and the "
            "popularity curve of every run: popularity_curve.png, .svg, .csv"
        )
