"""Score a run on AmbER: accuracy@k on head and tail queries, entity confusion and the
standard IR measures, each with its 95% interval over AmbER sets.

The run is a TREC run (``qid Q0 docid rank score tag``) from any system, or namesake's KILT
JSON lines; the format is told from the content. After ``make demo``::

    python examples/score_trec_run.py                     # the demo's BM25 run on human_qa
    python examples/score_trec_run.py my_system.trec --dataset demo_output/amber --config human_qa

``namesake evaluate`` prints the same figures and writes a report folder; this is the same
scoring in Python, through ``namesake.score``.
"""

from __future__ import annotations

import argparse


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "run",
        nargs="?",
        default="demo_output/retrieval/predictions/bm25-human_qa.jsonl",
        help="a TREC run or KILT JSON lines (default: the demo's BM25 run)",
    )
    p.add_argument("--dataset", default="demo_output/amber", help="an AmbER folder or Hub id")
    p.add_argument("--config", default="human_qa")
    p.add_argument("--cutoffs", type=int, nargs="+", default=[1, 20], help="accuracy@k's k")
    p.add_argument("--allow-missing", action="store_true", help="score missing queries as empty")
    return p


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    import namesake

    queries = namesake.AmberQueries.load(args.dataset, args.config)
    options = namesake.ScoringOptions(tuple(args.cutoffs), allow_missing=args.allow_missing)
    evaluation = namesake.score(namesake.Run.read(args.run), queries, options)
    figures = evaluation.to_pandas()  # one row per figure: value, low, high

    def cell(name: str) -> str:
        value, low, high = figures.loc[name]
        return f"{value:.1f} [{low:.1f}, {high:.1f}]"

    sets = queries.num_sets
    print(f"{evaluation.name} on {args.config}, {len(queries)} queries in {sets} AmbER sets")
    print("(points, each with its 95% interval from resampling the sets)")
    rows = [("measure", "all", "head", "tail")]
    split = [name for name in figures.index if f"{name}_head" in figures.index]
    for name in split:  # accuracy@k, entity confusion, nDCG@10, MRR@10, ...
        rows.append((name, cell(name), cell(f"{name}_head"), cell(f"{name}_tail")))
    for name in figures.index:  # all_correct@k (every query of a set right), the gaps
        if name not in split and not name.endswith(("_head", "_tail")):
            rows.append((name, cell(name), "", ""))
    for row in rows:
        print(f"{row[0]:<17} {row[1]:<21} {row[2]:<21} {row[3]}".rstrip())


if __name__ == "__main__":
    main()
