"""The `namesake ecqg ...` commands: their names and options, the one passages reader they
share, and atomic outputs of `ecqg generate`."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tiny_models import save_tiny_bert

from namesake.cli import build_parser, main
from namesake.ecqg.passages import read_passages
from namesake.errors import BadInputError
from namesake.outputs import FILES_RECORD

ECQG_COMMANDS = [
    "passages",
    "rank-entities",
    "attention-report",
    "warm-start",
    "generate",
    "build-synthetic-set",
    "evaluate-dpr",
]


def _commands(parser: argparse.ArgumentParser, path=()):
    """(command path, parser) for every command of the tree, leaves and groups."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*path, name))


# --- names and options ---------------------------------------------------------------------


@pytest.mark.parametrize("command", ECQG_COMMANDS)
def test_help_names_the_full_command(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["ecqg", command, "--help"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: namesake ecqg {command} ")


def test_rank_entities_help_from_the_installed_command():
    namesake = Path(sys.executable).with_name("namesake")
    command = [str(namesake)] if namesake.exists() else [sys.executable, "-m", "namesake"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [*command, "ecqg", "rank-entities", "--help"], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: namesake ecqg rank-entities ")
    assert "--entities-per-passage" in done.stdout


def test_attention_report_lives_under_ecqg_only(capsys):
    with pytest.raises(SystemExit):
        main(["attention-report", "--help"])
    assert "invalid choice: 'attention-report'" in capsys.readouterr().err


def test_every_option_is_hyphenated_has_help_and_keeps_one_meaning():
    meanings: dict[str, set[str]] = {}
    for path, parser in _commands(build_parser()):
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            where = f"namesake {' '.join(path)} {'/'.join(action.option_strings)}"
            assert action.help, f"{where}: no help text"
            for option in action.option_strings:
                assert "_" not in option, f"{where}: use hyphens"
                meanings.setdefault(option, set()).add(action.dest)
            # a list is space-separated values after one flag; only --answer and compare's
            # --retriever may also repeat the flag (each group of values extends the list)
            if isinstance(action, argparse._AppendAction):
                assert action.option_strings in (["--answer"], ["--retriever"]), where
                assert action.nargs == "+"
            assert not (isinstance(action.default, str) and "," in action.default), where
    assert "--k" not in meanings and "--n" not in meanings
    assert all(len(dests) == 1 for dests in meanings.values()), meanings


def test_list_options_take_space_separated_values():
    parser = build_parser()
    evaluate = ["evaluate", "--dataset", "d", "--config", "human_qa", "--predictions", "p"]
    args = parser.parse_args([*evaluate, "--out", "o", "--cutoffs", "1", "5", "20"])
    assert args.cutoffs == [1, 5, 20]
    args = parser.parse_args(
        ["ecqg", "attention-report", "--passages", "p", "--models", "a", "b", "--heads", "0", "3"]
    )
    assert args.models == ["a", "b"] and args.heads == [0, 3]
    args = parser.parse_args(
        ["wes", "build", "--dump", "x", "y", "--out", "o", "--thresholds", "2", "1"]
    )
    assert args.dump == ["x", "y"] and args.thresholds == [2, 1]
    compare = ["amber", "compare", "--corpus", "c", "--dataset", "d", "--out", "o"]
    args = parser.parse_args(compare)
    assert args.retriever is None and args.collections == ["human", "nonhuman"]  # bm25 dense
    assert args.top_k == 100
    for retrievers in (["tfidf", "bm25"], ["tfidf", "--retriever", "bm25"]):
        assert parser.parse_args([*compare, "--retriever", *retrievers]).retriever == [
            "tfidf",
            "bm25",
        ]


def test_bad_values_are_refused_before_anything_runs(capsys):
    for argv in (
        ["ecqg", "generate", "--passages", "p", "--model", "m", "--out", "o", "--top-p", "0"],
        ["ecqg", "build-synthetic-set", "--passages", "p", "--conditioned", "c"]
        + ["--unconditioned", "u", "--out", "o", "--ratio", "1.5"],
        ["ecqg", "evaluate-dpr", "--model", "m", "--passages", "p", "--test-file", "t"]
        + ["--cutoffs", "0"],
        ["ecqg", "evaluate-dpr", "--model-dir", "d", "--model", "m", "--passages", "p"]
        + ["--test-file", "t"],
    ):
        with pytest.raises(SystemExit) as exit_info:
            main(argv)
        assert exit_info.value.code == 2, argv
    assert "not allowed with argument" in capsys.readouterr().err


# --- the passages Parquet: one reader, used by every command --------------------------------


@pytest.fixture
def passages_without_title(tmp_path):
    path = tmp_path / "no_title.parquet"
    pq.write_table(pa.table({"id": ["p1"], "text": ["Paris is in France."]}), path)
    return path


def test_read_passages_validates(tmp_path, passages_without_title):
    with pytest.raises(BadInputError, match="lacks column\\(s\\) title") as error:
        read_passages(passages_without_title)
    assert error.value.path == str(passages_without_title)
    with pytest.raises(BadInputError, match="no such passages file"):
        read_passages(tmp_path / "missing.parquet")
    not_parquet = tmp_path / "passages.jsonl"
    not_parquet.write_text('{"id": "p1"}\n')
    with pytest.raises(BadInputError, match="not a passages Parquet file"):
        read_passages(not_parquet)
    good = tmp_path / "good.parquet"
    rows = [{"id": f"p{i}", "wikipedia_id": str(i), "title": "T", "text": "x"} for i in range(3)]
    pq.write_table(pa.Table.from_pylist(rows), good)
    table = read_passages(good, columns=["id", "text"], max_passages=2)
    assert table.column_names == ["id", "text"] and table.num_rows == 2


def test_every_command_reading_passages_names_the_file_and_column(
    tmp_path, passages_without_title, capsys
):
    questions = tmp_path / "q.jsonl"
    questions.write_text("")
    test_file = tmp_path / "test.tsv"
    test_file.write_text("capital of France\t['Paris']\n")
    p = str(passages_without_title)
    for argv in (
        ["rank-entities", "--passages", p, "--model", "unused", "--out", str(tmp_path / "r")],
        ["attention-report", "--passages", p, "--models", "unused"],
        ["generate", "--passages", p, "--model", "unused", "--unconditioned"]
        + ["--out", str(tmp_path / "g.jsonl")],
        ["build-synthetic-set", "--passages", p, "--conditioned", str(questions)]
        + ["--unconditioned", str(questions), "--out", str(tmp_path / "dpr.json")],
        ["evaluate-dpr", "--model", "unused", "--passages", p, "--test-file", str(test_file)],
    ):
        with pytest.raises(SystemExit) as exit_info:
            main(["ecqg", *argv])
        message = str(exit_info.value.code)
        assert message.startswith(f"namesake: error: {p}: "), (argv, message)
        assert "lacks column(s) title" in message, (argv, message)
    assert not any(name.startswith(("r", "g", "dpr")) for name in os.listdir(tmp_path))


def test_generate_needs_ranked_entities_unless_unconditioned(tmp_path):
    with pytest.raises(SystemExit) as exit_info:
        main(["ecqg", "generate", "--passages", "p", "--model", "m", "--out", "o"])
    assert "--ranked-entities is needed unless --unconditioned" in str(exit_info.value.code)


# --- ecqg generate writes atomically --------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_generator(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny-generator")
    encoder = save_tiny_bert(root / "encoder")
    main(["ecqg", "warm-start", "--encoder", str(encoder), "--out", str(root / "generator")])
    return root / "generator"


def test_warm_start_is_the_same_generator_for_the_same_seed(tiny_generator, tmp_path):
    """The decoder's cross-attention is new (random) weight: a re-run with the same --seed
    must build the same generator, another seed another one (the demo's figures depend on
    it)."""
    from safetensors.torch import load_file

    encoder = tiny_generator.parent / "encoder"
    for name, seed in (("again", "0"), ("other", "1")):
        argv = ["ecqg", "warm-start", "--encoder", str(encoder), "--out", str(tmp_path / name)]
        main([*argv, "--seed", seed])
    first, again, other = (
        load_file(folder / "model.safetensors")
        for folder in (tiny_generator, tmp_path / "again", tmp_path / "other")
    )
    assert first.keys() == again.keys() == other.keys()
    assert all(first[name].equal(again[name]) for name in first)
    cross = [name for name in first if "crossattention" in name and name.endswith("weight")]
    assert cross and not all(first[name].equal(other[name]) for name in cross)


def test_generate_failure_mid_write_leaves_no_partial_output(tiny_generator, tmp_path, monkeypatch):
    passages = tmp_path / "in" / "passages.parquet"
    passages.parent.mkdir()
    rows = [
        {"id": f"p{i}", "wikipedia_id": str(i), "title": f"T{i}", "text": f"Text number {i}."}
        for i in range(4)
    ]
    pq.write_table(pa.Table.from_pylist(rows), passages)
    out_dir = tmp_path / "out"
    out = out_dir / "questions.jsonl"
    argv = ["ecqg", "generate", "--passages", str(passages), "--model", str(tiny_generator)]
    argv += ["--unconditioned", "--out", str(out), "--max-new-tokens", "4"]

    calls = {"n": 0}

    def third_unwritable(raw):
        calls["n"] += 1
        return ("what?", object() if calls["n"] == 3 else "it")  # not JSON: fails mid-write

    monkeypatch.setattr("namesake.ecqg.generation.parse_generation", third_unwritable)
    with pytest.raises(TypeError):
        main(argv)
    assert calls["n"] == 4
    assert not out_dir.exists() or sorted(os.listdir(out_dir)) == []

    # a previous complete output stays as it was
    monkeypatch.setattr("namesake.ecqg.generation.parse_generation", lambda raw: ("q?", "a"))
    main(argv)
    before = out.read_text()
    assert len(before.splitlines()) == 4
    assert sorted(os.listdir(out_dir)) == [
        FILES_RECORD,
        "questions.jsonl",
        "questions.jsonl.stats.json",
    ]
    calls["n"] = 0
    monkeypatch.setattr("namesake.ecqg.generation.parse_generation", third_unwritable)
    with pytest.raises(TypeError):
        main(argv)
    assert out.read_text() == before
    assert sorted(os.listdir(out_dir)) == [
        FILES_RECORD,
        "questions.jsonl",
        "questions.jsonl.stats.json",
    ]
