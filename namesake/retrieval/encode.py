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

Why every process reads the whole corpus: a passage's number (hence its chunk) is only
known by counting the passages before it. Reading and splitting run at ~100k pages/s,
a minute for KILT's 5.9M pages, against hours of encoding; only a process's own chunks are
tokenised and encoded.

Tokenisation runs in ``tokenizer_workers`` DataLoader worker processes ahead of the model
(each worker takes every ``tokenizer_workers``-th of the process's chunks), so a GPU is not
left waiting for the tokenizer; with 0 it runs in the encoding process, which is right on a
CPU, where the workers would take cores from the model. Within a chunk, passages are
batched longest first (less padding; the order within a chunk does not depend on the
number of processes, so a sharded run gives the same vectors as a single one).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from tqdm.auto import tqdm

from namesake.io import BadInputError
from namesake.retrieval import embeddings as store
from namesake.retrieval.corpus import PASSAGE_WORDS, read_kilt_documents, split_passages
from namesake.retrieval.dense import (
    DEFAULT_MODEL,
    DEFAULT_MODEL_ID,
    choose_similarity,
    passage_input,
)
from namesake.retrieval.encoders import (
    SENTENCE_TRANSFORMERS,
    embedding_dimension,
    input_length,
    load_encoder,
    title_separator,
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


def corpus_passages(corpus, words: int, max_passages: int | None) -> Iterator[tuple]:
    """(passage number, page position, passage) for the corpus' passages, in order."""
    number = 0
    for position, document in enumerate(read_kilt_documents(corpus)):
        for passage in split_passages([document], words):
            if max_passages is not None and number >= max_passages:
                return
            yield number, position, passage
            number += 1


def _as_is(item):
    """DataLoader collate function: items are already batches."""
    return item


class _ChunkBatches(torch.utils.data.IterableDataset):
    """Reads the corpus and yields this process's unfinished chunks as tokenised batches,
    then the corpus totals.

    Process ``rank`` of ``world`` owns chunk ``c`` if ``c % world == rank`` and ``c`` was
    not finished before the run. In DataLoader worker ``w`` of ``W``, only every ``W``-th
    owned chunk is tokenised; every worker still yields the totals (they are the same).
    """

    def __init__(self, corpus, settings: dict, encoder, batch_size: int, rank, world, done):
        self.corpus, self.settings, self.encoder = corpus, settings, encoder
        self.batch_size, self.rank, self.world, self.done = batch_size, rank, world, done

    def owned(self, number: int) -> bool:
        return number % self.world == self.rank and number not in self.done

    def __iter__(self) -> Iterator[dict]:
        info = torch.utils.data.get_worker_info()
        worker, workers = (info.id, info.num_workers) if info else (0, 1)
        settings = self.settings
        size = settings["chunk_passages"]
        owned_seen = 0
        mine = False
        number = -1
        texts: list[str] = []
        documents: list[int] = []
        ids: list[str] = []
        passages = documents_seen = 0
        for passage_number, position, passage in corpus_passages(
            self.corpus, settings["passage_words"], settings["max_passages"]
        ):
            passages, documents_seen = passage_number + 1, position + 1
            if passage_number % size == 0:  # a new chunk starts
                if mine:
                    yield from self.batches(number, texts, documents, ids)
                number = passage_number // size
                mine = self.owned(number)
                if mine:
                    mine = owned_seen % workers == worker
                    owned_seen += 1
                texts, documents, ids = [], [], []
            if mine:
                texts.append(
                    passage_input(passage.title, passage.text, settings["title_separator"])
                )
                documents.append(position)
                ids.append(passage.wikipedia_id)
        if mine:
            yield from self.batches(number, texts, documents, ids)
        yield {"totals": {"num_passages": passages, "num_documents": documents_seen}}

    def batches(self, number: int, texts: list[str], documents: list[int], ids: list[str]):
        """A chunk's passages, tokenised in batches, longest first."""
        order = sorted(range(len(texts)), key=lambda i: -input_length(texts[i]))
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            features = self.encoder.preprocess(
                [texts[i] for i in rows], prompt=self.settings["prompt"], task="document"
            )
            yield {
                "chunk": number,
                "chunk_rows": len(texts),
                "rows": np.asarray(rows, dtype=np.int64),
                "documents": np.asarray([documents[i] for i in rows], dtype=np.int64),
                "ids": [ids[i] for i in rows],
                "features": features,
            }


class _PendingChunk:
    """A chunk's embeddings as its batches arrive (in any order)."""

    def __init__(self, rows: int, dimension: int):
        self.embeddings = np.zeros((rows, dimension), dtype=store.DTYPE)
        self.documents = np.zeros(rows, dtype=np.int64)
        self.ids: list[str] = [""] * rows
        self.missing = rows

    def fill(self, rows: np.ndarray, embeddings: np.ndarray, documents, ids) -> bool:
        self.embeddings[rows] = embeddings
        self.documents[rows] = documents
        for row, name in zip(rows.tolist(), ids, strict=True):
            self.ids[row] = name
        self.missing -= len(rows)
        return self.missing == 0


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
    CPU; `tokenizer_workers` to 4 on CUDA and 0 on CPU. `after_chunk` is called with each
    chunk number once that chunk is on disk. Every process must call this; all return
    the same summary.
    """
    from accelerate import PartialState
    from accelerate.utils import gather_object, parse_flag_from_env
    from sentence_transformers.util import batch_to_device

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
        tokenizer_workers = 4 if on_cuda else 0

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
    dataset = _ChunkBatches(corpus, settings, encoder, batch_size, rank, world, done_before)
    loader = torch.utils.data.DataLoader(
        dataset,
        batch_size=None,
        num_workers=tokenizer_workers,
        collate_fn=_as_is,
        pin_memory=on_cuda,
        persistent_workers=False,
    )
    autocast = torch.autocast(
        device.type,
        dtype=torch.bfloat16 if mixed_precision == "bf16" else torch.float16,
        enabled=mixed_precision != "no",
    )
    pending: dict[int, _PendingChunk] = {}
    totals = None
    encoded = 0
    progress = tqdm(
        desc=f"Encoding passages (process {rank + 1}/{world})",
        unit="passage",
        disable=not show_progress,
        position=rank,
    )
    with progress, torch.inference_mode(), autocast:
        for item in loader:
            if "totals" in item:
                totals = item["totals"]
                continue
            features = batch_to_device(item["features"], device)
            vectors = encoder(features, task="document")["sentence_embedding"].float()
            if settings["normalized"]:
                vectors = torch.nn.functional.normalize(vectors, p=2, dim=1)
            number = item["chunk"]
            chunk = pending.setdefault(
                number, _PendingChunk(item["chunk_rows"], settings["dimension"])
            )
            progress.update(len(item["rows"]))
            if chunk.fill(item["rows"], vectors.cpu().numpy(), item["documents"], item["ids"]):
                store.write_chunk(out, number, chunk.embeddings, chunk.documents, chunk.ids, digest)
                del pending[number]
                encoded += 1
                if after_chunk is not None:
                    after_chunk(number)
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
