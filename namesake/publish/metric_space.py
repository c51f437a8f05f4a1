"""A bundled metric as a Hugging Face Space in evaluate's layout, staged and checked before
any upload (``namesake publish metric NAME``).

The staged folder is the metric's own folder (its script, the modules beside it, the card,
requirements.txt and app.py) plus the page's code, `namesake.publish.metric_widget`, copied
in as ``metric_widget.py``: a Space sees only its folder. Its card declares the gradio that
namesake installs as ``sdk_version``, the gradio its page was tested with. Before the folder
counts as staged, the card must parse as the Hub reads it (`huggingface_hub.SpaceCard`) with
the fields a metric Space needs, and evaluate must load the staged metric and compute the
card's example: an upload never sends a Space that cannot start or a metric that cannot run.

``evaluate.load("OWNER/NAME")`` reads ``NAME.py`` from the Space, so a metric is loadable
from the Hub only from a repository named as its script (``OWNER/entity_confusion``).
"""

from __future__ import annotations

import importlib.metadata
import re
import shutil
from pathlib import Path

import evaluate
import yaml
from huggingface_hub import SpaceCard

from namesake.errors import BadInputError, NamesakeError
from namesake.metrics import METRICS, metric_path
from namesake.outputs import atomic_directory
from namesake.publish import metric_widget
from namesake.publish.staging import copy_publishable

WRITER = "publish metric"
WIDGET_FILE = "metric_widget.py"
APP_FILE = "app.py"
METRIC_TAGS = ("evaluate", "metric")
_SDK_VERSION_LINE = re.compile(r"^sdk_version:.*$", re.MULTILINE)


def stage_metric_space(name: str, out: Path) -> Path:
    """Writes the Space of the bundled metric `name` (one of `namesake.metrics.METRICS`)
    into the folder `out`, whole or not at all, once it passes the checks; returns `out`."""
    if name not in METRICS:
        raise NamesakeError(f"no metric {name!r}: the bundled metrics are {', '.join(METRICS)}")
    source = metric_path(name)
    sdk_version = installed_gradio_version()
    with atomic_directory(out, writer=WRITER) as staged:
        copy_publishable(source, staged)  # caches and hidden files are no part of the Space
        shutil.copyfile(metric_widget.__file__, staged / WIDGET_FILE)
        card = staged / "README.md"
        card.write_text(
            _SDK_VERSION_LINE.sub(
                f"sdk_version: {sdk_version}", card.read_text(encoding="utf-8"), 1
            ),
            encoding="utf-8",
        )
        _check_card(staged, source / "README.md", sdk_version)
        _check_example(staged, name, origin=source / "README.md")
    return Path(out)


def check_metric_repo_id(name: str, repo_id: str | None) -> None:
    """A metric Space must be named after its script: ``evaluate.load("OWNER/NAME")`` loads
    ``NAME.py`` from the repo, so another name would publish a metric nobody can load."""
    if repo_id is not None and repo_id.rpartition("/")[2] != name:
        owner = repo_id.rpartition("/")[0] or "OWNER"
        raise NamesakeError(
            f"--repo-id {repo_id}: a metric Space is loaded by evaluate.load('OWNER/NAME'), "
            f"which reads NAME.py: name it after the metric's script, {owner}/{name}"
        )


def installed_gradio_version() -> str:
    """The version of the gradio installed here: the one a metric Space declares."""
    try:
        return importlib.metadata.version("gradio")
    except importlib.metadata.PackageNotFoundError:
        raise NamesakeError(
            "gradio is not installed: a metric Space declares the gradio its page was tested "
            "with; install namesake's `space` extra (pip install 'namesake[space]')"
        ) from None


def _check_card(staged: Path, origin: Path, sdk_version: str) -> None:
    """The staged card's front matter as the Hub reads it; problems name `origin`, the card
    the user edits."""
    try:
        card = SpaceCard.load(staged / "README.md")
    except (ValueError, yaml.YAMLError) as error:
        raise BadInputError(origin, None, f"the front matter is not valid YAML: {error}") from None
    expected = {"sdk": "gradio", "sdk_version": sdk_version, "app_file": APP_FILE}
    for field, value in expected.items():
        found = getattr(card.data, field, None)
        if found != value:
            raise BadInputError(origin, None, f"{field} is {found!r}, not {value!r}")
    missing = [tag for tag in METRIC_TAGS if tag not in (card.data.tags or [])]
    if missing:
        raise BadInputError(
            origin, None, f"tags lack {', '.join(missing)} (a metric Space has both)"
        )
    for required in (APP_FILE, "requirements.txt"):
        if not (staged / required).is_file():
            raise NamesakeError(f"{origin.parent}: no {required} (a metric Space needs one)")


def _check_example(staged: Path, name: str, origin: Path) -> None:
    """evaluate loads the staged metric, as a Space or ``evaluate.load`` would, and computes
    its card's example; problems name `origin`, the card the user edits."""
    try:
        example = metric_widget.card_example((staged / "README.md").read_text(encoding="utf-8"))
    except (SyntaxError, ValueError) as error:
        raise BadInputError(origin, None, f"the card's example: {error}") from None
    try:
        result = evaluate.load(str(staged / f"{name}.py")).compute(**example)
    except Exception as error:  # whatever a broken copy raises: a missing module, a bad input
        raise NamesakeError(
            f"{origin}: the staged {name} fails on the card's example: "
            f"{type(error).__name__}: {error}"
        ) from None
    if not result:
        raise NamesakeError(f"{origin}: the staged {name} returns nothing for the card's example")
