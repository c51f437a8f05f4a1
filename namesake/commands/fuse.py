"""`namesake fuse`: several runs on the same queries fused into one (ranx's fusion methods),
written as a TREC run or KILT JSON lines and scored like any other."""

from __future__ import annotations

import argparse

from namesake.commands.arguments import (
    add_input,
    add_output,
    add_run_name,
    check_run_name,
    positive_int,
)


def register(groups) -> None:
    from namesake.amber.evaluation.fusion import METHODS, NORMS, RBC_PHI, RRF_K, WEIGHTED

    parser = groups.add_parser("fuse", help="fuse runs of the same queries into one (ranx)")
    parser.description = (
        "Fuse runs (TREC runs or KILT JSON lines, told from the content) that answer the same "
        "queries, through ranx: reciprocal rank fusion by default."
    )
    add_input(parser, "runs", nargs="+", metavar="RUN", help="two runs or more")
    parser.add_argument(
        "--method", choices=list(METHODS), default="rrf", help="fusion method (default: rrf)"
    )
    parser.add_argument(
        "--rrf-k", type=positive_int, default=RRF_K, help=f"rrf's constant k (default: {RRF_K})"
    )
    parser.add_argument(
        "--rbc-phi",
        type=float,
        default=RBC_PHI,
        metavar="PHI",
        help=f"rbc's persistence, above 0 and below 1 (default: {RBC_PHI})",
    )
    parser.add_argument(
        "--weights",
        type=float,
        nargs="+",
        metavar="W",
        help=f"one weight per run, each at least 0, for {', '.join(WEIGHTED)} (wsum needs them)",
    )
    parser.add_argument(
        "--norm",
        choices=NORMS,
        default="min-max",
        help="score normalisation of score-based methods, per query (default: min-max)",
    )
    parser.add_argument(
        "--top-k", type=positive_int, default=100, help="pages kept per query (default: 100)"
    )
    parser.add_argument(
        "--format", choices=["trec", "kilt"], default="trec", help="output format (default: trec)"
    )
    add_run_name(parser, "default: the method")
    add_output(parser, "--out", "the fused run", kind="file", required=True)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> None:
    from namesake.amber.evaluation.fusion import fuse_runs

    check_run_name(args)  # before the runs are read, not after the fusion
    fused = fuse_runs(
        args.runs,
        args.method,
        k=args.rrf_k,
        weights=args.weights,
        norm=args.norm,
        top_k=args.top_k,
        phi=args.rbc_phi,
    )
    fused.write(args.out, args.format, args.run_name or args.method)
    print(f"Wrote {args.out}: {args.method} of {len(args.runs)} runs, {len(fused)} queries")
