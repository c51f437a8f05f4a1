"""BM25 over whole documents (title + text), stored in bm25s' format.

Tokens are lower-cased words of two or more letters or digits (bm25s' default pattern),
English stopwords removed, stemmed with PyStemmer's English (Porter 2) stemmer. Scores are
bm25s' defaults (Lucene variant, k1 = 1.5, b = 0.75).

Building and searching are done here with numba kernels rather than by ``bm25s.BM25``,
because bm25s needs every document's token ids as Python lists at once (about 2.5 GB for
1M short documents) and scores queries one at a time in numpy. The build streams documents
in chunks of ``CHUNK_DOCUMENTS``: each chunk is tokenised by bm25s' ``Tokenizer`` and kept
only as int32 arrays of (term, count) pairs, then the score matrix is laid out column by
column the way bm25s builds it (same arithmetic, so the same float32 scores). Search adds
up the query terms' postings, rarest first, skipping the postings of frequent terms when
they cannot change the top k (MaxScore), and rescores the candidates in bm25s' order, so
scores match bm25s' bit for bit (ties: the document indexed first ranks first); queries
run in ``n_threads`` threads (`namesake.retrieval.sparse_search`; the kernels release the
GIL). The kernels are compiled on first use and cached next to this file (a few seconds
once; loading them later takes well under a second).

The build's memory is bounded by ``memory_budget`` (2 GB by default), not by the corpus:
once the tokenised chunks hold a quarter of it, they are written to a temporary folder
(beside the index, when `namesake retrieve` or `amber compare` saves one) and read back one
at a time, and the score matrix is filled memory-mapped in that folder, so its pages belong
to the page cache rather than to the process. The index is the same either way.

An index directory holds bm25s' own files (the score matrix as ``.npy`` arrays, its
vocabulary and parameters as JSON), the tokenizer's vocabulary and stopwords (JSON), the
document ids in index order (``document_ids.arrow``) and ``retriever.json``; indexes
written before this module used numba load unchanged.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Iterable
from itertools import chain, islice
from pathlib import Path

import numba
import numpy as np
import Stemmer
from tqdm.auto import tqdm

from namesake.errors import BadInputError
from namesake.outputs import atomic_directory
from namesake.retrieval.bm25s_without_jax import Tokenizer, bm25s  # never starts JAX
from namesake.retrieval.candidates import candidate_rows, ranked
from namesake.retrieval.corpus import Document
from namesake.retrieval.provenance import new_provenance
from namesake.retrieval.sparse_search import add_postings, offer, pop_best_first, search_top_k
from namesake.retrieval.storage import (
    REBUILD,
    check_npy,
    damaged,
    index_writer,
    read_index_files,
    reading,
    write_index_files,
)

KIND = "bm25"
STEMMER_LANGUAGE = "english"
STOPWORDS = "en"
#: documents tokenised per chunk while building: large enough to amortise the per-chunk
#: numpy calls, small enough that the chunk's Python token lists stay a few MB
CHUNK_DOCUMENTS = 20_000
#: the build's memory budget by default, in bytes (`--memory-budget`)
DEFAULT_MEMORY_BUDGET = 2 * 1024**3
#: the share of the budget the tokenised chunks may hold before they go to disk; the rest
#: is the tokenizer's vocabulary, the document ids and the chunk being tokenised
HELD_SHARE = 0.25
#: the files of a saved index besides retriever.json and document_ids.arrow: bm25s' score
#: matrix and parameters, the tokenizer's vocabulary and stopwords
INDEX_FILES = (
    "data.csc.index.npy",
    "indices.csc.index.npy",
    "indptr.csc.index.npy",
    "params.index.json",
    "vocab.index.json",
    "vocab.tokenizer.json",
    "stopwords.tokenizer.json",
)


def _tokenizer() -> Tokenizer:
    return Tokenizer(stopwords=STOPWORDS, stemmer=Stemmer.Stemmer(STEMMER_LANGUAGE))


# --- numba kernels (cache=True: compiled once, not in every process) --------------------------


@numba.njit(cache=True, nogil=True)
def _term_counts(flat, lengths):
    """Per document of a chunk: its distinct terms (ascending) and their counts."""
    terms = np.empty(flat.size, np.int32)
    counts = np.empty(flat.size, np.int32)
    distinct = np.empty(lengths.size, np.int32)
    out = 0
    start = 0
    for d in range(lengths.size):
        stop = start + lengths[d]
        tokens = np.sort(flat[start:stop])
        first = out
        for i in range(tokens.size):
            if i > 0 and tokens[i] == tokens[i - 1]:
                counts[out - 1] += 1
            else:
                terms[out] = tokens[i]
                counts[out] = 1
                out += 1
        distinct[d] = out - first
        start = stop
    return terms[:out].copy(), counts[:out].copy(), distinct


@numba.njit(cache=True, nogil=True)
def _fill_columns(
    terms, counts, distinct, lengths, first_doc, idf, k1, b, avg_length, heads, data, rows
):
    """Writes one chunk's scores into their columns at `heads` (advanced as it goes).

    The expression and its float64/float32 steps are bm25s' (``_score_tfc_lucene`` times
    the float32 idf, stored as float32), so the matrix equals the one bm25s would build.
    """
    j = 0
    for d in range(distinct.size):
        norm = k1 * ((1.0 - b) + b * lengths[d] / avg_length)
        for _ in range(distinct[d]):
            term = terms[j]
            tf = np.float64(counts[j])
            position = heads[term]
            heads[term] = position + 1
            data[position] = np.float32(np.float64(idf[term]) * (tf / (norm + tf)))
            rows[position] = first_doc + d
            j += 1


@numba.njit(cache=True, nogil=True)
def _column_max(data, indptr):
    """Each term's highest score in any document: a bound on what it adds to a query."""
    out = np.zeros(indptr.size - 1, np.float32)
    for term in range(out.size):
        for j in range(indptr[term], indptr[term + 1]):
            out[term] = max(out[term], data[j])
    return out


@numba.njit(cache=True, nogil=True)
def _score(data, rows, indptr, query, doc):
    """`doc`'s score for the query: float32 sums in query-token order, as bm25s adds them.

    Each term's postings are sorted by document, so its entry is found by bisection.
    """
    score = np.float32(0)
    for term in query:
        low = indptr[term]
        high = indptr[term + 1]
        end = high
        while low < high:
            middle = (low + high) // 2
            if rows[middle] < doc:
                low = middle + 1
            else:
                high = middle
        if low < end and rows[low] == doc:
            score += data[low]
    return score


@numba.njit(cache=True, nogil=True)
def _search_queries(
    data, rows, indptr, column_max, num_docs, tokens, offsets, k, first, last, found_docs,
    found_scores, found,
):  # fmt: skip
    """Top `k` documents with a positive score for queries ``first:last``, best first.

    Exact top k with early termination (MaxScore, term at a time): terms are added rarest
    first into per-document partial scores. Once the k-th best partial score exceeds the
    most that the terms not yet added could give a document (their ``column_max``), no
    document they alone reach can enter the top k, so their long postings are skipped if
    rescoring the remaining candidates is cheaper. Candidates are rescored exactly with
    :func:`_score`, so scores are bit for bit bm25s' and ties go to the lower document
    index; `slack` keeps every bound comparison safe against float32 rounding.
    """
    slack = 1e-4
    accumulator = np.zeros(num_docs, np.float32)
    touched = np.empty(num_docs, np.int32)
    heap_scores = np.empty(k, np.float32)
    heap_docs = np.empty(k, np.int32)
    for q in range(first, last):
        query = tokens[offsets[q] : offsets[q + 1]]
        terms = np.unique(query)
        repeats = np.empty(terms.size, np.float32)  # a repeated query word counts again
        bounds = np.empty(terms.size)
        frequencies = np.empty(terms.size, np.int64)
        for i in range(terms.size):
            repeats[i] = np.sum(query == terms[i])
            bounds[i] = column_max[terms[i]] * repeats[i]
            frequencies[i] = indptr[terms[i] + 1] - indptr[terms[i]]
        order = np.argsort(frequencies, kind="mergesort")
        rest = bounds.sum()
        remaining = frequencies.sum()
        n_touched = 0
        threshold = 0.0
        for i in order:
            n_touched = add_postings(
                data, rows, indptr, terms[i], repeats[i], accumulator, touched, n_touched
            )
            rest = max(0.0, rest - bounds[i])
            remaining -= frequencies[i]
            if n_touched < k or (remaining > 0 and remaining < n_touched):
                continue  # no k-th score yet, or finishing costs less than checking
            size = 0
            for x in range(n_touched):
                size = offer(heap_scores, heap_docs, size, accumulator[touched[x]], touched[x])
            threshold = heap_scores[0]
            if remaining == 0:
                break
            if threshold > rest * (1 + slack):
                candidates = 0
                for x in range(n_touched):
                    if accumulator[touched[x]] + rest >= threshold * (1 - slack):
                        candidates += 1
                if candidates * query.size * 20 < remaining:
                    break
        size = 0
        for x in range(n_touched):
            doc = touched[x]
            if accumulator[doc] + rest >= threshold * (1 - slack):
                size = offer(
                    heap_scores, heap_docs, size, _score(data, rows, indptr, query, doc), doc
                )
            accumulator[doc] = 0
        found[q] = size
        pop_best_first(heap_scores, heap_docs, size, found_scores[q], found_docs[q])


# --- building ---------------------------------------------------------------------------------


class _HeldChunks:
    """The tokenised chunks between the two passes of a build: kept in memory while they
    hold at most `limit` bytes, then written to `folder` (one .npz a chunk, replayed in
    order and deleted as it is read back). Once anything went to disk, the score matrix is
    memory-mapped there too (`output_array`), so the build's own memory does not grow with
    the corpus."""

    def __init__(self, limit: float, folder: Path):
        self.limit, self.folder = limit, folder
        self.held: list[tuple] = []
        self.held_bytes = 0
        self.spilled: list[Path | None] = []  # per chunk in order: its file, or None if held

    def add(self, chunk: tuple) -> None:
        self.held.append(chunk)
        self.spilled.append(None)
        self.held_bytes += sum(a.nbytes for a in chunk)
        if self.held_bytes > self.limit:
            self._spill()

    def _spill(self) -> None:
        first = len(self.spilled) - len(self.held)
        for offset, chunk in enumerate(self.held):
            path = self.folder / f"chunk-{first + offset:06d}.npz"
            np.savez(path, *chunk)
            self.spilled[first + offset] = path
        self.held, self.held_bytes = [], 0

    @property
    def on_disk(self) -> bool:
        return any(path is not None for path in self.spilled)

    def replay(self):
        """Every chunk in order, each released (or its file deleted) once yielded."""
        held = iter(self.held)
        self.held = []
        for path in self.spilled:
            if path is None:
                yield next(held)
                continue
            with np.load(path) as stored:
                chunk = tuple(stored[f"arr_{i}"] for i in range(4))
            path.unlink()
            yield chunk

    def output_array(self, name: str, size: int, dtype) -> np.ndarray:
        if not self.on_disk:
            return np.empty(size, dtype=dtype)
        return np.lib.format.open_memmap(
            self.folder / f"{name}.npy", mode="w+", dtype=dtype, shape=(size,)
        )


def _build_model(
    chunks: _HeldChunks,
    document_frequency: np.ndarray,
    total_length: int,
    n_docs: int,
    vocab: dict,
    show_progress: bool,
) -> bm25s.BM25:
    """A ``bm25s.BM25`` holding the score matrix of the (consumed) `chunks`.

    Sets the attributes ``bm25s.BM25.index`` sets, so bm25s can save and load the model.
    When chunks went to disk, the matrix is written into memory-mapped files beside them:
    its pages are the page cache's, not the process's own memory.
    """
    model = bm25s.BM25()
    avg_length = total_length / n_docs  # what bm25s' mean of the lengths gives, exactly
    # math.log per term, as bm25s' _score_idf_lucene, for bit-identical float32 idf
    idf = np.array(
        [
            math.log(1 + (n_docs - df + 0.5) / (df + 0.5)) if df else 0.0
            for df in document_frequency.tolist()
        ],
        dtype=np.float32,
    )
    indptr = np.zeros(len(document_frequency) + 1, dtype=np.int64)
    np.cumsum(document_frequency, out=indptr[1:])
    heads = indptr[:-1].copy()
    data = chunks.output_array("data", int(indptr[-1]), np.float32)
    rows = chunks.output_array("indices", int(indptr[-1]), np.int32)
    progress = tqdm(total=n_docs, desc="BM25 scoring", unit="doc", disable=not show_progress)
    first_doc = 0
    for terms, counts, distinct, lengths in chunks.replay():
        _fill_columns(
            terms,
            counts,
            distinct,
            lengths,
            first_doc,
            idf,
            model.k1,
            model.b,
            avg_length,
            heads,
            data,
            rows,
        )
        first_doc += len(lengths)
        progress.update(len(lengths))
    progress.close()
    model.scores = {"data": data, "indices": rows, "indptr": indptr, "num_docs": n_docs}
    model.vocab_dict = vocab
    model.unique_token_ids_set = set(vocab.values())
    model.nonoccurrence_array = None
    return model


class BM25Retriever:
    """Ranks documents for a query with BM25; see the module docstring."""

    candidate_rows = candidate_rows
    #: the kind its retriever.json records
    INDEX_KIND = KIND
    #: the models a reopening command may name (see namesake.retrieval.provenance): none
    NAMED_MODELS: dict[str, tuple[str, str]] = {}
    #: what built it (namesake.retrieval.provenance), recorded by save
    provenance: dict | None = None

    def __init__(self, model: bm25s.BM25, tokenizer: Tokenizer, document_ids: list[str]):
        self.model = model
        self.tokenizer = tokenizer
        self.document_ids = document_ids
        self._ids = np.asarray(document_ids, dtype=object)
        self._empty_token = tokenizer.word_to_id.get("")
        self._column_max = None  # see _search_queries
        #: threads for scoring queries: -1 (the default) = one per CPU, 0 = the calling thread
        self.n_threads = -1

    @classmethod
    def build(
        cls,
        documents: Iterable[Document],
        show_progress: bool = True,
        chunk_documents: int = CHUNK_DOCUMENTS,
        memory_budget: int = DEFAULT_MEMORY_BUDGET,
        spill_dir: str | os.PathLike | None = None,
    ) -> BM25Retriever:
        """Indexes `documents` (streamed once; only int32 term counts are kept per chunk).

        Bounded memory: once the tokenised chunks hold more than a quarter of
        `memory_budget` bytes, they go to a temporary folder under `spill_dir` (default: the
        system's temporary folder), and the score matrix is built memory-mapped beside them.
        The folder is removed before this returns; the mapped matrix stays readable until
        the retriever is saved or dropped. The index is the same, bit for bit."""
        if chunk_documents < 1:
            raise ValueError(f"chunk_documents must be positive, not {chunk_documents}")
        if memory_budget < 1:
            raise ValueError(f"memory_budget must be positive, not {memory_budget}")
        with tempfile.TemporaryDirectory(
            prefix="bm25-build-", dir=spill_dir, ignore_cleanup_errors=True
        ) as folder:
            chunks = _HeldChunks(memory_budget * HELD_SHARE, Path(folder))
            return cls._build(documents, show_progress, chunk_documents, chunks)

    @classmethod
    def _build(
        cls, documents: Iterable[Document], show_progress: bool, chunk_documents: int, chunks
    ) -> BM25Retriever:
        tokenizer = _tokenizer()
        document_ids: list[str] = []

        def texts():
            for document in documents:
                document_ids.append(document.wikipedia_id)
                yield f"{document.title} {document.text}"

        progress = tqdm(texts(), desc="BM25 tokenising", unit="doc", disable=not show_progress)
        token_ids = tokenizer.streaming_tokenize(progress, update_vocab=True)
        document_frequency = np.zeros(0, dtype=np.int64)
        total_length = 0
        while batch := list(islice(token_ids, chunk_documents)):
            lengths = np.fromiter(map(len, batch), dtype=np.int32, count=len(batch))
            flat = np.fromiter(chain.from_iterable(batch), dtype=np.int32, count=int(lengths.sum()))
            del batch
            terms, counts, distinct = _term_counts(flat, lengths)
            chunk_frequency = np.bincount(terms, minlength=len(document_frequency))
            chunk_frequency[: len(document_frequency)] += document_frequency
            document_frequency = chunk_frequency
            total_length += int(lengths.sum())
            if counts.max() <= np.iinfo(np.uint16).max:  # 2 bytes less per pair held
                counts = counts.astype(np.uint16)
            chunks.add((terms, counts, distinct, lengths))
        progress.close()
        if not document_ids:
            raise ValueError("no documents to index")
        vocab = tokenizer.get_vocab_dict()
        document_frequency = np.pad(document_frequency, (0, len(vocab) - len(document_frequency)))
        model = _build_model(
            chunks, document_frequency, total_length, len(document_ids), vocab, show_progress
        )
        retriever = cls(model, tokenizer, document_ids)
        retriever.provenance = new_provenance()
        return retriever

    def __len__(self) -> int:
        return len(self.document_ids)

    def _query_tokens(self, queries: list[str]) -> list[list[int]]:
        """Each query's token ids (none for a query of only stopwords or unknown words)."""
        query_ids = self.tokenizer.tokenize(
            list(queries), update_vocab=False, show_progress=False, return_as="ids"
        )
        return [[] if tokens == [self._empty_token] else tokens for tokens in query_ids]

    def _score_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The term-major score matrix as plain (possibly read-only) arrays for numba, also
        when memory-mapped."""
        scores = self.model.scores
        return tuple(np.asarray(scores[name]) for name in ("data", "indices", "indptr"))

    def search(self, queries: list[str], k: int) -> list[list[tuple[str, float]]]:
        """Per query, up to `k` (document id, score) pairs, best first.

        Documents that share no token with the query (score 0) are left out, so a query of
        only stopwords or unknown words gets an empty list. Equal scores rank the document
        indexed first first.
        """
        if isinstance(queries, str):
            raise TypeError("queries must be a list of strings, not one string")
        if k < 1 or not queries:
            return [[] for _ in queries]
        query_ids = self._query_tokens(queries)
        lengths = np.fromiter(map(len, query_ids), dtype=np.int64, count=len(query_ids))
        offsets = np.zeros(len(query_ids) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        tokens = np.fromiter(chain.from_iterable(query_ids), dtype=np.int32, count=int(offsets[-1]))
        data, rows, indptr = self._score_arrays()
        if self._column_max is None:  # one pass over the matrix, on the first search
            self._column_max = _column_max(data, indptr)
        matrix = (data, rows, indptr, self._column_max, int(self.model.scores["num_docs"]))
        return search_top_k(
            _search_queries,
            (*matrix, tokens, offsets),
            len(query_ids),
            k,
            self.n_threads,
            self._ids,
        )

    def rank_candidates(
        self, queries: list[str], candidates: list[list[str]]
    ) -> list[list[tuple[str, float]]]:
        """Per query, its candidate pages ranked as :meth:`search` ranks them (same scores,
        pages with score 0 left out); see ``namesake.retrieval.candidates``."""
        data, rows, indptr = self._score_arrays()
        results = []
        for tokens, pages in zip(self._query_tokens(queries), candidates, strict=True):
            query = np.asarray(tokens, dtype=np.int32)
            documents = self.candidate_rows(pages)
            scores = [_score(data, rows, indptr, query, int(doc)) for doc in documents]
            results.append(ranked(documents, np.asarray(scores), self._ids, positive_only=True))
        return results

    def save(self, path: str | os.PathLike) -> None:
        """Writes the index to directory `path`, replacing it only once complete."""
        with atomic_directory(path, writer=index_writer(KIND)) as staging:
            self.model.save(str(staging), show_progress=False)
            self.tokenizer.save_vocab(str(staging))
            self.tokenizer.save_stopwords(str(staging))
            settings = {
                "num_documents": len(self.document_ids),
                "stemmer": STEMMER_LANGUAGE,
                "stopwords": STOPWORDS,
                "bm25s_version": bm25s.__version__,
            }
            write_index_files(staging, KIND, settings, self.document_ids, self.provenance)

    @classmethod
    def load(cls, path: str | os.PathLike, mmap: bool = False) -> BM25Retriever:
        """Reads an index :meth:`save` wrote; `mmap` maps the score arrays instead. A file
        that is missing, truncated or unreadable is named (the index must be rebuilt)."""
        path = Path(path)
        settings, document_ids = read_index_files(path, KIND)
        for name in INDEX_FILES:
            if not (path / name).is_file():
                raise BadInputError(path / name, None, f"missing, so {REBUILD}")
        for file in sorted(path.glob("*.npy")):
            check_npy(file)
        try:
            with reading(path):
                model = bm25s.BM25.load(str(path), mmap=mmap, show_progress=False)
                tokenizer = _tokenizer()
                tokenizer.load_vocab(str(path))
                tokenizer.load_stopwords(str(path))
        except BadInputError:
            for file in sorted(path.glob("*.json")):  # name the file that does not parse
                with reading(file):
                    json.loads(file.read_text(encoding="utf-8"))
            raise
        scores = model.scores
        if (
            int(scores["num_docs"]) != len(document_ids)
            or len(scores["indptr"]) != len(model.vocab_dict) + 1
            or not len(scores["data"]) == len(scores["indices"]) == int(scores["indptr"][-1])
        ):
            raise damaged(
                path / "data.csc.index.npy",
                "the score matrix disagrees with its vocabulary or with document_ids.arrow",
            )
        retriever = cls(model, tokenizer, document_ids)
        retriever.provenance = settings.get("provenance")
        return retriever
