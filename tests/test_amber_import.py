"""`namesake amber import`: the authors' released JSON lines become the same Hub dataset folder
as a build, and a damaged release stops with the file and line at fault."""

import json
import shutil
from pathlib import Path

import pytest
import yaml
from datasets import load_dataset

from namesake.amber.build import released
from namesake.amber.build.dataset import read_config, statistics_table
from namesake.amber.build.released import import_released
from namesake.cli import main
from namesake.errors import BadInputError, NamesakeError

CONFIGS = [
    f"{collection}{suffix}"
    for collection in ("human", "nonhuman")
    for suffix in ("", "_qa", "_sf", "_fc", "_entities")
]


@pytest.fixture(scope="module")
def imported(sample_build, tmp_path_factory):
    """The sample build's JSON-lines layout imported as a release: (import folder, report)."""
    out, _ = sample_build
    folder = tmp_path_factory.mktemp("imported") / "amber"
    return folder, import_released(out / "jsonl", folder)


def _card_header(folder: Path) -> dict:
    text = (folder / "README.md").read_text(encoding="utf-8")
    return yaml.safe_load(text.split("---\n")[1])


def _config_folders(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.is_dir())


def test_every_config_equals_the_build(sample_build, imported):
    out, _ = sample_build
    folder, report = imported
    assert _config_folders(folder) == _config_folders(out / "dataset") == sorted(CONFIGS)
    assert sorted(report.configs) == sorted(CONFIGS)
    for config in CONFIGS:
        built, got = read_config(out / "dataset", config), read_config(folder, config)
        assert got.schema == built.schema, config
        assert got.num_rows == built.num_rows > 0, config
        assert got.to_pylist() == built.to_pylist(), config


def test_card_describes_the_same_configs_and_names_the_release(sample_build, imported):
    out, _ = sample_build
    folder, _ = imported
    built, got = _card_header(out / "dataset"), _card_header(folder)
    assert got["configs"] == built["configs"]
    assert got["dataset_info"] == built["dataset_info"]
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert "- the AmbER authors' release: `jsonl`" in card
    assert "rebuilt from Wikidata" not in card
    assert "rebuilt from Wikidata" in (out / "dataset" / "README.md").read_text(encoding="utf-8")
    assert "| AmbER-H | 8 |" in card and "| AmbER-N | 8 |" in card


@pytest.mark.parametrize("config", ["human", "human_qa", "nonhuman_entities"])
def test_load_dataset_gives_the_built_rows(sample_build, imported, tmp_path, config):
    out, _ = sample_build
    folder, _ = imported
    got = load_dataset(str(folder), config, split="test", cache_dir=str(tmp_path / "got"))
    built = load_dataset(str(out / "dataset"), config, split="test", cache_dir=str(tmp_path / "b"))
    assert got.num_rows == built.num_rows > 0
    assert got.features == built.features
    assert got.to_list() == built.to_list()


def test_report_has_the_build_statistics(sample_build, imported):
    _, build_report = sample_build
    _, report = imported
    assert report.statistics == build_report.statistics
    assert report.counts["human: queries"] == build_report.counts["human: queries"] == 67
    assert report.counts["nonhuman: AmbER sets"] == 8


def test_stats_prints_the_same_table_as_on_the_build(sample_build, imported, capsys):
    out, _ = sample_build
    folder, _ = imported
    main(["amber", "stats", str(out / "dataset")])
    on_build = capsys.readouterr().out
    main(["amber", "stats", str(folder)])
    on_import = capsys.readouterr().out
    assert "| AmbER-H | 8 |" in on_build
    assert on_import == on_build


def test_cli_import_prints_the_statistics_table(sample_build, tmp_path, capsys):
    out, build_report = sample_build
    target = tmp_path / "amber"
    main(["amber", "import", "--released", str(out / "jsonl"), "--out", str(target)])
    printed = capsys.readouterr().out
    assert statistics_table(build_report.statistics) in printed
    assert f"Wrote {target}" in printed
    assert read_config(target, "nonhuman_fc").to_pylist() == (
        read_config(out / "dataset", "nonhuman_fc").to_pylist()
    )


def test_collections_option_imports_only_those(sample_build, tmp_path, capsys):
    out, _ = sample_build
    target = tmp_path / "amber"
    main(
        ["amber", "import", "--released", str(out / "jsonl"), "--out", str(target)]
        + ["--collections", "nonhuman"]
    )
    assert _config_folders(target) == [c for c in sorted(CONFIGS) if c.startswith("nonhuman")]
    assert "AmbER-H" not in capsys.readouterr().out


def test_small_batches_give_the_same_rows(sample_build, tmp_path, monkeypatch):
    """Sets are converted a batch at a time; batch boundaries must not change a row."""
    out, _ = sample_build
    monkeypatch.setattr(released, "SETS_PER_BATCH", 3)  # 8 sets: batches of 3, 3 and 2
    import_released(out / "jsonl", tmp_path / "amber")
    for config in CONFIGS:
        assert read_config(tmp_path / "amber", config).to_pylist() == (
            read_config(out / "dataset", config).to_pylist()
        ), config


# --- A damaged release: one clear error naming the file (and line), and no output. ---


def _copy_release(sample_build, tmp_path: Path) -> Path:
    out, _ = sample_build
    return Path(shutil.copytree(out / "jsonl", tmp_path / "release"))


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _write_lines(path: Path, lines: list[str]) -> None:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def _edit_record(path: Path, line_no: int, edit) -> None:
    """Applies `edit` to the decoded record on line `line_no` (1-based) of `path`."""
    lines = _lines(path)
    record = json.loads(lines[line_no - 1])
    edit(record)
    lines[line_no - 1] = json.dumps(record, ensure_ascii=False)
    _write_lines(path, lines)


def _first_query(record: dict) -> dict:
    return next(q for entity in record["qids"].values() for q in entity["queries"])


def _queries(record: dict) -> list[dict]:
    return [q for entity in record["qids"].values() for q in entity["queries"]]


def _expect_error(release: Path, tmp_path: Path, path: Path, line: int | None, *words: str):
    target = tmp_path / "out"
    with pytest.raises(BadInputError) as caught:
        import_released(release, target)
    assert caught.value.path == str(path)
    assert caught.value.line == line
    for word in words:
        assert word in caught.value.message
    assert not target.exists()
    return caught.value


@pytest.mark.parametrize("task", ["qa", "sf", "fc"])
def test_missing_task_file(sample_build, tmp_path, task):
    release = _copy_release(sample_build, tmp_path)
    path = release / "nonhuman" / task / "amber_sets.jsonl"
    path.unlink()
    _expect_error(release, tmp_path, path, None, "missing", "amber_sets.jsonl")


def test_missing_tuples_file(sample_build, tmp_path):
    release = _copy_release(sample_build, tmp_path)
    path = release / "human" / "amber_set_tuples.jsonl"
    path.unlink()
    _expect_error(release, tmp_path, path, None, "missing")


def test_gold_page_outside_the_amber_set(sample_build, tmp_path):
    release = _copy_release(sample_build, tmp_path)
    path = release / "human" / "qa" / "amber_sets.jsonl"
    query_id = _first_query(json.loads(_lines(path)[1]))["id"]

    def misplace_gold_page(record):
        _first_query(record)["output"]["provenance"][0]["wikipedia_id"] = "999999999"

    _edit_record(path, 2, misplace_gold_page)
    _expect_error(release, tmp_path, path, 2, "gold page", "999999999", query_id)


def test_duplicate_query_id_in_one_set(sample_build, tmp_path):
    release = _copy_release(sample_build, tmp_path)
    path = release / "nonhuman" / "sf" / "amber_sets.jsonl"
    line = next(n for n, text in enumerate(_lines(path), 1) if len(_queries(json.loads(text))) > 1)

    def repeat_first_id(record):
        first, second = _queries(record)[:2]
        second["id"] = first["id"]

    _edit_record(path, line, repeat_first_id)
    _expect_error(release, tmp_path, path, line, "duplicate query id", f"{path}:{line}")


def test_duplicate_query_id_across_task_files(sample_build, tmp_path):
    release = _copy_release(sample_build, tmp_path)
    qa, fc = (release / "human" / task / "amber_sets.jsonl" for task in ("qa", "fc"))
    qa_id = _first_query(json.loads(_lines(qa)[0]))["id"]
    _edit_record(fc, 3, lambda record: _first_query(record).update(id=qa_id))
    _expect_error(release, tmp_path, fc, 3, "duplicate query id", f"{qa}:1")


def test_duplicate_amber_set(sample_build, tmp_path):
    release = _copy_release(sample_build, tmp_path)
    path = release / "human" / "amber_set_tuples.jsonl"
    lines = _lines(path)
    _write_lines(path, lines + lines[:1])
    _expect_error(release, tmp_path, path, len(lines) + 1, "duplicate AmbER set", "line 1")


def test_duplicate_entity_in_a_set(sample_build, tmp_path):
    """A repeated QID key would silently drop an entity in any JSON reader."""
    release = _copy_release(sample_build, tmp_path)
    path = release / "nonhuman" / "amber_set_tuples.jsonl"
    lines = _lines(path)
    record = json.loads(lines[4])
    entities = list(record["qids"].items())
    repeated = entities + entities[:1]
    members = ", ".join(f"{json.dumps(qid)}: {json.dumps(entity)}" for qid, entity in repeated)
    lines[4] = f'{{"name": {json.dumps(record["name"])}, "qids": {{{members}}}}}'
    _write_lines(path, lines)
    _expect_error(release, tmp_path, path, 5, "duplicate key", repr(entities[0][0]))


def test_unparseable_json_line(sample_build, tmp_path):
    release = _copy_release(sample_build, tmp_path)
    path = release / "nonhuman" / "fc" / "amber_sets.jsonl"
    lines = _lines(path)
    lines[3] = lines[3][: len(lines[3]) // 2]
    _write_lines(path, lines)
    _expect_error(release, tmp_path, path, 4, "not JSON")


def test_missing_field_is_named(sample_build, tmp_path):
    release = _copy_release(sample_build, tmp_path)
    path = release / "human" / "amber_set_tuples.jsonl"
    _edit_record(path, 6, lambda record: next(iter(record["qids"].values())).pop("popularity"))
    _expect_error(release, tmp_path, path, 6, "popularity")


def test_task_file_in_another_order(sample_build, tmp_path):
    release = _copy_release(sample_build, tmp_path)
    path = release / "human" / "sf" / "amber_sets.jsonl"
    lines = _lines(path)
    lines[0], lines[1] = lines[1], lines[0]
    _write_lines(path, lines)
    _expect_error(release, tmp_path, path, 1, "same order", "amber_set_tuples.jsonl line 1")


def test_task_file_with_a_set_not_in_the_tuples(sample_build, tmp_path):
    release = _copy_release(sample_build, tmp_path)
    tuples = release / "human" / "amber_set_tuples.jsonl"
    qa = release / "human" / "qa" / "amber_sets.jsonl"
    _write_lines(tuples, _lines(tuples)[:-1])
    _expect_error(release, tmp_path, qa, 8, "not in amber_set_tuples.jsonl")


def test_task_file_shorter_than_the_tuples(sample_build, tmp_path):
    release = _copy_release(sample_build, tmp_path)
    fc = release / "nonhuman" / "fc" / "amber_sets.jsonl"
    _write_lines(fc, _lines(fc)[:-1])
    _expect_error(release, tmp_path, fc, None, "ends before AmbER set", "line 8")


def test_task_set_with_an_entity_not_in_the_tuples(sample_build, tmp_path):
    release = _copy_release(sample_build, tmp_path)
    path = release / "human" / "qa" / "amber_sets.jsonl"
    _edit_record(path, 2, lambda r: r["qids"].update(Q123456789={"queries": []}))
    _expect_error(release, tmp_path, path, 2, "Q123456789")


def test_query_about_a_relation_the_entity_lacks(sample_build, tmp_path):
    release = _copy_release(sample_build, tmp_path)
    path = release / "nonhuman" / "qa" / "amber_sets.jsonl"
    _edit_record(path, 7, lambda record: _first_query(record)["meta"].update(pid="P999999"))
    _expect_error(release, tmp_path, path, 7, "P999999")


def test_cli_reports_a_damaged_release_in_one_line(sample_build, tmp_path, capsys):
    release = _copy_release(sample_build, tmp_path)
    path = release / "human" / "sf" / "amber_sets.jsonl"
    lines = _lines(path)
    lines[1] = "{not json"
    _write_lines(path, lines)
    with pytest.raises(SystemExit) as exited:
        main(["amber", "import", "--released", str(release), "--out", str(tmp_path / "out")])
    assert str(exited.value.code).startswith(f"namesake: error: {path}:2: not JSON")
    assert not (tmp_path / "out").exists()


def test_empty_collection_is_reported_not_written(sample_build, tmp_path):
    release = _copy_release(sample_build, tmp_path)
    for path in (release / "human").rglob("*.jsonl"):
        path.write_text("", encoding="utf-8")
    report = import_released(release, tmp_path / "out")
    assert _config_folders(tmp_path / "out") == [c for c in sorted(CONFIGS) if c[0] == "n"]
    assert "human: the release has no AmbER set; no config written" in report.problems
    assert report.counts["human: queries"] == 0
    assert list(report.statistics) == ["nonhuman"]


def test_release_without_any_set_writes_nothing(sample_build, tmp_path):
    release = _copy_release(sample_build, tmp_path)
    for path in release.rglob("*.jsonl"):
        path.write_text("", encoding="utf-8")
    with pytest.raises(NamesakeError, match="no AmbER set in any collection"):
        import_released(release, tmp_path / "out")
    assert not (tmp_path / "out").exists()
