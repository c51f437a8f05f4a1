"""Folders of finished work that a rerun picks up: `namesake encode`'s chunks, `wes build`'s
mined dump ranges, `amber build`'s stage-1 chunks. Each holds a manifest of the settings
and inputs its work depends on; a rerun with other ones is refused by name rather than
mixing two runs, and what a killed run left half-written (``.NAME.partial-*``, see
`namesake.outputs.atomic_directory`) is removed."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from namesake.dumps.reading import require_regular_file
from namesake.errors import BadInputError
from namesake.outputs import atomic_file


def input_identity(path: Path) -> dict:
    """What says a dump file is the same one: its name, size and the SHA-256 of its first
    MiB (cheap on a 20 GB file, and a different dump or a truncated copy differs). A pipe
    is refused, before anything of it is read: it cannot be read here and again by the work."""
    require_regular_file(
        path, "it is known by its content before it is read, and a pipe reads once"
    )
    with path.open("rb") as f:
        head = hashlib.sha256(f.read(1 << 20)).hexdigest()
    return {"name": path.name, "bytes": path.stat().st_size, "first_mib_sha256": head}


def read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadInputError(path, None, "missing") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BadInputError(path, None, f"not valid JSON ({exc})") from None


def write_json(path: Path, record: dict) -> None:
    with atomic_file(path, "w") as f:
        f.write(json.dumps(record, indent=2) + "\n")


def prepare_work_folder(
    folder: str | os.PathLike,
    manifest_name: str,
    record: dict,
    keys: Iterable[str],
    holds: str,
    option: str,
) -> None:
    """Starts or resumes work in `folder` (call it in one process only).

    A new folder gets the manifest (`record`). An existing one must agree with `record` on
    every key of `keys`, else a clear error says which differ (`holds`: what the folder
    holds, `option`: the option naming it); leftovers of a killed run are removed."""
    folder = Path(folder)
    manifest = folder / manifest_name
    if manifest.exists():
        existing = read_json(manifest)
        different = [
            f"{key}: {existing.get(key)!r} there, {record[key]!r} now"
            for key in keys
            if existing.get(key) != record[key]
        ]
        if different:
            raise BadInputError(
                manifest,
                None,
                f"this folder holds {holds} with other settings ("
                + "; ".join(different)
                + f"); use another {option} folder or delete this one",
            )
    else:
        folder.mkdir(parents=True, exist_ok=True)
        write_json(manifest, record)
    for leftover in folder.glob(".*.partial-*"):
        if leftover.is_dir():
            shutil.rmtree(leftover, ignore_errors=True)
        else:
            leftover.unlink(missing_ok=True)
