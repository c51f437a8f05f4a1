"""Builds the WES Hub dataset: a thin entry point over `namesake wes build`.

With no --dump it mines the real 206-page English Wikipedia excerpt (tests/data, or
../shared/wikipedia in a checkout without it) with thresholds 1, 2 and 5 and year 2016 (its
revisions are of spring 2016; the file name carries no date), and with every
--hard-negatives strategy: a hardpairs config per threshold, and each strategy's zero-shot
AUC in the card. Pass --dump with a full
`enwiki-YYYYMMDD-pages-articles*.xml.bz2` to rebuild the published configs (thresholds
5 10 20 by default, the year from the file name). Other options go to `namesake wes build`
(see `namesake wes build --help`); the card template is card_template.md.
"""

import argparse
import sys
from pathlib import Path

from namesake.cli import main as namesake

ROOT = Path(__file__).resolve().parent.parent.parent
SAMPLE_NAME = "enwiki-sample-pages-articles.xml.bz2"
SAMPLE_CANDIDATES = (
    ROOT / "tests" / "data" / SAMPLE_NAME,
    ROOT.parent / "shared" / "wikipedia" / SAMPLE_NAME,
)
SAMPLE_YEAR = "2016"
SAMPLE_THRESHOLDS = ["1", "2", "5"]
SAMPLE_HARD_NEGATIVES = ["lexical", "substring", "cooccurrence"]


def default_dump() -> Path:
    return next((p for p in SAMPLE_CANDIDATES if p.is_file()), SAMPLE_CANDIDATES[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dump", nargs="+", help=f"default: {SAMPLE_NAME}")
    parser.add_argument("--out", required=True)
    args, rest = parser.parse_known_args(argv)
    dump = args.dump or [str(default_dump())]
    if args.dump is None:  # the sample: small thresholds, and a year its name does not give
        if not any(a.startswith("--year") for a in rest):
            rest += ["--year", SAMPLE_YEAR]
        if not any(a.startswith("--thresholds") for a in rest):
            rest += ["--thresholds", *SAMPLE_THRESHOLDS]
        if not any(a.startswith("--hard-negatives") for a in rest):
            rest += ["--hard-negatives", *SAMPLE_HARD_NEGATIVES]
    namesake(["wes", "build", "--dump", *dump, "--out", args.out, *rest])
    out = Path(args.out).resolve()
    print(f"\nWES dataset folder: {out}")
    print("Load it with:")
    print("    from datasets import load_dataset")
    print(f'    load_dataset("{out}", "<year>thresh<n>pairs")')
    print(f'    load_dataset("{out}", "<year>thresh<n>hardpairs")  # with --hard-negatives')


if __name__ == "__main__":
    sys.exit(main())
