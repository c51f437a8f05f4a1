"""Tests run offline, as the demo does: set before `datasets` / `huggingface_hub` are imported,
since both read these variables once, at import time."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"


import importlib.util  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

# The Space's browser tests drive Debian's Chromium; `make` passes its CHROMIUM here.
CHROMIUM = Path(os.environ.get("NAMESAKE_CHROMIUM", "/usr/bin/chromium"))
SAMPLE = Path(__file__).parent.parent / "dataset_scripts" / "amber" / "sample"
SAMPLE_WIKIDATA = SAMPLE / "wikidata-sample-all.json.bz2"
SAMPLE_KILT = SAMPLE / "kilt_knowledgesource-sample.json"
SAMPLE_PAGECOUNTS_EZ = SAMPLE / "pagecounts-sample-views-ge-5-totals.bz2"
SAMPLE_PAGEVIEWS_COMPLETE = SAMPLE / "pageviews-sample-user.gz"
#: the real 206-page excerpt of an English Wikipedia dump (tests/data/README.md)
WIKIPEDIA_EXCERPT = Path(__file__).parent / "data" / "enwiki-sample-pages-articles.xml.bz2"


def load_module(path: Path, name: str | None = None):
    """Imports the Python file `path` as a module (scripts and self-contained `evaluate`
    modules are files, not importable packages)."""
    spec = importlib.util.spec_from_file_location(name or path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_script(name: str):
    """The training script ``training/<name>.py`` as a module."""
    return load_module(Path(__file__).resolve().parent.parent / "training" / f"{name}.py")


def pytest_collection_modifyitems(config, items):
    """Without Chromium, stop before any test runs, in one line: not an error in each
    browser test, and never a silent skip."""
    if not CHROMIUM.is_file() and any("e2e" in item.path.parts for item in items):
        pytest.exit(
            f"Chromium not found at {CHROMIUM}: the Space's browser tests need it. "
            "Install it (`sudo apt-get install chromium`, or `make install` as root), "
            "or set NAMESAKE_CHROMIUM to its path.",
            returncode=pytest.ExitCode.USAGE_ERROR,
        )


@pytest.fixture(scope="session", autouse=True)
def namesake_cache(tmp_path_factory):
    """namesake's cache folder (``$NAMESAKE_CACHE``: the Space's indexes for an artifacts
    folder it did not write, WordNet for METEOR) in the test session's temporary folder, not
    the user's ~/.cache; the app's subprocesses inherit it."""
    folder = tmp_path_factory.mktemp("namesake_cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NAMESAKE_CACHE", str(folder))
        yield folder


@pytest.fixture(scope="session")
def sample_build(tmp_path_factory):
    """The bundled sample built once per test session: (output folder, build report)."""
    from namesake.amber.build.pipeline import build_amber

    out = tmp_path_factory.mktemp("amber")
    report = build_amber(
        SAMPLE_WIKIDATA,
        SAMPLE_PAGECOUNTS_EZ,
        SAMPLE_KILT,
        out / "dataset",
        workers=2,
        jsonl_dir=out / "jsonl",
    )
    return out, report


@pytest.fixture(scope="session")
def space_artifacts(sample_build, tmp_path_factory):
    """An artifacts folder for the Space holding only the sample AmbER build: the app builds
    its indexes and page store from the sample corpus on first start."""
    out, _ = sample_build
    folder = tmp_path_factory.mktemp("space_artifacts")
    (folder / "amber").symlink_to(out / "dataset", target_is_directory=True)
    return folder


def write_leaderboard(artifacts: Path, work: Path) -> None:
    """``namesake leaderboard`` of two retrievers' runs on AmbER-H QA into the artifacts
    folder, as ``make demo`` writes it there."""
    from namesake.cli import main

    dataset = str(artifacts / "amber")
    base = ["retrieve", "--corpus", str(SAMPLE_KILT), "--dataset", dataset, "--config", "human_qa"]
    runs = [str(work / f"{kind}.jsonl") for kind in ("tfidf", "bm25")]
    for kind, run in zip(("tfidf", "bm25"), runs, strict=True):
        main([*base, "--retriever", kind, "--out", run])
    main(
        ["leaderboard", *runs, "--dataset", dataset, "--config", "human_qa"]
        + ["--baseline", "bm25", "--out", str(artifacts / "leaderboard")]
    )


@pytest.fixture(scope="session")
def demo_artifacts(sample_build, tmp_path_factory):
    """An artifacts folder as ``make demo`` leaves it for the Space: the sample AmbER build,
    the BM25 and dense indexes of the sample corpus (``amber compare --index-dir``, with
    namesake's output markers) and a leaderboard; no page store, which ``make demo`` does
    not write."""
    from namesake.amber.evaluation.retrieve import open_retriever

    folder = tmp_path_factory.mktemp("demo_artifacts")
    (folder / "amber").symlink_to(sample_build[0] / "dataset", target_is_directory=True)
    for kind in ("bm25", "dense"):
        open_retriever(kind, SAMPLE_KILT, folder / "indexes" / kind)
    write_leaderboard(folder, tmp_path_factory.mktemp("leaderboard_runs"))
    return folder


@pytest.fixture(scope="session")
def wikipedia_excerpt() -> Path:
    """The real Wikipedia excerpt (`WIKIPEDIA_EXCERPT`): WES mining, passages, the linker."""
    return WIKIPEDIA_EXCERPT
