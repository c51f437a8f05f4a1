"""The CPU side of ``namesake encode``: this process's chunks of the corpus as padded token
batches, made in DataLoader worker processes ahead of the model.

What a GPU waits for, and what is done about it (``benchmarks/bench_encode_feeder.py``
measures each part; ``benchmarks/README.md#the-encode-feeder`` has the figures):

- **Reading.** A passage's number, hence its chunk, is only known by counting the passages
  before it, so every worker reads the whole corpus. The pages of chunks that are not the
  worker's own are only decoded and counted (:func:`~namesake.retrieval.corpus.page_passage_count`),
  a third of the cost of splitting them; only its own pages are split into passages.
- **Tokenising.** A chunk's passages are tokenised in one call of the fast tokenizer's Rust
  batch encoder, unpadded (:class:`ChunkTokenizer`), then ordered by token count and cut
  into batches, each padded to its own longest row: less padding than ordering by
  characters, and none of the library's per-batch conversions. Printable-ASCII passages
  skip BERT's normalizer, which on them only lowercases (:func:`_plain_text_encoder`).
  The library's own ``preprocess`` stays the reference: the first batch is tokenised both
  ways and the fast path is used only if it gives the very same features (a model with a
  prompt-aware pooling, or a slow tokenizer, keeps the library's path).
- **Workers.** On a GPU, one tokenizer worker per core that the process does not need
  itself (:func:`default_tokenizer_workers`): the feeder's rate grows with them until the
  encoding process' own loop is the limit.

Chunk ``c`` belongs to process ``rank`` of ``world`` if ``c % world == rank`` and it was
not finished before the run; among a process's unfinished chunks, worker ``w`` of ``W``
takes every ``W``-th. Batches depend only on their chunk, never on the number of processes
or workers, so a sharded run gives the same vectors as a single one.
"""

from __future__ import annotations

import bisect
import json
import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice

import numpy as np
import torch

from namesake.retrieval.corpus import (
    PASSAGE_WORDS,
    page_document,
    page_passage_count,
    read_kilt_pages,
    split_passages,
)
from namesake.retrieval.dense import passage_input
from namesake.retrieval.encoders import input_length

#: the feature names the fast path builds; any other tensor the library gives (e.g. a
#: prompt length) keeps the library's path
FAST_FEATURES = ("input_ids", "attention_mask", "token_type_ids")
#: a character outside printable ASCII: an input without one is "plain" (see ChunkTokenizer)
_NOT_PLAIN = re.compile(r"[^\x20-\x7e]")
#: how many times the longest input of the first batch is repeated to check that the fast
#: path truncates as the library does
TRUNCATION_PROBE_REPEATS = 40


def default_tokenizer_workers(device_type: str) -> int:
    """Tokenizer workers for one encoding process: none on a CPU (they would take the
    model's cores); on a GPU, the cores this process may use, shared among the processes
    of this machine, less two: one for the process' own loop (copies, kernel launches) and
    one for its chunk writer and pin-memory threads. Cores are those the process is
    allowed to run on (``sched_getaffinity``: a container's or ``taskset``'s share), else
    ``os.cpu_count()``."""
    if device_type != "cuda":
        return 0
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    local_processes = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
    return max(1, cores // max(local_processes, 1) - 2)


@dataclass
class CorpusChunk:
    """One chunk's passages, in passage order: encoder inputs, page positions, page ids."""

    number: int
    inputs: list = field(default_factory=list)
    documents: list[int] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)


class CorpusChunks:
    """The chunks of `corpus` that `owns` accepts, in order, as :class:`CorpusChunk`.

    After iterating, ``num_passages`` and ``num_documents`` hold the corpus totals (within
    `max_passages`). Pages whose passages all fall in chunks not owned are only counted.
    """

    def __init__(
        self,
        corpus,
        words: int,
        chunk_passages: int,
        max_passages: int | None,
        separator: str | None,
        owns: Callable[[int], bool],
    ):
        self.corpus, self.words, self.size = corpus, words, chunk_passages
        self.limit, self.separator, self.owns = max_passages, separator, owns
        self.num_passages = self.num_documents = 0

    def __iter__(self) -> Iterator[CorpusChunk]:
        size, limit = self.size, self.limit
        number = documents = 0  # passages and pages so far
        current: CorpusChunk | None = None
        for position, page in enumerate(read_kilt_pages(self.corpus)):
            if limit is not None and number >= limit:
                break
            count = page_passage_count(page, self.words)
            if limit is not None:
                count = min(count, limit - number)
            documents = position + 1
            first, last = number // size, (number + count - 1) // size
            if current is not None and current.number < first:
                yield current
                current = None
            if any(self.owns(chunk) for chunk in range(first, last + 1)):
                passages = split_passages([page_document(page)], self.words)
                for offset, passage in enumerate(islice(passages, count)):
                    chunk = (number + offset) // size
                    if current is not None and current.number != chunk:
                        yield current
                        current = None
                    if current is None and self.owns(chunk):
                        current = CorpusChunk(chunk)
                    if current is not None:
                        current.inputs.append(
                            passage_input(passage.title, passage.text, self.separator)
                        )
                        current.documents.append(position)
                        current.ids.append(passage.wikipedia_id)
            number += count
        if current is not None:
            yield current
        self.num_passages, self.num_documents = number, documents


def count_corpus_passages(corpus, max_passages: int | None = None) -> int:
    """The corpus' passages, counted without splitting (for the feeder benchmark)."""
    chunks = CorpusChunks(corpus, PASSAGE_WORDS, 1 << 62, max_passages, None, lambda c: False)
    for _ in chunks:
        pass
    return chunks.num_passages


def passage_inputs(corpus, separator: str | None, max_passages: int | None = None):
    """(page position, page id, encoder input) of every passage, in order."""
    chunks = CorpusChunks(corpus, PASSAGE_WORDS, 1 << 62, max_passages, separator, lambda c: True)
    for chunk in chunks:
        yield from zip(chunk.documents, chunk.ids, chunk.inputs, strict=True)


@dataclass
class TokenBatch:
    """Rows of a chunk (their positions in it), their features and token counts."""

    rows: np.ndarray
    features: dict
    lengths: np.ndarray


class ChunkTokenizer:
    """A chunk's encoder inputs as batches of features for the encoder's forward pass.

    ``strategy`` is ``"fast"`` (one Rust batch call per chunk, batches ordered by token
    count and padded each to its longest row) or ``"library"`` (the encoder's own
    ``preprocess`` per batch, batches ordered by characters), decided on the first batch:
    fast only where it gives exactly the library's features (see the module docstring).
    """

    def __init__(self, encoder, prompt: str | None):
        self.encoder, self.prompt = encoder, prompt
        self.strategy: str | None = None
        self._backend = None
        self._plain_backend = None
        self._constants: dict = {}
        self._pads: dict[str, int] = {}

    def batches(self, inputs: Sequence, batch_size: int) -> Iterator[TokenBatch]:
        if not inputs:
            return
        if self.strategy is None:
            self._choose(inputs, batch_size)
        if self.strategy == "fast":
            yield from self._fast_batches(inputs, batch_size)
        else:
            yield from self._library_batches(inputs, batch_size)

    # --- the library's path -------------------------------------------------------------

    def _preprocess(self, inputs: Sequence) -> dict:
        return self.encoder.preprocess(list(inputs), prompt=self.prompt, task="document")

    def _library_batches(self, inputs: Sequence, batch_size: int) -> Iterator[TokenBatch]:
        order = sorted(range(len(inputs)), key=lambda i: -input_length(inputs[i]))
        for start in range(0, len(order), batch_size):
            rows = np.asarray(order[start : start + batch_size], dtype=np.int64)
            features = self._preprocess([inputs[i] for i in rows])
            mask = features.get("attention_mask")
            lengths = (
                mask.sum(dim=1).numpy()
                if mask is not None
                else np.full(len(rows), features["input_ids"].shape[1])
            )
            yield TokenBatch(rows, features, lengths)

    # --- the fast path ------------------------------------------------------------------

    def _encode(self, inputs: Sequence) -> list:
        """The Rust encodings of `inputs`, in order: plain ones by the plain encoder."""
        if self.prompt:
            inputs = [self.prompt + text for text in inputs]
        if self._plain_backend is None:
            return self._backend.encode_batch_fast(list(inputs))
        plain, other = [], []
        for index, item in enumerate(inputs):
            parts = item if isinstance(item, tuple) else (item,)
            (other if any(_NOT_PLAIN.search(part) for part in parts) else plain).append(index)
        encodings: list = [None] * len(inputs)
        for rows, backend in ((plain, self._plain_backend), (other, self._backend)):
            if rows:
                encoded = backend.encode_batch_fast([inputs[i] for i in rows])
                for index, encoding in zip(rows, encoded, strict=True):
                    encodings[index] = encoding
        return encodings

    def _padded(self, encodings: list, rows: np.ndarray, lengths: np.ndarray) -> dict:
        width = int(lengths[rows].max()) if len(rows) else 0
        features = {}
        for name in self._pads:
            features[name] = np.full((len(rows), width), self._pads[name], dtype=np.int64)
        ids, types = features["input_ids"], features.get("token_type_ids")
        for row, index in enumerate(rows.tolist()):
            encoding = encodings[index]
            length = lengths[index]
            ids[row, :length] = encoding.ids
            if types is not None:
                types[row, :length] = encoding.type_ids
        if "attention_mask" in features:
            features["attention_mask"] = (
                np.arange(width)[None, :] < lengths[rows][:, None]
            ).astype(np.int64)
        tensors = {name: torch.from_numpy(value) for name, value in features.items()}
        return {**tensors, **self._constants}

    def _fast_batches(self, inputs: Sequence, batch_size: int) -> Iterator[TokenBatch]:
        encodings = self._encode(inputs)
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(inputs))
        order = np.argsort(-lengths, kind="stable")
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            yield TokenBatch(rows, self._padded(encodings, rows, lengths), lengths[rows])

    def _choose(self, inputs: Sequence, batch_size: int) -> None:
        """Fast if the encoder has a fast tokenizer whose Rust encoder, set as the library
        sets it, gives the library's features on the first batch, on an input longer than
        any truncation length and on a printable-ASCII one; else the library's path."""
        self.strategy = "library"
        tokenizer = getattr(self.encoder, "tokenizer", None)
        backend = getattr(tokenizer, "backend_tokenizer", None)
        if backend is None or not getattr(tokenizer, "is_fast", False):
            return
        longest = max(inputs[:batch_size], key=input_length)
        if isinstance(longest, tuple):
            long_probe = (longest[0], " ".join([longest[1]] * TRUNCATION_PROBE_REPEATS))
            plain_probe = tuple(_NOT_PLAIN.sub(" ", part) for part in longest)
        else:
            long_probe = " ".join([longest] * TRUNCATION_PROBE_REPEATS)
            plain_probe = _NOT_PLAIN.sub(" ", longest)
        # over-long (truncation) and printable ASCII (the plain encoder) are both checked
        sample = [*inputs[:batch_size], long_probe, plain_probe]
        reference = self._preprocess(sample)
        # the library has just set its truncation on the tokenizer: copy it, unpadded
        from tokenizers import Tokenizer

        self._backend = Tokenizer.from_str(backend.to_str())
        self._backend.no_padding()
        truncation = backend.truncation
        if truncation:
            self._backend.enable_truncation(**truncation)
        else:
            self._backend.no_truncation()
        self._plain_backend = _plain_text_encoder(self._backend)
        tensors = {k for k, v in reference.items() if isinstance(v, torch.Tensor)}
        if "input_ids" not in tensors or not tensors <= set(FAST_FEATURES):
            return
        pad_type = getattr(tokenizer, "pad_token_type_id", 0) or 0
        pads = {"input_ids": tokenizer.pad_token_id or 0, "attention_mask": 0}
        self._pads = {name: pads.get(name, pad_type) for name in FAST_FEATURES if name in tensors}
        self._constants = {k: v for k, v in reference.items() if k not in tensors}
        encodings = self._encode(sample)
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(sample))
        fast = self._padded(encodings, np.arange(len(sample)), lengths)
        same = fast.keys() == reference.keys() and all(
            torch.equal(fast[name], reference[name].to(torch.int64))
            and fast[name].dtype == reference[name].dtype
            for name in tensors
        )
        if same:
            self.strategy = "fast"


def _plain_text_encoder(backend):
    """A copy of a Rust encoder whose normalizer is BERT's, for printable-ASCII inputs: on
    them BERT's normalizer only lowercases (no control characters to clean, no accents to
    strip, no Chinese characters to space out), so ``Lowercase`` (or nothing, for a cased
    model) gives the same tokens, at 1.5x the rate: BERT's normalizer dominates the Rust
    encoder's time. None for other normalizers. Special tokens are matched before
    normalizing, as they are by the original."""
    from tokenizers import Tokenizer, normalizers

    settings = json.loads(backend.to_str()).get("normalizer") or {}
    if settings.get("type") != "BertNormalizer":
        return None
    plain = Tokenizer.from_str(backend.to_str())
    plain.normalizer = normalizers.Lowercase() if settings.get("lowercase") else None
    return plain


def pack_features(features: dict) -> dict:
    """A batch's features for the trip to the encoding process: the token-id tensors of the
    batch's shape stacked into one (one shared-memory hand-over and one host-to-device copy
    instead of one per feature: each hand-over costs the receiving process ~2 ms), the
    rest as they are."""
    ids = features["input_ids"]
    names = tuple(
        name
        for name, value in features.items()
        if torch.is_tensor(value) and value.shape == ids.shape and value.dtype == ids.dtype
    )
    others = {name: value for name, value in features.items() if name not in names}
    packed = torch.stack([features[name] for name in names])
    return {"packed": packed, "names": names, "others": others}


def unpack_features(item: dict, device: torch.device) -> dict:
    """:func:`pack_features`' features on `device` (copied without waiting, from pinned
    memory where the loader pinned them)."""
    packed = item["packed"].to(device, non_blocking=True)
    features = {name: packed[index] for index, name in enumerate(item["names"])}
    for name, value in item["others"].items():
        features[name] = value.to(device, non_blocking=True) if torch.is_tensor(value) else value
    return features


def _as_is(item):
    """DataLoader collate function: items are already batches."""
    return item


def _single_threaded_tokenizer(worker: int) -> None:
    """A DataLoader worker's tokenizer runs on its one core (the Rust encoder would
    otherwise start a thread per core in every worker)."""
    os.environ["TOKENIZERS_PARALLELISM"] = "false"


class ChunkBatches(torch.utils.data.IterableDataset):
    """This process's unfinished chunks as tokenised batches, then the corpus totals.

    Each item is a dict: ``chunk`` (number), ``chunk_rows`` (its passages), ``rows`` (the
    batch's positions in the chunk), ``documents`` and ``ids`` (their pages) and
    ``features``; the last item of every worker is ``{"totals": {...}}``.
    """

    def __init__(self, corpus, settings: dict, encoder, batch_size: int, rank, world, done):
        self.corpus, self.settings, self.encoder = corpus, settings, encoder
        self.batch_size, self.rank, self.world = batch_size, rank, world
        #: this process's chunks finished before the run, sorted
        self.done = sorted(number for number in done if number % world == rank)

    def worker_of(self, number: int, workers: int) -> int | None:
        """The worker that encodes chunk `number`, or None if no worker of this process
        does: every `workers`-th of the process's unfinished chunks, in order."""
        if number % self.world != self.rank:
            return None
        finished_before = bisect.bisect_left(self.done, number)
        if finished_before < len(self.done) and self.done[finished_before] == number:
            return None
        return (number // self.world - finished_before) % workers

    def __iter__(self) -> Iterator[dict]:
        info = torch.utils.data.get_worker_info()
        worker, workers = (info.id, info.num_workers) if info else (0, 1)
        settings = self.settings
        chunks = CorpusChunks(
            self.corpus,
            settings["passage_words"],
            settings["chunk_passages"],
            settings["max_passages"],
            settings["title_separator"],
            lambda number: self.worker_of(number, workers) == worker,
        )
        tokenizer = ChunkTokenizer(self.encoder, settings["prompt"])
        for chunk in chunks:
            documents = np.asarray(chunk.documents, dtype=np.int64)
            ids = np.asarray(chunk.ids, dtype=object)
            for batch in tokenizer.batches(chunk.inputs, self.batch_size):
                yield {
                    "chunk": chunk.number,
                    "chunk_rows": len(chunk.inputs),
                    "rows": batch.rows,
                    "documents": documents[batch.rows],
                    "ids": ids[batch.rows].tolist(),
                    "features": pack_features(batch.features),
                }
        totals = {"num_passages": chunks.num_passages, "num_documents": chunks.num_documents}
        yield {"totals": totals}


def chunk_loader(dataset: ChunkBatches, workers: int, pin_memory: bool):
    """The DataLoader over `dataset`'s batches: `workers` processes, each with its own
    chunks; batches are taken as they come (the encoding process puts each row in place)."""
    return torch.utils.data.DataLoader(
        dataset,
        batch_size=None,
        num_workers=workers,
        collate_fn=_as_is,
        pin_memory=pin_memory,
        worker_init_fn=_single_threaded_tokenizer if workers else None,
        in_order=workers == 0,
        prefetch_factor=4 if workers else None,
    )
