"""Export an AmbER config as a BEIR folder and evaluate a model on it with the ``beir``
library: its ``GenericDataLoader`` reads the folder, exact dense search ranks the corpus with
a sentence-transformers model (the bundled all-MiniLM-L6-v2 by default), ``EvaluateRetrieval``
scores the results. The corpus is the pages of the config's AmbER sets plus sampled
distractors, small enough for a CPU. Since ids are KILT page ids and AmbER query ids, beir's
results are also an AmbER run: the script scores them with namesake too (head and tail,
entity confusion), and its nDCG@10 equals beir's. After ``make demo``::

    python examples/beir_folder.py
    python examples/beir_folder.py --corpus kilt_knowledgesource.json --distractors 10000

``namesake amber export --format beir`` writes the same folder from the command line.
"""

from __future__ import annotations

import argparse

SAMPLE_KILT = "dataset_scripts/amber/sample/kilt_knowledgesource-sample.json"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--dataset", default="demo_output/amber", help="an AmbER folder or Hub id")
    p.add_argument("--config", default="human_qa")
    p.add_argument("--corpus", default=SAMPLE_KILT, help="the KILT knowledge source")
    p.add_argument("--distractors", type=int, default=20, help="pages beside the set pages")
    p.add_argument("--out", help="the BEIR folder (default: demo_output/beir_CONFIG)")
    p.add_argument("--model", help="a sentence-transformers model (default: all-MiniLM-L6-v2)")
    p.add_argument("--score-function", default="cos_sim", choices=["cos_sim", "dot"])
    return p


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    from beir.datasets.data_loader import GenericDataLoader
    from beir.retrieval.evaluation import EvaluateRetrieval
    from beir.retrieval.models import SentenceBERT
    from beir.retrieval.search.dense import DenseRetrievalExactSearch

    import namesake
    from namesake.amber.evaluation.beir_export import export_beir  # `namesake amber export`
    from namesake.bundled_models import minilm_path

    out = args.out or f"demo_output/beir_{args.config}"
    export = export_beir(args.dataset, args.config, args.corpus, out, "set", args.distractors)
    print("\n".join(export.lines()))
    corpus, queries, qrels = GenericDataLoader(out).load(split="test")
    search = DenseRetrievalExactSearch(SentenceBERT(args.model or minilm_path()), batch_size=64)
    retriever = EvaluateRetrieval(search, k_values=[1, 10, 100], score_function=args.score_function)
    results = retriever.retrieve(corpus, queries)  # query id -> {page id: score}
    ndcg, _, recall, _ = retriever.evaluate(qrels, results, retriever.k_values)
    mrr = retriever.evaluate_custom(qrels, results, retriever.k_values, metric="mrr")
    print(f"beir: NDCG@10 {ndcg['NDCG@10']:.4f}, MRR@10 {mrr['MRR@10']:.4f}, ", end="")
    print(f"Recall@100 {recall['Recall@100']:.4f}")

    rankings = {q: sorted(pages.items(), key=lambda page: -page[1]) for q, pages in results.items()}
    run = namesake.Run.from_rankings(rankings.items(), name="beir")
    evaluation = namesake.score(run, namesake.AmberQueries.load(args.dataset, args.config))
    measures = ("ndcg@10", "accuracy@1_head", "accuracy@1_tail", "entity_confusion")
    print("namesake: " + ", ".join(f"{m} {evaluation.metrics[m]:.2f}" for m in measures))


if __name__ == "__main__":
    main()
