"""Reading dumps (bz2/gzip/plain, streamed) and writing outputs atomically.

Dumps are read as bytes in large blocks of whole lines so that the expensive work
(JSON parsing) can be handed to worker processes while decompression runs in
rapidgzip's own threads.
"""

from __future__ import annotations

import contextlib
import gzip
import os
import shutil
import tempfile
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from multiprocessing import get_context
from pathlib import Path
from typing import BinaryIO

import rapidgzip
from tqdm.auto import tqdm

BZ2_MAGIC = b"BZh"
GZIP_MAGIC = b"\x1f\x8b"
CHUNK_BYTES = 8 << 20


class NamesakeError(Exception):
    """An error the command line reports in one line, without a traceback."""


class BadInputError(NamesakeError, ValueError):
    """An input file is malformed; names the file and, where known, the line."""

    def __init__(self, path: str | os.PathLike, line: int | None, message: str):
        self.path, self.line, self.message = str(path), line, message
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")

    def __reduce__(self):  # keep the three fields when raised inside a worker process
        return (type(self), (self.path, self.line, self.message))


class InputProblems:
    """Tallies bad input lines: raises on the first one in strict mode, else counts them."""

    MAX_EXAMPLES = 3

    def __init__(self, strict: bool = False):
        self.strict = strict
        self.counts: Counter[tuple[str, str]] = Counter()
        self.examples: dict[tuple[str, str], list[int | None]] = {}

    def report(self, path: str | os.PathLike, line: int | None, kind: str, detail: str = ""):
        if self.strict:
            raise BadInputError(path, line, f"{kind}{': ' + detail if detail else ''}")
        key = (str(path), kind)
        self.counts[key] += 1
        examples = self.examples.setdefault(key, [])
        if len(examples) < self.MAX_EXAMPLES:
            examples.append(line)

    def merge(self, path: str | os.PathLike, problems: Iterable[tuple[int, str, str]]):
        for line, kind, detail in problems:
            self.report(path, line, kind, detail)

    def total(self) -> int:
        return sum(self.counts.values())

    def summary(self) -> list[str]:
        return [
            f"{path}: skipped {count} line(s) with {kind} "
            f"(e.g. line {', '.join(str(n) for n in self.examples[(path, kind)])})"
            for (path, kind), count in sorted(self.counts.items())
        ]


def detect_compression(path: str | os.PathLike) -> str:
    """'bz2', 'gzip' or 'plain', from the file's magic bytes (not its name)."""
    try:
        with open(path, "rb") as f:
            magic = f.read(3)
    except FileNotFoundError:
        raise BadInputError(path, None, "no such file") from None
    if magic.startswith(BZ2_MAGIC):
        return "bz2"
    if magic.startswith(GZIP_MAGIC):
        return "gzip"
    return "plain"


def open_dump(path: str | os.PathLike, threads: int = 1) -> BinaryIO:
    """Opens a bz2, gzip or plain file for binary reading.

    bz2 (the slow one) is decompressed by rapidgzip's bzip2 reader over `threads` threads
    (its generic ``rapidgzip.open`` buffers ~0.5 GB); gzip uses zlib, which is fast enough
    alone and, unlike rapidgzip, reports a truncated stream.
    """
    compression = detect_compression(path)
    if compression == "bz2":
        return rapidgzip.IndexedBzip2File(str(path), parallelization=max(1, threads))
    if compression == "gzip":
        return gzip.open(path, "rb")
    return open(path, "rb")


def iter_line_blocks(
    path: str | os.PathLike, threads: int = 1, block_bytes: int = CHUNK_BYTES
) -> Iterator[tuple[int, bytes]]:
    """Yields (number of the block's first line, block of whole lines) through the file.

    A corrupt compressed stream raises BadInputError naming the file and the last line
    read; a file that does not end with a newline still yields its last line.
    """
    line_no = 1
    compression = detect_compression(path)
    with open_dump(path, threads) as stream:
        rest = b""
        while True:
            try:
                data = stream.read(block_bytes)
            except Exception as exc:  # rapidgzip raises several types for corrupt data
                message = f"corrupt or truncated {compression} stream after this line ({exc})"
                raise BadInputError(path, line_no, message) from exc
            if not data:
                break
            data = rest + data
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                rest = data
                continue
            block, rest = data[:cut], data[cut:]
            yield line_no, block
            line_no += block.count(b"\n")
        if rest:
            yield line_no, rest


def map_blocks(
    path: str | os.PathLike,
    worker: Callable[[tuple[int, bytes]], object],
    workers: int = 1,
    initializer: Callable | None = None,
    initargs: tuple = (),
    desc: str = "",
) -> Iterator[object]:
    """Applies `worker` to every line block of `path`, in order, over `workers` processes.

    At most two blocks per worker are in flight, so memory stays bounded however big the
    dump. With one worker everything runs in this process.
    """
    blocks = iter_line_blocks(path, threads=workers)
    progress = tqdm(desc=desc or f"Reading {Path(path).name}", unit="B", unit_scale=True)
    with progress:
        if workers <= 1:
            if initializer:
                initializer(*initargs)
            for block in blocks:
                progress.update(len(block[1]))
                yield worker(block)
            return
        with get_context("fork").Pool(workers, initializer, initargs) as pool:
            pending: deque = deque()
            for block in blocks:
                pending.append(pool.apply_async(worker, (block,)))
                progress.update(len(block[1]))
                if len(pending) >= 2 * workers:
                    yield pending.popleft().get()
            while pending:
                yield pending.popleft().get()


@contextlib.contextmanager
def atomic_directory(target: str | os.PathLike) -> Iterator[Path]:
    """Yields a fresh temporary directory that replaces `target` only if the block succeeds.

    An interrupted or failed build leaves `target` as it was (absent, or the previous
    complete output); re-running is always safe.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.partial-", dir=target.parent))
    try:
        yield staging
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    _publish_permissions(staging)
    previous = None
    if target.exists():
        previous = target.with_name(f".{target.name}.old-{os.getpid()}")
        target.rename(previous)
    staging.rename(target)
    if previous is not None:
        shutil.rmtree(previous, ignore_errors=True)


def _publish_permissions(path: Path) -> None:
    """mkdtemp/mkstemp make private entries; give them what a plain write would (umask)."""
    umask = os.umask(0)
    os.umask(umask)
    if path.is_dir():
        path.chmod(0o777 & ~umask)
        for child in path.iterdir():
            if child.is_file():
                child.chmod(0o666 & ~umask)
    else:
        path.chmod(0o666 & ~umask)


@contextlib.contextmanager
def atomic_file(target: str | os.PathLike, mode: str = "wb") -> Iterator:
    """Yields a file open for writing that replaces `target` only if the block succeeds."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, staging = tempfile.mkstemp(prefix=f".{target.name}.partial-", dir=target.parent)
    try:
        with os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as f:
            yield f
        _publish_permissions(Path(staging))
        os.replace(staging, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(staging)
        raise


def iter_json_lines(path: str | os.PathLike, decoder) -> Iterator[tuple[int, object]]:
    """Yields (line number, decoded record) for each non-blank line of a JSON-lines file.

    `decoder` is a typed ``msgspec.json.Decoder``; a line it rejects raises BadInputError
    naming the file and line (strict: these files are small enough to be fixed and re-run).
    """
    import msgspec

    for first_line, block in iter_line_blocks(path):
        for line_no, line in enumerate(block.splitlines(), first_line):
            if not line.strip():
                continue
            try:
                yield line_no, decoder.decode(line)
            except msgspec.ValidationError as exc:
                raise BadInputError(path, line_no, f"missing or malformed field: {exc}") from None
            except msgspec.DecodeError as exc:
                raise BadInputError(path, line_no, f"invalid JSON: {exc}") from None


class StageTimer:
    """Writes the wall-clock seconds of each stage of a build into `seconds`, in order."""

    def __init__(self, seconds: dict[str, float]):
        self.seconds = seconds
        self._last = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.seconds[stage] = now - self._last
        self._last = now
