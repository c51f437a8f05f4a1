"""`namesake paper`: print a table the papers report, as transcribed in namesake's package
data (`namesake.papers`), as markdown or JSON."""

from __future__ import annotations

import argparse
import json

from namesake.papers import PAPERS, paper


def register(groups) -> None:
    parser = groups.add_parser(
        "paper", help="print the AmbER, ECQG or WES paper's own tables, as transcribed"
    )
    parser.add_argument("name", choices=PAPERS, help="which paper")
    parser.add_argument(
        "--table",
        help="the table's number or name (default: every transcribed table of the paper)",
    )
    parser.add_argument(
        "--format", choices=("markdown", "json"), default="markdown", help="how to print it"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> None:
    transcribed = paper(args.name)
    tables = [transcribed.table(args.table)] if args.table else list(transcribed.tables.values())
    if args.format == "json":
        records = [table.to_json() for table in tables]
        print(json.dumps(records[0] if args.table else records, indent=2, ensure_ascii=False))
        return
    print(f"{transcribed.source['title']}. {transcribed.rule}\n")
    print("\n\n".join(table.markdown() for table in tables))
