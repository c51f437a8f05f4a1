"""The shared input plumbing: errors that name a bad input (`namesake.errors`), dumps read in
blocks of whole lines (`namesake.dumps.reading`) and stage timers (`namesake.timing`). The
builds that use them are tested end to end in test_amber_inputs.py and test_bad_inputs.py."""

from __future__ import annotations

import gzip
import pickle
import random
from pathlib import Path

import msgspec
import pytest
from dumps import compress, members
from pipe_inputs import PIPES, fifo_of, piped

from namesake.dumps.reading import (
    UTF8_BOM,
    detect_compression,
    iter_json_lines,
    iter_line_blocks,
    map_blocks,
)
from namesake.dumps.restart import DumpReading
from namesake.errors import BadInputError, InputProblems, NamesakeError
from namesake.timing import StageTimer
from namesake.work_folder import input_identity

COMPRESSIONS = ("plain", "gzip", "bz2")


def test_a_bad_input_names_its_file_and_line_and_survives_a_worker_process():
    error = BadInputError("dump.json", 7, "not JSON")
    assert str(error) == "dump.json:7: not JSON"
    assert str(BadInputError("views.txt", None, "empty")) == "views.txt: empty"
    assert isinstance(error, NamesakeError) and isinstance(error, ValueError)
    back = pickle.loads(pickle.dumps(error))  # as a fork pool hands it back
    assert (back.path, back.line, back.message) == ("dump.json", 7, "not JSON")


def test_input_problems_summary_lists_file_kind_and_examples():
    problems = InputProblems()
    for line in (7, 9, 11, 13):
        problems.report("dump.json", line, "not JSON", f"unexpected character {line}")
    problems.report("views.txt", 2, "malformed pagecounts-ez line")
    assert problems.total() == 5
    assert problems.summary() == [
        "dump.json: skipped 4 line(s): not JSON (line 7: unexpected character 7; "
        "line 9: unexpected character 9; line 11: unexpected character 11)",
        "views.txt: skipped 1 line(s): malformed pagecounts-ez line (e.g. line 2)",
    ]
    strict = InputProblems(strict=True)
    with pytest.raises(BadInputError, match=r"^dump\.json:7: not JSON: oops$"):
        strict.report("dump.json", 7, "not JSON", "oops")


def test_compression_is_read_from_the_content_not_the_name(tmp_path):
    for compression in COMPRESSIONS:
        misnamed = tmp_path / f"{compression}.txt.gz"
        misnamed.write_bytes(compress(b"a line\n", compression))
        assert detect_compression(misnamed) == compression
    with pytest.raises(BadInputError, match="no such file"):
        detect_compression(tmp_path / "missing.bz2")


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_blocks_hold_whole_lines_numbered_through_the_file(tmp_path, compression):
    """Blocks much smaller than the file: every block ends at a line's end, its first
    line's number is right, and a last line without a newline is still read."""
    lines = [f"line {i} {'x' * (i % 37)}".encode() for i in range(1, 2001)]
    data = b"\n".join(lines)  # no newline after the last line
    path = tmp_path / f"lines.{compression}"
    path.write_bytes(compress(data, compression))
    read, expected_first = [], 1
    for first_line, block in iter_line_blocks(path, block_bytes=1024):
        assert first_line == expected_first
        block_lines = block.splitlines()
        expected_first += len(block_lines)
        read += block_lines
    assert read == lines
    assert expected_first > 10  # many blocks, not one


def test_truncated_gzip_is_found_by_each_reader(tmp_path):
    """A cut gzip file raises whatever the number of threads, wherever it is cut; and a
    whole one, of one member or several, reads in full."""
    rng = random.Random(3)
    data = "".join(f"{rng.random()} {rng.random()}\n" for _ in range(60_000)).encode()
    path = tmp_path / "lines.gz"
    for parts in (1, 3):
        whole = members(data, "gzip", parts)
        for threads in (1, 2):
            path.write_bytes(whole)
            assert b"".join(block for _, block in iter_line_blocks(path, threads)) == data
            for cut in rng.sample(range(20, len(whole) - 1), 8):
                if whole[cut:].startswith(b"\x1f\x8b"):
                    continue  # cut between two members: a valid file
                path.write_bytes(whole[:cut])
                with pytest.raises(BadInputError, match="corrupt or truncated gzip"):
                    list(iter_line_blocks(path, threads))


def test_json_lines_skip_blanks_and_name_the_bad_line(tmp_path):
    decoder = msgspec.json.Decoder(dict[str, int])
    path = tmp_path / "records.jsonl"
    path.write_text('{"a": 1}\n\n   \n{"b": 2}\n')
    assert list(iter_json_lines(path, decoder)) == [(1, {"a": 1}), (4, {"b": 2})]
    path.write_text('{"a": 1}\n{"b": "two"}\n')
    with pytest.raises(BadInputError, match=r"records\.jsonl:2: ") as caught:
        list(iter_json_lines(path, decoder))
    assert caught.value.line == 2


def _count_lines(item: tuple[int, bytes]) -> tuple[int, int]:
    first_line, block = item
    return first_line, block.count(b"\n")


def test_map_blocks_gives_each_block_once_in_order_with_one_worker_or_two(tmp_path):
    path = tmp_path / "lines.txt.gz"
    path.write_bytes(gzip.compress(b"".join(b"%d\n" % i for i in range(200_000))))
    one = list(map_blocks(path, _count_lines, workers=1))
    two = list(map_blocks(path, _count_lines, workers=2))
    assert one == two
    assert sum(count for _, count in one) == 200_000
    assert [first for first, _ in one] == sorted(first for first, _ in one)


def _lines(count: int = 20_000) -> bytes:
    return b"".join(b"line %d %s\n" % (i, b"x" * (i % 53)) for i in range(1, count + 1))


@pytest.mark.parametrize("how", PIPES)
@pytest.mark.parametrize("compression", COMPRESSIONS)
@pytest.mark.parametrize("threads", [1, 2])
def test_a_pipe_reads_as_the_file_does(tmp_path, how, compression, threads):
    """A pipe is read once: its compression is told from a head that is given again, not
    from a first read that loses it (the bytes of the first block, before the fix)."""
    data = compress(_lines(), compression)
    path = tmp_path / "lines"
    path.write_bytes(data)
    expected = list(iter_line_blocks(path, threads, block_bytes=4096))
    assert len(expected) > 10
    with piped(data, how, tmp_path) as pipe:
        assert list(iter_line_blocks(pipe, threads, block_bytes=4096)) == expected
    with piped(data, how, tmp_path) as pipe:
        assert list(map_blocks(pipe, _count_lines, workers=threads)) == list(
            map_blocks(path, _count_lines, workers=threads)
        )


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_a_byte_order_mark_before_the_first_line_is_dropped(tmp_path, compression):
    """UTF-8 files written on Windows start with EF BB BF; the first line reads without it,
    in every line reader (the first record of a TREC run, a JSON line, a page-view line)."""
    path = tmp_path / "records.jsonl"
    text = b'{"a": 1}\n\xef\xbb\xbf{"b": 2}\n'  # a mark that is not at the start is text
    path.write_bytes(compress(UTF8_BOM + text, compression))
    assert [block for _, block in iter_line_blocks(path)] == [text]
    path.write_bytes(compress(UTF8_BOM + b'{"a": 1}\n', compression))
    assert list(iter_json_lines(path, msgspec.json.Decoder(dict[str, int]))) == [(1, {"a": 1})]


def test_restart_points_count_a_byte_order_mark(tmp_path):
    """The mark is dropped, but a restart point's offset is in the file's text: a pass
    restarted there reads on from the right line."""
    text = _lines(5_000)
    path = tmp_path / "lines"
    path.write_bytes(UTF8_BOM + text)
    reading = DumpReading(path, every=10_000)
    points = [point for *_, point in iter_line_blocks(path, 1, 4096, reading) if point]
    assert len(points) > 3
    for point in points:
        again = DumpReading(path, start=point)
        rest = b"".join(block for _, block, _ in iter_line_blocks(path, 1, 4096, again))
        before = text[: point["offset"] - len(UTF8_BOM)]
        assert rest == text[len(before) :] and point["line"] == before.count(b"\n") + 1


@pytest.mark.parametrize(
    "read",
    [
        lambda path: list(iter_line_blocks(path)),
        lambda path: list(map_blocks(path, _count_lines)),
        detect_compression,
    ],
)
def test_a_folder_is_refused_by_name_before_it_is_read(tmp_path, read):
    with pytest.raises(BadInputError) as caught:
        read(tmp_path)
    assert str(caught.value) == f"{tmp_path}: is a folder, not a file"


def _build_with_work_dir(wikidata: Path) -> None:
    """`amber build --work-dir` on a piped Wikidata dump: refused before the page views (a
    missing file here) are read."""
    from namesake.amber.build.pipeline import build_amber

    folder = wikidata.parent
    build_amber(wikidata, folder / "absent", folder / "absent", folder / "out", work_dir=folder)


@pytest.mark.parametrize(
    "read",
    [lambda path: DumpReading(path), input_identity, _build_with_work_dir],
    ids=["restartable pass", "work folder", "amber build --work-dir"],
)
def test_what_reads_its_input_again_refuses_a_pipe_before_reading_it(tmp_path, read):
    """A pass that resumes, or work kept in a folder, reads its input again: a pipe is
    refused with one line, and nothing of it is read (the writer still has all of it)."""
    with fifo_of(b"line\n", tmp_path) as fifo:
        with pytest.raises(BadInputError) as caught:
            read(fifo)
        assert str(caught.value).startswith(f"{fifo}: is a pipe, not a file: ")
        with open(fifo, "rb") as f:
            assert f.read() == b"line\n"


def test_a_stage_timer_records_each_stage_in_order():
    seconds: dict[str, float] = {}
    timer = StageTimer(seconds)
    timer.lap("read")
    timer.lap("write")
    assert list(seconds) == ["read", "write"]
    assert all(value >= 0 for value in seconds.values())
