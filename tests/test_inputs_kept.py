"""No output inside an input, and no file output over a user's file (issue 48): each class
runs the installed `namesake` command and checks the exit code, the one error line and that
every input and every file the user put there is unchanged, byte for byte.

- an output (file or folder) inside an input folder, or replacing an input, is refused before
  the work, naming both;
- only the arguments declared as inputs are inputs: ``--config human_qa`` (or the command's
  own name) is not one because a folder of that name exists;
- an existing file namesake did not write is not replaced by a file output without
  ``--overwrite``; namesake's own file is, by a rerun;
- an error of the system on a named path (a folder given as a file) is one line naming it.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import SAMPLE_KILT
from folders import folder_files
from test_index_provenance import _namesake

from namesake.outputs import FILES_RECORD


def refused(done: subprocess.CompletedProcess, *words: str) -> str:
    """The one error line of a refused command (exit code 1, no traceback)."""
    assert done.returncode == 1, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    lines = [line for line in done.stderr.splitlines() if line.startswith("namesake: error: ")]
    assert len(lines) == 1 and lines[0] == done.stderr.strip().splitlines()[-1], done.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def succeeded(done: subprocess.CompletedProcess) -> None:
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.fixture
def amber(sample_build, tmp_path) -> Path:
    """A copy of the sample build, the user's dataset folder (a refusal that failed would
    damage only the copy)."""
    out, _ = sample_build
    return Path(shutil.copytree(out / "dataset", tmp_path / "amber"))


@pytest.fixture
def run(amber, tmp_path) -> Path:
    """A TREC run answering every AmbER-H QA query with its gold pages (from `amber qrels`)."""
    qrels = tmp_path / "runs" / "gold.qrels"
    succeeded(
        _namesake("amber", "qrels", "--dataset", amber, "--config", "human_qa", "--out", qrels)
    )
    ranked: dict[str, list[str]] = {}
    for line in qrels.read_text().splitlines():
        query, _, doc, _ = line.split()
        ranked.setdefault(query, []).append(doc)
    path = tmp_path / "runs" / "gold.trec"
    path.write_text(
        "".join(
            f"{query} Q0 {doc} {rank} {1 / rank} gold\n"
            for query, docs in ranked.items()
            for rank, doc in enumerate(docs, 1)
        )
    )
    return path


@pytest.mark.parametrize(
    "command",
    [
        ["amber", "qrels", "--config", "human_qa", "--out", "{amber}/README.md"],
        ["amber", "qrels", "--config", "human_qa", "--out", "{amber}/notes/gold.qrels"],
        ["retrieve", "--config", "human_qa", "--retriever", "bm25", "--corpus", "{kilt}"]
        + ["--out", "{amber}/README.md"],
        ["amber", "export", "--config", "human_qa", "--corpus", "{kilt}", "--out", "{amber}/beir"],
        ["evaluate", "--config", "human_qa", "--predictions", "{run}", "--out", "{amber}/sub"],
        ["compare-runs", "{run}", "{run}", "--config", "human_qa", "--out", "{amber}/cmp"],
    ],
    ids=["qrels-card", "qrels-new-subfolder", "retrieve", "export", "evaluate", "compare-runs"],
)
def test_an_output_inside_the_input_dataset_is_refused(command, amber, run, tmp_path):
    kilt = Path(shutil.copy(SAMPLE_KILT, tmp_path))
    args = [part.format(amber=amber, kilt=kilt, run=run) for part in command]
    before = folder_files(tmp_path)
    done = _namesake(*args, "--dataset", amber)
    out = args[args.index("--out") + 1]
    refused(done, f"--out {out}", "is inside the input --dataset", str(amber))
    assert folder_files(tmp_path) == before


def test_an_output_replacing_an_input_is_refused(amber, run, tmp_path):
    other = Path(shutil.copy(run, tmp_path / "runs" / "other.trec"))
    before = folder_files(tmp_path)
    done = _namesake("fuse", run, other, "--out", other)
    refused(done, f"--out {other}", f"is the input RUN {other}")
    done = _namesake(
        "evaluate",
        *("--dataset", amber, "--config", "human_qa", "--predictions", run),
        *("--out", run.parent),
    )
    refused(done, f"--out {run.parent}", "would hold the input --predictions", str(run))
    assert folder_files(tmp_path) == before


def test_a_labelled_runs_model_folder_is_an_input(tmp_path):
    """``--run LABEL=SPEC``: the SPEC folder is an input, the label is not."""
    model = tmp_path / "Mixed-DPR"
    model.mkdir()
    (model / "config.json").write_text("{}")
    before = folder_files(tmp_path)
    out = model / "metrics.json"
    done = _namesake(
        *("ecqg", "evaluate-dpr", "--passages", tmp_path / "p.parquet"),
        *("--test-file", tmp_path / "test.csv", "--run", f"mixed={model}", "--out", out),
    )
    refused(done, f"--out {out}", f"is inside the input --run {model}")
    assert folder_files(tmp_path) == before


def test_a_value_that_is_not_an_input_never_counts_as_one(amber, run, tmp_path):
    """`--config human_qa` and the command `fuse` name folders of the working directory
    here; a rerun writing into them (its own outputs) is not refused."""
    work = tmp_path / "work"
    work.mkdir()
    evaluate = [
        *("evaluate", "--dataset", amber, "--config", "human_qa"),
        *("--predictions", run, "--out", "human_qa", "--cutoffs", "1"),
    ]
    succeeded(_namesake(*evaluate, cwd=work))
    first = folder_files(work / "human_qa")
    succeeded(_namesake(*evaluate, cwd=work))
    assert folder_files(work / "human_qa").keys() == first.keys()

    copy = Path(shutil.copy(run, tmp_path / "runs" / "copy.trec"))
    fuse = ["fuse", run, copy, "--out", "fuse/fused.trec"]
    succeeded(_namesake(*fuse, cwd=work))
    succeeded(_namesake(*fuse, cwd=work))  # `fuse` is now a folder: still not an input
    fused = (work / "fuse" / "fused.trec").read_text().splitlines()
    assert {line.split()[0] for line in fused} == {
        line.split()[0] for line in run.read_text().splitlines()
    }


def test_a_file_output_replaces_only_a_file_namesake_wrote(amber, tmp_path):
    notes = tmp_path / "mynotes.txt"
    notes.write_text("a user's notes\n")
    qrels = ["amber", "qrels", "--dataset", amber, "--config", "human_qa", "--out"]

    refused(
        _namesake(*qrels, notes),
        str(notes),
        "exists and was not written by namesake",
        "--overwrite",
    )
    assert notes.read_text() == "a user's notes\n"

    out = tmp_path / "gold.qrels"
    succeeded(_namesake(*qrels, out))
    written = out.read_bytes()
    assert str(out.name) in (tmp_path / FILES_RECORD).read_text()
    succeeded(_namesake(*qrels, out))  # a rerun replaces namesake's own file
    assert out.read_bytes() == written

    out.write_text("edited by the user\n")  # no longer what namesake wrote
    refused(_namesake(*qrels, out), str(out), "exists and was not written by namesake")
    assert out.read_text() == "edited by the user\n"

    succeeded(_namesake(*qrels, notes, "--overwrite"))  # asked for: replaced
    assert notes.read_bytes() == written


def test_a_folder_given_as_a_file_is_one_line_naming_it(amber, tmp_path):
    folder = tmp_path / "predictions"
    folder.mkdir()
    done = _namesake(
        *("evaluate", "--dataset", amber, "--config", "human_qa"),
        *("--predictions", folder, "--out", tmp_path / "report"),
    )
    refused(done, str(folder))
    assert not (tmp_path / "report").exists()


def test_the_command_line_turns_any_system_error_into_one_line(monkeypatch, capsys):
    """An OSError that no reader words itself, raised by a command, names its path."""
    from namesake import cli

    def fails(args):
        raise PermissionError(13, "Permission denied", "/some/input.trec")

    parser = cli.build_parser()
    monkeypatch.setattr(cli, "build_parser", lambda: parser)
    monkeypatch.setattr(parser, "parse_args", lambda argv: _Args(fails))
    with pytest.raises(SystemExit) as caught:
        cli.main(["anything"])
    assert caught.value.code == "namesake: error: /some/input.trec: Permission denied"


class _Args:
    """The parsed arguments of a command with no outputs, whose handler is `run`."""

    def __init__(self, run):
        self.run = run


def test_a_training_scripts_inputs_are_its_declared_ones(tmp_path, monkeypatch, capsys):
    """--output_dir inside the --dataset folder is refused; a --report_to that names a
    folder of the working directory is a tracker's name, not an input."""
    from conftest import load_script

    script = load_script("train_wes_cross_encoder")
    dataset = tmp_path / "wes"
    dataset.mkdir()
    with pytest.raises(SystemExit):
        script.parse_args(["--dataset", str(dataset), "--output_dir", str(dataset / "model")])
    assert "is inside the input --dataset" in capsys.readouterr().err
    assert list(dataset.iterdir()) == []

    monkeypatch.chdir(tmp_path)
    (tmp_path / "tensorboard").mkdir()
    args = script.parse_args(
        ["--dataset", str(dataset), "--output_dir", "tensorboard/model"]
        + ["--with_tracking", "--report_to", "tensorboard"]
    )
    assert args.report_to == "tensorboard"
