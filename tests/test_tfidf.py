"""The DrQA-style TF-IDF retriever: scores against the formula computed by hand, sharded builds,
saved indexes and `namesake retrieve --retriever tfidf` on the AmbER sample."""

import gc
import json
import math
import random
from collections import Counter

import numpy as np
import pytest
from conftest import SAMPLE_KILT
from sklearn.feature_extraction.text import HashingVectorizer
from sklearn.utils import murmurhash3_32

from namesake.cli import main
from namesake.errors import BadInputError, NamesakeError
from namesake.retrieval import BM25Retriever, Document, TfidfRetriever

DOCUMENTS = [
    Document("1", "Heiress", "Paris Hilton visited Austin and sang twice, sang again."),
    Document("2", "Hotel", "The Hilton Paris hotel is near the river Seine."),
    Document("3", "Austin", "Austin is the capital city of Texas."),
    Document("4", "Texas", "Texas is a state; its capital is Austin, its river the Rio Grande."),
    Document("5", "Seine", "The Seine is a river that flows through Paris."),
    Document("6", "Guitar", "A guitar has six strings and a wooden body."),
    Document("7", "Violin", "A violin has four strings and is played with a bow."),
    Document("8", "Piano", "A piano has keys, hammers and strings."),
]


def hand_scores(documents, query):
    """DrQA's score of every document, from the formula: sklearn's n-grams, MurmurHash3
    buckets as HashingVectorizer takes them, and plain Python arithmetic."""
    analyze = HashingVectorizer(ngram_range=(1, 2), stop_words="english").build_analyzer()

    def buckets(text):
        return Counter(abs(murmurhash3_32(gram, seed=0)) % 2**24 for gram in analyze(text))

    counts = [buckets(f"{d.title} {d.text}") for d in documents]
    n = len(documents)
    df = Counter(bucket for c in counts for bucket in c)

    def idf(bucket):
        return max(0.0, math.log((n - df[bucket] + 0.5) / (df[bucket] + 0.5)))

    query_weights = {b: math.log1p(tf) * idf(b) for b, tf in buckets(query).items()}
    norm = math.sqrt(sum(w * w for w in query_weights.values()))
    return {
        d.wikipedia_id: sum(
            w / norm * math.log1p(c[b]) * idf(b) for b, w in query_weights.items() if b in c
        )
        for d, c in zip(documents, counts, strict=True)
    }


@pytest.fixture(scope="module")
def retriever():
    return TfidfRetriever.build(DOCUMENTS, show_progress=False)


@pytest.mark.parametrize(
    "query", ["Paris Hilton", "capital of Texas", "river Seine in Paris", "strings strings bow"]
)
def test_scores_equal_the_drqa_formula_computed_by_hand(retriever, query):
    expected = hand_scores(DOCUMENTS, query)
    found = dict(retriever.search([query], k=len(DOCUMENTS))[0])
    assert found  # every query shares weighted n-grams with some document
    assert set(found) == {doc for doc, score in expected.items() if score > 0}
    for doc, score in found.items():
        assert score == pytest.approx(expected[doc], rel=1e-5)
    ranked = [doc for doc, _ in retriever.search([query], k=len(DOCUMENTS))[0]]
    assert ranked == sorted(found, key=lambda doc: (-expected[doc], int(doc)))


def test_a_bigram_query_prefers_the_document_with_the_bigram(retriever):
    (ranking,) = retriever.search(["Paris Hilton"], k=2)
    # both pages hold "paris" and "hilton" once; page 1 has "paris hilton", 2 "hilton paris"
    assert [doc for doc, _ in ranking] == ["1", "2"]
    assert ranking[0][1] > ranking[1][1] > 0
    (reversed_order,) = retriever.search(["Hilton Paris"], k=2)
    assert [doc for doc, _ in reversed_order] == ["2", "1"]


def test_queries_without_weighted_ngrams_get_no_documents(retriever):
    # stopwords only; an unknown word; words in more than half of the pages (idf 0)
    assert retriever.search(["the of and", "zyzzyva", ""], k=5) == [[], [], []]
    assert retriever.search([], k=5) == []
    assert retriever.search(["Seine"], k=0) == [[]]
    assert len(retriever.search(["strings"], k=100)[0]) == 3  # k beyond the corpus
    with pytest.raises(TypeError, match="list of strings"):
        retriever.search("Seine", k=5)


def random_corpus(n_documents, seed=0):
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(60)]
    return [
        Document(
            str(100 + i),
            rng.choice(words),
            " ".join(rng.choices(words, weights=range(60, 0, -1), k=rng.randint(3, 30))),
        )
        for i in range(n_documents)
    ]


def random_queries(n, seed=1):
    rng = random.Random(seed)
    return [" ".join(f"w{rng.randrange(60)}" for _ in range(rng.randint(1, 5))) for _ in range(n)]


def test_a_sharded_build_ranks_exactly_like_a_one_shard_build():
    corpus = random_corpus(300)
    queries = random_queries(200)  # more than one query batch
    whole = TfidfRetriever.build(corpus, show_progress=False)
    sharded = TfidfRetriever.build(
        iter(corpus), show_progress=False, shard_documents=37, batch_documents=3
    )
    assert whole.shard_sizes == [300]
    assert len(sharded.shard_sizes) == 9 and sum(sharded.shard_sizes) == len(sharded) == 300
    expected = whole.search(queries, k=10)
    assert sum(map(len, expected)) > 1000
    assert sharded.search(queries, k=10) == expected
    sharded.n_threads = 0  # query batches in the calling thread: the same rankings
    assert sharded.search(queries, k=10) == expected
    pooled = TfidfRetriever.build(corpus, show_progress=False, shard_documents=50, workers=2)
    assert pooled.search(queries, k=10) == expected
    # ties (the same page twice) rank the page indexed first first, in any shard layout
    twins = [*corpus[:5], Document("twin", corpus[0].title, corpus[0].text)]
    for shard_documents in (1, 6):
        built = TfidfRetriever.build(twins, show_progress=False, shard_documents=shard_documents)
        ranking = [doc for doc, _ in built.search([corpus[0].title], k=6)[0]]
        assert ranking.index("100") + 1 == ranking.index("twin")


@pytest.mark.parametrize("mmap", [True, False])
def test_save_and_load_give_the_same_rankings(tmp_path, mmap):
    corpus = random_corpus(120)
    queries = random_queries(50)
    built = TfidfRetriever.build(corpus, show_progress=False, shard_documents=50)
    expected = built.search(queries, k=20)
    built.save(tmp_path / "index")
    settings = json.loads((tmp_path / "index" / "retriever.json").read_text())
    assert settings["kind"] == "tfidf" and settings["shard_sizes"] == [50, 50, 20]
    folder = built.folder
    del built
    gc.collect()
    assert not folder.exists()  # the build's temporary shards go with the retriever
    loaded = TfidfRetriever.load(tmp_path / "index", mmap=mmap)
    assert isinstance(loaded._shards[0].data, np.memmap) is mmap
    assert len(loaded) == 120 and loaded.document_ids == [d.wikipedia_id for d in corpus]
    assert loaded.search(queries, k=20) == expected
    loaded.save(tmp_path / "index")  # over itself: the mapped files stay readable
    assert TfidfRetriever.load(tmp_path / "index").search(queries, k=20) == expected


def test_bad_inputs_are_named(tmp_path):
    with pytest.raises(NamesakeError, match="no documents"):
        TfidfRetriever.build([], show_progress=False)
    with pytest.raises(ValueError, match="shard_documents must be positive"):
        TfidfRetriever.build(DOCUMENTS, show_progress=False, shard_documents=0)
    with pytest.raises(BadInputError, match="not a retriever index"):
        TfidfRetriever.load(tmp_path)
    BM25Retriever.build(DOCUMENTS, show_progress=False).save(tmp_path / "bm25")
    with pytest.raises(BadInputError, match="a 'bm25' index, not 'tfidf'"):
        TfidfRetriever.load(tmp_path / "bm25")
    TfidfRetriever.build(DOCUMENTS, show_progress=False).save(tmp_path / "tfidf")
    (tmp_path / "tfidf" / "shard-00000.data.npy").unlink()
    with pytest.raises(BadInputError, match="lacks shard-00000.data.npy") as error:
        TfidfRetriever.load(tmp_path / "tfidf")
    assert str(tmp_path / "tfidf") in str(error.value)


def test_retrieve_with_tfidf_writes_predictions_that_evaluate_scores(
    sample_build, tmp_path, capsys
):
    out, _ = sample_build
    predictions = tmp_path / "tfidf-human_qa.jsonl"
    common = ["--dataset", str(out / "dataset"), "--config", "human_qa"]
    main(
        [
            "retrieve",
            "--corpus",
            str(SAMPLE_KILT),
            *common,
            "--retriever",
            "tfidf",
            "--index",
            str(tmp_path / "index"),
            "--top-k",
            "20",
            "--out",
            str(predictions),
        ]
    )
    assert json.loads((tmp_path / "index" / "retriever.json").read_text())["kind"] == "tfidf"
    lines = [json.loads(line) for line in predictions.read_text().splitlines()]
    assert len(lines) == 18
    for line in lines:
        ids = [p["wikipedia_id"] for p in line["output"]["provenance"]]
        assert 0 < len(ids) <= 20 and len(set(ids)) == len(ids)
    main(["evaluate", *common, "--predictions", str(predictions), "--out", str(tmp_path / "r")])
    assert "| human_qa |" in capsys.readouterr().out
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text())["metrics"]
    assert metrics["num_queries"] == 18
    assert 0 < metrics["accuracy@20"] <= 100 and metrics["accuracy@20"] >= metrics["accuracy@1"]
