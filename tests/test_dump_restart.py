"""Restarting a pass over a dump partway through (`namesake.dumps.restart`): from every
restart point a pass leaves, a new reader gives exactly the dump's text from that point on,
with the right line numbers, for plain, gzip and bz2 (one stream of many blocks, a few
large streams, one stream per block), and the restart points of a resumed pass work too."""

import bz2
import gzip
import random

import pytest

from namesake.dumps.reading import iter_line_blocks
from namesake.dumps.restart import DumpReading, bzip2_crc, text_with_crc
from namesake.errors import BadInputError

READ_BYTES = 64 << 10


def dump_text(lines: int = 6000, seed: int = 0) -> bytes:
    """JSON-ish lines of random length, compressible about as well as Wikidata's."""
    rng = random.Random(seed)
    words = ["entity", "label", "Lincoln", "Abe", "claims", "P31", "Q5", "enwiki", "value"]
    rows = [b"["]
    for i in range(lines):
        body = " ".join(
            rng.choice(words) + str(rng.randrange(999)) for _ in range(rng.randrange(4, 120))
        )
        rows.append(f'{{"id":"Q{i}","text":"{body}"}},'.encode())
    rows.append(b"]")
    return b"\n".join(rows) + b"\n"


def bz2_streams(text: bytes, stream_bytes: int) -> bytes:
    """`text` as bz2 at level 1 (100 kB blocks), a new stream every `stream_bytes`."""
    return b"".join(
        bz2.compress(text[i : i + stream_bytes], 1) for i in range(0, len(text), stream_bytes)
    )


TEXT = dump_text()
LAYOUTS = {
    "plain": lambda text: text,
    "gzip": lambda text: gzip.compress(text, 1),
    "bz2, one stream of many blocks": lambda text: bz2_streams(text, len(text)),
    "bz2, a few streams of many blocks": lambda text: bz2_streams(text, 700_000),
    "bz2, one stream per block (pbzip2)": lambda text: bz2_streams(text, 90_000),
}


def read_pass(path, threads, start, every):
    """(text, restart points, line numbers checked) of one pass from `start`."""
    reading = DumpReading(path, threads, start, every)
    text, points = b"", []
    offset = reading.offset
    for line, block, point in iter_line_blocks(path, threads, READ_BYTES, reading=reading):
        assert line == TEXT[:offset].count(b"\n") + 1
        text, offset = text + block, offset + len(block)
        if point is not None:
            assert point["offset"] == offset and point["line"] == line + block.count(b"\n")
            points.append(point)
    return text, points


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("threads", [1, 2])
def test_a_pass_restarts_from_each_of_its_restart_points(layout, threads, tmp_path):
    path = tmp_path / "dump"
    path.write_bytes(LAYOUTS[layout](TEXT))
    text, points = read_pass(path, threads, None, every=200_000)
    assert text == TEXT
    assert len(points) >= 8
    if layout.startswith("bz2"):  # restarts at a block inside a stream, or at a stream
        opening = {point["bz2"]["opens_stream"] for point in points}
        assert opening == {True} if "per block" in layout else False in opening
    for point in points:
        rest, later = read_pass(path, threads, point, every=200_000)
        assert rest == TEXT[point["offset"] :]
        if later:  # a resumed pass's own restart points lead on to the same text
            again, _ = read_pass(path, threads, later[-1], every=200_000)
            assert again == TEXT[later[-1]["offset"] :]


@pytest.mark.parametrize("layout", ["plain", "gzip"])
def test_a_restart_point_past_the_end_of_the_file_is_refused(layout, tmp_path):
    path = tmp_path / "dump"
    path.write_bytes(LAYOUTS[layout](TEXT[:1000]))
    reading = DumpReading(path, 1, {"offset": 5000, "line": 3})
    with pytest.raises(BadInputError, match="ends before the restart point"):
        list(iter_line_blocks(path, 1, reading=reading))


@pytest.mark.parametrize("crc", [0, 1, 0xFFFFFFFF, 0x8F23FB10, 0x2A5A4BE5])
def test_four_bytes_give_a_text_any_bzip2_crc(crc):
    text = text_with_crc(b"namesake restart ", crc)
    assert bzip2_crc(text) == crc
    # the same CRC bzip2 itself writes into a block's header (32 bits after its magic)
    stream = bz2.compress(text, 1)
    assert int.from_bytes(stream[10:14], "big") == crc
