"""Without Chromium the suite stops at once with one line naming it: the browser tests are
never skipped silently, and do not fail one by one with tracebacks."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MISSING = "/nonexistent/chromium"


def pytest_without_chromium(*paths: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *paths],
        cwd=ROOT,
        env={**os.environ, "NAMESAKE_CHROMIUM": MISSING},
        capture_output=True,
        text=True,
    )


def test_pytest_stops_before_any_browser_test_without_chromium():
    done = pytest_without_chromium("tests/e2e")
    assert done.returncode == 4, done.stdout + done.stderr
    assert f"Chromium not found at {MISSING}" in done.stdout
    assert "no tests ran" in done.stdout and "Traceback" not in done.stdout + done.stderr


def test_other_tests_run_without_chromium():
    done = pytest_without_chromium("tests/test_startup.py")
    assert done.returncode == 0 and " passed" in done.stdout, done.stdout


def test_make_test_stops_with_one_line_without_chromium():
    done = subprocess.run(
        ["make", "--no-print-directory", "test", f"CHROMIUM={MISSING}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0
    assert done.stdout.strip().splitlines() == [
        f"make test: Chromium not found at {MISSING}: the Space's browser tests need it. "
        "Run: sudo apt-get install chromium (or pass CHROMIUM=/path/to/chromium)"
    ]
