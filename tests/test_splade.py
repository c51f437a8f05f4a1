"""SPLADE (`--retriever splade`, issue 35 item 3): sentence-transformers' SparseEncoder over an
inverted index of 100-word passages.

No SPLADE weights are available offline, so a tiny random one stands in: a 2-layer BERT
masked language model with the bundled MiniLM's tokenizer, wrapped as a SparseEncoder
(Transformer fill-mask + SpladePooling), its output bias lowered so that its vectors are
sparse. Rankings are checked against the dot products of the vectors the SparseEncoder
itself gives, computed here densely.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import SAMPLE_KILT

from namesake.amber.evaluation.retrieve import open_retriever, set_queries
from namesake.cli import main
from namesake.errors import BadInputError
from namesake.retrieval.corpus import Document, split_passages
from namesake.retrieval.splade import SpladeRetriever

#: SpladePooling's output before its first forward pass: BERT's vocabulary
VOCABULARY = 30522


def save_tiny_splade(root: Path, seed: int = 0) -> Path:
    """A tiny random SPLADE model (see the module docstring) saved as a SparseEncoder in
    `root`: a few thousand of the 30522 dimensions are nonzero per passage."""
    import torch
    from sentence_transformers import SparseEncoder
    from sentence_transformers.base.modules import Transformer
    from sentence_transformers.sparse_encoder.modules import SpladePooling
    from tiny_models import TINY_SIZES
    from transformers import AutoTokenizer, BertConfig, BertForMaskedLM

    from namesake.bundled_models import minilm_path

    tokenizer = AutoTokenizer.from_pretrained(minilm_path())
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=tokenizer.vocab_size, **TINY_SIZES, max_position_embeddings=256)
    model = BertForMaskedLM(config)
    with torch.no_grad():  # most logits below 0: ReLU keeps a few
        model.cls.predictions.bias.normal_(-0.35, 0.1)
    mlm = root / "mlm"
    model.save_pretrained(mlm)
    tokenizer.save_pretrained(mlm)
    transformer = Transformer(str(mlm), transformer_task="fill-mask", max_seq_length=256)
    encoder = SparseEncoder(modules=[transformer, SpladePooling("max")], device="cpu")
    encoder.save(str(root / "splade"))
    return root / "splade"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> dict[str, str]:
    """Two tiny SPLADE models, "a" and "b" (other random weights)."""
    root = tmp_path_factory.mktemp("splade")
    return {name: str(save_tiny_splade(root / name, seed)) for name, seed in (("a", 0), ("b", 1))}


WORDS = ["the", "river", "valley", "city", "music", "film", "album", "player", "team", "war"]


def _documents() -> list[Document]:
    """Pages of one to three 100-word passages, with words of a few topics."""
    rng = np.random.default_rng(0)
    documents = []
    for number in range(9):
        length = int(rng.integers(20, 260))
        text = " ".join(rng.choice(WORDS, size=length).tolist())
        documents.append(Document(f"page{number}", f"Title {number} {WORDS[number]}", text))
    return documents


QUERIES = [
    "Which film won the music award?",
    "river valley city",
    "Who was the team's best player in the war?",
    "election science",
]


def _hand_scores(model: str, documents: list[Document], queries: list[str]) -> np.ndarray:
    """Per query and page: the best dot product of the query's vector with one of the page's
    passages' vectors, as the SparseEncoder gives them, computed densely."""
    from sentence_transformers import SparseEncoder

    encoder = SparseEncoder(model, device="cpu")
    passages = list(split_passages(documents))
    texts = [f"{p.title} [SEP] {p.text}" for p in passages]
    vectors = encoder.encode_document(texts, convert_to_sparse_tensor=False).numpy()
    query_vectors = encoder.encode_query(queries, convert_to_sparse_tensor=False).numpy()
    scores = query_vectors.astype(np.float64) @ vectors.astype(np.float64).T
    pages = [d.wikipedia_id for d in documents]
    owner = np.asarray([pages.index(p.wikipedia_id) for p in passages])
    best = np.full((len(queries), len(pages)), -np.inf)
    for column, page in enumerate(owner):
        best[:, page] = np.maximum(best[:, page], scores[:, column])
    return best


@pytest.fixture(scope="module")
def built(tiny) -> SpladeRetriever:
    """The tiny model "a" over the small corpus, in chunks of 3 passages, 2 per batch."""
    return SpladeRetriever.build(
        _documents(), model=tiny["a"], batch_size=2, chunk_passages=3, show_progress=False
    )


def test_rankings_are_the_best_passages_dot_products(built, tiny):
    documents = _documents()
    assert built.settings["num_passages"] == len(list(split_passages(documents))) > len(documents)
    assert built.settings["dimension"] == VOCABULARY
    expected = _hand_scores(tiny["a"], documents, QUERIES)
    found = built.search(QUERIES, len(documents))
    for query, ranking, want in zip(QUERIES, found, expected, strict=True):
        order = np.argsort(-want, kind="stable")
        assert [page for page, _ in ranking] == [documents[i].wikipedia_id for i in order], query
        for (_, got), score in zip(ranking, want[order], strict=True):
            assert math.isclose(got, score, rel_tol=1e-5), (query, got, score)
    top = built.search(QUERIES, 2)
    assert top == [ranking[:2] for ranking in found]


def test_candidates_are_ranked_with_the_search_scores(built):
    pages = [["page3", "page0", "not-a-page", "page7"], ["page8"], [], ["page1", "page1"]]
    restricted = built.rank_candidates(QUERIES, pages)
    full = built.search(QUERIES, len(built))
    for query_pages, ranking, everything in zip(pages, restricted, full, strict=True):
        assert ranking == [(page, score) for page, score in everything if page in query_pages]
    assert "not-a-page" not in built.candidate_rows


def test_the_postings_hold_every_nonzero_weight_by_dimension(built):
    indptr, rows = np.asarray(built.indptr), np.asarray(built.indices)
    assert indptr[0] == 0 and indptr[-1] == len(rows) == built.settings["num_postings"]
    assert (np.asarray(built.data) > 0).all()
    for term in np.flatnonzero(np.diff(indptr))[:50]:  # each dimension's passages ascend
        assert (np.diff(rows[indptr[term] : indptr[term + 1]]) > 0).all()
    # a real sparse vector: far from every dimension in every passage
    assert len(rows) < 0.5 * VOCABULARY * built.settings["num_passages"]


def test_a_saved_index_loads_memory_mapped_and_searches_alike(built, tiny, tmp_path):
    built.save(tmp_path / "index")
    settings = json.loads((tmp_path / "index" / "retriever.json").read_text())
    assert settings["kind"] == "splade" and settings["model"] == tiny["a"]
    assert settings["provenance"]["models"]["model"]["weights"]
    loaded = SpladeRetriever.load(tmp_path / "index", mmap=True)
    assert isinstance(loaded.data, np.memmap)
    assert loaded.search(QUERIES, 5) == built.search(QUERIES, 5)


def test_a_truncated_index_file_is_named(built, tmp_path):
    built.save(tmp_path / "index")
    data = tmp_path / "index" / "data.npy"
    data.write_bytes(data.read_bytes()[:-8])
    with pytest.raises(BadInputError, match=r"data\.npy: .*rebuilt"):
        SpladeRetriever.load(tmp_path / "index")


def test_a_folder_that_is_not_a_sparse_encoder_is_refused_by_name(tmp_path):
    from tiny_models import save_tiny_bert

    from namesake.bundled_models import minilm_path

    refused = "config_sentence_transformers.json: not a sparse encoder: a SentenceTransformer"
    with pytest.raises(BadInputError, match=refused):
        SpladeRetriever.build(_documents(), model=minilm_path(), show_progress=False)
    plain = save_tiny_bert(tmp_path / "bert")
    with pytest.raises(BadInputError, match=f"{plain}: not a SPLADE model"):
        SpladeRetriever.build(_documents(), model=str(plain), show_progress=False)


# --- on the AmbER sample, through the commands ------------------------------------------------


def test_retrieve_evaluate_and_candidates_set_on_the_sample(sample_build, tiny, tmp_path, capsys):
    out, _ = sample_build
    dataset = str(out / "dataset")
    common = ["retrieve", "--corpus", str(SAMPLE_KILT), "--dataset", dataset]
    common += ["--config", "human_qa", "--retriever", "splade", "--model", tiny["a"]]
    common += ["--index", str(tmp_path / "index")]
    main([*common, "--out", str(tmp_path / "all.jsonl")])
    rows = [json.loads(line) for line in (tmp_path / "all.jsonl").read_text().splitlines()]
    assert rows and all(row["output"]["provenance"] for row in rows)
    retriever = open_retriever("splade", None, tmp_path / "index")
    assert retriever.settings["num_documents"] == 47 and retriever.model == tiny["a"]

    main([*common, "--candidates", "set", "--out", str(tmp_path / "set.jsonl")])
    queries = set_queries(dataset, "human_qa")
    pages = queries.set_pages()
    restricted = [json.loads(line) for line in (tmp_path / "set.jsonl").read_text().splitlines()]
    for row, query_pages in zip(restricted, pages, strict=True):
        ids = [p["wikipedia_id"] for p in row["output"]["provenance"]]
        assert ids and set(ids) <= set(query_pages)

    capsys.readouterr()
    main(
        ["evaluate", "--dataset", dataset, "--config", "human_qa", "--retriever", "splade"]
        + ["--predictions", str(tmp_path / "all.jsonl"), "--out", str(tmp_path / "report")]
    )
    metrics = json.loads((tmp_path / "report" / "metrics.json").read_text())
    assert 0 <= metrics["metrics"]["accuracy@1"] <= 100 and metrics["retriever"] == "splade"
    assert "splade is not in the paper" in capsys.readouterr().out


@pytest.fixture(scope="module")
def sample_index(tiny, tmp_path_factory) -> Path:
    """The tiny model "a" over the sample corpus, saved as `amber compare --index-dir` keeps
    it: <folder>/splade."""
    folder = tmp_path_factory.mktemp("indexes")
    open_retriever("splade", SAMPLE_KILT, folder / "splade", model=tiny["a"])
    return folder


def test_the_saved_index_refuses_another_model(sample_index, tiny, capsys):
    index = sample_index / "splade"
    with pytest.raises(BadInputError) as error:
        open_retriever("splade", SAMPLE_KILT, index, model=tiny["b"])
    message = str(error.value)
    assert message.startswith(str(index / "retriever.json") + ": ")
    assert "field 'model'" in message and tiny["a"] in message and tiny["b"] in message
    open_retriever("splade", SAMPLE_KILT, index, model=tiny["a"])
    assert "the corpus and SPLADE model named agree with it" in capsys.readouterr().err


@pytest.mark.parametrize("candidates", ["all", "set"])
def test_amber_compare_runs_splade(sample_build, sample_index, tiny, tmp_path, candidates):
    from namesake.amber.evaluation.compare import ComparePlan, compare_retrievers

    out, _ = sample_build
    shutil.copytree(sample_index, tmp_path / "indexes")
    plan = ComparePlan(
        retrievers=("splade",),
        collections=("human",),
        retriever_options={"splade": {"model": tiny["a"]}},
        index_dir=tmp_path / "indexes",
        candidates=candidates,
    )
    table = compare_retrievers(SAMPLE_KILT, str(out / "dataset"), tmp_path / "compare", plan)
    assert table.count("| splade |") == 3  # QA, SF, FC of AmbER-H
    predictions = tmp_path / "compare" / "predictions"
    assert (predictions / "splade-human_fc.jsonl").read_text()
    if candidates == "set":
        queries = set_queries(str(out / "dataset"), "human_qa")
        pages = queries.set_pages()
        rows = (predictions / "splade-human_qa.jsonl").read_text().splitlines()
        for row, query_pages in zip(rows, pages, strict=True):
            ids = [p["wikipedia_id"] for p in json.loads(row)["output"]["provenance"]]
            assert set(ids) <= set(query_pages)
