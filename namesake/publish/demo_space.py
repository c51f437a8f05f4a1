"""The demo Space (``space_app/``) staged as the folder its Space repo holds, so that it runs
on the Hub from that folder alone: ``namesake publish space``.

What the staged Space reads, and why it carries it. What ``make demo`` wrote that the Space
shows is small: the sample AmbER build (``amber/``, 176 KiB), the BM25 and dense indexes of the
47-page sample corpus (116 KiB and 100 KiB), their page store (20 KiB) and the leaderboard with
its popularity curve (364 KiB): under 1 MiB together, against 1.8 MiB for the namesake wheel
the Space installs anyway. So by default the staged folder carries them in ``artifacts/``
beside ``app.py``, which reads that folder when it is there: the Space starts from its own
repo, with no dataset repo to reach, nothing to download and nothing to build (the dense
index alone means encoding every page, on a free Space's CPU, at every restart that loses
the cache). ``make demo``'s TF-IDF index (193 MiB) and its runs are left out: the Space shows
neither. So are ``make wes-demo``'s scorer and ``make ecqg-demo``'s passage encoder (about
90 MiB, and minutes of training each): the staged Space judges answers with the
``wes_similarity`` metric's default scorer and shows the dense model's attention, both of
which come with the installed packages.

With ``dataset`` (the Hub id of the AmbER dataset ``namesake publish dataset amber``
published), the Space reads AmbER from there with ``load_dataset`` (``artifacts/
amber_dataset.txt`` names it) instead of carrying ``amber/``: the Space then shows the
published dataset, as its card links it. It still carries the indexes and the page store,
which are built from the sample corpus that the wheel ships, not from the dataset.

The staged files name no path of this machine: the app finds its artifacts beside its own
file, and the paths that namesake records in what it writes (the corpus and the model an
index was built from, the build report in the dataset card) are made relative to the
checkout, the installed packages or the artifacts folder; any other is refused, naming the
file (`validate_demo_space`).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import sysconfig
from importlib import metadata
from pathlib import Path

from huggingface_hub import SpaceCard
from huggingface_hub.utils import HFValidationError, validate_repo_id

import namesake
from namesake.data import amber_sample
from namesake.errors import NamesakeError
from namesake.outputs import atomic_directory
from namesake.publish.staging import copy_publishable
from namesake.retrieval.corpus import read_kilt_documents
from namesake.retrieval.provenance import corpus_identity, same_corpus
from namesake.retrieval.storage import read_settings
from namesake.space.artifacts import (
    DATASET_DIR,
    DATASET_ID_FILE,
    DOCUMENTS_FILE,
    INDEX_DIR,
    LEADERBOARD_DIR,
    LEADERBOARD_FILES,
    SPACE_RETRIEVERS,
    STAGED_FOLDER,
    load_artifacts,
)
from namesake.space.documents import write_documents

DEFAULT_ARTIFACTS = Path("demo_output")
SPACE_APP_DIR = "space_app"
APP_FILE = "app.py"
CARD_FILE = "README.md"
REQUIREMENTS_FILE = "requirements.txt"
WHEELS_DIR = "wheels"
WRITER = "publish space"
#: files whose text may name a path: made relative when staged, checked when validated
TEXT_SUFFIXES = (".csv", ".html", ".json", ".md", ".py", ".svg", ".txt", ".yaml", ".yml")
#: an absolute path of two parts or more, not one inside a URL, a relative path or a word
ABSOLUTE_PATH = re.compile(r"(?<![\w.~/:\\-])/(?:[\w.-]+/)+[\w.-]*")
_WHEEL_LINE = re.compile(r"^\./wheels/(?P<wheel>[^\s\[]+\.whl)(\[[\w,]+\])?$")


def stage_demo_space(out: Path, artifacts: Path | None = None, dataset: str | None = None) -> Path:
    """Writes the demo Space's repo folder to `out` (whole or not at all) and validates it;
    returns it. `artifacts`: what ``make demo`` wrote (default ``demo_output``); `dataset`:
    the published AmbER dataset's Hub id, read instead of carrying ``amber/`` (see module)."""
    artifacts = Path(artifacts or DEFAULT_ARTIFACTS)
    if dataset is not None:
        _check_hub_id(dataset)
    checkout = _checkout()
    _check_artifacts(artifacts, dataset)
    app = checkout / SPACE_APP_DIR
    with atomic_directory(out, writer=WRITER) as staging:
        for name in (APP_FILE, REQUIREMENTS_FILE):
            shutil.copy2(app / name, staging / name)
        _write_card(app / CARD_FILE, staging / CARD_FILE, dataset)
        _build_wheel(checkout, staging / WHEELS_DIR)
        _stage_artifacts(artifacts, staging / STAGED_FOLDER, dataset)
        _relative_paths(staging, _local_roots(checkout, artifacts))
        validate_demo_space(staging)
    return Path(out).resolve()


def validate_demo_space(staged: Path) -> None:
    """Refuses, in one line naming the file, a staged Space that would not run on the Hub:
    a card without its Space fields, a requirements file naming a wheel it lacks, artifacts
    that would have to be built or fetched from this machine (loaded here with no corpus),
    a text file naming a path of this machine."""
    _check_card(staged / CARD_FILE, staged)
    _check_wheel(staged / REQUIREMENTS_FILE, staged / WHEELS_DIR)
    try:
        load_artifacts(staged / STAGED_FOLDER, corpus=None, report=lambda _: None)
    except NamesakeError as error:
        raise NamesakeError(
            f"{staged / STAGED_FOLDER}: the staged Space would not start: {error}"
        ) from None
    _check_no_local_paths(staged)


# --- what goes in ---------------------------------------------------------------------------


def _check_hub_id(dataset: str) -> None:
    try:
        validate_repo_id(dataset)
    except HFValidationError as error:
        raise NamesakeError(f"--dataset {dataset}: not a Hub id ({error})") from None
    if "/" not in dataset or Path(dataset).exists():
        raise NamesakeError(
            f"--dataset {dataset}: the Hub id (OWNER/NAME) of the published AmbER dataset, "
            "not a local folder: without --dataset the Space carries the local one"
        )


def _checkout() -> Path:
    """The repository namesake runs from: the Space's files and the wheel's sources."""
    root = Path(namesake.__file__).resolve().parents[1]
    if not (root / "pyproject.toml").is_file() or not (root / SPACE_APP_DIR / APP_FILE).is_file():
        raise NamesakeError(
            f"{root}: not a namesake checkout (no pyproject.toml or {SPACE_APP_DIR}/{APP_FILE}): "
            "stage the Space from a clone of the repository, where its wheel is built"
        )
    return root


def _check_artifacts(artifacts: Path, dataset: str | None) -> None:
    """One line naming what the Space needs that `artifacts` lacks, and what makes it."""
    if not artifacts.is_dir():
        raise NamesakeError(
            f"No artifacts folder at {artifacts}: run `make demo` first, or pass the folder "
            "it wrote"
        )
    needed = [Path(INDEX_DIR, kind) for kind in SPACE_RETRIEVERS]
    needed += [Path(LEADERBOARD_DIR, name) for name in LEADERBOARD_FILES]
    if dataset is None:
        needed.append(Path(DATASET_DIR))
    missing = [str(path) for path in needed if not (artifacts / path).exists()]
    if missing:
        raise NamesakeError(
            f"{artifacts}: no {', '.join(missing)}: run `make demo` first (it writes them all)"
        )


def _write_card(template: Path, target: Path, dataset: str | None) -> None:
    """The Space card: ``space_app``'s, for the installed Gradio, saying what data it has."""
    try:
        gradio_version = metadata.version("gradio")
    except metadata.PackageNotFoundError:
        raise NamesakeError("gradio is not installed: pip install -e '.[space]'") from None
    card = SpaceCard.load(template)
    card.data.sdk_version = gradio_version
    card.data.app_file = APP_FILE
    carried = (
        f"the BM25 and dense indexes of the bundled sample corpus with their page store "
        f"(`{INDEX_DIR}/`) and `make demo`'s leaderboard (`{LEADERBOARD_DIR}/`) in "
        f"`{STAGED_FOLDER}/`"
    )
    if dataset is None:
        data = f"It carries the AmbER sample build (`{DATASET_DIR}/`), {carried}, so it "
        data += "downloads and builds nothing when it starts."
    else:
        card.data.datasets = [dataset]
        data = f"It reads the AmbER dataset [{dataset}](https://huggingface.co/datasets/"
        data += (
            f"{dataset}) from the Hub and carries {carried}, so it builds nothing when it starts."
        )
    card.text = f"{card.text.rstrip()}\n\n## This Space's data\n\n{data}\n"
    card.save(target)


def _build_wheel(checkout: Path, wheels: Path) -> None:
    """The namesake wheel the Space installs, built as ``make space-bundle`` builds it."""
    shutil.rmtree(checkout / "build", ignore_errors=True)  # or deleted files get in the wheel
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"]
    command += ["--no-index", "--quiet", "-w", str(wheels), str(checkout)]
    built = subprocess.run(command, capture_output=True, text=True, check=False)
    if built.returncode != 0:
        said = (built.stderr or built.stdout).strip().splitlines()
        raise NamesakeError(
            f"could not build the namesake wheel from {checkout} (pip wheel exited with "
            f"{built.returncode}{': ' + said[-1] if said else ''})"
        )


def _stage_artifacts(source: Path, target: Path, dataset: str | None) -> None:
    """What the Space shows, copied from `source` (see module), with a page store built
    from the indexes' corpus when `source` has none (``make demo`` writes none)."""
    parts = [Path(INDEX_DIR, kind) for kind in SPACE_RETRIEVERS] + [Path(LEADERBOARD_DIR)]
    if dataset is None:
        parts.append(Path(DATASET_DIR))
    for part in parts:
        copy_publishable(source / part, target / part)
    if dataset is not None:
        (target / DATASET_ID_FILE).write_text(f"{dataset}\n", encoding="utf-8")
    store = source / INDEX_DIR / DOCUMENTS_FILE
    if store.is_file():
        shutil.copy2(store, target / INDEX_DIR / DOCUMENTS_FILE)
    else:
        corpus = _indexed_corpus(source / INDEX_DIR)
        write_documents(read_kilt_documents(corpus), target / INDEX_DIR / DOCUMENTS_FILE)


def _indexed_corpus(indexes: Path) -> Path:
    """The corpus the BM25 index was built from, where this machine has it: the recorded
    file, else the bundled sample when it holds the same pages."""
    recorded = read_settings(indexes / "bm25", "bm25").get("provenance", {}).get("corpus", {})
    for candidate in (recorded.get("path"), amber_sample("kilt")):
        found = candidate and Path(candidate).is_file()
        if found and same_corpus(recorded, corpus_identity(candidate)):
            return Path(candidate)
    raise NamesakeError(
        f"{indexes / DOCUMENTS_FILE}: no page store, and the corpus the indexes were built "
        f"from ({recorded.get('path', 'not recorded')}) is not here to build one from: "
        "rebuild the indexes with `make demo`"
    )


# --- paths of this machine ------------------------------------------------------------------


def _local_roots(checkout: Path, artifacts: Path) -> list[tuple[str, str]]:
    """Folders of this machine that staged files may name, longest first, each with what
    stands for it in the staged text: the checkout, the installed packages, the artifacts
    folder and the folder it lies in (the checkout ``make demo`` ran in) go, so that their
    paths become relative; the home folder becomes ``~``."""
    artifacts = artifacts.resolve()
    roots = {str(artifacts): "", str(artifacts.parent): "", str(checkout): ""}
    for name in ("purelib", "platlib"):
        roots[sysconfig.get_paths()[name]] = ""
    roots[sys.prefix] = ""
    roots[str(Path.home())] = "~"
    return sorted(roots.items(), key=lambda root: -len(root[0]))


def _text_files(folder: Path):
    for path in sorted(folder.rglob("*")):
        if path.is_file() and path.suffix in TEXT_SUFFIXES:
            try:
                yield path, path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue


def _relative_paths(staged: Path, roots: list[tuple[str, str]]) -> None:
    for path, text in _text_files(staged):
        replaced = text
        for root, stand_in in roots:
            replaced = replaced.replace(root + "/", stand_in + "/" if stand_in else "")
        if replaced != text:
            path.write_text(replaced, encoding="utf-8")


def _check_no_local_paths(staged: Path) -> None:
    for path, text in _text_files(staged):
        if found := ABSOLUTE_PATH.search(text):
            raise NamesakeError(
                f"{path.relative_to(staged)}: names {found.group()}, a path of this machine "
                "that the Space will not have"
            )


# --- the Space's files ----------------------------------------------------------------------


def _check_card(card_file: Path, staged: Path) -> None:
    try:
        card = SpaceCard.load(card_file)
    except (OSError, ValueError) as error:
        raise NamesakeError(f"{card_file}: not a Space card ({error})") from None
    data = card.data
    missing = [
        field for field in ("sdk", "sdk_version", "app_file", "license") if not data.get(field)
    ]
    if missing:
        raise NamesakeError(f"{card_file}: the Space card lacks {', '.join(missing)}")
    if data.sdk != "gradio" or not (staged / data.app_file).is_file():
        raise NamesakeError(
            f"{card_file}: sdk {data.sdk}, app_file {data.app_file}: a Gradio Space runs "
            f"{APP_FILE}, which must be in the staged folder"
        )


def _check_wheel(requirements: Path, wheels: Path) -> None:
    """`requirements` installs namesake from a wheel under `wheels` that is there."""
    lines = requirements.read_text(encoding="utf-8").splitlines()
    named = [match for line in lines if (match := _WHEEL_LINE.match(line.strip()))]
    if not named:
        raise NamesakeError(f"{requirements}: names no ./{WHEELS_DIR}/namesake-*.whl to install")
    wheel = named[0]["wheel"]
    if not (wheels / wheel).is_file():
        built = ", ".join(path.name for path in wheels.glob("*.whl")) or "none"
        raise NamesakeError(
            f"{requirements}: installs ./{WHEELS_DIR}/{wheel}, but the wheel built is {built}: "
            f"update {SPACE_APP_DIR}/{REQUIREMENTS_FILE}"
        )
