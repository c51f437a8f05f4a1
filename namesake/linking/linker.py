"""An entity-linking retriever (BLINK / Bootleg family, as the AmbER paper evaluates them): the
query's mentions are linked to pages, and the linked page is the first result.

Mentions come from spaCy (``namesake.linking.query_mentions``: named entities, else noun
chunks, else the whole query). Each is marked in its query (``left [unused0] mention [unused1]
right``, ``namesake.linking.inputs``) and embedded by a bi-encoder; every page is embedded as its
title, the tokenizer's separator and its opening words, in a faiss inner-product index of
L2-normalised embeddings (cosine). A page's score for a query is its best score over the
query's mentions: the linked page, the best mention's best page, ranks first and the others
follow by score (ties: the page indexed first). Each mention's top k pages are searched, which
holds every page of the exact top k of the maximum.

The encoder is any sentence-transformers model (default the bundled all-MiniLM-L6-v2, zero-shot)
or a linker trained by ``training/train_entity_linker.py``, whose ``linker.json`` gives the
context and page lengths it was trained with.

An index directory holds ``index.faiss``, ``retriever.json`` (model and settings) and
``document_ids.arrow``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

import faiss
import numpy as np
from tqdm.auto import tqdm

from namesake.bundled_models import SPACY_MODEL
from namesake.errors import BadInputError
from namesake.linking.inputs import (
    mark_mention,
    mention_markers,
    page_input,
    page_separator,
    read_linker_settings,
)
from namesake.linking.query_mentions import find_mentions, load_mention_pipeline
from namesake.outputs import atomic_directory
from namesake.retrieval.candidates import candidate_rows, ranked, stored_vectors
from namesake.retrieval.corpus import Document, chunks
from namesake.retrieval.dense import DEFAULT_MODEL
from namesake.retrieval.encoders import embedding_dimension, load_encoder
from namesake.retrieval.faiss_index import factory_string, new_index, read_index
from namesake.retrieval.provenance import new_provenance
from namesake.retrieval.storage import (
    REBUILD,
    damaged,
    index_writer,
    read_index_files,
    reading,
    write_index_files,
)

KIND = "link"
_INDEX = "index.faiss"
#: pages encoded per chunk while building (then added to the index)
CHUNK_PAGES = 4096


class EntityLinkRetriever:
    """Ranks pages by how well they link a query's mentions; see the module docstring."""

    candidate_rows = candidate_rows
    #: the kind its retriever.json records
    INDEX_KIND = KIND
    #: the models a reopening command may name, checked against the saved index's
    #: (namesake.retrieval.provenance): build option -> (recorded field, what it is)
    NAMED_MODELS = {"model": ("model", "linker model")}
    #: what built it (namesake.retrieval.provenance), recorded by save
    provenance: dict | None = None

    def __init__(self, index, document_ids: list[str], settings: dict, encoder=None, nlp=None):
        self.index = index
        self.document_ids = document_ids
        self._ids = np.asarray(document_ids, dtype=object)
        self.settings = settings
        self._encoder = encoder
        self._nlp = nlp
        self._markers: tuple[str, str] | None = None
        #: texts encoded per batch
        self.batch_size = settings.get("batch_size", 64)

    # --- models -------------------------------------------------------------------------

    @property
    def encoder(self):
        """The sentence-transformers encoder (loaded on first use)."""
        if self._encoder is None:
            self._encoder = load_encoder(self.settings["model"], self.settings.get("device"))
        return self._encoder

    @property
    def markers(self) -> tuple[str, str]:
        """The mention markers, registered in the encoder's tokenizer on first use."""
        if self._markers is None:
            self._markers = mention_markers(self.encoder.tokenizer)
        return self._markers

    @property
    def nlp(self):
        """The spaCy pipeline that finds the mentions (loaded on first use)."""
        if self._nlp is None:
            self._nlp = load_mention_pipeline(self.settings["spacy_model"])
        return self._nlp

    def _encode(self, texts: list[str]) -> np.ndarray:
        return self.encoder.encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        ).astype(np.float32, copy=False)

    # --- building -----------------------------------------------------------------------

    @classmethod
    def build(
        cls,
        documents: Iterable[Document],
        model: str = DEFAULT_MODEL,
        batch_size: int = 64,
        *,
        spacy_model: str = SPACY_MODEL,
        device: str | None = None,
        show_progress: bool = True,
    ) -> EntityLinkRetriever:
        """Encodes every page (title and opening words) into a flat inner-product index.

        `model` is a trained linker folder or any sentence-transformers model (path or Hub id).
        """
        linker = read_linker_settings(model)
        settings = {
            "model": model,
            "model_is_default": model == DEFAULT_MODEL,
            "spacy_model": spacy_model,
            "batch_size": batch_size,
            "device": device,
            **linker,
        }
        retriever = cls(None, [], settings)
        encoder = retriever.encoder
        dimension = embedding_dimension(encoder)
        separator = page_separator(encoder)
        index = new_index(factory_string("flat", dimension, 0), dimension, normalized=True)
        document_ids: list[str] = []

        def page_inputs() -> Iterator[str]:
            for document in documents:
                document_ids.append(document.wikipedia_id)
                yield page_input(document.title, document.text, separator, linker["page_words"])

        with tqdm(desc="Encoding pages", unit="page", disable=not show_progress) as progress:
            for chunk in chunks(page_inputs(), CHUNK_PAGES):
                index.add(retriever._encode(chunk))
                progress.update(len(chunk))
        if not document_ids:
            raise ValueError("no documents to index")
        settings.update(dimension=dimension, title_separator=separator)
        settings["num_documents"] = len(document_ids)
        retriever.index = index
        retriever.document_ids = document_ids
        retriever._ids = np.asarray(document_ids, dtype=object)
        retriever.provenance = new_provenance(model=model)
        return retriever

    def __len__(self) -> int:
        return len(self.document_ids)

    # --- searching ----------------------------------------------------------------------

    def mention_inputs(self, queries: list[str]) -> tuple[list[str], np.ndarray]:
        """Every mention of every query, marked in its query, and the query of each."""
        inputs, owners = [], []
        found = find_mentions(queries, self.nlp, batch_size=self.batch_size)
        for number, (query, mentions) in enumerate(zip(queries, found, strict=True)):
            for mention in mentions:
                inputs.append(
                    mark_mention(
                        query,
                        mention.start,
                        mention.end,
                        self.markers,
                        self.settings["context_words"],
                    )
                )
                owners.append(number)
        return inputs, np.asarray(owners, dtype=np.int64)

    def search(self, queries: list[str], k: int) -> list[list[tuple[str, float]]]:
        """Per query, up to `k` (document id, score) pairs, best first: the linked page, then
        the others by their best score over the query's mentions."""
        if isinstance(queries, str):
            raise TypeError("queries must be a list of strings, not one string")
        if k < 1 or not queries:
            return [[] for _ in queries]
        inputs, owners = self.mention_inputs(list(queries))
        results: list[list[tuple[str, float]]] = [[] for _ in queries]
        if not inputs:
            return results
        k = min(k, self.index.ntotal)
        scores, labels = self.index.search(self._encode(inputs), k)
        for number in range(len(queries)):
            rows = np.flatnonzero(owners == number)
            if not len(rows):
                continue
            found_labels = labels[rows].ravel()
            found_scores = scores[rows].ravel()
            keep = found_labels >= 0
            found_labels, found_scores = found_labels[keep], found_scores[keep]
            # best score first, then the page indexed first; keep each page's best
            order = np.lexsort((found_labels, -found_scores))
            _, first = np.unique(found_labels[order], return_index=True)
            best = order[np.sort(first)][:k]
            results[number] = list(
                zip(
                    self._ids[found_labels[best]].tolist(),
                    found_scores[best].astype(float).tolist(),
                    strict=True,
                )
            )
        return results

    def rank_candidates(
        self, queries: list[str], candidates: list[list[str]]
    ) -> list[list[tuple[str, float]]]:
        """Per query, its candidate pages ranked by their best score over the query's mentions
        (the score :meth:`search` gives them; none for a query without a mention); see
        ``namesake.retrieval.candidates``."""
        inputs, owners = self.mention_inputs(list(queries))
        mentions = self._encode(inputs) if inputs else np.zeros((0, self.index.d), np.float32)
        results = []
        for number, pages in enumerate(candidates):
            documents = self.candidate_rows(pages)
            found = mentions[owners == number]
            if not len(found) or not len(documents):
                results.append([])
                continue
            scores = (stored_vectors([(0, self.index)], documents) @ found.T).max(axis=1)
            results.append(ranked(documents, scores, self._ids))
        return results

    # --- saving -------------------------------------------------------------------------

    def save(self, path: str | os.PathLike) -> None:
        """Writes the index to directory `path`, replacing it only once complete."""
        with atomic_directory(path, writer=index_writer(KIND)) as staging:
            faiss.write_index(self.index, str(staging / _INDEX))
            settings = dict(self.settings, faiss_version=faiss.__version__)
            write_index_files(staging, KIND, settings, self.document_ids, self.provenance)

    @classmethod
    def load(
        cls, path: str | os.PathLike, mmap: bool = False, device: str | None = None
    ) -> EntityLinkRetriever:
        """Reads an index :meth:`save` wrote; the models load on the first search. An index
        built with the bundled default model uses this installation's copy of it."""
        path = Path(path)
        settings, document_ids = read_index_files(path, KIND)
        settings.pop("faiss_version", None)
        provenance = settings.pop("provenance", None)
        if settings.get("model_is_default"):
            settings["model"] = DEFAULT_MODEL
        if device is not None:
            settings["device"] = device
        file = path / _INDEX
        if not file.is_file():
            raise BadInputError(file, None, f"index file missing, so {REBUILD}")
        with reading(file):
            index = read_index(file, mmap=mmap)
        if index.ntotal != len(document_ids):
            raise damaged(file, f"{index.ntotal:,} pages, document_ids.arrow {len(document_ids):,}")
        retriever = cls(index, document_ids, settings)
        retriever.provenance = provenance
        return retriever
