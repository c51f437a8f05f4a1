"""Staging: the exact folder an upload sends, written and checked before anything leaves.

Every `namesake publish` kind copies what it will upload into one folder (``--stage-only
DIR``, or a temporary folder), checks that copy, and uploads it and nothing else, so that
what was checked is what is uploaded. A copy leaves out what belongs to one machine only:
namesake's output markers (``.namesake-output.json``, ``.namesake-files.json``), caches
(``__pycache__``, ``.cache``), the ``.NAME.partial-*`` and ``.NAME.old-*`` folders that a
killed write leaves, and every other hidden file.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

from namesake.errors import NamesakeError
from namesake.outputs import atomic_directory

#: folders of caches, never data, whether or not their name is hidden
CACHE_FOLDERS = frozenset({"__pycache__", ".cache"})


def publishable(relative: str | os.PathLike) -> bool:
    """Whether the file at `relative` (a path inside a folder) goes into an upload: no part
    of its path is hidden (the markers, ``.cache``, ``.partial-*`` and ``.old-*`` folders all
    start with a dot) or a cache folder."""
    return not any(part.startswith(".") or part in CACHE_FOLDERS for part in Path(relative).parts)


def publishable_files(folder: str | os.PathLike) -> list[str]:
    """The files an upload of `folder` sends, relative to it (POSIX paths), sorted; hidden
    and cache folders are not walked into."""
    folder = Path(folder)
    if not folder.is_dir():
        raise NamesakeError(f"{folder}: not a folder")
    found = []
    for root, dirs, names in os.walk(folder, followlinks=True):
        dirs[:] = [d for d in dirs if publishable(d)]
        relative = Path(root).relative_to(folder)
        found += [(relative / name).as_posix() for name in names if publishable(name)]
    return sorted(found)


def copy_publishable(source: str | os.PathLike, staging: Path) -> list[str]:
    """Copies the publishable files of `source` into `staging`, each at its own relative
    path, and returns them."""
    files = publishable_files(source)
    for name in files:
        target = staging / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(Path(source) / name, target)
    return files


def stage_folder(
    out: str | os.PathLike, writer: str, fill: Callable[[Path], None], check: Callable[[Path], None]
) -> Path:
    """Writes the staged folder `out`: `fill` writes its files into a fresh folder, `check`
    validates them there, and only a folder that passed appears at `out` (atomically, under
    `namesake.outputs`' rules: a folder that holds what namesake did not write is refused).
    `writer` (``"publish dataset amber"``) is recorded in its marker, which uploads leave
    out. Returns `out`, resolved."""
    with atomic_directory(out, writer=writer) as staging:
        fill(staging)
        check(staging)
    return Path(out).resolve()


@contextlib.contextmanager
def staging_target(stage_only: str | os.PathLike | None) -> Iterator[Path]:
    """The folder to stage into: ``--stage-only``'s, kept, or one in a temporary folder that
    is removed after the block (after the upload)."""
    if stage_only is not None:
        yield Path(stage_only)
        return
    import tempfile

    with tempfile.TemporaryDirectory(prefix="namesake-publish-") as temporary:
        yield Path(temporary) / "staged"
