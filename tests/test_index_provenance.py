"""A saved index answers only for what built it (issue 33, item 2), and a damaged one is named
(item 3).

Each kind is built with `open_retriever` (as `namesake retrieve --index` and `amber compare
--index-dir` build them) on the bundled sample corpus ("corpus A", tiny random models "A");
reopened naming corpus B (the sample without its last page) or model B (other random
weights) it is refused, naming the settings file, the field, the recorded and the requested
value; reopened naming nothing it is used as recorded, and stderr says so.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SAMPLE_KILT
from folders import folder_files
from test_outputs import _read_only
from tiny_models import save_tiny_bert, save_tiny_dpr

from namesake.amber.evaluation.retrieve import open_retriever, retriever_class
from namesake.bundled_models import MINILM_HUB_ID, minilm_path
from namesake.cli import main
from namesake.errors import BadInputError
from namesake.retrieval import provenance
from namesake.retrieval.dense import DenseRetriever
from namesake.retrieval.encode import encode_corpus
from namesake.retrieval.storage import REBUILD, read_settings

MODEL_KINDS = ("dense", "dpr", "link")
KINDS = ("bm25", "tfidf", *MODEL_KINDS)
#: the build option that names each model kind's (passage) model, and its recorded field
MODEL_OPTION = {"dense": "model", "dpr": "context_encoder", "link": "model"}
#: a refused command stops before reading its dataset
NO_DATASET = ["--dataset", "never-read", "--config", "human_qa"]


@pytest.fixture(scope="module")
def corpus_b(tmp_path_factory) -> Path:
    """Corpus B: the sample corpus without its last page."""
    lines = SAMPLE_KILT.read_text(encoding="utf-8").splitlines(keepends=True)
    path = tmp_path_factory.mktemp("corpus_b") / "kilt-b.jsonl"
    path.write_text("".join(lines[:-1]), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, dict[str, str]]:
    """Per kind, the build options naming models A, and those naming models B."""
    root = tmp_path_factory.mktemp("models")
    seeds = {"a": 0, "b": 1}
    bert = {name: str(save_tiny_bert(root / f"bert-{name}", seed=s)) for name, s in seeds.items()}
    dpr = {name: save_tiny_dpr(root / f"dpr-{name}", seed=s) for name, s in seeds.items()}
    return {
        "a": {
            "dense": {"model": bert["a"]},
            "dpr": {"question_encoder": str(dpr["a"][0]), "context_encoder": str(dpr["a"][1])},
            "link": {"model": bert["a"]},
        },
        "b": {
            "dense": {"model": bert["b"]},
            "dpr": {"question_encoder": str(dpr["b"][0]), "context_encoder": str(dpr["b"][1])},
            "link": {"model": bert["b"]},
        },
    }


@pytest.fixture(scope="module")
def indexes(models, tmp_path_factory) -> Path:
    """Every kind built from corpus A with models A, saved in <folder>/<kind>."""
    folder = tmp_path_factory.mktemp("indexes")
    for kind in KINDS:
        open_retriever(kind, SAMPLE_KILT, folder / kind, **models["a"].get(kind, {}))
    return folder


def _refused(error: BadInputError, index: Path, field: str, recorded, requested) -> None:
    message = str(error)
    assert message.startswith(str(index / "retriever.json") + ": ")
    assert f"field {field!r}" in message
    assert f"recorded {recorded}" in message and f"requested {requested}" in message
    assert "\n" not in message


@pytest.mark.parametrize("kind", KINDS)
def test_reopened_for_another_corpus_is_refused(kind, indexes, corpus_b, capsys):
    with pytest.raises(BadInputError) as error:
        open_retriever(kind, corpus_b, indexes / kind)
    _refused(error.value, indexes / kind, "corpus", SAMPLE_KILT.resolve(), corpus_b.resolve())
    assert "47 pages" in str(error.value)  # the recorded page count


@pytest.mark.parametrize("kind", ("dense", "dpr"))
def test_reopened_naming_another_index_type_is_refused(kind, indexes, capsys):
    with pytest.raises(BadInputError) as error:
        open_retriever(kind, None, indexes / kind, index="hnsw")
    _refused(error.value, indexes / kind, "index", "flat", "hnsw")
    open_retriever(kind, None, indexes / kind, index="flat")  # the recorded type: accepted


@pytest.mark.parametrize("kind", MODEL_KINDS)
def test_reopened_for_another_model_is_refused(kind, indexes, models, capsys):
    option = MODEL_OPTION[kind]
    with pytest.raises(BadInputError) as error:
        open_retriever(kind, SAMPLE_KILT, indexes / kind, **{option: models["b"][kind][option]})
    _refused(
        error.value, indexes / kind, "model", models["a"][kind][option], models["b"][kind][option]
    )
    assert "weights " in str(error.value)  # the fingerprints, which tell them apart


def test_reopened_for_another_query_model_is_refused(indexes, models):
    question_b = models["b"]["dpr"]["question_encoder"]
    with pytest.raises(BadInputError) as error:
        open_retriever("dpr", None, indexes / "dpr", question_encoder=question_b)
    _refused(
        error.value,
        indexes / "dpr",
        "query_model",
        models["a"]["dpr"]["question_encoder"],
        question_b,
    )
    # the dense index has no query model of its own: naming one is naming another model
    with pytest.raises(BadInputError, match="field 'query_model'.*recorded none"):
        open_retriever("dense", None, indexes / "dense", query_model=question_b)


@pytest.mark.parametrize("kind", KINDS)
def test_reopened_naming_nothing_uses_the_record_and_says_so(kind, indexes, models, capsys):
    retriever = open_retriever(kind, None, indexes / kind)
    err = capsys.readouterr().err
    assert f"namesake: {indexes / kind}: using the saved " in err
    assert f"corpus {SAMPLE_KILT.resolve()} (47 pages" in err
    assert "built by namesake " in err
    if kind in MODEL_KINDS:
        assert f"model {models['a'][kind][MODEL_OPTION[kind]]} (weights " in err
        assert retriever.settings["model"] == models["a"][kind][MODEL_OPTION[kind]]
    assert len(retriever) == 47


@pytest.mark.parametrize("kind", KINDS)
def test_reopened_naming_the_same_corpus_and_models_opens(kind, indexes, models, capsys):
    retriever = open_retriever(kind, SAMPLE_KILT, indexes / kind, **models["a"].get(kind, {}))
    assert len(retriever) == 47
    assert "named agree with it" in capsys.readouterr().err


def test_a_copy_of_the_model_is_the_same_model_but_not_retrained_weights(indexes, models, tmp_path):
    model_a = Path(models["a"]["dense"]["model"])
    copy = shutil.copytree(model_a, tmp_path / "copy")
    open_retriever("dense", None, indexes / "dense", model=str(copy))
    retrained = tmp_path / "retrained"
    shutil.copytree(copy, retrained)
    weights_b = Path(models["b"]["dense"]["model"]) / "model.safetensors"
    shutil.copyfile(weights_b, retrained / "model.safetensors")
    with pytest.raises(BadInputError, match="field 'model'"):
        open_retriever("dense", None, indexes / "dense", model=str(retrained))


def test_the_bundled_minilm_is_one_model_by_hub_id_or_path(tmp_path, capsys):
    documents = tmp_path / "three.jsonl"
    documents.write_text("".join(SAMPLE_KILT.read_text().splitlines(keepends=True)[:3]))
    open_retriever("dense", documents, tmp_path / "dense")  # the default model
    for name in (MINILM_HUB_ID, minilm_path()):
        open_retriever("dense", None, tmp_path / "dense", model=name)
    assert f"model {MINILM_HUB_ID} (the bundled copy)" in capsys.readouterr().err


def test_compare_index_dir_refuses_another_corpus(indexes, corpus_b, tmp_path, sample_build):
    dataset = str(sample_build[0] / "dataset")  # loaded first: a bad one fails before any index
    with pytest.raises(SystemExit) as error:
        main(
            ["amber", "compare", "--corpus", str(corpus_b), "--dataset", dataset, "--tasks", "qa"]
            + ["--out", str(tmp_path / "out"), "--retriever", "bm25", "--collections", "human"]
            + ["--index-dir", str(indexes)]
        )
    assert str(error.value).startswith(f"namesake: error: {indexes / 'bm25' / 'retriever.json'}")
    assert "field 'corpus'" in str(error.value)


def _namesake(*args: str, cwd=None) -> subprocess.CompletedProcess:
    """The installed `namesake` command, run offline (in the folder `cwd`)."""
    command = [str(Path(sys.executable).parent / "namesake"), *map(str, args)]
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=cwd, timeout=300)


def _one_line_error(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith("namesake: error: ")
    return lines[0]


def test_the_retrieve_command_refuses_another_model_in_one_line(indexes, models, tmp_path):
    index = indexes / "dense"
    command = ["retrieve", "--retriever", "dense", "--index", index, *NO_DATASET]
    command += ["--out", tmp_path / "never.jsonl", "--model", models["b"]["dense"]["model"]]
    line = _one_line_error(_namesake(*command))
    assert f"{index / 'retriever.json'}: " in line and "field 'model'" in line
    assert models["a"]["dense"]["model"] in line and models["b"]["dense"]["model"] in line
    assert not (tmp_path / "never.jsonl").exists()


def test_the_retrieve_command_says_what_it_uses(indexes, sample_build, tmp_path, capsys):
    out, _ = sample_build
    main(
        ["retrieve", "--retriever", "bm25", "--index", str(indexes / "bm25")]
        + ["--dataset", str(out / "dataset"), "--config", "human_qa"]
        + ["--out", str(tmp_path / "bm25.jsonl")]
    )
    err = capsys.readouterr().err
    assert f"using the saved bm25 index as recorded in {indexes / 'bm25' / 'retriever.json'}" in err
    assert str(SAMPLE_KILT.resolve()) in err
    assert (tmp_path / "bm25.jsonl").read_text()


# --- `namesake encode` + `namesake index` --------------------------------------------------


@pytest.fixture(scope="module")
def encoded(models, tmp_path_factory) -> tuple[Path, Path]:
    """The sample encoded with model A (`namesake encode`), and a flat index of it
    (`namesake index`)."""
    work = tmp_path_factory.mktemp("encoded")
    encode_corpus(
        SAMPLE_KILT,
        work / "emb",
        models["a"]["dense"]["model"],
        chunk_passages=16,
        batch_size=8,
        show_progress=False,
    )
    DenseRetriever.from_embeddings(work / "emb", "flat", show_progress=False).save(work / "idx")
    return work / "emb", work / "idx"


def test_an_index_of_encoded_passages_records_their_corpus_and_model(
    encoded, models, corpus_b, capsys
):
    _, index = encoded
    record = json.loads((index / "retriever.json").read_text())["provenance"]
    assert record["corpus"]["path"] == str(SAMPLE_KILT.resolve())
    assert record["corpus"]["pages"] == 47
    assert record["models"]["model"]["name"] == models["a"]["dense"]["model"]
    with pytest.raises(BadInputError, match="field 'corpus'"):
        open_retriever("dense", corpus_b, index)
    with pytest.raises(BadInputError, match="field 'model'"):
        open_retriever("dense", None, index, model=models["b"]["dense"]["model"])
    open_retriever("dense", SAMPLE_KILT, index, model=models["a"]["dense"]["model"])
    assert "named agree with it" in capsys.readouterr().err


def test_resuming_an_encoding_with_another_corpus_content_is_refused(encoded, models, tmp_path):
    emb, _ = encoded
    same_size = tmp_path / "same-size.jsonl"  # one letter changed: same bytes, other content
    text = SAMPLE_KILT.read_text(encoding="utf-8")
    same_size.write_text(text.replace("Lincoln", "Lincolm", 1), encoding="utf-8")
    assert same_size.stat().st_size == SAMPLE_KILT.stat().st_size
    resumed = tmp_path / "emb"
    shutil.copytree(emb, resumed)
    with pytest.raises(BadInputError, match="encoding.json: .*corpus: .*there, .*now"):
        encode_corpus(
            same_size,
            resumed,
            models["a"]["dense"]["model"],
            chunk_passages=16,
            batch_size=8,
            show_progress=False,
        )


# --- indexes written before provenance ----------------------------------------------------


def test_an_index_without_provenance_opens_with_a_warning(indexes, models, tmp_path, capsys):
    for kind in ("bm25", "dense"):
        old = shutil.copytree(indexes / kind, tmp_path / kind)
        settings = json.loads((old / "retriever.json").read_text())
        del settings["provenance"]
        (old / "retriever.json").write_text(json.dumps(settings))
        assert len(open_retriever(kind, SAMPLE_KILT, old)) == 47
        assert f"warning: {old / 'retriever.json'} records no provenance" in (
            capsys.readouterr().err
        )
    # its settings still name its model: naming another one is refused
    with pytest.raises(BadInputError, match="field 'model'"):
        open_retriever("dense", None, tmp_path / "dense", model=models["b"]["dense"]["model"])


# --- damaged indexes (issue 33, item 3) -----------------------------------------------------


def _truncate(file: Path) -> None:
    data = file.read_bytes()
    file.write_bytes(data[: len(data) // 2])


def _garble(file: Path) -> None:
    data = file.read_bytes()
    file.write_bytes(b"\x00" * 16 + data[16:])


def _delete(file: Path) -> None:
    file.unlink()


DAMAGES = [
    ("bm25", "data.csc.index.npy", _truncate),
    ("bm25", "indptr.csc.index.npy", _garble),
    ("bm25", "vocab.index.json", _truncate),
    ("bm25", "vocab.tokenizer.json", _garble),
    ("bm25", "document_ids.arrow", _truncate),
    ("bm25", "retriever.json", _truncate),
    ("bm25", "params.index.json", _delete),
    ("tfidf", "shard-00000.indices.npy", _truncate),
    ("tfidf", "document_frequency.npy", _garble),
    ("dense", "index.faiss", _truncate),
    ("dense", "index.faiss", _garble),
    ("dense", "passage_documents.npy", _truncate),
    ("dense", "index.faiss", _delete),
    ("dense-hnsw", "index.faiss", _truncate),
    ("dense-ivf", "index.faiss", _truncate),
    ("dpr", "index.faiss", _garble),
    ("link", "index.faiss", _truncate),
    ("link", "document_ids.arrow", _garble),
]


@pytest.fixture(scope="module")
def faiss_kinds(indexes, models) -> Path:
    """The dense kind also as an HNSW and an IVF index, beside the others."""
    for index in ("hnsw", "ivf"):
        folder = indexes / f"dense-{index}"
        open_retriever("dense", SAMPLE_KILT, folder, index=index, **models["a"]["dense"])
    return indexes


@pytest.mark.parametrize(("kind", "name", "damage"), DAMAGES)
def test_a_damaged_index_file_is_named_and_must_be_rebuilt(
    kind, name, damage, faiss_kinds, tmp_path
):
    index = shutil.copytree(faiss_kinds / kind, tmp_path / kind)
    damage(index / name)
    with pytest.raises(BadInputError) as error:
        open_retriever(kind.split("-")[0], None, index)
    message = str(error.value)
    assert message.startswith(str(index / name)) and "\n" not in message
    assert "the index must be rebuilt" in message


def test_the_retrieve_command_names_a_damaged_file_in_one_line(indexes, tmp_path):
    index = shutil.copytree(indexes / "tfidf", tmp_path / "tfidf")
    _truncate(index / "shard-00000.data.npy")
    command = ["retrieve", "--retriever", "tfidf", "--index", index, *NO_DATASET]
    line = _one_line_error(_namesake(*command, "--out", tmp_path / "never.jsonl"))
    assert f"{index / 'shard-00000.data.npy'}: " in line and "must be rebuilt" in line


# --- retriever.json checked against its kind's schema (issue 48) -------------------------

#: a field of the wrong type, or missing, in each kind's settings: (kind, field path, the
#: value written there or None to delete it, the words of the message)
WRONG_FIELDS = [
    ("bm25", "provenance", "corpus A", "wrong type: provenance is a string, not an object or null"),
    ("bm25", "provenance.corpus", [], "wrong type: provenance.corpus is a list, not an object"),
    ("bm25", "provenance.corpus.bytes", "43,248", "provenance.corpus.bytes is a string, not an"),
    ("bm25", "provenance.corpus.pages", 47.5, "provenance.corpus.pages is a number, not an"),
    ("bm25", "provenance.corpus.name", None, "missing field name: in provenance.corpus"),
    ("tfidf", "num_documents", "47", "wrong type: num_documents is a string, not an integer"),
    ("tfidf", "shard_sizes", 47, "wrong type: shard_sizes is a number, not a list"),
    ("dense", "num_documents", -47, "invalid field: num_documents: Expected `int` >= 0"),
    ("dense", "dimension", "32", "wrong type: dimension is a string, not an integer"),
    ("dense", "model", None, "missing field model"),
    ("dense", "shard_offsets", {"0": 0}, "wrong type: shard_offsets is an object, not a list"),
    ("dpr", "query_model", True, "query_model is true or false, not a string or null"),
    ("dpr", "provenance.models.model.name", 3, "provenance.models[...].name is a number, not a"),
    ("link", "context_words", "24", "wrong type: context_words is a string, not an integer"),
    ("link", "format_version", True, "wrong type: format_version is true or false, not an"),
]


def _set_field(record: dict, path: str, value) -> None:
    """Writes `value` at the dotted `path` of `record` (None: deletes the field)."""
    *parents, name = path.split(".")
    for parent in parents:
        record = record[parent]
    if value is None:
        del record[name]
    else:
        record[name] = value


@pytest.mark.parametrize(
    ("kind", "field", "value", "words"), WRONG_FIELDS, ids=[f"{k}:{f}" for k, f, *_ in WRONG_FIELDS]
)
def test_a_wrong_typed_field_of_retriever_json_is_named_in_one_line(
    kind, field, value, words, indexes, tmp_path
):
    index = shutil.copytree(indexes / kind, tmp_path / kind)
    settings = json.loads((index / "retriever.json").read_text())
    _set_field(settings, field, value)
    (index / "retriever.json").write_text(json.dumps(settings, indent=2))
    before = folder_files(index)
    command = ["retrieve", "--retriever", kind, "--index", index, *NO_DATASET]
    line = _one_line_error(_namesake(*command, "--out", tmp_path / "never.jsonl"))
    assert line.startswith(f"namesake: error: {index / 'retriever.json'}: "), line
    assert words in line and line.endswith(f"so {REBUILD}"), line
    assert folder_files(index) == before and not (tmp_path / "never.jsonl").exists()


def test_every_kind_written_passes_its_schema_and_unknown_fields_pass_too(indexes, tmp_path):
    for kind in KINDS:
        settings = read_settings(indexes / kind, retriever_class(kind).INDEX_KIND)
        assert settings == json.loads((indexes / kind / "retriever.json").read_text())
    newer = shutil.copytree(indexes / "bm25", tmp_path / "bm25")
    settings = json.loads((newer / "retriever.json").read_text())
    (newer / "retriever.json").write_text(json.dumps({**settings, "a_later_field": [1]}))
    assert read_settings(newer, "bm25")["a_later_field"] == [1]


# --- a new index where it cannot be written (issue 48) ------------------------------------


@pytest.mark.parametrize("command", ("retrieve", "amber compare"))
def test_a_new_index_that_cannot_be_written_is_refused_before_the_build(command, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    corpus = SAMPLE_KILT.read_bytes()
    if command == "retrieve":
        index, option = locked / "bm25", "--index"
        args = ["retrieve", "--retriever", "bm25", "--index", index, *NO_DATASET]
        args += ["--corpus", SAMPLE_KILT, "--out", tmp_path / "never.jsonl"]
    else:
        index, option = locked / "indexes" / "bm25", "--index-dir"
        args = ["amber", "compare", "--retriever", "bm25", "--index-dir", locked / "indexes"]
        args += ["--corpus", SAMPLE_KILT, "--dataset", "never-read", "--collections", "human"]
        args += ["--out", tmp_path / "never"]
    with _read_only(locked):
        line = _one_line_error(_namesake(*args))
    assert line.startswith(f"namesake: error: {option} {index}: cannot write in "), line
    assert line.endswith("nothing was done"), line
    assert list(locked.iterdir()) == [] and SAMPLE_KILT.read_bytes() == corpus
    assert sorted(path.name for path in tmp_path.iterdir()) == ["locked"]  # no --out either


def test_weights_fingerprints_read_only_the_weights(tmp_path):
    model = Path(save_tiny_bert(tmp_path / "bert"))
    before = provenance.weights_fingerprint(model)
    (model / "README.md").write_text("notes")  # not weights
    (model / "checkpoint-10").mkdir()
    (model / "checkpoint-10" / "model.safetensors").write_bytes(b"old")
    assert provenance.weights_fingerprint(model) == before
    assert provenance.weights_fingerprint(tmp_path) != before  # relative names count
    assert provenance.weights_fingerprint(tmp_path / "nothing-here") is None
