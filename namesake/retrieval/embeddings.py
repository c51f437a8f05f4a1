"""The passage-embeddings folder that ``namesake encode`` writes and ``namesake index`` reads.

Layout::

    emb/
      encoding.json             settings (model, encoder type, similarity, passage words,
                                chunk size, ...); once every chunk is written, also the
                                totals (``num_passages``, ...)
      chunk-000000/             passages 0 .. C-1 of the corpus, in corpus order
        embeddings.npy          float16 [n, dimension], memory-mappable
        passages.arrow          per passage: ``document`` (the page's position in the corpus)
                                and ``wikipedia_id``
        chunk.json              the settings digest of the run that wrote it, and n
      chunk-000001/ ...

A chunk is a fixed range of passage numbers (``chunk_passages`` each, the last one
shorter), so the chunks do not depend on how many processes wrote them: a rerun with
another ``--num_processes`` finds the same chunks. Each chunk folder appears by an atomic
rename, so a folder that exists is complete; a killed run leaves at most hidden
``.chunk-*.partial-*`` folders, which the next run removes.

Every chunk carries the digest of the settings it was encoded with, so a chunk copied in
from a run with another model or passage setting is refused by name instead of being
indexed beside the others.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.feather as feather

from namesake.errors import BadInputError
from namesake.outputs import atomic_directory
from namesake.retrieval.provenance import describe_corpus, describe_model, same_corpus, same_model
from namesake.work_folder import prepare_work_folder, read_json, write_json

FORMAT_VERSION = 1
MANIFEST = "encoding.json"
EMBEDDINGS = "embeddings.npy"
PASSAGES = "passages.arrow"
CHUNK_RECORD = "chunk.json"
DTYPE = np.float16

#: the settings that decide what a chunk holds: a rerun must match them exactly
SETTING_KEYS = (
    "model",
    "dimension",
    "normalized",
    "passage_words",
    "title_separator",
    "prompt",
    "chunk_passages",
    "max_passages",
    "corpus_bytes",
)


def recorded_similarity(settings: dict) -> str:
    """The similarity ("cosine" or "dot") an encoding or index was built for; older ones
    record only whether the vectors are normalised."""
    return settings.get("similarity") or ("cosine" if settings["normalized"] else "dot")


def chunk_name(number: int) -> str:
    return f"chunk-{number:06d}"


def settings_digest(settings: dict) -> str:
    """A short digest of the settings that decide the embeddings (see SETTING_KEYS)."""
    record = json.dumps({key: settings[key] for key in SETTING_KEYS}, sort_keys=True)
    return hashlib.sha256(record.encode("utf-8")).hexdigest()[:16]


def prepare_folder(folder: str | os.PathLike, settings: dict) -> None:
    """Starts or resumes an encoding into `folder` (call it in one process only).

    A new folder gets the manifest. An existing one must have been started with the same
    settings, else a clear error says which setting differs; leftovers of a killed run's
    unfinished chunks are removed. Besides SETTING_KEYS, the corpus' content and the model's
    weights must be the same (as far as the folder's manifest records them).
    """
    manifest = Path(folder) / MANIFEST
    if manifest.exists():
        _check_identities(manifest, read_json(manifest), settings)
    prepare_work_folder(
        folder,
        MANIFEST,
        {"format_version": FORMAT_VERSION, **settings},
        SETTING_KEYS,
        holds="an encoding",
        option="--out",
    )


def _check_identities(manifest: Path, existing: dict, settings: dict) -> None:
    """Refuses to resume an encoding of another corpus content or other model weights."""
    different = []
    recorded, requested = existing.get("corpus_identity"), settings.get("corpus_identity")
    if recorded and requested and same_corpus(recorded, requested) is False:
        different.append(
            f"corpus: {describe_corpus(recorded)} there, {describe_corpus(requested)} now"
        )
    recorded, requested = existing.get("model_identity"), settings.get("model_identity")
    if recorded and requested and not same_model(recorded, requested):
        different.append(
            f"model: {describe_model(recorded)} there, {describe_model(requested)} now"
        )
    if different:
        raise BadInputError(
            manifest,
            None,
            "this folder holds an encoding with other inputs ("
            + "; ".join(different)
            + "); use another --out folder or delete this one",
        )


def write_chunk(
    folder: str | os.PathLike,
    number: int,
    embeddings: np.ndarray,
    documents: np.ndarray,
    wikipedia_ids: list[str],
    digest: str,
) -> None:
    """Writes one chunk atomically: it appears complete or not at all."""
    if not len(embeddings) == len(documents) == len(wikipedia_ids):
        raise ValueError("a chunk needs one document and id per embedding")
    with atomic_directory(Path(folder) / chunk_name(number), writer="encode") as staging:
        np.save(staging / EMBEDDINGS, np.ascontiguousarray(embeddings, dtype=DTYPE))
        table = pa.table(
            {
                "document": pa.array(documents, type=pa.int64()),
                "wikipedia_id": pa.array(wikipedia_ids, type=pa.string()),
            }
        )
        feather.write_feather(table, str(staging / PASSAGES), compression="uncompressed")
        record = {"settings_digest": digest, "num_passages": len(embeddings)}
        (staging / CHUNK_RECORD).write_text(json.dumps(record) + "\n", encoding="utf-8")


def chunk_done(folder: str | os.PathLike, number: int) -> bool:
    return (Path(folder) / chunk_name(number)).is_dir()


def finish_folder(folder: str | os.PathLike, totals: dict) -> None:
    """Records the totals in the manifest: the encoding is complete and can be indexed."""
    manifest = Path(folder) / MANIFEST
    write_json(manifest, {**read_json(manifest), **totals})


@dataclass
class Chunk:
    """One chunk, checked (settings, shape, passage table): its embeddings memory-mapped."""

    number: int
    path: Path
    embeddings: np.ndarray  # float16 [n, dimension], memory-mapped


class EmbeddingsFolder:
    """A complete encoding, checked on opening; chunks are read memory-mapped on demand."""

    def __init__(self, folder: str | os.PathLike):
        self.path = Path(folder)
        if not self.path.is_dir():
            raise BadInputError(self.path, None, "no such embeddings folder")
        self.manifest_path = self.path / MANIFEST
        self.settings = read_json(self.manifest_path)
        if self.settings.get("format_version") != FORMAT_VERSION:
            raise BadInputError(
                self.manifest_path, None, f"unknown format {self.settings.get('format_version')}"
            )
        if "num_chunks" not in self.settings:
            raise BadInputError(
                self.manifest_path,
                None,
                "the encoding is not finished (no totals yet): rerun the same `namesake "
                "encode` command; it resumes where it stopped",
            )
        self.digest = settings_digest(self.settings)
        self.similarity = recorded_similarity(self.settings)
        self.dimension = int(self.settings["dimension"])
        self.num_passages = int(self.settings["num_passages"])
        self.num_chunks = int(self.settings["num_chunks"])
        self.chunk_passages = int(self.settings["chunk_passages"])
        self._mapped_chunks: dict[int, np.ndarray] = {}  # for re-ranking: see _mapped
        for number in range(self.num_chunks):
            if not chunk_done(self.path, number):
                raise BadInputError(self.path / chunk_name(number), None, "chunk missing")

    def expected_rows(self, number: int) -> int:
        start = number * self.chunk_passages
        return min(self.chunk_passages, self.num_passages - start)

    def chunk(self, number: int) -> Chunk:
        """Chunk `number`, after checking its settings, shape and passage table."""
        path = self.path / chunk_name(number)
        record = read_json(path / CHUNK_RECORD)
        if record.get("settings_digest") != self.digest:
            raise BadInputError(
                path,
                None,
                "encoded with other settings than "
                f"{self.manifest_path} (another model, passage length or corpus): "
                "re-encode it into this folder, or index it from its own folder",
            )
        rows = self.expected_rows(number)
        try:
            embeddings = np.load(path / EMBEDDINGS, mmap_mode="r", allow_pickle=False)
        except FileNotFoundError:
            raise BadInputError(path / EMBEDDINGS, None, "missing") from None
        except (ValueError, OSError) as exc:
            raise BadInputError(path / EMBEDDINGS, None, f"unreadable ({exc})") from None
        if embeddings.dtype != DTYPE or embeddings.ndim != 2:
            raise BadInputError(
                path / EMBEDDINGS, None, f"expected float16 rows, found {embeddings.dtype}"
            )
        if embeddings.shape != (rows, self.dimension):
            raise BadInputError(
                path / EMBEDDINGS,
                None,
                f"shape {embeddings.shape}, expected ({rows}, {self.dimension}) from "
                f"{self.manifest_path}",
            )
        try:
            table = feather.read_table(str(path / PASSAGES), columns=["document"])
        except (FileNotFoundError, pa.ArrowInvalid, OSError) as exc:
            raise BadInputError(path / PASSAGES, None, f"unreadable ({exc})") from None
        if table.num_rows != rows:
            raise BadInputError(path / PASSAGES, None, f"{table.num_rows} rows, expected {rows}")
        return Chunk(number, path, embeddings)

    def chunks(self, start: int = 0, stop: int | None = None) -> Iterator[Chunk]:
        stop = self.num_chunks if stop is None else stop
        for number in range(start, stop):
            yield self.chunk(number)

    def passage_map(self) -> tuple[np.ndarray, list[str]]:
        """Every passage's page position (int64, in passage order) and the corpus' page ids,
        indexed by page position; one read of each chunk's passage table.

        Every page has at least one passage, so every position appears in some chunk.
        """
        ids: list[str | None] = [None] * int(self.settings["num_documents"])
        documents = []
        for number in range(self.num_chunks):
            path = self.path / chunk_name(number) / PASSAGES
            table = feather.read_table(str(path))
            positions = table.column("document").to_numpy().astype(np.int64, copy=False)
            names = table.column("wikipedia_id").to_pylist()
            for position, name in zip(positions.tolist(), names, strict=True):
                if not 0 <= position < len(ids):
                    raise BadInputError(path, None, f"page position {position} out of range")
                ids[position] = name
            documents.append(positions)
        missing = [i for i, name in enumerate(ids) if name is None]
        if missing:
            raise BadInputError(self.path, None, f"no passage for page position {missing[0]}")
        return np.concatenate(documents), ids

    def passage_vectors(self, passages: np.ndarray) -> np.ndarray:
        """float32 embeddings of the given passage numbers (any order), read from the chunks."""
        passages = np.asarray(passages, dtype=np.int64)
        out = np.empty((len(passages), self.dimension), dtype=np.float32)
        numbers = passages // self.chunk_passages
        order = np.argsort(numbers, kind="stable")
        for rows in np.split(order, np.flatnonzero(np.diff(numbers[order])) + 1):
            if len(rows):
                number = int(numbers[rows[0]])
                offsets = passages[rows] - number * self.chunk_passages
                out[rows] = self._mapped(number)[offsets]
        return out

    def _mapped(self, number: int) -> np.ndarray:
        """Chunk `number`'s embeddings, checked and memory-mapped once, then reused."""
        if number not in self._mapped_chunks:
            self._mapped_chunks[number] = self.chunk(number).embeddings
        return self._mapped_chunks[number]
