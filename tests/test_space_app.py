"""space_app/app.py without a browser: its defaults (local only, never shared), how it turns
failures into page messages, and that the page builds with and without artifacts."""

import logging
from pathlib import Path

import gradio as gr
import pytest
from conftest import load_module

from namesake.space.explorer import SpaceInputError

APP = Path(__file__).resolve().parents[1] / "space_app" / "app.py"


@pytest.fixture(scope="module")
def app():
    return load_module(APP, "space_app_under_test")


def test_defaults_serve_this_machine_only_and_never_share(app, monkeypatch):
    for name in ("GRADIO_SERVER_NAME", "GRADIO_SERVER_PORT", "NAMESAKE_ARTIFACTS"):
        monkeypatch.delenv(name, raising=False)
    args = app.parse_args([])
    assert args.host == "127.0.0.1" and args.port == 7860
    assert args.share is False
    assert (args.concurrency_limit, args.max_queue) == (1, 64)  # sized by the load benchmark
    assert args.artifacts == "demo_output"
    assert args.corpus and Path(args.corpus).name == "kilt_knowledgesource-sample.json"


def test_a_staged_space_reads_the_artifacts_beside_its_app(tmp_path, monkeypatch):
    """As `namesake publish space` lays it out: app.py with artifacts/ beside it, run from
    anywhere; a checkout's app.py has none there and keeps demo_output."""
    monkeypatch.delenv("NAMESAKE_ARTIFACTS", raising=False)
    (tmp_path / "artifacts").mkdir()
    staged_app = tmp_path / "app.py"
    staged_app.write_text(APP.read_text())
    args = load_module(staged_app, "staged_space_app").parse_args([])
    assert args.artifacts == str(tmp_path.resolve() / "artifacts")
    monkeypatch.setenv("NAMESAKE_ARTIFACTS", "/data/artifacts")  # a Space variable still wins
    assert load_module(staged_app, "staged_space_app").parse_args([]).artifacts == (
        "/data/artifacts"
    )


def test_environment_variables_configure_a_hosted_space(app, monkeypatch):
    monkeypatch.setenv("GRADIO_SERVER_NAME", "0.0.0.0")
    monkeypatch.setenv("NAMESAKE_ARTIFACTS", "/data/artifacts")
    args = app.parse_args(["--port", "9000"])
    assert (args.host, args.port, args.artifacts) == ("0.0.0.0", 9000, "/data/artifacts")


def test_guarded_turns_bad_input_into_a_message_and_keeps_other_outputs(app):
    @app.guarded("", None)
    def handler(text):
        raise SpaceInputError(f"No AmbER set is named {text!r}.")

    notice, cleared, state = handler("<b>Zed</b>")
    assert "ns-error" in notice and "No AmbER set is named &#x27;&lt;b&gt;Zed" in notice
    assert (cleared, state) == ("", None)


def test_guarded_logs_unexpected_errors_and_shows_no_trace(app, caplog):
    @app.guarded(gr.skip())
    def broken():
        raise RuntimeError("secret internals")

    with caplog.at_level(logging.ERROR, logger="namesake.space"):
        notice, kept = broken()
    assert "Something went wrong on the server" in notice
    assert "secret internals" not in notice and "Traceback" not in notice
    assert "broken failed" in caplog.text and "secret internals" in caplog.text
    assert kept == gr.skip()


def test_guarded_passes_results_through(app):
    assert app.guarded("")(lambda: ("ok", "view"))() == ("ok", "view")


def test_the_page_builds_without_artifacts(app):
    demo = app.build_demo(None, "No artifacts folder at /nowhere")
    assert isinstance(demo, gr.Blocks)
    html = [block.value for block in demo.blocks.values() if isinstance(block, gr.HTML)]
    assert any("No artifacts folder at /nowhere" in (value or "") for value in html)
