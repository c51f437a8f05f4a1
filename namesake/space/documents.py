"""The corpus pages the Space shows: title and text by id, from one Arrow file.

Built once from a KILT knowledge source (streamed in batches) into an uncompressed Arrow IPC
file, then memory-mapped: a lookup scans the id column for the few ids asked for, so no
per-page Python state is kept, whatever the corpus size.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from itertools import islice
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
from tqdm.auto import tqdm

from namesake.errors import BadInputError
from namesake.outputs import atomic_file
from namesake.retrieval.corpus import Document, read_kilt_documents

SCHEMA = pa.schema(
    [
        ("wikipedia_id", pa.large_string()),
        ("title", pa.large_string()),
        ("text", pa.large_string()),
    ]
)
BATCH_PAGES = 10_000


def write_documents(documents: Iterable[Document], path: str | os.PathLike) -> int:
    """Writes `documents` to the Arrow file `path` (atomically); returns the page count."""
    pages = 0
    documents = iter(tqdm(documents, desc="Storing pages", unit="page"))
    with atomic_file(path, "wb") as f, pa.ipc.new_file(f, SCHEMA) as writer:
        while batch := list(islice(documents, BATCH_PAGES)):
            columns = [
                [d.wikipedia_id for d in batch],
                [d.title for d in batch],
                [d.text for d in batch],
            ]
            writer.write_batch(pa.record_batch(columns, schema=SCHEMA))
            pages += len(batch)
    return pages


class DocumentStore:
    """Pages by id from a file :func:`write_documents` wrote (memory-mapped)."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        try:
            self.table = pa.ipc.open_file(pa.memory_map(str(self.path))).read_all()
        except (OSError, pa.ArrowInvalid) as error:
            raise BadInputError(self.path, None, f"not a page store: {error}") from None
        if not self.table.schema.equals(SCHEMA):
            raise BadInputError(self.path, None, f"unexpected columns {self.table.schema.names}")

    @classmethod
    def open_or_build(cls, path: str | os.PathLike, corpus: str | os.PathLike | None):
        """Opens `path`, first building it from the KILT `corpus` if it does not exist."""
        if not Path(path).exists():
            if corpus is None:
                raise FileNotFoundError(f"{path}: no page store, and no corpus to build one from")
            write_documents(read_kilt_documents(corpus), path)
        return cls(path)

    def __len__(self) -> int:
        return self.table.num_rows

    def get(self, wikipedia_ids: list[str]) -> dict[str, Document]:
        """The pages among `wikipedia_ids` that the store has, by id."""
        if not wikipedia_ids:
            return {}
        wanted = pa.array(wikipedia_ids, type=pa.large_string())
        found = self.table.filter(pc.is_in(self.table["wikipedia_id"], value_set=wanted))
        return {
            row["wikipedia_id"]: Document(row["wikipedia_id"], row["title"], row["text"])
            for row in found.to_pylist()
        }

    def titles(self, limit: int) -> list[tuple[str, str]]:
        """(title, id) of the first `limit` pages, in corpus order."""
        head = self.table.slice(0, limit)
        return list(zip(head["title"].to_pylist(), head["wikipedia_id"].to_pylist(), strict=True))
