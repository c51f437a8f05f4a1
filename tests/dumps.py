"""Writers of small dumps in the real formats, for hand-built test fixtures."""

from __future__ import annotations

import bz2
import gzip
import itertools
import json
from pathlib import Path
from xml.sax.saxutils import escape

import msgspec


def _snak(pid: str, value) -> dict:
    if value is None:
        return {"snaktype": "somevalue", "property": pid, "datatype": "wikibase-item"}
    if isinstance(value, str) and value.startswith("Q"):
        return {
            "snaktype": "value",
            "property": pid,
            "datavalue": {
                "value": {"entity-type": "item", "numeric-id": int(value[1:]), "id": value},
                "type": "wikibase-entityid",
            },
            "datatype": "wikibase-item",
        }
    if isinstance(value, str) and value[:1] in "+-":
        return {
            "snaktype": "value",
            "property": pid,
            "datavalue": {"value": {"amount": value, "unit": "1"}, "type": "quantity"},
            "datatype": "quantity",
        }
    return {
        "snaktype": "value",
        "property": pid,
        "datavalue": {"value": value, "type": "string"},
        "datatype": "string",
    }


def item(qid, label=None, aliases=(), enwiki=None, claims=None) -> dict:
    """A Wikidata item; claim values: 'Q..' items, '+12' quantities, None somevalue, str strings."""
    entity = {
        "type": "item",
        "id": qid,
        "labels": {"en": {"language": "en", "value": label}} if label else {},
        "descriptions": {},
        "aliases": {"en": [{"language": "en", "value": a} for a in aliases]} if aliases else {},
        "claims": {
            pid: [
                {
                    "mainsnak": _snak(pid, v),
                    "type": "statement",
                    "id": f"{qid}${pid}-{i}",
                    "rank": "normal",
                }
                for i, v in enumerate(values)
            ]
            for pid, values in (claims or {}).items()
        },
        "sitelinks": {"enwiki": {"site": "enwiki", "title": enwiki, "badges": []}}
        if enwiki
        else {},
    }
    return entity


def prop(pid, label) -> dict:
    return {
        "type": "property",
        "datatype": "wikibase-item",
        "id": pid,
        "labels": {"en": {"language": "en", "value": label}},
        "descriptions": {},
        "aliases": {},
        "claims": {},
    }


def _open(path: Path, mode: str):
    if path.suffix == ".bz2":
        return bz2.open(path, mode)
    if path.suffix == ".gz":
        return gzip.open(path, mode)
    return open(path, mode)


def compress(data: bytes, compression: str) -> bytes:
    """`data` compressed as "bz2" or "gzip", or left "plain"."""
    return {"bz2": bz2.compress, "gzip": gzip.compress, "plain": bytes}[compression](data)


def members(data: bytes, compression: str, parts: int = 3) -> bytes:
    """`data` cut into `parts` pieces (inside lines), compressed one by one, concatenated:
    a multi-member gzip or multi-stream bz2 file, as `cat a.gz b.gz` or pbzip2 make."""
    cuts = [len(data) * k // parts for k in range(parts + 1)]
    return b"".join(compress(data[a:b], compression) for a, b in itertools.pairwise(cuts))


def write_wikidata(path, entities: list[dict]) -> Path:
    """The dump layout: '[', one entity per line followed by ',', except the last, ']'."""
    path = Path(path)
    lines = [
        msgspec.json.encode(e) + (b"," if i < len(entities) - 1 else b"")
        for i, e in enumerate(entities)
    ]
    with _open(path, "wb") as f:
        f.write(b"[\n" + b"\n".join(lines) + b"\n]\n")
    return path


def write_pagecounts(path, views: dict[str, int], other_lines=()) -> Path:
    """pagecounts-ez monthly totals: 'en.z Title 123'."""
    path = Path(path)
    lines = [f"en.z {title.replace(' ', '_')} {count}" for title, count in views.items()]
    with _open(path, "wt") as f:
        f.write("\n".join([*other_lines, *lines]) + "\n")
    return path


def write_pageviews_complete(path, views: dict[str, int]) -> Path:
    """pageviews-complete monthly: 'en.wikipedia Title page_id access count hourly',
    each title's views split over desktop and mobile-web lines."""
    path = Path(path)
    lines = ["de.wikipedia Berlin 1 desktop 5000 A5000"]
    for page_id, (title, count) in enumerate(views.items(), 1):
        desktop = count // 2
        lines.append(
            f"en.wikipedia {title.replace(' ', '_')} {page_id} desktop {desktop} A{desktop}"
        )
        lines.append(
            f"en.wikipedia {title.replace(' ', '_')} {page_id} mobile-web {count - desktop} B1"
        )
    with _open(path, "wt") as f:
        f.write("\n".join(lines) + "\n")
    return path


def page(wikipedia_id, title, paragraphs, qid=None) -> dict:
    record = {
        "_id": str(wikipedia_id),
        "wikipedia_id": str(wikipedia_id),
        "wikipedia_title": title,
        "text": [title + "\n"] + [p + "\n" for p in paragraphs],
        "anchors": [],
        "categories": "",
        "history": {"pageid": int(wikipedia_id), "revid": 1},
    }
    if qid:
        record["wikidata_info"] = {"wikidata_id": qid, "wikidata_label": title}
    return record


def write_kilt(path, pages: list[dict]) -> Path:
    path = Path(path)
    with _open(path, "wt") as f:
        for record in pages:
            f.write(json.dumps(record) + "\n")
    return path


def write_dump(
    path: Path, articles: dict[str, str], redirects: dict[str, str] | None = None
) -> Path:
    """A plain pages-articles dump: articles (title -> wikitext) and redirects."""
    pages = [
        f"<page><title>{escape(t)}</title><ns>0</ns><id>{n}</id>"
        f"<revision><text>{escape(text)}</text></revision></page>"
        for n, (t, text) in enumerate(articles.items(), 1)
    ]
    pages += [
        f'<page><title>{escape(t)}</title><ns>0</ns><id>{1000 + n}</id><redirect title="'
        f'{escape(target)}" /><revision><text>#REDIRECT [[{escape(target)}]]</text></revision>'
        "</page>"
        for n, (t, target) in enumerate((redirects or {}).items())
    ]
    path.write_text("<mediawiki>" + "".join(pages) + "</mediawiki>", encoding="utf-8")
    return path


def split_pages(xml: bytes) -> tuple[bytes, list[bytes], bytes]:
    """(header with site info, one chunk per page, closing tag) of a MediaWiki export."""
    first = xml.index(b"  <page>")
    closing = xml.rindex(b"</mediawiki>")
    body = xml[first:closing]
    pages = [b"  <page>" + chunk for chunk in body.split(b"  <page>")[1:]]
    return xml[:first], pages, xml[closing:]


def write_multistream(path, xml: bytes, pages_per_stream: int) -> list[int]:
    """An export as a multistream dump (header, streams of `pages_per_stream` pages, closing
    tag, each its own bz2 stream, as Wikimedia writes them); returns the stream offsets."""
    header, pages, footer = split_pages(xml)
    groups = [
        b"".join(pages[i : i + pages_per_stream]) for i in range(0, len(pages), pages_per_stream)
    ]
    streams = [bz2.compress(part) for part in [header, *groups, footer]]
    Path(path).write_bytes(b"".join(streams))
    return [sum(len(s) for s in streams[:i]) for i in range(len(streams))]
