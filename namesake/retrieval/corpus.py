"""Documents of a KILT knowledge source and their 100-word passages.

A KILT knowledge source is JSON lines, one Wikipedia page per line, with ``wikipedia_id``,
``wikipedia_title`` and ``text``, a list of paragraphs whose first one is the page title.
Pages are streamed: nothing holds more than one block of lines at a time (and the ids read
so far, a bit each), and the indexes built from them (dense, SPLADE, the entity linker)
number their passages and feed their encoders a chunk at a time with
:class:`NumberedPassages` and :func:`chunks`. A page whose ``wikipedia_id`` an earlier page
has is skipped and reported (:func:`read_kilt_pages`), so every reader keeps the same page.
"""

from __future__ import annotations

import os
import sys
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TypeVar

import msgspec
from msgspec import Struct

from namesake.dumps.reading import iter_json_lines

PASSAGE_WORDS = 100  # DPR's passage length, in whitespace-separated words
REPEATED_EXAMPLES = 5  # the ids named of the pages that repeat an earlier page's id

T = TypeVar("T")


@dataclass
class Document:
    """A page: its KILT id, title, and text with paragraphs joined by single spaces."""

    wikipedia_id: str
    title: str
    text: str


@dataclass
class Passage:
    """A window of consecutive words of one document's text (the raw words, no title)."""

    wikipedia_id: str
    title: str
    text: str


class _KiltDocument(Struct):
    """The fields of a KILT page that retrieval reads; msgspec skips the others."""

    wikipedia_id: str | int
    wikipedia_title: str
    text: list[str]


_DOCUMENT = msgspec.json.Decoder(_KiltDocument)


def _paragraphs(page: _KiltDocument) -> list[str]:
    paragraphs = page.text
    # KILT repeats the title as the first paragraph; the title is kept apart, so drop it.
    if paragraphs and paragraphs[0].strip() == page.wikipedia_title.strip():
        paragraphs = paragraphs[1:]
    return paragraphs


def page_document(page: _KiltDocument) -> Document:
    """A decoded page (:func:`read_kilt_pages`) as a :class:`Document`."""
    text = " ".join(" ".join(_paragraphs(page)).split())
    return Document(str(page.wikipedia_id), page.wikipedia_title, text)


def page_passage_count(page: _KiltDocument, words: int = PASSAGE_WORDS) -> int:
    """How many passages :func:`split_passages` makes of the page, without making them:
    its words are those of its paragraphs taken one by one, as joining them with spaces
    adds no word. A third of the cost of splitting (``namesake encode``'s workers count
    the pages of the chunks that are not theirs)."""
    count = sum(len(paragraph.split()) for paragraph in _paragraphs(page))
    return max(1, -(-count // words))


class _SeenIds:
    """The page ids read so far, held compactly: a decimal id below `BITMAP_LIMIT` (KILT's
    are Wikipedia page ids, under 70 million) is one bit of a bytearray, 9 MB for all of
    KILT where a set of its 5.9 million id strings takes 700 MB, in each process that
    reads it (``namesake encode``'s workers all do); any other id is kept in a set."""

    BITMAP_LIMIT = 1 << 30  # so the bitmap stays under 128 MiB whatever the ids

    def __init__(self):
        self._bits = bytearray()
        self._others: set[str] = set()

    def add(self, page_id: str) -> bool:
        """Adds ``page_id``; False if it was there already."""
        # "007" and "7" are two ids: only the canonical spelling of a number is a bit
        if page_id.isascii() and page_id.isdecimal() and page_id[0] != "0":
            number = int(page_id)
            if number < self.BITMAP_LIMIT:
                byte, bit = number >> 3, 1 << (number & 7)
                if byte >= len(self._bits):  # grown by doubling: ids mostly increase
                    self._bits.extend(bytes(max(byte + 1, 2 * len(self._bits)) - len(self._bits)))
                if self._bits[byte] & bit:
                    return False
                self._bits[byte] |= bit
                return True
        if page_id in self._others:
            return False
        self._others.add(page_id)
        return True


def repeated_pages_line(repeated: list[str]) -> str:
    """What is said of the pages :func:`read_kilt_pages` skipped: how many, and the first
    few ids."""
    examples = ", ".join(repeated[:REPEATED_EXAMPLES])
    return (
        f"{len(repeated)} page(s) repeat the wikipedia_id of an earlier page: the first page "
        f"of each id is kept, the others skipped (e.g. wikipedia_id {examples})"
    )


def read_kilt_pages(
    path: str | os.PathLike, repeated: list[str] | None = None
) -> Iterator[_KiltDocument]:
    """Streams the decoded pages of a KILT knowledge source (bz2, gzip or plain JSON
    lines), for :func:`page_document` and :func:`page_passage_count`.

    Blank lines are skipped; any other line that is not a JSON object with a string or
    integer ``wikipedia_id``, a string ``wikipedia_title`` and a list of strings ``text``
    raises :class:`BadInputError` naming the file and line.

    Each ``wikipedia_id`` is read once: a page whose id an earlier page has is skipped, so
    that every index, the BEIR export and the Space's page store hold the first page of an
    id, and the same one (a retriever would otherwise keep both, and a store by id the
    last). The skipped ids are added to ``repeated`` when it is given, for the caller to
    report; otherwise a line on stderr says how many there were, naming the file and the
    first few ids (:func:`repeated_pages_line`), once the whole file is read.
    """
    seen = _SeenIds()
    skipped = [] if repeated is None else repeated
    for _, page in iter_json_lines(path, _DOCUMENT):
        page_id = str(page.wikipedia_id)
        if seen.add(page_id):
            yield page
        else:
            skipped.append(page_id)
    if repeated is None and skipped:
        from tqdm.auto import tqdm

        # on a line of its own, though a progress bar of the caller's may be showing
        tqdm.write(f"{path}: {repeated_pages_line(skipped)}", file=sys.stderr)


def read_kilt_documents(
    path: str | os.PathLike, repeated: list[str] | None = None
) -> Iterator[Document]:
    """Streams the pages of a KILT knowledge source as :class:`Document`, each id once
    (see :func:`read_kilt_pages`)."""
    for page in read_kilt_pages(path, repeated):
        yield page_document(page)


def split_passages(documents: Iterable[Document], words: int = PASSAGE_WORDS) -> Iterator[Passage]:
    """Splits each document's text into consecutive windows of `words` words (DPR).

    Windows do not overlap; the last one of a document holds the remaining words, so it may
    be shorter. A document with empty text yields one empty passage, so that its title can
    still be retrieved. Words are whitespace-separated and re-joined with single spaces.
    ``Passage.text`` is the raw window: the dense retriever adds the title to the encoder
    input itself (see ``namesake.retrieval.dense.passage_input``).
    """
    if words < 1:
        raise ValueError(f"words must be at least 1, got {words}")
    for document in documents:
        tokens = document.text.split()
        if not tokens:
            yield Passage(document.wikipedia_id, document.title, "")
            continue
        for start in range(0, len(tokens), words):
            window = " ".join(tokens[start : start + words])
            yield Passage(document.wikipedia_id, document.title, window)


class NumberedPassages:
    """The passages of `documents` (:func:`split_passages`) numbered as a passage index
    stores them: iterating adds each page's id to `document_ids` at its first passage, and
    to `passage_documents` each passage's page row (its place in `document_ids`)."""

    def __init__(self, documents: Iterable[Document], words: int = PASSAGE_WORDS):
        self.document_ids: list[str] = []
        self.passage_documents = array("q")
        self._passages = split_passages(documents, words)

    def __iter__(self) -> Iterator[Passage]:
        rows: dict[str, int] = {}
        for passage in self._passages:
            row = rows.get(passage.wikipedia_id)
            if row is None:
                row = rows[passage.wikipedia_id] = len(self.document_ids)
                self.document_ids.append(passage.wikipedia_id)
            self.passage_documents.append(row)
            yield passage


def chunks(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """`items` in lists of `size` (the last one may be shorter), each taken from `items`
    only when the one before has been used: an index built from a stream encodes a chunk
    at a time, so it never holds the whole corpus' encoder inputs."""
    chunk: list[T] = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
