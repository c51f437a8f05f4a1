"""The AmbER paper's own figures (Chen et al., ACL 2021), beside ours.

The paper's tables are transcribed in ``namesake/data/papers/amber.json`` (``namesake.papers``):
every cell of Tables 4-9 that two of the three text extractions give alike. A report looks a
figure up by our retriever kind, collection, task and metric key: our kinds map to the paper's
systems only where the retriever is the same kind (``KIND_SYSTEMS``), and our metric keys to
a table and its column (``MEASURES``). BM25 and our dense retriever have no counterpart, so
their cells say so rather than borrowing another system's figure.
"""

from __future__ import annotations

from dataclasses import dataclass

from namesake.amber.build.reference import COLLECTION_NAMES
from namesake.papers import NOT_IN_PAPER, PaperTable, paper

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

# Our metric keys -> (the paper's table, its column): Table 5 is top-1, Table 9 top-20, and
# Table 6 reports entity confusion on head and on tail queries only (no "all" column).
MEASURES = {
    **{
        key.format(k=k): (table, column)
        for k, table in ((1, "5"), (20, "9"))
        for key, column in (
            ("accuracy@{k}", "all"),
            ("accuracy@{k}_head", "head"),
            ("accuracy@{k}_tail", "tail"),
            ("all_correct@{k}", "all_correct"),
        )
    },
    "entity_confusion_head": ("6", "head"),
    "entity_confusion_tail": ("6", "tail"),
}

UNKNOWN_RETRIEVER = "unknown retriever"
#: the kind a run ranked within each query's AmbER set is compared as: Tables 5, 6 and 9 rank
#: all of Wikipedia, and Table 8 (the user study) reports no retriever figure to match
SET_RESTRICTED = "set-restricted"


def system_label(kind: str | None) -> str:
    """Which of the paper's systems a row of ``kind`` sits beside. Our `link` is a
    BLINK-style bi-encoder, not BLINK: "BLINK (paper)" says the figure is the paper's BLINK."""
    if kind is None:
        return UNKNOWN_RETRIEVER
    if kind not in KIND_SYSTEMS:
        return NOT_IN_PAPER
    return f"{KIND_SYSTEMS[kind]} (paper)" if kind == "link" else KIND_SYSTEMS[kind]


@dataclass(frozen=True)
class AmberPaper:
    """The retrieval tables (5, 6, 9) as our reports read them."""

    tables: dict[str, PaperTable]

    @property
    def measures(self) -> tuple[str, ...]:
        """Our metric keys the paper reports."""
        return tuple(MEASURES)

    def _where(self, kind: str | None, collection: str, task: str, measure: str):
        """(the table, the cell's fields) of our kind and metric key, or None."""
        system = KIND_SYSTEMS.get(kind or "")
        if system is None or measure not in MEASURES:
            return None
        table, column = MEASURES[measure]
        fields = {
            "collection": COLLECTION_NAMES.get(collection, collection),
            "system": system,
            "task": TASK_NAMES.get(task, task),
            "measure": column,
        }
        return self.tables[table], fields

    def figure(self, kind: str | None, collection: str, task: str, measure: str) -> float | None:
        """The paper's figure for our ``kind`` on ``collection`` (human / nonhuman) and
        ``task`` (qa / sf / fc), or None: kind or measure not in the paper."""
        where = self._where(kind, collection, task, measure)
        return where[0].figure(**where[1]) if where else None

    def cell(self, kind: str | None, collection: str, task: str, measure: str) -> str:
        """The text of a "paper" cell: the figure, or why there is none."""
        if kind is None:
            return UNKNOWN_RETRIEVER
        where = self._where(kind, collection, task, measure)
        if where is None:
            return NOT_IN_PAPER
        table, fields = where
        value = table.figure(**fields)
        return f"{value:.1f}" if value is not None else table.gap(**fields) or NOT_IN_PAPER

    def row(self, kind: str | None, collection: str, task: str) -> PaperRow:
        """The paper's side of one of our rows: every measure it reports, looked up once."""
        return PaperRow(
            system=KIND_SYSTEMS.get(kind or ""),
            label=system_label(kind),
            figures={m: self.figure(kind, collection, task, m) for m in MEASURES},
            cells={m: self.cell(kind, collection, task, m) for m in MEASURES},
        )


@dataclass(frozen=True)
class PaperRow:
    """What the AmbER paper reports beside one of our rows, as data: the formatter prints it
    and metrics.json records it, neither looks anything up.

    ``system``: the paper's retriever of the same kind, or None; ``label``: what the "paper
    system" column says (`system_label`); ``figures``: per measure the paper reports, its
    figure or None; ``cells``: per measure, the text of the "paper" cell (the figure, or why
    there is none)."""

    system: str | None
    label: str
    figures: dict[str, float | None]
    cells: dict[str, str]

    def record(self) -> dict:
        """metrics.json's "paper": the system and its figure per reported measure."""
        return {"system": self.system, "figures": self.figures}


def paper_tables() -> AmberPaper:
    """The AmbER paper's retrieval tables, as our reports read them."""
    tables = paper("amber").tables
    return AmberPaper({t: tables[t] for t in ("5", "6", "9")})


def paper_row(kind: str | None, collection: str, task: str) -> PaperRow:
    """The paper's side of a row of our retriever ``kind`` on ``collection`` and ``task``."""
    return paper_tables().row(kind, collection, task)


def paper_figure(kind: str | None, collection: str, task: str, measure: str) -> float | None:
    """The paper's figure for (our retriever kind, collection, task, measure), or None."""
    return paper_tables().figure(kind, collection, task, measure)


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
    tables = paper("amber").tables
    pages = ", ".join(f"Table {t} p. {tables[t].page}" for t in ("5", "6", "9"))
    same = "" if kind != "link" else "; ours is a BLINK-style bi-encoder, not BLINK itself"
    return (
        f"paper: {system_label(kind)} in Chen et al. (ACL 2021), {pages}: top-1 (Table 5), "
        f"entity confusion on head and tail queries (Table 6), top-20 (Table 9){same}"
    )


def system_for(kind: str | None) -> str | None:
    """The paper's retriever of the same kind as ours, or None."""
    return KIND_SYSTEMS.get(kind or "")


def split_config(config: str) -> tuple[str, str]:
    """``human_qa`` -> (``human``, ``qa``); the task part is empty for a config without one."""
    collection, _, task = config.partition("_")
    return collection, task
