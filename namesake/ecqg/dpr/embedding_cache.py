"""Passage embeddings cached on disk by (passage model, passages, normalisation), so that a
pipeline that ranks the same passages with the same model in several steps encodes them once.

``make ecqg-demo`` ranks its 4,600 passages with the DPR trained on gold in four steps
(``train_dpr.py``'s validation, ``build-synthetic-set``'s hardness retriever twice and
``evaluate-dpr``) and with every other encoder twice (its validation and ``evaluate-dpr``).
On two CPU cores one encoding takes minutes; with ``--embeddings-cache DIR`` (``train_dpr.py``:
``--embeddings_cache``) each pair is encoded once.

An entry's key is the SHA-256 of

- the passage model's content: every file of its folder (relative name, size and bytes:
  weights, tokenizer, sentence-transformers and pooling configuration; not its README), so a
  model copied elsewhere is the same model and one retrained in place, or another model, is
  not;
- the exact encoder inputs, in order (each passage's title, separator and text), so another
  corpus, another order, another passage length or another separator is another entry;
- whether the embeddings are normalised (cosine) or not (dot product);
- the versions of torch, transformers and sentence-transformers that compute them.

A model that is not a local folder (a Hub id) is not cached: it is encoded every time. An
entry is a float32 ``.npy`` and a JSON note of what it holds (the model, the passage count, the
key's parts), both written atomically; a file whose shape does not fit is not used. The cache
only ever saves the encoding: the embeddings are the ones ``DenseRetriever.build`` computes
(same encoder call, same inputs), so results with and without it agree.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from namesake.outputs import atomic_file

#: passage length that never splits a (pre-split) passage again: every document is one passage
WHOLE = 10**9
#: files of a model folder that say nothing about its computation
_NOT_MODEL = ("README.md",)
_READ = 1 << 22


def model_fingerprint(model: str | os.PathLike) -> str | None:
    """SHA-256 over every file of the model folder `model` (relative name, size, bytes;
    hidden files and ``README.md`` left out), or None when `model` is not a local folder."""
    root = Path(model)
    if not root.is_dir():
        return None
    digest = hashlib.sha256()
    files = []
    for folder, folders, names in os.walk(root, followlinks=True):
        folders[:] = sorted(name for name in folders if not name.startswith("."))
        for name in names:
            if not name.startswith(".") and name not in _NOT_MODEL:
                files.append(Path(folder) / name)
    for file in sorted(files, key=lambda f: f.relative_to(root).as_posix()):
        size = file.stat().st_size
        digest.update(f"{file.relative_to(root).as_posix()}\t{size}\n".encode())
        with file.open("rb") as f:
            while block := f.read(_READ):
                digest.update(block)
    return digest.hexdigest()


def inputs_fingerprint(inputs: Iterable[str | tuple[str, str]]) -> tuple[str, int]:
    """SHA-256 of the encoder inputs in order (strings, or (title, text) pairs) and their
    count."""
    digest = hashlib.sha256()
    count = 0
    for item in inputs:
        digest.update(json.dumps(item, ensure_ascii=False).encode())
        digest.update(b"\n")
        count += 1
    return digest.hexdigest(), count


def encoder_libraries() -> dict[str, str]:
    """The versions of the libraries that compute the embeddings."""
    from importlib.metadata import version

    return {name: version(name) for name in ("torch", "transformers", "sentence-transformers")}


def cache_key(model: str, inputs: str, normalized: bool) -> str:
    """The entry name of a (model fingerprint, inputs fingerprint, normalisation) triple,
    computed with these library versions (:func:`encoder_libraries`)."""
    parts = {"model": model, "inputs": inputs, "normalized": bool(normalized)}
    parts["libraries"] = encoder_libraries()
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


class EmbeddingCache:
    """Passage embeddings in folder `path` (created on first write), one entry per key."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        #: what this object did, for tests and messages: "hit" / "miss" per lookup
        self.lookups: list[str] = []

    def _files(self, key: str) -> tuple[Path, Path]:
        return self.path / f"{key}.npy", self.path / f"{key}.json"

    def key(
        self, model: str | os.PathLike, inputs: Sequence[str | tuple[str, str]], normalized: bool
    ) -> str | None:
        """The key of `model`'s embeddings of `inputs`; None when `model` cannot be cached
        (not a local folder)."""
        model_print = model_fingerprint(model)
        if model_print is None:
            message = f"{model}: not a local folder, its passage embeddings are not cached"
            print(message, file=sys.stderr)
            return None
        inputs_print, _ = inputs_fingerprint(inputs)
        return cache_key(model_print, inputs_print, normalized)

    def get(self, key: str | None, count: int) -> np.ndarray | None:
        """The stored embeddings of `key` when they are there and hold `count` rows."""
        if key is None:
            return None
        array_file, _ = self._files(key)
        try:
            embeddings = np.load(array_file, allow_pickle=False)
        except (FileNotFoundError, ValueError, OSError):
            self.lookups.append("miss")
            return None
        if embeddings.ndim != 2 or embeddings.shape[0] != count:
            self.lookups.append("miss")
            return None
        self.lookups.append("hit")
        return embeddings.astype(np.float32, copy=False)

    def put(self, key: str | None, embeddings: np.ndarray, about: dict) -> None:
        """Stores `embeddings` under `key` (nothing for None), with `about` as its note."""
        if key is None:
            return
        array_file, note_file = self._files(key)
        with atomic_file(array_file, "wb") as f:
            np.save(f, np.asarray(embeddings, dtype=np.float32), allow_pickle=False)
        note = {**about, "passages": int(embeddings.shape[0]), "dimension": embeddings.shape[1]}
        with atomic_file(note_file, "w") as f:
            f.write(json.dumps(note, indent=2) + "\n")


def flat_dense_retriever(
    documents: Iterable,
    model: str,
    query_model: str | None = None,
    *,
    similarity: str | None = None,
    batch_size: int = 64,
    device: str | None = None,
    show_progress: bool = True,
    cache: EmbeddingCache | str | os.PathLike | None = None,
):
    """``DenseRetriever.build(documents, model, index="flat", words=WHOLE, ...)`` (every
    document one passage, ranked exactly), its passage embeddings read from `cache` when it
    holds this model's embeddings of these passages, else encoded (and stored there).

    The cache is an option of ``DenseRetriever.build`` itself: the encoders, the similarity,
    the separator, the encoder inputs, the index and its settings are the build's, with or
    without it.
    """
    from namesake.retrieval.dense import DenseRetriever

    if cache is not None and not isinstance(cache, EmbeddingCache):
        cache = EmbeddingCache(cache)
    return DenseRetriever.build(
        documents,
        model=model,
        query_model=query_model,
        index="flat",
        batch_size=batch_size,
        words=WHOLE,
        device=device,
        show_progress=show_progress,
        similarity=similarity,
        embeddings_cache=cache,
    )
