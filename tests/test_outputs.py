"""Outputs never destroy what a user put there (issue 33, item 1): every command's output is
checked before any work (`namesake.commands.arguments.checked_outputs`), written whole or not
at all, marked as namesake's, and replaced by a rerun of the same command only; files
namesake did not write survive, with or without --overwrite."""

import contextlib
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import SAMPLE_KILT, SAMPLE_PAGECOUNTS_EZ, SAMPLE_WIKIDATA
from folders import folder_files

from namesake.cli import main
from namesake.outputs import MARKER, OutputRefused, atomic_directory, overwriting


def _inputs(folder: Path) -> dict[str, Path]:
    """The sample's three dumps, copied into `folder` (the user's folder of dumps)."""
    folder.mkdir(parents=True, exist_ok=True)
    return {
        option: Path(shutil.copy(source, folder))
        for option, source in (
            ("--wikidata", SAMPLE_WIKIDATA),
            ("--pageviews", SAMPLE_PAGECOUNTS_EZ),
            ("--kilt", SAMPLE_KILT),
        )
    }


def _build_args(inputs: dict[str, Path], out, *extra: str) -> list[str]:
    dumps = [str(part) for option, path in inputs.items() for part in (option, path)]
    return ["amber", "build", *dumps, "--out", str(out), "--workers", "1", *extra]


def _namesake(args: list[str], cwd=None, preexec_fn=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "namesake", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        preexec_fn=preexec_fn,
    )


def _refused(done: subprocess.CompletedProcess, *words: str) -> str:
    """The one error line of a refused command (exit code 1, no traceback)."""
    assert done.returncode == 1, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    line = done.stderr.strip().splitlines()[-1]
    assert line.startswith("namesake: error: "), line
    for word in words:
        assert word in line, line
    return line


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if ".partial-" in p.name or ".old-" in p.name)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[dict[str, Path], Path]:
    """The sample built once through the command line: (its dumps, its output folder)."""
    root = tmp_path_factory.mktemp("built")
    inputs = _inputs(root / "dumps")
    done = _namesake(_build_args(inputs, root / "amber"))
    assert done.returncode == 0, done.stderr[-3000:]
    return inputs, root / "amber"


def test_amber_build_into_the_folder_of_its_dumps_is_refused(tmp_path):
    inputs = _inputs(tmp_path / "dumps")
    before = folder_files(tmp_path / "dumps")
    done = _namesake(_build_args(inputs, tmp_path / "dumps"))
    _refused(done, "--out", str(tmp_path / "dumps"), "would hold the input", "wikidata-sample")
    assert folder_files(tmp_path / "dumps") == before
    assert _leftovers(tmp_path) == []


def test_evaluate_into_the_folder_of_its_predictions_is_refused(tmp_path, built):
    _, amber = built
    runs = tmp_path / "runs"
    runs.mkdir()
    predictions = runs / "preds.jsonl"
    predictions.write_text(json.dumps({"id": "x", "output": []}) + "\n")
    done = _namesake(
        ["evaluate", "--dataset", str(amber), "--config", "human_qa"]
        + ["--predictions", str(predictions), "--out", str(runs)]
    )
    _refused(done, "--out", "would hold the input", str(predictions))
    assert [p.name for p in runs.iterdir()] == ["preds.jsonl"]
    assert predictions.read_text() == json.dumps({"id": "x", "output": []}) + "\n"


def test_out_dot_is_refused_and_leaves_nothing(tmp_path):
    inputs = _inputs(tmp_path / "work" / "dumps")
    (tmp_path / "work" / "notes.txt").write_text("mine")
    before = folder_files(tmp_path / "work")
    done = _namesake(_build_args(inputs, "."), cwd=tmp_path / "work")
    _refused(done, str(tmp_path / "work"), "would hold the input")
    assert folder_files(tmp_path / "work") == before
    assert _leftovers(tmp_path) == [] and _leftovers(tmp_path / "work") == []
    # Without inputs inside it, `.` is still a folder the user made: refused, not replaced.
    elsewhere = _inputs(tmp_path / "dumps")
    done = _namesake(_build_args(elsewhere, "."), cwd=tmp_path / "work")
    _refused(done, "not empty and was not written by namesake", "--overwrite")
    assert folder_files(tmp_path / "work") == before
    assert _leftovers(tmp_path) == []


def test_out_naming_a_file_is_refused_and_the_file_kept(tmp_path):
    inputs = _inputs(tmp_path / "dumps")
    target = tmp_path / "results.txt"
    target.write_text("a user's file")
    done = _namesake(_build_args(inputs, target))
    _refused(done, str(target), "is a file, not a folder")
    assert target.read_text() == "a user's file"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dumps", "results.txt"]


def test_a_file_output_naming_an_input_or_a_folder_is_refused(tmp_path, built):
    _, amber = built
    done = _namesake(
        ["retrieve", "--corpus", str(SAMPLE_KILT), "--dataset", str(amber)]
        + ["--config", "human_qa", "--retriever", "bm25", "--out", str(tmp_path)]
    )
    _refused(done, str(tmp_path), "is a folder")
    kilt = Path(shutil.copy(SAMPLE_KILT, tmp_path))
    done = _namesake(
        ["retrieve", "--corpus", str(kilt), "--dataset", str(amber)]
        + ["--config", "human_qa", "--retriever", "bm25", "--out", str(kilt)]
    )
    _refused(done, "is the input --corpus", str(kilt))
    assert kilt.read_bytes() == SAMPLE_KILT.read_bytes()


def test_a_rerun_of_the_same_command_replaces_its_own_output(tmp_path, built):
    inputs, reference = built
    out = tmp_path / "amber"
    shutil.copytree(reference, out)
    done = _namesake(_build_args(inputs, out, "--collections", "human"))
    assert done.returncode == 0, done.stderr[-3000:]
    assert not (out / "nonhuman").exists() and (out / "human").is_dir()
    marker = json.loads((out / MARKER).read_text())
    assert marker["writer"] == "amber build"
    assert sorted(marker["files"]) == sorted(folder_files(out).keys() - {MARKER})
    assert _leftovers(tmp_path) == []


def test_another_commands_folder_is_refused_without_overwrite(tmp_path, built):
    inputs, reference = built
    out = tmp_path / "amber"
    shutil.copytree(reference, out)
    before = folder_files(out)
    done = _namesake(
        ["amber", "import", "--released", str(tmp_path / "missing"), "--out", str(out)]
    )
    _refused(done, "holds the output of `namesake amber build`", "--overwrite")
    assert folder_files(out) == before


def test_a_users_folder_needs_overwrite_and_its_files_survive_it(tmp_path, built):
    inputs, _ = built
    out = tmp_path / "mine"
    (out / "sub").mkdir(parents=True)
    (out / "notes.md").write_text("my notes")
    (out / "sub" / "data.bin").write_bytes(bytes(range(256)))
    before = folder_files(out)
    done = _namesake(_build_args(inputs, out))
    _refused(done, "not empty and was not written by namesake", "--overwrite")
    assert folder_files(out) == before
    done = _namesake(_build_args(inputs, out, "--overwrite"))
    assert done.returncode == 0, done.stderr[-3000:]
    after = folder_files(out)
    assert {name: after[name] for name in before} == before
    assert "README.md" in after and (out / "human").is_dir()
    # Rerun without --overwrite: the folder is namesake's now, and the files still survive.
    done = _namesake(_build_args(inputs, out, "--collections", "human"))
    assert done.returncode == 0, done.stderr[-3000:]
    assert {name: folder_files(out)[name] for name in before} == before
    assert not (out / "nonhuman").exists()
    assert _leftovers(tmp_path) == []


def test_overwrite_never_writes_over_a_users_file(tmp_path, built):
    inputs, _ = built
    out = tmp_path / "mine"
    out.mkdir()
    (out / "README.md").write_text("my own readme")
    done = _namesake(_build_args(inputs, out, "--overwrite"))
    _refused(done, "would write over README.md", "namesake did not write")
    assert folder_files(out) == {"README.md": b"my own readme"}
    assert _leftovers(tmp_path) == []


def test_a_work_dir_inside_out_is_refused_naming_both(tmp_path, built):
    inputs, reference = built
    out = tmp_path / "amber"
    shutil.copytree(reference, out)
    (out / "work").mkdir()
    done = _namesake(_build_args(inputs, out, "--work-dir", str(out / "work")))
    _refused(done, f"--work-dir {out / 'work'} is inside --out {out}")


@contextlib.contextmanager
def _read_only(folder: Path):
    """`folder` made unwritable, for root too (immutable attribute) or by permissions."""
    if os.geteuid() == 0:
        subprocess.run(["chattr", "+i", str(folder)], check=True)
        undo = ["chattr", "-i", str(folder)]
    else:
        folder.chmod(0o555)
        undo = ["chmod", "755", str(folder)]
    try:
        yield
    finally:
        subprocess.run(undo, check=True)


def test_a_read_only_parent_is_refused_before_stage_1(tmp_path, monkeypatch, capsys):
    inputs = _inputs(tmp_path / "dumps")
    parent = tmp_path / "locked"
    parent.mkdir()
    stage_1 = []
    monkeypatch.setattr(
        "namesake.amber.build.pipeline.extract_entities", lambda *a, **k: stage_1.append(a)
    )
    with _read_only(parent):
        started = time.perf_counter()
        with pytest.raises(SystemExit) as refused:
            main(_build_args(inputs, parent / "amber"))
        elapsed = time.perf_counter() - started
    assert "cannot write in" in str(refused.value) and str(parent) in str(refused.value)
    assert stage_1 == [] and "Stage 1" not in capsys.readouterr().err
    assert elapsed < 1.0, elapsed  # a check, not a build (the sample builds in seconds)
    assert list(parent.iterdir()) == []


def test_too_little_free_space_is_refused_with_the_estimate(tmp_path, monkeypatch):
    from namesake import outputs

    embeddings = tmp_path / "emb"
    (embeddings / "chunk-000000").mkdir(parents=True)
    (embeddings / "chunk-000000" / "embeddings.npy").write_bytes(bytes(3 << 20))
    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(outputs.shutil, "disk_usage", lambda path: usage._replace(free=4 << 20))
    with pytest.raises(SystemExit) as refused:
        main(
            ["index", "--embeddings", str(embeddings), "--index-type", "flat"]
            + ["--out", str(tmp_path / "idx")]
        )
    message = str(refused.value)
    assert "about 6.0 MiB will be written" in message and "only 4.0 MiB is free" in message
    assert not (tmp_path / "idx").exists()


def _file_size_limit(limit: int):
    def limit_writes():  # a file past `limit` bytes fails as on a full disk (EFBIG)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return limit_writes


def test_a_full_disk_while_writing_is_one_error_and_the_previous_output_stays(tmp_path, built):
    inputs, reference = built
    out = tmp_path / "amber"
    shutil.copytree(reference, out)
    before = folder_files(out)
    done = _namesake(_build_args(inputs, out), preexec_fn=_file_size_limit(2000))
    _refused(done, str(out), "the disk filled up while writing it", "nothing was replaced")
    assert folder_files(out) == before
    assert _leftovers(tmp_path) == []


_KILLED_IN_THE_FINAL_WRITE = """
import os, signal, sys
import namesake.amber.build.pipeline as build
def killed(*args, **kwargs):  # the configs are written; the card is next
    os.kill(os.getpid(), signal.SIGKILL)
build.dataset_card = killed
from namesake.cli import main
main(sys.argv[1:])
"""


def test_a_kill_during_the_final_write_then_a_rerun_leaves_no_partial(tmp_path, built):
    inputs, reference = built
    out = tmp_path / "amber"
    shutil.copytree(reference, out)
    before = folder_files(out)
    killed = subprocess.run(
        [sys.executable, "-c", _KILLED_IN_THE_FINAL_WRITE, *_build_args(inputs, out)],
        capture_output=True,
    )
    assert killed.returncode == -signal.SIGKILL
    assert folder_files(out) == before
    assert len([p for p in _leftovers(tmp_path) if p.startswith(".amber.partial-")]) == 1
    done = _namesake(_build_args(inputs, out))
    assert done.returncode == 0, done.stderr[-3000:]
    assert _leftovers(tmp_path) == []
    assert folder_files(out) == before  # the same dumps give the same dataset


def test_files_stranded_by_a_killed_swap_are_brought_back(tmp_path):
    """A kill between moving the old output aside and moving the user's files over leaves
    them in ``.NAME.old-PID``; the next success puts them back and removes the folder."""
    target = tmp_path / "out"
    with atomic_directory(target, writer="test") as staging:
        (staging / "a.txt").write_text("namesake's")
    stranded = tmp_path / ".out.old-999"
    target.rename(stranded)
    (stranded / "note.txt").write_text("the user's")
    with atomic_directory(target, writer="test") as staging:
        (staging / "a.txt").write_text("namesake's, again")
    assert folder_files(target) == {
        "a.txt": b"namesake's, again",
        "note.txt": b"the user's",
        MARKER: (target / MARKER).read_bytes(),
    }
    assert _leftovers(tmp_path) == []


def test_the_library_refuses_a_users_folder_unless_overwriting(tmp_path):
    target = tmp_path / "out"
    target.mkdir()
    (target / "keep.txt").write_text("mine")
    refused = pytest.raises(OutputRefused, match="not empty and was not written by namesake")
    with refused, atomic_directory(target, writer="test") as staging:
        (staging / "a.txt").write_text("x")
    with overwriting(), atomic_directory(target, writer="test") as staging:
        (staging / "a.txt").write_text("x")
    assert (target / "keep.txt").read_text() == "mine" and (target / "a.txt").is_file()


def test_a_filling_folder_is_claimed_before_the_work(tmp_path, built):
    _, amber = built
    out = tmp_path / "runs"
    out.mkdir()
    (out / "mine.txt").write_text("mine")
    started = time.perf_counter()
    done = _namesake(
        ["amber", "compare", "--corpus", str(SAMPLE_KILT), "--dataset", str(amber)]
        + ["--out", str(out), "--retriever", "bm25", "--collections", "human"]
    )
    _refused(done, "not empty and was not written by namesake")
    assert time.perf_counter() - started < 30
    assert folder_files(out) == {"mine.txt": b"mine"}


def test_a_training_scripts_output_dir_is_checked_before_training(tmp_path):
    from conftest import load_script

    script = load_script("train_wes_cross_encoder")
    foreign = tmp_path / "model"
    foreign.mkdir()
    (foreign / "weights.bin").write_bytes(b"someone else's model")
    with pytest.raises(SystemExit):
        script.parse_args(["--dataset", "x", "--output_dir", str(foreign)])
    args = script.parse_args(
        ["--dataset", "x", "--output_dir", str(foreign), "--overwrite_output_dir"]
    )
    assert args.output_writer == "training/train_wes_cross_encoder.py"
    assert (foreign / "weights.bin").read_bytes() == b"someone else's model"


def test_a_filling_folder_a_failed_command_created_is_removed(tmp_path):
    from namesake.outputs import claimed_folder

    out = tmp_path / "runs"
    with pytest.raises(RuntimeError), claimed_folder(out, writer="test"):
        raise RuntimeError("the dataset does not exist")
    assert not out.exists()
    with pytest.raises(RuntimeError), claimed_folder(out, writer="test"):
        (out / "half.jsonl").write_text("{}\n")
        raise RuntimeError("failed partway")
    assert json.loads((out / MARKER).read_text())["files"] == ["half.jsonl"]
