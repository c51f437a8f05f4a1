"""Every retriever on every AmbER config: one combined table, as in the paper's Tables 5-6.

Besides the retriever kinds, named dense runs (``--dense-run LABEL=SPEC``) put several dense
encoders side by side through the same code: the starting MiniLM, a DPR trained on gold
questions, UnCon-DPR, Mixed-DPR. Each is a ``dense`` retriever (for the paper's figures too:
the paper has none for ours), labelled ``dense:LABEL``, with files of its own. An encoder whose
training was skipped (``not_trained.json``) keeps its rows, which say why instead of figures.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from namesake.amber.build.instances import TASKS
from namesake.amber.build.reference import COLLECTION_NAMES, COLLECTIONS
from namesake.amber.evaluation.evaluate import evaluate_run
from namesake.amber.evaluation.paper import paper_kind, paper_line
from namesake.amber.evaluation.report import IR_LINE, TableRow, intervals_line, results_table
from namesake.amber.evaluation.retrieve import open_retriever, retrieve_config, retriever_class
from namesake.errors import NamesakeError
from namesake.metrics import load_metric
from namesake.outputs import atomic_file
from namesake.retrieval.storage import check_new_index


@dataclass
class Run:
    """One retriever to run: its row label, its kind (for building and for the paper's
    figures), the stem of its file and index names, its build options, and why it cannot run
    (None when it can)."""

    name: str
    kind: str
    stem: str
    options: dict = field(default_factory=dict)
    not_trained: str | None = None


def file_stem(label: str) -> str:
    """`label` as a file-name part: runs of anything but letters, digits, ``.``, ``_`` and
    ``-`` become ``_``."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", label).strip("_") or "_"


def dense_run(label: str, spec: str | os.PathLike, similarity: str | None = None) -> Run:
    """The run of a dense encoder `spec` (a ``training/train_dpr.py`` output folder or a
    sentence-transformers model) labelled ``dense:LABEL``."""
    from namesake.ecqg.dpr import evaluation

    encoder = evaluation.dense_run(label, str(spec))
    run = Run(f"dense:{label}", "dense", f"dense-{file_stem(label)}")
    run.not_trained = encoder.not_trained
    if run.not_trained is None:
        run.options = {"model": encoder.passage_model, "query_model": encoder.question_model}
        if similarity:
            run.options["similarity"] = similarity
    return run


def compare_retrievers(
    corpus: str | os.PathLike,
    dataset: str,
    out: str | os.PathLike,
    retrievers: tuple[str, ...] = ("bm25", "dense"),
    collections: tuple[str, ...] = COLLECTIONS,
    tasks: tuple[str, ...] = TASKS,
    k: int = 100,
    k_values: tuple[int, ...] = (1, 20),
    metric_path: str | os.PathLike | None = None,
    index_dir: str | os.PathLike | None = None,
    retriever_options: dict[str, dict] | None = None,
    candidates: str = "all",
    dense_runs: list[tuple[str, str]] | None = None,
    rerank: str | None = None,
    rerank_depth: int = 100,
    fuse: str | None = None,
) -> str:
    """Runs and scores every (retriever, collection, task); writes and returns the table.

    Predictions go to ``out/predictions/``, one report per run to ``out/reports/``, and the
    combined table to ``out/results.md``, with the AmbER paper's figure beside each of ours
    that it reports, for the same kind of retriever (``namesake.amber.evaluation.paper``). With
    ``index_dir``, each retriever's index is loaded from ``index_dir/<retriever>`` or, when
    missing, built there (the Space reads them); a saved index built from another corpus,
    or with other models than a run names, is refused by name (see `open_retriever`).
    ``retriever_options``: per kind, the build options of that retriever (models, settings).
    ``candidates="set"`` ranks only each query's AmbER set (Table 8's setting): no figure of
    the paper's Tables 5-6 compares with it, so its paper cells say "not in the paper".
    ``dense_runs``: (label, encoder) pairs run after the kinds (see :func:`dense_run`); their
    predictions, reports and indexes are named ``dense-<label>`` (made file-safe).

    The mitigations (`mitigations`): ``fuse`` (a ranx method, e.g. "rrf") adds the fusion of
    every first stage, and ``rerank`` (a reranker spec, `open_reranker`) each first stage and
    the fusion reranked over their top ``rerank_depth`` pages; with either, results.md gets a
    second table, each system against BM25 by the paired test over AmbER sets.
    """
    out = Path(out)
    options = retriever_options or {}
    runs = [Run(kind, kind, kind, options.get(kind, {})) for kind in retrievers]
    similarity = options.get("dense", {}).get("similarity")
    runs += [dense_run(label, spec, similarity) for label, spec in dense_runs or []]
    for attribute in ("name", "stem"):  # row labels, then file names
        seen: dict[str, str] = {}
        for run in runs:
            key = getattr(run, attribute)
            if key in seen:
                raise NamesakeError(
                    f"{run.name} and {seen[key]} would share the name {key!r}: "
                    "give the runs distinct labels"
                )
            seen[key] = run.name
    if index_dir is not None:  # the indexes it will build, checked as outputs before any work
        for run in runs:
            if run.not_trained is None:
                index = Path(index_dir, run.stem)
                check_new_index(index, retriever_class(run.kind).INDEX_KIND, "--index-dir")
    metric = load_metric("entity_confusion", metric_path)
    reranker = None
    if rerank:  # before any retrieval: a model that does not load fails first
        from namesake.retrieval.rerankers import open_reranker

        reranker = open_reranker(rerank)
    rows: list[TableRow] = []
    first_stages: dict[str, list[tuple[str, Path]]] = {}  # config -> (row label, predictions)
    for run in runs:
        if run.not_trained is None:
            index = Path(index_dir, run.stem) if index_dir is not None else None
            retriever = open_retriever(run.kind, corpus, index, **run.options)
        for collection in collections:
            for task in tasks:
                config = f"{collection}_{task}"
                label = {
                    "Retriever": run.name,
                    "Collection": COLLECTION_NAMES[collection],
                    "Task": task.upper(),
                }
                if run.not_trained is not None:
                    rows.append(TableRow(label, not_trained=run.not_trained))
                    continue
                predictions = out / "predictions" / f"{run.stem}-{config}.jsonl"
                retrieve_config(retriever, dataset, config, k, predictions, candidates)
                evaluation = evaluate_run(
                    dataset,
                    config,
                    predictions,
                    out / "reports" / f"{run.stem}-{config}",
                    list(k_values),
                    metric,
                    retriever=run.kind,
                    candidates=candidates,
                )
                rows.append(TableRow(label, evaluation.metrics, evaluation.paper))
                first_stages.setdefault(config, []).append((run.name, predictions))
    systems: dict[str, list[tuple[str, Path]]] = {c: list(v) for c, v in first_stages.items()}
    if reranker is not None or fuse:
        for config, stages in first_stages.items():
            collection, task = config.split("_", 1)
            for name, predictions in mitigations(
                dataset, config, stages, corpus, out, k, reranker, rerank_depth, fuse
            ):
                evaluation = evaluate_run(
                    dataset,
                    config,
                    predictions,
                    out / "reports" / predictions.stem,
                    list(k_values),
                    metric,
                    retriever=name,
                    candidates=candidates,
                )
                label = {
                    "Retriever": name,
                    "Collection": COLLECTION_NAMES[collection],
                    "Task": task.upper(),
                }
                rows.append(TableRow(label, evaluation.metrics, evaluation.paper))
                systems[config].append((name, predictions))
    table = results_table(rows, list(k_values))
    scored = [row for row in rows if row.not_trained is None]
    notes = f"{intervals_line(scored[0].metrics)} {IR_LINE}" if scored else ""
    with atomic_file(out / "results.md", "w") as f:
        f.write(f"# AmbER retrieval results\n\nk = {k} retrieved documents per query")
        f.write(", ranked within each query's AmbER set.\n\n" if candidates == "set" else ".\n\n")
        f.write(table + "\n\n")
        lines = dict.fromkeys(paper_line(paper_kind(run.kind, candidates)) for run in runs)
        f.write("".join(f"- {line}\n" for line in lines))
        f.write(f"\n{notes}\n" if notes else "")
        against = ""
        if (reranker is not None or fuse) and any(len(v) > 1 for v in systems.values()):
            against = against_baseline(dataset, systems, metric, list(k_values))
            f.write(f"\n## Against the baseline\n\n{against}\n")
    printed = f"{table}\n\n{notes}" if notes else table
    return f"{printed}\n\n{against}" if against else printed


def mitigations(
    dataset: str,
    config: str,
    stages: list[tuple[str, Path]],
    corpus: str | os.PathLike,
    out: Path,
    k: int,
    reranker,
    rerank_depth: int,
    fuse: str | None,
) -> list[tuple[str, Path]]:
    """The second stages of one config's first-stage runs: their fusion (``fuse``), then each
    first stage and the fusion reranked; (row label, predictions file) of each."""
    from namesake.amber.evaluation.fusion import fuse_runs
    from namesake.amber.evaluation.predictions import write_predictions
    from namesake.amber.evaluation.retrieve import rerank_predictions

    made = []
    folder = out / "predictions"
    if fuse and len(stages) > 1:
        fused = folder / f"fused-{fuse}-{config}.jsonl"
        run = fuse_runs([path for _, path in stages], fuse, top_k=k)
        write_predictions(fused, run.rankings())
        made.append((f"fused:{fuse}", fused))
    if reranker is not None:
        for name, path in [*stages, *made]:
            stem = path.stem.removesuffix(f"-{config}")  # the first stage's file name
            reranked = folder / f"{stem}+rerank-{config}.jsonl"
            rerank_predictions(dataset, config, path, reranker, rerank_depth, corpus, reranked)
            made.append((f"{name}+rerank", reranked))
    return made


#: the measures of the table against the baseline: (header, figure)
AGAINST = (
    ("All@1", "accuracy@1"),
    ("Head − tail@1", "head_tail_gap@1"),
    ("Confusion", "entity_confusion"),
    ("nDCG@10", "ndcg@10"),
)


def against_baseline(
    dataset: str,
    systems: dict[str, list[tuple[str, Path]]],
    metric,
    k_values: list[int],
    baseline: str = "bm25",
) -> str:
    """Markdown: every system against the baseline run (BM25, else the first) on each config,
    by `compare-runs`' paired test over AmbER sets: the difference with its 95% interval and
    the Holm-adjusted p-value of a few headline measures, and how many of all the measures
    differ significantly."""
    from namesake.amber.evaluation.compare_runs import compare_runs

    headers = [f"Δ {header} [95% CI] (p Holm)" for header, _ in AGAINST]
    lines = [
        "| System | Baseline | Config | " + " | ".join(headers) + " | Significant (of all) |",
        "|---|---|---|" + "---:|" * len(headers) + "---|",
    ]
    for config, runs in systems.items():
        names = dict(runs)
        base = baseline if baseline in names else runs[0][0]
        for name, path in runs:
            if name == base:
                continue
            comparison = compare_runs(
                dataset,
                config,
                names[base],
                path,
                metric,
                names=(base, name),
                k_values=tuple(k_values),
                test_resamples=2000,
            )
            verdicts = {verdict.measure: verdict for verdict in comparison.verdicts}
            cells = []
            for _, figure in AGAINST:
                verdict = verdicts[figure]
                low, high = verdict.interval
                mark = "*" if verdict.significant else ""
                cells.append(
                    f"{verdict.difference:+.1f}{mark} [{low:+.1f}, {high:+.1f}] "
                    f"({verdict.p_holm:.3f})"
                )
            significant = [v for v in comparison.verdicts if v.significant]
            tested = sum(v.p_holm == v.p_holm for v in comparison.verdicts)  # not NaN
            lines.append(
                f"| {name} | {base} | {config} | "
                + " | ".join(cells)
                + f" | {len(significant)} of {tested} |"
            )
    return (
        "\n".join(lines)
        + "\n\n* : significant at 0.05 after Holm's correction over all the measures of the "
        "comparison (paired randomization test flipping whole AmbER sets, `namesake "
        "compare-runs`). With few sets nothing can be significant: the intervals say how "
        "little a small sample shows."
    )
