"""Where the Space keeps what it builds on first start (issue 48): an artifacts folder that a
user made is only read, byte for byte; the indexes and page store it lacks are built in
namesake's cache folder, one per artifacts folder and corpus, and reused on the next start.
A folder that namesake wrote keeps them beside its files, in ``indexes/``."""

import logging
from pathlib import Path

import gradio as gr
import pytest
from conftest import SAMPLE_KILT, load_module
from folders import folder_files

from namesake.errors import BadInputError
from namesake.outputs import atomic_directory
from namesake.space.artifacts import cache_folder, load_artifacts

APP = Path(__file__).resolve().parents[1] / "space_app" / "app.py"
TROMBONIST_QUERY = "What musical instrument does Abe Lincoln play?"
TROMBONIST_PAGE = "3412877"
BUILT = ("bm25/retriever.json", "dense/index.faiss", "documents.arrow")


@pytest.fixture(scope="module")
def app():
    return load_module(APP, "space_app_under_test")


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("NAMESAKE_CACHE", str(folder))
    return folder


def users_folder(sample_build, folder: Path) -> Path:
    """An artifacts folder as a user makes one: the sample AmbER build linked in, a note."""
    folder.mkdir()
    (folder / "amber").symlink_to(sample_build[0] / "dataset", target_is_directory=True)
    (folder / "notes.txt").write_text("my artifacts\n")
    return folder


def start_and_search(app, monkeypatch, caplog, folder: Path) -> list[str]:
    """``python space_app/app.py --artifacts FOLDER --corpus SAMPLE`` without its server
    (`launch` only records the page), then the search the page's button runs for the
    trombonist's query; returns what the app logged."""
    launched = []
    monkeypatch.setattr(gr.Blocks, "launch", lambda demo, **_: launched.append(demo))
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="namesake.space"):
        app.main(["--artifacts", str(folder), "--corpus", str(SAMPLE_KILT)])
    (demo,) = launched
    search = next(block.fn for block in demo.fns.values() if block.name == "run_search")
    _, bm25, dense, *_ = search(TROMBONIST_QUERY, 5)
    assert f'data-page="{TROMBONIST_PAGE}"' in bm25 + dense, "the query was served"
    return [record.getMessage() for record in caplog.records]


def test_a_folder_the_user_made_is_only_read_and_the_cache_is_reused(
    app, sample_build, tmp_path, cache, monkeypatch, caplog
):
    folder = users_folder(sample_build, tmp_path / "artifacts")
    before = folder_files(folder)
    dataset_before = folder_files(folder / "amber")

    said = start_and_search(app, monkeypatch, caplog, folder)
    built = cache_folder(folder, SAMPLE_KILT)
    assert built.parent == cache / "space"
    building = [line for line in said if line.startswith("Building the ")]
    assert [line.split(" index")[0] for line in building] == [
        "Building the bm25",
        "Building the dense",
    ]
    assert all(f" into {built}/" in line for line in building)
    assert folder_files(folder) == before, "nothing written into the user's folder"
    assert folder_files(folder / "amber") == dataset_before
    assert all((built / name).is_file() for name in BUILT)
    cached = folder_files(cache)

    said = start_and_search(app, monkeypatch, caplog, folder)  # the second start
    assert not [line for line in said if line.startswith("Building")]
    assert folder_files(cache) == cached, "reused as it was"
    assert folder_files(folder) == before


def test_a_folder_namesake_wrote_keeps_its_indexes_beside_its_files(sample_build, tmp_path, cache):
    folder = tmp_path / "artifacts"
    with atomic_directory(folder, writer="make demo") as staging:
        (staging / "amber").symlink_to(sample_build[0] / "dataset", target_is_directory=True)
    assert cache_folder(folder, SAMPLE_KILT) == folder / "indexes"
    first = load_artifacts(folder, corpus=SAMPLE_KILT, report=lambda _: None)
    assert all((folder / "indexes" / name).is_file() for name in BUILT)
    assert not cache.exists()
    said = []
    again = load_artifacts(folder, corpus=None, report=said.append)  # no corpus needed now
    assert said == [] and len(again.documents) == len(first.documents) == 47


def test_the_cache_folder_is_one_per_artifacts_folder_and_corpus(tmp_path, monkeypatch):
    other_corpus = tmp_path / "other.json"
    other_corpus.write_bytes(SAMPLE_KILT.read_bytes()[:-200])
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    monkeypatch.delenv("NAMESAKE_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    here = cache_folder(tmp_path / "a", SAMPLE_KILT)
    assert here.parent == tmp_path / "xdg" / "namesake" / "space"
    assert cache_folder(tmp_path / "a" / ".." / "a", SAMPLE_KILT) == here, "by resolved path"
    assert cache_folder(tmp_path / "b", SAMPLE_KILT) != here
    assert cache_folder(tmp_path / "a", other_corpus) != here


def test_a_missing_corpus_is_one_line_and_nothing_is_written(sample_build, tmp_path, cache):
    folder = users_folder(sample_build, tmp_path / "artifacts")
    before = folder_files(tmp_path)
    missing = tmp_path / "missing.json"
    with pytest.raises(BadInputError) as refused:
        load_artifacts(folder, corpus=missing)
    assert str(refused.value) == f"{missing}: no such file"
    assert folder_files(tmp_path) == before and not cache.exists()
