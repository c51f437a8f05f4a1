"""`amber build --work-dir`: a build killed at any moment of stage 1 resumes after the
last chunk it kept, and writes the same dataset as an uninterrupted build, byte for byte;
another dump is refused by name, and chunks that kept more relations serve a build of
fewer collections.

The fixture is the bundled Wikidata sample as one bz2 stream of 100 kB blocks (as
Wikidata's own `bzip2 -c` dump is one stream), read in 4 KiB blocks with a restart point
every 16 KiB, so that the pass is cut into seven chunks, restarted both at a stream's first
block and inside the stream."""

import bz2
import json
from pathlib import Path

import pytest
from conftest import SAMPLE_KILT, SAMPLE_PAGECOUNTS_EZ, SAMPLE_WIKIDATA
from folders import folder_files
from killed_builds import kill_after_saves

import namesake.dumps.reading
import namesake.dumps.restart as dump_restart
from namesake.amber.build.pipeline import build_amber
from namesake.errors import BadInputError

SMALL = {"CHUNK_BYTES": 4 << 10, "RESTART_EVERY_BYTES": 16 << 10}
# A build with SMALL's sizes that is SIGKILLed once `after` more chunks are kept:
# argv = wikidata dump, out, work_dir, after.
KILLED_BUILD = """
import os, signal, sys
import namesake.dumps.restart, namesake.dumps.reading
from namesake.amber.build.entity_chunks import EntityChunks
from namesake.amber.build.pipeline import build_amber
namesake.dumps.reading.CHUNK_BYTES = {chunk}
namesake.dumps.restart.RESTART_EVERY_BYTES = {every}
after, kept, save = int(sys.argv[4]), [], EntityChunks.save
def save_then_die(self, blocks, next_start):
    save(self, blocks, next_start)
    kept.append(1)
    if len(kept) == after:
        os.kill(os.getpid(), signal.SIGKILL)
EntityChunks.save = save_then_die
build_amber(sys.argv[1], {pageviews!r}, {kilt!r}, sys.argv[2], workers=2, work_dir=sys.argv[3])
""".format(
    chunk=SMALL["CHUNK_BYTES"],
    every=SMALL["RESTART_EVERY_BYTES"],
    pageviews=str(SAMPLE_PAGECOUNTS_EZ),
    kilt=str(SAMPLE_KILT),
)


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(namesake.dumps.reading, "CHUNK_BYTES", SMALL["CHUNK_BYTES"])
    monkeypatch.setattr(dump_restart, "RESTART_EVERY_BYTES", SMALL["RESTART_EVERY_BYTES"])


@pytest.fixture(scope="module")
def dump(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("dump") / "wikidata-all.json.bz2"
    path.write_bytes(bz2.compress(bz2.decompress(SAMPLE_WIKIDATA.read_bytes()), 1))
    return path


def build(dump, out, **options):
    return build_amber(dump, SAMPLE_PAGECOUNTS_EZ, SAMPLE_KILT, out, workers=2, **options)


@pytest.fixture(scope="module")
def uninterrupted(dump, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("reference") / "amber"
    build(dump, out)
    return out


def reused(report, work) -> int:
    (line,) = [line for line in report.lines() if line.startswith("stage-1 chunks reused")]
    assert line.startswith(f"stage-1 chunks reused from {work}: ")
    return int(line.rsplit(" ", 1)[1])


def test_a_build_killed_at_several_points_resumes_to_the_same_dataset(
    dump, uninterrupted, tmp_path, small_chunks
):
    work, out = tmp_path / "work", tmp_path / "amber"
    kept = kill_after_saves(KILLED_BUILD, dump, out, work, (1, 2, 3), "chunk-*")
    # restarts inside the stream and at its first block were both taken
    points = [restart_after(work, chunk) for chunk in range(kept)]
    assert {point["bz2"]["opens_stream"] for point in points} == {True, False}
    (work / ".chunk-000006.partial-x1y2").mkdir()  # what a kill during a save leaves
    report = build(dump, out, work_dir=work)
    assert reused(report, work) == kept
    assert not list(work.glob(".*partial*"))
    assert folder_files(out) == folder_files(uninterrupted)
    chunks = len(list(work.glob("chunk-*")))
    assert chunks == 7 and chunks > kept
    again = build(dump, tmp_path / "again", work_dir=work)  # all kept: the dump is not read
    assert reused(again, work) == chunks
    assert folder_files(tmp_path / "again") == folder_files(uninterrupted)


def restart_after(work: Path, chunk: int) -> dict:
    return json.loads((work / f"chunk-{chunk:06d}" / "chunk.json").read_text())["next"]


def test_another_dump_is_refused_by_name(dump, tmp_path, small_chunks):
    work = tmp_path / "work"
    build(dump, tmp_path / "first", work_dir=work)
    other = tmp_path / "other" / dump.name  # same name, one entity less
    other.parent.mkdir()
    text = bz2.decompress(dump.read_bytes()).splitlines(keepends=True)
    other.write_bytes(bz2.compress(b"".join(text[:5] + text[6:]), 1))
    with pytest.raises(BadInputError, match=r"stage1\.json.*other settings \(wikidata: "):
        build(other, tmp_path / "second", work_dir=work)


def test_chunks_serve_fewer_collections_and_refuse_more(dump, tmp_path, small_chunks):
    work, human_only = tmp_path / "work", ("human",)
    build(dump, tmp_path / "both", work_dir=work)
    chunks = len(list(work.glob("chunk-*")))
    report = build(dump, tmp_path / "human", work_dir=work, collections=human_only)
    assert reused(report, work) == chunks
    build(dump, tmp_path / "human-reference", collections=human_only)
    assert folder_files(tmp_path / "human") == folder_files(tmp_path / "human-reference")

    narrow = tmp_path / "narrow"
    build(dump, tmp_path / "human-again", work_dir=narrow, collections=human_only)
    with pytest.raises(BadInputError, match=r"stage-1 chunks without the relations of P"):
        build(dump, tmp_path / "both-again", work_dir=narrow)
