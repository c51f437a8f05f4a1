"""AmbER as an MTEB retrieval task: any sentence-transformers model scored on an AmbER config
by `mteb.evaluate` (or the deprecated ``mteb.MTEB(tasks=[...]).run(model)``), offline.

```python
import mteb
from sentence_transformers import SentenceTransformer
from namesake.mteb import amber_task

task = amber_task("beir/")  # a folder written by `namesake amber export --format beir`
result = mteb.evaluate(SentenceTransformer("all-MiniLM-L6-v2"), task, cache=None)
```

The task's data comes from a local BEIR folder (`namesake.amber.evaluation.beir_export`: its corpus,
queries and the qrels of `amber_qrels`), read here without the Hub, or from a dataset on the
Hub in MTEB's retrieval layout (configs ``<config>-corpus``, ``<config>-queries`` and
``<config>-qrels``), which mteb's own loader reads. Each AmbER config is one task, its one
subset named after the config; the task's name says the corpus too (``AmbER-human_qa`` for
all of KILT, ``AmbER-human_qa-set20-seed0`` for the set pages and 20 distractors of seed 0),
so that mteb's result cache, keyed by task name, never mixes two corpora.
"""

from __future__ import annotations

import csv
import hashlib
import os
import re
from pathlib import Path
from typing import Any

from mteb.abstasks.retrieval import AbsTaskRetrieval
from mteb.abstasks.task_metadata import TaskMetadata

from namesake.amber.build.dataset import CARD_TEMPLATE
from namesake.amber.evaluation.beir_export import (
    CORPUS,
    QRELS,
    QUERIES,
    RECORD,
    SPLIT,
    BeirExport,
    not_a_query_config,
    read_export,
)
from namesake.errors import BadInputError, NamesakeError

REFERENCE = "https://aclanthology.org/2021.acl-long.345"


def _bibtex() -> str:
    """The AmbER paper's BibTeX, as the dataset card cites it."""
    found = re.search(r"```bibtex\n(.*?)```", CARD_TEMPLATE.read_text(encoding="utf-8"), re.S)
    return found.group(1) if found else ""


def task_name(config: str, record: BeirExport | None = None) -> str:
    """``AmbER-<config>``, with ``-set<N>-seed<S>`` for an export of the set pages.

    mteb writes a task's results under its name, so the name is made only of a known
    config and integers (`read_export` checks a record's): never of a path."""
    problem = not_a_query_config(config)
    if problem:
        raise NamesakeError(problem)
    if record and record.pages == "set":
        return f"AmbER-{config}-set{int(record.distractors)}-seed{int(record.seed)}"
    return f"AmbER-{config}"


def _metadata(name: str, config: str, path: str, revision: str, description: str):
    return TaskMetadata(
        name=name,
        description=description,
        dataset={"path": path, "revision": revision},
        reference=REFERENCE,
        type="Retrieval",
        category="t2t",
        modalities=["text"],
        eval_splits=[SPLIT],
        eval_langs={config: ["eng-Latn"]},
        main_score="ndcg_at_10",
        date=("2019-08-01", "2020-10-26"),  # the KILT snapshot to the Wikidata dump
        domains=["Encyclopaedic", "Written"],
        task_subtypes=["Question answering"],
        license="cc-by-sa-3.0",
        annotations_creators="derived",
        dialect=[],
        sample_creation="created",
        bibtex_citation=_bibtex(),
        adapted_from=["KILT"],
    )


class AmbERRetrieval(AbsTaskRetrieval):
    """One AmbER config as an MTEB retrieval task (make one with `amber_task`): queries are
    the config's inputs, documents KILT pages, the relevant documents a query's gold pages.

    ``folder``: a BEIR export, read by `load_data` here; None: ``metadata.dataset["path"]``
    is a Hub dataset in MTEB's layout, read by mteb's own loader. ``metadata`` is a class
    attribute, as mteb wants it (`AbsTask.unload_data` drops an instance's own), so each
    task is an instance of a subclass made for it (`_task_class`)."""

    metadata: TaskMetadata

    def __init__(self, folder: Path | None = None, **kwargs: Any):
        self.folder = folder
        super().__init__(**kwargs)

    def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
        if self.data_loaded:
            return
        if self.folder is None:
            super().load_data(num_proc=num_proc, **kwargs)
            return
        (config,) = self.hf_subsets
        self.dataset = {config: {SPLIT: read_beir_folder(self.folder)}}
        self.data_loaded = True


def read_beir_folder(folder: str | os.PathLike) -> dict:
    """MTEB's split data from a BEIR folder: ``corpus`` (id, title, text) and ``queries``
    (id, text) as `datasets.Dataset`s, the corpus memory-mapped, not held, and
    ``relevant_docs``: query id -> {document id: relevance}. A missing or malformed file is a
    BadInputError naming it."""
    from datasets import Value, load_dataset

    folder = Path(folder)
    tables = {}
    for name in (CORPUS, QUERIES):
        path = folder / name
        if not path.is_file():
            raise BadInputError(path, None, "no such file: not a BEIR folder")
        table = load_dataset("json", data_files=str(path), split="train")
        if "_id" not in table.column_names:
            raise BadInputError(path, None, "no _id field: not a BEIR file")
        tables[name] = table.cast_column("_id", Value("string")).rename_column("_id", "id")
    return {
        "corpus": tables[CORPUS],
        "queries": tables[QUERIES],
        "relevant_docs": read_qrels(folder / QRELS),
        "top_ranked": None,
    }


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """BEIR's ``query-id corpus-id score`` TSV (with its header) as query id -> {doc: score}."""
    relevant: dict[str, dict[str, int]] = {}
    try:
        with open(path, encoding="utf-8", newline="") as f:
            rows = csv.reader(f, delimiter="\t")
            next(rows, None)
            for line_no, row in enumerate(rows, 2):
                if len(row) != 3 or not row[2].lstrip("-").isdigit():
                    raise BadInputError(path, line_no, "not 'query-id<TAB>corpus-id<TAB>score'")
                relevant.setdefault(row[0], {})[row[1]] = int(row[2])
    except FileNotFoundError:
        raise BadInputError(path, None, "no such file: not a BEIR folder") from None
    return relevant


def _revision(folder: Path) -> str:
    """A stand-in for a Hub revision: what the export record says, and the files' sizes."""
    digest = hashlib.sha256((folder / RECORD).read_bytes())
    for name in (CORPUS, QUERIES, QRELS):
        path = folder / name
        digest.update(f"{name}:{path.stat().st_size if path.exists() else -1}".encode())
    return f"local-{digest.hexdigest()[:12]}"


def amber_task(
    source: str | os.PathLike, config: str | None = None, revision: str = "main"
) -> AmbERRetrieval:
    """The MTEB task of an AmbER config.

    ``source``: a folder written by `namesake amber export --format beir` (its config is read
    from its ``export.json``; a ``config`` given must agree), or a dataset in MTEB's retrieval
    layout (a Hub id at ``revision``, or a folder without ``corpus.jsonl``: configs
    ``<config>-corpus``, ``<config>-queries``, ``<config>-qrels``), where ``config`` is
    required.
    """
    folder = Path(source)
    if (folder / CORPUS).is_file() or (folder / RECORD).is_file():
        record = read_export(folder)
        if config is not None and config != record.config:
            raise BadInputError(folder, None, f"a BEIR export of {record.config}, not of {config}")
        config = record.config
        corpus = (
            "every page of the KILT knowledge source"
            if record.pages == "all"
            else f"the pages of its AmbER sets and {record.distractors} other KILT pages "
            f"(seed {record.seed})"
        )
        metadata = _metadata(
            task_name(config, record),
            config,
            str(folder.resolve()),
            _revision(folder),
            f"AmbER {config} (entity ambiguity): find a query's Wikipedia page among its "
            f"namesakes'. Corpus: {corpus}.",
        )
        return _task_class(metadata)(folder=folder)
    if folder.is_dir() and not (folder / "README.md").is_file():
        raise BadInputError(
            source,
            None,
            "neither a BEIR export (no corpus.jsonl) nor a dataset folder in "
            "MTEB's layout (no README.md naming its configs)",
        )
    if config is None:
        raise BadInputError(
            source,
            None,
            "not a BEIR export (no corpus.jsonl); a dataset in MTEB's layout "
            "needs its config named",
        )
    metadata = _metadata(
        task_name(config),
        config,
        str(source),
        revision,
        f"AmbER {config} (entity ambiguity): find a query's Wikipedia page among its namesakes'.",
    )
    return _task_class(metadata)()


def _task_class(metadata: TaskMetadata) -> type[AmbERRetrieval]:
    """A subclass of AmbERRetrieval holding ``metadata``, named after the task."""
    name = re.sub(r"\W", "_", metadata.name)
    return type(name, (AmbERRetrieval,), {"metadata": metadata, "__module__": __name__})
