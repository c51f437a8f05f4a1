"""The metrics as Hugging Face Spaces (`namesake.publish.metric_space`): the staged folder,
its card as the Hub reads it, the staged metric computing the card's example as the
checkout's does, the checks that refuse a broken Space, and the page's reading of its table
(`namesake.publish.metric_widget`). Nothing is uploaded here: uploading is the publish
command's, tested with a recorder in place of the Hub. The pages in a browser:
tests/e2e/test_metric_space_browser.py."""

import contextlib
import importlib.metadata
import io
import json
import re
import shutil
from pathlib import Path

import evaluate
import gradio
import pytest
from huggingface_hub import SpaceCard

import namesake.publish.metric_space as metric_space
from namesake.errors import BadInputError, NamesakeError
from namesake.metrics import METRICS, metric_path
from namesake.outputs import MARKER
from namesake.publish import metric_widget
from namesake.publish.metric_space import stage_metric_space

ROOT = Path(__file__).resolve().parents[1]


def card_text(folder: Path) -> str:
    return (folder / "README.md").read_text(encoding="utf-8")


@pytest.fixture(scope="module", params=METRICS)
def staged(request, tmp_path_factory):
    """(name, the staged folder), staged once per metric; the folder is named after the
    metric, as ``evaluate.load(folder)`` wants."""
    name = request.param
    return name, stage_metric_space(name, tmp_path_factory.mktemp("staged") / name)


@pytest.mark.parametrize("name", METRICS)
def test_the_checkout_cards_declare_the_installed_gradio(name):
    # The staged card takes sdk_version from the installed gradio; the checkout's card must
    # say the same, or the two drift apart (setup.cfg's `space` extra pins gradio).
    card = SpaceCard.load(ROOT / "metrics" / name / "README.md")
    assert card.data.sdk == "gradio" and card.data.sdk_version == gradio.__version__
    assert card.data.app_file == "app.py" and {"evaluate", "metric"} <= set(card.data.tags)


def test_the_staged_tree_is_the_metric_folder_and_the_page(staged):
    name, folder = staged
    source = metric_path(name)
    expected = {path.name for path in source.iterdir() if path.name != "__pycache__"}
    assert {"app.py", f"{name}.py", "README.md", "requirements.txt"} <= expected
    staged_files = {path.name for path in folder.iterdir()}
    assert staged_files == expected | {"metric_widget.py", MARKER}
    assert (folder / "metric_widget.py").read_bytes() == Path(metric_widget.__file__).read_bytes()
    for file in expected - {"README.md"}:
        assert (folder / file).read_bytes() == (source / file).read_bytes(), file
    requirements = (folder / "requirements.txt").read_text().splitlines()
    assert "evaluate>=0.4.0" in requirements and not any(
        line.startswith("gradio") for line in requirements
    )


def test_the_staged_card_is_the_checkouts_with_the_installed_gradio(staged):
    name, folder = staged
    card = SpaceCard.load(folder / "README.md")
    assert (card.data.sdk, card.data.sdk_version) == ("gradio", gradio.__version__)
    assert card.data.app_file == "app.py" and {"evaluate", "metric"} <= set(card.data.tags)
    assert card_text(folder) == card_text(metric_path(name))


def test_the_staged_metric_computes_the_cards_example_as_the_checkout_does(staged):
    name, folder = staged
    example = metric_widget.card_example(card_text(folder))
    assert len(example["predictions"]) == len(example["references"]) >= 4
    from_staged = evaluate.load(str(folder)).compute(**example)
    from_checkout = evaluate.load(str(ROOT / "metrics" / name)).compute(**example)
    assert from_staged == from_checkout and from_staged


@pytest.mark.parametrize("name", METRICS)
def test_the_cards_example_prints_what_the_card_says(name, monkeypatch):
    """The example the page and the staging checks read is the card's own, and run as
    written (from the repository root) it prints the figures the card shows."""
    text = card_text(ROOT / "metrics" / name)
    block = metric_widget.PYTHON_BLOCK.findall(metric_widget.card_body(text))[0]
    printed = re.search(r"\nprints\n\n```\n(.*?)```", text, re.DOTALL)[1]
    monkeypatch.chdir(ROOT)
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        exec(block, {})
    assert output.getvalue() == printed


def test_card_example_reads_literals_and_names_of_literals():
    card = """---
sdk: gradio
---
Text.

```python
import evaluate

refs = [["a"], ["b"]]  # a comment
metric = evaluate.load("x")
metric.compute(predictions=["a", "c"], references=refs, k_values=[1, 2])
```
"""
    assert metric_widget.card_example(card) == {
        "predictions": ["a", "c"],
        "references": [["a"], ["b"]],
        "k_values": [1, 2],
    }
    with pytest.raises(ValueError, match=r"no python block with a `\.compute\(\.\.\.\)` call"):
        metric_widget.card_example("# A card\n\n```python\nprint(1)\n```\n")
    with pytest.raises(ValueError, match=r"references= is not a literal: load_references\(\)"):
        metric_widget.card_example(
            "```python\nm.compute(predictions=[], references=load_references())\n```\n"
        )


def test_unknown_metric_and_missing_gradio_are_one_line(tmp_path, monkeypatch):
    with pytest.raises(NamesakeError, match=r"no metric 'bleu': the bundled metrics are entity_"):
        stage_metric_space("bleu", tmp_path / "out")

    def not_installed(package):
        raise importlib.metadata.PackageNotFoundError(package)

    monkeypatch.setattr(metric_space.importlib.metadata, "version", not_installed)
    with pytest.raises(NamesakeError, match=r"gradio is not installed: .*namesake\[space\]"):
        stage_metric_space("entity_confusion", tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.fixture
def metric_copy(tmp_path, monkeypatch):
    """A copy of entity_confusion's folder that the staging reads instead of the bundled
    one, with the caches and hidden files a working folder gathers."""
    copy = tmp_path / "source" / "entity_confusion"
    shutil.copytree(metric_path("entity_confusion"), copy)
    (copy / "__pycache__").mkdir()
    (copy / "__pycache__" / "entity_confusion.cpython-311.pyc").write_bytes(b"\0")
    (copy / ".cache").mkdir()
    (copy / ".README.md.swp").write_bytes(b"\0")
    monkeypatch.setattr(metric_space, "metric_path", lambda name: copy)
    return copy


def test_caches_and_hidden_files_are_not_staged(metric_copy, tmp_path):
    out = stage_metric_space("entity_confusion", tmp_path / "entity_confusion")
    staged = {path.name for path in out.iterdir()}
    assert staged == {path.name for path in metric_copy.iterdir()} - {
        "__pycache__",
        ".cache",
        ".README.md.swp",
    } | {"metric_widget.py", MARKER}


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("sdk: gradio", "sdk: streamlit", r"README.md: sdk is 'streamlit', not 'gradio'"),
        ("app_file: app.py", "app_file: main.py", r"app_file is 'main.py', not 'app.py'"),
        ("- metric\n", "", r"README.md: tags lack metric \(a metric Space has both\)"),
        ("title: Entity", "title: [Entity", r"README.md: the front matter is not valid YAML"),
    ],
)
def test_a_card_the_hub_would_misread_is_refused(metric_copy, tmp_path, old, new, message):
    card = metric_copy / "README.md"
    card.write_text(card.read_text().replace(old, new, 1))
    with pytest.raises(BadInputError, match=message) as error:
        stage_metric_space("entity_confusion", tmp_path / "out")
    assert error.value.path == str(card)
    assert not (tmp_path / "out").exists()  # nothing staged, nothing left half-written
    assert not list(tmp_path.glob(".out.partial-*"))


def test_a_metric_that_fails_on_the_cards_example_is_refused(metric_copy, tmp_path):
    card = metric_copy / "README.md"
    # one ranking too many: the metric refuses predictions and references of other lengths
    card.write_text(card.read_text().replace('    ["91", "5120"],', '    ["91"], ["5120"],'))
    with pytest.raises(NamesakeError, match=r"README.md: the staged entity_confusion fails on"):
        stage_metric_space("entity_confusion", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_the_page_reads_its_table_back_into_the_example(staged):
    name, folder = staged
    metric = evaluate.load(str(folder))
    columns = metric_widget.feature_columns(metric)
    assert list(columns) == ["predictions", "references"]
    example = metric_widget.card_example(card_text(folder))
    rows, options = metric_widget.example_inputs(example, columns)
    assert len(rows) == len(example["predictions"])
    rows.append(["", ""])  # a row added on the page and left empty
    assert metric_widget.read_inputs(rows, options, columns) == example


def test_the_page_names_the_cell_it_cannot_read():
    columns = {"predictions": metric_widget.TEXT, "references": metric_widget.JSON}
    rows = [["Paris", '["Paris"]'], ["NYC", "New York City"]]
    with pytest.raises(ValueError, match=r"^row 2, column references: not JSON, e\.g\."):
        metric_widget.read_inputs(rows, "{}", columns)
    with pytest.raises(ValueError, match=r"^row 1, column references: empty \(fill it"):
        metric_widget.read_inputs([["Paris", None]], "{}", columns)
    with pytest.raises(ValueError, match=r"other arguments must be a JSON object"):
        metric_widget.read_inputs([["Paris", '["Paris"]']], "[1]", columns)


def test_results_show_as_json_with_nan_said():
    result = {"accuracy@1_head": float("nan"), "scores": (0.5, float("inf")), "n": 2}
    shown = metric_widget.json_safe(result)
    assert shown == {"accuracy@1_head": "nan", "scores": [0.5, "inf"], "n": 2}
    assert json.loads(json.dumps(shown, allow_nan=False)) == shown


def test_the_page_builds_with_the_installed_gradio(staged):
    name, folder = staged
    page = metric_widget.build_widget(evaluate.load(str(folder)), card_text(folder))
    components = {block.elem_id: block for block in page.blocks.values() if block.elem_id}
    assert isinstance(components["inputs"], gradio.Dataframe)
    assert components["inputs"].headers == ["predictions", "references"]
    assert isinstance(components["result"], gradio.JSON)
    assert "# Metric Card for" in components["card"].value and "sdk_version" not in (
        components["card"].value
    )
