"""The Space's README header is what the Hub reads to build the Space."""

from pathlib import Path

import gradio
from huggingface_hub import SpaceCard

import namesake

SPACE = Path(__file__).resolve().parents[1] / "space_app"


def test_space_readme_has_a_valid_gradio_header():
    card = SpaceCard.load(SPACE / "README.md")
    assert card.data.sdk == "gradio"
    assert card.data.app_file == "app.py" and (SPACE / card.data.app_file).is_file()
    # The Space runs the gradio the tests ran (setup.cfg pins it for the `space` extra).
    assert card.data.sdk_version == gradio.__version__
    assert len(card.data.short_description) <= 60  # the Hub's limit
    assert card.data.license == "apache-2.0"
    assert "Ambiguous search" in card.text and "python space_app/app.py" in card.text


def test_space_requirements_install_this_namesake_with_the_space_extra():
    # The wheel `make space-bundle` builds, never PyPI's `namesake` (another project); its
    # version is this package's. tests/test_install.py installs the line, offline.
    lines = (SPACE / "requirements.txt").read_text().splitlines()
    requirements = [line for line in lines if line.strip() and not line.startswith("#")]
    wheel = f"namesake-{namesake.__version__}-py3-none-any.whl"
    assert requirements == [f"./wheels/{wheel}[space]"]
    assert f"/resolve/main/wheels/{wheel}" in (SPACE / "README.md").read_text()  # Deploy
    assert "space_app/wheels/" in (SPACE.parent / ".gitignore").read_text().splitlines()
    makefile = (SPACE.parent / "Makefile").read_text()
    assert "SPACE_WHEELS ?= space_app/wheels\nspace-bundle:" in makefile
    setup = (SPACE.parent / "setup.cfg").read_text()
    assert f"space =\n    gradio=={gradio.__version__}\n" in setup
