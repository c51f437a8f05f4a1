"""Reading the KILT knowledge source (JSON lines, one Wikipedia page per line).

Only pages of wanted entities are parsed: a regular expression finds a line's Wikidata id
first, so the 35 GB file is mostly scanned, not decoded. A page keeps only what alignment
needs: its id, title and the normalised tokens of its first 350 words.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from dataclasses import dataclass, field

import msgspec
from msgspec import UNSET, Struct, UnsetType

from namesake.dumps.reading import map_blocks
from namesake.errors import JSON_LINE_ERRORS, InputProblems, describe_json_error, not_an_object
from namesake.text import get_tokens

LEADING_WORDS = 350  # AmbER looks for answers in the first 350 whitespace tokens of a page
_WIKIDATA_ID = re.compile(rb'"wikidata_id":\s*"(Q\d+)"')


@dataclass
class Page:
    wikipedia_id: str
    title: str
    tokens: list[str]
    positions: dict[str, list[int]] = field(init=False, repr=False)

    def __post_init__(self):
        self.positions = defaultdict(list)
        for position, token in enumerate(self.tokens):
            self.positions[token].append(position)

    def contains(self, tokens: list[str]) -> bool:
        """Whether ``tokens`` occur contiguously in the page's leading tokens.

        Looks only where the first token occurs; an empty sequence matches any non-empty
        page, as in the published code.
        """
        if not tokens:
            return bool(self.tokens)
        size = len(tokens)
        return any(
            self.tokens[start : start + size] == tokens
            for start in self.positions.get(tokens[0], ())
        )


class _WikidataInfo(Struct):
    wikidata_id: str


class _KiltPage(Struct):
    """The fields of a KILT page that alignment reads; msgspec skips the others."""

    wikipedia_id: str | int
    wikipedia_title: str
    text: list[str]
    wikidata_info: _WikidataInfo


class _MaybeWikidataInfo(Struct):
    wikidata_id: str | UnsetType = UNSET


class _PageWithoutQid(Struct):
    """A page that `_WIKIDATA_ID` finds no QID in: a JSON object (msgspec checks its syntax,
    skipping the other fields) whose wikidata_info, if any, has no Q-number id."""

    wikidata_info: _MaybeWikidataInfo | UnsetType = UNSET


_PAGE = msgspec.json.Decoder(_KiltPage)
_PAGE_WITHOUT_QID = msgspec.json.Decoder(_PageWithoutQid)
_wanted_qids: frozenset[str] = frozenset()


def _init_worker(wanted_qids: frozenset[str]) -> None:
    global _wanted_qids
    _wanted_qids = wanted_qids


def _parse_block(block: tuple[int, bytes]):
    first_line, data = block
    pages, problems = [], []
    for line_no, line in enumerate(data.splitlines(), first_line):
        line = line.strip()
        if not line:
            continue
        if not (line.startswith(b"{") and line.endswith(b"}")):
            problems.append((line_no, "not JSON", not_an_object(line)))
            continue
        found = _WIKIDATA_ID.search(line)
        if found is None:
            # A page without a Wikidata id, or a line cut before it (or with a wikidata_info
            # of the wrong type): the few such lines are checked, so that a broken one is
            # reported, not dropped unseen.
            try:
                _PAGE_WITHOUT_QID.decode(line)
            except (msgspec.DecodeError, *JSON_LINE_ERRORS) as exc:
                problems.append((line_no, *describe_json_error(exc)))
            continue
        if found.group(1).decode() not in _wanted_qids:
            continue
        try:
            page = _PAGE.decode(line)
        except (msgspec.DecodeError, *JSON_LINE_ERRORS) as exc:
            problems.append((line_no, *describe_json_error(exc)))
            continue
        words = " ".join(" ".join(page.text).split()[:LEADING_WORDS])
        pages.append(
            (
                page.wikidata_info.wikidata_id,
                str(page.wikipedia_id),
                page.wikipedia_title,
                get_tokens(words),
            )
        )
    return pages, problems


def read_pages(
    path: str | os.PathLike,
    wanted_qids: set[str],
    problems: InputProblems,
    workers: int = 1,
) -> dict[str, list[Page]]:
    """QID -> its KILT pages, in file order, for the wanted QIDs."""
    pages: dict[str, list[Page]] = defaultdict(list)
    for found, block_problems in map_blocks(
        path,
        _parse_block,
        workers=workers,
        initializer=_init_worker,
        initargs=(frozenset(wanted_qids),),
        desc="Stage 4: KILT pages",
    ):
        problems.merge(path, block_problems)
        for qid, wikipedia_id, title, tokens in found:
            pages[qid].append(Page(wikipedia_id, title, tokens))
    return pages
