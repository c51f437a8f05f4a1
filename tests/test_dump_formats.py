"""`namesake.dumps.formats` writes what the pipelines read: each format it writes is read back
by the package's own readers (stage 1's Wikidata parser, the page-view reader, the KILT reader,
the MediaWiki export reader, the dump opener). And the scripts that write dumps agree with it:
the AmbER sample script rewrites the committed sample byte for byte, and the benchmark's
inlined snaks and statements are what its builders write."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import msgspec
import pytest
from conftest import SAMPLE, load_module

from namesake.amber.build.kilt import read_pages
from namesake.amber.build.pageviews import read_pageviews
from namesake.amber.build.wikidata import ITEM_VALUE, QUANTITY_VALUE, init_worker, parse_block
from namesake.data import AMBER_SAMPLE_FILES
from namesake.dumps import formats
from namesake.dumps.reading import detect_compression, iter_line_blocks, open_dump
from namesake.errors import InputProblems, NamesakeError
from namesake.text import get_tokens
from namesake.wikipedia.dump import iter_pages, iter_pages_between, stream_offsets

ROOT = Path(__file__).resolve().parent.parent

# ---------------------------------------------------------------------------------------
# Wikidata JSON dump

LABEL = 'Jimmy "Slow\\hand"\tPage'  # a quote, a backslash and a tab: escaped in the JSON


def _snak(pid: str, datavalue: str, datatype: str = "wikibase-item") -> str:
    return formats.snak(pid, datatype, datavalue)


def _statements(qid: str, claims: list[tuple[str, str, dict]]) -> dict[str, list[str]]:
    """(pid, main snak, statement's other parts) -> statements by property."""
    statements: dict[str, list[str]] = {}
    for n, (pid, mainsnak, parts) in enumerate(claims):
        guid = formats.statement_id(qid, n)
        statements.setdefault(pid, []).append(formats.statement(guid, mainsnak, **parts))
    return statements


def _guitarist() -> str:
    """An item with every kind of value, a qualifier and a reference."""
    started = _snak("P580", formats.time_value("+1963-00-00T00:00:00Z", 9), "time")
    source = formats.reference(
        {
            "P248": [_snak("P248", formats.item_value("Q328"))],
            "P813": [_snak("P813", formats.time_value("+2019-05-01T00:00:00Z"), "time")],
        },
        digest="d" * 40,
    )
    claims = [
        ("P31", _snak("P31", formats.item_value("Q5")), {}),
        (
            "P1303",
            _snak("P1303", formats.item_value("Q6607")),
            {"qualifiers": {"P580": [started]}, "references": [source]},
        ),
        ("P1303", _snak("P1303", formats.item_value("Q17172850")), {}),
        ("P2048", _snak("P2048", formats.quantity_value("+1.80", "Q11573", True), "quantity"), {}),
        ("P569", _snak("P569", formats.time_value("+1944-01-09T00:00:00Z"), "time"), {}),
        ("P214", _snak("P214", formats.string_value("59093371"), "external-id"), {}),
        ("P1476", _snak("P1476", formats.monolingual_value("Page", "en"), "monolingualtext"), {}),
        ("P625", _snak("P625", formats.globe_value(51.5, -0.1), "globe-coordinate"), {}),
        ("P157", _snak("P157", formats.SOMEVALUE), {}),
        ("P26", _snak("P26", formats.NOVALUE), {}),
    ]
    return formats.item(
        "Q7",
        labels={"en": LABEL, "de": "Jimmy Page"},
        descriptions={"en": "English guitarist"},
        aliases={"en": ["Jimmy Page", "J. P."]},
        claims=_statements("Q7", claims),
        titles={"enwiki": "Jimmy Page (guitarist)", "dewiki": "Jimmy Page"},
        lastrevid=123,
    )


def _wikidata_dump() -> bytes:
    lines = [
        formats.property_entity("P1303", "wikibase-item", {"en": "instrument", "fr": "instrument"}),
        _guitarist(),
        # no English page: skipped unread by stage 1's pre-filter
        formats.item("Q8", labels={"en": "Gitarre"}, titles={"dewiki": "Gitarre"}),
        # an English page without an English label: read, and no entity
        formats.item("Q9", labels={"fr": "guitare"}, titles={"enwiki": "Guitar"}),
    ]
    return formats.wikidata_dump(line.encode() for line in lines)


def test_wikidata_dump_is_read_by_stage_one(tmp_path):
    path = formats.write_dump_file(tmp_path / "wikidata.json.bz2", _wikidata_dump())
    assert detect_compression(path) == "bz2"
    init_worker(frozenset({"P31", "P1303", "P2048", "P157", "P26"}))
    [block] = [parse_block(block) for block in iter_line_blocks(path)]
    assert block.problems == []
    assert block.edges == (True, True) and block.lines == 6
    assert block.property_labels == {1303: "instrument"}
    assert block.entities.to_pylist() == [
        {
            "qid": 7,
            "title": "Jimmy_Page_(guitarist)",
            "names": [LABEL, "Jimmy Page", "J. P."],
            "types": [5],
            "line": 3,
        }
    ]
    unit = f"{formats.ENTITY_URI}Q11573"
    assert [tuple(row.values()) for row in block.relations.to_pylist()] == [
        (7, 31, ITEM_VALUE, 5, None, None),
        (7, 1303, ITEM_VALUE, 6607, None, None),
        (7, 1303, ITEM_VALUE, 17172850, None, None),
        (7, 2048, QUANTITY_VALUE, None, "+1.80", unit),
    ]  # somevalue / novalue snaks have no value to keep


def test_wikidata_records_are_the_dumps_json():
    line = _guitarist()
    entity = msgspec.json.decode(line)
    assert msgspec.json.encode(entity).decode() == line  # compact, as the dump
    # "type" first and "sitelinks" after "claims": stage 1's pre-filter reads lines so
    assert line.startswith('{"type":"item"')
    assert list(entity) == [
        *("type", "id", "labels", "descriptions", "aliases", "claims", "sitelinks", "lastrevid"),
    ]
    played, _ = entity["claims"]["P1303"]
    assert list(played) == [
        *("mainsnak", "type", "qualifiers", "qualifiers-order", "id", "rank", "references"),
    ]
    assert played["id"] == "Q7$00000000-0000-0000-0000-000000000001"
    assert played["qualifiers-order"] == ["P580"]
    assert played["references"][0]["snaks-order"] == ["P248", "P813"]
    assert "datavalue" not in entity["claims"]["P157"][0]["mainsnak"]
    assert entity["claims"]["P26"][0]["mainsnak"]["snaktype"] == "novalue"
    [height] = entity["claims"]["P2048"]
    value = height["mainsnak"]["datavalue"]["value"]
    assert value["upperBound"] == value["lowerBound"] == value["amount"] == "+1.80"
    coordinate = entity["claims"]["P625"][0]["mainsnak"]["datavalue"]
    assert coordinate["type"] == "globecoordinate" and coordinate["value"]["latitude"] == 51.5
    assert entity["sitelinks"]["enwiki"] == {
        "site": "enwiki",
        "title": "Jimmy Page (guitarist)",
        "badges": [],
    }


def test_wikidata_dump_layout():
    assert formats.wikidata_dump([b"{}", b"{}"]) == b"[\n{},\n{}\n]\n"


# ---------------------------------------------------------------------------------------
# Page views


def test_pagecounts_lines_are_read(tmp_path):
    lines = [
        formats.pagecounts_line("Main Page", 5, project="de.z"),
        formats.pagecounts_line("Jimmy Page", 120),
        formats.pagecounts_line("Led Zeppelin", 7),
    ]
    assert lines[1] == "en.z Jimmy_Page 120"
    path = formats.write_lines(tmp_path / "pagecounts.gz", lines)
    views = read_pageviews(path, InputProblems(strict=True))
    assert views.to_pylist() == [
        {"title": "Jimmy_Page", "views": 120},
        {"title": "Led_Zeppelin", "views": 7},
    ]


def test_pageviews_complete_lines_are_read(tmp_path):
    line = formats.pageviews_complete_line
    lines = [
        line("Berlin", 1, "desktop", 5000, formats.daily_counts([5000]), domain="de.wikipedia"),
        line("Jimmy Page", 42, "desktop", 70, formats.daily_counts([30, 40])),
        line("Jimmy Page", 42, "mobile-web", 50, formats.daily_counts([0, 0, 50])),
        line("Led Zeppelin", "null", "mobile-app", 9, formats.daily_counts([9])),
    ]
    assert lines[1] == "en.wikipedia Jimmy_Page 42 desktop 70 A30B40"
    assert lines[2].endswith(" C50")  # days without views left out
    path = formats.write_lines(tmp_path / "complete.bz2", lines)
    views = read_pageviews(path, InputProblems(strict=True))
    assert views.to_pylist() == [
        {"title": "Jimmy_Page", "views": 120},
        {"title": "Led_Zeppelin", "views": 9},
    ]


# ---------------------------------------------------------------------------------------
# KILT knowledge source


def _kilt_pages() -> list[dict]:
    history = {"pageid": 1, "revid": 2}
    return [
        formats.kilt_page(
            1,
            "Jimmy Page",
            ["Jimmy Page is an English guitarist.", "Section::::Career."],
            history=history,
            anchors=[formats.kilt_anchor(1, 28, 37, "guitarist", "Guitarist")],
            wikidata_info=formats.kilt_wikidata_info("Q7", "Jimmy Page", "English guitarist", []),
        ),
        formats.kilt_page(2, "List of guitarists", ["Players of the guitar."], history=history),
        formats.kilt_page(
            3,
            "Motörhead",
            ["Motörhead were an English rock band."],
            history=history,
            wikidata_info=formats.kilt_wikidata_info("Q8", "Motörhead"),
        ),
    ]


def test_kilt_pages_are_read_by_alignment(tmp_path):
    pages = _kilt_pages()
    path = formats.write_lines(tmp_path / "kilt.json", map(formats.kilt_line, pages))
    read = read_pages(path, {"Q7", "Q8"}, InputProblems(strict=True))
    assert sorted(read) == ["Q7", "Q8"]
    [page] = read["Q8"]
    assert (page.wikipedia_id, page.title) == ("3", "Motörhead")
    assert page.tokens == get_tokens("Motörhead Motörhead were an English rock band.")
    assert read["Q7"][0].contains(get_tokens("an English guitarist"))


def test_kilt_lines_are_python_json_with_text_as_is():
    jimmy, _, band = _kilt_pages()
    assert jimmy["text"] == [
        "Jimmy Page\n",
        "Jimmy Page is an English guitarist.\n",
        "Section::::Career.\n",
    ]
    assert list(jimmy) == [
        *("_id", "wikipedia_id", "wikipedia_title", "text", "anchors", "categories"),
        *("wikidata_info", "history"),
    ]
    for page in (jimmy, band):
        assert formats.kilt_line(page) == json.dumps(page, ensure_ascii=False)
    assert "Motörhead" in formats.kilt_line(band)


# ---------------------------------------------------------------------------------------
# MediaWiki XML exports

ARTICLES = [
    ('AC/DC & "friends"', 1, "'''AC/DC''' play <b>[[Hard rock]]</b>.", None),
    ("Hard rock", 2, "A genre of [[rock music]].", None),
    ("Heavy rock", 3, "#REDIRECT [[Hard rock]]", "Hard rock"),
    ("Rock & roll", 4, "#REDIRECT [[Rock and roll]]", 'Rock "and" roll'),
]


def _export() -> bytes:
    return formats.wikipedia_export(
        formats.wikipedia_page(title, page_id, text, redirect)
        for title, page_id, text, redirect in ARTICLES
    )


def _read(pages) -> list[tuple]:
    return [(p.title, p.page_id, p.text, p.redirect, p.namespace) for p in pages]


def test_wikipedia_export_is_read(tmp_path):
    path = formats.write_dump_file(tmp_path / "pages-articles.xml.bz2", _export())
    expected = [(title, page_id, text, to, 0) for title, page_id, text, to in ARTICLES]
    assert _read(iter_pages(path, InputProblems(strict=True))) == expected


def test_multistream_dump_is_read_stream_by_stream(tmp_path):
    path = tmp_path / "pages-articles-multistream.xml.bz2"
    offsets = formats.write_multistream(path, _export(), pages_per_stream=2)
    assert len(offsets) == 4  # the header, two streams of two pages, the closing tag
    assert stream_offsets(path) == offsets
    ranges = zip(offsets, [*offsets[1:], path.stat().st_size], strict=True)
    pages = [page for start, end in ranges for page in iter_pages_between(path, start, end)]
    assert _read(pages) == _read(iter_pages(path))
    assert len(pages) == len(ARTICLES)


# ---------------------------------------------------------------------------------------
# Files


@pytest.mark.parametrize(
    ("name", "compression"),
    [("dump.json.bz2", "bz2"), ("dump.json.gz", "gzip"), ("dump.json", "plain")],
)
def test_files_are_compressed_by_suffix_and_deterministic(tmp_path, name, compression):
    data = b"".join(b"line %d\n" % i for i in range(1000))
    first = formats.write_dump_file(tmp_path / name, data)
    written = first.read_bytes()
    assert formats.compression_of(first) == detect_compression(first) == compression
    with open_dump(first) as f:
        assert f.read() == data
    assert formats.write_dump_file(first, data).read_bytes() == written  # no time in it
    streamed = tmp_path / f"streamed-{name}"
    with formats.open_compressed(streamed) as f:
        f.write(data)
    with open_dump(streamed) as f:
        assert f.read() == data


def test_an_unknown_compression_is_refused():
    with pytest.raises(NamesakeError, match="unknown compression 'zip'"):
        formats.compress(b"data", "zip")


# ---------------------------------------------------------------------------------------
# The writers that use the formats


def test_the_sample_script_rewrites_the_committed_sample(tmp_path):
    load_module(SAMPLE / "make_sample.py").main(tmp_path)
    for name in AMBER_SAMPLE_FILES.values():
        assert (tmp_path / name).read_bytes() == (SAMPLE / name).read_bytes(), name


def _rebuilt_snak(snak: dict) -> str:
    """The snak as `formats` writes it, from its decoded fields."""
    pid, datatype, digest = snak["property"], snak["datatype"], snak.get("hash")
    if "datavalue" not in snak:
        return formats.snak(pid, datatype, snak["snaktype"], digest)
    kind, value = snak["datavalue"]["type"], snak["datavalue"]["value"]
    if kind == "wikibase-entityid":
        written = formats.item_value(value["id"])
    elif kind == "quantity":
        written = formats.quantity_value(value["amount"])
    elif kind == "time":
        written = formats.time_value(value["time"], value["precision"])
    elif kind == "monolingualtext":
        written = formats.monolingual_value(value["text"], value["language"])
    else:
        written = formats.string_value(value)
    return formats.snak(pid, datatype, written, digest)


def _rebuilt_statement(statement: dict) -> str:
    qualifiers = {
        pid: [_rebuilt_snak(snak) for snak in snaks]
        for pid, snaks in statement.get("qualifiers", {}).items()
    }
    references = [
        formats.reference(
            {pid: [_rebuilt_snak(snak) for snak in snaks] for pid, snaks in ref["snaks"].items()},
            ref["hash"],
        )
        for ref in statement.get("references", [])
    ]
    mainsnak = _rebuilt_snak(statement["mainsnak"])
    return formats.statement(statement["id"], mainsnak, qualifiers, references)


@pytest.mark.parametrize("compressible", [False, True])
def test_the_benchmark_writes_items_as_the_formats_do(compressible):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import make_synthetic_dumps as benchmark
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    layout = benchmark.Layout(2000, seed=3)
    kinds = set()
    for qid in range(1, 2001, 7):
        line = benchmark.item_line(layout, benchmark.make_item(layout, qid), compressible)
        entity = msgspec.json.decode(line)
        for statements in entity["claims"].values():
            for statement in statements:
                assert _rebuilt_statement(statement) == msgspec.json.encode(statement).decode()
                kinds.add(statement["mainsnak"].get("datavalue", {}).get("type"))
                kinds.update(part for part in ("qualifiers", "references") if part in statement)
        rebuilt = formats.item(
            entity["id"],
            labels={lang: text["value"] for lang, text in entity["labels"].items()},
            descriptions={lang: text["value"] for lang, text in entity["descriptions"].items()},
            aliases={lang: [a["value"] for a in some] for lang, some in entity["aliases"].items()},
            claims={
                pid: [_rebuilt_statement(statement) for statement in statements]
                for pid, statements in entity["claims"].items()
            },
            titles={site: link["title"] for site, link in entity["sitelinks"].items()},
            **{name: entity[name] for name in ("pageid", "ns", "title", "lastrevid", "modified")},
        )
        assert rebuilt.encode() == line
    # every kind of value the benchmark draws was compared (somevalue: None; external ids,
    # strings, only in the realistic shape), with qualifiers and references
    expected = {"wikibase-entityid", "quantity", "time", "monolingualtext", None}
    expected |= {"qualifiers", "references"} | (set() if compressible else {"string"})
    assert kinds == expected
