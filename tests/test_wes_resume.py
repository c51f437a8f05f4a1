"""`wes build --work-dir`: a build killed at any moment resumes, mining only the ranges of
the dump it had not finished, and writes the same dataset as an uninterrupted build, byte
for byte; another dump in the same work folder is refused by name."""

import bz2
import os
from pathlib import Path

import pytest
from conftest import WIKIPEDIA_EXCERPT
from dumps import write_multistream
from folders import folder_files
from killed_builds import kill_after_saves

import namesake.wes.mining as mining
from namesake.errors import BadInputError
from namesake.wes.build import build_wes

OPTIONS = {"thresholds": (1, 2), "all_targets": True, "dictionary": False, "year": 2016}
# A script that builds with one bz2 stream per range and is SIGKILLed after `after` ranges
# are saved in the work folder: argv = dump, out, work_dir, after.
KILLED_BUILD = """
import os, signal, sys
import namesake.wes.mining as mining
from namesake.wes.build import build_wes
mining.STREAMS_PER_TASK = 1
after, saved, save = int(sys.argv[4]), [], mining.MinedRanges.save
def save_then_die(self, index, part):
    save(self, index, part)
    saved.append(index)
    if len(saved) == after:
        os.kill(os.getpid(), signal.SIGKILL)
mining.MinedRanges.save = save_then_die
build_wes(sys.argv[1], sys.argv[2], work_dir=sys.argv[3], **{options})
""".replace("{options}", repr(OPTIONS))


@pytest.fixture(scope="module")
def dump(tmp_path_factory) -> Path:
    """The real 206-page excerpt as a multistream dump of 20 pages a stream (12 streams)."""
    path = tmp_path_factory.mktemp("dump") / "enwiki-pages-articles-multistream.xml.bz2"
    write_multistream(path, bz2.decompress(WIKIPEDIA_EXCERPT.read_bytes()), 20)
    return path


@pytest.fixture(scope="module")
def uninterrupted(dump, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("reference") / "wes"
    build_wes(dump, out, **OPTIONS)
    return out


def test_a_build_killed_at_several_points_resumes_to_the_same_dataset(
    dump, uninterrupted, tmp_path, monkeypatch
):
    work, out = tmp_path / "work", tmp_path / "wes"
    saved = kill_after_saves(KILLED_BUILD, dump, out, work, (1, 3, 5), "range-*")
    (work / ".range-000011.partial-x1y2").mkdir()  # what a kill during a save leaves
    monkeypatch.setattr(mining, "STREAMS_PER_TASK", 1)
    report = build_wes(dump, out, work_dir=work, **OPTIONS)
    assert f"mined ranges reused from {work}: {saved}" in report.lines()
    assert not list(work.glob(".*partial*"))
    assert folder_files(out) == folder_files(uninterrupted)
    again = build_wes(dump, tmp_path / "again", work_dir=work, **OPTIONS)
    ranges = len(list(work.glob("range-*")))
    assert ranges > saved and f"mined ranges reused from {work}: {ranges}" in again.lines()
    assert folder_files(tmp_path / "again") == folder_files(uninterrupted)


def test_another_dump_in_the_same_work_folder_is_refused_by_name(dump, tmp_path, monkeypatch):
    monkeypatch.setattr(mining, "STREAMS_PER_TASK", 1)
    work = tmp_path / "work"
    build_wes(dump, tmp_path / "first", work_dir=work, **OPTIONS)
    other = tmp_path / dump.name
    xml = bz2.decompress(WIKIPEDIA_EXCERPT.read_bytes())
    write_multistream(other, xml.replace(b"<title>", b"<title>X", 1), 20)
    with pytest.raises(BadInputError, match=r"holds mined links with other settings \(inputs:"):
        build_wes(other, tmp_path / "second", work_dir=work, **OPTIONS)
    assert not (tmp_path / "second").exists()
    # other settings of the later stages reuse the same mined ranges, by design
    report = build_wes(dump, tmp_path / "third", work_dir=work, **{**OPTIONS, "seed": 7})
    assert any(line.startswith("mined ranges reused") for line in report.lines())
    assert os.listdir(tmp_path / "third")
