"""DrQA's TF-IDF retriever (the AmbER paper's and KILT's sparse baseline) at full-KILT scale.

Features: scikit-learn's ``HashingVectorizer`` over title + text, lower-cased words of two or
more letters or digits, scikit-learn's English stopwords removed, unigrams and bigrams
hashed (MurmurHash3) into 2^24 buckets, like DrQA's ``--ngram 2 --hash-size 16777216``.
One difference: DrQA drops every bigram that holds a stopword, while scikit-learn removes the
stopwords first, so "bank of america" gives the bigram "bank america" here.

Weights are DrQA's (``drqa/retriever/build_tfidf.py`` and ``tfidf_doc_ranker.py``)::

    idf(t)      = max(0, log((N - df(t) + 0.5) / (df(t) + 0.5)))   # N documents
    doc(d, t)   = log(1 + tf(d, t)) * idf(t)
    query(q, t) = log(1 + tf(q, t)) * idf(t) / ||log(1 + tf(q, .)) * idf(.)||_2
    score(q, d) = sum_t query(q, t) * doc(d, t)

scikit-learn's ``TfidfTransformer`` is not used: its idf is ``log((1 + N) / (1 + df)) + 1``
and its sublinear tf ``1 + log(tf)``, so its scores and rankings would not be DrQA's. The
idf needs every document's frequencies, so the index stores ``log(1 + tf)`` only and the
document side's idf is folded into the query weights at search time (``query * idf``):
the same scores, and the build never revisits a document.

The build streams documents: batches of ``batch_documents`` are hashed (in ``workers``
processes when > 1) into scipy CSR matrices; every ``shard_documents`` documents the shard
is turned term-major (CSC) and written as ``shard-NNNNN.{indptr,indices,data}.npy`` (int32
or int64 ``indptr`` over the 2^24 buckets, int32 row in the shard, float32 ``log(1 + tf)``),
and its document frequencies are added up. Shards are written to a temporary folder, hard
linked into the index folder by :meth:`TfidfRetriever.save`. Search gathers the postings of
a batch of queries' buckets from every (memory-mapped) shard, multiplies with scipy
(``queries x buckets @ buckets x documents``), keeps each shard's top k and merges them;
batches run in threads.
Scores do not depend on the shard size: ties rank the document indexed first first.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import weakref
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from itertools import islice
from pathlib import Path

import numpy as np
import scipy.sparse as sp
import sklearn
from sklearn.feature_extraction.text import HashingVectorizer
from tqdm.auto import tqdm

from namesake.errors import BadInputError, NamesakeError
from namesake.outputs import atomic_directory
from namesake.retrieval.candidates import candidate_rows, ranked
from namesake.retrieval.corpus import Document
from namesake.retrieval.provenance import new_provenance
from namesake.retrieval.storage import (
    REBUILD,
    damaged,
    index_writer,
    load_npy,
    read_index_files,
    write_index_files,
)

KIND = "tfidf"
N_FEATURES = 2**24  # DrQA's hash size
NGRAM_RANGE = (1, 2)
STOP_WORDS = "english"
#: documents per shard: ~750 postings per KILT page x 8 bytes = ~1.5 GB of postings, held
#: twice while the shard is turned term-major (see benchmarks/README.md, "TF-IDF (DrQA)")
SHARD_DOCUMENTS = 250_000
#: a shard is also closed at this many postings, so that no page mix can outgrow memory
SHARD_POSTINGS = 2**28
#: documents hashed per call (one worker task): small enough for a few MB of text
BATCH_DOCUMENTS = 2_000
#: queries scored together: bounds the (queries x shard documents) sparse product
QUERY_BATCH = 128
FORMULA = "log1p(tf) * max(0, log((N - df + 0.5) / (df + 0.5))), query L2-normalised (DrQA)"
SHARD_ARRAYS = ("indptr", "indices", "data")
DOCUMENT_FREQUENCY_FILE = "document_frequency.npy"


def vectorizer() -> HashingVectorizer:
    """The hashing of documents and queries: DrQA's n-grams and hash size, term counts."""
    return HashingVectorizer(
        ngram_range=NGRAM_RANGE,
        n_features=N_FEATURES,
        alternate_sign=False,
        norm=None,
        stop_words=STOP_WORDS,
        dtype=np.float32,
    )


def idf(document_frequency: np.ndarray, num_documents: int) -> np.ndarray:
    """DrQA's idf per bucket (float64), 0 for buckets in more than half of the documents."""
    df = document_frequency.astype(np.float64)
    return np.maximum(0.0, np.log((num_documents - df + 0.5) / (df + 0.5)))


def _log_tf(texts: list[str]) -> sp.csr_matrix:
    """Documents x buckets, ``log(1 + tf)`` as float32 (top level: runs in worker processes)."""
    counts = vectorizer().transform(texts)
    np.log1p(counts.data, out=counts.data)
    return counts


def _hashed_batches(
    texts: Iterator[str], batch_documents: int, workers: int
) -> Iterator[sp.csr_matrix]:
    """`texts` hashed batch by batch, in order; at most 2 batches per worker in flight."""
    batches = iter(lambda: list(islice(texts, batch_documents)), [])
    if workers == 1:
        yield from map(_log_tf, batches)
        return
    with ProcessPoolExecutor(max_workers=workers) as pool:
        pending = deque()
        for batch in batches:
            pending.append(pool.submit(_log_tf, batch))
            if len(pending) >= 2 * workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def _shard_path(folder: Path, shard: int, array: str) -> Path:
    return folder / f"shard-{shard:05d}.{array}.npy"


def _write_shard(folder: Path, shard: int, batches: list[sp.csr_matrix]) -> np.ndarray:
    """Writes one shard term-major; returns its document frequency per bucket."""
    matrix = sp.vstack(batches, format="csr")
    batches.clear()
    matrix = matrix.tocsc()
    for array in SHARD_ARRAYS:
        np.save(_shard_path(folder, shard, array), getattr(matrix, array))
    return np.diff(matrix.indptr)


class _Shard:
    """One shard's term-major postings (memory-mapped or in memory)."""

    def __init__(self, folder: Path, shard: int, mmap: bool):
        arrays = {}
        for array in SHARD_ARRAYS:
            path = _shard_path(folder, shard, array)
            if not path.is_file():
                raise BadInputError(folder, None, f"TF-IDF index lacks {path.name}, so {REBUILD}")
            arrays[array] = load_npy(path, mmap=mmap)
        self.indptr, self.indices, self.data = (arrays[array] for array in SHARD_ARRAYS)
        if self.indptr.shape != (N_FEATURES + 1,) or self.indices.shape != self.data.shape:
            raise damaged(_shard_path(folder, shard, "indptr"), "shard arrays of the wrong shape")
        if int(self.indptr[-1]) != len(self.indices):
            raise damaged(
                _shard_path(folder, shard, "indptr"),
                f"{int(self.indptr[-1]):,} postings, its other arrays {len(self.indices):,}",
            )

    def postings(self, buckets: np.ndarray, num_documents: int) -> sp.csr_matrix:
        """Buckets x documents of the shard: the rows of `buckets` (sorted, distinct)."""
        starts = self.indptr[buckets].astype(np.int64)
        lengths = self.indptr[buckets + 1].astype(np.int64) - starts
        indptr = np.zeros(len(buckets) + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        # positions of the concatenated ranges starts[i] : starts[i] + lengths[i]
        positions = np.arange(indptr[-1], dtype=np.int64) + np.repeat(starts - indptr[:-1], lengths)
        return sp.csr_matrix(
            (self.data[positions], self.indices[positions], indptr),
            shape=(len(buckets), num_documents),
        )


def _top(scores: np.ndarray, documents: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The `k` best (score, document) pairs, best first; equal scores: lower document first."""
    if scores.size > k:
        kth = np.partition(scores, scores.size - k)[scores.size - k]
        keep = scores >= kth
        scores, documents = scores[keep], documents[keep]
    order = np.lexsort((documents, -scores))[:k]
    return scores[order], documents[order]


class TfidfRetriever:
    """Ranks documents for a query with DrQA's hashed bigram TF-IDF; see the module docstring."""

    candidate_rows = candidate_rows
    #: the kind its retriever.json records
    INDEX_KIND = KIND
    #: the models a reopening command may name (see namesake.retrieval.provenance): none
    NAMED_MODELS: dict[str, tuple[str, str]] = {}
    #: what built it (namesake.retrieval.provenance), recorded by save
    provenance: dict | None = None

    def __init__(
        self,
        folder: str | os.PathLike,
        document_ids: list[str],
        shard_sizes: list[int],
        mmap: bool = True,
    ):
        folder = Path(folder)
        if sum(shard_sizes) != len(document_ids):
            raise BadInputError(
                folder, None, f"shards hold {sum(shard_sizes)} documents, ids {len(document_ids)}"
            )
        self.folder = folder
        self.document_ids = document_ids
        self.shard_sizes = list(shard_sizes)
        self._ids = np.asarray(document_ids, dtype=object)
        self._shards = [_Shard(folder, shard, mmap) for shard in range(len(shard_sizes))]
        frequency = load_npy(folder / DOCUMENT_FREQUENCY_FILE)
        if frequency.shape != (N_FEATURES,):
            raise damaged(folder / DOCUMENT_FREQUENCY_FILE, "of the wrong shape")
        self.idf = idf(frequency, len(document_ids))
        self._vectorizer = vectorizer()
        #: threads scoring query batches: -1 (the default) = one per CPU, 0 = the calling
        #: thread (scipy's products and numpy's partitions release the GIL)
        self.n_threads = -1

    @classmethod
    def build(
        cls,
        documents: Iterable[Document],
        show_progress: bool = True,
        shard_documents: int = SHARD_DOCUMENTS,
        batch_documents: int = BATCH_DOCUMENTS,
        workers: int = 1,
        temp_dir: str | os.PathLike | None = None,
    ) -> TfidfRetriever:
        """Indexes `documents` (streamed once) into shards under a new folder in `temp_dir`
        (default: the system's temporary folder; a full KILT index takes ~30 GB there until
        :meth:`save` links it into place). `workers` > 1 hashes in that many processes."""
        for name, value in (
            ("shard_documents", shard_documents),
            ("batch_documents", batch_documents),
            ("workers", workers),
        ):
            if value < 1:
                raise ValueError(f"{name} must be positive, not {value}")
        folder = Path(tempfile.mkdtemp(prefix="namesake-tfidf-", dir=temp_dir))
        try:
            document_ids, shard_sizes = _build_shards(
                documents, folder, shard_documents, batch_documents, workers, show_progress
            )
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        retriever = cls(folder, document_ids, shard_sizes)
        weakref.finalize(retriever, shutil.rmtree, folder, True)  # mapped files stay readable
        retriever.provenance = new_provenance()
        return retriever

    def __len__(self) -> int:
        return len(self.document_ids)

    def query_weights(self, queries: list[str]) -> sp.csr_matrix:
        """Queries x buckets: DrQA's normalised query vectors times the documents' idf."""
        weights = self._vectorizer.transform(queries).astype(np.float64)
        np.log1p(weights.data, out=weights.data)
        weights.data *= self.idf[weights.indices]
        norms = np.sqrt(np.asarray(weights.multiply(weights).sum(axis=1)).ravel())
        lengths = np.diff(weights.indptr)
        weights.data /= np.repeat(np.where(norms > 0, norms, 1.0), lengths)
        weights.data *= self.idf[weights.indices]  # the document side's idf
        weights.eliminate_zeros()  # buckets with idf 0 add nothing
        return weights

    def search(self, queries: list[str], k: int) -> list[list[tuple[str, float]]]:
        """Per query, up to `k` (document id, score) pairs, best first.

        Documents that share no weighted n-gram with the query (score 0) are left out, so a
        query of only stopwords gets an empty list.
        """
        if isinstance(queries, str):
            raise TypeError("queries must be a list of strings, not one string")
        if k < 1 or not queries:
            return [[] for _ in queries]
        k = min(k, len(self.document_ids))
        batches = [list(queries[i : i + QUERY_BATCH]) for i in range(0, len(queries), QUERY_BATCH)]
        threads = os.cpu_count() if self.n_threads == -1 else max(1, self.n_threads)
        if threads == 1 or len(batches) == 1:
            return [ranking for batch in batches for ranking in self._search_batch(batch, k)]
        with ThreadPoolExecutor(max_workers=threads) as pool:
            found = pool.map(self._search_batch, batches, [k] * len(batches))
            return [ranking for rankings in found for ranking in rankings]

    def _compact_weights(self, queries: list[str]) -> tuple[sp.csr_matrix, np.ndarray]:
        """The queries' weights over only their buckets (columns renumbered to
        0..len(buckets)-1), and those buckets, sorted."""
        weights = self.query_weights(queries)
        buckets = np.unique(weights.indices)
        compact = sp.csr_matrix(
            (weights.data, np.searchsorted(buckets, weights.indices), weights.indptr),
            shape=(len(queries), len(buckets)),
        )
        return compact, buckets

    def _search_batch(self, queries: list[str], k: int) -> list[list[tuple[str, float]]]:
        compact, buckets = self._compact_weights(queries)
        found: list[list[tuple[np.ndarray, np.ndarray]]] = [[] for _ in queries]
        first = 0
        for shard, size in zip(self._shards, self.shard_sizes, strict=True):
            scores = (compact @ shard.postings(buckets, size)).tocsr()
            for q in range(len(queries)):
                row = slice(scores.indptr[q], scores.indptr[q + 1])
                if row.start < row.stop:
                    top = _top(scores.data[row], scores.indices[row].astype(np.int64) + first, k)
                    found[q].append(top)
            first += size
        results = []
        for parts in found:
            if not parts:
                results.append([])
                continue
            scores = np.concatenate([scores for scores, _ in parts])
            documents = np.concatenate([documents for _, documents in parts])
            scores, documents = _top(scores, documents, k)
            positive = scores > 0
            results.append(
                list(
                    zip(
                        self._ids[documents[positive]].tolist(),
                        scores[positive].tolist(),
                        strict=True,
                    )
                )
            )
        return results

    def rank_candidates(
        self, queries: list[str], candidates: list[list[str]]
    ) -> list[list[tuple[str, float]]]:
        """Per query, its candidate pages ranked as :meth:`search` ranks them (same scores,
        pages with score 0 left out); see ``namesake.retrieval.candidates``."""
        results: list[list[tuple[str, float]]] = []
        for start in range(0, len(queries), QUERY_BATCH):
            end = start + QUERY_BATCH
            results += self._rank_batch(list(queries[start:end]), candidates[start:end])
        return results

    def _rank_batch(
        self, queries: list[str], candidates: list[list[str]]
    ) -> list[list[tuple[str, float]]]:
        rows = [self.candidate_rows(pages) for pages in candidates]
        wanted = np.unique(np.concatenate([np.zeros(0, np.int64), *rows]))
        compact, buckets = self._compact_weights(queries)
        scores = np.zeros((len(queries), len(wanted)))
        first = 0
        for shard, size in zip(self._shards, self.shard_sizes, strict=True):
            inside = (wanted >= first) & (wanted < first + size)
            if inside.any():
                postings = shard.postings(buckets, size)[:, wanted[inside] - first]
                scores[:, inside] = (compact @ postings).toarray()
            first += size
        return [
            ranked(found, scores[q, np.searchsorted(wanted, found)], self._ids, positive_only=True)
            for q, found in enumerate(rows)
        ]

    def save(self, path: str | os.PathLike) -> None:
        """Writes the index to directory `path`, replacing it only once complete.

        The shard files are hard-linked when `path` is on the same file system as the
        index's folder (no copy of the postings), copied otherwise.
        """
        with atomic_directory(path, writer=index_writer(KIND)) as staging:
            names = [DOCUMENT_FREQUENCY_FILE] + [
                _shard_path(Path(), shard, array).name
                for shard in range(len(self.shard_sizes))
                for array in SHARD_ARRAYS
            ]
            for name in names:
                try:
                    os.link(self.folder / name, staging / name)
                except OSError:
                    shutil.copyfile(self.folder / name, staging / name)
            settings = {
                "num_documents": len(self.document_ids),
                "shard_sizes": self.shard_sizes,
                "n_features": N_FEATURES,
                "ngram_range": list(NGRAM_RANGE),
                "stop_words": STOP_WORDS,
                "formula": FORMULA,
                "sklearn_version": sklearn.__version__,
            }
            write_index_files(staging, KIND, settings, self.document_ids, self.provenance)

    @classmethod
    def load(cls, path: str | os.PathLike, mmap: bool = True) -> TfidfRetriever:
        """Reads an index :meth:`save` wrote. By default the postings are memory-mapped (a
        full KILT index is ~30 GB); ``mmap=False`` reads them into memory."""
        settings, document_ids = read_index_files(path, KIND)
        if settings.get("n_features") != N_FEATURES or settings.get("stop_words") != STOP_WORDS:
            raise BadInputError(path, None, "TF-IDF index built with other hashing settings")
        retriever = cls(path, document_ids, settings["shard_sizes"], mmap=mmap)
        retriever.provenance = settings.get("provenance")
        return retriever


def _build_shards(
    documents: Iterable[Document],
    folder: Path,
    shard_documents: int,
    batch_documents: int,
    workers: int,
    show_progress: bool,
) -> tuple[list[str], list[int]]:
    """Hashes and writes the shards and the document frequencies; returns the document ids
    in index order and the shard sizes."""
    document_ids: list[str] = []

    def texts() -> Iterator[str]:
        for document in documents:
            document_ids.append(document.wikipedia_id)
            yield f"{document.title} {document.text}"

    progress = tqdm(desc="TF-IDF hashing", unit="doc", disable=not show_progress)
    frequency = np.zeros(N_FEATURES, dtype=np.int64)
    shard_sizes: list[int] = []
    pending: list[sp.csr_matrix] = []
    pending_documents = pending_postings = 0

    def close_shard() -> None:
        nonlocal pending_documents, pending_postings
        frequency[:] += _write_shard(folder, len(shard_sizes), pending)
        shard_sizes.append(pending_documents)
        pending_documents = pending_postings = 0

    for matrix in _hashed_batches(texts(), batch_documents, workers):
        progress.update(matrix.shape[0])
        while matrix.shape[0]:  # a batch may straddle the end of a shard
            room = shard_documents - pending_documents
            part, matrix = matrix[:room], matrix[room:]
            pending.append(part)
            pending_documents += part.shape[0]
            pending_postings += part.nnz
            if pending_documents == shard_documents or pending_postings >= SHARD_POSTINGS:
                close_shard()
    if pending_documents:
        close_shard()
    progress.close()
    if not document_ids:
        raise NamesakeError("no documents to index: the corpus is empty")
    np.save(folder / DOCUMENT_FREQUENCY_FILE, frequency)
    return document_ids, shard_sizes
