"""100-word passages with titles (DPR convention) from a KILT file or a Wikipedia XML dump.

Passages are written to Parquet with columns ``id`` (``<wikipedia_id>_<n>``, n counting the
passages of a page from 0), ``wikipedia_id``, ``title`` and ``text``. Empty passages (pages
whose cleaned text is empty) are skipped and counted. :func:`read_passages` is the one reader
of that file: every step that takes ``--passages`` (rank-entities, attention-report, generate,
build-synthetic-set, evaluate-dpr) reads it there, and a file without the columns they need is
refused with the file and the missing columns named.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator

import pyarrow as pa
import pyarrow.parquet as pq

from namesake.errors import BadInputError
from namesake.outputs import atomic_file
from namesake.retrieval.corpus import Document, Passage, read_kilt_documents, split_passages
from namesake.wikipedia.dump import iter_pages
from namesake.wikipedia.wikitext import clean_wikitext

__all__ = [
    "PASSAGE_COLUMNS",
    "Passage",
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
    otherwise a :class:`namesake.errors.BadInputError` names the file and what is wrong (missing,
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
    :class:`namesake.errors.BadInputError` names the file and what is wrong (the missing
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
