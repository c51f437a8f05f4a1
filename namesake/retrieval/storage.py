"""What every saved retriever index folder holds besides its own files: ``retriever.json``
(kind, format version, settings, and the provenance of `namesake.retrieval.provenance`) and
``document_ids.arrow`` (document ids in index order).

A file of an index that cannot be read (truncated, overwritten, missing) is reported in one
line naming it and saying that the index must be rebuilt (:func:`reading`, :func:`damaged`);
so is a field of ``retriever.json`` of the wrong type, checked against its kind's schema
(`namesake.retrieval.index_schema`) when the index is opened (:func:`read_settings`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import msgspec
import numpy as np
import pyarrow as pa
import pyarrow.feather as feather

from namesake.errors import BadInputError, NamesakeError, describe_json_error
from namesake.outputs import Output, check_outputs
from namesake.retrieval.index_schema import SCHEMAS

FORMAT_VERSION = 1
SETTINGS_FILE = "retriever.json"
IDS_FILE = "document_ids.arrow"
REBUILD = "the index must be rebuilt (delete its folder and rerun the command that built it)"


def index_writer(kind: str) -> str:
    """The writer that a ``kind`` index folder's marker names (`namesake.outputs`), e.g.
    ``"bm25 index"``: a rebuild may replace what it wrote there, and nothing else."""
    return f"{kind} index"


def check_new_index(folder: str | os.PathLike, kind: str, option: str = "--index") -> None:
    """Refuses, before any work, a ``kind`` index to be built at `folder` where it could not
    be written (`namesake.outputs.check_outputs`, as every output is checked), instead of
    failing once it is built. A folder that exists is an index to load: an input, whatever
    the folder it is in."""
    folder = Path(folder)
    if not folder.exists():
        check_outputs([Output(folder, "folder", index_writer(kind), option)])


def damaged(file: str | os.PathLike, problem: str) -> BadInputError:
    """The error for an index file that cannot be used as it is."""
    return BadInputError(file, None, f"{problem}: the file is truncated or corrupt, so {REBUILD}")


def _first_line(error: BaseException) -> str:
    """The gist of a reader's error in one short line (faiss' are long and multi-line)."""
    lines = str(error).strip().splitlines()
    text = lines[0] if lines else type(error).__name__
    text = text.rsplit("Error: ", 1)[-1]
    return text if len(text) <= 160 else text[:157] + "..."


@contextmanager
def reading(file: str | os.PathLike) -> Iterator[None]:
    """Turns any failure to read index file `file` (with numpy, faiss, pyarrow, JSON...)
    into one :func:`damaged` line naming it; namesake's own errors pass unchanged."""
    try:
        yield
    except NamesakeError:
        raise
    except FileNotFoundError:
        raise BadInputError(file, None, f"missing, so {REBUILD}") from None
    except (OSError, ValueError, RuntimeError, EOFError, KeyError, TypeError, IndexError) as exc:
        raise damaged(file, f"unreadable ({_first_line(exc)})") from None
    except pa.ArrowException as exc:
        raise damaged(file, f"unreadable ({_first_line(exc)})") from None


def check_npy(file: str | os.PathLike) -> tuple[tuple[int, ...], np.dtype]:
    """The shape and dtype of the ``.npy`` file `file`, after checking that its header reads
    and that it is as long as the header says (a truncated copy is not); cheap, the data
    are not read."""
    file = Path(file)
    with reading(file), file.open("rb") as f:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(f)
        elif version == (2, 0):
            shape, _, dtype = np.lib.format.read_array_header_2_0(f)
        else:
            raise damaged(file, f"a .npy file of unknown version {version}")
        header = f.tell()
    if dtype.hasobject:
        raise damaged(file, "holds Python objects, not numbers")
    expected = header + int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    size = file.stat().st_size
    if size != expected:
        raise damaged(file, f"{size:,} bytes where its header says {expected:,}")
    return shape, dtype


def load_npy(file: str | os.PathLike, mmap: bool = False) -> np.ndarray:
    """A checked (:func:`check_npy`) index array, memory-mapped with `mmap`."""
    check_npy(file)
    with reading(file):
        return np.load(file, mmap_mode="r" if mmap else None, allow_pickle=False)


def write_index_files(
    folder: Path,
    kind: str,
    settings: dict,
    document_ids: Iterable[str],
    provenance: dict | None = None,
) -> None:
    """Writes the settings (with kind, format version and provenance) and the document ids."""
    record = {"kind": kind, "format_version": FORMAT_VERSION, **settings}
    if provenance is not None:
        record["provenance"] = provenance
    (folder / SETTINGS_FILE).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    table = pa.table({"wikipedia_id": pa.array(list(document_ids), type=pa.large_string())})
    feather.write_feather(table, str(folder / IDS_FILE), compression="uncompressed")


def read_settings(folder: str | os.PathLike, kind: str) -> dict:
    """The settings of a ``kind`` index (its provenance under ``"provenance"``, when it
    records one), checked against the kind's schema (`namesake.retrieval.index_schema`); a
    wrong folder, an unreadable file or a field of the wrong type is a clear error naming
    the file (and the field)."""
    folder = Path(folder)
    file = folder / SETTINGS_FILE
    if not file.is_file():
        raise BadInputError(folder, None, f"not a retriever index (no {SETTINGS_FILE})")
    with reading(file):
        settings = json.loads(file.read_text(encoding="utf-8"))
    if not isinstance(settings, dict):
        raise damaged(file, "not a JSON object")
    if settings.get("kind") != kind:
        raise BadInputError(folder, None, f"a {settings.get('kind')!r} index, not {kind!r}")
    if settings.get("format_version") != FORMAT_VERSION:
        raise BadInputError(folder, None, f"unknown index format {settings.get('format_version')}")
    try:
        msgspec.convert(settings, SCHEMAS[kind])
    except msgspec.ValidationError as error:
        problem, detail = describe_json_error(error)
        raise BadInputError(
            file,
            None,
            f"{problem}: {detail}, so {REBUILD}" if detail else f"{problem}, so {REBUILD}",
        ) from None
    return settings


def read_index_files(folder: str | os.PathLike, kind: str) -> tuple[dict, list[str]]:
    """The settings and document ids of a ``kind`` index; a wrong folder is a clear error."""
    folder = Path(folder)
    settings = read_settings(folder, kind)
    file = folder / IDS_FILE
    with reading(file):
        ids = feather.read_table(str(file), columns=["wikipedia_id"]).column(0).to_pylist()
    recorded = settings.get("num_documents")
    if recorded is not None and recorded != len(ids):
        raise damaged(file, f"{len(ids):,} ids where {SETTINGS_FILE} records {recorded:,}")
    return settings, ids
