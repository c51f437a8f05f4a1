"""The three papers' own results tables, to print beside ours.

``namesake/data/papers/{amber,ecqg,wes}.json`` transcribe every results table of the AmbER
paper (Chen et al., ACL 2021: Tables 4-9), the ECQG / Mixed-DPR paper (Table 3 and the
attention entropies of its text) and the WES paper (Huang et al., 2022: its dataset sizes and
its human check, Table 2) from the text extractions in the project's shared material. A table
declares its grid (``rows`` x ``columns``, named by ``row_fields`` and ``column_fields``), and
every cell of the grid is either a transcribed figure (with the extractions that agree on it
and their lines) or a gap with the reason; nothing is estimated. The paper's own
inconsistencies are kept as printed, in ``notes``.

This module reads and checks those files and renders a table as markdown or JSON
(``namesake paper``); ``namesake.amber.evaluation.paper`` and the other reports look figures up
here."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from namesake.data import DATA_DIR
from namesake.errors import BadInputError, NamesakeError
from namesake.markdown import markdown_table

PAPERS_DIR = DATA_DIR / "papers"
PAPERS = ("amber", "ecqg", "wes")
#: the AmbER paper's cells are transcribed only where this many extractions agree
AMBER_AGREEING_EXTRACTIONS = 2
#: what a report prints where the paper has no figure for ours
NOT_IN_PAPER = "not in the paper"


@dataclass(frozen=True)
class Cell:
    """One figure of a table: its value (None where the paper prints "-") and as printed."""

    value: float | None
    printed: str
    agree: tuple[str, ...]
    lines: dict


@dataclass(frozen=True)
class PaperTable:
    """One table: its grid, the figures transcribed and the gaps, each keyed by the row's
    values followed by the column's."""

    paper: str
    table: str
    title: str
    page: int | None
    caption: str
    row_fields: tuple[str, ...]
    column_fields: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    columns: tuple[tuple[str, ...], ...]
    cells: dict[tuple[str, ...], Cell]
    gaps: dict[tuple[str, ...], str]
    notes: tuple[str, ...]

    def key(self, **fields: str) -> tuple[str, ...]:
        """The cell key of ``fields`` (every row and column field named)."""
        missing = [f for f in (*self.row_fields, *self.column_fields) if f not in fields]
        if missing:
            raise NamesakeError(f"{self.paper} table {self.table}: name {missing} too")
        return tuple(fields[f] for f in (*self.row_fields, *self.column_fields))

    def figure(self, **fields: str) -> float | None:
        """The transcribed figure, or None (a gap, "-" or outside the table)."""
        found = self.cells.get(self.key(**fields))
        return found.value if found else None

    def gap(self, **fields: str) -> str | None:
        """Why the cell has no figure, where it is a listed gap."""
        return self.gaps.get(self.key(**fields))

    def printed(self, **fields: str) -> str:
        """The figure as the paper prints it, or why there is none: the gap's reason, or
        NOT_IN_PAPER for a cell outside the table."""
        key = self.key(**fields)
        found = self.cells.get(key)
        return found.printed if found else self.gaps.get(key, NOT_IN_PAPER)

    def grid(self) -> list[tuple[str, ...]]:
        return [row + column for row in self.rows for column in self.columns]

    def markdown(self) -> str:
        """The table as printed: rows by ``row_fields``, one column per grid column; a gap
        reads "gap" and is explained below the table."""
        header = [
            *self.row_fields,
            *(" ".join(COLUMN_LABELS.get(v, v) for v in column) for column in self.columns),
        ]
        body = [[*row, *(self._text(row + column) for column in self.columns)] for row in self.rows]
        lines = [
            f"**{self.paper_name()} Table {self.table}**: {self.title}"
            + (f" (page {self.page})" if self.page else ""),
            "",
            markdown_table(header, body, "l" * len(self.row_fields) + "r" * len(self.columns)),
        ]
        reasons = dict.fromkeys(self.gaps.values())
        if reasons:
            lines += ["", *(f"gap: {reason}" for reason in reasons)]
        if self.notes:
            lines += ["", *(f"note: {note}" for note in self.notes)]
        return "\n".join(lines)

    def _text(self, key: tuple[str, ...]) -> str:
        if key in self.cells:
            return self.cells[key].printed
        return "gap"

    def paper_name(self) -> str:
        return PAPER_NAMES[self.paper]

    def to_json(self) -> dict:
        fields = (*self.row_fields, *self.column_fields)
        return {
            "paper": self.paper,
            "table": self.table,
            "title": self.title,
            "page": self.page,
            "caption": self.caption,
            "cells": [
                {**dict(zip(fields, key, strict=True)), "value": c.value, "printed": c.printed}
                for key, c in self.cells.items()
            ],
            "gaps": [
                {**dict(zip(fields, key, strict=True)), "reason": reason}
                for key, reason in self.gaps.items()
            ],
            "notes": list(self.notes),
        }


# How a column value is headed where the paper prints a symbol.
COLUMN_LABELS = {"all_correct": "∀"}

PAPER_NAMES = {
    "amber": "Chen et al. (ACL 2021), AmbER",
    "ecqg": "ECQG / Mixed-DPR (SIGIR 2022)",
    "wes": "Huang et al. (2022), WES",
}


@dataclass(frozen=True)
class Paper:
    """A paper's source, its tables by number (or name) and the figures given in its text."""

    name: str
    source: dict
    rule: str
    tables: dict[str, PaperTable]
    text_figures: tuple[dict, ...]

    def table(self, table: str | int) -> PaperTable:
        if str(table) not in self.tables:
            raise NamesakeError(
                f"{self.name}: no table {table!r} transcribed; one of {', '.join(self.tables)}"
            )
        return self.tables[str(table)]


def _field(path: Path, where: str, entry: dict, field: str, kind):
    if field not in entry:
        raise BadInputError(path, None, f"{where}: no {field!r}")
    value = entry[field]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise BadInputError(path, None, f"{where}.{field}: {value!r} is not {kind}")
    return value


def _read_table(path: Path, name: str, index: int, entry: dict) -> PaperTable:
    where = f"tables[{index}]"
    row_fields = tuple(_field(path, where, entry, "row_fields", list))
    column_fields = tuple(_field(path, where, entry, "column_fields", list))
    fields = (*row_fields, *column_fields)
    rows = tuple(tuple(r) for r in _field(path, where, entry, "rows", list))
    columns = tuple(tuple(c) for c in _field(path, where, entry, "columns", list))
    for label, keys, width in (
        ("rows", rows, len(row_fields)),
        ("columns", columns, len(column_fields)),
    ):
        if any(len(k) != width for k in keys):
            raise BadInputError(path, None, f"{where}.{label}: each needs {width} value(s)")
    cells: dict[tuple[str, ...], Cell] = {}
    for i, c in enumerate(_field(path, where, entry, "cells", list)):
        at = f"{where}.cells[{i}]"
        key = tuple(str(_field(path, at, c, f, str)) for f in fields)
        value = c.get("value")
        if value is not None and (
            isinstance(value, bool)
            or not isinstance(value, (int, float, str))
            or (isinstance(value, float) and not math.isfinite(value))
        ):
            raise BadInputError(path, None, f"{at}.value: {value!r} is not a figure")
        if key in cells:
            raise BadInputError(path, None, f"{at}: {key} listed twice")
        printed = c.get("printed", "-" if value is None else str(value))
        cells[key] = Cell(value, printed, tuple(c.get("agree", ())), dict(c.get("lines", {})))
    gaps: dict[tuple[str, ...], str] = {}
    for i, g in enumerate(entry.get("gaps", [])):
        at = f"{where}.gaps[{i}]"
        key = tuple(str(_field(path, at, g, f, str)) for f in fields)
        if key in cells or key in gaps:
            raise BadInputError(path, None, f"{at}: {key} is also a figure or listed twice")
        gaps[key] = _field(path, at, g, "reason", str)
    page = entry.get("page")
    return PaperTable(
        paper=name,
        table=str(_field(path, where, entry, "table", str)),
        title=_field(path, where, entry, "title", str),
        page=page if isinstance(page, int) else None,
        caption=entry.get("caption", ""),
        row_fields=row_fields,
        column_fields=column_fields,
        rows=rows,
        columns=columns,
        cells=cells,
        gaps=gaps,
        notes=tuple(entry.get("notes", [])),
    )


def read_paper_file(path: str | Path) -> Paper:
    """Loads and checks one paper's file: every table's fields, figures and gaps named."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise BadInputError(path, exc.lineno, f"invalid JSON: {exc.msg}") from exc
    for field in ("paper", "source", "rule", "tables"):
        if field not in data:
            raise BadInputError(path, None, f"no {field!r}")
    name = data["paper"]
    tables = [_read_table(path, name, i, t) for i, t in enumerate(data["tables"])]
    return Paper(
        name=name,
        source=data["source"],
        rule=data["rule"],
        tables={t.table: t for t in tables},
        text_figures=tuple(data.get("text_figures", [])),
    )


@cache
def paper(name: str) -> Paper:
    """The bundled transcription of paper ``name`` (one of PAPERS), read once."""
    if name not in PAPERS:
        raise NamesakeError(f"no paper {name!r}: one of {', '.join(PAPERS)}")
    return read_paper_file(PAPERS_DIR / f"{name}.json")
