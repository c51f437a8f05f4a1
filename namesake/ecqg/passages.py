"""100-word passages with titles (DPR convention) from a KILT file or a Wikipedia XML dump.

Passages are written to Parquet with columns ``id`` (``<wikipedia_id>_<n>``, n counting the
passages of a page from 0), ``wikipedia_id``, ``title`` and ``text``. Empty passages (pages
whose cleaned text is empty) are skipped and counted. :func:`read_passages` is the one reader
of that file: every step that takes ``--passages`` (rank-entities, attention-report, generate,
build-synthetic-set, evaluate-dpr) reads it there, and a file without the columns they need is
refused with the file and the missing columns named.
"""

from __future__ import annotations

import html
import os
import re
import sys
from collections.abc import Iterable, Iterator

import pyarrow as pa
import pyarrow.parquet as pq

from namesake.io import BadInputError, atomic_file
from namesake.retrieval.corpus import Document, Passage, read_kilt_documents, split_passages
from namesake.wes.dump import iter_pages

__all__ = [
    "PASSAGE_COLUMNS",
    "Passage",
    "clean_wikitext",
    "passages_from_kilt",
    "passages_from_wikipedia",
    "read_passages",
    "write_passages",
]

PASSAGE_COLUMNS = ("id", "title", "text")  # what every reader needs; wikipedia_id is optional

SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("wikipedia_id", pa.string()),
        ("title", pa.string()),
        ("text", pa.string()),
    ]
)

_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.S)
_REF_SELF = re.compile(r"<ref\b[^>]*/>", re.I)
_REF = re.compile(r"<ref\b[^>]*>.*?(?:</ref\s*>|$)", re.I | re.S)
_DROP_TAGS = re.compile(
    r"<(math|gallery|timeline|syntaxhighlight|source|score|templatedata|nowiki|pre|imagemap)\b"
    r"[^>]*>.*?(?:</\1\s*>|$)",
    re.I | re.S,
)
_TAG = re.compile(r"</?[a-zA-Z][^>]*/?>")
_TEMPLATE = re.compile(r"\{\{(?:(?!\{\{|\}\}).)*\}\}", re.S)
_TABLE = re.compile(r"\{\|(?:(?!\{\||\|\}).)*\|\}", re.S)
_FILE_LINK = re.compile(
    r"\[\[\s*(?:file|image|category|media)\s*:(?:(?!\[\[|\]\]).)*\]\]", re.I | re.S
)
_LINK = re.compile(r"\[\[([^\[\]|]*)(?:\|([^\[\]]*))?\]\]")
_EXTERNAL = re.compile(r"\[(?:https?:|ftp:)?//[^\s\]]*\s*([^\]]*)\]")
_HEADING = re.compile(r"^\s*(=+)\s*(.*?)\s*\1\s*$", re.M)
_QUOTES = re.compile(r"'{2,}")
_LIST_MARK = re.compile(r"^[*#:;]+\s*", re.M)
_RULE = re.compile(r"^-{4,}\s*$", re.M)
_BEHAVIOUR = re.compile(r"__[A-Z]+__")


def _remove_nested(pattern: re.Pattern, text: str) -> str:
    """Removes innermost matches repeatedly, so nested templates/tables/files go too."""
    while True:
        text, n = pattern.subn("", text)
        if not n:
            return text


def clean_wikitext(wikitext: str) -> str:
    """Turns wikitext into plain text with simple regular expressions (no full parser).

    Drops comments, references, templates (nested), tables, file/image/category links,
    math and similar tags, and remaining HTML tags; keeps the visible text of internal links
    (``[[a|b]]`` → ``b``, ``[[a]]`` → ``a``) and external links' labels; strips bold/italic
    quotes, heading marks (keeping the heading text) and list marks. Whitespace is collapsed
    to single spaces. Unbalanced leftovers of ``[[``, ``]]``, ``{{`` and ``}}`` are removed.
    """
    text = _COMMENT.sub("", wikitext)
    text = _REF_SELF.sub("", text)
    text = _REF.sub("", text)
    text = _DROP_TAGS.sub("", text)
    text = _remove_nested(_TEMPLATE, text)
    text = _remove_nested(_TABLE, text)
    # file links may hold links in their captions: resolve inner links first, then drop files
    while True:
        text, n = _FILE_LINK.subn("", text)
        text, m = _LINK.subn(lambda mt: _link_text(mt), text)
        if not n and not m:
            break
    text = _EXTERNAL.sub(r"\1", text)
    text = _TAG.sub("", text)
    text = _HEADING.sub(r"\2", text)
    text = _QUOTES.sub("", text)
    text = _LIST_MARK.sub("", text)
    text = _RULE.sub("", text)
    text = _BEHAVIOUR.sub("", text)
    text = html.unescape(text).replace("\xa0", " ")
    for leftover in ("[[", "]]", "{{", "}}", "{|", "|}"):
        text = text.replace(leftover, " ")
    return " ".join(text.split())


def _link_text(match: re.Match) -> str:
    target, label = match.group(1), match.group(2)
    if label is not None:
        return label
    return target.lstrip(":").split("#")[0] if not target.startswith("#") else target[1:]


def passages_from_kilt(path: str | os.PathLike) -> Iterator[Passage]:
    """The 100-word passages of a KILT knowledge source (see ``read_kilt_documents``)."""
    yield from split_passages(read_kilt_documents(path))


def _wikipedia_documents(path: str | os.PathLike) -> Iterator[Document]:
    for page in iter_pages(path, namespaces=(0,)):
        if page.redirect is not None or page.namespace != 0:
            continue
        yield Document(str(page.page_id), page.title, clean_wikitext(page.text))


def passages_from_wikipedia(path: str | os.PathLike) -> Iterator[Passage]:
    """The 100-word passages of the main-namespace, non-redirect pages of an XML dump.

    Wikitext is cleaned with :func:`clean_wikitext`; the page id is the ``wikipedia_id``.
    """
    yield from split_passages(_wikipedia_documents(path))


def write_passages(
    passages: Iterable[Passage], path: str | os.PathLike, batch_rows: int = 50_000
) -> dict[str, int]:
    """Writes passages to Parquet atomically; returns ``{"passages": n, "empty_skipped": m}``.

    Ids are ``<wikipedia_id>_<n>`` with n the passage's position within its page (empty
    passages are skipped, so they use no number). The count of skipped empty passages is
    also printed to stderr when nonzero.
    """
    written = skipped = 0
    counters: dict[str, int] = {}
    columns: dict[str, list[str]] = {name: [] for name in SCHEMA.names}
    with atomic_file(path, "wb") as f:
        writer = pq.ParquetWriter(f, SCHEMA)
        try:

            def flush():
                if columns["id"]:
                    writer.write_table(pa.table(columns, schema=SCHEMA))
                    for values in columns.values():
                        values.clear()

            for passage in passages:
                if not passage.text or not passage.text.strip():
                    skipped += 1
                    continue
                n = counters.get(passage.wikipedia_id, 0)
                counters[passage.wikipedia_id] = n + 1
                columns["id"].append(f"{passage.wikipedia_id}_{n}")
                columns["wikipedia_id"].append(passage.wikipedia_id)
                columns["title"].append(passage.title)
                columns["text"].append(passage.text)
                written += 1
                if len(columns["id"]) >= batch_rows:
                    flush()
            flush()
        finally:
            writer.close()
    if skipped:
        print(f"write_passages: skipped {skipped} empty passage(s)", file=sys.stderr)
    return {"passages": written, "empty_skipped": skipped}


def checked_parquet_columns(
    path: str | os.PathLike, required: Iterable[str], what: str, hint: str = ""
) -> list[str]:
    """The column names of the Parquet file `path`, once it is known to have `required`;
    otherwise a :class:`namesake.io.BadInputError` names the file and what is wrong (missing,
    not Parquet, or the missing columns). `what` names the kind of file in the message."""
    try:
        names = pq.read_schema(path).names
    except FileNotFoundError:
        raise BadInputError(path, None, f"no such {what} file") from None
    except (OSError, pa.ArrowInvalid) as exc:
        raise BadInputError(path, None, f"not a {what} Parquet file ({exc})") from None
    missing = [name for name in required if name not in names]
    if missing:
        raise BadInputError(
            path,
            None,
            f"{what} Parquet lacks column(s) {', '.join(missing)} "
            f"(has {', '.join(names) or 'none'}{'; ' + hint if hint else ''})",
        )
    return names


def read_passages(
    path: str | os.PathLike,
    columns: Iterable[str] | None = None,
    max_passages: int | None = None,
) -> pa.Table:
    """Reads and checks a passages Parquet file written by :func:`write_passages`.

    The file must have the columns ``id``, ``title`` and ``text`` (``wikipedia_id`` is
    optional); otherwise, or when it is missing or not Parquet, a
    :class:`namesake.io.BadInputError` names the file and what is wrong (the missing
    columns). `columns` selects the columns returned (default: all); `max_passages` keeps the
    first rows only.
    """
    names = checked_parquet_columns(
        path,
        PASSAGE_COLUMNS,
        "passages",
        "`namesake ecqg passages` writes id, wikipedia_id, title, text",
    )
    columns = list(columns) if columns is not None else None
    unknown = [name for name in columns or () if name not in names]
    if unknown:
        raise BadInputError(path, None, f"passages Parquet lacks column(s) {', '.join(unknown)}")
    table = pq.read_table(path, columns=columns)
    if max_passages is not None:
        table = table.slice(0, max_passages)
    return table
