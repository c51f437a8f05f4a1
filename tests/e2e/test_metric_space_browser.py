"""The metric Spaces in a real browser: each metric's staged Space, copied outside the
checkout and run as the Hub runs it (``python app.py`` in its folder, with the installed
gradio), and each checkout's ``python metrics/<name>/app.py``, answer one request in
headless Chromium: the page opens holding the card's example, the test sets one more
argument, clicks Compute and reads the result, which must be what evaluate computes.

The staged Space runs with a ``namesake`` on its path that fails to import: on the Hub it
has no namesake, so it must not need one. Nothing is uploaded (no network here)."""

import json
import shutil
from pathlib import Path

import evaluate
import pytest
from app_server import AppServer, headless_chromium
from playwright.sync_api import expect

from namesake.metrics import METRICS
from namesake.publish.metric_space import stage_metric_space
from namesake.publish.metric_widget import card_example

ROOT = Path(__file__).resolve().parents[2]
WAIT_MS = 120_000
#: one argument beyond the card's example, set on the page: it must reach the metric
EXTRA_ARGUMENT = {"entity_confusion": {"k_values": [3]}, "wes_similarity": {"threshold": 0.9}}


@pytest.fixture(scope="module")
def browser():
    with headless_chromium() as chromium:
        yield chromium


def without_namesake(folder: Path) -> dict[str, str]:
    """An environment whose ``import namesake`` fails, as on a Space that has none."""
    blocker = folder / "blocker" / "namesake"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text('raise ImportError("a metric Space has no namesake")\n')
    return {"PYTHONPATH": str(blocker.parent)}


def staged_elsewhere(name: str, folder: Path) -> Path:
    """The staged Space of `name`, copied to a folder outside the checkout."""
    staged = stage_metric_space(name, folder / "staged" / name)
    return Path(shutil.copytree(staged, folder / "elsewhere" / "space"))


def compute_on_page(browser, server: AppServer, name: str) -> dict:
    """Opens the page, sets `EXTRA_ARGUMENT`, clicks Compute and returns the result shown."""
    page = browser.new_page()
    try:
        page.goto(server.url)
        compute = page.locator("#compute")
        compute.wait_for(timeout=WAIT_MS)
        assert page.title() == f"Metric: {name}"
        expect(page.locator("#inputs")).to_contain_text("references", timeout=WAIT_MS)
        page.locator("#options textarea").fill(json.dumps(EXTRA_ARGUMENT[name]))
        compute.click()
        result = page.locator("#result")
        expect(result).to_contain_text('"num_', timeout=WAIT_MS)
        label, *json_lines = result.inner_text().splitlines()
        return json.loads("".join(json_lines))
    finally:
        page.close()


def expected_result(name: str) -> dict:
    folder = ROOT / "metrics" / name
    example = card_example((folder / "README.md").read_text(encoding="utf-8"))
    return evaluate.load(str(folder)).compute(**example | EXTRA_ARGUMENT[name])


def assert_shows(shown: dict, expected: dict) -> None:
    assert shown.keys() == expected.keys()
    for key, value in expected.items():
        assert shown[key] == (value if isinstance(value, str) else pytest.approx(value)), key


@pytest.mark.parametrize("name", METRICS)
def test_the_staged_space_starts_and_answers_without_namesake(name, browser, tmp_path):
    space = staged_elsewhere(name, tmp_path)
    server = AppServer(tmp_path, space / "app.py", env=without_namesake(tmp_path), cwd=space)
    try:
        shown = compute_on_page(browser, server, name)
    finally:
        server.stop()
    assert "Running on local URL:  http://127.0.0.1:" in server.log()
    assert_shows(shown, expected_result(name))


@pytest.mark.parametrize("name", METRICS)
def test_the_checkout_app_starts_and_answers(name, browser, tmp_path):
    server = AppServer(tmp_path, ROOT / "metrics" / name / "app.py")
    try:
        shown = compute_on_page(browser, server, name)
    finally:
        server.stop()
    assert_shows(shown, expected_result(name))
