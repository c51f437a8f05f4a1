"""namesake reads the metrics' code in one place: `namesake.metrics.metric_module` loads a
metric's script (as a package over its folder, as evaluate does), and namesake's WES code goes
through `namesake.wes.scoring.metric_code`. Nothing else imports a metric by path."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("namesake", "training", "tests", "benchmarks", "dataset_scripts", "space_app")
LOADER = ROOT / "namesake" / "metrics.py"
WES_FACADE = ROOT / "namesake" / "wes" / "scoring" / "metric_code.py"
# loading a file by path: importlib's spec, or the tests' helper for scripts
BY_PATH = re.compile(r"spec_from_file_location|\bload_module\(")
METRIC_PATH = re.compile(r"metrics[/\"' ]|MODULE_DIR|metric_path")


def _python_files():
    for folder in SOURCES:
        yield from (ROOT / folder).rglob("*.py")


def test_no_metric_is_imported_by_path_outside_the_loader():
    offenders = []
    for path in _python_files():
        if path == LOADER or path == Path(__file__):
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if BY_PATH.search(line) and METRIC_PATH.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert offenders == []


def test_namesake_reaches_the_wes_metric_only_through_its_facade():
    offenders = [
        str(path.relative_to(ROOT))
        for path in (ROOT / "namesake").rglob("*.py")
        if path not in (LOADER, WES_FACADE) and "metric_module(" in path.read_text()
    ]
    assert offenders == []


def test_the_check_would_catch_a_load_by_path():
    line = 'module = load_module(MODULE_DIR / "wes_similarity.py", "bare")'
    assert BY_PATH.search(line) and METRIC_PATH.search(line)
    line = 'spec = importlib.util.spec_from_file_location("w", "metrics/wes_similarity/x.py")'
    assert BY_PATH.search(line) and METRIC_PATH.search(line)
