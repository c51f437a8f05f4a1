"""The demo Space staged as the folder its Space repo holds (`namesake.publish.demo_space`):
what it carries, what it leaves out, its card, and that its artifacts load with nothing to
build. Nothing is uploaded here: staging stops before the network."""

import sys
import zipfile
from importlib import metadata
from pathlib import Path

import datasets
import pytest
from huggingface_hub import SpaceCard

from namesake.errors import NamesakeError
from namesake.publish.demo_space import ABSOLUTE_PATH, stage_demo_space
from namesake.space.artifacts import load_artifacts

CHECKOUT = Path(__file__).resolve().parents[1]
HUB_DATASET = "someone/amber"


@pytest.fixture(scope="module")
def staged(demo_artifacts, tmp_path_factory):
    return stage_demo_space(tmp_path_factory.mktemp("stage") / "space", demo_artifacts)


def files(folder: Path) -> list[str]:
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*") if path.is_file())


def test_the_staged_space_holds_the_app_its_wheel_and_the_demo_outputs(staged):
    assert sorted(path.name for path in staged.iterdir() if not path.name.startswith(".")) == [
        "README.md",
        "app.py",
        "artifacts",
        "requirements.txt",
        "wheels",
    ]
    assert (staged / "app.py").read_text() == (CHECKOUT / "space_app" / "app.py").read_text()
    (wheel,) = (staged / "wheels").glob("*.whl")
    assert f"./wheels/{wheel.name}[space]" in (staged / "requirements.txt").read_text()
    with zipfile.ZipFile(wheel) as archive:
        assert "namesake/space/artifacts.py" in archive.namelist()
    carried = files(staged / "artifacts")
    assert "indexes/bm25/retriever.json" in carried and "indexes/dense/index.faiss" in carried
    assert "indexes/documents.arrow" in carried  # built here: make demo writes no page store
    assert {"leaderboard/leaderboard.md", "leaderboard/popularity_curve.png"} <= set(carried)
    assert any(name.startswith("amber/human_qa/") for name in carried)


def test_nothing_namesake_keeps_for_itself_is_staged(staged, demo_artifacts):
    assert (demo_artifacts / "indexes" / "bm25" / ".namesake-output.json").is_file()
    hidden = [
        name
        for name in files(staged)
        if any(part.startswith(".") or part == "__pycache__" for part in Path(name).parts)
    ]
    # the staged folder's own marker (hidden: an upload leaves it out), and nothing else
    assert hidden == [".namesake-output.json"]
    assert not any(path.name.startswith(".") for path in staged.parent.iterdir())


def test_the_card_says_how_the_space_runs_and_what_it_carries(staged):
    card = SpaceCard.load(staged / "README.md")
    assert card.data.sdk == "gradio"
    assert card.data.sdk_version == metadata.version("gradio")
    assert card.data.app_file == "app.py" and card.data.license == "apache-2.0"
    assert "It carries the AmbER sample build (`amber/`)" in card.text
    assert "downloads and builds nothing when it starts" in card.text


def test_no_staged_text_file_names_a_path_of_this_machine(staged, demo_artifacts):
    settings = (demo_artifacts / "indexes" / "dense" / "retriever.json").read_text()
    assert str(CHECKOUT) in settings  # what namesake recorded: the corpus's path
    local = [str(CHECKOUT), sys.prefix, str(Path.home()), str(demo_artifacts.parent)]
    for name in files(staged):
        try:
            text = (staged / name).read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        assert not [folder for folder in local if folder in text], name
        assert ABSOLUTE_PATH.search(text) is None, name
    staged_settings = (staged / "artifacts" / "indexes" / "dense" / "retriever.json").read_text()
    assert '"path": "dataset_scripts/amber/sample/kilt_knowledgesource-sample.json"' in (
        staged_settings
    )


def test_the_staged_artifacts_load_with_nothing_to_build(staged, tmp_path, monkeypatch):
    monkeypatch.setenv("NAMESAKE_CACHE", str(tmp_path / "cache"))
    before = files(staged)
    loaded = load_artifacts(staged / "artifacts", corpus=None)
    assert set(loaded.retrievers) == {"bm25", "dense"}
    assert len(loaded.documents) == 47 and loaded.leaderboard is not None
    assert len(set(loaded.queries["collection"].to_pylist())) == 2
    assert files(staged) == before and not (tmp_path / "cache").exists()


def test_a_missing_artifacts_folder_is_one_line_naming_make_demo(tmp_path):
    with pytest.raises(NamesakeError) as raised:
        stage_demo_space(tmp_path / "space", tmp_path / "demo_output")
    message = str(raised.value)
    assert message.startswith(f"No artifacts folder at {tmp_path / 'demo_output'}")
    assert "run `make demo` first" in message and "\n" not in message
    assert not (tmp_path / "space").exists()


def test_an_incomplete_artifacts_folder_names_what_it_lacks(demo_artifacts, tmp_path):
    partial = tmp_path / "demo_output"
    partial.mkdir()
    (partial / "amber").symlink_to(demo_artifacts / "amber", target_is_directory=True)
    (partial / "indexes").mkdir()
    (partial / "indexes" / "bm25").symlink_to(demo_artifacts / "indexes" / "bm25")
    with pytest.raises(NamesakeError) as raised:
        stage_demo_space(tmp_path / "space", partial)
    assert str(raised.value) == (
        f"{partial}: no indexes/dense, leaderboard/leaderboard.md, "
        "leaderboard/popularity_curve.png: run `make demo` first (it writes them all)"
    )
    assert not (tmp_path / "space").exists()


@pytest.fixture
def hub_dataset(demo_artifacts, monkeypatch):
    """`HUB_DATASET` read as the local sample build: a stand-in for the Hub (the network
    edge; tests run offline), the rest of `load_dataset` real."""
    load_dataset = datasets.load_dataset

    def from_the_hub(path, *args, **kwargs):
        if path == HUB_DATASET:
            path = str((demo_artifacts / "amber").resolve())
        return load_dataset(path, *args, **kwargs)

    monkeypatch.setattr(datasets, "load_dataset", from_the_hub)


def test_with_a_hub_dataset_the_space_reads_it_instead_of_carrying_amber(
    hub_dataset, demo_artifacts, staged, tmp_path
):
    staged = stage_demo_space(tmp_path / "space", demo_artifacts, dataset=HUB_DATASET)
    artifacts = staged / "artifacts"
    assert not (artifacts / "amber").exists()
    assert (artifacts / "amber_dataset.txt").read_text() == f"{HUB_DATASET}\n"
    assert (artifacts / "indexes" / "documents.arrow").is_file()
    card = SpaceCard.load(staged / "README.md")
    assert card.data.datasets == [HUB_DATASET]
    assert f"reads the AmbER dataset [{HUB_DATASET}]" in card.text
    loaded = load_artifacts(artifacts, corpus=None)
    assert loaded.queries.equals(load_artifacts(staged / "artifacts").queries)


def test_a_dataset_that_is_not_a_hub_id_is_refused(demo_artifacts, tmp_path):
    for dataset in (str(demo_artifacts / "amber"), "amber"):
        with pytest.raises(NamesakeError, match="the Hub id \\(OWNER/NAME\\)|not a Hub id"):
            stage_demo_space(tmp_path / "space", demo_artifacts, dataset=dataset)
    assert not (tmp_path / "space").exists()


def test_a_wheel_that_cannot_be_built_is_one_line(demo_artifacts, tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "executable", "/bin/false")
    with pytest.raises(NamesakeError) as raised:
        stage_demo_space(tmp_path / "space", demo_artifacts)
    assert str(raised.value) == (
        f"could not build the namesake wheel from {CHECKOUT} (pip wheel exited with 1)"
    )
    assert not (tmp_path / "space").exists()


def test_an_empty_dataset_id_file_names_itself(tmp_path):
    (tmp_path / "amber_dataset.txt").write_text("\n")
    with pytest.raises(NamesakeError) as raised:
        load_artifacts(tmp_path, corpus=None)
    assert str(raised.value) == (
        f"{tmp_path / 'amber_dataset.txt'}:1: empty: it names the AmbER dataset's Hub id"
    )
