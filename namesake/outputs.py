"""Writing outputs without ever destroying what a user put there: every file and folder
namesake writes goes through this module.

- A folder output appears whole or not at all (`atomic_directory`): it is written in a
  hidden sibling (``.NAME.partial-*``) and renamed into place.
- Each output folder carries a marker, ``.namesake-output.json``: which command wrote it,
  the namesake version and the files it wrote. A rerun of the same command may replace
  those files; a folder that holds anything else (a user's folder, another command's
  output) is refused unless the user asked for it (``--overwrite``, `overwriting`).
- Nothing namesake did not write is deleted, with or without ``--overwrite``: files that
  are not in the marker (a user's note, a work folder) move into the new output, and one
  that the new output would write over is refused, naming it.
- A file output (``--out run.trec``) replaces only a file namesake wrote: its folder's
  ``.namesake-files.json`` lists the files namesake wrote there, with their size and time;
  a user's file of that name is refused unless the user asked for it (``--overwrite``).
- `check_outputs` runs before any work: an output that is an input, lies inside an input
  folder or holds an input, an output that is a file where a folder is asked for (or the
  other way), a parent that cannot be written, too little free space for what is known to
  be written. An hour of work is never lost to a check that could have come first.
- A full disk while writing is one clear error naming the output; the previous output is
  left as it was, and a later run removes what a killed run left half-written.
"""

from __future__ import annotations

import argparse
import contextlib
import contextvars
import errno
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from namesake import __version__
from namesake.errors import NamesakeError

MARKER = ".namesake-output.json"
#: the folder of namesake's caches (`cache_root`), if not $XDG_CACHE_HOME/namesake
CACHE_VARIABLE = "NAMESAKE_CACHE"
#: beside file outputs (``--out run.trec``): the files namesake wrote in that folder, each
#: with its size and modification time, so that a rerun replaces its own file and never a
#: user's file of the same name
FILES_RECORD = ".namesake-files.json"
_FULL_DISK = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}

_overwrite = contextvars.ContextVar("namesake_overwrite", default=False)


class OutputRefused(NamesakeError):
    """An output path namesake will not write to; says why and what to do instead."""


def cache_root() -> Path:
    """Where namesake keeps what it builds for itself and reuses (the Space's indexes for a
    folder a user made, WordNet assembled for METEOR): ``$NAMESAKE_CACHE``, else
    ``$XDG_CACHE_HOME/namesake``, else ``~/.cache/namesake``. Never a user's output folder."""
    root = os.environ.get(CACHE_VARIABLE)
    if root:
        return Path(root)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache", "namesake")


@contextlib.contextmanager
def overwriting(allowed: bool = True) -> Iterator[None]:
    """Within this block, output folders that namesake did not write, or that another
    command wrote, may be written into (``--overwrite``). Their files that namesake did not
    write are kept all the same."""
    token = _overwrite.set(allowed)
    try:
        yield
    finally:
        _overwrite.reset(token)


@dataclass(frozen=True)
class Output:
    """One output a command is about to write, under its option's name: a ``folder``
    written whole, a ``filling`` folder written file by file (both marked as `writer`'s), a
    resumable ``work`` folder that keeps its own manifest, or a ``file``."""

    path: Path
    kind: str
    writer: str | None = None
    option: str = "--out"


@dataclass(frozen=True)
class Input:
    """A file or folder a command reads, under its option's name (a positional's metavar)."""

    path: Path
    option: str = "input"


def add_input(parser: argparse.ArgumentParser, *flags: str, **kwargs) -> argparse.Action:
    """Adds an argument naming a file or folder the command reads (a path, or a Hub id that
    is read when no such path exists): the outputs are checked against it before the work
    (`check_outputs`, with `declared_inputs`), so that none lies inside it or replaces it.
    Only arguments declared here are inputs, so that a value such as ``--config human_qa``
    never counts as one because a folder of that name exists.
    `parser` may be a parser or one of its argument groups."""
    action = parser.add_argument(*flags, **kwargs)
    option = max(action.option_strings, key=len, default=action.metavar or action.dest)
    declared = parser.get_default("inputs") or ()
    parser.set_defaults(inputs=(*declared, (action.dest, option)))
    return action


def declared_inputs(args: argparse.Namespace) -> list[Input]:
    """The paths the command's `add_input` arguments name, each under its option."""
    return [
        Input(Path(value), option)
        for dest, option in getattr(args, "inputs", ())
        for value in _values(getattr(args, dest, None))
    ]


def _values(given) -> list[str]:
    """The paths an input argument holds: its value, each of a list, and of a ``LABEL=SPEC``
    pair (``amber compare --dense-run``) the SPEC."""
    values = given if isinstance(given, list) else [given]
    values = [value[-1] if isinstance(value, tuple) else value for value in values]
    return [str(value) for value in values if isinstance(value, (str, os.PathLike)) and value]


def check_outputs(
    outputs: Iterable[Output],
    inputs: Iterable[Input | str | os.PathLike] = (),
    expected_bytes: int = 0,
) -> None:
    """Refuses, before any work, outputs that could not be written or would destroy an
    input; creates their missing parent folders (as ``git clone`` does).

    `inputs`: every path the command reads (those that do not exist are ignored): an
    output may neither be one, nor lie inside an input folder, nor hold one;
    `expected_bytes`: what the command is known to write, checked against free space."""
    inputs = [
        given if isinstance(given, Input) else Input(Path(given))
        for given in inputs
        if given is not None
    ]
    inputs = [given for given in inputs if given.path.exists()]
    outputs = list(outputs)
    for output in outputs:
        target = output.path.resolve()
        for other in outputs:
            inner = other.path.resolve()
            if other is not output and output.kind != "file" and target in (inner, *inner.parents):
                raise OutputRefused(
                    f"{other.option} {other.path} is inside {output.option} {output.path}: "
                    "writing the one could replace or hide the other; keep them apart"
                )
        for given in inputs:
            refusal = _input_refusal(output, target, given)
            if refusal:
                raise OutputRefused(refusal)
        if output.kind in ("folder", "filling"):
            refusal = _folder_refusal(target, output.writer, output.option)
        elif output.kind == "work" and target.exists() and not target.is_dir():
            refusal = f"{target}: is a file; {output.option} names a folder"
        elif output.kind == "file":
            refusal = _file_refusal(target, output.option)
        else:
            refusal = None
        if refusal:
            raise OutputRefused(refusal)
        _check_parent(target, output.option, expected_bytes)


def _input_refusal(output: Output, target: Path, given: Input) -> str | None:
    """Why writing `output` (resolved: `target`) would destroy the input `given`, or None."""
    read = given.path.resolve()
    named = f"{output.option} {output.path}"
    if read == target:
        return (
            f"{named} is the input {given.option} {given.path}: writing it would replace "
            f"what the command reads; choose another {output.option}"
        )
    if read in target.parents:
        return (
            f"{named} is inside the input {given.option} {given.path}: writing there would "
            f"change the folder the command reads; choose an {output.option} outside it"
        )
    if target in read.parents:
        return (
            f"{named} would hold the input {given.option} {given.path}: writing there could "
            f"replace or hide it; choose an {output.option} outside the inputs"
        )
    return None


def _file_refusal(target: Path, option: str) -> str | None:
    """Why namesake may not write the file output `target`, or None: a folder is there, or a
    file it did not write (unless ``--overwrite``)."""
    if target.is_dir():
        return f"{target}: is a folder; {option} names a file to write"
    if not target.exists() or _overwrite.get() or written_file(target):
        return None
    return (
        f"{target}: exists and was not written by namesake; choose another {option}, or pass "
        "--overwrite to replace it"
    )


def _folder_refusal(target: Path, writer: str, option: str = "--out") -> str | None:
    """Why namesake may not write the folder output `target` as `writer`, or None."""
    if not target.exists() and not target.is_symlink():
        return None
    if not target.is_dir():
        return (
            f"{target}: is a file, not a folder; {option} names the folder to write "
            "(the file is left as it is)"
        )
    marker = read_marker(target)
    if (marker or {}).get("writer") == writer or _overwrite.get():
        return None
    if marker is not None:
        return (
            f"{target}: holds the output of `namesake {marker.get('writer')}`, not of "
            f"`namesake {writer}`; choose another {option}, or pass --overwrite to replace "
            "the files namesake wrote there (other files are kept)"
        )
    if any(target.iterdir()):
        return (
            f"{target}: exists, is not empty and was not written by namesake; choose "
            f"another {option}, or pass --overwrite to write into it (its files are kept)"
        )
    return None


def _check_parent(target: Path, option: str, expected_bytes: int) -> None:
    """Creates `target`'s missing parents and makes sure one can write and has room there."""
    parent = target.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(prefix=f".{target.name}.probe-", dir=parent):
            pass  # a real write: permissions, read-only mounts and immutable folders alike
    except OSError as exc:
        raise OutputRefused(
            f"{option} {target}: cannot write in {parent} ({exc.strerror or exc}); nothing was done"
        ) from None
    free = shutil.disk_usage(parent).free
    if expected_bytes > free:
        raise OutputRefused(
            f"{option} {target}: about {_size(expected_bytes)} will be written, but only "
            f"{_size(free)} is free on its disk; nothing was done"
        )


def _size(count: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if count < 1024 or unit == "GiB":
            return f"{count:,.0f} {unit}" if unit == "bytes" else f"{count:,.1f} {unit}"
        count /= 1024
    raise AssertionError("unreachable")


def read_marker(folder: Path) -> dict | None:
    """The marker of a folder namesake wrote, or None (no marker, or an unreadable one:
    then the folder counts as not namesake's)."""
    return _read_record(folder / MARKER)


def _read_record(file: Path) -> dict | None:
    """A JSON object namesake keeps beside its outputs (a marker, `FILES_RECORD`), or None
    where it is missing or unreadable: then nothing counts as namesake's."""
    try:
        record = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def _write_record(file: Path, record: dict) -> None:
    with atomic_file(file, "w") as f:
        f.write(json.dumps(record, indent=2) + "\n")


def written_file(path: Path) -> bool:
    """Whether namesake wrote the file `path` as it is now: its folder's `FILES_RECORD`
    lists it with its present size and modification time (a file a user edited, or put in
    its place, is not namesake's any more)."""
    entry = _files_record(path.parent).get(path.name)
    try:
        found = path.stat()
    except OSError:
        return False
    return isinstance(entry, dict) and [entry.get("size"), entry.get("mtime_ns")] == [
        found.st_size,
        found.st_mtime_ns,
    ]


def record_written_file(path: Path, writer: str) -> None:
    """Adds the file output `path`, as it is now, to its folder's `FILES_RECORD`, so that a
    rerun may replace it (`written_file`); entries of files that are gone are dropped."""
    folder = path.parent
    record = {
        name: entry
        for name, entry in _files_record(folder).items()
        if name != path.name and (folder / name).is_file()
    }
    found = path.stat()
    record[path.name] = {
        "writer": writer,
        "namesake_version": __version__,
        "size": found.st_size,
        "mtime_ns": found.st_mtime_ns,
    }
    _write_record(folder / FILES_RECORD, {"files": dict(sorted(record.items()))})


def _files_record(folder: Path) -> dict:
    files = (_read_record(folder / FILES_RECORD) or {}).get("files")
    return files if isinstance(files, dict) else {}


def _write_marker(folder: Path, writer: str, files: Iterable[str]) -> None:
    record = {"writer": writer, "namesake_version": __version__, "files": sorted(files)}
    _write_record(folder / MARKER, record)


def _files(folder: Path) -> set[str]:
    """Every file (and link) under `folder`, relative to it, the marker left out."""
    found = set()
    for root, dirs, names in os.walk(folder):
        for name in names + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
            found.add(os.path.relpath(os.path.join(root, name), folder))
    found.discard(MARKER)
    return found


def _not_written(folder: Path) -> set[str]:
    """The files under `folder` that its marker does not list: what a user put there."""
    marker = read_marker(folder) or {}
    return _files(folder) - set(marker.get("files", []))


@contextlib.contextmanager
def atomic_directory(target: str | os.PathLike, *, writer: str) -> Iterator[Path]:
    """Yields a fresh staging folder that becomes `target` only if the block succeeds.

    `writer`: the command writing it (``"amber build"``), recorded in the marker; a folder
    that another writer or the user made is refused (see `_folder_refusal`). Files under
    `target` that namesake did not write move into the new folder; what a killed run left
    (``.NAME.partial-*``, ``.NAME.old-*``) is cleared after the next success.
    """
    target = Path(target).resolve()
    refusal = _folder_refusal(target, writer)
    if refusal:
        raise OutputRefused(refusal)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.partial-", dir=target.parent))
    try:
        with _disk_full_is_an_error(target):
            yield staging
            _write_marker(staging, writer, _files(staging))
            _publish_permissions(staging)
            _publish(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    for leftover in target.parent.glob(f".{target.name}.partial-*"):
        shutil.rmtree(leftover, ignore_errors=True)


def _publish(staging: Path, target: Path) -> None:
    """Swaps `staging` in for `target`, keeping every file of `target` (and of the
    ``.old-*`` folders a killed swap left) that namesake did not write."""
    old = target.with_name(f".{target.name}.old-{os.getpid()}")
    earlier = [path for path in target.parent.glob(f".{target.name}.old-*") if path != old]
    kept = {root: _not_written(root) for root in [target, *earlier] if root.is_dir()}
    written = _files(staging)
    clashes = sorted({name for names in kept.values() for name in names} & written)
    if clashes:
        raise OutputRefused(
            f"{target}: would write over {', '.join(clashes[:5])}, which namesake did not "
            "write; move them away or choose another --out (nothing was replaced)"
        )
    if target.is_dir():
        target.rename(old)
        kept[old] = kept.pop(target)
    staging.rename(target)
    for root, names in kept.items():
        stranded = []
        for name in sorted(names):
            destination = target / name
            if destination.exists() or destination.is_symlink():
                stranded.append(name)
                continue
            destination.parent.mkdir(parents=True, exist_ok=True)
            os.rename(root / name, destination)
        if stranded:  # the same user file in two leftovers: keep the folder, never delete
            raise NamesakeError(
                f"{root}: kept, since it still holds {', '.join(stranded[:5])}, which "
                f"namesake did not write and which {target} already has"
            )
        shutil.rmtree(root)  # only what namesake wrote is left in it


@contextlib.contextmanager
def claimed_folder(target: str | os.PathLike, *, writer: str) -> Iterator[Path]:
    """A folder that a command fills file by file (``amber compare --out``): refused like
    an atomic output, created, and marked on exit with every file it holds then except
    those that were there, unwritten by namesake, when the command started. A folder it
    created for a command that failed before writing anything is removed again."""
    target = Path(target).resolve()
    refusal = _folder_refusal(target, writer)
    if refusal:
        raise OutputRefused(refusal)
    created = not target.exists()
    target.mkdir(parents=True, exist_ok=True)
    foreign = _not_written(target)
    try:
        with _disk_full_is_an_error(target):
            yield target
    except BaseException:
        if created and not _files(target):
            shutil.rmtree(target, ignore_errors=True)
            raise
        _write_marker(target, writer, _files(target) - foreign)
        raise
    _write_marker(target, writer, _files(target) - foreign)


@contextlib.contextmanager
def _disk_full_is_an_error(target: Path) -> Iterator[None]:
    try:
        yield
    except OSError as exc:
        if exc.errno not in _FULL_DISK:
            raise
        raise NamesakeError(
            f"{target}: the disk filled up while writing it ({exc.strerror}); "
            "nothing was replaced, and the previous output, if any, is as it was"
        ) from exc


@contextlib.contextmanager
def atomic_file(target: str | os.PathLike, mode: str = "wb") -> Iterator:
    """Yields a file open for writing that replaces `target` only if the block succeeds."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, staging = tempfile.mkstemp(prefix=f".{target.name}.partial-", dir=target.parent)
    try:
        with _disk_full_is_an_error(target):
            with os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as f:
                yield f
            _publish_permissions(Path(staging))
            os.replace(staging, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(staging)
        raise


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
