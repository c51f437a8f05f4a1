"""Inputs given as a shell gives them without a file: a FIFO (``mkfifo``, and what bash's
``<(zcat run.gz)`` is) and ``/dev/stdin`` on a pipe, each written by another process (`cat`)
while the reader under test reads. Neither can be read twice or sought in.

The writer is a process, as in a shell, not a thread: a fork pool made by the reader would
copy a thread's end of the pipe, and the pipe would never end."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

#: ways to give bytes to a reader that wants a path: a FIFO, and /dev/stdin on a pipe
PIPES = ("fifo", "stdin")


def _source(data: bytes, folder: Path) -> Path:
    source = folder / "piped-data"
    source.write_bytes(data)
    return source


@contextlib.contextmanager
def _writing(writer: subprocess.Popen) -> Iterator[None]:
    """Runs the block while `writer` writes; a writer still waiting for a reader (the
    reader refused the input unopened) or for room in the pipe is stopped after it."""
    try:
        yield
    finally:
        writer.kill()
        writer.wait()


@contextlib.contextmanager
def fifo_of(data: bytes, folder: Path, name: str = "fifo") -> Iterator[Path]:
    """A FIFO in `folder` that gives `data` to the first reader that opens it."""
    path = folder / name
    os.mkfifo(path)
    source = _source(data, folder)
    writer = subprocess.Popen(["sh", "-c", 'exec cat "$0" > "$1"', source, path])
    with _writing(writer):
        yield path
    path.unlink()
    source.unlink()


@contextlib.contextmanager
def stdin_of(data: bytes, folder: Path) -> Iterator[Path]:
    """``/dev/stdin`` reading a pipe that gives `data`, for as long as the block runs."""
    source = _source(data, folder)
    read_end, write_end = os.pipe()
    writer = subprocess.Popen(["cat", source], stdout=write_end)
    os.close(write_end)
    saved = os.dup(0)
    os.dup2(read_end, 0)
    os.close(read_end)
    try:
        with _writing(writer):
            yield Path("/dev/stdin")
    finally:
        os.dup2(saved, 0)
        os.close(saved)
    source.unlink()


@contextlib.contextmanager
def piped(data: bytes, how: str, folder: Path) -> Iterator[Path]:
    """`data` behind a path of kind `how` (one of `PIPES`)."""
    with fifo_of(data, folder) if how == "fifo" else stdin_of(data, folder) as path:
        yield path
