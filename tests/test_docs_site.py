"""The documentation site builds: ``mkdocs build --strict`` (every warning an error: a broken
link, a page missing from the nav, a docstring mkdocstrings cannot read), offline, as
``make docs`` builds it. This test is how ``make test`` builds the site, once."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from docs_pages import REPO, namesake_commands

MKDOCS = Path(sys.prefix) / "bin" / "mkdocs"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> tuple[Path, float]:
    """The site built into a temporary folder, and the build's seconds."""
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", NO_MKDOCS_2_WARNING="1")
    start = time.perf_counter()
    result = subprocess.run(
        [str(MKDOCS), "build", "--strict", "--config-file", str(REPO / "mkdocs.yml")]
        + ["--site-dir", str(out)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    seconds = time.perf_counter() - start
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stderr[-6000:]}"
    return out, seconds


def test_the_site_builds_strict_and_offline(site):
    out, seconds = site
    assert (out / "index.html").is_file()
    pages = list(out.rglob("*.html"))
    # theme fonts are off (font: false): no page asks Google Fonts for anything
    assert not [page for page in pages if "fonts.googleapis" in page.read_text(encoding="utf-8")]
    assert not (out / "hooks").exists()  # the hook is code, not a page
    # issue 52: under a minute (about 6 s on 2 cores in November 2026); the margin is wide
    assert seconds < 60, f"mkdocs build --strict took {seconds:.0f} s"


def test_the_cli_reference_is_generated_for_every_command(site):
    out, _ = site
    page = (out / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    assert "<!-- namesake-cli -->" not in page
    missing = [
        " ".join(("namesake", *path))
        for path in namesake_commands()
        if f'id="{"-".join(("namesake", *path))}"' not in page
    ]
    assert not missing, f"commands without a section in the CLI reference: {missing}"
    assert "usage: namesake compare-runs" in page


def test_the_api_reference_documents_the_public_names(site):
    import namesake

    out, _ = site
    page = (out / "reference" / "api" / "index.html").read_text(encoding="utf-8")
    missing = [
        name for name in namesake.__all__ if f'id="{namesake._API[name]}.{name}"' not in page
    ]
    assert not missing, f"public names missing from docs/reference/api.md: {missing}"


def test_the_cli_hook_renders_a_parser_as_argparse_has_it():
    import argparse

    from conftest import load_module

    hook = load_module(REPO / "docs" / "hooks" / "cli_reference.py", "cli_reference_hook")
    parser = argparse.ArgumentParser(prog="tool", description="Does *things* to <files>.")
    groups = parser.add_subparsers(dest="command", required=True)
    run = groups.add_parser("run", help="run it on `PATH` files", description="Runs, 100%% sure.")
    run.add_argument("path", help="a <file>")
    run.add_argument("--top-k", type=int, default=10, help="how many | of them")
    run.add_argument("--mode", choices=["a", "b"], metavar="MODE", required=True)
    text = hook.render(parser)
    assert "## tool { #tool }" in text
    assert "Does \\*things\\* to &lt;files&gt;." in text  # literal, not emphasis or HTML
    assert "| [`tool run`](#tool-run) | run it on `PATH` files |" in text
    assert "### tool run { #tool-run }" in text and "Runs, 100% sure." in text
    assert "usage: tool run [-h] [--top-k TOP_K] --mode MODE path" in text
    assert "| `path` | a &lt;file&gt; |" in text
    assert "| `--top-k TOP_K` | how many \\| of them (default: `10`) |" in text
    assert "| `--mode MODE` | Required; one of `a`, `b` |" in text
    markdown = f"# CLI\n\n{hook.PLACEHOLDER}\n"
    assert hook.on_page_markdown(markdown, None, None, None).startswith("# CLI\n\n## namesake")
