"""Markdown tables: the one renderer of the pipe tables namesake prints and writes.

It lays cells out and nothing more. The callers format their own cells, since each table
rounds its figures its own way on purpose (percentages to one decimal, AUCs to three, counts
with thousands separators), and it escapes nothing: a cell reads as its caller wrote it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

#: the rule under a header cell, by alignment letter: l(eft) or r(ight)
_RULES = {"l": "---", "r": "---:"}


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[str]], align: str = "lr") -> str:
    """A pipe table: the ``header`` line, its alignment rule, then one line per row of cells
    (strings, formatted by the caller), joined by newlines with none at the end.

    ``align`` gives each column a letter, ``l`` (left, ``---``) or ``r`` (right, ``---:``),
    and its last letter holds for every column after it: ``"lr"``, the default (a label,
    then figures), right-aligns all but the first column, ``"lllr"`` all but the first three,
    ``"l"`` none. A row without one cell per column raises ValueError: its cells would
    otherwise stand silently under the wrong headers.
    """
    rule = "|" + "".join(f"{_RULES[letter]}|" for letter in _alignments(align, len(header)))
    lines = [_line(header), rule]
    for number, row in enumerate(rows, 1):
        if len(row) != len(header):
            raise ValueError(
                f"Markdown table row {number}: {len(row)} cells for {len(header)} columns "
                f"({', '.join(header)})"
            )
        lines.append(_line(row))
    return "\n".join(lines)


def _alignments(align: str, columns: int) -> str:
    """One alignment letter per column: ``align``, its last letter repeated to the end."""
    if not align or set(align) - set(_RULES) or len(align) > columns:
        raise ValueError(
            f"Markdown table alignment {align!r}: one letter, l or r, for each of the first "
            f"columns (at most {columns}), the last letter holding for the rest"
        )
    return align + align[-1] * (columns - len(align))


def _line(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"
