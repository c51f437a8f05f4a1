"""Every retriever on every AmbER config: one combined table, as in the paper's Tables 5-6.

Besides the retriever kinds, named dense runs (``--dense-run LABEL=SPEC``) put several dense
encoders side by side through the same code: the starting MiniLM, a DPR trained on gold
questions, UnCon-DPR, Mixed-DPR. Each is a ``dense`` retriever (for the paper's figures too:
the paper has none for ours), labelled ``dense:LABEL``, with files of its own. An encoder whose
training was skipped (``not_trained.json``) keeps its rows, which say why instead of figures.

The command is the stages over objects: each config's queries loaded once (`AmberQueries`),
each retriever's `Run` made in memory (`retrieve`), scored there (`score`) and written beside
its report; the mitigations fuse those runs (`fuse`) and rerank them all after one pass over
the corpus for every run and config (`read_pages`, `rerank`); the table against the baseline
compares the evaluations already made (`leaderboard`), re-reading and re-scoring nothing.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from namesake.amber.build.instances import TASKS
from namesake.amber.build.reference import COLLECTION_NAMES, COLLECTIONS
from namesake.amber.evaluation.leaderboard import baseline_table, leaderboard
from namesake.amber.evaluation.paper import paper_kind, paper_line
from namesake.amber.evaluation.queries import AmberQueries
from namesake.amber.evaluation.report import (
    IR_LINE,
    TableRow,
    intervals_line,
    results_table,
    write_report,
)
from namesake.amber.evaluation.retrieve import open_retriever, retrieve, retriever_class
from namesake.amber.evaluation.scoring import Evaluation, ScoringOptions, score
from namesake.errors import NamesakeError
from namesake.outputs import atomic_file
from namesake.retrieval.storage import check_new_index
from namesake.runs import Run


@dataclass
class System:
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


def dense_system(label: str, spec: str | os.PathLike, similarity: str | None = None) -> System:
    """The system of a dense encoder `spec` (a ``training/train_dpr.py`` output folder or a
    sentence-transformers model) labelled ``dense:LABEL``."""
    from namesake.ecqg.dpr import evaluation

    encoder = evaluation.dense_run(label, str(spec))
    system = System(f"dense:{label}", "dense", f"dense-{file_stem(label)}")
    system.not_trained = encoder.not_trained
    if system.not_trained is None:
        system.options = {"model": encoder.passage_model, "query_model": encoder.question_model}
        if similarity:
            system.options["similarity"] = similarity
    return system


class Stage(NamedTuple):
    """A run of one config made by the command: the stem of its file names (without the
    config), the run, and its evaluation."""

    stem: str
    run: Run
    evaluation: Evaluation


@dataclass(frozen=True)
class ComparePlan:
    """What `compare_retrievers` runs: the retriever kinds and named dense encoders
    (``dense_runs``: (label, spec) pairs, `dense_system`) with their build options per kind,
    the collections and tasks, ``k`` pages per query over all pages or within each query's
    AmbER set (``candidates``), where the indexes are kept, the mitigations (``fuse``: a
    fusion method; ``rerank``: a reranker spec, over the top ``rerank_depth`` pages) and how
    the runs are scored."""

    retrievers: tuple[str, ...] = ("bm25", "dense")
    collections: tuple[str, ...] = COLLECTIONS
    tasks: tuple[str, ...] = TASKS
    k: int = 100
    index_dir: str | os.PathLike | None = None
    retriever_options: dict[str, dict] = field(default_factory=dict)
    candidates: str = "all"
    dense_runs: tuple[tuple[str, str], ...] = ()
    rerank: str | None = None
    rerank_depth: int = 100
    fuse: str | None = None
    scoring: ScoringOptions = field(default_factory=ScoringOptions)

    @property
    def configs(self) -> list[str]:
        return [f"{c}_{t}" for c in self.collections for t in self.tasks]

    def systems(self) -> list[System]:
        """The systems to run, kinds first; two that would share a row label or a file name
        are refused."""
        options = self.retriever_options
        systems = [System(kind, kind, kind, options.get(kind, {})) for kind in self.retrievers]
        similarity = options.get("dense", {}).get("similarity")
        systems += [dense_system(label, spec, similarity) for label, spec in self.dense_runs]
        for attribute in ("name", "stem"):  # row labels, then file names
            seen: dict[str, str] = {}
            for system in systems:
                key = getattr(system, attribute)
                if key in seen:
                    raise NamesakeError(
                        f"{system.name} and {seen[key]} would share the name {key!r}: "
                        "give the runs distinct labels"
                    )
                seen[key] = system.name
        return systems


def compare_retrievers(
    corpus: str | os.PathLike, dataset: str, out: str | os.PathLike, plan: ComparePlan
) -> str:
    """Runs and scores every (system, collection, task) of ``plan``; writes and returns the
    table.

    Predictions go to ``out/predictions/``, one report per run to ``out/reports/``, and the
    combined table to ``out/results.md``, with the AmbER paper's figure beside each of ours
    that it reports, for the same kind of retriever (``namesake.amber.evaluation.paper``). With
    ``plan.index_dir``, each retriever's index is loaded from ``index_dir/<stem>`` or, when
    missing, built there (the Space reads them); a saved index built from another corpus,
    or with other models than a run names, is refused by name (see `open_retriever`).
    ``candidates="set"`` ranks only each query's AmbER set (Table 8's setting): no figure of
    the paper's Tables 5-6 compares with it, so its paper cells say "not in the paper".

    The mitigations (`mitigations`): ``fuse`` adds the fusion of every config's first stages,
    and ``rerank`` each first stage and the fusion reranked; with either, results.md gets a
    second table, each system against BM25 by the paired test over AmbER sets.
    """
    out = Path(out)
    systems = plan.systems()
    if plan.index_dir is not None:  # the indexes it will build, checked before any work
        for system in systems:
            if system.not_trained is None:
                index = Path(plan.index_dir, system.stem)
                check_new_index(index, retriever_class(system.kind).INDEX_KIND, "--index-dir")
    reranker = None
    if plan.rerank:  # before any retrieval: a model that does not load fails first
        from namesake.retrieval.rerankers import open_reranker

        reranker = open_reranker(plan.rerank)
    queries = AmberQueries.load_configs(dataset, plan.configs)
    rows: list[TableRow] = []
    first_stages: dict[str, list[Stage]] = {config: [] for config in plan.configs}
    for system in systems:
        if system.not_trained is None:
            index = Path(plan.index_dir, system.stem) if plan.index_dir is not None else None
            retriever = open_retriever(system.kind, corpus, index, **system.options)
        for config, config_queries in queries.items():
            if system.not_trained is not None:
                rows.append(TableRow(_labels(system.name, config), not_trained=system.not_trained))
                continue
            run = retrieve(retriever, config_queries, plan.k, plan.candidates)
            run.name, run.provenance["retriever"] = system.name, system.kind
            stage = _score_and_write(run, config_queries, out / system.stem, plan)
            rows.append(_row(stage.evaluation, config))
            first_stages[config].append(stage)
    evaluations = {c: [stage.evaluation for stage in v] for c, v in first_stages.items()}
    if reranker is not None or plan.fuse:
        for config, stage in mitigations(corpus, queries, first_stages, reranker, out, plan):
            rows.append(_row(stage.evaluation, config))
            evaluations[config].append(stage.evaluation)
    table = results_table(rows, list(plan.scoring.k_values))
    scored = [row for row in rows if row.not_trained is None]
    notes = f"{intervals_line(scored[0].metrics)} {IR_LINE}" if scored else ""
    with atomic_file(out / "results.md", "w") as f:
        f.write(f"# AmbER retrieval results\n\nk = {plan.k} retrieved documents per query")
        f.write(
            ", ranked within each query's AmbER set.\n\n" if plan.candidates == "set" else ".\n\n"
        )
        f.write(table + "\n\n")
        lines = dict.fromkeys(paper_line(paper_kind(s.kind, plan.candidates)) for s in systems)
        f.write("".join(f"- {line}\n" for line in lines))
        f.write(f"\n{notes}\n" if notes else "")
        against = ""
        if (reranker is not None or plan.fuse) and any(len(v) > 1 for v in evaluations.values()):
            against = against_baseline(evaluations, plan.scoring.statistics)
            f.write(f"\n## Against the baseline\n\n{against}\n")
    printed = f"{table}\n\n{notes}" if notes else table
    return f"{printed}\n\n{against}" if against else printed


def _labels(name: str, config: str) -> dict[str, str]:
    collection, task = config.split("_", 1)
    return {"Retriever": name, "Collection": COLLECTION_NAMES[collection], "Task": task.upper()}


def _row(evaluation: Evaluation, config: str) -> TableRow:
    return TableRow(_labels(evaluation.name, config), evaluation.metrics, evaluation.paper)


def _score_and_write(run: Run, queries: AmberQueries, out: Path, plan: ComparePlan) -> Stage:
    """``run`` of ``queries``' config written to ``<folder>/predictions/<stem>-<config>.jsonl``
    (``out`` is ``<folder>/<stem>``), scored, and its report written to
    ``<folder>/reports/<stem>-<config>``."""
    name = f"{out.name}-{queries.config}"
    predictions = out.parent / "predictions" / f"{name}.jsonl"
    run.write(predictions)
    run.provenance.update(path=str(predictions), candidates=plan.candidates)
    evaluation = score(run, queries, plan.scoring)
    write_report(out.parent / "reports" / name, evaluation, list(plan.scoring.k_values))
    return Stage(out.name, run, evaluation)


def mitigations(
    corpus: str | os.PathLike,
    queries: dict[str, AmberQueries],
    first_stages: dict[str, list[Stage]],
    reranker,
    out: Path,
    plan: ComparePlan,
) -> list[tuple[str, Stage]]:
    """The second stages of every config's first-stage runs, scored and written into
    ``out``: their fusion (``plan.fuse``), then each first stage and the fusion reranked, the
    pages of every run to rerank read in one pass over ``corpus``; (config, stage) of each,
    config by config in that order."""
    from namesake.amber.evaluation.fusion import FusionSettings, fuse
    from namesake.amber.evaluation.retrieve import read_pages, rerank

    made: dict[str, list[Stage]] = {config: [] for config in first_stages}
    to_rerank = {config: list(stages) for config, stages in first_stages.items()}
    for config, stages in first_stages.items():
        if plan.fuse and len(stages) > 1:
            fused = fuse([stage.run for stage in stages], plan.fuse, FusionSettings(top_k=plan.k))
            fused.name = fused.provenance["retriever"] = f"fused:{plan.fuse}"
            stage = _score_and_write(fused, queries[config], out / f"fused-{plan.fuse}", plan)
            made[config].append(stage)
            to_rerank[config].append(stage)
    if reranker is not None:
        runs = [stage.run for stages in to_rerank.values() for stage in stages]
        pages = read_pages(corpus, runs, plan.rerank_depth)
        for config, stages in to_rerank.items():
            for stage in stages:
                reranked = rerank(stage.run, queries[config], reranker, pages, plan.rerank_depth)
                reranked.provenance["retriever"] = reranked.name
                folder = out / f"{stage.stem}+rerank"
                made[config].append(_score_and_write(reranked, queries[config], folder, plan))
    return [(config, stage) for config, stages in made.items() for stage in stages]


def against_baseline(
    evaluations: dict[str, list[Evaluation]], statistics, baseline: str = "bm25"
) -> str:
    """Markdown: every system against the baseline run (BM25, else the first) on each config
    with more than one, through the leaderboard of the config's systems (`leaderboard`, on
    the evaluations already made): the difference with its 95% interval and the
    Holm-adjusted p-value (over every pair of systems x headline measure) of each headline
    measure, and how many of them differ significantly."""
    boards = [
        leaderboard(
            scored,
            statistics,
            baseline if baseline in {e.name for e in scored} else scored[0].name,
            popularity=False,
        )
        for scored in evaluations.values()
        if len(scored) > 1
    ]
    return baseline_table(boards)
