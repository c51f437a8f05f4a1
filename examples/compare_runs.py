"""Is run B better than run A on AmbER? Every measure compared, paired over AmbER sets.

For each measure: both runs' figures, B - A with its 95% bootstrap interval, the p-value of a
paired randomization test that flips whole AmbER sets between the runs (a set's queries share
a name and move together), Holm's correction over all the measures, and the verdict; then how
much each run favours the popular entity of a name. After ``make demo``::

    python examples/compare_runs.py                       # the demo's BM25 against dense
    python examples/compare_runs.py bm25.trec mine.trec --names BM25 mine

``namesake compare-runs`` writes the same comparison to a folder; this is it in Python,
through ``namesake.score`` and ``namesake.compare_pair``.
"""

from __future__ import annotations

import argparse

PREDICTIONS = "demo_output/retrieval/predictions"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "a", nargs="?", default=f"{PREDICTIONS}/bm25-human_qa.jsonl", help="the baseline"
    )
    p.add_argument(
        "b", nargs="?", default=f"{PREDICTIONS}/dense-human_qa.jsonl", help="B, against A"
    )
    p.add_argument("--dataset", default="demo_output/amber", help="an AmbER folder or Hub id")
    p.add_argument("--config", default="human_qa")
    p.add_argument("--names", nargs=2, metavar=("A", "B"), help="default: the files' stems")
    return p


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    import namesake

    queries = namesake.AmberQueries.load(args.dataset, args.config)  # loaded once, for both
    names = args.names or (None, None)
    a, b = (
        namesake.score(namesake.Run.read(path, name=name), queries)
        for path, name in zip((args.a, args.b), names, strict=True)
    )
    comparison = namesake.compare_pair(a, b)
    print(comparison.summary(), comparison.table(), comparison.popularity_table(), sep="\n\n")


if __name__ == "__main__":
    main()
