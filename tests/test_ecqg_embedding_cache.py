"""The passage embeddings cache of `make ecqg-demo` (namesake.ecqg.dpr.embedding_cache): a hit
only for the same model content and the same passages, the same results as without it."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from tiny_models import save_tiny_bert

from namesake.ecqg.dpr.embedding_cache import (
    EmbeddingCache,
    flat_dense_retriever,
    model_fingerprint,
)
from namesake.ecqg.dpr.modeling import export_sentence_transformers
from namesake.retrieval.corpus import Document

TEXTS = [
    ("Paris", "Paris is the capital and largest city of France."),
    ("Berlin", "Berlin is the capital of Germany and its largest city."),
    ("Madrid", "Madrid is the capital of Spain, on the river Manzanares."),
    ("Rome", "Rome is the capital city of Italy, founded on seven hills."),
    ("Lisbon", "Lisbon is the capital of Portugal, on the Atlantic coast."),
    ("Vienna", "Vienna is the capital of Austria, on the Danube."),
]
QUESTIONS = ["capital of France", "river of Spain", "city on seven hills"]


def documents(texts=TEXTS) -> list[Document]:
    return [Document(f"p{i}", title, text) for i, (title, text) in enumerate(texts)]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """Two sentence-transformers exports of different tiny BERTs (dot product, as DPR's)."""
    tmp = tmp_path_factory.mktemp("embedding-cache")
    first = export_sentence_transformers(
        save_tiny_bert(tmp / "bert-0", seed=0), tmp / "st-0", max_seq_length=32, pooling="mean"
    )
    second = export_sentence_transformers(
        save_tiny_bert(tmp / "bert-1", seed=1), tmp / "st-1", max_seq_length=32, pooling="mean"
    )
    return first, second


def scores(retriever, k=None):
    return retriever.search(QUESTIONS, k or len(TEXTS))


def assert_same_results(found, expected):
    assert [[pid for pid, _ in hits] for hits in found] == [
        [pid for pid, _ in hits] for hits in expected
    ]
    for hits, want in zip(found, expected, strict=True):
        np.testing.assert_allclose([s for _, s in hits], [s for _, s in want], rtol=1e-5, atol=1e-5)


def test_without_cache_it_is_dense_retriever_build(models):
    from namesake.ecqg.dpr.evaluation import WHOLE
    from namesake.retrieval.dense import DenseRetriever

    built = DenseRetriever.build(
        documents(), model=str(models[0]), index="flat", words=WHOLE, show_progress=False
    )
    plain = flat_dense_retriever(documents(), str(models[0]), show_progress=False)
    assert plain.settings == built.settings
    assert_same_results(scores(plain), scores(built))


def test_cached_retriever_equals_the_built_one(models, tmp_path):
    """Miss then hit: both give DenseRetriever.build's settings and results."""
    from namesake.ecqg.dpr.evaluation import WHOLE
    from namesake.retrieval.dense import DenseRetriever

    built = DenseRetriever.build(
        documents(), model=str(models[0]), index="flat", words=WHOLE, show_progress=False
    )
    cache = EmbeddingCache(tmp_path / "cache")
    encoded = flat_dense_retriever(documents(), str(models[0]), cache=cache, show_progress=False)
    read = flat_dense_retriever(documents(), str(models[0]), cache=cache, show_progress=False)
    assert cache.lookups == ["miss", "hit"]
    assert len(list((tmp_path / "cache").glob("*.npy"))) == 1
    for retriever in (encoded, read):
        assert retriever.settings == built.settings
        assert retriever.similarity == "dot"
        assert_same_results(scores(retriever), scores(built))


def test_a_copy_of_the_model_elsewhere_hits(models, tmp_path):
    cache = EmbeddingCache(tmp_path / "cache")
    flat_dense_retriever(documents(), str(models[0]), cache=cache, show_progress=False)
    copy = shutil.copytree(models[0], tmp_path / "copy")
    (copy / "README.md").write_text("another card")  # not part of the computation
    assert model_fingerprint(copy) == model_fingerprint(models[0])
    flat_dense_retriever(documents(), str(copy), cache=cache, show_progress=False)
    assert cache.lookups == ["miss", "hit"]


def test_another_model_misses(models, tmp_path):
    cache = EmbeddingCache(tmp_path / "cache")
    first = flat_dense_retriever(documents(), str(models[0]), cache=cache, show_progress=False)
    second = flat_dense_retriever(documents(), str(models[1]), cache=cache, show_progress=False)
    assert cache.lookups == ["miss", "miss"]
    assert len(list((tmp_path / "cache").glob("*.npy"))) == 2
    alone = flat_dense_retriever(documents(), str(models[1]), show_progress=False)
    assert_same_results(scores(second), scores(alone))
    assert scores(first) != scores(second)


def test_a_model_retrained_in_place_misses(models, tmp_path):
    """Same folder, other weights (a rerun of train_dpr.py into the same --output_dir)."""
    folder = shutil.copytree(models[0], tmp_path / "model")
    cache = EmbeddingCache(tmp_path / "cache")
    flat_dense_retriever(documents(), str(folder), cache=cache, show_progress=False)
    shutil.copy(models[1] / "model.safetensors", folder / "model.safetensors")
    retrained = flat_dense_retriever(documents(), str(folder), cache=cache, show_progress=False)
    assert cache.lookups == ["miss", "miss"]
    expected = flat_dense_retriever(documents(), str(models[1]), show_progress=False)
    assert_same_results(scores(retrained), scores(expected))


@pytest.mark.parametrize(
    "changed",
    [
        TEXTS[:-1],  # a passage fewer
        TEXTS[::-1],  # another order
        [(t, x.replace("capital", "seat")) for t, x in TEXTS],  # other words
        [(t.upper(), x) for t, x in TEXTS],  # other titles
    ],
    ids=["fewer", "reordered", "text", "titles"],
)
def test_changed_passages_miss(models, tmp_path, changed):
    cache = EmbeddingCache(tmp_path / "cache")
    flat_dense_retriever(documents(), str(models[0]), cache=cache, show_progress=False)
    found = flat_dense_retriever(
        documents(changed), str(models[0]), cache=cache, show_progress=False
    )
    assert cache.lookups == ["miss", "miss"]
    alone = flat_dense_retriever(documents(changed), str(models[0]), show_progress=False)
    assert_same_results(
        found.search(QUESTIONS, len(changed)), alone.search(QUESTIONS, len(changed))
    )


def test_cosine_and_dot_are_separate_entries(models, tmp_path):
    cache = EmbeddingCache(tmp_path / "cache")
    flat_dense_retriever(documents(), str(models[0]), cache=cache, show_progress=False)
    cosine = flat_dense_retriever(
        documents(), str(models[0]), similarity="cosine", cache=cache, show_progress=False
    )
    assert cache.lookups == ["miss", "miss"]
    alone = flat_dense_retriever(
        documents(), str(models[0]), similarity="cosine", show_progress=False
    )
    assert_same_results(scores(cosine), scores(alone))


def test_an_entry_of_the_wrong_shape_is_not_used(models, tmp_path):
    cache = EmbeddingCache(tmp_path / "cache")
    flat_dense_retriever(documents(), str(models[0]), cache=cache, show_progress=False)
    (entry,) = (tmp_path / "cache").glob("*.npy")
    np.save(entry, np.zeros((2, 3), dtype=np.float32))
    found = flat_dense_retriever(documents(), str(models[0]), cache=cache, show_progress=False)
    assert cache.lookups == ["miss", "miss"]
    alone = flat_dense_retriever(documents(), str(models[0]), show_progress=False)
    assert_same_results(scores(found), scores(alone))
    assert np.load(entry).shape == (len(TEXTS), 32)  # rewritten


def test_a_model_that_is_no_folder_is_not_cached(tmp_path):
    cache = EmbeddingCache(tmp_path / "cache")
    assert model_fingerprint("someone/some-model") is None
    assert cache.key("someone/some-model", ["a [SEP] b"], False) is None
    assert cache.get(None, 1) is None
    cache.put(None, np.zeros((1, 2)), {})
    assert not (tmp_path / "cache").exists()
