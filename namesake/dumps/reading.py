"""Reading dumps (bz2/gzip/plain, streamed) in blocks of whole lines.

Dumps are read as bytes in large blocks of whole lines, decompressed in background
threads (libbz2 or rapidgzip), while the caller parses the previous block, in this process
or in worker processes (`map_blocks`). A malformed line is a `namesake.errors.BadInputError`
naming the file and line.

Every input is opened once (`open_input`): its compression is told from a head of its first
bytes, which a regular file seeks back over and a pipe (``/dev/stdin``, a FIFO,
``<(zcat run.gz)``) gives again before the rest, so a run read from a pipe loses nothing. A
UTF-8 byte-order mark at the start of the text is dropped where every line reader goes
(`_line_blocks`), so that TREC runs, JSON lines and page views read alike with or without one.
"""

from __future__ import annotations

import bz2
import contextlib
import ctypes
import functools
import gzip
import io
import os
import queue
import stat
import threading
import zlib
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import rapidgzip

from namesake.errors import JSON_LINE_ERRORS, BadInputError, describe_json_error

BZ2_MAGIC = b"BZh"
GZIP_MAGIC = b"\x1f\x8b"
UTF8_BOM = b"\xef\xbb\xbf"
CHUNK_BYTES = 8 << 20


def _cannot_open(path: str | os.PathLike, exc: OSError) -> BadInputError:
    if isinstance(exc, FileNotFoundError):
        return BadInputError(path, None, "no such file")
    if isinstance(exc, IsADirectoryError):
        return BadInputError(path, None, "is a folder, not a file")
    return BadInputError(path, None, f"cannot be read ({exc.strerror or exc})")


def require_regular_file(path: str | os.PathLike, why: str) -> None:
    """Refuses, before anything is read, an input that cannot be read twice or sought in
    (a pipe, a FIFO, a terminal): a BadInputError naming it and saying `why` it must be a
    file. Only `stat` is called: a pipe opened to be refused would lose what it held."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise _cannot_open(path, exc) from None
    if stat.S_ISDIR(mode):
        raise BadInputError(path, None, "is a folder, not a file")
    if not stat.S_ISREG(mode):
        kind = "a pipe" if stat.S_ISFIFO(mode) else "a device"
        raise BadInputError(path, None, f"is {kind}, not a file: {why}")


def _compression(head: bytes) -> str:
    if head.startswith(BZ2_MAGIC):
        return "bz2"
    if head.startswith(GZIP_MAGIC):
        return "gzip"
    return "plain"


@dataclass
class OpenedInput:
    """An input opened once (`open_input`): its compression, told from its first bytes, and
    `open` for its text. A regular file has been sought back to its start; a pipe's first
    bytes, read already, are given again before the rest (`_Replayed`)."""

    path: str | os.PathLike
    compression: str
    regular: bool  # a regular file, which seeks and can be opened again by its path
    _raw: io.FileIO
    _head: bytes

    def open(self, threads: int = 1) -> BinaryIO:
        """The decompressed text, over `threads` threads (see `open_dump`); closing it
        closes the input."""
        if self.regular and threads > 1 and self.compression != "plain":
            # rapidgzip's parallel readers read a file by path, from several places at once
            self._raw.close()
            if self.compression == "bz2":
                return rapidgzip.IndexedBzip2File(str(self.path), parallelization=threads)
            return io.BufferedReader(_CheckedGzipReader(self.path, threads), CHUNK_BYTES)
        source = self._raw if self.regular else _Replayed(self._head, self._raw)
        if self.compression == "plain":
            return io.BufferedReader(source, CHUNK_BYTES)
        if self.compression == "bz2":
            reader = _Libbz2Reader(source) if _libbz2() else _ModuleReader(bz2, source)
        else:
            reader = _ZlibReader(source) if _libz() else _ModuleReader(gzip, source)
        return io.BufferedReader(reader, CHUNK_BYTES)

    def close(self) -> None:
        """Closes the input where `open` was not called."""
        self._raw.close()

    def __enter__(self) -> OpenedInput:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_input(path: str | os.PathLike) -> OpenedInput:
    """Opens `path` once for reading: a file, or a pipe (FIFO, ``/dev/stdin``), read through.

    A folder, a missing file or one that cannot be read is a BadInputError naming it,
    raised before anything is read."""
    try:
        raw = open(path, "rb", buffering=0)  # noqa: SIM115 (closed by the stream it opens)
    except OSError as exc:  # a folder among them: open() refuses it
        raise _cannot_open(path, exc) from None
    regular = stat.S_ISREG(os.fstat(raw.fileno()).st_mode)
    head = b""
    while len(head) < len(BZ2_MAGIC) and (more := raw.read(len(BZ2_MAGIC) - len(head))):
        head += more
    if regular:
        raw.seek(0)
    return OpenedInput(path, _compression(head), regular, raw, b"" if regular else head)


def detect_compression(path: str | os.PathLike) -> str:
    """'bz2', 'gzip' or 'plain', from the file's magic bytes (not its name). It reads the
    head: a pipe is read with `open_input`, which keeps it."""
    with open_input(path) as source:
        return source.compression


def open_dump(path: str | os.PathLike, threads: int = 1) -> BinaryIO:
    """Opens a bz2, gzip or plain file or pipe for binary reading, decompressed over
    `threads`.

    With several threads, rapidgzip decompresses a bz2 or gzip file (`_CheckedGzipReader`
    adds the end-of-file check it lacks for gzip). With one, or from a pipe, which those
    readers cannot seek in, libbz2 or zlib (`_CtypesReader`), which run without the GIL, so
    that `iter_line_blocks` overlaps them with the caller's parsing (rapidgzip's one-thread
    readers hold the GIL). Where those libraries cannot be loaded, Python's bz2 and gzip
    modules.
    """
    return open_input(path).open(threads)


class _Replayed(io.RawIOBase):
    """A pipe whose first bytes (`head`) were read to tell its compression: those bytes
    again, then the rest of the pipe."""

    def __init__(self, head: bytes, rest: io.FileIO):
        self._head, self._rest = head, rest

    def readable(self) -> bool:
        return True

    def readinto(self, target) -> int:
        if not self._head:
            return self._rest.readinto(target)
        count = min(len(target), len(self._head))
        target[:count] = self._head[:count]
        self._head = self._head[count:]
        return count

    def close(self) -> None:
        if not self.closed:
            self._rest.close()
        super().close()


class _ModuleReader(io.RawIOBase):
    """Python's bz2 or gzip module decompressing an open `source`, which it closes with
    itself (the modules leave a file object they are given open)."""

    def __init__(self, module, source: BinaryIO):
        self._source = source
        self._stream = module.open(source)

    def readable(self) -> bool:
        return True

    def readinto(self, target) -> int:
        return self._stream.readinto(target)

    def close(self) -> None:
        if not self.closed:
            self._stream.close()
            self._source.close()
        super().close()


class _CtypesReader(io.RawIOBase):
    """Decompresses a file with a C library (libbz2, zlib) called through ctypes.

    Python's bz2 and gzip modules need the GIL back every time their output buffer grows
    or they take more input: in a background thread beside a parsing one, each time waits
    for the parser to let go of it (up to the 5 ms switch interval). Stage 1 with one
    worker took 12-18% longer on bz2 than with this reader, and gzip decompression did not
    overlap parsing at all. A ctypes call releases the GIL for the whole call, which fills
    the caller's buffer (8 MB) directly. Subclasses start, step and end one stream. The
    compressed bytes come from `source` (a file or a pipe), closed with the reader.
    """

    _INPUT_BYTES = 1 << 20

    def __init__(self, source: BinaryIO, lib: ctypes.CDLL, stream: ctypes.Structure):
        self._lib, self._stream = lib, stream
        self._file = source
        self._input = b""  # what next_in points into
        self._in_stream = False

    def readable(self) -> bool:
        return True

    def readinto(self, target) -> int:
        view = memoryview(target).cast("B")
        if not view:
            return 0
        out = (ctypes.c_char * len(view)).from_buffer(view)
        stream, produced = self._stream, 0
        while produced == 0:
            if stream.avail_in == 0:
                self._input = self._file.read(self._INPUT_BYTES)
                if not self._input:
                    if self._in_stream:
                        raise EOFError(
                            "compressed file ended before the end-of-stream marker was reached"
                        )
                    return 0
                stream.next_in = ctypes.cast(ctypes.c_char_p(self._input), ctypes.c_void_p)
                stream.avail_in = len(self._input)
            if not self._in_stream:  # the file's first stream (member), or one after another
                self._start()
                self._in_stream = True
            stream.next_out = ctypes.addressof(out) + produced
            stream.avail_out = len(view) - produced
            ended = self._step()
            produced = len(view) - stream.avail_out
            if ended:
                self._end()
                self._in_stream = False
        return produced

    def _start(self) -> None:
        raise NotImplementedError

    def _step(self) -> bool:
        """Decompresses what fits; True at the end of a stream, raises on bad data."""
        raise NotImplementedError

    def _end(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        if not self.closed:
            if self._in_stream:
                self._end()
                self._in_stream = False
            self._file.close()
        super().close()


def _shared_library(*names: str) -> ctypes.CDLL | None:
    """The first library of `names` that loads, or None (the library is linked into
    Python statically, or missing). Tried by name: ctypes.util's search forks `ldconfig`,
    and a fork shows in the benchmark's peak RSS of children."""
    for name in names:
        with contextlib.suppress(OSError):
            return ctypes.CDLL(name)
    return None


class _BzStream(ctypes.Structure):
    _fields_ = [
        ("next_in", ctypes.c_void_p),
        ("avail_in", ctypes.c_uint),
        ("total_in_lo32", ctypes.c_uint),
        ("total_in_hi32", ctypes.c_uint),
        ("next_out", ctypes.c_void_p),
        ("avail_out", ctypes.c_uint),
        ("total_out_lo32", ctypes.c_uint),
        ("total_out_hi32", ctypes.c_uint),
        ("state", ctypes.c_void_p),
        ("bzalloc", ctypes.c_void_p),
        ("bzfree", ctypes.c_void_p),
        ("opaque", ctypes.c_void_p),
    ]


@functools.cache
def _libbz2() -> ctypes.CDLL | None:
    """libbz2, the library of `bzcat` and of Python's bz2 module."""
    lib = _shared_library("libbz2.so.1.0", "libbz2.so.1", "libbz2.dylib")
    if lib is not None:
        for function in ("BZ2_bzDecompressInit", "BZ2_bzDecompress", "BZ2_bzDecompressEnd"):
            getattr(lib, function).argtypes = [ctypes.POINTER(_BzStream)] + (
                [ctypes.c_int, ctypes.c_int] if function.endswith("Init") else []
            )
    return lib


class _Libbz2Reader(_CtypesReader):
    """A bz2 file, all its streams; libbz2 checks each block's and stream's CRC."""

    _OK, _STREAM_END = 0, 4

    def __init__(self, source: BinaryIO):
        super().__init__(source, _libbz2(), _BzStream())

    def _start(self) -> None:
        self._check(self._lib.BZ2_bzDecompressInit(ctypes.byref(self._stream), 0, 0))

    def _step(self) -> bool:
        code = self._lib.BZ2_bzDecompress(ctypes.byref(self._stream))
        if code == self._STREAM_END:
            return True
        self._check(code)
        return False

    def _end(self) -> None:
        self._lib.BZ2_bzDecompressEnd(ctypes.byref(self._stream))

    def _check(self, code: int) -> None:
        if code != self._OK:  # bytes after the last stream give BZ_DATA_ERROR_MAGIC (-5)
            raise OSError(f"invalid bz2 data (libbz2 error {code})")


class _ZStream(ctypes.Structure):
    _fields_ = [
        ("next_in", ctypes.c_void_p),
        ("avail_in", ctypes.c_uint),
        ("total_in", ctypes.c_ulong),
        ("next_out", ctypes.c_void_p),
        ("avail_out", ctypes.c_uint),
        ("total_out", ctypes.c_ulong),
        ("msg", ctypes.c_char_p),
        ("state", ctypes.c_void_p),
        ("zalloc", ctypes.c_void_p),
        ("zfree", ctypes.c_void_p),
        ("opaque", ctypes.c_void_p),
        ("data_type", ctypes.c_int),
        ("adler", ctypes.c_ulong),
        ("reserved", ctypes.c_ulong),
    ]


@functools.cache
def _libz() -> ctypes.CDLL | None:
    """zlib, the library of Python's zlib and gzip modules."""
    lib = _shared_library("libz.so.1", "libz.dylib")
    if lib is not None:
        stream = ctypes.POINTER(_ZStream)
        lib.zlibVersion.restype = ctypes.c_char_p
        lib.inflateInit2_.argtypes = [stream, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
        lib.inflate.argtypes = [stream, ctypes.c_int]
        lib.inflateEnd.argtypes = [stream]
    return lib


class _ZlibReader(_CtypesReader):
    """A gzip file, all its members; zlib checks each member's CRC and length. Unlike the
    gzip module (and like rapidgzip), zero bytes after the last member are an error."""

    _OK, _STREAM_END, _BUF_ERROR = 0, 1, -5
    _GZIP_WBITS = 16 + 15

    def __init__(self, source: BinaryIO):
        super().__init__(source, _libz(), _ZStream())

    def _start(self) -> None:
        version, size = self._lib.zlibVersion(), ctypes.sizeof(_ZStream)
        stream = ctypes.byref(self._stream)
        self._check(self._lib.inflateInit2_(stream, self._GZIP_WBITS, version, size))

    def _step(self) -> bool:
        code = self._lib.inflate(ctypes.byref(self._stream), 0)
        if code == self._STREAM_END:
            return True
        self._check(code)
        return False

    def _end(self) -> None:
        self._lib.inflateEnd(ctypes.byref(self._stream))

    def _check(self, code: int) -> None:
        if code not in (self._OK, self._BUF_ERROR):  # BUF_ERROR: no progress, not fatal
            detail = (self._stream.msg or b"").decode(errors="replace")
            raise OSError(f"invalid gzip data (zlib error {code}: {detail})")


class _CheckedGzipReader(io.RawIOBase):
    """rapidgzip's parallel gzip reader, plus the check it lacks: a file cut inside its
    last deflate stream can end without an error (mxmlnkn/rapidgzip#71), so at the end the
    file must be seen to end with a complete member (`_ends_with_a_member`)."""

    def __init__(self, path: str | os.PathLike, threads: int):
        self._path = path
        # 1 MiB chunks instead of 4: the same speed, and a third of the memory (peak RSS
        # 830 -> 280 MB at 2 threads on a 5.4:1 file; the cache holds decompressed chunks).
        self._stream = rapidgzip.RapidgzipFile(
            str(path), parallelization=threads, chunk_size=1 << 20
        )
        self._size = 0
        self._checked = False

    def readable(self) -> bool:
        return True

    def readinto(self, target) -> int:
        size = self._stream.readinto(target)
        self._size += size
        if size == 0 and len(target) and not self._checked:
            if not _ends_with_a_member(self._path, self._size):
                raise EOFError("compressed file ended before the end-of-stream marker was reached")
            self._checked = True
        return size

    def close(self) -> None:
        if not self.closed:
            self._stream.close()
        super().close()


def _ends_with_a_member(path: str | os.PathLike, size: int) -> bool:
    """Whether a gzip file that decompressed to `size` bytes ends with a complete member.

    Its last 4 bytes are the last member's length mod 2^32: for a one-member file (the
    usual case) they match `size`, and for a truncated file they are compressed data (a
    false match: 1 in 2^32). Otherwise the last member is looked for backwards, from its
    magic bytes, and decompressed with zlib, which checks its CRC and length; the CRCs
    of the members before it were checked by rapidgzip.
    """
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        file_size = f.tell()
        f.seek(max(0, file_size - 4))
        if int.from_bytes(f.read(4), "little") == size % 2**32:
            return True
        window_end = file_size
        while window_end > 0:
            window_start = max(0, window_end - CHUNK_BYTES)
            f.seek(window_start)
            window = f.read(window_end - window_start + 2)  # a magic cut by the edge
            at = window.rfind(b"\x1f\x8b\x08")
            while at >= 0:
                member_is_complete = _gzip_member_to_end(f, window_start + at)
                if member_is_complete is not None:
                    return member_is_complete
                at = window.rfind(b"\x1f\x8b\x08", 0, at + 2)
            window_end = window_start
    return False


def _gzip_member_to_end(f: BinaryIO, offset: int) -> bool | None:
    """Whether a gzip member starting at `offset` is complete and ends the file; None
    when the bytes there are not a member (zlib rejects them)."""
    decompressor = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    f.seek(offset)
    try:
        while data := f.read(CHUNK_BYTES):
            while data and not decompressor.eof:  # output is dropped, CHUNK_BYTES at a time
                decompressor.decompress(data, CHUNK_BYTES)
                data = decompressor.unconsumed_tail
            if decompressor.eof:
                return not decompressor.unused_data and not f.read(1)
    except zlib.error:
        return None
    return False


def iter_line_blocks(
    path: str | os.PathLike,
    threads: int = 1,
    block_bytes: int | None = None,
    reading=None,
) -> Iterator[tuple]:
    """Yields (number of the block's first line, block of whole lines) through the file.

    The file (or pipe) is opened once, at the first block, then read and decompressed in a
    background thread, one block ahead, so that decompression (which releases the GIL)
    overlaps the caller's work on the previous block. A corrupt compressed stream raises
    BadInputError naming the file and the last line read; a file that does not end with a
    newline still yields its last line; a UTF-8 byte-order mark before the first line is
    dropped.

    With `reading` (a `namesake.dumps.restart.DumpReading`), the pass starts where it says
    and each item carries a third element: a restart point after the block, or None.
    """
    return _read_ahead(_line_blocks(path, None, threads, block_bytes or CHUNK_BYTES, reading))


def _line_blocks(
    path, source: OpenedInput | None, threads: int, block_bytes: int, reading
) -> Iterator[tuple]:
    """`iter_line_blocks`'s work, in the reading thread; `source`: the input already opened
    (`map_blocks` tells its compression first), or None: opened here."""
    line_no = 1 if reading is None else reading.first_line
    offset = 0 if reading is None else reading.offset
    if reading is not None:
        compression, stream = reading.compression, reading.open()
    else:
        source = source or open_input(path)
        compression, stream = source.compression, source.open(threads)
    with stream:
        rest = b""
        at_start = offset == 0
        while True:
            try:
                data = stream.read(block_bytes)
            except Exception as exc:  # rapidgzip raises several types for corrupt data
                message = f"corrupt or truncated {compression} stream after this line ({exc})"
                raise BadInputError(path, line_no, message) from exc
            if at_start:
                at_start = False
                if data.startswith(UTF8_BOM):  # restart points count it: they are offsets
                    data, offset = data[len(UTF8_BOM) :], offset + len(UTF8_BOM)
            if not data:
                break
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                rest += data
                continue
            block, rest = rest + data[:cut], data[cut:]
            next_line, offset = line_no + block.count(b"\n"), offset + len(block)
            if reading is None:
                yield line_no, block
            else:  # the restart point is taken here, in the reading thread
                yield line_no, block, reading.checkpoint(offset, next_line)
            line_no = next_line
        if rest:
            yield (line_no, rest) if reading is None else (line_no, rest, None)


def _read_ahead(items: Iterator, depth: int = 2) -> Iterator:
    """Runs the iterator `items` in a background thread, at most `depth` items ahead.

    The thread starts at the first next(), so a fork pool made before that has no
    thread to copy. Closing the returned generator early stops the thread.
    """
    handoff: queue.Queue = queue.Queue(depth)
    stop = threading.Event()

    def produce() -> None:
        try:
            for item in items:
                handoff.put((item, None))
                if stop.is_set():
                    break
            else:
                handoff.put((_DONE, None))
        except BaseException as exc:  # re-raised in the consumer
            handoff.put((None, exc))
        finally:
            items.close()

    thread = threading.Thread(target=produce, name="read-ahead", daemon=True)
    thread.start()
    try:
        while True:
            item, exc = handoff.get()
            if exc is not None:
                raise exc
            if item is _DONE:
                return
            yield item
    finally:
        stop.set()
        while thread.is_alive():  # unblock a producer waiting on a full queue
            with contextlib.suppress(queue.Empty):
                handoff.get(timeout=0.05)
        thread.join()


_DONE = object()


def map_blocks(
    path: str | os.PathLike,
    worker: Callable[[tuple[int, bytes]], object],
    workers: int = 1,
    initializer: Callable | None = None,
    initargs: tuple = (),
    desc: str = "",
    reading=None,
) -> Iterator:
    """Applies `worker` to every line block of `path`, in order, with `workers` cores.

    Decompression runs in background threads (`iter_line_blocks`, over `workers` threads
    where the format allows); `worker` runs in this process or, where parsing is the
    larger cost, in a fork pool (`_pool_size`). At most two blocks per pool process are
    in flight, so memory stays bounded however big the dump.

    With `reading` (see `iter_line_blocks`), yields (result, restart point or None).
    """
    # imported here, not with the module (tqdm ~50 ms, multiprocessing ~10 ms): this module
    # is part of every command's start-up, --help included
    from multiprocessing import get_context

    from tqdm.auto import tqdm

    source = open_input(path) if reading is None else None  # opened once, told first
    compression = reading.compression if source is None else source.compression
    processes = _pool_size(compression, workers)
    blocks = _read_ahead(_line_blocks(path, source, workers, CHUNK_BYTES, reading))
    progress = tqdm(
        desc=desc or f"Reading {Path(path).name}",
        unit="B",
        unit_scale=True,
        initial=0 if reading is None else reading.offset,
    )

    def result(value, extra: tuple):  # extra: block[2:], the restart point if reading
        return value if reading is None else (value, extra[0])

    with progress:
        if processes == 0:
            if initializer:
                initializer(*initargs)
            for block in blocks:
                progress.update(len(block[1]))
                yield result(worker(block[:2]), block[2:])
            return
        with get_context("fork").Pool(processes, initializer, initargs) as pool:
            pending: deque = deque()  # the block's text is not kept: the pool has it
            for block in blocks:
                pending.append((pool.apply_async(worker, (block[:2],)), block[2:]))
                progress.update(len(block[1]))
                if len(pending) >= 2 * processes:
                    value, extra = pending.popleft()
                    yield result(value.get(), extra)
            while pending:
                value, extra = pending.popleft()
                yield result(value.get(), extra)


# bz2 decompresses 5-8x slower than stage 1 parses (45-60 against 250-450 MB/s per core),
# so one parsing thread keeps up with several decompression threads: up to this many
# workers, blocks are parsed in this process, which saves the pool's copies of every
# block (at 2 workers, stage 1 took 10-20% less CPU).
_BZ2_THREADS_PER_PARSER = 4


def _pool_size(compression: str, workers: int) -> int:
    """Parsing processes for map_blocks; 0: parse in this process."""
    if workers <= 1:
        return 0
    if compression == "bz2":
        return 0 if workers <= _BZ2_THREADS_PER_PARSER else -(-workers // _BZ2_THREADS_PER_PARSER)
    return workers


def iter_text_lines(path: str | os.PathLike) -> Iterator[tuple[int, str]]:
    """(line number, text) of each non-blank line of a text input, read as every input is
    (`iter_line_blocks`: compressed or plain, a file or a pipe, a leading byte-order mark
    dropped, a folder or a missing file refused by name); a line that is not UTF-8 is a
    BadInputError naming it."""
    for first_line, block in iter_line_blocks(path):
        for number, raw in enumerate(block.splitlines(), first_line):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise BadInputError(path, number, f"not UTF-8: {exc.reason}") from None
            if line.strip():
                yield number, line


def read_text(path: str | os.PathLike) -> str:
    """The whole of a small text input (a JSON list, a TSV of questions), read once as every
    input is (`iter_line_blocks`: compressed or plain, a file or a pipe, a leading
    byte-order mark dropped, a folder or a missing file refused by name) and decoded as
    UTF-8; a byte that is not is a BadInputError naming its line."""
    return "".join(
        decode_block(path, first_line, block) for first_line, block in iter_line_blocks(path)
    )


def decode_block(path: str | os.PathLike, first_line: int, block: bytes, hint: str = "") -> str:
    """A block of lines (`iter_line_blocks`) as UTF-8 text; a byte that is not UTF-8 is a
    BadInputError naming the line it is on ("not UTF-8 text", and `hint`: what that says of
    the file)."""
    try:
        return block.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = first_line + block[: exc.start].count(b"\n")
        raise BadInputError(path, line, "not UTF-8 text" + (f": {hint}" if hint else "")) from None


def iter_json_lines(
    path: str | os.PathLike, decoder, blocks: Iterator[tuple] | None = None
) -> Iterator[tuple[int, object]]:
    """Yields (line number, decoded record) for each non-blank line of a JSON-lines file.

    `decoder` is a typed ``msgspec.json.Decoder``; a line it rejects raises BadInputError
    naming the file and line and saying what was wrong (`describe_json_error`; strict:
    these files are small enough to be fixed and re-run). `blocks`: the file's line blocks
    (`iter_line_blocks`) where the caller has begun reading them, as a pipe is read once.
    """
    import msgspec

    for first_line, block in iter_line_blocks(path) if blocks is None else blocks:
        for line_no, line in enumerate(block.splitlines(), first_line):
            if not line or line.isspace():  # blank (isspace does not copy the line)
                continue
            try:
                record = decoder.decode(line)
            except (msgspec.DecodeError, *JSON_LINE_ERRORS) as exc:
                kind, detail = describe_json_error(exc)
                message = f"{kind}: {detail}" if detail else kind
                raise BadInputError(path, line_no, message) from None
            yield line_no, record
