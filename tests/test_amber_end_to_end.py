"""The whole build on the bundled sample dumps, against the hand-checked expected output."""

from pathlib import Path

import pytest
from conftest import SAMPLE_KILT as KILT
from conftest import SAMPLE_PAGEVIEWS_COMPLETE as PAGEVIEWS_COMPLETE
from conftest import SAMPLE_WIKIDATA as WIKIDATA
from datasets import load_dataset

from namesake.amber.build.pipeline import build_amber
from namesake.cli import main

EXPECTED = Path(__file__).parent / "data" / "amber_sample_expected"


def _relative_files(folder: Path) -> list[Path]:
    return sorted(p.relative_to(folder) for p in folder.rglob("*.jsonl"))


def test_jsonl_output_equals_the_hand_checked_expected_files(sample_build):
    out, _ = sample_build
    assert _relative_files(out / "jsonl") == _relative_files(EXPECTED)
    for relative in _relative_files(EXPECTED):
        expected = (EXPECTED / relative).read_text(encoding="utf-8")
        assert (out / "jsonl" / relative).read_text(encoding="utf-8") == expected, relative


def test_current_pageviews_format_builds_the_same_dataset(tmp_path):
    build_amber(WIKIDATA, PAGEVIEWS_COMPLETE, KILT, tmp_path / "d", jsonl_dir=tmp_path / "j")
    for relative in _relative_files(EXPECTED):
        expected = (EXPECTED / relative).read_text(encoding="utf-8")
        assert (tmp_path / "j" / relative).read_text(encoding="utf-8") == expected, relative


def test_report_counts_skipped_lines_and_omitted_refutes(sample_build):
    _, report = sample_build
    assert report.counts["human: AmbER sets (stage 4)"] == 8
    assert report.counts["nonhuman: AmbER sets (stage 4)"] == 8
    assert report.counts["human: REFUTES claims omitted (no other value)"] == 5
    assert report.counts["nonhuman: REFUTES claims omitted (no other value)"] == 3
    assert any("malformed pagecounts-ez line" in line for line in report.problems)


@pytest.mark.parametrize(
    ("config", "tasks", "rows"),
    [("human", {"qa", "sf", "fc"}, 67), ("nonhuman_fc", {"fc"}, 51), ("nonhuman_qa", {"qa"}, 27)],
)
def test_load_dataset_offline(sample_build, tmp_path, config, tasks, rows):
    out, _ = sample_build
    dataset = load_dataset(str(out / "dataset"), config, split="test", cache_dir=str(tmp_path))
    assert dataset.num_rows == rows
    assert set(dataset["task"]) == tasks
    first = dataset[0]
    assert first["id"].startswith(first["amber_id"] + "=")
    assert first["gold_wikipedia_ids"] and first["answer"]


def test_dataset_card_declares_every_config(sample_build):
    out, _ = sample_build
    card = (out / "dataset" / "README.md").read_text(encoding="utf-8")
    for collection in ("human", "nonhuman"):
        for suffix in ("", "_qa", "_sf", "_fc", "_entities"):
            assert f"config_name: {collection}{suffix}\n" in card
            assert (out / "dataset" / f"{collection}{suffix}").is_dir()
    assert "| AmbER-H | 8 |" in card and "| AmbER-N | 8 |" in card
    assert "@inproceedings{chen-etal-2021-evaluating" in card


def test_stats_command_prints_table_4(sample_build, capsys):
    out, _ = sample_build
    main(["amber", "stats", str(out / "dataset")])
    printed = capsys.readouterr().out
    assert "| AmbER-H | 8 | 2.12 | 2.00 | 2.25 | 18 | 18 | 31 |" in printed
    assert "| AmbER-N | 8 | 2.25 | 2.12 | 3.38 | 27 | 27 | 51 |" in printed
