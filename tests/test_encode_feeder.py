"""The CPU side of `namesake encode` (`namesake.retrieval.feeder`): counting without
splitting, chunk ownership, the fast tokenizer against the library's, worker counts, and
the vectors of the new feeder against the library's path on the sample corpus."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from conftest import SAMPLE_KILT
from tiny_models import save_tiny_dpr

from namesake.bundled_models import minilm_path
from namesake.retrieval import embeddings as store
from namesake.retrieval import feeder
from namesake.retrieval.corpus import (
    PASSAGE_WORDS,
    page_passage_count,
    read_kilt_documents,
    read_kilt_pages,
    split_passages,
)
from namesake.retrieval.dense import passage_input
from namesake.retrieval.encode import encode_corpus
from namesake.retrieval.encoders import load_encoder


@pytest.fixture(scope="module")
def minilm():
    return load_encoder(str(minilm_path()), "cpu")


def _sample_inputs(separator):
    return [
        passage_input(p.title, p.text, separator)
        for p in split_passages(read_kilt_documents(SAMPLE_KILT))
    ]


def _write_pages(path, pages):
    with open(path, "w", encoding="utf-8") as f:
        for number, (title, paragraphs) in enumerate(pages):
            page = {"wikipedia_id": str(number), "wikipedia_title": title, "text": paragraphs}
            f.write(json.dumps(page) + "\n")


# --- counting and chunk ownership ---------------------------------------------------------


def test_passage_count_equals_the_split_for_every_kind_of_page(tmp_path):
    """Empty pages, title-only pages, exact multiples of 100 words, and white space other
    than spaces (tabs, newlines, no-break and em spaces, runs) between paragraphs' words."""
    words = [f"w{i}" for i in range(250)]
    pages = [
        ("Empty", []),
        ("Title only", ["Title only"]),
        ("Blank", ["Blank", "   ", "\n"]),
        ("Hundred", ["Hundred", " ".join(words[:100])]),
        ("Two hundred", [" ".join(words[:150]), " ".join(words[150:200])]),
        ("Odd spaces", ["a\tb\nc\u00a0d\u2003e   f", " g ", "h\u3000i" + " x" * 95]),
        ("Long", ["\n".join(words)] * 3),
    ]
    path = tmp_path / "pages.jsonl"
    _write_pages(path, pages)
    for words_per_passage in (1, 7, PASSAGE_WORDS):
        counted = [page_passage_count(page, words_per_passage) for page in read_kilt_pages(path)]
        split = [
            len(list(split_passages([document], words_per_passage)))
            for document in read_kilt_documents(path)
        ]
        assert counted == split
    assert counted[:4] == [1, 1, 1, 1] and counted[4] == 2


@pytest.mark.parametrize("limit", [None, 1, 20, 37])
def test_owned_chunks_hold_the_passages_of_a_full_split(limit):
    """Every subset of owners sees the same chunks and the same totals as reading all."""
    passages = list(split_passages(read_kilt_documents(SAMPLE_KILT)))
    documents = [
        i for i, d in enumerate(read_kilt_documents(SAMPLE_KILT)) for _ in split_passages([d])
    ]
    if limit is not None:
        passages, documents = passages[:limit], documents[:limit]
    size = 8
    for owned in ({0, 1, 2, 3, 4, 5, 6}, {1, 3, 5}, {6}, set()):
        chunks = feeder.CorpusChunks(
            SAMPLE_KILT, PASSAGE_WORDS, size, limit, "[SEP]", owned.__contains__
        )
        seen = list(chunks)
        assert (chunks.num_passages, chunks.num_documents) == (len(passages), documents[-1] + 1)
        expected = [c for c in range(-(-len(passages) // size)) if c in owned]
        assert [chunk.number for chunk in seen] == expected
        for chunk in seen:
            rows = range(chunk.number * size, min((chunk.number + 1) * size, len(passages)))
            assert chunk.inputs == [
                passage_input(passages[i].title, passages[i].text, "[SEP]") for i in rows
            ]
            assert chunk.ids == [passages[i].wikipedia_id for i in rows]
            assert chunk.documents == [documents[i] for i in rows]


def test_each_unfinished_chunk_goes_to_one_worker_in_turn():
    dataset = feeder.ChunkBatches(SAMPLE_KILT, {}, None, 4, rank=1, world=2, done={1, 2, 5, 9})
    workers = 3
    owners = {
        c: [w for w in range(workers) if dataset.worker_of(c, workers) == w] for c in range(20)
    }
    assert all(owners[c] == [] for c in (0, 2, 4, 1, 5, 9))  # the other process's, or done
    unfinished = [3, 7, 11, 13, 15, 17, 19]
    assert [owners[c] for c in unfinished] == [[0], [1], [2], [0], [1], [2], [0]]


def test_default_workers_leave_two_cores_per_process(monkeypatch):
    monkeypatch.setattr(feeder.os, "sched_getaffinity", lambda pid: set(range(16)))
    monkeypatch.delenv("LOCAL_WORLD_SIZE", raising=False)
    assert feeder.default_tokenizer_workers("cpu") == 0
    assert feeder.default_tokenizer_workers("cuda") == 14
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "8")
    assert feeder.default_tokenizer_workers("cuda") == 1
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "4")
    assert feeder.default_tokenizer_workers("cuda") == 2


# --- the fast tokenizer ---------------------------------------------------------------------


def _assert_batches_match_the_library(encoder, inputs, batch_size):
    tokenizer = feeder.ChunkTokenizer(encoder, prompt=None)
    batches = list(tokenizer.batches(inputs, batch_size))
    assert tokenizer.strategy == "fast"
    rows = np.concatenate([batch.rows for batch in batches])
    assert sorted(rows.tolist()) == list(range(len(inputs)))
    widths = [batch.features["input_ids"].shape[1] for batch in batches]
    assert widths == sorted(widths, reverse=True)  # ordered by token count, padded per batch
    for batch in batches:
        library = encoder.preprocess([inputs[i] for i in batch.rows], task="document")
        assert batch.features.keys() == library.keys()
        for name, value in library.items():
            if torch.is_tensor(value):
                assert torch.equal(batch.features[name], value), name
            else:
                assert batch.features[name] == value
        assert batch.lengths.tolist() == library["attention_mask"].sum(dim=1).tolist()


def test_fast_tokenizer_gives_the_library_features(minilm):
    inputs = _sample_inputs(minilm.tokenizer.sep_token)
    # and inputs longer than the model's 256 tokens, truncated as the library truncates
    inputs += [" ".join(inputs[:3]) * 4, "short"]
    # printable ASCII skips BERT's normalizer; anything else keeps it
    inputs += [
        "MiXeD CaSe [SEP] ABC def [MASK] [sep]",
        "Café Über [SEP] naïve résumé, “quoted” — Ångström",
        "Tab\there [SEP] control\x01char and\x7fdelete, new\nline",
        "東京 [SEP] Tokyo 東京都 text",
        "ＦＵＬＬ width [SEP] ﬁ ligature \u00a0no-break",
    ]
    tokenizer = feeder.ChunkTokenizer(minilm, prompt=None)
    list(tokenizer.batches(inputs, 5))
    assert tokenizer._plain_backend is not None
    _assert_batches_match_the_library(minilm, inputs, batch_size=5)


def test_fast_tokenizer_gives_the_library_features_for_dpr_pairs(tmp_path):
    _, context = save_tiny_dpr(tmp_path)  # max_position_embeddings 128: truncation matters
    encoder = load_encoder(str(context), "cpu", "dpr", "context")
    inputs = _sample_inputs(None)
    inputs.append((inputs[0][0], " ".join(text for _, text in inputs[:4])))
    assert isinstance(inputs[0], tuple)
    _assert_batches_match_the_library(encoder, inputs, batch_size=6)


class _PromptAware:
    """An encoder whose features carry more than token ids (as a prompt-excluding pooling's)."""

    def __init__(self, encoder):
        self.tokenizer = encoder.tokenizer
        self._encoder = encoder

    def preprocess(self, inputs, prompt=None, task=None):
        features = self._encoder.preprocess(inputs, prompt=prompt, task=task)
        return {**features, "prompt_length": torch.tensor(0)}


class _SlowTokenizer:
    def __init__(self, encoder):
        self._encoder = encoder
        self.tokenizer = type("Slow", (), {"is_fast": False})()

    def preprocess(self, inputs, prompt=None, task=None):
        return self._encoder.preprocess(inputs, prompt=prompt, task=task)


@pytest.mark.parametrize("wrapper", [_PromptAware, _SlowTokenizer])
def test_features_the_fast_path_cannot_give_keep_the_library_path(minilm, wrapper):
    encoder = wrapper(minilm)
    inputs = _sample_inputs(minilm.tokenizer.sep_token)[:9]
    tokenizer = feeder.ChunkTokenizer(encoder, prompt=None)
    batches = list(tokenizer.batches(inputs, 4))
    assert tokenizer.strategy == "library"
    for batch in batches:
        expected = encoder.preprocess([inputs[i] for i in batch.rows], task="document")
        assert torch.equal(batch.features["input_ids"], expected["input_ids"])


# --- the whole feeder against the library's path ---------------------------------------------


def test_new_feeder_vectors_equal_the_library_paths(tmp_path, monkeypatch):
    """The default (fast, token-count order) against the library's per-batch tokenisation
    in character order, as `namesake encode` did before: the same passages in each chunk,
    vectors equal within float16 storage and batch-shape tolerance."""
    options = {"chunk_passages": 8, "batch_size": 4, "show_progress": False}
    encode_corpus(SAMPLE_KILT, tmp_path / "fast", **options)

    def library_only(self, inputs, batch_size):
        self.strategy = "library"

    monkeypatch.setattr(feeder.ChunkTokenizer, "_choose", library_only)
    encode_corpus(SAMPLE_KILT, tmp_path / "library", **options)
    fast = store.EmbeddingsFolder(tmp_path / "fast")
    library = store.EmbeddingsFolder(tmp_path / "library")
    assert fast.num_chunks == library.num_chunks == 7
    fast_documents, fast_ids = fast.passage_map()
    library_documents, library_ids = library.passage_map()
    assert fast_ids == library_ids and np.array_equal(fast_documents, library_documents)
    for number in range(fast.num_chunks):
        a = np.asarray(fast.chunk(number).embeddings, dtype=np.float32)
        b = np.asarray(library.chunk(number).embeddings, dtype=np.float32)
        assert np.abs(a - b).max() < 2e-3
        cosine = (a * b).sum(axis=1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
        assert cosine.min() > 0.9999
