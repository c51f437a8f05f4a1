"""AmbER build inputs and outputs: page-view formats, compression, bad input, the CLI,
atomic outputs and offline loading with `datasets`.

Every fixture is a small dump written in the real format by ``tests/dumps.py``; only the
failure injected into the writer of the atomic-output tests is a stand-in (uploads are
tests/test_publish.py's).
"""

from __future__ import annotations

import bz2
import functools
import gzip
import json
import math
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import msgspec
import pyarrow.parquet as pq
import pytest
from dumps import (
    compress,
    item,
    members,
    page,
    prop,
    write_kilt,
    write_pagecounts,
    write_pageviews_complete,
    write_wikidata,
)
from folders import folder_files

import namesake.amber.build.pipeline as build_module
from namesake.amber.build.pageviews import read_pageviews
from namesake.amber.build.pipeline import build_amber
from namesake.cli import main
from namesake.dumps import formats
from namesake.dumps.reading import iter_line_blocks
from namesake.errors import BadInputError, InputProblems
from namesake.outputs import MARKER

NAMESAKE = Path(sys.executable).with_name("namesake")

# ---------------------------------------------------------------------------------------
# The fixture: one human name and one film name survive, each with two entities that
# have a distinguishing relation mentioned on their KILT page.

PROPERTIES = [
    prop("P31", "instance of"),
    prop("P1303", "instrument"),
    prop("P607", "conflict"),
    prop("P58", "screenwriter"),
    prop("P161", "cast member"),
]
ENTITIES = [
    item(
        "Q1",
        "John Smith",
        enwiki="John Smith (musician)",
        claims={"P31": ["Q5"], "P1303": ["Q100"]},
    ),
    item(
        "Q2",
        "John Smith",
        enwiki="John Smith (soldier)",
        claims={"P31": ["Q5"], "P607": ["Q200"]},
    ),
    item("Q100", "guitar", enwiki="Guitar"),
    item("Q200", "World War II", enwiki="World War II"),
    item("Q10", "Her", enwiki="Her (film)", claims={"P31": ["Q11424"], "P58": ["Q300"]}),
    item("Q11", "Her", enwiki="Her (2000 film)", claims={"P31": ["Q11424"], "P161": ["Q400"]}),
    item("Q300", "Spike Jonze", enwiki="Spike Jonze"),
    item("Q400", "Joaquin Phoenix", enwiki="Joaquin Phoenix"),
    # Non-ASCII title, to check titles survive every format and compression.
    item("Q500", "Björk", enwiki="Björk"),
]
VIEWS = {
    "John Smith (musician)": 10000,
    "John Smith (soldier)": 100,
    "Guitar": 5000,
    "World War II": 5001,
    "Her (film)": 20000,
    "Her (2000 film)": 300,
    "Spike Jonze": 4000,
    "Joaquin Phoenix": 3000,
    "Björk": 777,
}
PAGES = [
    page(1, "John Smith (musician)", ["John Smith is a musician who plays the guitar."], "Q1"),
    page(2, "John Smith (soldier)", ["John Smith was a soldier in World War II."], "Q2"),
    page(3, "Her (film)", ["Her is a film written and directed by Spike Jonze."], "Q10"),
    page(4, "Her (2000 film)", ["Her is a 2000 film starring Joaquin Phoenix."], "Q11"),
    page(5, "Main Page", ["Welcome to Wikipedia."]),
]
# 2 entities x 1 relation x (QA + SF + FC SUPPORTS; no REFUTES value exists) per collection.
QUERIES_PER_COLLECTION = 6
COLUMNS = [
    "id",
    "name",
    "qid",
    "is_head",
    "popularity",
    "task",
    "pid",
    "input",
    "answer",
    "gold_wikipedia_ids",
    "gold_titles",
]
CONFIGS = [
    f"{collection}{suffix}"
    for collection in ("human", "nonhuman")
    for suffix in ("", "_qa", "_sf", "_fc", "_entities")
]


def entity_lines(entities=None) -> list[bytes]:
    """The dump lines of the entities, without the separating commas."""
    return [
        msgspec.json.encode(e) for e in (PROPERTIES + ENTITIES if entities is None else entities)
    ]


def dump_bytes(lines: list[bytes], close: bool = True) -> bytes:
    """The Wikidata dump of the lines; `close` False: cut before its final ']'."""
    whole = formats.wikidata_dump(lines)
    return whole if close else whole.removesuffix(b"]\n")


def write_inputs(
    folder: Path, compression: str = "plain", pageviews: str = "ez", views: dict = VIEWS
) -> dict:
    """Writes the three fixture dumps; returns {"wikidata", "pageviews", "kilt"} paths."""
    folder.mkdir(parents=True, exist_ok=True)
    suffix = {"bz2": ".bz2", "gzip": ".gz", "plain": ""}[compression]
    paths = {
        "wikidata": write_wikidata(folder / f"wikidata.json{suffix}", PROPERTIES + ENTITIES),
        "kilt": write_kilt(folder / f"kilt.jsonl{suffix}", PAGES),
    }
    if pageviews == "ez":
        paths["pageviews"] = write_pagecounts(folder / f"pagecounts.txt{suffix}", views)
    else:
        paths["pageviews"] = write_pageviews_complete(folder / f"complete.txt{suffix}", views)
    return paths


def build(inputs: dict, out: Path, **kwargs):
    return build_amber(inputs["wikidata"], inputs["pageviews"], inputs["kilt"], out, **kwargs)


def parquet_tables(out: Path) -> dict[str, list[dict]]:
    """Every config of a build, as rows (its shards in order), by config name."""
    return {
        folder.name: [
            row
            for path in sorted(folder.glob("*.parquet"))
            for row in pq.read_table(path).to_pylist()
        ]
        for folder in sorted(out.iterdir())
        if folder.is_dir()
    }


def leftovers(parent: Path) -> list[str]:
    return [p.name for p in parent.iterdir() if ".partial" in p.name or ".old-" in p.name]


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    """A complete build of the plain, pagecounts-ez fixture."""
    folder = tmp_path_factory.mktemp("reference")
    build(write_inputs(folder / "in"), folder / "out", workers=1)
    return folder / "out"


def test_reference_build_has_both_collections(reference):
    tables = parquet_tables(reference)
    assert sorted(tables) == sorted(CONFIGS)
    human, nonhuman = tables["human"], tables["nonhuman"]
    assert len(human) == len(nonhuman) == QUERIES_PER_COLLECTION
    assert {row["name"] for row in human} == {"John Smith"}
    assert {row["name"] for row in nonhuman} == {"Her"}
    assert {(row["qid"], row["is_head"]) for row in human} == {("Q1", True), ("Q2", False)}
    assert {
        (row["qid"], row["pid"], tuple(row["answer"])) for row in nonhuman if row["task"] == "qa"
    } == {
        ("Q10", "P58", ("Spike Jonze",)),
        ("Q11", "P161", ("Joaquin Phoenix",)),
    }


# ---------------------------------------------------------------------------------------
# 1. Both page-view formats


def test_pageview_formats_give_the_same_table(tmp_path):
    ez = write_pagecounts(
        tmp_path / "ez.txt",
        VIEWS,
        other_lines=[
            "de.z Her_(film) 999",  # other project: ignored silently
            "en.b Guitar 55",  # English Wikibooks: ignored silently
            "en.zz Guitar 66",
            "en.z Broken_line",  # malformed: counted
            "en.z Guitar notanumber",  # malformed: counted
        ],
    )
    complete = write_pageviews_complete(tmp_path / "complete.txt", VIEWS)
    with open(complete, "a", encoding="utf-8") as f:
        f.write("en.wiktionary Guitar 7 desktop 500 A500\n")  # other wiki: ignored
        f.write("fr.wikipedia Guitar 8 desktop 600 A600\n")  # other wiki: ignored
        f.write("en.wikipedia Too_few_fields 3 desktop\n")  # malformed: counted

    ez_problems, complete_problems = InputProblems(), InputProblems()
    from_ez = read_pageviews(ez, ez_problems)
    from_complete = read_pageviews(complete, complete_problems)

    expected = sorted((title.replace(" ", "_"), views) for title, views in VIEWS.items())
    rows = sorted(zip(from_ez["title"].to_pylist(), from_ez["views"].to_pylist(), strict=True))
    assert rows == expected
    assert from_ez.to_pylist() == from_ez.to_pylist()  # deterministic
    assert sorted(from_complete.to_pylist(), key=lambda r: r["title"]) == sorted(
        from_ez.to_pylist(), key=lambda r: r["title"]
    )
    assert ez_problems.total() == 2
    assert ez_problems.examples == {(str(ez), "malformed pagecounts-ez line"): [4, 5]}
    assert complete_problems.total() == 1
    (summary,) = complete_problems.summary()
    assert str(complete) in summary and "malformed pageviews-complete line" in summary


def test_pageviews_complete_sums_access_types_and_page_ids(tmp_path):
    path = tmp_path / "complete.txt"
    path.write_text(
        "en.wikipedia Guitar 11 desktop 10 J10\n"
        "en.wikipedia Guitar 11 mobile-app 5 J5\n"
        "en.wikipedia Guitar 11 mobile-web 7 J7\n"
        "en.wikipedia Guitar null desktop 3 J3\n"  # same title under another page id
        "en.wikipedia Her_(film) 12 desktop 2 B2\n"
        "en.wikipedia Guitar 13 desktop 1 C1\n"  # not adjacent to the others
        "en.wikivoyage Guitar 14 desktop 100 D100\n",
        encoding="utf-8",
    )
    table = read_pageviews(path, InputProblems(strict=True))
    assert dict(zip(table["title"].to_pylist(), table["views"].to_pylist(), strict=True)) == {
        "Guitar": 26,
        "Her_(film)": 2,
    }


@pytest.mark.parametrize("block_bytes", [64, 8 << 20], ids=["many blocks", "one block"])
def test_pagecounts_ez_title_on_two_lines_keeps_the_last_count(tmp_path, monkeypatch, block_bytes):
    """The published pipeline assigned each line's count to its title, so the last wins
    (pageviews-complete, above, sums instead: one line per access type)."""
    import namesake.amber.build.pageviews as pageviews

    monkeypatch.setattr(
        pageviews, "iter_line_blocks", functools.partial(iter_line_blocks, block_bytes=block_bytes)
    )
    path = tmp_path / "ez.txt"
    path.write_text(
        "en.z Guitar 100\n"
        "en.z Guitar 7\n"  # adjacent repeat: 7, not 107
        "en.z Her_(film) 20\n"
        + "".join(f"en.z Filler_{n} 5\n" for n in range(20))  # pushes the repeat blocks away
        + "en.z Her_(film) 3\n"  # far repeat: 3, not 23
        "en.z Her_(film) notanumber\n"  # malformed: skipped, the 3 stands
        "en.z Cello 9\n",
        encoding="utf-8",
    )
    problems = InputProblems()
    table = pageviews.read_pageviews(path, problems)
    views = dict(zip(table["title"].to_pylist(), table["views"].to_pylist(), strict=True))
    assert (views["Guitar"], views["Her_(film)"], views["Cello"]) == (7, 3, 9)
    assert len(views) == 23 and problems.total() == 1


def test_build_is_identical_with_either_pageview_format(tmp_path, reference):
    out = tmp_path / "out"
    build(write_inputs(tmp_path / "in", pageviews="complete"), out, workers=1)
    assert parquet_tables(out) == parquet_tables(reference)


# ---------------------------------------------------------------------------------------
# 2. bz2, gzip and plain inputs, detected by content


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("compression", ["bz2", "gzip"])
def test_compressed_inputs_give_identical_output(tmp_path, reference, compression, workers):
    """One worker reads bz2 with libbz2 and gzip with zlib, two with rapidgzip."""
    inputs = write_inputs(tmp_path / "in", compression=compression)
    magic = {"bz2": b"BZh", "gzip": b"\x1f\x8b"}[compression]
    assert all(Path(p).read_bytes().startswith(magic) for p in inputs.values())
    out = tmp_path / "out"
    build(inputs, out, workers=workers)
    assert parquet_tables(out) == parquet_tables(reference)


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("compression", ["bz2", "gzip"])
def test_multi_member_inputs_give_identical_output(tmp_path, reference, compression, workers):
    plain = write_inputs(tmp_path / "plain")
    inputs = {}
    for which, path in plain.items():
        inputs[which] = tmp_path / f"{which}.{compression}"
        inputs[which].write_bytes(members(path.read_bytes(), compression))
    out = tmp_path / "out"
    build(inputs, out, workers=workers)
    assert parquet_tables(out) == parquet_tables(reference)


def test_compression_is_detected_by_content_not_name(tmp_path, reference):
    plain = write_inputs(tmp_path / "plain")
    inputs = {
        # gzip content named .json, bz2 content named .txt, plain content named .bz2
        "wikidata": tmp_path / "wikidata.json",
        "pageviews": tmp_path / "pagecounts.txt",
        "kilt": tmp_path / "kilt.jsonl.bz2",
    }
    inputs["wikidata"].write_bytes(gzip.compress(plain["wikidata"].read_bytes()))
    inputs["pageviews"].write_bytes(bz2.compress(plain["pageviews"].read_bytes()))
    inputs["kilt"].write_bytes(plain["kilt"].read_bytes())
    out = tmp_path / "out"
    build(inputs, out, workers=2)  # also: parallel workers give the same output
    assert parquet_tables(out) == parquet_tables(reference)


def test_pageviews_read_identically_from_each_compression(tmp_path):
    plain = write_pagecounts(tmp_path / "views.txt", VIEWS)
    data = plain.read_bytes()
    tables = []
    for compression in ("plain", "bz2", "gzip"):
        path = tmp_path / f"views-{compression}.dat"
        path.write_bytes(compress(data, compression))
        table = read_pageviews(path, InputProblems(strict=True))
        tables.append(sorted(table.to_pylist(), key=lambda r: r["title"]))
    assert tables[0] == tables[1] == tables[2]
    assert {"title": "Björk", "views": 777} in tables[0]


# ---------------------------------------------------------------------------------------
# 3. Bad input: skipped and reported by default, fatal with strict=True


def _broken_claim(key: str) -> bytes:
    entity = item("Q60", "Broken", enwiki="Broken", claims={"P31": ["Q5"]})
    statement = entity["claims"]["P31"][0]
    if key == "mainsnak":
        del statement["mainsnak"]
    else:
        del statement["mainsnak"][key]
    return msgspec.json.encode(entity)


def _unknown_datatype() -> bytes:
    entity = item("Q61", "Odd", enwiki="Odd", claims={"P31": ["Q5"]})
    entity["claims"]["P31"][0]["mainsnak"]["datatype"] = "wikibase-frobnicator"
    return msgspec.json.encode(entity)


FULL_LINE = msgspec.json.encode(item("Q62", "Cut", enwiki="Cut (film)", claims={"P31": ["Q11424"]}))
# Where each bad Wikidata line goes: after the properties and two good entities.
BAD_AT = len(PROPERTIES) + 2
BAD_LINE_NO = BAD_AT + 2  # '[' is line 1

BAD_WIKIDATA_LINES = {
    "truncated": (FULL_LINE[:-12], "not JSON: cut short"),
    "invalid JSON": (
        b'{"type":"item","id":"Q63","labels":{,"sitelinks":{"enwiki":{"title":"X"}}}',
        "not JSON",
    ),
    "claim without mainsnak": (_broken_claim("mainsnak"), "missing field mainsnak"),
    "claim without datatype": (_broken_claim("datatype"), "missing field datatype"),
    "unknown datatype": (_unknown_datatype(), "unknown datatype"),
}


def _inputs_with_wikidata_line(folder: Path, bad: bytes) -> tuple[dict, Path]:
    inputs = write_inputs(folder / "in")
    lines = entity_lines()
    lines.insert(BAD_AT, bad)
    inputs["wikidata"].write_bytes(dump_bytes(lines))
    return inputs, inputs["wikidata"]


def _assert_reported(report, path: Path, kind: str, line: int):
    """`kind`: what the summary groups the line under, then ': ' and how its detail starts
    where the test says it ('not JSON: cut short')."""
    kind, _, detail = kind.partition(": ")
    matching = [p for p in report.problems if p.startswith(f"{path}: ") and kind in p]
    assert matching, report.problems
    assert f"line {line}" + (f": {detail}" if detail else "") in matching[0]


def _assert_output_complete(out: Path):
    tables = parquet_tables(out)
    assert len(tables["human"]) == len(tables["nonhuman"]) == QUERIES_PER_COLLECTION


def _assert_skipped_then_refused(inputs, tmp_path: Path, path: Path, kind: str, line: int):
    """One bad line of ``path``: the default build skips it, reports it under ``kind`` at
    ``line`` and still writes every query; ``strict`` stops at it, naming the file and line,
    and writes nothing. Returns the strict build's error."""
    report = build(inputs, tmp_path / "out", workers=1)
    _assert_reported(report, path, kind, line)
    _assert_output_complete(tmp_path / "out")
    with pytest.raises(BadInputError) as caught:
        build(inputs, tmp_path / "strict", workers=1, strict=True)
    assert str(caught.value).startswith(f"{path}:{line}: "), str(caught.value)
    assert caught.value.line == line
    assert not (tmp_path / "strict").exists()
    return caught.value


@pytest.mark.parametrize("case", list(BAD_WIKIDATA_LINES))
def test_bad_wikidata_line(tmp_path, capsys, case):
    bad, kind = BAD_WIKIDATA_LINES[case]
    inputs, path = _inputs_with_wikidata_line(tmp_path, bad)

    error = _assert_skipped_then_refused(inputs, tmp_path, path, kind, BAD_LINE_NO)
    assert f"{path}:{BAD_LINE_NO}: {kind}" in str(error)
    assert "Skipped 1 bad input line(s)" in capsys.readouterr().err
    card = (tmp_path / "out" / "README.md").read_text(encoding="utf-8")
    assert kind.partition(": ")[0] in card


def test_truncated_entity_line_cut_before_its_sitelinks_is_reported(tmp_path):
    """A line cut in the middle (real dumps put sitelinks last) is still a bad line."""
    cut = FULL_LINE[: len(FULL_LINE) // 2]
    assert b"enwiki" not in cut
    inputs, path = _inputs_with_wikidata_line(tmp_path, cut)
    report = build(inputs, tmp_path / "out", workers=1)
    _assert_reported(report, path, "not JSON: cut short", BAD_LINE_NO)
    with pytest.raises(BadInputError, match=rf":{BAD_LINE_NO}: not JSON: cut short"):
        build(inputs, tmp_path / "strict", workers=1, strict=True)


def test_strict_stops_at_the_first_bad_line(tmp_path):
    inputs = write_inputs(tmp_path / "in")
    lines = entity_lines()
    lines.insert(BAD_AT, BAD_WIKIDATA_LINES["invalid JSON"][0])
    lines.insert(BAD_AT + 3, BAD_WIKIDATA_LINES["truncated"][0])
    inputs["wikidata"].write_bytes(dump_bytes(lines))
    with pytest.raises(BadInputError) as caught:
        build(inputs, tmp_path / "strict", workers=2, strict=True)
    assert str(caught.value).startswith(f"{inputs['wikidata']}:{BAD_LINE_NO}: not JSON")

    report = build(inputs, tmp_path / "out", workers=2)
    problems = [p for p in report.problems if p.startswith(str(inputs["wikidata"]))]
    assert len(problems) == 1  # one kind, not JSON, with both lines
    assert any(f"line {BAD_LINE_NO + 3}: cut short" in p for p in problems)
    _assert_output_complete(tmp_path / "out")


def test_missing_final_bracket(tmp_path):
    inputs = write_inputs(tmp_path / "in")
    lines = entity_lines()
    inputs["wikidata"].write_bytes(dump_bytes(lines, close=False))
    last_line = len(lines) + 1
    kind = "missing final ']'"
    error = _assert_skipped_then_refused(inputs, tmp_path, inputs["wikidata"], kind, last_line)
    assert f":{last_line}: {kind}" in str(error)


def test_dump_cut_in_the_middle_of_a_line(tmp_path):
    """A dump truncated mid-entity: no ']' and a partial last line."""
    inputs = write_inputs(tmp_path / "in")
    data = dump_bytes(entity_lines())
    inputs["wikidata"].write_bytes(data[: len(data) - 30])
    with pytest.raises(BadInputError) as caught:
        build(inputs, tmp_path / "strict", workers=1, strict=True)
    assert str(caught.value).startswith(f"{inputs['wikidata']}:{len(entity_lines()) + 1}: ")


KILT_GOOD = len(PAGES)


def _kilt_with_line(folder: Path, bad: str) -> dict:
    inputs = write_inputs(folder / "in")
    lines = inputs["kilt"].read_text(encoding="utf-8").splitlines()
    lines.insert(2, bad)
    inputs["kilt"].write_text("\n".join(lines) + "\n", encoding="utf-8")
    return inputs


_KILT_PAGE = json.dumps(page(9, "John Smith (actor)", ["An actor."], "Q2"))
_KILT_NO_TEXT = page(9, "John Smith (actor)", ["An actor."], "Q1")
del _KILT_NO_TEXT["text"]
BAD_KILT_LINES = {
    "truncated": (_KILT_PAGE[:-25], "not JSON: cut short"),
    "invalid JSON": (_KILT_PAGE.replace('"text": [', '"text": [,'), "not JSON"),
    "missing text": (json.dumps(_KILT_NO_TEXT), "missing field text"),
}


@pytest.mark.parametrize("case", list(BAD_KILT_LINES))
def test_bad_kilt_line(tmp_path, case):
    bad, kind = BAD_KILT_LINES[case]
    inputs = _kilt_with_line(tmp_path, bad)
    error = _assert_skipped_then_refused(inputs, tmp_path, inputs["kilt"], kind, 3)
    assert f"{inputs['kilt']}:3: {kind}" in str(error)


@pytest.mark.parametrize("fmt", ["ez", "complete"])
def test_malformed_pageview_line(tmp_path, fmt):
    inputs = write_inputs(tmp_path / "in", pageviews=fmt)
    lines = inputs["pageviews"].read_text(encoding="utf-8").splitlines()
    bad = "en.z Guitar 12 extra" if fmt == "ez" else "en.wikipedia Guitar 5 desktop x A1"
    lines.insert(3, bad)
    inputs["pageviews"].write_text("\n".join(lines) + "\n", encoding="utf-8")
    kind = "malformed pagecounts-ez line" if fmt == "ez" else "malformed pageviews-complete line"
    error = _assert_skipped_then_refused(inputs, tmp_path, inputs["pageviews"], kind, 4)
    assert f"{inputs['pageviews']}:4: {kind}" in str(error)


def test_invalid_utf8_page_title_is_a_bad_line(tmp_path):
    """One undecodable title is one bad line: skipped by default, not the whole file."""
    inputs = write_inputs(tmp_path / "in")
    path = inputs["pageviews"]
    line = len(VIEWS) + 1
    path.write_bytes(path.read_bytes() + b"en.z Bad\xff\xfeTitle 12\n")
    _assert_skipped_then_refused(inputs, tmp_path, path, "UTF-8", line)


def _as_in_real_dumps(entity: dict) -> dict:
    """Wikibase writes empty maps as empty JSON arrays: "aliases":[],"claims":[]."""
    return {key: ([] if value == {} else value) for key, value in entity.items()}


def test_empty_maps_written_as_lists_are_read(tmp_path, reference):
    inputs = write_inputs(tmp_path / "in")
    entities = [_as_in_real_dumps(e) for e in PROPERTIES + ENTITIES]
    raw = dump_bytes(entity_lines(entities))
    assert b'"aliases":[],"claims":[],"sitelinks":{"enwiki"' in raw  # e.g. Q100 guitar
    inputs["wikidata"].write_bytes(raw)
    out = tmp_path / "out"
    report = build(inputs, out, workers=1, strict=True)
    assert report.problems == []
    assert parquet_tables(out) == parquet_tables(reference)


# Inputs that cannot be read at all fail in both modes, naming the file.


def _big_corrupt_bz2(path: Path) -> None:
    """A bz2 Wikidata dump of several 900 kB blocks with bytes flipped in the middle."""
    rng = random.Random(7)
    filler = [
        item(f"Q{10_000 + i}", "".join(rng.choices("abcdefghij klmnop", k=300)))
        for i in range(6000)
    ]
    data = bytearray(bz2.compress(dump_bytes(entity_lines(PROPERTIES + ENTITIES + filler))))
    assert len(data) > 600_000
    middle = len(data) // 2
    for offset in range(middle, middle + 32):
        data[offset] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("strict", [False, True])
def test_corrupt_bz2_stream(tmp_path, strict, workers):
    inputs = write_inputs(tmp_path / "in")
    inputs["wikidata"] = tmp_path / "wikidata.json.bz2"
    _big_corrupt_bz2(inputs["wikidata"])
    with pytest.raises(BadInputError) as caught:
        build(inputs, tmp_path / "out", workers=workers, strict=strict)
    message = str(caught.value)
    assert message.startswith(
        f"{inputs['wikidata']}:{caught.value.line}: corrupt or truncated bz2 stream"
    )
    assert isinstance(caught.value.line, int)
    assert not (tmp_path / "out").exists()
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("parts", [1, 3], ids=["one member", "three members"])
@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("which", ["wikidata", "pageviews", "kilt"])
def test_truncated_gzip_file(tmp_path, which, workers, parts):
    """With two workers rapidgzip reads the file; it can end a cut stream without an error
    (mxmlnkn/rapidgzip#71), so the end of the file is checked after it."""
    inputs = write_inputs(tmp_path / "in", compression="gzip")
    data = members(gzip.decompress(inputs[which].read_bytes()), "gzip", parts)
    inputs[which].write_bytes(data[: len(data) - 20])  # drops the CRC and the end of the data
    with pytest.raises(BadInputError) as caught:
        build(inputs, tmp_path / "out", workers=workers)
    assert str(caught.value).startswith(
        f"{inputs[which]}:{caught.value.line}: corrupt or truncated gzip"
    )
    assert isinstance(caught.value.line, int)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("which", ["wikidata", "pageviews", "kilt"])
def test_truncated_bz2_file(tmp_path, which, workers):
    inputs = write_inputs(tmp_path / "in", compression="bz2")
    data = inputs[which].read_bytes()
    inputs[which].write_bytes(data[: len(data) - 20])  # drops the end marker and some data
    with pytest.raises(BadInputError) as caught:
        build(inputs, tmp_path / "out", workers=workers)
    assert str(caught.value).startswith(
        f"{inputs[which]}:{caught.value.line}: corrupt or truncated bz2"
    )
    assert not (tmp_path / "out").exists()


def test_empty_pageview_file(tmp_path):
    inputs = write_inputs(tmp_path / "in")
    inputs["pageviews"].write_bytes(b"")
    with pytest.raises(BadInputError) as caught:
        build(inputs, tmp_path / "out", workers=1)
    assert str(caught.value).startswith(f"{inputs['pageviews']}")
    assert "no English Wikipedia page views" in str(caught.value)
    assert not (tmp_path / "out").exists()


def test_kilt_file_given_as_pageviews(tmp_path):
    inputs = write_inputs(tmp_path / "in")
    inputs["pageviews"] = inputs["kilt"]
    with pytest.raises(BadInputError) as caught:
        build(inputs, tmp_path / "out", workers=1)
    message = str(caught.value)
    assert message.startswith(f"{inputs['kilt']}")
    assert "en.z" in message and "en.wikipedia" in message  # says what was expected


def test_wikidata_file_that_is_not_a_dump(tmp_path):
    inputs = write_inputs(tmp_path / "in")
    inputs["wikidata"] = inputs["kilt"]  # JSON lines, but not the '[' ... ']' dump
    with pytest.raises(BadInputError) as caught:
        build(inputs, tmp_path / "out", workers=1)
    assert str(caught.value).startswith(f"{inputs['kilt']}:1: not a Wikidata JSON dump")

    bare = tmp_path / "bare.json"  # entity lines without the surrounding array
    bare.write_bytes(b",\n".join(entity_lines()) + b"\n")
    inputs["wikidata"] = bare
    with pytest.raises(BadInputError, match=r"bare\.json:1: not a Wikidata JSON dump"):
        build(inputs, tmp_path / "out", workers=1)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("which", ["wikidata", "pageviews", "kilt"])
def test_missing_input_file(tmp_path, which):
    inputs = write_inputs(tmp_path / "in")
    inputs[which] = tmp_path / "nowhere" / f"{which}.json.bz2"
    with pytest.raises(BadInputError) as caught:
        build(inputs, tmp_path / "out", workers=1)
    assert str(caught.value).startswith(f"{inputs[which]}: no such file")
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------------------------------
# 4. The command line


def _build_args(inputs: dict, out: Path, *extra: str, workers: int = 1) -> list[str]:
    return [
        "amber",
        "build",
        "--wikidata",
        str(inputs["wikidata"]),
        "--pageviews",
        str(inputs["pageviews"]),
        "--kilt",
        str(inputs["kilt"]),
        "--out",
        str(out),
        "--workers",
        str(workers),
        *extra,
    ]


def test_cli_build_prints_a_summary(tmp_path, capsys, reference):
    inputs = write_inputs(tmp_path / "in")
    out, jsonl = tmp_path / "out", tmp_path / "jsonl"
    main(_build_args(inputs, out, "--jsonl-dir", str(jsonl)))  # returns: exit status 0
    stdout = capsys.readouterr().out
    assert "human: AmbER sets (stage 4): 1" in stdout
    assert "nonhuman: queries: 6" in stdout
    assert "| AmbER-H | 1 |" in stdout and "| AmbER-N | 1 |" in stdout
    assert f"Wrote {out} and {jsonl}" in stdout
    assert parquet_tables(out) == parquet_tables(reference)
    for collection in ("human", "nonhuman"):
        assert (jsonl / collection / "amber_set_tuples.jsonl").is_file()
        for task in ("qa", "sf", "fc"):
            assert (jsonl / collection / task / "amber_sets.jsonl").is_file()


def test_cli_subprocess_bad_input_exits_with_a_clear_error(tmp_path, capsys):
    inputs, path = _inputs_with_wikidata_line(tmp_path, BAD_WIKIDATA_LINES["invalid JSON"][0])
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    out = tmp_path / "out"
    done = subprocess.run(
        [str(NAMESAKE), *_build_args(inputs, out, "--strict", workers=2)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode != 0
    assert f"namesake: error: {path}:{BAD_LINE_NO}: not JSON" in done.stderr
    assert "Traceback" not in done.stderr
    assert not out.exists()

    # Without --strict the same input builds, and the skipped line is reported.
    main(_build_args(inputs, out))
    captured = capsys.readouterr()
    assert f"{path}: skipped 1 line(s): not JSON (line {BAD_LINE_NO}: " in captured.out
    assert "Skipped 1 bad input line(s)" in captured.err
    _assert_output_complete(out)


def test_cli_missing_file_exits_without_traceback(tmp_path, capsys):
    inputs = write_inputs(tmp_path / "in")
    inputs["kilt"] = tmp_path / "absent.jsonl"
    with pytest.raises(SystemExit) as caught:
        main(_build_args(inputs, tmp_path / "out"))
    assert caught.value.code == f"namesake: error: {inputs['kilt']}: no such file"
    assert not (tmp_path / "out").exists()


def test_cli_build_where_no_set_survives(tmp_path, capsys):
    """No KILT page for any entity: no set survives; a clear outcome, not a crash."""
    inputs = write_inputs(tmp_path / "in")
    inputs["kilt"].write_text(json.dumps(PAGES[-1]) + "\n", encoding="utf-8")
    try:
        main(_build_args(inputs, tmp_path / "out"))
    except SystemExit as exc:  # refusing is fine, with the CLI's error line
        assert str(exc.code).startswith("namesake: error: ")
        assert not (tmp_path / "out").exists()
    else:
        assert "no AmbER set survived" in capsys.readouterr().out
        assert (tmp_path / "out" / "README.md").is_file()


def test_cli_stats(reference, tmp_path, capsys):
    main(["amber", "stats", str(reference)])
    table = capsys.readouterr().out.strip().splitlines()
    rows = [line for line in table if line.startswith("| AmbER-") and "paper" not in line]
    assert table[0].startswith("| Collection | # AmbER sets")
    assert len(rows) == 2
    assert sum("paper (Table 4" in line for line in table) == 2  # the paper's, after each
    human = [cell.strip() for cell in rows[0].strip("|").split("|")]
    # sets, entities/set, with queries/set, properties/set, QA, SF, FC
    assert human == ["AmbER-H", "1", "2.00", "2.00", "2.00", "2", "2", "2"]

    main(["amber", "stats", str(reference), "--json"])
    stats = json.loads(capsys.readouterr().out)
    assert stats["nonhuman"]["sets"] == 1 and stats["nonhuman"]["tuples"] == 2

    only_human = tmp_path / "human_only"
    build(write_inputs(tmp_path / "in"), only_human, workers=1, collections=("human",))
    main(["amber", "stats", str(only_human)])
    printed = capsys.readouterr().out.splitlines()
    rows = [line for line in printed if line.startswith("| AmbER") and "paper" not in line]
    assert len(rows) == 1 and rows[0].startswith("| AmbER-H | 1 |")

    with pytest.raises(SystemExit) as caught:
        main(["amber", "stats", str(tmp_path / "in")])
    assert str(caught.value.code).startswith(f"namesake: error: {tmp_path / 'in'}")


def test_cli_push_is_removed_and_names_its_successor(tmp_path):
    """`amber push` is `namesake publish dataset amber` now (tests/test_publish.py): any
    old command line, options included, gets one line saying so, and uploads nothing."""
    for old in ([str(tmp_path), "--repo-id", "x/y", "--dry-run"], ["--private", str(tmp_path)]):
        with pytest.raises(SystemExit) as caught:
            main(["amber", "push", *old])
        message = str(caught.value.code)
        assert message.startswith("namesake: error: `namesake amber push` is removed")
        assert "namesake publish dataset amber FOLDER --repo-id OWNER/NAME" in message
        assert "\n" not in message


# ---------------------------------------------------------------------------------------
# 5. Atomic outputs


def _fail_after(monkeypatch, name: str, exception: BaseException):
    """Makes build.<name> do its work, then raise: a build interrupted mid-write."""
    real = getattr(build_module, name)

    def interrupted(*args, **kwargs):
        real(*args, **kwargs)
        raise exception

    monkeypatch.setattr(build_module, name, interrupted)


@pytest.mark.parametrize(
    ("name", "exception"),
    [("write_configs", RuntimeError("disk full")), ("dataset_card", KeyboardInterrupt())],
)
def test_failed_build_leaves_no_output(tmp_path, monkeypatch, name, exception):
    inputs = write_inputs(tmp_path / "in")
    parent = tmp_path / "outputs"
    parent.mkdir()
    _fail_after(monkeypatch, name, exception)
    with pytest.raises(type(exception)):
        build(inputs, parent / "amber", workers=1)
    assert list(parent.iterdir()) == []


def test_failed_build_keeps_previous_output(tmp_path, monkeypatch, reference):
    parent = tmp_path / "outputs"
    out = parent / "amber"
    shutil.copytree(reference, out)
    before = folder_files(out)
    _fail_after(monkeypatch, "write_configs", RuntimeError("disk full"))
    with pytest.raises(RuntimeError, match="disk full"):
        build(write_inputs(tmp_path / "in"), out, workers=1, collections=("human",))
    assert folder_files(out) == before
    assert leftovers(parent) == []


def test_failed_jsonl_layout_leaves_no_half_written_folder(tmp_path, monkeypatch):
    _fail_after(monkeypatch, "write_jsonl_layout", RuntimeError("disk full"))
    with pytest.raises(RuntimeError):
        build(write_inputs(tmp_path / "in"), tmp_path / "out", workers=1, jsonl_dir=tmp_path / "j")
    assert not (tmp_path / "j").exists()
    assert leftovers(tmp_path) == []


def test_rebuild_replaces_previous_output(tmp_path, reference):
    parent = tmp_path / "outputs"
    out = parent / "amber"
    shutil.copytree(reference, out)
    (out / "human" / "note.txt").write_text("a user's note, not namesake's")
    build(write_inputs(tmp_path / "in"), out, workers=1, collections=("human",))
    # The first build's files go (its nonhuman configs too); the user's note stays.
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [MARKER, "README.md", "human", "human_qa", "human_sf", "human_fc", "human_entities"]
    )
    assert (out / "human" / "note.txt").read_text() == "a user's note, not namesake's"
    assert leftovers(parent) == []
    assert sorted(p.name for p in parent.iterdir()) == ["amber"]
    tables = parquet_tables(out)
    assert tables == {k: v for k, v in parquet_tables(reference).items() if "nonhuman" not in k}


# ---------------------------------------------------------------------------------------
# 6. Offline loading with `datasets`


def test_load_dataset_offline(reference, tmp_path):
    import datasets

    assert datasets.config.HF_HUB_OFFLINE  # set by conftest.py
    cache = tmp_path / "cache"

    human = datasets.load_dataset(str(reference), "human", split="test", cache_dir=str(cache))
    assert human.num_rows == QUERIES_PER_COLLECTION
    assert set(COLUMNS) <= set(human.column_names)
    assert sorted(set(human["task"])) == ["fc", "qa", "sf"]
    assert set(human["name"]) == {"John Smith"}
    assert sorted(human["is_head"]) == [False] * 3 + [True] * 3
    assert all(
        ids and titles
        for ids, titles in zip(human["gold_wikipedia_ids"], human["gold_titles"], strict=True)
    )

    fc = datasets.load_dataset(str(reference), "nonhuman_fc", cache_dir=str(cache))
    assert list(fc) == ["test"]
    fc = fc["test"]
    assert fc.num_rows == 2
    assert set(COLUMNS) <= set(fc.column_names)
    assert set(fc["task"]) == {"fc"} and set(fc["name"]) == {"Her"}
    assert sorted(fc["input"]) == [
        "Joaquin Phoenix appeared in Her.",
        "Spike Jonze wrote the screenplay of Her.",
    ]
    assert [a for a in fc["answer"]] == [["SUPPORTS"], ["SUPPORTS"]]


# ---------------------------------------------------------------------------------------
# 7. A rebuilt folder loads the new rows: `datasets` caches a local folder by basename,
# config and card, so the card must change with the data (namesake.dataset_folder).


@pytest.fixture
def one_cache(tmp_path, monkeypatch):
    """One datasets cache for every load of a test, as a user's ~/.cache would be; namesake's
    own loaders (evaluate, compare, the Space) read it from datasets.config."""
    import datasets

    cache = tmp_path / "hf_cache"
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", cache)
    return cache


def _load(folder: Path, config: str) -> list[dict]:
    import datasets

    return datasets.load_dataset(str(folder), config, split="test").to_list()


def test_a_rebuild_from_other_dumps_loads_the_new_rows(tmp_path, one_cache):
    from conftest import SAMPLE_KILT, SAMPLE_PAGECOUNTS_EZ, SAMPLE_WIKIDATA

    from namesake.amber.evaluation.queries import AmberQueries

    out = tmp_path / "out" / "amber"
    build(write_inputs(tmp_path / "in"), out, workers=1)
    assert {row["name"] for row in _load(out, "human")} == {"John Smith"}
    assert len(AmberQueries.load(str(out), "human_qa")) == 2

    build_amber(SAMPLE_WIKIDATA, SAMPLE_PAGECOUNTS_EZ, SAMPLE_KILT, out, workers=1)
    rows = _load(out, "human")
    assert rows == pq.read_table(next((out / "human").glob("*.parquet"))).to_pylist()
    assert "Abe Lincoln" in {row["name"] for row in rows} and "John Smith" not in {
        row["name"] for row in rows
    }
    amber = AmberQueries.load(str(out), "human_qa")
    queries, entities = amber.rows.to_pydict(), amber.members.to_pydict()
    assert set(queries["task"]) == {"qa"} and len(queries["task"]) == len(
        [row for row in rows if row["task"] == "qa"]
    )
    assert "John Smith" not in set(entities["name"])
    assert list(one_cache.iterdir())  # the loads went through the one cache


def test_a_rebuild_that_only_moves_popularity_loads_the_new_values(tmp_path, one_cache):
    """Same rows, same sizes, new float values: only the shards' content digests differ."""
    out = tmp_path / "amber"
    build(write_inputs(tmp_path / "in1"), out, workers=1)
    before = _load(out, "human")
    card_before = (out / "README.md").read_text(encoding="utf-8")

    views = {**VIEWS, "John Smith (soldier)": 200}  # log10: 2.0 -> 2.301; still the tail
    build(write_inputs(tmp_path / "in2", views=views), out, workers=1)
    after = _load(out, "human")
    assert len(after) == len(before)
    popularity = {row["qid"]: row["popularity"] for row in after}
    assert popularity["Q2"] == pytest.approx(math.log10(200)) and popularity["Q1"] == 4.0
    assert [{**row, "popularity": None} for row in after] == [
        {**row, "popularity": None} for row in before
    ]
    assert (out / "README.md").read_text(encoding="utf-8") != card_before


def test_two_folders_of_one_basename_load_their_own_rows(tmp_path, one_cache):
    first, second = tmp_path / "runA" / "amber", tmp_path / "runB" / "amber"
    build(write_inputs(tmp_path / "in1"), first, workers=1)
    build(write_inputs(tmp_path / "in2", views={**VIEWS, "John Smith (soldier)": 1000}), second)
    for folder, soldier in ((first, 2.0), (second, 3.0)):
        popularity = {row["qid"]: row["popularity"] for row in _load(folder, "human")}
        assert popularity == {"Q1": 4.0, "Q2": pytest.approx(soldier)}


def test_card_dataset_info_describes_each_config(reference):
    """What push_to_hub records: features, rows and bytes per split, sizes; load_dataset
    checks the row counts against it."""
    import datasets
    from datasets.info import DatasetInfosDict
    from huggingface_hub import DatasetCard

    card = DatasetCard.load(reference / "README.md").data
    infos = DatasetInfosDict.from_dataset_card_data(card)
    assert sorted(infos) == sorted(CONFIGS) == sorted(c["config_name"] for c in card["configs"])
    tables = parquet_tables(reference)
    for config in CONFIGS:
        info = infos[config]
        shards = sorted((reference / config).glob("*.parquet"))
        assert list(info.splits) == ["test"]
        assert info.splits["test"].num_examples == len(tables[config])
        assert info.download_size == sum(path.stat().st_size for path in shards)
        assert info.dataset_size == info.splits["test"].num_bytes > 0
        assert info.features == datasets.Features.from_arrow_schema(pq.read_schema(shards[0]))
    entry = next(c for c in card["configs"] if c["config_name"] == "human")
    assert entry["default"] is True
    (files,) = entry["data_files"]
    assert files["split"] == "test"
    assert files["path"] == [f"human/{p.name}" for p in sorted((reference / "human").glob("*"))]
