"""Builds the AmbER Hub dataset: a thin entry point over `namesake amber build`.

With no dump arguments it builds the bundled hand-made sample (see sample/README.md);
pass --wikidata/--pageviews/--kilt to rebuild from real dumps, then upload it with
`namesake publish dataset amber`.
"""

import argparse
import sys
from pathlib import Path

from namesake.cli import main as namesake

SAMPLE = Path(__file__).parent / "sample"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--wikidata", default=str(SAMPLE / "wikidata-sample-all.json.bz2"))
    parser.add_argument(
        "--pageviews", default=str(SAMPLE / "pagecounts-sample-views-ge-5-totals.bz2")
    )
    parser.add_argument("--kilt", default=str(SAMPLE / "kilt_knowledgesource-sample.json"))
    parser.add_argument("--out", required=True)
    args, rest = parser.parse_known_args()
    namesake(
        [
            "amber",
            "build",
            "--wikidata",
            args.wikidata,
            "--pageviews",
            args.pageviews,
            "--kilt",
            args.kilt,
            "--out",
            args.out,
            *rest,
        ]
    )
    out = Path(args.out).resolve()
    print(f"\nAmbER dataset folder: {out}")
    print("Load it with:")
    print(f'    from datasets import load_dataset\n    load_dataset("{out}", "human")')


if __name__ == "__main__":
    sys.exit(main())
