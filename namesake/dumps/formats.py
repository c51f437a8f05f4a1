"""Writing the dump formats the pipelines read: Wikidata's JSON dump, pagecounts-ez and
pageviews-complete page views, the KILT knowledge source and MediaWiki XML exports.

The test fixtures (tests/dumps.py), the hand-made AmbER sample
(dataset_scripts/amber/sample/make_sample.py) and the synthetic benchmark dumps
(benchmarks/make_synthetic_dumps.py) all write these formats, so that what a reader relies on
(the Wikidata dump writes "type" first and "sitelinks" after "claims", which stage 1's
pre-filter counts on; a snak without a value has no "datavalue" key; a KILT page's QID sits in
"wikidata_info") is written one way, here. Values are written as given, unchecked: fixtures
and samples write malformed records on purpose.

Wikidata records are compact JSON text, built in the dump's key order by f-strings: the
benchmark writes millions of items, and dicts and an encoder took several times as long.
Free text (labels, titles, string values) is escaped where JSON needs it; identifiers, hashes,
language codes and amounts are written as they are. A caller that edits a record decodes it
(`msgspec.json.decode`); encoded back (`msgspec.json.encode`), it is the same text.
"""

from __future__ import annotations

import bz2
import gzip
import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import BinaryIO
from xml.sax.saxutils import escape

import msgspec

from namesake.errors import NamesakeError

# ---------------------------------------------------------------------------------------
# Wikidata JSON dump: values, snaks, statements, entities
# ---------------------------------------------------------------------------------------

ENTITY_URI = "http://www.wikidata.org/entity/"
GREGORIAN_CALENDAR = f"{ENTITY_URI}Q1985727"
EARTH = f"{ENTITY_URI}Q2"
#: the snak types without a value, given to `snak` in place of a datavalue
SOMEVALUE, NOVALUE = "somevalue", "novalue"


def _plain(text: str) -> bool:
    """Whether `text` goes inside a JSON string as it is (most does: no escaping)."""
    return text.isprintable() and '"' not in text and "\\" not in text


def _text(text: str) -> str:
    """`text` as the inside of a JSON string."""
    return text if _plain(text) else msgspec.json.encode(text)[1:-1].decode()


def _texts(by_key: dict[str, str]) -> dict[str, str]:
    """`by_key`'s texts as the insides of JSON strings; checked all at once, which costs less
    than text by text (the benchmark writes tens of labels and sitelinks an item)."""
    if _plain("".join(by_key.values())):
        return by_key
    return {key: _text(text) for key, text in by_key.items()}


def _json(value) -> str:
    return msgspec.json.encode(value).decode()


def item_value(qid: str) -> str:
    """The datavalue of an item ('Q91')."""
    return (
        f'{{"value":{{"entity-type":"item","numeric-id":{qid[1:]},"id":"{qid}"}},'
        '"type":"wikibase-entityid"}'
    )


def quantity_value(amount: str, unit: str | None = None, bounds: bool = False) -> str:
    """The datavalue of a quantity: a signed decimal ('+1.93'); `unit` the QID of its unit
    (None for a plain number); `bounds`: upper and lower bounds equal to the amount."""
    unit_uri = "1" if unit is None else f"{ENTITY_URI}{unit}"
    bounds_json = f',"upperBound":"{amount}","lowerBound":"{amount}"' if bounds else ""
    return f'{{"value":{{"amount":"{amount}","unit":"{unit_uri}"{bounds_json}}},"type":"quantity"}}'


def time_value(time: str, precision: int = 11) -> str:
    """The datavalue of a Gregorian date ('+1809-02-12T00:00:00Z'); precision 11 is a day,
    9 a year."""
    return (
        f'{{"value":{{"time":"{time}","timezone":0,"before":0,"after":0,'
        f'"precision":{precision},"calendarmodel":"{GREGORIAN_CALENDAR}"}},"type":"time"}}'
    )


def string_value(text: str) -> str:
    """The datavalue of the string-valued datatypes (string, external-id, url, ...)."""
    return f'{{"value":"{_text(text)}","type":"string"}}'


def monolingual_value(text: str, language: str) -> str:
    return (
        f'{{"value":{{"text":"{_text(text)}","language":"{language}"}},"type":"monolingualtext"}}'
    )


def globe_value(latitude: float, longitude: float, precision: float = 0.0001) -> str:
    """The datavalue of a coordinate on Earth (the datatype is "globe-coordinate", the
    datavalue's type "globecoordinate")."""
    return (
        f'{{"value":{{"latitude":{_json(latitude)},"longitude":{_json(longitude)},'
        f'"altitude":null,"precision":{_json(precision)},"globe":"{EARTH}"}},'
        '"type":"globecoordinate"}'
    )


def snak(pid: str, datatype: str, datavalue: str, digest: str | None = None) -> str:
    """A snak of property `pid`: `datavalue` from a value builder above, or SOMEVALUE or
    NOVALUE (the dump then leaves "datavalue" out); `digest` its "hash", where wanted."""
    head = f'"property":"{pid}"' if digest is None else f'"property":"{pid}","hash":"{digest}"'
    if datavalue in (SOMEVALUE, NOVALUE):
        return f'{{"snaktype":"{datavalue}",{head},"datatype":"{datatype}"}}'
    return f'{{"snaktype":"value",{head},"datavalue":{datavalue},"datatype":"{datatype}"}}'


def statement_id(qid: str, guid: int) -> str:
    """A statement id as Wikibase writes it: the QID, '$' and a 128-bit GUID."""
    h = f"{guid:032X}"
    return f"{qid}${h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def statement(
    guid: str,
    mainsnak: str,
    qualifiers: dict[str, list[str]] | None = None,
    references: Sequence[str] = (),
) -> str:
    """A statement (rank normal): its id `guid` (`statement_id`), the main snak, qualifier
    snaks by property and `reference`s, where there are any."""
    qualifiers_json = (
        f'"qualifiers":{_by_property(qualifiers)},"qualifiers-order":{_order(qualifiers)},'
        if qualifiers
        else ""
    )
    references_json = f',"references":[{",".join(references)}]' if references else ""
    return (
        f'{{"mainsnak":{mainsnak},"type":"statement",{qualifiers_json}"id":"{guid}",'
        f'"rank":"normal"{references_json}}}'
    )


def reference(snaks: dict[str, list[str]], digest: str) -> str:
    """A statement's reference: its snaks by property."""
    return f'{{"hash":"{digest}","snaks":{_by_property(snaks)},"snaks-order":{_order(snaks)}}}'


def _object(entries: list[str]) -> str:
    """A JSON object of its '"key":value' entries."""
    return "{" + ",".join(entries) + "}"


def _by_property(records: dict[str, list[str]]) -> str:
    """Records (snaks, statements) by property, as a JSON object."""
    return _object([f'"{pid}":[{",".join(some)}]' for pid, some in records.items()])


def _order(records: dict[str, list[str]]) -> str:
    return '["' + '","'.join(records) + '"]'


def texts(by_language: dict[str, str] | None) -> str:
    """Labels or descriptions: language -> text."""
    return _object(
        [
            f'"{lang}":{{"language":"{lang}","value":"{text}"}}'
            for lang, text in _texts(by_language or {}).items()
        ]
    )


def alias_texts(by_language: dict[str, Sequence[str]] | None) -> str:
    """Aliases: language -> its aliases."""
    return _object(
        [f'"{lang}":[{_aliases(lang, aliases)}]' for lang, aliases in (by_language or {}).items()]
    )


def _aliases(lang: str, aliases: Sequence[str]) -> str:
    return ",".join([f'{{"language":"{lang}","value":"{_text(alias)}"}}' for alias in aliases])


def sitelinks(titles: dict[str, str] | None) -> str:
    """Sitelinks: site ('enwiki') -> page title (with spaces)."""
    return _object(
        [
            f'"{site}":{{"site":"{site}","title":"{title}","badges":[]}}'
            for site, title in _texts(titles or {}).items()
        ]
    )


def _page_fields(fields: dict) -> str:
    """The fields as the end of an entity's JSON object (',"name":value' each)."""
    return f",{_json(fields)[1:-1]}" if fields else ""


def item(
    qid: str,
    *,
    labels: dict[str, str] | None = None,
    descriptions: dict[str, str] | None = None,
    aliases: dict[str, Sequence[str]] | None = None,
    claims: dict[str, list[str]] | None = None,
    titles: dict[str, str] | None = None,
    **page_fields,
) -> str:
    """An item: texts by language, `statement`s by property, sitelink `titles` by site;
    `page_fields` (pageid, ns, title, lastrevid, modified, as the dump has them) follow in
    the order given."""
    return (
        f'{{"type":"item","id":"{qid}","labels":{texts(labels)},'
        f'"descriptions":{texts(descriptions)},"aliases":{alias_texts(aliases)},'
        f'"claims":{_by_property(claims or {})},"sitelinks":{sitelinks(titles)}'
        f"{_page_fields(page_fields)}}}"
    )


def property_entity(pid: str, datatype: str, labels: dict[str, str], **page_fields) -> str:
    """A property (no descriptions, aliases or claims: the pipeline reads only its English
    label); `page_fields` as in `item`."""
    return (
        f'{{"type":"property","datatype":"{datatype}","id":"{pid}","labels":{texts(labels)},'
        f'"descriptions":{{}},"aliases":{{}},"claims":{{}}{_page_fields(page_fields)}}}'
    )


# The dump's layout: '[', one entity per line, each but the last followed by ',', ']'.
WIKIDATA_OPEN, WIKIDATA_SEPARATOR, WIKIDATA_CLOSE = b"[\n", b",\n", b"\n]\n"


def wikidata_dump(lines: Iterable[bytes]) -> bytes:
    """The dump of entity lines (UTF-8 `item`s and `property_entity`s)."""
    return WIKIDATA_OPEN + WIKIDATA_SEPARATOR.join(lines) + WIKIDATA_CLOSE


# ---------------------------------------------------------------------------------------
# Page views
# ---------------------------------------------------------------------------------------


def page_title(title: str) -> str:
    """A title as the page-view files write it: spaces as underscores."""
    return title.replace(" ", "_")


def pagecounts_line(title: str, views: int, project: str = "en.z") -> str:
    """A pagecounts-ez monthly totals line, 'en.z Page_Title 123' (en.z: English Wikipedia)."""
    return f"{project} {page_title(title)} {views}"


def pageviews_complete_line(
    title: str, page_id: int | str, access: str, views: int, daily: str, domain="en.wikipedia"
) -> str:
    """A pageviews-complete monthly line: one access type's ('desktop', 'mobile-web',
    'mobile-app') views of a page; `page_id` may be 'null', as in a few real lines; `daily`
    from `daily_counts`."""
    return f"{domain} {page_title(title)} {page_id} {access} {views} {daily}"


def daily_counts(counts: Sequence[int]) -> str:
    """pageviews-complete's per-day field: a letter per day (A the first) and its count,
    days without views left out ([0, 5, 2] -> 'B5C2'); the pipeline reads only the total."""
    return "".join(f"{chr(ord('A') + day)}{count}" for day, count in enumerate(counts) if count)


# ---------------------------------------------------------------------------------------
# KILT knowledge source
# ---------------------------------------------------------------------------------------


def kilt_page(
    wikipedia_id: int,
    title: str,
    paragraphs: Sequence[str],
    *,
    history: dict,
    anchors: Sequence[dict] = (),
    categories: str = "",
    wikidata_info: dict | None = None,
) -> dict:
    """A KILT page: the title is its first paragraph, and every paragraph ends in a newline,
    as in KILT; `history` names the revision (pageid, revid, ...) the text was taken from."""
    page = {
        "_id": str(wikipedia_id),
        "wikipedia_id": str(wikipedia_id),
        "wikipedia_title": title,
        "text": [f"{title}\n"] + [f"{paragraph}\n" for paragraph in paragraphs],
        "anchors": list(anchors),
        "categories": categories,
    }
    if wikidata_info is not None:
        page["wikidata_info"] = wikidata_info
    page["history"] = history
    return page


def kilt_wikidata_info(
    qid: str, label: str, description: str | None = None, aliases: Sequence[str] | None = None
) -> dict:
    """A KILT page's link to its Wikidata item (by which alignment finds the page)."""
    info = {"wikidata_id": qid, "wikidata_label": label}
    if description is not None:
        info["description"] = description
    if aliases is not None:
        info["aliases"] = {"alias": list(aliases)}
    return info


def kilt_anchor(paragraph_id: int, start: int, end: int, text: str, href: str) -> dict:
    """A link in a KILT page: its paragraph, character span, text and target."""
    return {"paragraph_id": paragraph_id, "start": start, "end": end, "text": text, "href": href}


def kilt_line(page: dict) -> str:
    """A KILT page as its line: Python's JSON spacing, non-ASCII text written as is."""
    line = json.dumps(page)
    # json.dumps escapes non-ASCII text in half the time it takes to write it as is; a line
    # with nothing escaped as '\\u....' is the same either way, and most lines have none.
    return line if "\\u" not in line else json.dumps(page, ensure_ascii=False)


# ---------------------------------------------------------------------------------------
# MediaWiki XML exports (pages-articles), plain or multistream bz2
# ---------------------------------------------------------------------------------------

PAGE_START = b"  <page>"  # a page's opening tag, indented as Wikimedia's exports indent it


def wikipedia_page(
    title: str, page_id: int, text: str, redirect: str | None = None, namespace: int = 0
) -> str:
    """A page with one revision's wikitext; `redirect`: the title it redirects to."""
    redirect_tag = (
        f'<redirect title="{escape(redirect, {chr(34): "&quot;"})}" />' if redirect else ""
    )
    return (
        f"{PAGE_START.decode()}<title>{escape(title)}</title><ns>{namespace}</ns>"
        f"<id>{page_id}</id>{redirect_tag}<revision><text>{escape(text)}</text></revision>"
        "</page>\n"
    )


def wikipedia_export(pages: Iterable[str]) -> bytes:
    """An export of `wikipedia_page`s (without the site info, which readers skip)."""
    return ("<mediawiki>\n" + "".join(pages) + "</mediawiki>\n").encode("utf-8")


def split_pages(xml: bytes) -> tuple[bytes, list[bytes], bytes]:
    """(header with site info, one chunk per page, closing tag) of an export."""
    first = xml.index(PAGE_START)
    closing = xml.rindex(b"</mediawiki>")
    pages = [PAGE_START + chunk for chunk in xml[first:closing].split(PAGE_START)[1:]]
    return xml[:first], pages, xml[closing:]


def write_multistream(path: str | os.PathLike, xml: bytes, pages_per_stream: int) -> list[int]:
    """An export as a multistream dump (header, streams of `pages_per_stream` pages, closing
    tag, each its own bz2 stream, as Wikimedia writes them); returns the stream offsets."""
    header, pages, footer = split_pages(xml)
    groups = [
        b"".join(pages[i : i + pages_per_stream]) for i in range(0, len(pages), pages_per_stream)
    ]
    streams = [bz2.compress(part) for part in [header, *groups, footer]]
    Path(path).write_bytes(b"".join(streams))
    return [sum(len(s) for s in streams[:i]) for i in range(len(streams))]


# ---------------------------------------------------------------------------------------
# Files: compressed by their suffix, deterministically (gzip's header time is 0)
# ---------------------------------------------------------------------------------------

COMPRESSION_BY_SUFFIX = {".bz2": "bz2", ".gz": "gzip"}


def compression_of(path: str | os.PathLike) -> str:
    """'bz2', 'gzip' or 'plain', by the file name's suffix."""
    return COMPRESSION_BY_SUFFIX.get(Path(path).suffix, "plain")


def compress(data: bytes, compression: str) -> bytes:
    """`data` compressed as "bz2" or "gzip" (level 9), or left "plain"."""
    if compression == "bz2":
        return bz2.compress(data, 9)
    if compression == "gzip":
        return gzip.compress(data, 9, mtime=0)
    if compression == "plain":
        return data
    raise NamesakeError(f"unknown compression {compression!r} (bz2, gzip or plain)")


def open_compressed(path: str | os.PathLike, level: int = 9) -> BinaryIO:
    """`path` open for writing bytes, compressed by its suffix at `level`: for dumps written
    as streams, too large to hold."""
    compression = compression_of(path)
    if compression == "bz2":
        return bz2.open(path, "wb", compresslevel=level)
    if compression == "gzip":
        return gzip.GzipFile(path, "wb", compresslevel=level, mtime=0)
    return open(path, "wb")  # noqa: SIM115 (the caller closes it)


def write_dump_file(path: str | os.PathLike, data: bytes) -> Path:
    """Writes `data` to `path`, compressed by its suffix; returns the path."""
    path = Path(path)
    path.write_bytes(compress(data, compression_of(path)))
    return path


def write_lines(path: str | os.PathLike, lines: Iterable[str]) -> Path:
    """Writes text lines (UTF-8, each ended by a newline) to `path`, compressed by its suffix."""
    return write_dump_file(path, "".join(f"{line}\n" for line in lines).encode("utf-8"))
