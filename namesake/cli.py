"""The namesake command line: ``namesake <group> <command> ...``."""

from __future__ import annotations

import argparse
import sys

from namesake.commands import (
    amber,
    compare_runs,
    ecqg,
    encode,
    evaluate,
    fuse,
    index,
    leaderboard,
    paper,
    publish,
    retrieve,
    wes,
)
from namesake.commands.arguments import checked_outputs
from namesake.errors import NamesakeError, describe_os_error


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    try:
        with checked_outputs(args):
            args.run(args)
    except NamesakeError as exc:
        sys.exit(f"namesake: error: {exc}")
    except OSError as exc:  # a path the system could not read or write: say which, in a line
        sys.exit(f"namesake: error: {describe_os_error(exc)}")


def build_parser() -> argparse.ArgumentParser:
    """The ``namesake`` parser with every command (each sets ``run``, its function); each
    command group registers itself from its file in `namesake.commands`."""
    parser = argparse.ArgumentParser(prog="namesake", description=__doc__)
    groups = parser.add_subparsers(dest="group", required=True)
    amber.register(groups)
    encode.register(groups)
    index.register(groups)
    retrieve.register(groups)
    evaluate.register(groups)
    compare_runs.register(groups)
    leaderboard.register(groups)
    fuse.register(groups)
    ecqg.register(groups)
    wes.register(groups)
    paper.register(groups)
    publish.register(groups)
    return parser
