"""Two fixes for a first stage, scored side by side on AmbER: fuse it with a second run
(reciprocal rank fusion, e.g. of BM25 and dense) and rerank its top pages with the bundled
cross-encoder (ms-marco-MiniLM-L-12-v2, int8 ONNX), which reads each page's title and
opening passage from the KILT corpus. After ``make demo``::

    python examples/rerank_and_fuse.py                    # the demo's BM25 and dense runs
    python examples/rerank_and_fuse.py bm25.trec dense.trec --corpus kilt.json --out runs/

``namesake fuse`` and ``namesake retrieve --rerank`` do the same from the command line.
"""

from __future__ import annotations

import argparse

PREDICTIONS = "demo_output/retrieval/predictions"
SAMPLE_KILT = "dataset_scripts/amber/sample/kilt_knowledgesource-sample.json"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    first, second = "the first stage, reranked", "the run fused with it (a TREC run or KILT lines)"
    p.add_argument("first", nargs="?", default=f"{PREDICTIONS}/bm25-human_qa.jsonl", help=first)
    p.add_argument("second", nargs="?", default=f"{PREDICTIONS}/dense-human_qa.jsonl", help=second)
    p.add_argument("--dataset", default="demo_output/amber", help="an AmbER folder or Hub id")
    p.add_argument("--config", default="human_qa")
    p.add_argument("--corpus", default=SAMPLE_KILT, help="the KILT pages the runs rank")
    p.add_argument("--reranker", default="bundled", help="bundled, colbert or a cross-encoder")
    p.add_argument("--depth", type=int, default=10, help="pages reranked per query")
    p.add_argument("--out", help="a folder to write the fused and reranked runs to")
    return p


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    from pathlib import Path

    import namesake
    from namesake.retrieval.rerankers import open_reranker  # not in namesake's top-level API

    queries = namesake.AmberQueries.load(args.dataset, args.config)
    first, second = namesake.Run.read(args.first), namesake.Run.read(args.second)
    fused = namesake.fuse([first, second], "rrf")  # namesake.FusionSettings: rrf_k, top_k...
    pages = namesake.read_pages(args.corpus, [first], args.depth)  # one pass over the corpus
    reranked = namesake.rerank(first, queries, open_reranker(args.reranker), pages, args.depth)
    if args.out:
        fused.write(Path(args.out) / "rrf.trec", "trec")
        reranked.write(Path(args.out) / f"{reranked.name}.jsonl")  # keeps first-stage scores

    labels = {fused.name: f"rrf({first.name}, {second.name})"}
    columns = ["accuracy@1", "accuracy@1_head", "accuracy@1_tail", "entity_confusion"]
    print(f"{args.config}, {len(queries)} queries; points with 95% intervals over AmbER sets")
    print(" | ".join(["run", *columns]))
    for run in (first, second, fused, reranked):
        figures = namesake.score(run, queries).to_pandas()
        cells = [f"{v:.1f} [{lo:.1f}, {hi:.1f}]" for v, lo, hi in figures.loc[columns].values]
        print(" | ".join([labels.get(run.name, run.name), *cells]))


if __name__ == "__main__":
    main()
