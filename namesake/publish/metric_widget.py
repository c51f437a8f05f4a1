"""The web page of an `evaluate` metric, for the gradio namesake installs (gradio 6).

evaluate's own page (``evaluate.utils.launch_gradio_widget``) is written for gradio 3: it
builds ``gr.inputs.Dataframe``, which gradio 4 removed, so a metric Space that calls it
crashes as it starts. This page is its gradio 6 counterpart: the metric's features as a
table (one row per example; a text feature is a text cell, a number a number, anything else,
lists and dicts, JSON text), the other keyword arguments of ``compute`` as one JSON object, a
Compute button, the result as JSON, and the metric card beside them. The table starts out
holding the card's own example (`card_example`), so Compute answers at once.

One source, two places: a metric Space sees only its own folder, and has no namesake
installed, so `namesake.publish.metric_space.stage_metric_space` copies this file into the
staged folder as ``metric_widget.py``; the checkout's ``metrics/<name>/app.py`` imports it
from the package when no copy lies beside it. It therefore imports only what a metric Space
has: the standard library, evaluate and gradio (the Space's SDK), the last two when used, so
that staging can read a card's example without loading gradio.
"""

from __future__ import annotations

import ast
import json
import math
import os
import re
from pathlib import Path

FRONT_MATTER = re.compile(r"\A---\r?\n.*?\r?\n---\r?\n", re.DOTALL)
PYTHON_BLOCK = re.compile(r"^```python\r?\n(.*?)^```", re.DOTALL | re.MULTILINE)
#: how the cells of a feature's column are read: as they are, as a number, as JSON text
TEXT, NUMBER, JSON = "text", "number", "json"
_GRADIO_DATATYPES = {TEXT: "str", NUMBER: "number", JSON: "str"}


def card_body(card: str) -> str:
    """The metric card's Markdown without its YAML front matter (the Space's settings)."""
    return FRONT_MATTER.sub("", card, count=1)


def card_example(card: str) -> dict:
    """The keyword arguments of the card's example: the first ``.compute(...)`` call in its
    python blocks, each argument a literal or the name of a literal assigned earlier in that
    block. The card stays the one place the example is written, readable by people, the
    page (it fills the table) and the staging checks (the staged metric must compute it).

    Raises ValueError when no block holds such a call, or an argument is not a literal."""
    for block in PYTHON_BLOCK.findall(card_body(card)):
        tree = ast.parse(block)
        call = next((node for node in ast.walk(tree) if _is_compute_call(node)), None)
        if call is None:
            continue
        literals = _literal_assignments(tree)
        return {keyword.arg: _argument(keyword, literals) for keyword in call.keywords}
    raise ValueError("no python block with a `.compute(...)` call: the card shows no example")


def _is_compute_call(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "compute"
    )


def _literal_assignments(tree: ast.Module) -> dict[str, ast.expr]:
    """``name = value`` statements at the top of a block, by name (the last one wins)."""
    return {
        statement.targets[0].id: statement.value
        for statement in tree.body
        if isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
    }


def _argument(keyword: ast.keyword, literals: dict[str, ast.expr]):
    value = keyword.value
    if isinstance(value, ast.Name) and value.id in literals:
        value = literals[value.id]
    try:
        return ast.literal_eval(value)
    except ValueError:
        raise ValueError(
            f"the example's argument {keyword.arg}= is not a literal: {ast.unparse(value)}"
        ) from None


def feature_columns(metric) -> dict[str, str]:
    """Each feature of `metric` (its first set of features, where it accepts several, as
    evaluate's own page does) and how its cells are read: `TEXT`, `NUMBER` or `JSON`."""
    features = metric.features[0] if isinstance(metric.features, list) else metric.features
    return {name: _cell_kind(feature) for name, feature in features.items()}


def _cell_kind(feature) -> str:
    import datasets

    if not isinstance(feature, datasets.Value):
        return JSON
    if feature.dtype == "string":
        return TEXT
    return NUMBER if feature.dtype.startswith(("int", "uint", "float")) else JSON


def example_inputs(example: dict, columns: dict[str, str]) -> tuple[list[list], str]:
    """The card's example as the page shows it: the rows of the table and the other
    keyword arguments as a JSON object."""
    features = [example.get(name, []) for name in columns]
    rows = [
        [_cell(value, kind) for value, kind in zip(values, columns.values(), strict=True)]
        for values in zip(*features, strict=True)
    ]
    options = {name: value for name, value in example.items() if name not in columns}
    return rows, json.dumps(options)


def _cell(value, kind: str):
    return json.dumps(value, ensure_ascii=False) if kind == JSON else value


def read_inputs(rows: list[list], options: str, columns: dict[str, str]) -> dict:
    """The keyword arguments of ``compute`` from the page: one list per feature, a row per
    example (rows left wholly empty are ignored), and the JSON object of other arguments.
    Raises ValueError naming the row and the column of a cell that cannot be read."""
    inputs = {name: [] for name in columns}
    for number, row in enumerate(rows, start=1):
        if all(_is_empty(cell) for cell in row):
            continue
        for name, kind, cell in zip(columns, columns.values(), row, strict=True):
            inputs[name].append(_read_cell(cell, kind, f"row {number}, column {name}"))
    extra = json.loads(options) if options.strip() else {}
    if not isinstance(extra, dict):
        raise ValueError('the other arguments must be a JSON object, e.g. {"k_values": [1, 5]}')
    return inputs | extra


def _is_empty(cell) -> bool:
    return cell is None or cell == "" or (isinstance(cell, float) and math.isnan(cell))


def _read_cell(cell, kind: str, where: str):
    if _is_empty(cell):
        raise ValueError(f"{where}: empty (fill it, or empty the whole row)")
    if kind == TEXT:
        return str(cell)
    try:
        if kind == NUMBER:
            return cell if isinstance(cell, (int, float)) else float(cell)
        return json.loads(cell)
    except (TypeError, ValueError) as error:
        expected = "a number" if kind == NUMBER else 'JSON, e.g. ["an id", "another"]'
        raise ValueError(f"{where}: not {expected} ({error})") from None


def json_safe(value):
    """`value` as JSON can show it: NaN and infinities (a score over no example) as the
    strings "nan", "inf", "-inf" instead of null, numpy scalars as Python numbers."""
    if isinstance(value, dict):
        return {str(key): json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(item) for item in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()  # numpy scalars
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def build_widget(metric, card: str):
    """The page of `metric` (an evaluate module) with its card (README.md's text)."""
    import gradio as gr

    columns = feature_columns(metric)
    rows, options = example_inputs(card_example(card), columns)

    def compute(table: list[list], other_arguments: str) -> dict:
        try:
            return json_safe(metric.compute(**read_inputs(table, other_arguments, columns)))
        except (ValueError, TypeError) as error:  # the metric's own messages, on the page
            raise gr.Error(str(error)) from None

    with gr.Blocks(title=f"Metric: {metric.name}") as page:
        gr.Markdown(f"# Metric: {metric.name}")
        with gr.Row():
            with gr.Column():
                table = gr.Dataframe(
                    value=rows,
                    headers=list(columns),
                    datatype=[_GRADIO_DATATYPES[kind] for kind in columns.values()],
                    column_count=len(columns),
                    type="array",
                    interactive=True,
                    label='One example per row; a list or dict as JSON, e.g. ["307", "51"]',
                    elem_id="inputs",
                )
                other_arguments = gr.Textbox(
                    value=options, label="Other arguments (a JSON object)", elem_id="options"
                )
                button = gr.Button("Compute", variant="primary", elem_id="compute")
                result = gr.JSON(label="Result", elem_id="result")
            with gr.Column():
                gr.Markdown(card_body(card), elem_id="card")
        button.click(compute, [table, other_arguments], result)
    return page


def launch(script: str | os.PathLike) -> None:
    """Serves the page of the evaluate metric `script` (its card is the README.md beside it)
    where gradio reads it should: ``$GRADIO_SERVER_NAME`` (a Space sets 0.0.0.0; else
    127.0.0.1, this machine only) and ``$GRADIO_SERVER_PORT`` (else 7860). Never shared."""
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")  # no network calls of our own
    import evaluate
    import gradio as gr

    script = Path(script)
    card = (script.parent / "README.md").read_text(encoding="utf-8")
    page = build_widget(evaluate.load(str(script)), card)
    # System fonts: the default theme would fetch its fonts from Google.
    theme = gr.themes.Default(font=["system-ui", "sans-serif"], font_mono=["monospace"])
    page.launch(share=False, theme=theme)
