"""namesake's `evaluate` modules, by path, offline: from a checkout or an installed package.

The modules' source is ``metrics/<name>/`` in the repository; the package ships the same
folders as package data (``namesake/data/metrics/<name>/``), so ``metric_path(name)`` works
after ``pip install`` as well as in a checkout::

    import evaluate
    from namesake.metrics import metric_path

    evaluate.load(str(metric_path("entity_confusion")))
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
from pathlib import Path

import evaluate

from namesake.data import METRICS_DIR
from namesake.errors import NamesakeError

METRICS = ("entity_confusion", "wes_similarity")


def metric_path(name: str) -> Path:
    """The folder of the bundled evaluate module ``name`` (its script, card, requirements)."""
    location = METRICS_DIR / name
    if not (location / f"{name}.py").is_file():
        known = ", ".join(METRICS)
        raise NamesakeError(f"{location}: no {name}.py (the bundled metrics are {known})")
    return location


def load_metric(name: str, path: str | os.PathLike | None = None):
    """The evaluate module ``name`` from the folder ``path``, else the bundled one."""
    if path is None:
        location = metric_path(name)
    else:
        location = Path(path)
        if not (location / f"{name}.py").is_file():
            raise NamesakeError(f"{location}: no {name}.py (pass --metric PATH)")
    return evaluate.load(str(location))


@functools.cache
def metric_module(name: str):
    """The bundled evaluate module ``name``'s script, imported as a plain Python module: its
    constants and functions (the WES scorers, their features) without evaluate's loader.

    The only place namesake imports a metric's code (a test checks it). The script is
    imported as a package over its folder, as `evaluate.load` imports it, so that the
    modules beside it (``from .scorers import ...``) import too; they are its attributes
    (``metric_module("wes_similarity").span_encoder``)."""
    folder = metric_path(name)
    package = f"namesake_metric_{name}"
    spec = importlib.util.spec_from_file_location(
        package, folder / f"{name}.py", submodule_search_locations=[str(folder)]
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[package] = module  # where its relative imports look for their package
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[package]
        raise
    return module
