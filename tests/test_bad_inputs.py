"""Inputs that once ended in a traceback (issue 33): each now ends in one line naming the
file (and line or field), exit status 1 and no output, or, where the input can be repaired
(a damaged chunk of a work folder), in a line saying what was redone.

- a Wikidata entity whose `labels`, `aliases`, `claims` or `sitelinks` has the wrong JSON
  type: skipped and counted with the reason, or the error with `--strict`;
- `evaluate` with an unknown config, a config of set members, a dataset that is not there;
- a damaged stage-1 chunk in `amber build --work-dir`: dropped, said, redone;
- predictions that match no query, or only some: counted, and an error when none match;
- bad lines say what was wrong: not JSON, missing field NAME, wrong type.

The `main()` tests run the command line in this process (`cli`: a `sys.exit(message)` is
exit status 1, with the message on stderr); `test_exit_status_and_one_line_in_a_process`
runs a few of the same commands as processes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import msgspec
import pyarrow.feather as feather
import pyarrow.parquet as pq
import pytest
from dumps import item, write_wikidata
from test_amber_inputs import ENTITIES, PROPERTIES, parquet_tables, write_inputs

import namesake.dumps.reading
import namesake.dumps.restart as dump_restart
from namesake.cli import main
from namesake.errors import BadInputError
from namesake.runs import Run

NAMESAKE = Path(sys.executable).with_name("namesake")


def cli(args: list[str], capsys) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of `namesake ARGS`, run in this process."""
    try:
        main([str(arg) for arg in args])
        status = 0
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else 1
        if not isinstance(exc.code, int):
            print(exc.code, file=sys.stderr)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def error_line(stderr: str) -> str:
    """The one `namesake: error:` line of stderr (progress bars aside), no traceback."""
    assert "Traceback" not in stderr
    (line,) = [line for line in stderr.splitlines() if line.startswith("namesake: error: ")]
    return line


def build_args(inputs: dict, out: Path, *options) -> list:
    return [
        *("amber", "build", "--wikidata", inputs["wikidata"], "--pageviews"),
        *(inputs["pageviews"], "--kilt", inputs["kilt"], "--out", out, "--workers", "1"),
        *options,
    ]


# ---------------------------------------------------------------------------------------
# A Wikidata entity line whose maps have the wrong JSON type

# The first item of ENTITIES, John Smith the musician, with one map replaced: its line is
# line 2 + len(PROPERTIES) of the dump ('[' is line 1).
WRONG_LINE = 2 + len(PROPERTIES)
WRONG_TYPES = {
    "labels is a string": ("labels", "John Smith", "labels is a string, not an object"),
    "labels is null": ("labels", None, "labels is null, not an object"),
    "aliases is a list": (
        "aliases",
        [{"language": "en", "value": "J. Smith"}],
        "aliases is a list, not an object",
    ),
    "claims is a list": ("claims", [{"P31": "Q5"}], "claims is a list, not an object"),
    "claims is a number": ("claims", 31, "claims is a number, not an object"),
    # Once dropped unseen: the line has no '"enwiki"', so the pre-filter skipped it.
    "sitelinks is a string": ("sitelinks", "enwiki", "sitelinks is a string, not an object"),
    "sitelinks is a list": (
        "sitelinks",
        [{"site": "enwiki", "title": "John Smith (musician)"}],
        "sitelinks is a list, not an object",
    ),
}


def _inputs_with_wrong_type(folder: Path, field: str, value) -> dict:
    inputs = write_inputs(folder)
    first = {**ENTITIES[0], field: value}
    write_wikidata(inputs["wikidata"], PROPERTIES + [first] + ENTITIES[1:])
    return inputs


@pytest.mark.parametrize("case", list(WRONG_TYPES))
def test_wikidata_map_of_the_wrong_type(tmp_path, capsys, case):
    field, value, reason = WRONG_TYPES[case]
    inputs = _inputs_with_wrong_type(tmp_path / "in", field, value)
    path = inputs["wikidata"]
    line = path.read_bytes().splitlines()[WRONG_LINE - 1]
    assert line.startswith(b'{"type":"item","id":"Q1"')

    # Without --strict: skipped and counted like any bad line, with the reason.
    status, out, err = cli(build_args(inputs, tmp_path / "out"), capsys)
    assert status == 0, err
    assert f"{path}: skipped 1 line(s): wrong type (line {WRONG_LINE}: {reason})" in out
    assert "Skipped 1 bad input line(s)" in err
    human = parquet_tables(tmp_path / "out").get("human", [])
    assert "Q1" not in {row["qid"] for row in human}

    # With --strict: the build stops there, one line, nothing written.
    status, out, err = cli(build_args(inputs, tmp_path / "strict", "--strict"), capsys)
    assert status == 1
    assert error_line(err) == f"namesake: error: {path}:{WRONG_LINE}: wrong type: {reason}"
    assert not (tmp_path / "strict").exists()


def test_item_without_english_page_but_sitelinks_of_the_wrong_type_is_counted(tmp_path):
    """The pre-filter skips items without an enwiki sitelink undecoded; one whose sitelinks
    is not a map might have had one, so it is decoded and reported."""
    from namesake.amber.build.wikidata import init_worker, parse_block

    init_worker(frozenset({"P31"}))
    lines = [
        msgspec.json.encode(item("Q7", "Seven")),  # sitelinks {}: skipped, fine
        msgspec.json.encode({**item("Q8", "Eight"), "sitelinks": "dewiki"}),
        msgspec.json.encode({**item("Q9", "Nine"), "sitelinks": {"dewiki": {"title": "N"}}}),
        msgspec.json.encode(item("Q10", "Ten", enwiki="Ten"))[:-30],  # cut in its sitelinks
    ]
    block = parse_block((1, b"[\n" + b",\n".join(lines) + b"\n]\n"))
    assert block.problems[0] == (3, "wrong type", "sitelinks is a string, not an object")
    assert [(line, kind) for line, kind, _ in block.problems] == [
        (3, "wrong type"),
        (5, "not JSON"),
    ]
    assert block.entities.num_rows == 0


# ---------------------------------------------------------------------------------------
# `evaluate`: the dataset and config, and how the predictions meet the queries


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    """The small fixture built (tests/test_amber_inputs.py), as a Hub dataset folder."""
    from namesake.amber.build.pipeline import build_amber

    folder = tmp_path_factory.mktemp("amber")
    inputs = write_inputs(folder / "in")
    build_amber(inputs["wikidata"], inputs["pageviews"], inputs["kilt"], folder / "dataset")
    return folder / "dataset"


def _queries(dataset: Path, config: str = "human_qa") -> list[dict]:
    return pq.read_table(next((dataset / config).glob("*.parquet"))).to_pylist()


def _write_predictions(path: Path, ids_and_gold: list[tuple[str, list[str]]]) -> Path:
    with open(path, "w", encoding="utf-8") as f:
        for query_id, gold in ids_and_gold:
            provenance = [{"wikipedia_id": page} for page in gold]
            f.write(json.dumps({"id": query_id, "output": {"provenance": provenance}}) + "\n")
    return path


def _gold(dataset: Path, config: str = "human_qa") -> list[tuple[str, list[str]]]:
    return [(row["id"], row["gold_wikipedia_ids"]) for row in _queries(dataset, config)]


def evaluate_args(dataset, config, predictions, out, *options) -> list:
    return [
        *("evaluate", "--dataset", dataset, "--config", config),
        *("--predictions", predictions, "--out", out, "--cutoffs", "1"),
        *options,
    ]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            "human_xx",
            "no config 'human_xx'; its query configs: human, human_qa, human_sf, human_fc, "
            "nonhuman, nonhuman_qa, nonhuman_sf, nonhuman_fc",
        ),
        (
            "human_entities",
            "human_entities holds the members of the human sets, not queries: use human, "
            "human_qa, human_sf or human_fc",
        ),
    ],
)
def test_evaluate_a_config_that_is_not_a_query_config(dataset, tmp_path, capsys, config, message):
    predictions = _write_predictions(tmp_path / "p.jsonl", _gold(dataset))
    status, _, err = cli(evaluate_args(dataset, config, predictions, tmp_path / "r"), capsys)
    assert status == 1
    assert error_line(err) == f"namesake: error: {dataset}: {message}"
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("config", ["human_xx", "human_entities"])
def test_retrieve_a_bad_config_fails_before_building_the_index(dataset, tmp_path, capsys, config):
    from conftest import SAMPLE_KILT

    args = ["retrieve", "--retriever", "bm25", "--corpus", str(SAMPLE_KILT)]
    args += ["--dataset", str(dataset), "--config", config]
    args += ["--index", str(tmp_path / "idx"), "--out", str(tmp_path / "p.jsonl")]
    status, _, err = cli(args, capsys)
    assert status == 1
    assert error_line(err).startswith(f"namesake: error: {dataset}: ")
    assert config in error_line(err)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.parametrize("where", ["absolute", "relative"])
def test_evaluate_a_dataset_path_that_does_not_exist(dataset, tmp_path, capsys, where):
    predictions = _write_predictions(tmp_path / "p.jsonl", _gold(dataset))
    missing = str(tmp_path / "no" / "amber") if where == "absolute" else "no_such_dataset"
    status, _, err = cli(evaluate_args(missing, "human_qa", predictions, tmp_path / "r"), capsys)
    assert status == 1
    line = error_line(err)
    assert line.startswith(f"namesake: error: {missing}: no such dataset folder")
    assert not (tmp_path / "r").exists()


def test_evaluate_allow_missing_counts_both_ways(dataset, tmp_path, capsys):
    gold = _gold(dataset)
    partial = _write_predictions(
        tmp_path / "partial.jsonl", gold[1:] + [("not-a-query", ["1"]), ("neither", [])]
    )
    report = tmp_path / "report"

    # Without --allow-missing: the missing query is an error naming the file.
    status, _, err = cli(evaluate_args(dataset, "human_qa", partial, report), capsys)
    assert status == 1
    assert error_line(err).startswith(
        f"namesake: error: {partial}: 1 of {len(gold)} queries have no prediction "
        f"(e.g. {gold[0][0]}); --allow-missing"
    )
    assert not report.exists()

    args = evaluate_args(dataset, "human_qa", partial, report, "--allow-missing")
    status, out, _ = cli(args, capsys)
    assert status == 0
    assert (
        f"1 of {len(gold)} queries of human_qa had no prediction, scored as empty rankings "
        f"(e.g. {gold[0][0]})"
    ) in out
    assert (
        f"2 of {len(gold) + 1} predictions matched no query of human_qa, not scored "
        "(e.g. not-a-query, neither)"
    ) in out
    metrics = json.loads((report / "metrics.json").read_text())["metrics"]
    assert metrics["coverage"]["queries_without_prediction"] == 1
    assert metrics["coverage"]["predictions_without_query"] == 2
    assert "matched no query of human_qa" in (report / "report.md").read_text()


def test_evaluate_predictions_of_another_config_are_counted(dataset, tmp_path, capsys):
    """Every query answered, plus the predictions of another config's queries: scored, and
    the others counted and reported, not silently ignored."""
    gold, others = _gold(dataset), _gold(dataset, "human_sf")
    predictions = _write_predictions(tmp_path / "p.jsonl", gold + others)
    status, out, _ = cli(evaluate_args(dataset, "human_qa", predictions, tmp_path / "r"), capsys)
    assert status == 0
    assert f"0 of {len(gold)} queries of human_qa had no prediction" in out
    assert (
        f"{len(others)} of {len(gold) + len(others)} predictions matched no query of human_qa"
    ) in out


def test_evaluate_predictions_that_match_no_query_are_an_error(dataset, tmp_path, capsys):
    others = _write_predictions(tmp_path / "nonhuman.jsonl", _gold(dataset, "nonhuman_qa"))
    args = evaluate_args(dataset, "human_qa", others, tmp_path / "r", "--allow-missing")
    status, _, err = cli(args, capsys)
    assert status == 1
    first = _gold(dataset, "nonhuman_qa")[0][0]
    assert error_line(err).startswith(
        f"namesake: error: {others}: none of the 2 predictions is for a query of human_qa "
        f"(e.g. {first}"
    )
    assert not (tmp_path / "r").exists()

    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    status, _, err = cli(evaluate_args(dataset, "human_qa", empty, tmp_path / "r"), capsys)
    assert (status, error_line(err)) == (1, f"namesake: error: {empty}: no predictions")


def test_exit_status_and_one_line_in_a_process(dataset, tmp_path):
    """Two of the rows above as real processes: status 1, one line on stderr."""
    predictions = _write_predictions(tmp_path / "p.jsonl", _gold(dataset))
    inputs = _inputs_with_wrong_type(tmp_path / "in", "sitelinks", "enwiki")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    commands = {
        "config": evaluate_args(dataset, "human_entities", predictions, tmp_path / "r"),
        "wikidata": build_args(inputs, tmp_path / "out", "--strict"),
    }
    for which, args in commands.items():
        done = subprocess.run(
            [str(NAMESAKE), *map(str, args)],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        assert done.returncode == 1, (which, done.stderr)
        line = error_line(done.stderr)
        assert line == done.stderr.strip().splitlines()[-1]
        if which == "wikidata":
            assert line.endswith(f":{WRONG_LINE}: wrong type: sitelinks is a string, not an object")
    assert not (tmp_path / "r").exists() and not (tmp_path / "out").exists()


# ---------------------------------------------------------------------------------------
# A damaged chunk in `amber build --work-dir`


@pytest.fixture
def small_chunks(monkeypatch):
    """Stage 1 cut into several chunks even on the small fixture."""
    monkeypatch.setattr(namesake.dumps.reading, "CHUNK_BYTES", 512)
    monkeypatch.setattr(dump_restart, "RESTART_EVERY_BYTES", 1 << 10)


@pytest.mark.parametrize("damage", ["cut", "garbage", "bad chunk.json", "missing file"])
def test_damaged_work_dir_chunk_is_dropped_and_redone(tmp_path, capsys, small_chunks, damage):
    inputs = write_inputs(tmp_path / "in")
    work = tmp_path / "work"
    status, _, err = cli(build_args(inputs, tmp_path / "first", "--work-dir", work), capsys)
    assert status == 0, err
    chunks = sorted(work.glob("chunk-*"))
    assert len(chunks) >= 3
    damaged = chunks[1]
    arrow = damaged / "entities.arrow"
    if damage == "cut":
        arrow.write_bytes(arrow.read_bytes()[: arrow.stat().st_size // 2])
    elif damage == "garbage":
        arrow.write_bytes(b"\x00" * arrow.stat().st_size)
    elif damage == "bad chunk.json":
        (damaged / "chunk.json").write_text('{"labels": ')
    else:
        (damaged / "relations.arrow").unlink()

    status, out, err = cli(build_args(inputs, tmp_path / "again", "--work-dir", work), capsys)
    assert status == 0, err
    (said,) = [line for line in err.splitlines() if "unreadable stage-1 chunk" in line]
    assert said.startswith(f"{damaged}: unreadable stage-1 chunk (")
    assert f"dropped it and the {len(chunks) - 2} after it, redoing them from line " in said
    assert f"stage-1 chunks reused from {work}: 1" in out
    assert parquet_tables(tmp_path / "again") == parquet_tables(tmp_path / "first")
    assert sorted(work.glob("chunk-*")) == chunks  # redone, all readable again
    assert feather.read_table(str(arrow)).num_rows >= 0

    status, out, err = cli(build_args(inputs, tmp_path / "third", "--work-dir", work), capsys)
    assert "unreadable" not in err and f"stage-1 chunks reused from {work}: {len(chunks)}" in out


# ---------------------------------------------------------------------------------------
# Bad lines say what was wrong


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"id": "q1", "output": {"provenance": [', "not JSON: Input data was truncated"),
        ('{"output": {"provenance": []}}', "missing field id"),
        (
            '{"id": "q1", "output": {"provenance": [{"title": "x"}]}}',
            "missing field wikipedia_id: in output.provenance[0]",
        ),
        (
            '{"id": "q1", "output": {"provenance": "7"}}',
            "wrong type: output.provenance is a string, not a list",
        ),
        ('{"id": 1, "output": {"provenance": []}}', "wrong type: id is a number, not a string"),
        ('{"id": "q\xff1", "output": {"provenance": []}}', "not UTF-8: byte ff"),
    ],
)
def test_bad_prediction_lines_say_what_was_wrong(tmp_path, line, message):
    path = tmp_path / "predictions.jsonl"
    good = '{"id": "q0", "output": {"provenance": [{"wikipedia_id": "1"}]}}'
    path.write_bytes(f"{good}\n{line}\n".encode().replace(b"\xc3\xbf", b"\xff"))
    with pytest.raises(BadInputError) as caught:
        Run.read(path)
    assert str(caught.value).startswith(f"{path}:2: {message}")


def test_kilt_lines_that_hide_their_page_are_counted(tmp_path):
    """A page of a wanted entity is found by its "wikidata_id"; a line cut before it, or
    whose wikidata_info is not an object, is reported instead of dropped unseen."""
    from dumps import page

    from namesake.amber.build.kilt import read_pages
    from namesake.errors import InputProblems

    wanted = page(1, "John Smith", ["A musician."], "Q1")
    anchored = {**wanted, "anchors": [{"text": "musician", "href": "Musician"}]}
    del anchored["wikidata_info"]
    anchored["wikidata_info"] = wanted["wikidata_info"]  # last, as in KILT
    line = json.dumps(anchored)
    cut = line[: line.index("}", line.index('"anchors"')) + 1]  # ends with '}', no QID
    lines = [json.dumps(wanted), cut, json.dumps({**wanted, "wikidata_info": "Q1"})]
    path = tmp_path / "kilt.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    problems = InputProblems()
    pages = read_pages(path, {"Q1"}, problems)
    assert [p.title for p in pages["Q1"]] == ["John Smith"]
    assert problems.summary() == [
        f"{path}: skipped 1 line(s): not JSON (line 2: Input data was truncated)",
        f"{path}: skipped 1 line(s): wrong type (line 3: wikidata_info is a string, not an object)",
    ]
