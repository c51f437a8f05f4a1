"""Importing the AmbER authors' release (AmbER-H and AmbER-N as JSON lines, CC0) into the Hub
dataset folder a build writes, so that the published benchmark loads, evaluates and pushes
exactly like a rebuild.

The release holds, per collection, ``amber_set_tuples.jsonl`` (one AmbER set per line, with
its entities, their pages and distinguishing relations) and ``<task>/amber_sets.jsonl`` (the
same sets, line for line, with each entity's queries), the layout ``namesake amber build
--jsonl-dir`` writes. The files are streamed a batch of sets at a time and checked as they
go: any inconsistency stops the import with the file and line, since a benchmark that
silently loses or misattributes queries would bias every score computed on it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import closing
from itertools import islice
from pathlib import Path

import msgspec
import pyarrow as pa

from namesake.amber.build.dataset import (
    config_tables,
    dataset_card,
    entity_rows,
    query_rows,
    statistics,
    write_configs,
)
from namesake.amber.build.instances import TASKS
from namesake.amber.build.reference import COLLECTIONS
from namesake.build_report import BuildReport
from namesake.dumps.reading import iter_json_lines
from namesake.errors import BadInputError, NamesakeError
from namesake.outputs import atomic_directory
from namesake.timing import StageTimer

RELEASE_SOURCE = "the AmbER authors' release"
RELEASE_ORIGIN = (
    "This folder holds the AmbER sets released by the authors of Chen et al. (ACL 2021), "
    "converted to Parquet configs by namesake {version}: the queries, ids, answers and gold "
    "pages are theirs, unchanged."
)
SETS_PER_BATCH = 1_000
TUPLES_FILE = "amber_set_tuples.jsonl"
TASK_FILE = "amber_sets.jsonl"


# The fields that the conversion reads (`query_rows`, `entity_rows`); others are kept out.
class _Page(msgspec.Struct):
    wikipedia_id: str
    title: str


class _Relation(msgspec.Struct):
    amber_id: str
    property: str


class _Entity(msgspec.Struct):
    label: str
    is_head: bool
    popularity: float
    entity_types: list[str]
    wikipedia: list[_Page]
    pids: dict[str, _Relation]


class _TupleSet(msgspec.Struct):
    name: str
    qids: dict[str, _Entity]


class _OutputMeta(msgspec.Struct):
    values: list[str]
    additional_values: list[str]


class _Output(msgspec.Struct):
    answer: str | list[str]
    provenance: list[_Page]
    meta: _OutputMeta


class _QueryMeta(msgspec.Struct):
    pid: str


class _Query(msgspec.Struct):
    id: str
    input: str
    output: _Output
    meta: _QueryMeta


class _TaskEntity(msgspec.Struct):
    queries: list[_Query]


class _TaskSet(msgspec.Struct):
    name: str
    qids: dict[str, _TaskEntity]


class _CheckedDecoder:
    """A decoder for `iter_json_lines` that returns the plain record after checking it
    against `schema`, and refuses a key repeated within one object: JSON readers keep the
    last, which would silently drop an entity (a QID key) or a relation (a PID key)."""

    def __init__(self, schema: type[msgspec.Struct]):
        self.schema = schema

    def decode(self, line: bytes) -> dict:
        try:
            record = json.loads(line, object_pairs_hook=_refuse_repeated_keys)
        except UnicodeDecodeError:
            raise  # "not UTF-8", in `iter_json_lines`
        except ValueError as exc:  # JSONDecodeError, or a number of too many digits
            raise msgspec.DecodeError(str(exc)) from None
        msgspec.convert(record, self.schema)
        return record


def _refuse_repeated_keys(pairs: list[tuple[str, object]]) -> dict:
    record = dict(pairs)
    if len(record) < len(pairs):
        repeated = sorted({key for key, _ in pairs if sum(k == key for k, _ in pairs) > 1})
        raise msgspec.DecodeError(f"duplicate key(s) {', '.join(map(repr, repeated))}")
    return record


def import_released(
    released_dir: str | os.PathLike,
    out: str | os.PathLike,
    collections: tuple[str, ...] = COLLECTIONS,
) -> BuildReport:
    """Converts the release in `released_dir` (``<collection>/...jsonl``) into the Hub dataset
    folder `out`, with the configs and card of a build; `out` appears atomically, or not at
    all. Returns the counts and the statistics, as a build does."""
    released_dir = Path(released_dir)
    report = BuildReport()
    lap = StageTimer(report.seconds).lap
    configs = {}
    for collection in collections:
        queries, members = read_released_collection(released_dir / collection)
        report.counts[f"{collection}: AmbER sets"] = len(set(members["name"].to_pylist()))
        report.counts[f"{collection}: queries"] = queries.num_rows
        lap(f"reading {collection}")
        if not members.num_rows:  # an empty Parquet config would not load; say so instead
            report.problems.append(f"{collection}: the release has no AmbER set; no config written")
            continue
        for config, table in config_tables(collection, queries, members).items():
            if table.num_rows:
                configs[config] = table
            else:
                report.problems.append(f"{config}: no row; config not written")
        report.statistics[collection] = statistics(queries, members)
    if not configs:
        raise NamesakeError(f"{released_dir}: no AmbER set in any collection, nothing written")
    report.configs = list(configs)
    sources = {RELEASE_SOURCE: released_dir.resolve().name}
    with atomic_directory(out, writer="amber import") as staging:
        written = write_configs(staging, configs)
        card = dataset_card(report.statistics, sources, report.notes(), written, RELEASE_ORIGIN)
        (staging / "README.md").write_text(card, encoding="utf-8")
    lap("writing")
    return report


def read_released_collection(folder: Path) -> tuple[pa.Table, pa.Table]:
    """The query and entity tables of one collection, read a batch of sets at a time."""
    tuples_path = folder / TUPLES_FILE
    task_paths = {task: folder / task / TASK_FILE for task in TASKS}
    for path in (tuples_path, *task_paths.values()):
        if not path.is_file():
            raise BadInputError(
                path,
                None,
                f"missing: a released collection has {TUPLES_FILE} and "
                f"<task>/{TASK_FILE} for each task ({', '.join(TASKS)})",
            )
    query_parts, entity_parts = [], []
    with _ReleaseChecker(tuples_path, task_paths) as checker, closing(checker.sets()) as sets:
        while batch := list(islice(sets, SETS_PER_BATCH)):
            tuples = [amber_set for amber_set, _ in batch]
            instances = {task: [task_sets[task] for _, task_sets in batch] for task in TASKS}
            query_parts.append(query_rows(tuples, instances))
            entity_parts.append(entity_rows(tuples))
        checker.check_no_extra_sets()
    # The empty tables carry the schema should the files hold no set; one chunk per column
    # makes the shards match a build's, byte for byte.
    queries = pa.concat_tables([query_rows([], {}), *query_parts]).combine_chunks()
    return queries, pa.concat_tables([entity_rows([]), *entity_parts]).combine_chunks()


class _ReleaseChecker:
    """Reads the tuples file and the task files in step and checks, set by set, that they
    describe the same sets and entities, that ids are unique, and that every query's pages
    are pages of its entity; each failure names the file and line."""

    def __init__(self, tuples_path: Path, task_paths: dict[str, Path]):
        self.tuples_path, self.task_paths = tuples_path, task_paths
        self.task_lines = {
            task: iter_json_lines(path, _CheckedDecoder(_TaskSet))
            for task, path in task_paths.items()
        }
        self.set_lines: dict[str, int] = {}
        self.query_places: dict[str, str] = {}

    def __enter__(self) -> _ReleaseChecker:
        return self

    def __exit__(self, *exc_info) -> None:
        for lines in self.task_lines.values():  # stops their read-ahead threads
            lines.close()

    def sets(self) -> Iterator[tuple[dict, dict[str, dict]]]:
        """Yields (AmbER set tuple, {task: the set's queries}) in file order."""
        for line, amber_set in iter_json_lines(self.tuples_path, _CheckedDecoder(_TupleSet)):
            name = amber_set["name"]
            if name in self.set_lines:
                raise BadInputError(
                    self.tuples_path,
                    line,
                    f"duplicate AmbER set {name!r} (first on line {self.set_lines[name]})",
                )
            self.set_lines[name] = line
            task_sets = {}
            for task, lines in self.task_lines.items():
                task_line, task_set = next(lines, (None, None))
                if task_set is None:
                    raise BadInputError(
                        self.task_paths[task],
                        None,
                        f"ends before AmbER set {name!r} ({TUPLES_FILE} line {line}): "
                        "every set needs a line in each task file, in the same order",
                    )
                self._check_task_set(task, task_line, task_set, amber_set, line)
                task_sets[task] = task_set
            yield amber_set, task_sets

    def check_no_extra_sets(self) -> None:
        """A task file longer than the tuples file holds sets the import would drop."""
        for task, lines in self.task_lines.items():
            extra = next(lines, None)
            if extra is not None:
                raise BadInputError(
                    self.task_paths[task],
                    extra[0],
                    f"AmbER set {extra[1]['name']!r} is not in {TUPLES_FILE} "
                    f"({len(self.set_lines)} sets there)",
                )

    def _check_task_set(
        self, task: str, line: int, task_set: dict, amber_set: dict, tuples_line: int
    ) -> None:
        path, name = self.task_paths[task], amber_set["name"]
        if task_set["name"] != name:
            raise BadInputError(
                path,
                line,
                f"AmbER set {task_set['name']!r} where {TUPLES_FILE} line {tuples_line} has "
                f"{name!r}: task files must list the sets in the same order",
            )
        entities = amber_set["qids"]
        if set(task_set["qids"]) != set(entities):
            missing = sorted(set(entities) - set(task_set["qids"]))
            extra = sorted(set(task_set["qids"]) - set(entities))
            raise BadInputError(
                path,
                line,
                f"AmbER set {name!r} has other entities than in {TUPLES_FILE} line "
                f"{tuples_line}: missing {missing}, not there {extra}",
            )
        for qid, task_entity in task_set["qids"].items():
            entity = entities[qid]
            pages = {page["wikipedia_id"] for page in entity["wikipedia"]}
            for query in task_entity["queries"]:
                query_id, pid = query["id"], query["meta"]["pid"]
                if query_id in self.query_places:
                    raise BadInputError(
                        path,
                        line,
                        f"duplicate query id {query_id!r} (also at {self.query_places[query_id]})",
                    )
                self.query_places[query_id] = f"{path}:{line}"
                if pid not in entity["pids"]:
                    raise BadInputError(
                        path,
                        line,
                        f"query {query_id!r} asks about {pid}, which {qid} of AmbER set "
                        f"{name!r} does not have in {TUPLES_FILE} line {tuples_line}",
                    )
                stray = [
                    page["wikipedia_id"]
                    for page in query["output"]["provenance"]
                    if page["wikipedia_id"] not in pages
                ]
                if stray:
                    raise BadInputError(
                        path,
                        line,
                        f"query {query_id!r}: gold page(s) {stray} are not pages of {qid} "
                        f"in AmbER set {name!r} (its pages: {sorted(pages)})",
                    )
