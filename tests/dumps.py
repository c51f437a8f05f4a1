"""Small dumps in the real formats, for hand-built test fixtures: the signatures the tests
use, over `namesake.dumps.formats`, which writes the formats."""

from __future__ import annotations

import itertools
from pathlib import Path

import msgspec

from namesake.dumps import formats
from namesake.dumps.formats import compress, split_pages, write_multistream

__all__ = [
    "compress",
    "item",
    "members",
    "page",
    "prop",
    "split_pages",
    "write_dump",
    "write_kilt",
    "write_multistream",
    "write_pagecounts",
    "write_pageviews_complete",
    "write_wikidata",
]


def _snak(pid: str, value) -> str:
    if value is None:
        return formats.snak(pid, "wikibase-item", formats.SOMEVALUE)
    if isinstance(value, str) and value.startswith("Q"):
        return formats.snak(pid, "wikibase-item", formats.item_value(value))
    if isinstance(value, str) and value[:1] in "+-":
        return formats.snak(pid, "quantity", formats.quantity_value(value))
    return formats.snak(pid, "string", formats.string_value(value))


def item(qid, label=None, aliases=(), enwiki=None, claims=None) -> dict:
    """A Wikidata item; claim values: 'Q..' items, '+12' quantities, None somevalue, str strings."""
    guids = itertools.count()
    statements = {
        pid: [
            formats.statement(formats.statement_id(qid, next(guids)), _snak(pid, value))
            for value in values
        ]
        for pid, values in (claims or {}).items()
    }
    entity = formats.item(
        qid,
        labels={"en": label} if label else None,
        aliases={"en": aliases} if aliases else None,
        claims=statements,
        titles={"enwiki": enwiki} if enwiki else None,
    )
    return msgspec.json.decode(entity)


def prop(pid, label) -> dict:
    return msgspec.json.decode(formats.property_entity(pid, "wikibase-item", {"en": label}))


def members(data: bytes, compression: str, parts: int = 3) -> bytes:
    """`data` cut into `parts` pieces (inside lines), compressed one by one, concatenated:
    a multi-member gzip or multi-stream bz2 file, as `cat a.gz b.gz` or pbzip2 make."""
    cuts = [len(data) * k // parts for k in range(parts + 1)]
    return b"".join(compress(data[a:b], compression) for a, b in itertools.pairwise(cuts))


def write_wikidata(path, entities: list[dict]) -> Path:
    """The Wikidata dump of `entities`, compressed by the file name's suffix."""
    return formats.write_dump_file(path, formats.wikidata_dump(map(msgspec.json.encode, entities)))


def write_pagecounts(path, views: dict[str, int], other_lines=()) -> Path:
    """pagecounts-ez monthly totals of English pages (title -> views), after `other_lines`."""
    lines = [formats.pagecounts_line(title, count) for title, count in views.items()]
    return formats.write_lines(path, [*other_lines, *lines])


def write_pageviews_complete(path, views: dict[str, int]) -> Path:
    """pageviews-complete monthly, each title's views split over desktop and mobile-web
    lines, after a German page's line."""
    daily = formats.daily_counts
    lines = [
        formats.pageviews_complete_line("Berlin", 1, "desktop", 5000, daily([5000]), "de.wikipedia")
    ]
    for page_id, (title, count) in enumerate(views.items(), 1):
        desktop = count // 2
        lines += [
            formats.pageviews_complete_line(title, page_id, "desktop", desktop, daily([desktop])),
            formats.pageviews_complete_line(
                title, page_id, "mobile-web", count - desktop, daily([count - desktop])
            ),
        ]
    return formats.write_lines(path, lines)


def page(wikipedia_id, title, paragraphs, qid=None) -> dict:
    return formats.kilt_page(
        wikipedia_id,
        title,
        paragraphs,
        history={"pageid": int(wikipedia_id), "revid": 1},
        wikidata_info=formats.kilt_wikidata_info(qid, title) if qid else None,
    )


def write_kilt(path, pages: list[dict]) -> Path:
    return formats.write_lines(path, map(formats.kilt_line, pages))


def write_dump(
    path: Path, articles: dict[str, str], redirects: dict[str, str] | None = None
) -> Path:
    """A plain pages-articles dump: articles (title -> wikitext, ids from 1) and redirects
    (title -> target, ids from 1000)."""
    pages = [
        formats.wikipedia_page(title, n, text)
        for n, (title, text) in enumerate(articles.items(), 1)
    ]
    pages += [
        formats.wikipedia_page(title, 1000 + n, f"#REDIRECT [[{target}]]", redirect=target)
        for n, (title, target) in enumerate((redirects or {}).items())
    ]
    return formats.write_dump_file(path, formats.wikipedia_export(pages))
