"""SPLADE: learned sparse retrieval with sentence-transformers' ``SparseEncoder``, over an
inverted index of 100-word passages.

Model (``model``): any model ``SparseEncoder`` loads, a Hub id or a local folder, whose
output is sparse: a SPLADE model (``naver/splade-cocondenser-ensembledistil``,
``naver/splade-v3``, ``naver/splade_v2_distil``, ``prithivida/Splade_PP_en_v1``...; masked
language model + SPLADE pooling: one weight per vocabulary entry), an inference-free one
(``opensearch-project/opensearch-neural-sparse-encoding-doc-v2-distill``) or a CSR one
(sparse auto-encoder). Queries go through ``encode_query`` and passages through
``encode_document``, so models with query and document prompts or heads get them. The
default is ``naver/splade-cocondenser-ensembledistil``, which needs the Hub or its copy in
the Hugging Face cache; offline, name a local folder. A folder that is no sparse encoder (a
dense sentence-transformers model, a plain transformer) is refused by name: sentence-
transformers would otherwise wrap it in a randomly initialised sparse head.

Passages are the dense retriever's (`namesake.retrieval.dense`): DPR's 100-word passages,
each encoded as ``"{title} {sep} {text}"`` with the model tokenizer's separator, and a page's
score is its best passage's: the dot product of the query's and the passage's sparse vectors
(SPLADE's similarity). SPLADE models read at most 512 tokens (most were trained on MS MARCO
passages of about 60 words), so a whole Wikipedia page would be cut to its first paragraphs.

The index is term-major, as the BM25 index's score matrix (bm25s' CSC arrays, see
`namesake.retrieval.bm25`): per output dimension (vocabulary entry), the rows of the passages
where it is nonzero, ascending, and their float32 weights, 8 bytes per nonzero weight.
Search is term at a time as BM25's: the postings of the query's nonzero dimensions, taken
in ascending order, are added into per-passage float32 scores (weighted by the query's
weights), each page keeps its best passage, and BM25's heap kernels keep the top k pages
(equal scores: the page indexed first first). The search is exact (no pruning); pages
sharing no dimension with the query (score 0) are left out, as BM25 leaves them out, and so
does :meth:`SpladeRetriever.rank_candidates`, whose scores are the search's, bit for bit.
Queries run in ``n_threads`` threads as BM25's (the numba kernels release the GIL; compiled
on first use and cached beside this file); the postings, heap and threads are the code both
share (`namesake.retrieval.sparse_search`).

The build keeps every passage's nonzero weights in memory (12 bytes each) until they are
laid out by dimension; that suits the AmbER sample and KILT subsets rather than the whole of
KILT on one machine.

An index directory holds ``data.npy``, ``indices.npy`` and ``indptr.npy`` (the term-major
matrix), ``passage_documents.npy`` (per passage, the row of its page in
``document_ids.arrow``) and ``retriever.json`` (model, passage settings, sizes, provenance);
a saved index is memory-mapped by `namesake retrieve` and `amber compare`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import numba
import numpy as np
from tqdm.auto import tqdm

from namesake.errors import BadInputError, NamesakeError
from namesake.outputs import atomic_directory
from namesake.retrieval.candidates import candidate_rows, ranked
from namesake.retrieval.corpus import PASSAGE_WORDS, Document, NumberedPassages, chunks
from namesake.retrieval.provenance import new_provenance
from namesake.retrieval.sparse_search import add_postings, offer, pop_best_first, search_top_k
from namesake.retrieval.storage import (
    REBUILD,
    damaged,
    index_writer,
    load_npy,
    read_index_files,
    write_index_files,
)

KIND = "splade"
DEFAULT_MODEL = "naver/splade-cocondenser-ensembledistil"
#: the files of a saved index besides retriever.json and document_ids.arrow
INDEX_FILES = ("data.npy", "indices.npy", "indptr.npy", "passage_documents.npy")
#: queries encoded, and searched, together
QUERY_BLOCK = 256


# --- numba kernels (cache=True: compiled once, not in every process) --------------------------


@numba.njit(cache=True, nogil=True)
def _page_scores(
    data, rows, indptr, passage_documents, terms, weights, passage_scores, touched, page_scores,
    touched_pages,
):  # fmt: skip
    """One query's page scores: its postings are added, dimension by dimension in the given
    order, into `passage_scores`, and each page keeps its best passage in `page_scores`.
    Returns how many pages scored (listed in `touched_pages`); `passage_scores` is left at 0,
    `page_scores` is the caller's to reset."""
    n = 0
    for i in range(terms.size):
        n = add_postings(data, rows, indptr, terms[i], weights[i], passage_scores, touched, n)
    m = 0
    for x in range(n):
        passage = touched[x]
        page = passage_documents[passage]
        score = passage_scores[passage]
        passage_scores[passage] = 0
        if page_scores[page] == 0:
            touched_pages[m] = page
            m += 1
            page_scores[page] = score
        elif score > page_scores[page]:
            page_scores[page] = score
    return m


@numba.njit(cache=True, nogil=True)
def _search_queries(
    data, rows, indptr, passage_documents, num_pages, terms, weights, offsets, k, first, last,
    found_docs, found_scores, found,
):  # fmt: skip
    """Top `k` pages with a positive score for queries ``first:last``, best first (equal
    scores: the lower page row first, as BM25)."""
    passage_scores = np.zeros(passage_documents.size, np.float32)
    touched = np.empty(passage_documents.size, np.int32)
    page_scores = np.zeros(num_pages, np.float32)
    touched_pages = np.empty(num_pages, np.int32)
    heap_scores = np.empty(k, np.float32)
    heap_docs = np.empty(k, np.int32)
    for q in range(first, last):
        m = _page_scores(
            data, rows, indptr, passage_documents, terms[offsets[q] : offsets[q + 1]],
            weights[offsets[q] : offsets[q + 1]], passage_scores, touched, page_scores,
            touched_pages,
        )  # fmt: skip
        size = 0
        for x in range(m):
            page = touched_pages[x]
            size = offer(heap_scores, heap_docs, size, page_scores[page], page)
            page_scores[page] = 0
        found[q] = size
        pop_best_first(heap_scores, heap_docs, size, found_scores[q], found_docs[q])


@numba.njit(cache=True, nogil=True)
def _candidate_scores(
    data, rows, indptr, passage_documents, num_pages, terms, weights, offsets, candidates,
    candidate_offsets, out,
):  # fmt: skip
    """Per query, the scores :func:`_search_queries` gives its candidate page rows (0 for a
    page sharing no dimension with it), into `out` (aligned with `candidates`)."""
    passage_scores = np.zeros(passage_documents.size, np.float32)
    touched = np.empty(passage_documents.size, np.int32)
    page_scores = np.zeros(num_pages, np.float32)
    touched_pages = np.empty(num_pages, np.int32)
    for q in range(offsets.size - 1):
        m = _page_scores(
            data, rows, indptr, passage_documents, terms[offsets[q] : offsets[q + 1]],
            weights[offsets[q] : offsets[q + 1]], passage_scores, touched, page_scores,
            touched_pages,
        )  # fmt: skip
        for c in range(candidate_offsets[q], candidate_offsets[q + 1]):
            out[c] = page_scores[candidates[c]]
        for x in range(m):
            page_scores[touched_pages[x]] = 0


# --- the encoder ------------------------------------------------------------------------------


def sparse_rows(embeddings, count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A ``SparseEncoder``'s output for `count` texts (a sparse COO tensor) as rows: the
    nonzero dimensions of every text (ascending, int32), their weights (float32) and where
    each text's start (int64, ``count + 1``); only positive weights are kept."""
    offsets = np.zeros(count + 1, dtype=np.int64)
    if count == 0 or embeddings.numel() == 0:
        return np.zeros(0, np.int32), np.zeros(0, np.float32), offsets
    embeddings = embeddings.coalesce()  # sorted by (row, dimension)
    rows, dimensions = embeddings.indices().cpu().numpy()
    values = embeddings.values().float().cpu().numpy()
    keep = values > 0
    rows, dimensions, values = rows[keep], dimensions[keep], values[keep]
    np.cumsum(np.bincount(rows, minlength=count), out=offsets[1:])
    return dimensions.astype(np.int32), values.astype(np.float32), offsets


def _model_file(name: str, filename: str) -> Path | None:
    """A file of model `name`: in its folder, or in the Hugging Face cache for a Hub id (where
    loading the model has put it); None when it has none."""
    folder = Path(name)
    if folder.is_dir():
        return folder / filename if (folder / filename).is_file() else None
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover - installed with sentence-transformers
        return None
    found = try_to_load_from_cache(name, filename)
    return Path(found) if isinstance(found, str) else None


def _json(file: Path | None) -> dict:
    import json

    if file is None:
        return {}
    try:
        record = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def check_sparse_encoder(name: str) -> None:
    """Refuses a model that is no sparse encoder, which ``SparseEncoder`` would load all the
    same with a randomly initialised sparse head: one saved as another kind of
    sentence-transformers model (``model_type`` in config_sentence_transformers.json), or,
    without modules.json, one that is not a masked language model."""
    modules = _model_file(name, "modules.json")
    if modules is not None:
        config = _model_file(name, "config_sentence_transformers.json")
        model_type = _json(config).get("model_type") or "SentenceTransformer"
        if model_type != "SparseEncoder":
            raise BadInputError(
                config or modules,
                None,
                f"not a sparse encoder: a {model_type} model (a dense model goes with "
                "--retriever dense)",
            )
        return
    architectures = _json(_model_file(name, "config.json")).get("architectures") or []
    if not any(str(a).endswith("ForMaskedLM") for a in architectures):
        raise BadInputError(
            name,
            None,
            "not a SPLADE model: neither a SparseEncoder (modules.json) nor a masked language "
            f"model (config.json architectures: {', '.join(map(str, architectures)) or 'none'})",
        )


def load_sparse_encoder(name: str, device: str | None = None):
    """The ``SparseEncoder`` at `name` (Hub id or folder), after checking it is a sparse
    encoder (:func:`check_sparse_encoder`)."""
    from sentence_transformers import SparseEncoder

    name = str(name)
    if Path(name).is_dir():
        check_sparse_encoder(name)  # before loading: no random head built for nothing
    try:
        encoder = SparseEncoder(name, device=device)
    except (OSError, ValueError) as error:
        text = (str(error).strip().splitlines() or [type(error).__name__])[0][:300]
        raise NamesakeError(
            f"SPLADE model {name}: sentence-transformers' SparseEncoder cannot load it ({text}); "
            "offline, name a local SparseEncoder folder with --model"
        ) from None
    if not Path(name).is_dir():
        check_sparse_encoder(name)  # its files are in the cache now
    return encoder


# --- the retriever ----------------------------------------------------------------------------


class SpladeRetriever:
    """Ranks pages by their best passage's SPLADE score; see the module docstring."""

    candidate_rows = candidate_rows
    #: the kind its retriever.json records
    INDEX_KIND = KIND
    #: the models a reopening command may name (namesake.retrieval.provenance)
    NAMED_MODELS = {"model": ("model", "SPLADE model")}
    #: what built it (namesake.retrieval.provenance), recorded by save
    provenance: dict | None = None

    def __init__(
        self,
        matrix: tuple[np.ndarray, np.ndarray, np.ndarray],
        passage_documents: np.ndarray,
        document_ids: list[str],
        settings: dict,
        encoder=None,
        device: str | None = None,
    ):
        #: the term-major matrix: (weights, passage rows, where each dimension starts)
        self.data, self.indices, self.indptr = matrix
        self.passage_documents = passage_documents
        self.document_ids = document_ids
        self._ids = np.asarray(document_ids, dtype=object)
        self.settings = settings
        self.device = device
        self._encoder = encoder
        #: queries encoded per batch
        self.batch_size = settings.get("batch_size", 32)
        #: threads for scoring queries: -1 (the default) = one per CPU, 0 = the calling thread
        self.n_threads = -1

    def __len__(self) -> int:
        return len(self.document_ids)

    @property
    def model(self) -> str:
        return self.settings["model"]

    @property
    def encoder(self):
        """The SparseEncoder (loaded on first use)."""
        if self._encoder is None:
            self._encoder = load_sparse_encoder(self.model, self.device)
        return self._encoder

    # --- building -------------------------------------------------------------------------

    @classmethod
    def build(
        cls,
        documents: Iterable[Document],
        model: str = DEFAULT_MODEL,
        batch_size: int = 32,
        *,
        words: int = PASSAGE_WORDS,
        device: str | None = None,
        show_progress: bool = True,
        chunk_passages: int | None = None,
        max_active_dims: int | None = None,
    ) -> SpladeRetriever:
        """Splits `documents` into passages, encodes them with the SparseEncoder `model` and
        indexes their nonzero weights by dimension.

        Passages are encoded `chunk_passages` at a time (default 16 batches).
        `max_active_dims` keeps each passage's and query's largest weights only (default:
        the model's own setting, usually all)."""
        from namesake.retrieval.dense import passage_input
        from namesake.retrieval.encoders import title_separator

        encoder = load_sparse_encoder(model, device)
        separator = title_separator(encoder)
        chunk_passages = chunk_passages or 16 * batch_size
        passages = NumberedPassages(documents, words)
        parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (rows, dims, weights)
        dimension = 0  # the output's width, from the first chunk (before it, the model
        # may report its transformer's hidden size)
        progress = tqdm(desc="SPLADE encoding", unit="passage", disable=not show_progress)

        def encode(chunk: list[str], first: int) -> None:
            nonlocal dimension
            embeddings = encoder.encode_document(
                chunk,
                batch_size=batch_size,
                convert_to_tensor=True,
                convert_to_sparse_tensor=True,
                save_to_cpu=True,
                show_progress_bar=False,
                max_active_dims=max_active_dims,
            )
            dimension = int(embeddings.shape[-1])
            dims, weights, offsets = sparse_rows(embeddings, len(chunk))
            rows = np.repeat(np.arange(first, first + len(chunk), dtype=np.int32), np.diff(offsets))
            parts.append((rows, dims, weights))
            progress.update(len(chunk))

        with progress:
            inputs = (passage_input(p.title, p.text, separator) for p in passages)
            for chunk in chunks(inputs, chunk_passages):
                encode(chunk, len(passages.passage_documents) - len(chunk))
        document_ids, owners = passages.document_ids, passages.passage_documents
        if not owners:
            raise ValueError("no documents to index")
        matrix = _term_major(parts, int(dimension))
        settings = {
            "model": model,
            "dimension": int(dimension),
            "similarity": "dot",
            "passage_words": words,
            "title_separator": separator,
            "num_passages": len(owners),
            "num_documents": len(document_ids),
            "num_postings": int(len(matrix[0])),
            "batch_size": batch_size,
            "max_active_dims": max_active_dims,
        }
        retriever = cls(
            matrix,
            np.asarray(owners, dtype=np.int32),
            document_ids,
            settings,
            encoder=encoder,
            device=device,
        )
        retriever.provenance = new_provenance(model=model)
        return retriever

    # --- searching ------------------------------------------------------------------------

    def encode_queries(self, queries: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The queries' sparse vectors as rows (see :func:`sparse_rows`)."""
        embeddings = self.encoder.encode_query(
            list(queries),
            batch_size=self.batch_size,
            convert_to_tensor=True,
            convert_to_sparse_tensor=True,
            save_to_cpu=True,
            show_progress_bar=False,
            max_active_dims=self.settings.get("max_active_dims"),
        )
        return sparse_rows(embeddings, len(queries))

    def _matrix(self) -> tuple:
        """The index arrays as plain (possibly read-only, memory-mapped) arrays for numba."""
        return (
            np.asarray(self.data),
            np.asarray(self.indices),
            np.asarray(self.indptr),
            np.asarray(self.passage_documents),
            len(self.document_ids),
        )

    def search(self, queries: list[str], k: int) -> list[list[tuple[str, float]]]:
        """Per query, up to `k` (page id, score) pairs, best first; pages scoring 0 are left
        out (see the module docstring)."""
        if isinstance(queries, str):
            raise TypeError("queries must be a list of strings, not one string")
        if k < 1 or not queries:
            return [[] for _ in queries]
        results: list[list[tuple[str, float]]] = []
        for start in range(0, len(queries), QUERY_BLOCK):
            block = list(queries[start : start + QUERY_BLOCK])
            results += self.search_rows(*self.encode_queries(block), k)
        return results

    def search_rows(
        self, terms: np.ndarray, weights: np.ndarray, offsets: np.ndarray, k: int
    ) -> list[list[tuple[str, float]]]:
        """:meth:`search` for queries already encoded (:meth:`encode_queries`)."""
        return search_top_k(
            _search_queries,
            (*self._matrix(), terms, weights, offsets),
            len(offsets) - 1,
            k,
            self.n_threads,
            self._ids,
        )

    def rank_candidates(
        self, queries: list[str], candidates: list[list[str]]
    ) -> list[list[tuple[str, float]]]:
        """Per query, its candidate pages ranked as :meth:`search` ranks them (same scores,
        pages scoring 0 left out); see ``namesake.retrieval.candidates``."""
        if not len(queries):
            return []
        rows = [self.candidate_rows(pages) for pages in candidates]
        flat = np.concatenate(rows) if rows else np.zeros(0, np.int64)
        starts = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum([len(r) for r in rows], out=starts[1:])
        scores = np.zeros(len(flat), dtype=np.float32)
        terms, weights, offsets = self.encode_queries(queries)
        _candidate_scores(
            *self._matrix(), terms, weights, offsets, flat.astype(np.int32), starts, scores
        )
        return [
            ranked(documents, scores[starts[q] : starts[q + 1]], self._ids, positive_only=True)
            for q, documents in enumerate(rows)
        ]

    # --- saving ---------------------------------------------------------------------------

    def save(self, path: str | os.PathLike) -> None:
        """Writes the index to directory `path`, replacing it only once complete."""
        with atomic_directory(path, writer=index_writer(KIND)) as staging:
            arrays = (self.data, self.indices, self.indptr, self.passage_documents)
            for name, array in zip(INDEX_FILES, arrays, strict=True):
                np.save(staging / name, np.asarray(array), allow_pickle=False)
            import sentence_transformers

            settings = dict(
                self.settings, sentence_transformers_version=sentence_transformers.__version__
            )
            write_index_files(staging, KIND, settings, self.document_ids, self.provenance)

    @classmethod
    def load(
        cls, path: str | os.PathLike, mmap: bool = False, device: str | None = None
    ) -> SpladeRetriever:
        """Reads an index :meth:`save` wrote; `mmap` maps its arrays instead of reading
        them. The model loads on the first search. A missing, truncated or inconsistent
        file is named (the index must be rebuilt)."""
        path = Path(path)
        settings, document_ids = read_index_files(path, KIND)
        settings.pop("sentence_transformers_version", None)
        provenance = settings.pop("provenance", None)
        for name in INDEX_FILES:
            if not (path / name).is_file():
                raise BadInputError(path / name, None, f"missing, so {REBUILD}")
        data, indices, indptr, owners = (load_npy(path / name, mmap=mmap) for name in INDEX_FILES)
        dimension, postings = settings["dimension"], settings["num_postings"]
        if indptr.shape != (dimension + 1,) or int(indptr[-1]) != postings:
            raise damaged(path / "indptr.npy", f"not the {dimension + 1:,} offsets of the index")
        for name, array in (("data.npy", data), ("indices.npy", indices)):
            if array.shape != (postings,):
                raise damaged(path / name, f"shape {array.shape}, not ({postings:,},) postings")
        if owners.shape != (settings["num_passages"],):
            raise damaged(
                path / "passage_documents.npy",
                f"shape {owners.shape}, not ({settings['num_passages']:,},) passages",
            )
        retriever = cls((data, indices, indptr), owners, document_ids, settings, device=device)
        retriever.provenance = provenance
        return retriever


def _term_major(
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]], dimension: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The (passage row, dimension, weight) triples of every chunk, passages ascending, laid
    out by dimension: (weights, passage rows, offsets), each dimension's rows ascending."""
    rows = np.concatenate([p[0] for p in parts])
    dims = np.concatenate([p[1] for p in parts])
    weights = np.concatenate([p[2] for p in parts])
    parts.clear()
    if len(dims) and int(dims.max()) >= dimension:
        raise ValueError(f"dimension {int(dims.max())} of a {dimension}-d sparse encoder")
    order = np.argsort(dims, kind="stable")  # rows stay ascending within a dimension
    indptr = np.zeros(dimension + 1, dtype=np.int64)
    np.cumsum(np.bincount(dims, minlength=dimension), out=indptr[1:])
    return weights[order], rows[order], indptr
