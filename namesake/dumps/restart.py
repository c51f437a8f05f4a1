"""Reading a dump again from partway through, so that a killed pass over it resumes.

A pass that reads a dump through a `DumpReading` leaves *restart points* behind, one every
`every` bytes of text: where the next line starts (decompressed byte offset and line
number) and how a new reader gets there without decompressing all that comes before:

- A plain file seeks.
- bz2 restarts at the bz2 block that holds the offset (at most 900 kB of text before it
  are decompressed again). A block starts at any bit, not byte, and the end of a stream
  holds a CRC combined over all of the stream's blocks, so the new reader is handed a
  stream of its own (`_RestartView`): a bz2 header; one small block whose text is made to
  have the CRC that the skipped blocks combine to, so that the combined CRC still comes
  out right; then the dump's bits from the block on, shifted to byte boundaries, up to the
  next stream; then the rest of the dump as it is. The decoder checks every block's CRC
  and the stream's as always, and the first bytes it gives (the small block's text, and
  the block's text before the offset) are skipped. A block that opens a stream (as in
  multistream dumps) needs none of this: the reader starts at the stream's first byte.
- gzip is decompressed again from the start, on all threads, and thrown away up to the
  offset: a deflate stream cannot be entered without the 32 KiB of text before the
  entry, and rapidgzip exports an index only once it has read the whole file.

Where bz2 blocks start is learnt from rapidgzip's reader (`available_block_offsets`), so
a pass that records restart points reads bz2 with it, even on one thread.
"""

from __future__ import annotations

import bz2
import io
import mmap
import os
import re
from pathlib import Path
from typing import BinaryIO

import numpy as np
import rapidgzip

from namesake.dumps.reading import detect_compression, open_dump, require_regular_file
from namesake.errors import BadInputError

#: why a dump read by a pass that can resume (``--work-dir``) must be a file, not a pipe
RESUMING_NEEDS_A_FILE = "a pass that resumes reads the dump again from where it stopped"
#: text between two restart points: at stage 1's speed on one worker (~27 MB/s, see
#: benchmarks/README.md) about 2.5 minutes of work, the most a killed pass loses
RESTART_EVERY_BYTES = 4 << 30

BLOCK_MAGIC = 0x314159265359
END_OF_STREAM_MAGIC = 0x177245385090
# A stream's first 10 bytes: its header ('BZh' and the block size) and either a block's
# magic or, for an empty stream, the end-of-stream magic. Ten fixed bytes do not turn up
# by chance inside compressed data (about 2^-77 per position).
_STREAM_START = re.compile(rb"BZh[1-9](?:1AY&SY|\x17\x72\x45\x38\x50\x90)")
_SKIP_BYTES = 64 << 20
_TOO_SHORT = "ends before the restart point: not the dump the restart point was taken from"


class DumpReading:
    """One pass over `path`, from `start` (a restart point, or None for the beginning),
    which hands out restart points as it goes (`checkpoint`). `path` must be a file: a pipe
    cannot be read again from a restart point, and is refused before it is read."""

    def __init__(
        self,
        path: str | os.PathLike,
        threads: int = 1,
        start: dict | None = None,
        every: int = RESTART_EVERY_BYTES,
    ):
        require_regular_file(path, RESUMING_NEEDS_A_FILE)
        self.path = Path(path)
        self.threads = max(1, threads)
        self.start = start if start and start["offset"] else None  # offset 0: a fresh pass
        self.every = every
        self.compression = detect_compression(path)
        self.offset = start["offset"] if start else 0
        self.first_line = start["line"] if start else 1
        self._last_checkpoint = self.offset
        self._blocks: _Bz2Blocks | None = None

    def open(self) -> BinaryIO:
        """The dump's text from `offset` on."""
        if self.compression == "plain":
            if self.offset > self.path.stat().st_size:
                raise BadInputError(self.path, None, _TOO_SHORT)
            stream = open(self.path, "rb")  # noqa: SIM115 (the caller closes it)
            stream.seek(self.offset)
            return stream
        if self.compression == "gzip":
            return _skipped(open_dump(self.path, self.threads), self.offset, self.path)
        view = _RestartView(self.path, self.start["bz2"]) if self.start else None
        source = str(self.path) if view is None else io.BufferedReader(view, 1 << 20)
        stream = rapidgzip.IndexedBzip2File(source, parallelization=self.threads)
        self._blocks = _Bz2Blocks(self.path, stream.raw.bz2reader, view)
        skip = 0 if view is None else view.text_before + self.offset - view.block_offset
        return _skipped(stream, skip, self.path)

    def checkpoint(self, offset: int, line: int) -> dict | None:
        """A restart point at `offset`, where line `line` starts, if `every` bytes have
        passed since the last one; else None. Call it from the thread that reads."""
        if offset - self._last_checkpoint < self.every:
            return None
        self._last_checkpoint = offset
        point = {"offset": offset, "line": line}
        if self._blocks is not None:
            point["bz2"] = self._blocks.restart_at(offset)
        return point


def _skipped(stream: BinaryIO, count: int, path: Path) -> BinaryIO:
    """`stream` after reading and dropping its first `count` bytes."""
    # imported here, not with the module (~50 ms): this module is part of
    # `import namesake.amber.build.pipeline`, which every `namesake amber` command pays at start-up
    from tqdm.auto import tqdm

    with tqdm(
        total=count,
        desc=f"Skipping to the restart point of {path.name}",
        unit="B",
        unit_scale=True,
        disable=count < _SKIP_BYTES,
    ) as progress:
        while count:
            got = len(stream.read(min(count, _SKIP_BYTES)))
            if not got:
                raise BadInputError(path, None, _TOO_SHORT)
            count -= got
            progress.update(got)
    return stream


def _bits(f: BinaryIO, bit: int, count: int) -> int:
    """The `count` bits of file `f` from bit `bit` on (bits counted from each byte's top)."""
    first, last = bit // 8, (bit + count + 7) // 8
    f.seek(first)
    data = f.read(last - first).ljust(last - first, b"\0")
    return (int.from_bytes(data, "big") >> (8 * (last - first) - (bit - 8 * first) - count)) & (
        (1 << count) - 1
    )


def _stream_level(f: BinaryIO, bit: int) -> int | None:
    """The block-size digit of the stream whose first block starts at `bit`, or None where
    no stream header comes right before `bit`."""
    if bit % 8 or bit < 32:
        return None
    f.seek(bit // 8 - 4)
    header = f.read(4)
    if header[:3] == b"BZh" and header[3:4].isdigit() and header[3] != ord("0"):
        return header[3] - ord("0")
    return None


def _rotate_left(crc: int) -> int:
    return ((crc << 1) | (crc >> 31)) & 0xFFFFFFFF


class _Bz2Blocks:
    """Follows the bz2 blocks that rapidgzip has found, to say where a restart at a text
    offset begins: the block holding it, and the CRC combined over the blocks of its stream
    before it (bzip2 folds each block's CRC in: combined = rotl(combined, 1) ^ block)."""

    def __init__(self, path: Path, reader, view: _RestartView | None):
        self._path = path
        self._size = 8 * path.stat().st_size
        self._reader = reader
        self._view = view
        if view is None:
            self._folded_to, self._combined, self._level = -1, 0, None
        else:
            start = view.start
            self._folded_to, self._combined = start["bit"], start["stream_crc"]
            self._level = start["level"]
        self._restart = None if view is None else dict(view.start)

    def restart_at(self, offset: int) -> dict:
        with open(self._path, "rb") as dump:
            return self._restart_at(offset, dump)

    def _restart_at(self, offset: int, dump: BinaryIO) -> dict:
        found = self._reader.available_block_offsets().items()  # every block so far
        if self._view is not None:
            found = [
                (self._view.dump_bit(bit), self._view.dump_offset(text))
                for bit, text in found
                if self._view.holds(bit)
            ]
        for bit, text in sorted(item for item in found if item[0] > self._folded_to):
            if text > offset:
                break
            if bit >= self._size:  # rapidgzip's entry for the end of the file
                continue
            magic = _bits(dump, bit, 48)
            if magic == END_OF_STREAM_MAGIC:
                continue
            if magic != BLOCK_MAGIC:
                raise BadInputError(self._path, None, f"no bz2 block at bit {bit:,}")
            level = _stream_level(dump, bit)
            if level is not None:  # the first block of a stream
                self._combined, self._level = 0, level
            elif self._restart is not None:  # the previous restart block is now skipped
                block_crc = _bits(dump, self._restart["bit"] + 48, 32)
                self._combined = _rotate_left(self._combined) ^ block_crc
            self._restart = {
                "bit": bit,
                "offset": text,
                "stream_crc": self._combined,
                "level": self._level,
                "opens_stream": level is not None,
            }
            self._folded_to = bit
        if self._restart is None or self._restart["offset"] > offset:
            raise BadInputError(self._path, None, f"no bz2 block found before {offset:,}")
        return dict(self._restart)


# bzip2's CRC-32: polynomial 0x04C11DB7, most significant bit first.
_CRC_TABLE = []
for _byte in range(256):
    _crc = _byte << 24
    for _ in range(8):
        _crc = ((_crc << 1) ^ 0x04C11DB7) if _crc & 0x80000000 else (_crc << 1)
    _CRC_TABLE.append(_crc & 0xFFFFFFFF)


def bzip2_crc(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for byte in data:
        crc = ((crc << 8) & 0xFFFFFFFF) ^ _CRC_TABLE[(crc >> 24) ^ byte]
    return crc ^ 0xFFFFFFFF


def text_with_crc(prefix: bytes, crc: int) -> bytes:
    """`prefix` and four bytes after it that give the whole the bzip2 CRC `crc`.

    A CRC is affine in the bits of the last four bytes, and invertible there, so the four
    bytes come from solving 32 linear equations over GF(2)."""
    base = bzip2_crc(prefix + bytes(4))
    pivots: dict[int, tuple[int, int]] = {}  # top bit -> (column, which inputs make it)
    for i in range(32):
        column = bzip2_crc(prefix + (1 << i).to_bytes(4, "big")) ^ base
        made_of = 1 << i
        while column:
            top = column.bit_length() - 1
            if top not in pivots:
                pivots[top] = (column, made_of)
                break
            column, made_of = column ^ pivots[top][0], made_of ^ pivots[top][1]
    wanted, chosen = crc ^ base, 0
    while wanted:
        column, made_of = pivots[wanted.bit_length() - 1]
        wanted, chosen = wanted ^ column, chosen ^ made_of
    return prefix + chosen.to_bytes(4, "big")


def _block_with_crc(level: int, crc: int) -> tuple[int, int, int]:
    """(bits, number of bits, length of its text) of one bz2 block whose CRC is `crc`."""
    text = text_with_crc(b"namesake restart ", crc)
    stream = bz2.compress(text, level)
    size = 8 * len(stream)
    value = int.from_bytes(stream, "big")
    for padding in range(8):  # the stream ends: end magic, combined CRC, 0-7 padding bits
        end_magic = size - padding - 80
        if (value >> (size - end_magic - 48)) & ((1 << 48) - 1) == END_OF_STREAM_MAGIC:
            length = end_magic - 32
            return (value >> (size - end_magic)) & ((1 << length) - 1), length, len(text)
    raise AssertionError("bz2.compress wrote no end-of-stream magic")


class _RestartView(io.RawIOBase):
    """A bz2 file that decompresses to the dump's text from a block on (see the module's
    docstring), read on demand: a made-up head, the dump's bits from the block up to the
    next stream shifted to byte boundaries, then the dump's bytes from that stream on."""

    def __init__(self, path: Path, start: dict):
        self.start = start
        self.block_offset = start["offset"]
        self._file = open(path, "rb")  # noqa: SIM115 (closed by close())
        size = os.fstat(self._file.fileno()).st_size
        bit = start["bit"]
        if start["opens_stream"]:
            prefix, prefix_bits, self.text_before = 0, 0, 0
            bit -= 32  # from the stream's header
        else:
            block, length, self.text_before = _block_with_crc(start["level"], start["stream_crc"])
            prefix = ((0x425A6830 + start["level"]) << length) | block  # 'BZh' + level
            prefix_bits = 32 + length
        fill = -prefix_bits % 8  # dump bits that complete the head's last byte
        head = (prefix << fill) | _bits(self._file, bit, fill)
        self._head = head.to_bytes((prefix_bits + fill) // 8, "big")
        self._prefix_bits, self._bit = prefix_bits, bit
        self._shifted_from = bit + fill  # dump bit of the view's first byte after the head
        next_stream = size if start["opens_stream"] else self._next_stream(bit // 8 + 1, size)
        self._tail_from = next_stream
        # The shifted bits stop where the block's stream ends (its combined CRC), so that
        # the decoder, which skips to the next byte of the view, finds the next stream there.
        stream_end = self._stream_end(next_stream)
        self._shifted_bytes = -(-(stream_end - self._shifted_from) // 8)
        self._tail_at = len(self._head) + self._shifted_bytes
        self._size = self._tail_at + size - next_stream
        self._position = 0

    def _stream_end(self, next_stream: int) -> int:
        """Bit where the stream before the one at byte `next_stream` ends: after its
        end-of-stream magic and combined CRC, which 0-7 padding bits follow."""
        for padding in range(8):
            end = 8 * next_stream - padding
            if _bits(self._file, end - 80, 48) == END_OF_STREAM_MAGIC:
                return end
        if next_stream == os.fstat(self._file.fileno()).st_size:
            return 8 * next_stream  # bytes after the last stream, which decoders ignore
        raise BadInputError(
            self._file.name, None, f"no end of bz2 stream before byte {next_stream:,}"
        )

    def _next_stream(self, first: int, size: int) -> int:
        """Byte where the next bz2 stream starts after `first`, or the file's size."""
        if first >= size:
            return size
        with mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ) as data:
            found = _STREAM_START.search(data, first)
            return found.start() if found else size

    # Coordinates, for the restart points of a pass that began here.
    def holds(self, view_bit: int) -> bool:
        """Whether a block at `view_bit` is the dump's (not the made-up one)."""
        return view_bit >= self._prefix_bits

    def dump_bit(self, view_bit: int) -> int:
        if view_bit < 8 * self._tail_at:
            return self._bit + view_bit - self._prefix_bits
        return 8 * self._tail_from + view_bit - 8 * self._tail_at

    def dump_offset(self, view_offset: int) -> int:
        return self.block_offset + view_offset - self.text_before

    # The raw file interface rapidgzip reads through.
    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._position, io.SEEK_END: self._size}[whence]
        self._position = max(0, base + offset)
        return self._position

    def readinto(self, target) -> int:
        count = max(0, min(len(target), self._size - self._position))
        out, at = bytearray(), self._position
        if at < len(self._head):
            out += self._head[at : at + count]
        end = self._position + count
        at = self._position + len(out)
        if at < min(end, self._tail_at):
            out += self._shifted(at - len(self._head), min(end, self._tail_at) - at)
        at = self._position + len(out)
        if at < end:
            self._file.seek(self._tail_from + at - self._tail_at)
            out += self._file.read(end - at)
        target[: len(out)] = out
        self._position += len(out)
        return len(out)

    def _shifted(self, index: int, count: int) -> bytes:
        """Bytes `index`.. of the dump's bits from `_shifted_from` on."""
        first, shift = divmod(self._shifted_from, 8)
        self._file.seek(first + index)
        raw = np.frombuffer(self._file.read(count + 1).ljust(count + 1, b"\0"), np.uint8)
        if shift == 0:
            return raw[:count].tobytes()
        wide = raw.astype(np.uint16)
        joined = (wide[:-1] << shift) | (wide[1:] >> (8 - shift))
        return (joined & 0xFF).astype(np.uint8).tobytes()

    def close(self) -> None:
        self._file.close()
        super().close()
