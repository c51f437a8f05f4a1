"""Where the Space finds what ``make demo`` built, and what it builds itself when missing.

The artifacts folder (``demo_output/`` after ``make demo``) holds:

- ``amber/``: the AmbER dataset (``namesake amber build``); ``dataset`` may name another
  folder or a Hub id instead, and so may ``amber_dataset.txt`` (a Hub id on its one line)
  in a folder without ``amber/``: a staged Space that reads the published dataset
  (`namesake.publish.demo_space`).
- ``indexes/bm25/``, ``indexes/dense/``: retriever indexes (``namesake amber compare
  --index-dir``), and ``indexes/documents.arrow``, the pages' titles and texts. Missing ones
  are built from the KILT ``corpus`` on first start, into the Space's cache folder
  (`cache_folder`): a folder a user made is only read.
- ``wes_scorer/`` (optional): a saved WES scorer that judges answers (``make wes-demo`` fits
  the hybrid one there); without it the ``wes_similarity`` metric's default,
  namesake-wes-scorer-v5.
- ``ecqg/mixed_dpr/passage_encoder/`` (optional, ``make ecqg-demo``): the passage encoder
  whose attention is shown; without it, the dense retriever's model.
- ``leaderboard/`` (optional, ``make demo``'s ``namesake leaderboard --out``): the demo's
  systems ranked on AmbER-H QA, ``leaderboard.md`` and the popularity curve
  ``popularity_curve.png``, which the leaderboard tab shows as they are.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from namesake.amber.build.reference import COLLECTIONS
from namesake.amber.evaluation.retrieve import open_retriever
from namesake.errors import BadInputError, NamesakeError
from namesake.outputs import cache_root, read_marker
from namesake.retrieval.provenance import CORPUS_CONTENT, corpus_identity
from namesake.space.documents import DocumentStore

DATASET_DIR = "amber"
DATASET_ID_FILE = "amber_dataset.txt"
#: the artifacts folder's name beside a staged Space's app.py (`namesake.publish.demo_space`)
STAGED_FOLDER = "artifacts"
INDEX_DIR = "indexes"
DOCUMENTS_FILE = "documents.arrow"
WES_MODEL_DIR = "wes_scorer"
PASSAGE_ENCODER_DIR = Path("ecqg", "mixed_dpr", "passage_encoder")
LEADERBOARD_DIR = "leaderboard"
LEADERBOARD_FILES = ("leaderboard.md", "popularity_curve.png")
SPACE_RETRIEVERS = ("bm25", "dense")  # the lexical and the dense ranking the page sets side by side


@dataclass
class Artifacts:
    """Everything the Space shows, loaded."""

    folder: Path
    queries: pa.Table  # every collection's queries, with a ``collection`` column
    entities: pa.Table  # every collection's set members, with a ``collection`` column
    documents: DocumentStore
    retrievers: dict  # kind -> BM25Retriever | DenseRetriever
    wes_model: str | None
    passage_encoder: str
    leaderboard: Path | None = None  # LEADERBOARD_DIR, when it holds LEADERBOARD_FILES


def _load_collections(dataset: str) -> tuple[pa.Table, pa.Table]:
    """All queries and all set members of the collections `dataset` has (path or Hub id)."""
    from datasets import load_dataset

    queries, entities = [], []
    for collection in COLLECTIONS:
        try:
            rows = load_dataset(dataset, collection, split="test")
            members = load_dataset(dataset, f"{collection}_entities", split="test")
        except ValueError:  # the dataset has no such config: a one-collection build
            continue
        for parts, table in ((queries, rows), (entities, members)):
            table = table.with_format("arrow")[:]
            parts.append(table.append_column("collection", pa.array([collection] * len(table))))
    if not queries:
        raise NamesakeError(f"{dataset}: no AmbER configs ({', '.join(COLLECTIONS)}) found")
    return pa.concat_tables(queries), pa.concat_tables(entities)


def _folder_dataset(folder: Path) -> str:
    """The AmbER dataset an artifacts folder holds (``amber/``), else the Hub id its
    ``amber_dataset.txt`` names."""
    if (folder / DATASET_DIR).is_dir():
        return str(folder / DATASET_DIR)
    named = folder / DATASET_ID_FILE
    if not named.is_file():
        raise NamesakeError(f"No AmbER dataset at {folder / DATASET_DIR}: run `make demo` first.")
    dataset = named.read_text(encoding="utf-8").strip()
    if not dataset:
        raise BadInputError(named, 1, "empty: it names the AmbER dataset's Hub id")
    return dataset


def load_artifacts(
    folder: str | os.PathLike,
    corpus: str | os.PathLike | None = None,
    dataset: str | None = None,
    wes_model: str | None = None,
    passage_encoder: str | None = None,
    report: Callable[[str], None] = print,
) -> Artifacts:
    """Loads the artifacts in `folder`, building missing indexes from `corpus` (see module).

    Raises :class:`NamesakeError` with a message fit for the page when something is missing.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise NamesakeError(
            f"No artifacts folder at {folder}: run `make demo`, or start the app with "
            "--artifacts pointing at the folder it wrote."
        )
    if dataset is None:
        dataset = _folder_dataset(folder)
    try:
        queries, entities = _load_collections(dataset)
    except NamesakeError:
        raise
    except Exception as error:  # an unreadable folder, a Hub id while offline, ...
        raise NamesakeError(f"Could not load the AmbER dataset {dataset}: {error}") from None

    indexes = folder / INDEX_DIR
    saved = {name: indexes / name for name in (*SPACE_RETRIEVERS, DOCUMENTS_FILE)}
    missing = [name for name, path in saved.items() if not path.exists()]
    if missing and corpus is not None:  # built in the cache folder; the folder is only read
        cache = cache_folder(folder, corpus)
        saved.update({name: cache / name for name in missing})
    retrievers = {}
    for kind in SPACE_RETRIEVERS:
        if not saved[kind].exists():
            report(
                f"Building the {kind} index from {corpus} into {saved[kind]} (first start only)…"
            )
        try:
            retrievers[kind] = open_retriever(kind, corpus, saved[kind])
        except FileNotFoundError as error:
            raise NamesakeError(f"{error}: pass --corpus, or run `make demo` first.") from None
    try:
        documents = DocumentStore.open_or_build(saved[DOCUMENTS_FILE], corpus)
    except FileNotFoundError as error:
        raise NamesakeError(f"{error}: pass --corpus.") from None

    if wes_model is None and (folder / WES_MODEL_DIR).is_dir():
        wes_model = str(folder / WES_MODEL_DIR)
    if passage_encoder is None:
        trained = folder / PASSAGE_ENCODER_DIR
        passage_encoder = str(trained) if trained.is_dir() else retrievers["dense"].model
    leaderboard = folder / LEADERBOARD_DIR
    if not all((leaderboard / name).is_file() for name in LEADERBOARD_FILES):
        leaderboard = None
    return Artifacts(
        folder, queries, entities, documents, retrievers, wes_model, passage_encoder, leaderboard
    )


def cache_folder(folder: Path, corpus: str | os.PathLike) -> Path:
    """Where the indexes and page store that the artifacts ``folder`` lacks are built:
    ``folder/indexes`` when namesake wrote ``folder`` (it has namesake's output marker),
    else a folder of the Space's cache, ``$NAMESAKE_CACHE/space/<digest>`` (by default
    ``$XDG_CACHE_HOME/namesake``, else ``~/.cache/namesake``), named by the folder's resolved
    path and what the corpus holds: a folder a user made is only read, a second start reuses
    what the first built, and another corpus gets indexes of its own."""
    if read_marker(folder) is not None:
        return folder / INDEX_DIR
    identity = corpus_identity(corpus)  # a missing corpus: one line naming it
    key = {"artifacts": str(folder.resolve()), **{k: identity[k] for k in CORPUS_CONTENT}}
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    return cache_root() / "space" / digest
