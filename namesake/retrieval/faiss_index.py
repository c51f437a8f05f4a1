"""FAISS indexes built from an embeddings folder without holding every vector in RAM.

``namesake index`` reads the float16 chunks that ``namesake encode`` wrote, memory-mapped,
and builds one of:

- ``flat``: exact inner product (``IndexFlatIP``); 4 bytes × dimension per passage.
- ``hnsw``: ``IndexHNSWFlat`` (M = 32); fast, exact vectors kept, so as large as flat
  and more.
- ``ivf``: ``IVF{nlist},Flat``; exact vectors in ``nlist ≈ 4√n`` lists.
- ``ivfpq``: the compressed one, ``IVF{nlist},PQ{m}x4fs``: ``nlist ≈ 2√n`` lists and
  ``m`` 4-bit product-quantiser codes per passage, scanned with SIMD ("fast scan"), plus
  the 8-byte id IVF keeps: 56 bytes per 384-d passage (m = 96) instead of 1,536. Its
  approximate scores are re-ranked exactly against the stored float16 vectors
  (``rerank_candidates``; see :class:`namesake.retrieval.dense.DenseRetriever`). Why this
  one (``benchmarks/README.md``, "Compressed index"): on 1M vectors it found 0.955 of the
  exact top 100 at 10-11× flat's speed within 61 bytes a vector, where 8-bit PQ (with or
  without OPQ) either missed the recall or the speed, because scanning 8-bit codes is too
  slow to probe the share of lists (~12%) that recall needs.

Trained indexes (ivf, ivfpq) are trained on a random sample of the passages (``train_size``
rows drawn across all chunks), then filled chunk by chunk, so peak memory is the index
itself plus one chunk. With ``shards = S``, the chunks are split into ``S`` consecutive
ranges and each gets an index of its own (trained once, copied): no single index, and no
merge, has to hold the whole corpus; search asks every shard and merges the top hits.

GPU: when faiss reports GPUs (faiss-gpu installed), training and adding run on all of
them and the result is copied back to the CPU for writing; otherwise everything runs on
the CPU.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence

import faiss
import numpy as np
from tqdm.auto import tqdm

from namesake.errors import BadInputError
from namesake.retrieval.embeddings import EmbeddingsFolder

INDEX_TYPES = ("flat", "hnsw", "ivf", "ivfpq")
HNSW_M = 32
HNSW_EF_CONSTRUCTION = 40
DEFAULT_TRAIN_SIZE = 400_000  # ≥ 39 vectors per list up to ~10,000 lists (25M passages)
#: 4-bit product-quantiser codes per vector for ``ivfpq``, at most (a divisor of the dimension)
MAX_PQ_CODES = 96
SEARCH_DEFAULTS = {"ivf": {"nprobe": 32}, "ivfpq": {"nprobe": 256}, "hnsw": {"ef_search": 128}}


def ivf_lists(passages: int) -> int:
    """IVF list count: about 4·√passages, at least 1, at most one per passage."""
    return max(1, min(passages, round(4 * math.sqrt(passages))))


def fast_scan_lists(passages: int) -> int:
    """``ivfpq`` list count: about 2·√passages (fewer, longer lists than ``ivf``: fast scan
    reads long lists cheaply, and each list's centroid costs 4 bytes × dimension)."""
    return max(1, min(passages, round(2 * math.sqrt(passages))))


def pq_codes(dimension: int) -> int:
    """The largest divisor of `dimension` that is at most MAX_PQ_CODES (PQ needs one)."""
    return max(m for m in range(1, MAX_PQ_CODES + 1) if dimension % m == 0)


def factory_string(kind: str, dimension: int, passages: int) -> str:
    """The ``faiss.index_factory`` description of an index type for this many passages."""
    if kind == "flat":
        return "Flat"
    if kind == "hnsw":
        return f"HNSW{HNSW_M},Flat"
    if kind == "ivf":
        return f"IVF{ivf_lists(passages)},Flat"
    if kind == "ivfpq":
        return f"IVF{fast_scan_lists(passages)},PQ{pq_codes(dimension)}x4fs"
    raise ValueError(f"index type must be one of {', '.join(INDEX_TYPES)}, not {kind!r}")


def new_index(factory: str, dimension: int, normalized: bool) -> faiss.Index:
    """An empty inner-product index from a factory string (spherical k-means for cosine)."""
    index = faiss.index_factory(dimension, factory, faiss.METRIC_INNER_PRODUCT)
    if "HNSW" in factory:
        faiss.downcast_index(index).hnsw.efConstruction = HNSW_EF_CONSTRUCTION
    try:
        ivf = faiss.extract_index_ivf(index)
    except RuntimeError:  # not an IVF index
        ivf = None
    if ivf is not None:
        ivf.cp.spherical = normalized  # centroids on the unit sphere, as the vectors are
    return index


def training_sample(folder: EmbeddingsFolder, size: int, seed: int = 0) -> np.ndarray:
    """`size` passages drawn uniformly from every chunk (all of them if fewer), float32."""
    rng = np.random.default_rng(seed)
    total = folder.num_passages
    rows = np.arange(total) if size >= total else np.sort(rng.choice(total, size, replace=False))
    return folder.passage_vectors(rows)


def set_search_parameters(index: faiss.Index, **parameters) -> None:
    """Sets ``nprobe`` / ``ef_search`` on an index (inside an OPQ transform as well)."""
    if "nprobe" in parameters:
        ivf = faiss.extract_index_ivf(index)
        ivf.nprobe = max(1, min(int(parameters["nprobe"]), ivf.nlist))
    if "ef_search" in parameters:
        faiss.downcast_index(index).hnsw.efSearch = max(1, int(parameters["ef_search"]))


def on_gpus(index: faiss.Index, use_gpu: bool | None = None) -> tuple[faiss.Index, bool]:
    """The index copied to every GPU faiss sees (and True), or itself on the CPU (and False).

    `use_gpu` None means "when there are GPUs"; types without a GPU version (HNSW, fast-scan
    PQ) stay on the CPU.
    """
    hnsw = isinstance(faiss.downcast_index(index), faiss.IndexHNSW)
    if use_gpu is False or hnsw or faiss.get_num_gpus() == 0:
        return index, False
    try:
        return faiss.index_cpu_to_all_gpus(index), True
    except RuntimeError:  # no GPU version of this index type (fast-scan PQ): stay on the CPU
        return index, False


def build_shards(
    folder: EmbeddingsFolder,
    factory: str,
    shards: int = 1,
    train_size: int = DEFAULT_TRAIN_SIZE,
    use_gpu: bool | None = None,
    show_progress: bool = True,
) -> list[tuple[int, faiss.Index]]:
    """One index per consecutive range of chunks, as (first passage number, index) pairs.

    The trained (empty) index is copied for each shard; vectors are added chunk by chunk
    from the memory-mapped float16 files, as float32.
    """
    if not 1 <= shards <= folder.num_chunks:
        raise ValueError(f"shards must be between 1 and the {folder.num_chunks} chunks")
    template = new_index(factory, folder.dimension, folder.settings["normalized"])
    if not template.is_trained:
        sample = training_sample(folder, train_size)
        minimum = _min_training_points(factory, template)
        if len(sample) < minimum:
            raise BadInputError(
                folder.path,
                None,
                f"{factory} needs at least {minimum} passages to train, this folder has "
                f"{len(sample)}: use a smaller index (flat, hnsw) or more passages",
            )
        trained, gpu = on_gpus(template, use_gpu)
        trained.train(sample)
        template = faiss.index_gpu_to_cpu(trained) if gpu else trained
        del sample
    bounds = np.linspace(0, folder.num_chunks, shards + 1).round().astype(int)
    built = []
    progress = tqdm(
        total=folder.num_passages, desc="Indexing", unit="passage", disable=not show_progress
    )
    with progress:
        for first, stop in zip(bounds[:-1], bounds[1:], strict=True):
            index, gpu = on_gpus(faiss.clone_index(template), use_gpu)
            for chunk in folder.chunks(int(first), int(stop)):
                index.add(np.asarray(chunk.embeddings, dtype=np.float32))
                progress.update(len(chunk.embeddings))
            index = faiss.index_gpu_to_cpu(index) if gpu else index
            built.append((int(first) * folder.chunk_passages, index))
    return built


def _min_training_points(factory: str, index: faiss.Index) -> int:
    """Fewest training vectors faiss accepts: one per IVF list, 256 per PQ codebook."""
    try:
        minimum = faiss.extract_index_ivf(index).nlist
    except RuntimeError:  # not an IVF index
        minimum = 1
    return max(minimum, 256) if "PQ" in factory else minimum


def read_index(path: str | os.PathLike, mmap: bool = False) -> faiss.Index:
    """Reads an index file; with `mmap` its data stay on disk, paged in as searched."""
    flags = faiss.IO_FLAG_MMAP | faiss.IO_FLAG_READ_ONLY if mmap else 0
    return faiss.read_index(str(path), flags)


def search_shards(
    shards: Sequence[tuple[int, faiss.Index]], queries: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """Top `k` (scores, global passage numbers) over every shard, best first; -1 pads."""
    all_scores, all_labels = [], []
    for offset, index in shards:
        scores, labels = index.search(queries, min(k, index.ntotal))
        all_scores.append(scores)
        all_labels.append(np.where(labels >= 0, labels + offset, -1))
    if len(shards) == 1:
        return all_scores[0], all_labels[0]
    scores = np.concatenate(all_scores, axis=1)
    labels = np.concatenate(all_labels, axis=1)
    scores = np.where(labels >= 0, scores, -np.inf)
    order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(scores, order, 1), np.take_along_axis(labels, order, 1)


def rerank(
    folder: EmbeddingsFolder, queries: np.ndarray, labels: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Exact scores of the candidate passages against their stored vectors, re-sorted.

    One gather of every candidate row (float16, memory-mapped) and one batched matrix
    product: (queries, candidates, d) @ (queries, d, 1).
    """
    valid = labels >= 0
    vectors = folder.passage_vectors(np.where(valid, labels, 0).ravel())
    vectors = vectors.reshape(*labels.shape, -1)
    scores = np.matmul(vectors, queries[:, :, None])[:, :, 0]
    scores = np.where(valid, scores, -np.inf).astype(np.float32)
    order = np.argsort(-scores, axis=1, kind="stable")
    return np.take_along_axis(scores, order, 1), np.take_along_axis(labels, order, 1)
