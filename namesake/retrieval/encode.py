"""Corpus encoding at KILT scale: ``namesake encode``, alone or under ``accelerate launch``.

The corpus is split into DPR's 100-word passages (as :class:`DenseRetriever` does: same
passage input, title and separator, same encoders: a sentence-transformers model or a DPR
context encoder, :mod:`namesake.retrieval.dpr`) and the passages into fixed chunks of
``chunk_passages`` (see :mod:`namesake.retrieval.embeddings`). Process ``r`` of ``N``
(Accelerate's ``PartialState``: one process alone, or any ``accelerate launch`` set-up,
several machines included) encodes the chunks ``c`` with ``c % N == r``, so every process
has its own deterministic slice and none waits for another until the end. Each chunk is
written atomically as soon as it is encoded; a rerun skips the chunks already there, so a
killed run loses at most the chunks it was encoding.

Every process reads the whole corpus (a passage's number, hence its chunk, is only known
by counting the passages before it); only its own chunks are tokenised and encoded. The
reading and tokenising run ahead of the model in DataLoader worker processes
(:mod:`namesake.retrieval.feeder`: one per spare core on a GPU, none on a CPU, where they
would take the model's cores). This process only moves each batch to the device, runs the
model and puts the vectors in their chunk's place on the device; a finished chunk is
copied back and written by a writer thread, so the device is not left waiting for either.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from tqdm.auto import tqdm

from namesake.errors import BadInputError
from namesake.retrieval import embeddings as store
from namesake.retrieval.corpus import PASSAGE_WORDS
from namesake.retrieval.dense import (
    DEFAULT_MODEL,
    DEFAULT_MODEL_ID,
    choose_similarity,
)
from namesake.retrieval.encoders import (
    SENTENCE_TRANSFORMERS,
    embedding_dimension,
    load_encoder,
    title_separator,
)
from namesake.retrieval.feeder import (
    ChunkBatches,
    chunk_loader,
    default_tokenizer_workers,
    unpack_features,
)
from namesake.retrieval.provenance import corpus_identity, model_identity

DEFAULT_CHUNK_PASSAGES = 8192
PRECISIONS = ("no", "fp16", "bf16")
_DOCUMENT_PROMPTS = ("document", "passage", "corpus")  # as SentenceTransformer.encode_document


@dataclass
class EncodingSummary:
    """What one ``encode_corpus`` call did, summed over all processes."""

    num_passages: int
    num_documents: int
    num_chunks: int
    chunks_encoded: int
    chunks_skipped: int
    chunks_encoded_per_process: list[int]


def document_prompt(encoder) -> str | None:
    """The prompt ``encode_document`` would put before a passage (None for most models)."""
    prompts = getattr(encoder, "prompts", None) or {}
    for name in _DOCUMENT_PROMPTS:
        if name in prompts:
            return prompts[name]
    return None


class _PendingChunk:
    """A chunk's vectors as its batches arrive (in any order), on the encoding device, so
    that the process never waits for the device before the chunk is complete."""

    def __init__(self, rows: int, dimension: int, device: torch.device):
        self.embeddings = torch.zeros((rows, dimension), dtype=torch.float32, device=device)
        self.documents = np.zeros(rows, dtype=np.int64)
        self.ids = np.empty(rows, dtype=object)
        self.missing = rows

    def fill(self, rows: np.ndarray, vectors: torch.Tensor, documents, ids) -> bool:
        index = torch.from_numpy(rows).to(vectors.device, non_blocking=True)
        self.embeddings.index_copy_(0, index, vectors)
        self.documents[rows] = documents
        self.ids[rows] = ids
        self.missing -= len(rows)
        return self.missing == 0


class _ChunkWriter:
    """Writes finished chunks in a background thread, so that the device is fed while a
    chunk is copied back and written; at most `backlog` chunks wait. A chunk counts as
    written (``after_chunk`` is called, in the encoding thread) only once it is on disk."""

    def __init__(self, out, digest: str, after_chunk: Callable[[int], None] | None, backlog=2):
        from concurrent.futures import ThreadPoolExecutor

        self.out, self.digest, self.after_chunk, self.backlog = out, digest, after_chunk, backlog
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="chunk-writer")
        self.waiting: list = []  # (chunk number, future), oldest first
        self.written = 0

    def __enter__(self) -> _ChunkWriter:
        return self

    def __exit__(self, *error) -> None:
        self.pool.shutdown(wait=True)

    def _write(self, number: int, chunk: _PendingChunk) -> None:
        embeddings = chunk.embeddings.cpu().numpy()  # waits for the device in this thread
        ids = chunk.ids.tolist()
        store.write_chunk(self.out, number, embeddings, chunk.documents, ids, self.digest)

    def _report_oldest(self) -> None:
        number, future = self.waiting.pop(0)
        future.result()  # a failed write is raised here
        self.written += 1
        if self.after_chunk is not None:
            self.after_chunk(number)

    def submit(self, number: int, chunk: _PendingChunk) -> None:
        self.waiting.append((number, self.pool.submit(self._write, number, chunk)))
        while len(self.waiting) > self.backlog:
            self._report_oldest()
        while self.waiting and self.waiting[0][1].done():
            self._report_oldest()

    def finish(self) -> None:
        """Waits for every chunk, reporting each."""
        while self.waiting:
            self._report_oldest()


def encoding_settings(
    corpus,
    encoder,
    model: str,
    words: int,
    chunk_passages: int,
    max_passages,
    similarity: str | None = None,
    encoder_type: str = SENTENCE_TRANSFORMERS,
) -> dict:
    """The settings recorded in (and checked against) the embeddings folder's manifest."""
    is_default = model == DEFAULT_MODEL
    similarity = choose_similarity(similarity, encoder)
    return {
        "model": DEFAULT_MODEL_ID if is_default else model,
        "model_is_default": is_default,
        "encoder": encoder_type,
        "dimension": embedding_dimension(encoder),
        "similarity": similarity,
        "normalized": similarity == "cosine",
        "passage_words": words,
        "title_separator": title_separator(encoder),
        "prompt": document_prompt(encoder),
        "chunk_passages": chunk_passages,
        "max_passages": max_passages,
        "corpus": str(Path(corpus).resolve()),
        "corpus_bytes": os.path.getsize(corpus),
        # what an index of these passages records as its provenance; a rerun must agree
        # (namesake.retrieval.embeddings.prepare_folder)
        "corpus_identity": corpus_identity(corpus),
        "model_identity": model_identity(model),
    }


def encode_corpus(
    corpus: str | os.PathLike,
    out: str | os.PathLike,
    model: str = DEFAULT_MODEL,
    *,
    batch_size: int = 128,
    chunk_passages: int = DEFAULT_CHUNK_PASSAGES,
    max_passages: int | None = None,
    words: int = PASSAGE_WORDS,
    device: str | None = None,
    mixed_precision: str | None = None,
    tokenizer_workers: int | None = None,
    show_progress: bool = True,
    after_chunk: Callable[[int], None] | None = None,
    similarity: str | None = None,
    encoder_type: str = SENTENCE_TRANSFORMERS,
) -> EncodingSummary:
    """Encodes this process's slice of `corpus` into `out` (see the module docstring).

    `model` is a sentence-transformers model, or with `encoder_type` ``"dpr"`` a DPR context
    encoder. `similarity` (``"dot"`` or ``"cos"``; default: the model's own) decides whether
    the vectors are normalised; a rerun must keep it.

    `device` defaults to Accelerate's (this process's GPU under ``accelerate launch``, else
    CUDA when present, else CPU); `mixed_precision` to fp16 autocast on CUDA and none on
    CPU; `tokenizer_workers` to :func:`~namesake.retrieval.feeder.default_tokenizer_workers`
    (0 on a CPU, one per spare core on a GPU). `after_chunk` is called with each
    chunk number once that chunk is on disk. Every process must call this; all return
    the same summary.
    """
    from accelerate import PartialState
    from accelerate.utils import gather_object, parse_flag_from_env

    if not os.path.isfile(corpus):
        raise FileNotFoundError(f"{corpus}: no such corpus file")
    if chunk_passages < 1 or batch_size < 1:
        raise ValueError("chunk_passages and batch_size must be at least 1")
    # Without CUDA (or with ACCELERATE_USE_CPU, as `accelerate launch --cpu` sets), the
    # processes talk over gloo; PartialState() alone would then fall back to one process
    # in each, and every process would encode everything.
    on_cpu = device == "cpu" or parse_flag_from_env("ACCELERATE_USE_CPU")
    state = PartialState(cpu=on_cpu or not torch.cuda.is_available())
    launched = int(os.environ.get("WORLD_SIZE", "1"))
    if state.num_processes != launched:
        raise RuntimeError(
            f"launched as {launched} processes, but Accelerate set up {state.num_processes}"
        )
    device = torch.device(device) if device else state.device
    on_cuda = device.type == "cuda"
    mixed_precision = mixed_precision or ("fp16" if on_cuda else "no")
    if mixed_precision not in PRECISIONS:
        raise ValueError(f"mixed_precision must be one of {', '.join(PRECISIONS)}")
    if tokenizer_workers is None:
        tokenizer_workers = default_tokenizer_workers(device.type)

    encoder = load_encoder(model, str(device), encoder_type, "context")
    encoder.eval()
    settings = encoding_settings(
        corpus, encoder, model, words, chunk_passages, max_passages, similarity, encoder_type
    )
    digest = store.settings_digest(settings)
    if state.is_main_process:
        store.prepare_folder(out, settings)
    state.wait_for_everyone()
    done_before = {int(p.name.split("-")[1]) for p in Path(out).glob("chunk-*") if p.is_dir()}
    rank, world = state.process_index, state.num_processes
    dataset = ChunkBatches(corpus, settings, encoder, batch_size, rank, world, done_before)
    loader = chunk_loader(dataset, tokenizer_workers, pin_memory=on_cuda)
    autocast = torch.autocast(
        device.type,
        dtype=torch.bfloat16 if mixed_precision == "bf16" else torch.float16,
        enabled=mixed_precision != "no",
    )
    pending: dict[int, _PendingChunk] = {}
    totals = None
    progress = tqdm(
        desc=f"Encoding passages (process {rank + 1}/{world})",
        unit="passage",
        disable=not show_progress,
        position=rank,
    )
    writer = _ChunkWriter(out, digest, after_chunk)
    with writer, progress, torch.inference_mode(), autocast:
        for item in loader:
            if "totals" in item:
                totals = item["totals"]
                continue
            features = unpack_features(item["features"], device)
            vectors = encoder(features, task="document")["sentence_embedding"].float()
            if settings["normalized"]:
                vectors = torch.nn.functional.normalize(vectors, p=2, dim=1)
            number = item["chunk"]
            chunk = pending.get(number)
            if chunk is None:
                chunk = _PendingChunk(item["chunk_rows"], settings["dimension"], device)
                pending[number] = chunk
            progress.update(len(item["rows"]))
            if chunk.fill(item["rows"], vectors, item["documents"], item["ids"]):
                writer.submit(number, pending.pop(number))
        writer.finish()
    encoded = writer.written
    if pending or totals is None:  # cannot happen unless a worker died mid-chunk
        raise RuntimeError(f"encoding ended with unfinished chunks {sorted(pending)}")
    if totals["num_passages"] == 0:
        raise BadInputError(corpus, None, "no pages to encode")
    skipped = sum(1 for number in done_before if number % world == rank)
    counts = gather_object([(encoded, skipped)])  # one pair per process, in rank order
    num_chunks = -(-totals["num_passages"] // chunk_passages)
    summary = EncodingSummary(
        num_passages=totals["num_passages"],
        num_documents=totals["num_documents"],
        num_chunks=num_chunks,
        chunks_encoded=sum(c[0] for c in counts),
        chunks_skipped=sum(c[1] for c in counts),
        chunks_encoded_per_process=[c[0] for c in counts],
    )
    state.wait_for_everyone()
    if state.is_main_process:
        missing = [n for n in range(num_chunks) if not store.chunk_done(out, n)]
        if missing:
            raise RuntimeError(f"{out}: chunks {missing[:5]} were not written")
        store.finish_folder(
            out,
            {
                "num_passages": summary.num_passages,
                "num_documents": summary.num_documents,
                "num_chunks": num_chunks,
            },
        )
    state.wait_for_everyone()
    return summary
