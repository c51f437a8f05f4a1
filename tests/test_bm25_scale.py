"""BM25Retriever's streaming build and numba search against plain bm25s.

The reference is what ``BM25Retriever`` did before: bm25s' ``Tokenizer`` over all documents
at once, then ``bm25s.BM25().index`` (numpy backend) and its dense per-query scores.
"""

from __future__ import annotations

import bm25s
import numpy as np
import pytest
from conftest import SAMPLE_KILT

from namesake.cli import main
from namesake.commands.arguments import byte_size
from namesake.outputs import FILES_RECORD
from namesake.retrieval import BM25Retriever, Document
from namesake.retrieval.bm25 import _tokenizer

# fmt: off
WORDS = [
    "run", "runs", "running", "runner", "ran", "river", "rivers", "bank", "banks", "banking",
    "money", "monetary", "piano", "pianist", "pianists", "music", "musical", "jordan",
    "michael", "berkeley", "basketball", "chess", "club", "paris", "france", "mercury",
    "planet", "element", "chemical", "symbol", "1984", "42", "x9", "data", "datum", "studies",
    "studying",
]
# fmt: on
STOPWORDS = ["the", "of", "and", "a", "to", "in", "is", "it", "that", "was", "for", "on"]


def random_documents(n: int, seed: int = 0) -> list[Document]:
    """Zipf-ish words with stopwords, inflections, capitals and punctuation; a few documents
    are empty or stopwords only (bm25s gives those its empty token)."""
    rng = np.random.default_rng(seed)
    words = np.array(WORDS + STOPWORDS, dtype=object)
    weights = 1.0 / np.arange(1, len(words) + 1) ** 0.8
    weights /= weights.sum()
    documents = []
    for i in range(n):
        if i % 97 == 5:
            text = "the of and" if i % 2 else ""
        else:
            text = " ".join(rng.choice(words, size=rng.integers(1, 60), p=weights))
            text = text.replace(" pa", ", Pa").replace(" m", ". M")
        title = " ".join(rng.choice(words, size=2)).title()
        documents.append(Document(f"doc{i}", title, text))
    return documents


def random_queries(n: int, seed: int = 1) -> list[str]:
    rng = np.random.default_rng(seed)
    pool = np.array(WORDS + STOPWORDS + ["zzzunknown"], dtype=object)
    return [" ".join(rng.choice(pool, size=rng.integers(1, 8))) for _ in range(n)]


def reference(documents: list[Document]) -> tuple[bm25s.BM25, object]:
    """bm25s' own index over the same tokens (the pre-streaming build)."""
    tokenizer = _tokenizer()
    texts = [f"{d.title} {d.text}" for d in documents]
    token_ids = list(tokenizer.streaming_tokenize(texts, update_vocab=True))
    model = bm25s.BM25()
    model.index((token_ids, tokenizer.get_vocab_dict()), show_progress=False)
    return model, tokenizer


def expected_ranking(model, tokenizer, documents, query: str, k: int) -> list[tuple[str, float]]:
    """bm25s' dense scores, positive ones, best first, ties in index order."""
    (tokens,) = tokenizer.tokenize([query], update_vocab=False, show_progress=False)
    if tokens == [tokenizer.word_to_id[""]]:
        return []
    scores = model.get_scores_from_ids(tokens)
    order = np.lexsort((np.arange(len(scores)), -scores))
    return [(documents[i].wikipedia_id, float(scores[i])) for i in order[:k] if scores[i] > 0]


@pytest.fixture(scope="module")
def documents():
    return random_documents(400)


@pytest.fixture(scope="module")
def built(documents):
    return BM25Retriever.build(documents, show_progress=False, chunk_documents=7)


def assert_same_rankings(got, expected):
    assert len(got) == len(expected)
    for ranking, wanted in zip(got, expected, strict=True):
        assert [doc_id for doc_id, _ in ranking] == [doc_id for doc_id, _ in wanted]
        np.testing.assert_allclose(
            [s for _, s in ranking], [s for _, s in wanted], rtol=1e-5, atol=0
        )


def test_streaming_build_gives_bm25s_score_matrix(built, documents):
    model, tokenizer = reference(documents)
    ours = built.model.scores
    assert ours["num_docs"] == model.scores["num_docs"] == len(documents)
    np.testing.assert_array_equal(ours["indptr"], model.scores["indptr"])
    np.testing.assert_array_equal(ours["indices"], model.scores["indices"])
    np.testing.assert_allclose(ours["data"], model.scores["data"], rtol=1e-6, atol=0)
    assert built.model.vocab_dict == model.vocab_dict
    assert built.tokenizer.word_to_id == tokenizer.word_to_id


@pytest.mark.parametrize("k", [1, 10, 400])
def test_search_ranks_as_bm25s_scores(built, documents, k):
    model, tokenizer = reference(documents)
    queries = random_queries(60)
    expected = [expected_ranking(model, tokenizer, documents, q, k) for q in queries]
    got = built.search(queries, k)
    assert_same_rankings(got, expected)
    assert any(got) and not all(got)  # the query mix exercises both cases
    # bm25s' own top-k agrees on the scores (its order among equal scores is arbitrary)
    query_ids = tokenizer.tokenize(queries, update_vocab=False, show_progress=False)
    _, top_scores = model.retrieve(query_ids, k=k, show_progress=False)
    for ranking, row in zip(got, top_scores, strict=True):
        positive = row[row > 0]
        if ranking:
            np.testing.assert_allclose([s for _, s in ranking], positive, rtol=1e-5)


def test_skipping_frequent_terms_keeps_the_exact_top_k():
    """Words whose document frequencies range from 60% to 0.2%, queries of 2-5 of them:
    search skips the postings of frequent words once they cannot change the top k
    (MaxScore), often near the bound, and must still rank exactly as bm25s' scores."""
    rng = np.random.default_rng(2)
    vocabulary = [f"w{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(60)]
    frequencies = np.geomspace(0.6, 0.002, len(vocabulary))
    documents = []
    for i in range(3000):
        words = [w for w, p in zip(vocabulary, frequencies, strict=True) if rng.random() < p]
        text = " ".join(np.repeat(words, rng.integers(1, 4, size=len(words))))
        documents.append(Document(str(i), "", text + " filler" * int(rng.integers(0, 20))))
    queries = [" ".join(rng.choice(vocabulary, size=rng.integers(2, 6))) for _ in range(300)]
    retriever = BM25Retriever.build(documents, show_progress=False, chunk_documents=500)
    model, tokenizer = reference(documents)
    for k in (1, 3, 10, 30):
        expected = [expected_ranking(model, tokenizer, documents, q, k) for q in queries]
        assert_same_rankings(retriever.search(queries, k), expected)


@pytest.mark.parametrize("chunk_documents", [1, 13, 10_000])
def test_chunk_size_does_not_change_the_index(built, documents, chunk_documents):
    other = BM25Retriever.build(documents, show_progress=False, chunk_documents=chunk_documents)
    for name in ("data", "indices", "indptr"):
        np.testing.assert_array_equal(other.model.scores[name], built.model.scores[name])
    assert other.model.vocab_dict == built.model.vocab_dict
    assert other.document_ids == built.document_ids


def test_a_build_spilled_to_disk_is_the_in_memory_build(built, documents, tmp_path):
    """A budget too small to hold one chunk sends every chunk to disk (several spills) and
    builds the score matrix memory-mapped: the index, and so every ranking, is the same bit
    for bit, and nothing is left in the spill folder."""
    spilled = BM25Retriever.build(
        documents, show_progress=False, chunk_documents=7, memory_budget=1, spill_dir=tmp_path
    )
    assert isinstance(spilled.model.scores["data"], np.memmap)
    assert not isinstance(built.model.scores["data"], np.memmap)  # the default budget holds it
    for name in ("data", "indices", "indptr"):
        np.testing.assert_array_equal(spilled.model.scores[name], built.model.scores[name])
    assert spilled.model.vocab_dict == built.model.vocab_dict
    assert spilled.document_ids == built.document_ids
    queries = random_queries(60, seed=3)
    assert spilled.search(queries, 10) == built.search(queries, 10)
    assert list(tmp_path.iterdir()) == []
    spilled.save(tmp_path / "index")  # the mapped matrix saves like an in-memory one
    loaded = BM25Retriever.load(tmp_path / "index")
    np.testing.assert_array_equal(loaded.model.scores["data"], built.model.scores["data"])
    assert loaded.search(queries, 10) == built.search(queries, 10)


def test_a_budget_below_one_byte_is_refused(documents):
    with pytest.raises(ValueError, match="memory_budget must be positive"):
        BM25Retriever.build(documents[:3], show_progress=False, memory_budget=0)


def test_term_counts_above_uint16_are_kept():
    """Chunks store term counts in 2 bytes when they fit; a larger count must not wrap."""
    documents = [Document("big", "", "zebra " * 70_000 + "lion"), *random_documents(20)]
    retriever = BM25Retriever.build(documents, show_progress=False, chunk_documents=4)
    model, _ = reference(documents)
    np.testing.assert_allclose(retriever.model.scores["data"], model.scores["data"], rtol=1e-6)
    assert retriever.search(["zebra"], 3)[0][0][0] == "big"


def test_threads_give_the_same_results(built):
    queries = random_queries(101, seed=5)
    built.n_threads = 0
    try:
        single = built.search(queries, 20)
        for threads in (1, 2, 3, -1):
            built.n_threads = threads
            assert built.search(queries, 20) == single, threads
    finally:
        built.n_threads = 0


def test_empty_and_stopword_queries_give_nothing(built):
    results = built.search(["", "the of and", "zzzunknown", "piano", "!!!"], k=5)
    assert results[0] == results[1] == results[2] == results[4] == []
    assert results[3] and all(score > 0 for _, score in results[3])


def test_equal_scores_rank_in_index_order():
    documents = [Document(str(i), "", "zebra giraffe") for i in range(5)]
    documents.insert(2, Document("x", "", "zebra zebra zebra giraffe"))
    retriever = BM25Retriever.build(documents, show_progress=False, chunk_documents=2)
    (ranking,) = retriever.search(["zebra"], k=4)
    assert [doc_id for doc_id, _ in ranking] == ["x", "0", "1", "2"]
    assert ranking[1][1] == ranking[2][1] == ranking[3][1] < ranking[0][1]


def test_no_documents_is_a_clear_error():
    with pytest.raises(ValueError, match="no documents to index"):
        BM25Retriever.build([], show_progress=False)
    with pytest.raises(ValueError, match="chunk_documents must be positive"):
        BM25Retriever.build(random_documents(3), show_progress=False, chunk_documents=0)


@pytest.mark.parametrize("mmap", [False, True])
def test_index_saved_by_plain_bm25s_loads_and_ranks_alike(documents, built, tmp_path, mmap):
    """An index written by the earlier bm25s-built retriever loads and searches the same."""
    model, tokenizer = reference(documents)
    old = BM25Retriever(model, tokenizer, [d.wikipedia_id for d in documents])
    old.save(tmp_path / "old")
    built.save(tmp_path / "new")
    queries = random_queries(30, seed=9)
    expected = built.search(queries, 15)
    for name in ("old", "new"):
        loaded = BM25Retriever.load(tmp_path / name, mmap=mmap)
        loaded.n_threads = 2
        assert_same_rankings(loaded.search(queries, 15), expected)


def test_retrieve_with_a_tiny_memory_budget_writes_the_same_predictions(sample_build, tmp_path):
    """`--memory-budget` through the command line: a build that goes to disk beside its
    index answers every query as the default build does, and leaves nothing behind."""
    out, _ = sample_build
    runs = {}
    for label, extra in (("default", []), ("spilled", ["--memory-budget", "1K"])):
        work = tmp_path / label
        main(
            ["retrieve", "--corpus", str(SAMPLE_KILT), "--dataset", str(out / "dataset")]
            + ["--config", "human_qa", "--retriever", "bm25", "--index", str(work / "index")]
            + ["--top-k", "10", "--out", str(work / "predictions.jsonl"), *extra]
        )
        runs[label] = (work / "predictions.jsonl").read_text()
        assert sorted(p.name for p in work.iterdir()) == [
            FILES_RECORD,
            "index",
            "predictions.jsonl",
        ]
    assert runs["spilled"] == runs["default"]


@pytest.mark.parametrize(
    ("text", "size"), [("2G", 2 * 1024**3), ("512M", 512 * 1024**2), ("1.5k", 1536), ("100", 100)]
)
def test_memory_budget_sizes(text, size):
    assert byte_size(text) == size


def test_a_bad_memory_budget_names_the_option(capsys):
    with pytest.raises(SystemExit):
        main(["retrieve", "--dataset", "x", "--config", "human_qa", "--retriever", "bm25"]
             + ["--out", "x.jsonl", "--memory-budget", "lots"])  # fmt: skip
    assert "--memory-budget: not a size: 'lots'" in capsys.readouterr().err
