"""The Space's README header is what the Hub reads to build the Space."""

from pathlib import Path

import gradio
from huggingface_hub import SpaceCard

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


def test_space_requirements_install_namesake_with_the_space_extra():
    lines = (SPACE / "requirements.txt").read_text().splitlines()
    requirements = [line for line in lines if line.strip() and not line.startswith("#")]
    assert requirements == ["namesake[space]"]
    setup = (SPACE.parent / "setup.cfg").read_text()
    assert f"space =\n    gradio=={gradio.__version__}\n" in setup
