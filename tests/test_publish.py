"""`namesake publish`: each kind (the AmbER and WES datasets, a trained model) staged, checked
and uploaded, and every bad input refused in one line before anything is staged or sent.

Staging and checking are real: the AmbER sample build, a WES build of the real Wikipedia
excerpt and a tiny saved BERT are copied, their cards parsed with ``huggingface_hub``'s card
classes and every config loaded with ``datasets.load_dataset`` from the staged folder. The
upload is the network edge, and there is no network here: `Recorder` stands in for
``huggingface_hub.HfApi`` in `namesake.publish.upload` (a mock, said so), recording the repo
type and id and the exact files under the uploaded folder at the time of the call.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from huggingface_hub import DatasetCard, ModelCard

import namesake.publish.upload as upload_module
from namesake.cli import main
from namesake.outputs import FILES_RECORD, MARKER, read_marker
from namesake.publish.staging import publishable_files
from namesake.wes.build import build_wes, dump_sources

ROOT = Path(__file__).resolve().parent.parent
CARD_FIELDS = ("license", "task_categories", "size_categories", "configs")
#: what a source folder may hold that no upload may carry: markers, caches, what a killed
#: write left, hidden files
PLANTED = (
    MARKER,
    f"human/{FILES_RECORD}",
    ".cache/lock",
    "__pycache__/card.cpython-311.pyc",
    ".dataset.partial-x1/README.md",
    ".dataset.old-42/README.md",
    ".notes.txt",
)


class Recorder:
    """Stands in for ``huggingface_hub.HfApi`` (no network in tests): records each call, with
    the files under the uploaded folder as they are when it is called."""

    calls: list[tuple] = []

    def __init__(self, token=None):
        self.token = token

    def create_repo(self, repo_id, **kwargs):
        Recorder.calls.append(("create_repo", repo_id, kwargs, self.token))
        return f"https://huggingface.co/{repo_id}"

    def upload_folder(self, **kwargs):
        folder = Path(kwargs["folder_path"])
        tree = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
        Recorder.calls.append(("upload_folder", kwargs["repo_id"], kwargs, tree))
        return f"https://huggingface.co/{kwargs['repo_id']}/commit/abc"


@pytest.fixture
def recorder(monkeypatch):
    Recorder.calls = []
    monkeypatch.setattr(upload_module, "HfApi", Recorder)
    monkeypatch.setenv("HF_TOKEN", "hf_test_token")
    return Recorder


@pytest.fixture(scope="module")
def wes_build(wikipedia_excerpt, tmp_path_factory) -> Path:
    """A WES build of the real excerpt (threshold 5, no dictionary filter: fast)."""
    out = tmp_path_factory.mktemp("wes") / "wes"
    build_wes(wikipedia_excerpt, out, thresholds=[5], year=2016, dictionary=False)
    return out


@pytest.fixture(scope="module")
def model_folder(tmp_path_factory) -> Path:
    """A trained model folder as a training script writes it: a tiny BERT, its tokenizer
    and the card rendered from model_cards/ by the scripts' own `render_card`."""
    from tiny_models import save_tiny_bert

    from namesake.training import render_card

    folder = save_tiny_bert(tmp_path_factory.mktemp("model") / "cross_encoder", num_labels=1)
    card_data = {
        "library_name": "sentence-transformers",
        "license": "apache-2.0",
        "base_model": "sentence-transformers/all-MiniLM-L6-v2",
        "tags": ["cross-encoder", "wes"],
    }
    card = render_card(ROOT / "model_cards" / "wes_cross_encoder.md", card_data, model_id="me/x")
    (folder / "README.md").write_text(card, encoding="utf-8")
    (folder / "metrics.json").write_text("{}\n")
    return folder


def _with_planted_files(source: Path, copy: Path) -> Path:
    """A copy of `source` with every kind of file an upload must leave out planted in it."""
    shutil.copytree(source, copy)
    for name in PLANTED:
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        (copy / name).write_text("local only\n")
    return copy


def _data_files(folder: Path) -> list[str]:
    """The files of a folder a user would upload: everything but markers and hidden files,
    caches and leftovers, found independently of namesake's rule."""
    return sorted(
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file()
        and not any(
            part.startswith(".") or part == "__pycache__" for part in p.relative_to(folder).parts
        )
    )


def _stage(kind: list[str], source: Path, out: Path, capsys) -> list[str]:
    main(["publish", *kind, str(source), "--stage-only", str(out)])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("Staged ") and lines[0].endswith("; nothing uploaded")
    return [line.strip() for line in lines[1:]]


def _configs(card: Path) -> list[str]:
    return [entry["config_name"] for entry in DatasetCard.load(card).data.to_dict()["configs"]]


def _check_dataset_card(card_path: Path) -> dict:
    data = DatasetCard.load(card_path).data.to_dict()
    for field in CARD_FIELDS:
        assert data.get(field), field
    return data


def _check_loads_as_built(source: Path, staged: Path, tmp_path: Path) -> None:
    """Every config loads from the staged folder, with the rows of the source's shards."""
    for config in _configs(staged / "README.md"):
        loaded = datasets.load_dataset(str(staged), config, cache_dir=str(tmp_path / "cache"))
        shards = sorted((source / config).glob("*.parquet"))
        assert sorted(loaded) == sorted({shard.name.split("-")[0] for shard in shards}), config
        for split, rows in loaded.items():
            expected = [pq.read_table(p) for p in shards if p.name.startswith(f"{split}-")]
            assert rows.to_list() == pa.concat_tables(expected).to_pylist(), (config, split)


def test_amber_is_staged_checked_and_loads_every_config(sample_build, tmp_path, capsys):
    build = sample_build[0] / "dataset"
    source = _with_planted_files(build, tmp_path / "dataset")
    staged = tmp_path / "staged"
    listed = _stage(["dataset", "amber"], source, staged, capsys)

    assert listed == _data_files(build) == publishable_files(staged)
    assert (staged / MARKER).is_file() and read_marker(staged)["writer"] == "publish dataset amber"
    data = _check_dataset_card(staged / "README.md")
    assert data["license"] == "cc0-1.0"
    queries = sum(
        pq.read_metadata(p).num_rows
        for c in ("human", "nonhuman")
        for p in (build / c).glob("*.parquet")
    )
    assert queries < 1000 and data["size_categories"] == ["n<1K"]  # the sample: its own size
    assert {"human", "human_qa", "nonhuman_entities"} <= set(_configs(staged / "README.md"))
    _check_loads_as_built(build, staged, tmp_path)
    assert datasets.load_dataset(str(staged), "human_qa", split="test").num_rows > 0


def test_wes_is_staged_with_its_licence_and_provenance(wes_build, tmp_path, capsys):
    source = _with_planted_files(wes_build, tmp_path / "wes")
    staged = tmp_path / "staged"
    listed = _stage(["dataset", "wes"], source, staged, capsys)

    assert listed == _data_files(wes_build) == publishable_files(staged)
    data = _check_dataset_card(staged / "README.md")
    assert data["license"] == "cc-by-sa-4.0"
    assert _configs(staged / "README.md") == ["2016thresh5corpus", "2016thresh5pairs"]
    text = DatasetCard.load(staged / "README.md").text
    assert "- dump: `enwiki-sample-pages-articles.xml.bz2`" in text
    assert "- dump date: `2016 (given with --year; the file name carries no date)`" in text
    _check_loads_as_built(wes_build, staged, tmp_path)


def test_wes_provenance_takes_the_date_from_the_dump_name():
    dumps = [Path("/d/enwiki-20181220-pages-articles-multistream.xml.bz2")]
    assert dump_sources(dumps, 2018) == {
        "dump": "enwiki-20181220-pages-articles-multistream.xml.bz2",
        "dump date": "2018-12-20",
    }


def test_model_is_staged_with_its_card(model_folder, tmp_path, capsys):
    source = _with_planted_files(model_folder, tmp_path / "model")
    staged = tmp_path / "staged"
    listed = _stage(["model"], source, staged, capsys)

    assert listed == _data_files(model_folder) == publishable_files(staged)
    assert {"config.json", "model.safetensors", "README.md", "tokenizer.json"} <= set(listed)
    card = ModelCard.load(staged / "README.md").data
    assert card.license == "apache-2.0"
    assert card.base_model == "sentence-transformers/all-MiniLM-L6-v2"


@pytest.mark.parametrize("kind", ["amber", "wes", "model"])
def test_upload_sends_the_staged_folder_only(
    kind, sample_build, wes_build, model_folder, recorder, tmp_path, capsys
):
    """The upload goes to the recorder (no network): one create_repo, one upload_folder of
    a staged copy (not the source), whose files are exactly the data files."""
    build, command, repo_type = {
        "amber": (sample_build[0] / "dataset", ["dataset", "amber"], "dataset"),
        "wes": (wes_build, ["dataset", "wes"], "dataset"),
        "model": (model_folder, ["model"], "model"),
    }[kind]
    source = _with_planted_files(build, tmp_path / "source")
    main(["publish", *command, str(source), "--repo-id", "me/thing", "--private"])

    assert [call[0] for call in recorder.calls] == ["create_repo", "upload_folder"]
    _, repo_id, created, token = recorder.calls[0]
    assert repo_id == "me/thing" and token == "hf_test_token"
    assert created == {"repo_type": repo_type, "private": True, "exist_ok": True}
    _, repo_id, uploaded, tree = recorder.calls[1]
    assert repo_id == "me/thing" and uploaded["repo_type"] == repo_type
    expected = _data_files(build)
    assert uploaded["allow_patterns"] == expected
    assert tree == sorted([*expected, MARKER])  # the staged folder: data and namesake's marker
    folder = Path(uploaded["folder_path"])
    assert not folder.is_relative_to(source) and not folder.exists()  # a temporary copy, gone
    out = capsys.readouterr().out
    page = {"dataset": "datasets/", "model": ""}[repo_type] + "me/thing"
    assert f"Uploaded {len(expected)} file(s) to https://huggingface.co/{page}" in out


def _error_line(argv: list[str]) -> str:
    with pytest.raises(SystemExit) as caught:
        main(argv)
    message = str(caught.value.code)
    assert message.startswith("namesake: error: ") and "\n" not in message, message
    return message.removeprefix("namesake: error: ")


def test_bad_inputs_are_one_line_and_upload_nothing(
    sample_build, wes_build, model_folder, recorder, tmp_path, monkeypatch
):
    amber = str(sample_build[0] / "dataset")
    wes, model = str(wes_build), str(model_folder)
    repo = ["--repo-id", "me/thing"]
    user_folder = tmp_path / "mine"
    user_folder.mkdir()
    (user_folder / "notes.txt").write_text("mine\n")
    missing = tmp_path / "missing"
    cases = {
        "--repo-id 'x': not OWNER/NAME": ["dataset", "amber", amber, "--repo-id", "x"],
        "--repo-id 'a/b/c': not OWNER/NAME": ["model", model, "--repo-id", "a/b/c"],
        "--repo-id OWNER/NAME is needed to upload": ["dataset", "wes", wes],
        f"{wes}/README.md: no config named human or nonhuman: not an AmbER build": [
            "dataset",
            "amber",
            wes,
            *repo,
        ],
        f"{amber}/README.md: no <year>thresh<n>corpus, pairs or hardpairs config": [
            "dataset",
            "wes",
            amber,
            *repo,
        ],
        f"{amber}: no config.json beside model weights": ["model", amber, *repo],
        f"{user_folder}/README.md: no dataset card: not a build of WES": [
            "dataset",
            "wes",
            str(user_folder),
            *repo,
        ],
        f"{missing}: no such folder": ["dataset", "wes", str(missing), *repo],
        f"{user_folder}": ["model", model, "--stage-only", str(user_folder)],
    }
    for expected, argv in cases.items():
        assert expected in _error_line(["publish", *argv]), argv
    assert sorted(p.name for p in user_folder.iterdir()) == ["notes.txt"]

    monkeypatch.delenv("HF_TOKEN")
    monkeypatch.setattr("huggingface_hub.get_token", lambda: None)  # nobody logged in
    assert _error_line(["publish", "model", model, *repo]).startswith(
        "no Hugging Face token: pass --token, set HF_TOKEN or run `hf auth login`"
    )
    assert recorder.calls == []


def test_a_card_without_a_field_or_a_config_that_does_not_load_is_refused(
    sample_build, recorder, tmp_path
):
    build = sample_build[0] / "dataset"
    no_license = tmp_path / "no_license"
    shutil.copytree(build, no_license)
    card = no_license / "README.md"
    card.write_text(card.read_text().replace("license: cc0-1.0\n", ""))
    assert _error_line(["publish", "dataset", "amber", str(no_license), "--repo-id", "a/b"]) == (
        f"{card}: the card's YAML has no license"
    )
    broken = tmp_path / "broken"
    shutil.copytree(build, broken)
    shard = next((broken / "human_qa").glob("*.parquet"))
    shard.write_bytes(b"not parquet")
    staged = tmp_path / "staged"
    message = _error_line(["publish", "dataset", "amber", str(broken), "--stage-only", str(staged)])
    assert message.startswith(f"{broken / 'README.md'}: config human_qa does not load: ")
    assert not staged.exists()  # a staged folder that failed its checks never appears
    assert recorder.calls == []


def test_stage_only_from_the_installed_command(sample_build, tmp_path):
    namesake = Path(sys.executable).with_name("namesake")
    command = [str(namesake)] if namesake.exists() else [sys.executable, "-m", "namesake"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    env.pop("HF_TOKEN", None)  # staging needs no token
    build = sample_build[0] / "dataset"
    staged = tmp_path / "staged"
    done = subprocess.run(
        [*command, "publish", "dataset", "amber", str(build), "--stage-only", str(staged)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == (
        f"Staged {len(_data_files(build))} file(s) in {staged}; nothing uploaded"
    )
    assert publishable_files(staged) == _data_files(build)
    again = subprocess.run(  # a rerun replaces its own staged folder
        [*command, "publish", "dataset", "amber", str(build), "--stage-only", str(staged)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert again.returncode == 0, again.stderr


def test_push_to_hub_checks_the_repo_id_and_token_before_training(monkeypatch, capsys):
    import argparse

    from namesake import training

    parser = argparse.ArgumentParser(prog="train")
    sizes = {"per_device_train_batch_size": 1, "per_device_eval_batch_size": 1}
    training.add_training_arguments(
        parser,
        model_help="model",
        validation_help="validation",
        num_train_epochs=1,
        learning_rate=1e-3,
        num_warmup_steps=0,
        **sizes,
    )
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setattr("huggingface_hub.get_token", lambda: None)
    for hub_id, expected in [
        ("x", "--hub_model_id 'x': not OWNER/NAME"),
        ("me/m", "no Hugging Face token"),
    ]:
        args = parser.parse_args(["--output_dir", "o", "--push_to_hub", "--hub_model_id", hub_id])
        with pytest.raises(SystemExit):
            training.check_training_arguments(parser, args)
        assert expected in capsys.readouterr().err


@pytest.mark.parametrize("name", ["entity_confusion", "wes_similarity"])
def test_a_metric_space_is_staged_and_uploaded_as_a_gradio_space(name, recorder, tmp_path):
    """`publish metric`: --stage-only writes the Space the metric_space checks passed, and
    the upload (to the recorder: no network) sends exactly that tree as a gradio Space."""
    from namesake.metrics import metric_path

    staged = tmp_path / "staged"
    main(["publish", "metric", name, "--stage-only", str(staged)])
    expected = sorted([*publishable_files(metric_path(name)), "metric_widget.py"])
    assert publishable_files(staged) == expected
    assert not recorder.calls  # staged only

    main(["publish", "metric", name, "--repo-id", f"me/{name}"])
    (_, repo_id, created, _), (_, _, uploaded, tree) = recorder.calls
    assert repo_id == f"me/{name}" and created["repo_type"] == "space"
    assert created["space_sdk"] == "gradio" and uploaded["repo_type"] == "space"
    assert uploaded["allow_patterns"] == expected and tree == sorted([*expected, MARKER])


def test_the_demo_space_is_staged_and_uploaded_with_its_artifacts(
    demo_artifacts, recorder, tmp_path
):
    staged = tmp_path / "staged"
    main(["publish", "space", "--artifacts", str(demo_artifacts), "--stage-only", str(staged)])
    files = publishable_files(staged)
    assert {"app.py", "README.md", "requirements.txt"} <= set(files)
    assert any(name.startswith("wheels/namesake-") and name.endswith(".whl") for name in files)
    assert "artifacts/leaderboard/leaderboard.md" in files
    assert any(name.startswith("artifacts/amber/") for name in files)

    main(["publish", "space", "--artifacts", str(demo_artifacts), "--repo-id", "me/demo"])
    (_, repo_id, created, _), (_, _, uploaded, tree) = recorder.calls
    assert repo_id == "me/demo" and created["repo_type"] == "space"
    assert created["space_sdk"] == "gradio"
    assert uploaded["allow_patterns"] == files and tree == sorted([*files, MARKER])


def test_a_metric_space_named_otherwise_than_its_script_is_refused(recorder):
    message = _error_line(["publish", "metric", "entity_confusion", "--repo-id", "me/confusion"])
    assert message.startswith("--repo-id me/confusion: a metric Space is loaded by evaluate")
    assert message.endswith("name it after the metric's script, me/entity_confusion")
    assert not recorder.calls
