"""DPR checkpoints in the dense retriever (`--retriever dpr`, `namesake encode/index` with DPR
encoders) and `--similarity dot|cos`.

The encoders are a tiny random DPRQuestionEncoder / DPRContextEncoder pair (hidden 32,
2 layers, the MiniLM tokenizer) on the bundled sample corpus; expected scores are computed
here with the transformers classes directly.
"""

from __future__ import annotations

import inspect
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import SAMPLE_KILT
from tiny_models import accelerate_launch, save_tiny_bert, save_tiny_dpr
from transformers import (
    DPRContextEncoder,
    DPRContextEncoderTokenizer,
    DPRQuestionEncoder,
    DPRQuestionEncoderTokenizer,
)

from namesake.cli import build_parser, main
from namesake.errors import BadInputError
from namesake.retrieval import DenseRetriever, read_kilt_documents, split_passages
from namesake.retrieval.dpr import DPRRetriever
from namesake.retrieval.encoders import DEFAULT_CONTEXT_ENCODER, DEFAULT_QUESTION_ENCODER

QUERIES = ["Who wrote the screenplay?", "Which country is Paris in?", "a band from Sweden"]
MAX_LENGTH = 128  # the tiny models' positions


@pytest.fixture(scope="module")
def encoders(tmp_path_factory) -> tuple[str, str]:
    """(question encoder folder, context encoder folder)."""
    question, context = save_tiny_dpr(tmp_path_factory.mktemp("dpr"))
    return str(question), str(context)


@pytest.fixture(scope="module")
def documents():
    return list(read_kilt_documents(SAMPLE_KILT))


def _build(encoders, documents, **settings) -> DPRRetriever:
    """A DPR retriever of the tiny encoders over ``documents``, with ``settings``."""
    question, context = encoders
    return DPRRetriever.build(
        documents, question_encoder=question, context_encoder=context, show_progress=False,
        **settings,
    )  # fmt: skip


@pytest.fixture(scope="module")
def dot(encoders, documents) -> DPRRetriever:
    return _build(encoders, documents)


def _question_vectors(folder: str, queries: list[str]) -> np.ndarray:
    """The questions' pooler outputs, straight from transformers."""
    tokenizer = DPRQuestionEncoderTokenizer.from_pretrained(folder)
    model = DPRQuestionEncoder.from_pretrained(folder).eval()
    with torch.inference_mode():
        features = tokenizer(queries, padding=True, return_tensors="pt")
        return model(**features).pooler_output.numpy()


def _passage_vectors(folder: str, passages) -> np.ndarray:
    """The passages' pooler outputs: the (title, text) pair to DPR's tokenizer."""
    tokenizer = DPRContextEncoderTokenizer.from_pretrained(folder)
    model = DPRContextEncoder.from_pretrained(folder).eval()
    vectors = []
    with torch.inference_mode():
        for passage in passages:  # one at a time: no padding involved
            features = tokenizer(
                passage.title,
                passage.text,
                truncation=True,
                max_length=MAX_LENGTH,
                return_tensors="pt",
            )
            vectors.append(model(**features).pooler_output[0].numpy())
    return np.stack(vectors)


def _expected_scores(encoders, documents, rankings, cosine: bool) -> list[list[float]]:
    """Per query and ranked document: its best passage's score, computed by hand."""
    question, context = encoders
    queries = _question_vectors(question, QUERIES)
    wanted = {doc for ranking in rankings for doc, _ in ranking}
    passages = [p for p in split_passages(documents) if p.wikipedia_id in wanted]
    vectors = _passage_vectors(context, passages)
    if cosine:
        queries = queries / np.linalg.norm(queries, axis=1, keepdims=True)
        vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    owners = np.array([p.wikipedia_id for p in passages])
    return [
        [float(np.max(vectors[owners == doc] @ q)) for doc, _ in ranking]
        for q, ranking in zip(queries, rankings, strict=True)
    ]


# --- scores -----------------------------------------------------------------------------


def test_scores_are_the_inner_product_of_the_dpr_encoders(dot, encoders, documents):
    assert (dot.settings["encoder"], dot.settings["similarity"]) == ("dpr", "dot")
    assert dot.settings["title_separator"] is None  # (title, text) pairs
    rankings = dot.search(QUERIES, k=5)
    assert all(len(ranking) == 5 for ranking in rankings)
    expected = _expected_scores(encoders, documents, rankings, cosine=False)
    cosines = _expected_scores(encoders, documents, rankings, cosine=True)
    for ranking, want, cosine in zip(rankings, expected, cosines, strict=True):
        scores = [score for _, score in ranking]
        assert scores == pytest.approx(want, rel=1e-4, abs=1e-4)
        assert scores == sorted(scores, reverse=True)
        assert max(abs(s) for s in scores) > 1.5  # not a cosine, which is at most 1
        assert scores != pytest.approx(cosine, abs=1e-2)


def test_similarity_cos_gives_cosine(encoders, documents):
    retriever = _build(encoders, documents, similarity="cos")
    assert (retriever.settings["similarity"], retriever.settings["normalized"]) == (
        "cosine",
        True,
    )
    rankings = retriever.search(QUERIES, k=5)
    expected = _expected_scores(encoders, documents, rankings, cosine=True)
    for ranking, want in zip(rankings, expected, strict=True):
        assert [score for _, score in ranking] == pytest.approx(want, abs=1e-4)
        assert all(-1 - 1e-5 <= score <= 1 + 1e-5 for _, score in ranking)


def test_similarity_names_are_checked(encoders, documents):
    question, context = encoders
    with pytest.raises(ValueError, match="similarity must be dot or cos, not 'l2'"):
        DPRRetriever.build(
            documents[:2], question_encoder=question, context_encoder=context, similarity="l2"
        )


def test_saved_similarity_is_reloaded_and_a_contradicting_one_refused(
    dot, encoders, documents, tmp_path
):
    cosine = _build(encoders, documents, similarity="cos", index="hnsw")
    for retriever, name in ((dot, "dot"), (cosine, "cos")):
        retriever.save(tmp_path / name)
        record = json.loads((tmp_path / name / "retriever.json").read_text())
        assert record["similarity"] == retriever.settings["similarity"]
        # reloaded from the file alone (a fresh DenseRetriever loads DPR indexes too)
        for loaded in (DPRRetriever.load(tmp_path / name), DenseRetriever.load(tmp_path / name)):
            assert loaded.similarity == retriever.similarity
            assert loaded.search(QUERIES, 5) == retriever.search(QUERIES, 5)
    assert DPRRetriever.load(tmp_path / "cos", similarity="cos").similarity == "cosine"
    with pytest.raises(BadInputError, match=r"cos[/\\]retriever\.json: built for the cosine"):
        DPRRetriever.load(tmp_path / "cos", similarity="dot")
    with pytest.raises(BadInputError, match=r"dot[/\\]retriever\.json: built for the dot"):
        DenseRetriever.load(tmp_path / "dot", similarity="cos")


def test_dpr_loads_dpr_indexes_only(tmp_path, documents):
    bert = save_tiny_bert(tmp_path / "bert")
    DenseRetriever.build(documents[:3], model=str(bert), show_progress=False).save(tmp_path / "st")
    with pytest.raises(BadInputError, match=r"retriever\.json: an index of the sentence-trans"):
        DPRRetriever.load(tmp_path / "st")


# --- the commands: retrieve, and the sharded encode + index -------------------------------


@pytest.fixture(scope="module")
def commands_run(encoders, sample_build, tmp_path_factory):
    """`namesake retrieve --retriever dpr` (in-memory build) and the same config answered
    from `namesake encode` (two processes) + `namesake index`."""
    question, context = encoders
    out, _ = sample_build
    work = tmp_path_factory.mktemp("commands")
    config = ["--dataset", str(out / "dataset"), "--config", "human_qa"]
    main(
        ["retrieve", "--retriever", "dpr", "--corpus", str(SAMPLE_KILT)]
        + ["--dpr-question-encoder", question, "--dpr-context-encoder", context]
        + ["--index", str(work / "built"), "--out", str(work / "built.jsonl"), *config]
    )
    accelerate_launch(
        "namesake",
        ["encode", "--corpus", str(SAMPLE_KILT), "--out", str(work / "emb")]
        + ["--dpr-context-encoder", context, "--chunk-passages", "8", "--batch-size", "4"],
        module=True,
    )
    main(
        ["index", "--embeddings", str(work / "emb"), "--index-type", "flat"]
        + ["--dpr-question-encoder", question, "--out", str(work / "idx" / "dpr")]
    )
    main(
        ["retrieve", "--retriever", "dpr", "--index", str(work / "idx" / "dpr")]
        + ["--out", str(work / "encoded.jsonl"), *config]
    )
    return work, config


def _rankings(path: Path) -> dict[str, list[tuple[str, float]]]:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return {
        row["id"]: [(p["wikipedia_id"], p["score"]) for p in row["output"]["provenance"]]
        for row in rows
    }


def test_retrieve_and_the_sharded_encoding_agree(commands_run, encoders):
    work, _ = commands_run
    manifest = json.loads((work / "emb" / "encoding.json").read_text())
    assert (manifest["encoder"], manifest["similarity"], manifest["title_separator"]) == (
        "dpr",
        "dot",
        None,
    )
    assert manifest["model"] == encoders[1]
    record = json.loads((work / "idx" / "dpr" / "retriever.json").read_text())
    assert (record["encoder"], record["similarity"], record["query_model"]) == (
        "dpr",
        "dot",
        encoders[0],
    )
    built, encoded = _rankings(work / "built.jsonl"), _rankings(work / "encoded.jsonl")
    assert built and built.keys() == encoded.keys()
    for query, ranking in built.items():
        assert len(ranking) == len(encoded[query]) == 47  # every page, best passage each
        # float16 storage moves dot products by ~1e-3 relative: compare scores per page
        scores = dict(encoded[query])
        for doc, score in ranking:
            assert scores[doc] == pytest.approx(score, rel=5e-3, abs=5e-3)
        assert ranking[0][0] == encoded[query][0][0] or ranking[0][1] == pytest.approx(
            ranking[1][1], rel=5e-3
        )


def test_compare_runs_dpr_from_the_index_dir(commands_run, encoders, sample_build):
    work, _ = commands_run
    out, _ = sample_build
    main(
        ["amber", "compare", "--corpus", str(SAMPLE_KILT), "--dataset", str(out / "dataset")]
        + ["--out", str(work / "compare"), "--retriever", "dpr", "--collections", "human"]
        + ["--index-dir", str(work / "idx"), "--similarity", "dot"]
    )
    assert (work / "compare" / "results.md").read_text().count("| dpr |") == 3
    compared = work / "compare" / "predictions" / "dpr-human_qa.jsonl"
    assert compared.read_text() == (work / "encoded.jsonl").read_text()


def test_compare_passes_dpr_encoders_and_similarity(monkeypatch, tmp_path):
    seen = {}
    monkeypatch.setattr(
        "namesake.amber.evaluation.compare.compare_retrievers",
        lambda corpus, dataset, out, plan: seen.update(vars(plan)) or "table",
    )
    base = ["amber", "compare", "--corpus", "c", "--dataset", "d", "--out", str(tmp_path)]
    main(
        [*base, "--retriever", "dpr", "--retriever", "dense", "--similarity", "cos"]
        + ["--dpr-question-encoder", "q", "--dpr-context-encoder", "p"]
    )
    assert seen["retrievers"] == ("dpr", "dense")
    assert seen["retriever_options"] == {
        "dpr": {"question_encoder": "q", "context_encoder": "p", "similarity": "cos"},
        "dense": {"similarity": "cos"},
    }


def test_contradicting_similarity_is_refused_naming_the_saved_file(commands_run, encoders):
    work, config = commands_run
    index = work / "idx" / "dpr"
    with pytest.raises(SystemExit, match=r"dpr[/\\]retriever\.json: built for the dot"):
        main(
            ["retrieve", "--retriever", "dpr", "--index", str(index), "--similarity", "cos"]
            + ["--out", str(work / "never.jsonl"), *config]
        )
    with pytest.raises(SystemExit, match=r"dpr[/\\]retriever\.json: built for the dot"):
        main(
            ["amber", "compare", "--corpus", str(SAMPLE_KILT), *config[:2], "--tasks", "qa"]
            + ["--out", str(work / "never"), "--retriever", "dpr", "--similarity", "cos"]
            + ["--index-dir", str(work / "idx")]
        )
    with pytest.raises(SystemExit, match=r"emb[/\\]encoding\.json: built for the dot"):
        main(
            ["index", "--embeddings", str(work / "emb"), "--index-type", "flat"]
            + ["--similarity", "cos", "--out", str(work / "never-idx")]
        )
    resumed = work / "resumed"
    shutil.copytree(work / "emb", resumed)
    with pytest.raises(SystemExit, match=r"resumed[/\\]encoding\.json: this folder holds"):
        main(
            ["encode", "--corpus", str(SAMPLE_KILT), "--out", str(resumed)]
            + ["--dpr-context-encoder", encoders[1], "--chunk-passages", "8"]
            + ["--similarity", "cos"]
        )
    assert not (work / "never.jsonl").exists() and not (work / "never-idx").exists()


def test_dpr_passages_need_their_question_encoder(commands_run):
    work, _ = commands_run
    with pytest.raises(BadInputError, match=r"encoding\.json: DPR passages of .*--dpr-question"):
        DenseRetriever.from_embeddings(work / "emb", "flat", show_progress=False)


# --- bad input ----------------------------------------------------------------------------


def test_a_context_encoder_given_as_question_encoder_is_refused(encoders, documents):
    question, context = encoders
    pattern = r"context[/\\]config\.json: a DPRContextEncoder checkpoint, not the "
    with pytest.raises(BadInputError, match=pattern + "DPRQuestionEncoder that --dpr-question"):
        DPRRetriever.build(documents, question_encoder=context, context_encoder=context)
    pattern = r"question[/\\]config\.json: a DPRQuestionEncoder checkpoint, not the "
    with pytest.raises(BadInputError, match=pattern + "DPRContextEncoder that --dpr-context"):
        DPRRetriever.build(documents, question_encoder=question, context_encoder=question)


def test_a_folder_without_a_dpr_config_is_refused(encoders, documents, tmp_path):
    question, _ = encoders
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(BadInputError, match=r"empty: no config\.json: not a DPR context encoder"):
        DPRRetriever.build(documents, question_encoder=question, context_encoder=str(empty))
    bert = save_tiny_bert(tmp_path / "bert")
    with pytest.raises(BadInputError, match=r"bert[/\\]config\.json: a 'bert' model, not a DPR"):
        DPRRetriever.build(documents, question_encoder=str(bert), context_encoder=str(bert))


def test_weights_of_the_other_encoder_are_refused(encoders, documents, tmp_path):
    """A config that does not say which encoder it is: the weights tell."""
    question, context = encoders
    unnamed = tmp_path / "unnamed"
    shutil.copytree(context, unnamed)
    config = json.loads((unnamed / "config.json").read_text())
    del config["architectures"]
    (unnamed / "config.json").write_text(json.dumps(config))
    with pytest.raises(BadInputError, match=r"unnamed: \d+ DPRQuestionEncoder weights missing"):
        DPRRetriever.build(documents, question_encoder=str(unnamed), context_encoder=context)


def test_the_command_line_reports_a_bad_encoder_in_one_line(encoders, sample_build, tmp_path):
    _, context = encoders
    dataset = str(sample_build[0] / "dataset")  # checked before the index is built
    with pytest.raises(SystemExit, match=r"^namesake: error: .*context[/\\]config\.json: a DPRC"):
        main(
            ["retrieve", "--retriever", "dpr", "--corpus", str(SAMPLE_KILT)]
            + ["--dpr-question-encoder", context, "--dpr-context-encoder", context]
            + ["--dataset", dataset, "--config", "human_qa", "--out", str(tmp_path / "p.jsonl")]
        )
    with pytest.raises(SystemExit, match="not --model / --query-model"):
        main(
            ["retrieve", "--retriever", "dpr", "--model", "m", "--dataset", "d"]
            + ["--config", "human_qa", "--out", str(tmp_path / "p.jsonl")]
        )
    with pytest.raises(SystemExit, match="--similarity goes with --retriever dense or dpr"):
        main(
            ["retrieve", "--retriever", "bm25", "--similarity", "cos", "--dataset", "d"]
            + ["--config", "human_qa", "--out", str(tmp_path / "p.jsonl")]
        )
    assert not (tmp_path / "p.jsonl").exists()


# --- defaults -----------------------------------------------------------------------------


def test_defaults_are_facebooks_multiset_encoders_and_the_command_help_says_so():
    build = inspect.signature(DPRRetriever.build).parameters
    assert build["question_encoder"].default == DEFAULT_QUESTION_ENCODER
    assert build["context_encoder"].default == DEFAULT_CONTEXT_ENCODER
    assert DEFAULT_QUESTION_ENCODER == "facebook/dpr-question_encoder-multiset-base"
    assert DEFAULT_CONTEXT_ENCODER == "facebook/dpr-ctx_encoder-multiset-base"
    commands = build_parser()._subparsers._group_actions[0].choices
    helps = {action.dest: action.help for action in commands["retrieve"]._actions if action.help}
    assert DEFAULT_QUESTION_ENCODER in helps["dpr_question_encoder"]
    assert DEFAULT_CONTEXT_ENCODER in helps["dpr_context_encoder"]
    similarity = [a for a in commands["encode"]._actions if a.dest == "similarity"][0]
    assert similarity.choices == ["dot", "cos"]
