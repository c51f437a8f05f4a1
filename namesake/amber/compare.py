"""Every retriever on every AmbER config: one combined table, as in the paper's Tables 5-6."""

from __future__ import annotations

import os
from pathlib import Path

from namesake.amber.instances import TASKS
from namesake.amber.paper import paper_kind, paper_line
from namesake.amber.reference import COLLECTION_NAMES, COLLECTIONS
from namesake.amber.report import evaluate_run, results_table
from namesake.amber.retrieve import open_retriever, retrieve_config
from namesake.io import atomic_file
from namesake.metrics import load_metric


def compare_retrievers(
    corpus: str | os.PathLike,
    dataset: str,
    out: str | os.PathLike,
    retrievers: tuple[str, ...] = ("bm25", "dense"),
    collections: tuple[str, ...] = COLLECTIONS,
    k: int = 100,
    k_values: tuple[int, ...] = (1, 20),
    metric_path: str | os.PathLike | None = None,
    index_dir: str | os.PathLike | None = None,
    retriever_options: dict[str, dict] | None = None,
    candidates: str = "all",
) -> str:
    """Runs and scores every (retriever, collection, task); writes and returns the table.

    Predictions go to ``out/predictions/``, one report per run to ``out/reports/``, and the
    combined table to ``out/results.md``, with the AmbER paper's figure beside each of ours
    that it reports, for the same kind of retriever (``namesake.amber.paper``). With
    ``index_dir``, each retriever's index is loaded from ``index_dir/<retriever>`` or, when
    missing, built there (the Space reads them).
    ``retriever_options``: per kind, the build options of that retriever (models, settings).
    ``candidates="set"`` ranks only each query's AmbER set (Table 8's setting): no figure of
    the paper's Tables 5-6 compares with it, so its paper cells say "not in the paper".
    """
    out = Path(out)
    metric = load_metric("entity_confusion", metric_path)
    rows, paper_rows = [], []
    for kind in retrievers:
        index = Path(index_dir, kind) if index_dir is not None else None
        retriever = open_retriever(kind, corpus, index, **(retriever_options or {}).get(kind, {}))
        for collection in collections:
            for task in TASKS:
                config = f"{collection}_{task}"
                predictions = out / "predictions" / f"{kind}-{config}.jsonl"
                retrieve_config(retriever, dataset, config, k, predictions, candidates)
                metrics = evaluate_run(
                    dataset,
                    config,
                    predictions,
                    out / "reports" / f"{kind}-{config}",
                    list(k_values),
                    metric,
                    retriever=kind,
                    candidates=candidates,
                )
                label = {
                    "Retriever": kind,
                    "Collection": COLLECTION_NAMES[collection],
                    "Task": task.upper(),
                }
                rows.append((label, metrics))
                paper_rows.append((paper_kind(kind, candidates), collection, task))
    table = results_table(rows, list(k_values), paper_rows=paper_rows)
    with atomic_file(out / "results.md", "w") as f:
        f.write(f"# AmbER retrieval results\n\nk = {k} retrieved documents per query")
        f.write(", ranked within each query's AmbER set.\n\n" if candidates == "set" else ".\n\n")
        f.write(table + "\n\n")
        lines = dict.fromkeys(paper_line(paper_kind(kind, candidates)) for kind in retrievers)
        f.write("".join(f"- {line}\n" for line in lines))
    return table
