"""What every saved retriever index folder holds besides its own files: ``retriever.json``
(kind, format version, settings) and ``document_ids.arrow`` (document ids in index order)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

import pyarrow as pa
import pyarrow.feather as feather

from namesake.io import BadInputError

FORMAT_VERSION = 1
SETTINGS_FILE = "retriever.json"
IDS_FILE = "document_ids.arrow"


def write_index_files(folder: Path, kind: str, settings: dict, document_ids: Iterable[str]) -> None:
    """Writes the settings (with kind and format version) and the document ids."""
    record = {"kind": kind, "format_version": FORMAT_VERSION, **settings}
    (folder / SETTINGS_FILE).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    table = pa.table({"wikipedia_id": pa.array(list(document_ids), type=pa.large_string())})
    feather.write_feather(table, str(folder / IDS_FILE), compression="uncompressed")


def read_index_files(folder: str | os.PathLike, kind: str) -> tuple[dict, list[str]]:
    """The settings and document ids of a ``kind`` index; a wrong folder is a clear error."""
    folder = Path(folder)
    try:
        settings = json.loads((folder / SETTINGS_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadInputError(folder, None, f"not a retriever index (no {SETTINGS_FILE})") from None
    if settings.get("kind") != kind:
        raise BadInputError(folder, None, f"a {settings.get('kind')!r} index, not {kind!r}")
    if settings.get("format_version") != FORMAT_VERSION:
        raise BadInputError(folder, None, f"unknown index format {settings.get('format_version')}")
    ids = feather.read_table(str(folder / IDS_FILE), columns=["wikipedia_id"]).column(0)
    return settings, ids.to_pylist()
