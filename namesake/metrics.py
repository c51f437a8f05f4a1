"""Loading this repository's `evaluate` modules (``metrics/<name>/``) by path, offline."""

from __future__ import annotations

import os
from pathlib import Path

import evaluate

from namesake.io import NamesakeError

METRICS_DIR = Path(__file__).resolve().parents[1] / "metrics"


def load_metric(name: str, path: str | os.PathLike | None = None):
    """The module ``name`` from ``path``, else from the checkout's ``metrics/<name>/``."""
    location = Path(path) if path else METRICS_DIR / name
    if not (location / f"{name}.py").is_file():
        raise NamesakeError(f"{location}: no {name}.py (pass --metric PATH)")
    return evaluate.load(str(location))
