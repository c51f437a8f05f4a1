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
queries and the qrels of `AmberQueries.qrels`), read here without the Hub, or from a dataset on the
Hub in MTEB's retrieval layout (configs ``<config>-corpus``, ``<config>-queries`` and
``<config>-qrels``), which mteb's own loader reads. Each AmbER config is one task, its one
subset named after the config; the task's name says the corpus too (``AmbER-human_qa`` for
all of KILT, ``AmbER-human_qa-set20-seed0`` for the set pages and 20 distractors of seed 0),
so that mteb's result cache, keyed by task name, never mixes two corpora.
"""

from __future__ import annotations

import atexit
import csv
import functools
import hashlib
import os
import re
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Any

import msgspec
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
from namesake.dumps.reading import iter_json_lines, read_text
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
    BadInputError naming it (and the line)."""
    folder = Path(folder)
    for name in (CORPUS, QUERIES, QRELS):
        if not (folder / name).exists():
            raise BadInputError(folder / name, None, "no such file: not a BEIR folder")
    return {
        "corpus": read_beir_lines(folder / CORPUS, BeirDocument),
        "queries": read_beir_lines(folder / QUERIES, BeirQuery),
        "relevant_docs": read_qrels(folder / QRELS),
        "top_ranked": None,
    }


class BeirDocument(msgspec.Struct, kw_only=True):
    """A line of a BEIR ``corpus.jsonl``; ids may be numbers, read as their text."""

    id: str | int = msgspec.field(name="_id")
    title: str = ""
    text: str


class BeirQuery(msgspec.Struct, kw_only=True):
    """A line of a BEIR ``queries.jsonl``."""

    id: str | int = msgspec.field(name="_id")
    text: str


_BATCH_ROWS = 10_000


def read_beir_lines(path: str | os.PathLike, record: type[msgspec.Struct]):
    """The records of a BEIR JSON-lines file (`BeirDocument`s or `BeirQuery`s) as a
    `datasets.Dataset` of string columns, memory-mapped from an Arrow file in a folder of the
    datasets cache that is removed when the process ends (`_scratch_folder`).

    Read by `namesake.dumps.reading.iter_json_lines`, strictly and once (a pipe too), not by
    ``datasets``' JSON loader, which reads a field of mixed types as the JSON text of some
    of its values (an ``_id`` of 1 on one line and "q2" on the next gives '"q2"') and a
    missing field as None."""
    import pyarrow as pa
    from datasets import Dataset

    names = list(record.__struct_fields__)
    schema = pa.schema([(name, pa.string()) for name in names])
    target = _scratch_folder() / f"{uuid.uuid4().hex}.arrow"
    columns: dict[str, list[str]] = {name: [] for name in names}
    with pa.OSFile(str(target), "wb") as sink, pa.ipc.new_stream(sink, schema) as writer:
        for _, line in iter_json_lines(path, msgspec.json.Decoder(record)):
            for name in names:
                columns[name].append(str(getattr(line, name)))
            if len(columns[names[0]]) == _BATCH_ROWS:
                writer.write_batch(pa.record_batch(list(columns.values()), schema=schema))
                columns = {name: [] for name in names}
        writer.write_batch(pa.record_batch(list(columns.values()), schema=schema))
    return Dataset.from_file(str(target))


@functools.cache
def _scratch_folder() -> Path:
    """A folder for this process's Arrow files (and the caches `datasets` writes beside
    them), in the datasets cache, removed at exit."""
    from datasets import config

    config.HF_DATASETS_CACHE.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="namesake-beir-", dir=config.HF_DATASETS_CACHE))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def read_qrels(path: str | os.PathLike) -> dict[str, dict[str, int]]:
    """BEIR's ``query-id corpus-id score`` TSV (its first line a header, skipped as BEIR's
    loader skips it; fields unquoted as its ``csv`` reader does) as query id -> {doc: score}.
    Blank lines are skipped; any other line that is not three fields, the last an ASCII
    integer, is a BadInputError naming it."""
    relevant: dict[str, dict[str, int]] = {}
    rows = csv.reader(_text_lines(path), delimiter="\t")
    try:
        next(rows, None)
        for row in rows:
            if not row:
                continue
            if len(row) != 3 or _RELEVANCE.fullmatch(row[2]) is None:
                raise BadInputError(path, rows.line_num, "not 'query-id<TAB>corpus-id<TAB>score'")
            relevant.setdefault(row[0], {})[row[1]] = int(row[2])
    except csv.Error as exc:  # a field over csv's limit (128 KiB), a NUL byte
        raise BadInputError(path, rows.line_num, f"not a TSV line ({exc})") from None
    return relevant


_RELEVANCE = re.compile(r"-?[0-9]+")  # [0-9]: ASCII digits, which int() reads alone


def _text_lines(path: str | os.PathLike) -> list[str]:
    """The lines of a UTF-8 text file (or pipe), without their newlines, numbered as
    `namesake.dumps.reading.iter_line_blocks` numbers them (a line ends at a newline only)."""
    text = read_text(path)
    lines = text.split("\n")
    return lines[:-1] if text.endswith("\n") else lines


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
