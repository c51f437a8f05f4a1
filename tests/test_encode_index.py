"""Sharded, resumable encoding (`namesake encode`) and indexes built from it (`namesake index`).

The encoder is the bundled all-MiniLM-L6-v2 on the bundled sample corpus (53 passages),
in small chunks so that runs have several of them.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import SAMPLE_KILT
from datasets import load_dataset
from tiny_models import accelerate_launch

from namesake.amber.build.reference import COLLECTIONS
from namesake.cli import build_parser
from namesake.errors import BadInputError
from namesake.retrieval import DenseRetriever, read_kilt_documents
from namesake.retrieval import embeddings as store
from namesake.retrieval.encode import DEFAULT_CHUNK_PASSAGES, PRECISIONS, encode_corpus
from namesake.retrieval.faiss_index import DEFAULT_TRAIN_SIZE, INDEX_TYPES

ROOT = Path(__file__).resolve().parent.parent
CHUNK = 8  # 53 sample passages: 7 chunks, the last one of 5
OPTIONS = {"chunk_passages": CHUNK, "batch_size": 4, "show_progress": False}


def _encode(out: Path, **options):
    return encode_corpus(SAMPLE_KILT, out, **{**OPTIONS, **options})


def _chunk_files(folder: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.glob("chunk-*/*"))
    }


@pytest.fixture(scope="module")
def single(tmp_path_factory) -> Path:
    """The sample corpus encoded by one process."""
    out = tmp_path_factory.mktemp("single") / "emb"
    summary = _encode(out)
    assert (summary.num_chunks, summary.chunks_encoded, summary.chunks_skipped) == (7, 7, 0)
    assert (summary.num_passages, summary.num_documents) == (53, 47)
    return out


@pytest.fixture(scope="module")
def amber_queries(sample_build, tmp_path_factory) -> list[str]:
    """Every query of the AmbER sample build (all collections and tasks)."""
    out, _ = sample_build
    cache = tmp_path_factory.mktemp("cache")
    queries = []
    for collection in COLLECTIONS:
        for task in ("qa", "sf", "fc"):
            rows = load_dataset(
                str(out / "dataset"), f"{collection}_{task}", split="test", cache_dir=str(cache)
            )
            queries += rows["input"]
    return queries


# --- sharded = unsharded ----------------------------------------------------------------


def test_two_processes_encode_and_index_like_one(single, amber_queries, tmp_path):
    sharded = tmp_path / "emb"
    done = accelerate_launch(
        "namesake",
        ["encode", "--corpus", str(SAMPLE_KILT), "--out", str(sharded)]
        + ["--chunk-passages", str(CHUNK), "--batch-size", "4"],
        module=True,
    )
    # process 0 took chunks 0, 2, 4, 6 and process 1 chunks 1, 3, 5; one summary line
    assert done.stdout.count("encoded 7 chunks now, 0 were already done (per process: 4 3)") == 1
    # each process wrote its own chunks: the same bytes as one process writing all of them
    assert _chunk_files(sharded) == _chunk_files(single)

    one = DenseRetriever.from_embeddings(single, "flat", show_progress=False)
    two = DenseRetriever.from_embeddings(sharded, "flat", show_progress=False)
    assert len(amber_queries) > 100
    top_one, top_two = one.search(amber_queries, 10), two.search(amber_queries, 10)
    assert [[d for d, _ in r] for r in top_one] == [[d for d, _ in r] for r in top_two]


def test_tokenizer_workers_feed_the_same_batches(single, tmp_path):
    """Two DataLoader workers tokenise alternate chunks: the chunks are unchanged."""
    summary = _encode(tmp_path / "emb", tokenizer_workers=2)
    assert summary.chunks_encoded == 7
    assert _chunk_files(tmp_path / "emb") == _chunk_files(single)


def test_flat_index_from_embeddings_ranks_like_the_in_memory_build(single, amber_queries):
    """float16 storage moves scores by ~1e-3 at most: the same documents come first."""
    stored = DenseRetriever.from_embeddings(single, "flat", show_progress=False)
    in_memory = DenseRetriever.build(read_kilt_documents(SAMPLE_KILT), show_progress=False)
    assert stored.document_ids == in_memory.document_ids
    for a, b in zip(
        stored.search(amber_queries, 5), in_memory.search(amber_queries, 5), strict=True
    ):
        assert a[0][0] == b[0][0]
        assert [s for _, s in a] == pytest.approx([s for _, s in b], abs=2e-3)


def test_sharded_index_searches_like_one_index_and_survives_mmap_loading(
    single, amber_queries, tmp_path
):
    one = DenseRetriever.from_embeddings(single, "flat", show_progress=False)
    three = DenseRetriever.from_embeddings(single, "flat", shards=3, show_progress=False)
    assert [offset for offset, _ in three.shards] == [0, 16, 40]  # chunks 0-1, 2-4, 5-6
    expected = one.search(amber_queries, 10)
    assert three.search(amber_queries, 10) == expected
    three.save(tmp_path / "idx")
    assert sorted(p.name for p in (tmp_path / "idx").glob("*.faiss")) == [
        f"index-0000{i}-of-00003.faiss" for i in range(3)
    ]
    loaded = DenseRetriever.load(tmp_path / "idx", mmap=True)
    assert loaded.search(amber_queries, 10) == expected


# --- resuming ---------------------------------------------------------------------------


def test_a_killed_run_resumes_without_re_encoding_finished_chunks(single, tmp_path):
    out = tmp_path / "emb"
    kill_after_first_chunk = (
        "import os, signal, sys\n"
        "from namesake.retrieval.encode import encode_corpus\n"
        f"encode_corpus(sys.argv[1], sys.argv[2], chunk_passages={CHUNK}, batch_size=4,\n"
        "    show_progress=False, after_chunk=lambda n: os.kill(os.getpid(), signal.SIGKILL))\n"
    )
    env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONPATH=str(ROOT))
    killed = subprocess.run(
        [sys.executable, "-c", kill_after_first_chunk, str(SAMPLE_KILT), str(out)],
        env=env,
        capture_output=True,
        timeout=300,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr.decode()[-2000:]
    assert sorted(p.name for p in out.glob("chunk-*")) == ["chunk-000000"]
    with pytest.raises(BadInputError, match="not finished"):
        store.EmbeddingsFolder(out)

    summary = _encode(out)
    assert (summary.chunks_encoded, summary.chunks_skipped) == (6, 1)
    assert _chunk_files(out) == _chunk_files(single)
    again = _encode(out)
    assert (again.chunks_encoded, again.chunks_skipped) == (0, 7)
    assert store.EmbeddingsFolder(out).num_passages == 53


def test_leftovers_of_a_chunk_being_written_are_removed_on_rerun(single, tmp_path):
    out = tmp_path / "emb"
    shutil.copytree(single, out)
    shutil.rmtree(out / "chunk-000003")
    partial = out / ".chunk-000003.partial-x1y2"  # what a kill during the rename leaves
    partial.mkdir()
    (partial / "embeddings.npy").write_bytes(b"\x93NUMPY half")
    summary = _encode(out)
    assert (summary.chunks_encoded, summary.chunks_skipped) == (1, 6)
    assert not partial.exists()
    assert _chunk_files(out) == _chunk_files(single)


# --- bad input --------------------------------------------------------------------------


def test_rerun_with_other_settings_is_refused_naming_the_manifest(single, tmp_path):
    out = tmp_path / "emb"
    shutil.copytree(single, out)
    with pytest.raises(BadInputError, match=r"encoding\.json.*chunk_passages: 8 there, 16 now"):
        _encode(out, chunk_passages=16)


def test_chunk_from_another_setting_is_refused_by_name(single, tmp_path):
    other = tmp_path / "other"
    _encode(other, max_passages=20)  # chunks 0-2 of another run (other settings)
    mixed = tmp_path / "mixed"
    shutil.copytree(single, mixed)
    shutil.rmtree(mixed / "chunk-000001")
    shutil.copytree(other / "chunk-000001", mixed / "chunk-000001")
    with pytest.raises(BadInputError, match=r"chunk-000001: encoded with other settings"):
        DenseRetriever.from_embeddings(mixed, "flat", show_progress=False)


def _remove(chunk: Path) -> None:
    shutil.rmtree(chunk)


def _truncate(chunk: Path) -> None:
    path = chunk / "embeddings.npy"
    path.write_bytes(path.read_bytes()[:300])


def _other_dimension(chunk: Path) -> None:
    np.save(chunk / "embeddings.npy", np.zeros((CHUNK, 383), dtype=np.float16))


@pytest.mark.parametrize(
    ("chunk", "damage", "message"),
    [
        ("chunk-000004", _remove, r"chunk-000004: chunk missing"),
        ("chunk-000002", _truncate, r"chunk-000002/embeddings\.npy: unreadable"),
        ("chunk-000005", _other_dimension, r"chunk-000005/embeddings\.npy: shape \(8, 383\)"),
    ],
    ids=["missing", "truncated", "other-dimension"],
)
def test_a_damaged_chunk_is_named(single, tmp_path, chunk, damage, message):
    out = tmp_path / "emb"
    shutil.copytree(single, out)
    damage(out / chunk)
    with pytest.raises(BadInputError, match=message):
        DenseRetriever.from_embeddings(out, "flat", show_progress=False)


def test_query_model_of_another_dimension_is_refused(single, tmp_path):
    from tiny_models import save_tiny_bert

    tiny = save_tiny_bert(tmp_path / "tiny")
    with pytest.raises(BadInputError, match=r"encoding\.json: 384-d passage embeddings"):
        DenseRetriever.from_embeddings(single, "flat", query_model=str(tiny))


# --- compressed index -------------------------------------------------------------------


def _random_folder(folder: Path, n: int = 6000, d: int = 32, chunk: int = 1000) -> np.ndarray:
    """An embeddings folder of `n` clustered unit vectors (no model needed)."""
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(40, d))
    vectors = centres[rng.integers(0, 40, n)] + 0.3 * rng.normal(size=(n, d))
    vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float16)
    settings = {
        "model": "random",
        "model_is_default": False,
        "dimension": d,
        "normalized": True,
        "passage_words": 100,
        "title_separator": "[SEP]",
        "prompt": None,
        "chunk_passages": chunk,
        "max_passages": None,
        "corpus": "none",
        "corpus_bytes": 0,
    }
    store.prepare_folder(folder, settings)
    digest = store.settings_digest(settings)
    for number, start in enumerate(range(0, n, chunk)):
        rows = np.arange(start, min(n, start + chunk))
        store.write_chunk(
            folder, number, vectors[rows], rows // 2, [str(r // 2) for r in rows], digest
        )
    store.finish_folder(
        folder, {"num_passages": n, "num_documents": n // 2, "num_chunks": -(-n // chunk)}
    )
    return vectors.astype(np.float32)


def test_ivfpq_is_compact_and_reranking_recovers_the_exact_ranking(tmp_path):
    vectors = _random_folder(tmp_path / "emb")
    queries = vectors[:50] + 0.05
    exact = DenseRetriever.from_embeddings(tmp_path / "emb", "flat", show_progress=False)
    compressed = DenseRetriever.from_embeddings(
        tmp_path / "emb", "ivfpq", shards=2, show_progress=False
    )
    assert compressed.settings["factory"] == "IVF155,PQ32x4fs"
    assert compressed.settings["rerank_candidates"] == 1000
    truth = exact.search_embeddings(queries, 10)
    found = compressed.search_embeddings(queries, 10)
    overlap = np.mean(
        [len({d for d, _ in a} & {d for d, _ in b}) / 10 for a, b in zip(truth, found, strict=True)]
    )
    assert overlap >= 0.95
    # scores after re-ranking are the exact float16-vector scores
    for a, b in zip(truth, found, strict=True):
        common = dict(a).keys() & dict(b).keys()
        assert all(dict(a)[c] == pytest.approx(dict(b)[c], abs=1e-5) for c in common)

    compressed.save(tmp_path / "idx")
    index_bytes = sum(p.stat().st_size for p in (tmp_path / "idx").glob("*.faiss"))
    flat_bytes = 6000 * 32 * 4
    # 16 bytes of codes + 8 of id against 128 a vector (+ centroids and the padding of short
    # lists to blocks of 32, which weigh much at 6,000 vectors)
    assert index_bytes < flat_bytes / 2
    loaded = DenseRetriever.load(tmp_path / "idx", mmap=True)
    assert loaded.search_embeddings(queries, 10) == found
    shutil.rmtree(tmp_path / "emb")  # re-ranking needs the stored vectors
    with pytest.raises(BadInputError, match="no such embeddings folder"):
        DenseRetriever.load(tmp_path / "idx")


def test_too_few_passages_to_train_is_a_clear_error(single):
    with pytest.raises(BadInputError, match=r"emb: IVF15,PQ96x4fs needs at least 256 passages"):
        DenseRetriever.from_embeddings(single, "ivfpq", show_progress=False)


# --- the commands -----------------------------------------------------------------------


def test_command_defaults_match_the_modules():
    parser = build_parser()
    encode = parser.parse_args(["encode", "--corpus", "c", "--out", "o"])
    assert encode.chunk_passages == DEFAULT_CHUNK_PASSAGES
    index = parser.parse_args(["index", "--embeddings", "e", "--index-type", "flat", "--out", "o"])
    assert index.train_size == DEFAULT_TRAIN_SIZE
    commands = parser._subparsers._group_actions[0].choices
    choices = {
        (name, action.dest): action.choices
        for name in ("encode", "index")
        for action in commands[name]._actions
    }
    assert tuple(choices["index", "index_type"]) == INDEX_TYPES
    assert tuple(choices["encode", "mixed_precision"]) == PRECISIONS


def test_retrieve_and_compare_read_an_index_built_by_the_commands(single, sample_build, tmp_path):
    from namesake.cli import main

    out, _ = sample_build
    main(
        [
            "index",
            "--embeddings",
            str(single),
            "--index-type",
            "flat",
            "--out",
            str(tmp_path / "idx" / "dense"),
        ]
    )
    predictions = tmp_path / "human_qa.jsonl"
    main(
        ["retrieve", "--retriever", "dense", "--index", str(tmp_path / "idx" / "dense")]
        + ["--dataset", str(out / "dataset"), "--config", "human_qa", "--out", str(predictions)]
    )
    rows = [json.loads(line) for line in predictions.read_text().splitlines()]
    assert rows and all(len(row["output"]["provenance"]) == 47 for row in rows)
    main(
        ["amber", "compare", "--corpus", str(SAMPLE_KILT), "--dataset", str(out / "dataset")]
        + ["--out", str(tmp_path / "compare"), "--retriever", "dense", "--collections", "human"]
        + ["--index-dir", str(tmp_path / "idx")]
    )
    table = (tmp_path / "compare" / "results.md").read_text()
    assert table.count("| dense |") == 3  # QA, SF, FC of AmbER-H
    compared = (tmp_path / "compare" / "predictions" / "dense-human_qa.jsonl").read_text()
    assert compared == predictions.read_text()  # the same index answered both
