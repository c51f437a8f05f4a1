"""The AmbER paper's figures as package data (namesake/data/amber_paper/tables.json) and the
"paper" cells that `namesake evaluate` and `namesake amber compare` print beside ours.

The bundled file transcribes no figure yet (the readable copies of the paper stop at page 1:
see its README), so tests that need a figure beside ours read a synthetic tables file, built
here and marked as such, through the same loader."""

import copy
import json
import re

import pytest
from conftest import SAMPLE_KILT

import namesake.amber.paper as paper
import namesake.amber.report as report
from namesake.amber.paper import (
    KIND_SYSTEMS,
    NOT_IN_PAPER,
    NOT_TRANSCRIBED,
    PAPER_TABLES,
    UNKNOWN_RETRIEVER,
    paper_figure,
    read_paper_tables,
    system_for,
)
from namesake.amber.report import results_table
from namesake.cli import main
from namesake.io import BadInputError

PAPER_TABLE_NUMBERS = {5, 6, 7, 9}
FIGURE_FIELDS = ("table", "page", "caption", "collection", "task", "system", "measure", "value")
# Not the paper's: a made-up figure to see one printed beside ours.
SYNTHETIC = {
    "table": 5,
    "page": 6,
    "caption": "synthetic test figure, not from the paper",
    "collection": "AmbER-H",
    "task": "QA",
    "system": "DPR",
    "measure": "accuracy@1",
    "value": 12.3,
}


def bundled() -> dict:
    return json.loads(PAPER_TABLES.read_text(encoding="utf-8"))


def write_tables(path, data):
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.fixture
def synthetic_tables(tmp_path, monkeypatch):
    """The bundled file plus the SYNTHETIC figure (and a BLINK one), used everywhere."""
    data = bundled()
    blink = {
        **SYNTHETIC,
        "table": 6,
        "system": "BLINK",
        "measure": "entity_confusion",
        "value": 45.6,
    }
    data["figures"] += [SYNTHETIC, blink]
    tables = read_paper_tables(write_tables(tmp_path / "tables.json", data))
    monkeypatch.setattr(paper, "paper_tables", lambda: tables)
    monkeypatch.setattr(report, "paper_tables", lambda: tables)
    return tables


def test_bundled_tables_are_well_formed():
    data = bundled()
    tables = read_paper_tables()
    assert data["source"]["arxiv"] == "2106.06830"
    assert "Chen" in data["source"]["authors"][0] and data["source"]["license_note"]
    for entry in data["figures"]:
        assert set(FIGURE_FIELDS) <= set(entry)
        assert isinstance(entry["table"], int) and isinstance(entry["page"], int)
        assert entry["collection"] in ("AmbER-H", "AmbER-N") and entry["task"] in ("FC", "SF", "QA")
        assert 0 <= entry["value"] <= 100
    assert len(tables.figures) == len(data["figures"])
    for block in data["layout"]:
        assert block["table"] in PAPER_TABLE_NUMBERS and block["basis"]
        assert set(block["systems"]) <= set(KIND_SYSTEMS.values())
    for note in data["notes"]:
        assert note["about"] and note["note"] and isinstance(note["verified"], bool)


def test_every_table_is_transcribed_or_listed_as_missing():
    """No table of the paper silently absent: each has figures or a `missing` entry, and a
    layout cell without a figure belongs to a table listed as missing."""
    data = bundled()
    tables = read_paper_tables()
    missing = {entry["table"] for entry in data["missing"]}
    assert all(entry["what"] and entry["reason"] for entry in data["missing"])
    with_figures = {figure.table for figure in tables.figures.values()}
    assert PAPER_TABLE_NUMBERS.issubset(missing | with_figures)
    for block in data["layout"]:
        for system in block["systems"]:
            for collection in block["collections"]:
                for task in block["tasks"]:
                    for measure in block["measures"]:
                        key = (system, collection, task, measure)
                        assert key in tables.figures or block["table"] in missing, key


def test_the_papers_inconsistencies_are_noted_and_nothing_unread_is_filled_in():
    notes = {note["about"]: note for note in bundled()["notes"]}
    table6 = notes["Table 6 caption vs text"]
    assert '"four times"' in table6["note"] and '"twice"' in table6["note"]
    # The half that was read: the abstract's sentence, page 1.
    assert (
        "twice as likely to retrieve erroneous documents on queries for the less popular"
        in (table6["note"])
    )
    table7 = notes["Table 7, AmbER-H QA, oracle documents"]
    assert all(figure in table7["note"] for figure in ("71.4", "77.7", "83.0"))
    # Neither could be checked against the table text, so neither is marked verified, and the
    # Table 7 figures stay out of `figures`.
    assert not table6["verified"] and not table7["verified"]
    values = {figure.value for figure in read_paper_tables().figures.values()}
    assert not values & {71.4, 77.7, 83.0}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda f: f.pop("page"), "figures[0]: no 'page'"),
        (lambda f: f.update(value=123.0), "figures[0].value: 123.0 is not a percentage"),
        (lambda f: f.update(value=True), "figures[0].value: True is not"),
        (lambda f: f.update(collection="AmbER-X"), "figures[0].collection: 'AmbER-X' unknown"),
        (lambda f: f.update(task="EL"), "figures[0].task: 'EL' unknown"),
        (lambda f: f.update(system="BM25"), "figures[0]: not in the layout of its table"),
    ],
)
def test_a_malformed_figure_is_rejected_naming_file_and_field(tmp_path, change, message):
    data = bundled()
    figure = copy.deepcopy(SYNTHETIC)
    change(figure)
    data["figures"] = [figure]
    path = write_tables(tmp_path / "tables.json", data)
    with pytest.raises(BadInputError) as error:
        read_paper_tables(path)
    assert str(error.value).startswith(f"{path}: {message}")


def test_a_figure_listed_twice_or_invalid_json_is_rejected(tmp_path):
    data = bundled()
    data["figures"] = [SYNTHETIC, {**SYNTHETIC, "value": 1.0}]
    path = write_tables(tmp_path / "twice.json", data)
    with pytest.raises(BadInputError, match=r"figures\[1\]: .* listed twice"):
        read_paper_tables(path)
    broken = tmp_path / "broken.json"
    broken.write_text('{"source": {}\n"figures": []}', encoding="utf-8")
    with pytest.raises(BadInputError, match=rf"{re.escape(str(broken))}:2: invalid JSON"):
        read_paper_tables(broken)


def test_our_kinds_map_to_the_papers_retrievers_of_the_same_kind(synthetic_tables):
    assert [system_for(kind) for kind in ("tfidf", "dpr", "link", "blink", "bootleg")] == [
        "TF-IDF",
        "DPR",
        "BLINK",
        "BLINK",
        "Bootleg",
    ]
    assert system_for("bm25") is None and system_for("dense") is None and system_for(None) is None
    assert paper_figure("dpr", "human", "qa", "accuracy@1") == pytest.approx(12.3)
    # Our BLINK-style linker and BLINK's own predictions both read BLINK's figure.
    assert paper_figure("link", "human", "qa", "entity_confusion") == pytest.approx(45.6)
    assert paper_figure("blink", "human", "qa", "entity_confusion") == pytest.approx(45.6)
    assert paper_figure("dpr", "nonhuman", "qa", "accuracy@1") is None  # not transcribed
    assert paper_figure("bm25", "human", "qa", "accuracy@1") is None  # not in the paper
    cells = [
        synthetic_tables.cell(kind, "human", "qa", "accuracy@1")
        for kind in ("dpr", "tfidf", "bm25", "dense", None)
    ]
    assert cells == ["12.3", NOT_TRANSCRIBED, NOT_IN_PAPER, NOT_IN_PAPER, UNKNOWN_RETRIEVER]


METRICS = {
    key: 10.0 + index
    for index, key in enumerate(
        [
            f"{part}@{k}{suffix}"
            for k in (1, 20)
            for part, suffix in (("accuracy", ""), ("accuracy", "_head"), ("accuracy", "_tail"))
        ]
        + ["all_correct@1", "all_correct@20"]
        + ["entity_confusion", "entity_confusion_head", "entity_confusion_tail"]
    )
}


def header_and_row(table: str) -> tuple[list[str], list[str]]:
    lines = table.splitlines()
    return (
        [cell.strip() for cell in lines[0].strip("|").split("|")],
        [cell.strip() for cell in lines[2].strip("|").split("|")],
    )


def test_results_table_puts_a_paper_cell_after_each_measure_the_paper_reports(synthetic_tables):
    plain = results_table([({"Run": "x"}, METRICS)], [1, 20])
    assert "paper" not in plain  # callers without paper rows keep the old columns
    table = results_table([({"Run": "x"}, METRICS)], [1, 20], paper_rows=[("dpr", "human", "qa")])
    header, row = header_and_row(table)
    assert header == header_and_row(plain)[0][:2] + ["paper"] + header[3:]
    cells = dict(zip(header, row, strict=True))
    assert cells["All@1"] == f"{METRICS['accuracy@1']:.1f}"
    assert row[header.index("All@1") + 1] == "12.3"  # the paper's figure right after ours
    for measure in ("Head@1", "Tail@1", "∀@1", "Confusion"):
        assert header[header.index(measure) + 1] == "paper"
        assert row[header.index(measure) + 1] == NOT_TRANSCRIBED
    for measure in ("All@20", "Confusion head", "Confusion tail"):  # not in the layout
        assert header[header.index(measure) + 1 :][:1] != ["paper"]


@pytest.fixture(scope="module")
def sample_predictions(sample_build, tmp_path_factory):
    out, _ = sample_build
    work = tmp_path_factory.mktemp("paper")
    predictions = work / "bm25-human_qa.jsonl"
    main(
        ["retrieve", "--corpus", str(SAMPLE_KILT), "--dataset", str(out / "dataset")]
        + ["--config", "human_qa", "--retriever", "bm25", "--index", str(work / "index")]
        + ["--top-k", "20", "--out", str(predictions)]
    )
    return out / "dataset", predictions


def evaluate(dataset, predictions, out, *extra):
    main(
        ["evaluate", "--dataset", str(dataset), "--config", "human_qa"]
        + ["--predictions", str(predictions), "--out", str(out), *extra]
    )


def test_evaluate_prints_the_papers_figure_for_a_mapped_kind(
    sample_predictions, synthetic_tables, tmp_path, capsys
):
    dataset, predictions = sample_predictions
    evaluate(dataset, predictions, tmp_path / "report", "--retriever", "dpr")
    printed = capsys.readouterr().out
    header, row = header_and_row(printed)
    record = json.loads((tmp_path / "report" / "metrics.json").read_text())
    assert row[header.index("All@1")] == f"{record['metrics']['accuracy@1']:.1f}"
    assert row[header.index("All@1") + 1] == "12.3"
    assert "paper: DPR in Chen et al. (ACL 2021), 1 of its figures transcribed" in printed
    assert record["retriever"] == "dpr"
    assert record["paper"]["system"] == "DPR"
    assert record["paper"]["figures"]["accuracy@1"] == pytest.approx(12.3)
    assert record["paper"]["figures"]["entity_confusion"] is None
    markdown = (tmp_path / "report" / "report.md").read_text()
    assert "| paper |" in markdown and "| 12.3 |" in markdown


@pytest.mark.parametrize(
    ("extra", "expected", "said"),
    [
        (["--retriever", "bm25"], NOT_IN_PAPER, "paper: bm25 is not in the paper"),
        (["--retriever", "dense"], NOT_IN_PAPER, "paper: dense is not in the paper"),
        ([], UNKNOWN_RETRIEVER, "paper: unknown retriever (pass --retriever KIND"),
    ],
)
def test_evaluate_says_plainly_when_there_is_no_paper_figure(
    sample_predictions, tmp_path, capsys, extra, expected, said
):
    dataset, predictions = sample_predictions
    evaluate(dataset, predictions, tmp_path / "report", *extra)
    printed = capsys.readouterr().out
    header, row = header_and_row(printed)
    paper_cells = [cell for name, cell in zip(header, row, strict=True) if name == "paper"]
    assert len(paper_cells) == len(read_paper_tables().measures) == 5
    assert set(paper_cells) == {expected}
    assert said in printed
    assert said in (tmp_path / "report" / "report.md").read_text()


def test_evaluate_rejects_an_unknown_retriever_kind(sample_predictions, tmp_path, capsys):
    dataset, predictions = sample_predictions
    with pytest.raises(SystemExit):
        evaluate(dataset, predictions, tmp_path / "report", "--retriever", "blnk")
    assert "invalid choice: 'blnk'" in capsys.readouterr().err


def test_compare_fills_every_paper_cell_for_bm25_and_dense(sample_build, tmp_path, capsys):
    out, _ = sample_build
    main(
        ["amber", "compare", "--corpus", str(SAMPLE_KILT), "--dataset", str(out / "dataset")]
        + ["--out", str(tmp_path), "--top-k", "20", "--retriever", "bm25", "--retriever", "dense"]
    )
    printed = capsys.readouterr().out
    for table in (printed, (tmp_path / "results.md").read_text()):
        lines = [line for line in table.splitlines() if line.startswith("| ")]
        header = [cell.strip() for cell in lines[0].strip("|").split("|")]
        assert header.count("paper") == 5
        rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[1:]]
        assert len(rows) == 2 * 2 * 3
        for row in rows:
            paper_cells = [cell for name, cell in zip(header, row, strict=True) if name == "paper"]
            assert paper_cells == [NOT_IN_PAPER] * 5, row
    results = (tmp_path / "results.md").read_text()
    assert "- paper: bm25 is not in the paper" in results
    assert "- paper: dense is not in the paper" in results
    record = json.loads((tmp_path / "reports" / "dense-nonhuman_fc" / "metrics.json").read_text())
    assert record["retriever"] == "dense" and record["paper"]["system"] is None


def test_compare_of_every_retriever_kind_gives_every_row_its_paper_cells(
    sample_build, tmp_path, capsys
):
    """The issue's command on the sample: tfidf, bm25, dense, dpr (a tiny DPR) and link in one
    table, each row with the paper's figure for its kind, or why there is none."""
    from tiny_models import save_tiny_dpr

    out, _ = sample_build
    question, context = save_tiny_dpr(tmp_path / "dpr")
    kinds = ["tfidf", "bm25", "dense", "dpr", "link"]
    main(
        ["amber", "compare", "--corpus", str(SAMPLE_KILT), "--dataset", str(out / "dataset")]
        + ["--out", str(tmp_path / "runs"), "--top-k", "20"]
        + [arg for kind in kinds for arg in ("--retriever", kind)]
        + ["--dpr-question-encoder", str(question), "--dpr-context-encoder", str(context)]
    )
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[1:]]
    assert sorted({row[0] for row in rows}) == sorted(kinds)
    assert len(rows) == len(kinds) * 2 * 3
    for row in rows:
        cells = [cell for name, cell in zip(header, row, strict=True) if name == "paper"]
        assert len(cells) == 5
        if row[0] in ("bm25", "dense"):
            assert cells == [NOT_IN_PAPER] * 5, row
        else:  # a figure where one is transcribed, else said so
            assert all(re.fullmatch(r"\d+\.\d", c) or c == NOT_TRANSCRIBED for c in cells), row
