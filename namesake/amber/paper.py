"""The AmbER paper's own figures (Chen et al., ACL 2021, Tables 5-7 and 9), to print beside ours.

``namesake/data/amber_paper/tables.json`` holds every figure transcribed from the paper, each
with its table, page and caption, and lists what could not be read as ``missing``: a figure
that was not read is never filled in. Our retriever kinds map to the paper's systems only
where the retriever is the same kind (``KIND_SYSTEMS``); BM25 and our dense retriever have no
counterpart, so their cells say so rather than borrowing another system's figure.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from namesake.amber.reference import COLLECTION_NAMES
from namesake.data import DATA_DIR
from namesake.io import BadInputError

PAPER_TABLES = DATA_DIR / "amber_paper" / "tables.json"

# Our kinds -> the paper's retrievers. `link` is our BLINK-style bi-encoder linker; `blink`
# and `bootleg` score the predictions files of those systems themselves.
KIND_SYSTEMS = {
    "tfidf": "TF-IDF",
    "dpr": "DPR",
    "link": "BLINK",
    "blink": "BLINK",
    "bootleg": "Bootleg",
}
# Kinds the paper did not evaluate: BM25 and our sentence-transformers dense retriever.
KINDS_NOT_IN_PAPER = ("bm25", "dense")
PAPER_KINDS = tuple(KIND_SYSTEMS) + KINDS_NOT_IN_PAPER

TASK_NAMES = {"fc": "FC", "sf": "SF", "qa": "QA"}

NOT_IN_PAPER = "not in the paper"
NOT_TRANSCRIBED = "not transcribed"
UNKNOWN_RETRIEVER = "unknown retriever"
#: the kind a run ranked within each query's AmbER set is compared as: Tables 5, 6 and 9 rank
#: all of Wikipedia, and Table 8 (the user study) reports no retriever figure to match
SET_RESTRICTED = "set-restricted"

_FIGURE_FIELDS = {
    "table": int,
    "page": int,
    "caption": str,
    "collection": str,
    "task": str,
    "system": str,
    "measure": str,
    "value": (int, float),
}


@dataclass(frozen=True)
class Figure:
    """One number of the paper: where it is printed and what it measures."""

    table: int
    page: int
    caption: str
    collection: str
    task: str
    system: str
    measure: str
    value: float

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.system, self.collection, self.task, self.measure)


@dataclass(frozen=True)
class PaperTables:
    """The transcribed figures, the tables' layout (which measures the paper reports) and
    the notes on the paper's own inconsistencies."""

    figures: dict[tuple[str, str, str, str], Figure]
    measures: tuple[str, ...]
    notes: tuple[dict, ...]
    missing: tuple[dict, ...]
    source: dict

    def figure(self, kind: str | None, collection: str, task: str, measure: str) -> float | None:
        """The paper's figure for our ``kind`` on ``collection`` (human / nonhuman) and
        ``task`` (qa / sf / fc), or None: kind not in the paper, or figure not transcribed."""
        system = KIND_SYSTEMS.get(kind or "")
        key = (system, COLLECTION_NAMES.get(collection), TASK_NAMES.get(task), measure)
        found = self.figures.get(key) if system else None
        return found.value if found else None

    def cell(self, kind: str | None, collection: str, task: str, measure: str) -> str:
        """The text of a "paper" cell: the figure, or why there is none."""
        if kind is None:
            return UNKNOWN_RETRIEVER
        if kind not in KIND_SYSTEMS:
            return NOT_IN_PAPER
        value = self.figure(kind, collection, task, measure)
        return NOT_TRANSCRIBED if value is None else f"{value:.1f}"

    def figures_for(self, kind: str | None, collection: str, task: str) -> dict:
        """For metrics.json: the paper's system and its figure per reported measure."""
        return {
            "system": KIND_SYSTEMS.get(kind or ""),
            "figures": {m: self.figure(kind, collection, task, m) for m in self.measures},
        }


def paper_kind(kind: str | None, candidates: str = "all") -> str | None:
    """The kind whose paper figures a run of ``kind`` sits beside: itself when it ranked the
    whole corpus, SET_RESTRICTED when it ranked each query's set only."""
    return kind if candidates == "all" else SET_RESTRICTED


def paper_line(kind: str | None) -> str:
    """One plain sentence saying what the "paper" cells of a run of ``kind`` hold."""
    if kind == SET_RESTRICTED:
        return (
            f"paper: rankings within each query's AmbER set are {NOT_IN_PAPER} (its Tables 5, "
            "6 and 9 rank all of Wikipedia; Table 8, the user study, has no retriever figures)"
        )
    if kind is None:
        return (
            "paper: unknown retriever (pass --retriever KIND to show the AmbER paper's figure "
            "for the same kind of retriever)"
        )
    if kind not in KIND_SYSTEMS:
        return f"paper: {kind} is {NOT_IN_PAPER} (it evaluated TF-IDF, DPR, BLINK and Bootleg)"
    count = sum(f.system == KIND_SYSTEMS[kind] for f in paper_tables().figures.values())
    return (
        f"paper: {KIND_SYSTEMS[kind]} in Chen et al. (ACL 2021), {count} of its figures "
        f"transcribed; {NOT_TRANSCRIBED!r} marks a figure the stored copies of the paper did "
        "not let us read (namesake/data/amber_paper/README.md)"
    )


def system_for(kind: str | None) -> str | None:
    """The paper's retriever of the same kind as ours, or None."""
    return KIND_SYSTEMS.get(kind or "")


def split_config(config: str) -> tuple[str, str]:
    """``human_qa`` -> (``human``, ``qa``); the task part is empty for a config without one."""
    collection, _, task = config.partition("_")
    return collection, task


def _figure(path: Path, index: int, entry) -> Figure:
    where = f"figures[{index}]"
    if not isinstance(entry, dict):
        raise BadInputError(path, None, f"{where}: an object expected")
    for field, kind in _FIGURE_FIELDS.items():
        if field not in entry:
            raise BadInputError(path, None, f"{where}: no {field!r}")
        value = entry[field]
        if isinstance(value, bool) or not isinstance(value, kind):
            raise BadInputError(path, None, f"{where}.{field}: {value!r} is not {kind}")
    if entry["collection"] not in COLLECTION_NAMES.values():
        raise BadInputError(path, None, f"{where}.collection: {entry['collection']!r} unknown")
    if entry["task"] not in TASK_NAMES.values():
        raise BadInputError(path, None, f"{where}.task: {entry['task']!r} unknown")
    value = float(entry["value"])
    if not (math.isfinite(value) and 0 <= value <= 100):
        raise BadInputError(path, None, f"{where}.value: {value} is not a percentage")
    return Figure(
        **{field: entry[field] for field in _FIGURE_FIELDS if field != "value"}, value=value
    )


def _in_block(figure: Figure, block: dict) -> bool:
    """Whether a layout block (a table's systems x collections x tasks x measures) has it."""
    return (
        block["table"] == figure.table
        and figure.system in block["systems"]
        and figure.collection in block["collections"]
        and figure.task in block["tasks"]
        and figure.measure in block["measures"]
    )


def read_paper_tables(path: str | Path = PAPER_TABLES) -> PaperTables:
    """Loads and checks a tables file: every figure complete, in range and listed once."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise BadInputError(path, exc.lineno, f"invalid JSON: {exc.msg}") from exc
    for field in ("source", "layout", "figures", "missing", "notes"):
        if field not in data:
            raise BadInputError(path, None, f"no {field!r}")
    figures: dict[tuple[str, str, str, str], Figure] = {}
    for index, entry in enumerate(data["figures"]):
        figure = _figure(path, index, entry)
        if not any(_in_block(figure, block) for block in data["layout"]):
            raise BadInputError(path, None, f"figures[{index}]: not in the layout of its table")
        if figure.key in figures:
            raise BadInputError(path, None, f"figures[{index}]: {figure.key} listed twice")
        figures[figure.key] = figure
    measures = dict.fromkeys(m for block in data["layout"] for m in block["measures"])
    measures.update(dict.fromkeys(f.measure for f in figures.values()))
    return PaperTables(
        figures=figures,
        measures=tuple(measures),
        notes=tuple(data["notes"]),
        missing=tuple(data["missing"]),
        source=data["source"],
    )


@lru_cache(maxsize=1)
def paper_tables() -> PaperTables:
    """The bundled tables, read once."""
    return read_paper_tables()


def paper_figure(kind: str | None, collection: str, task: str, measure: str) -> float | None:
    """The paper's figure for (our retriever kind, collection, task, measure), or None."""
    return paper_tables().figure(kind, collection, task, measure)
