"""The AmbER paper's figures beside ours (namesake.amber.evaluation.paper, on namesake/data/papers/
amber.json): our kinds mapped to the paper's retrievers, our metric keys to its tables, and
the "paper" cells that `namesake evaluate` and `namesake amber compare` print.

The figures checked by hand below were read off the paper, page 6 (Tables 5 and 6)."""

import json
import re

import pytest
from conftest import SAMPLE_KILT

from namesake.amber.evaluation.paper import (
    MEASURES,
    NOT_IN_PAPER,
    UNKNOWN_RETRIEVER,
    paper_figure,
    paper_row,
    paper_tables,
    system_for,
    system_label,
)
from namesake.amber.evaluation.report import TableRow, results_table
from namesake.cli import main

# (our kind, collection, task, our metric key): the figure as printed on page 6 of the paper
HAND_READ = {
    ("tfidf", "human", "fc", "accuracy@1"): 17.3,  # Table 5, AmbER-H, TF-IDF, FC All
    ("dpr", "nonhuman", "qa", "accuracy@1_tail"): 22.2,  # Table 5, AmbER-N, DPR, QA Tail
    ("link", "human", "sf", "entity_confusion_tail"): 58.2,  # Table 6, H, BLINK, SF Tail
}
PAPER_MEASURES = len(MEASURES)  # @1 and @20 (all, head, tail, all-correct), confusion head/tail


def test_our_kinds_map_to_the_papers_retrievers_of_the_same_kind():
    assert [system_for(kind) for kind in ("tfidf", "dpr", "link", "blink", "bootleg")] == [
        "TF-IDF",
        "DPR",
        "BLINK",
        "BLINK",
        "Bootleg",
    ]
    assert system_for("bm25") is None and system_for("dense") is None and system_for(None) is None
    # our linker is BLINK-style: its paper system says whose figure it is
    assert system_label("link") == "BLINK (paper)" and system_label("blink") == "BLINK"
    assert system_label("bm25") == NOT_IN_PAPER and system_label(None) == UNKNOWN_RETRIEVER


@pytest.mark.parametrize(("where", "printed"), HAND_READ.items())
def test_figures_read_by_hand_off_page_6(where, printed):
    assert paper_figure(*where) == pytest.approx(printed)


def test_cells_say_why_there_is_no_figure():
    tables = paper_tables()
    assert tables.cell("dpr", "human", "qa", "accuracy@1") == "13.1"
    assert tables.cell("bm25", "human", "qa", "accuracy@1") == NOT_IN_PAPER
    assert tables.cell("dense", "human", "qa", "accuracy@1") == NOT_IN_PAPER
    assert tables.cell(None, "human", "qa", "accuracy@1") == UNKNOWN_RETRIEVER
    # Table 6 has no "all" column, and no table has top-5
    assert tables.cell("dpr", "human", "qa", "entity_confusion") == NOT_IN_PAPER
    assert tables.cell("dpr", "human", "qa", "accuracy@5") == NOT_IN_PAPER
    assert paper_figure("blink", "nonhuman", "fc", "all_correct@20") == pytest.approx(1.3)


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


def test_results_table_puts_a_paper_cell_after_each_measure_the_paper_reports():
    plain = results_table([TableRow({"Run": "x"}, METRICS)], [1, 20])
    assert "paper" not in plain  # rows without the paper's side keep the old columns
    table = results_table(
        [TableRow({"Run": "x"}, METRICS, paper_row("dpr", "human", "qa"))], [1, 20]
    )
    header, row = header_and_row(table)
    assert header[:3] == ["Run", "paper system", "All@1"] and row[1] == "DPR"
    assert row[header.index("All@1")] == f"{METRICS['accuracy@1']:.1f}"
    expected = {"All@1": "13.1", "Head@1": "19.6", "Tail@1": "7.9", "∀@1": "1.1"}
    expected |= {"Confusion head": "2.6", "Confusion tail": "27.0"}  # Table 6, H, DPR, QA
    for measure, figure in expected.items():
        assert header[header.index(measure) + 1] == "paper"
        assert row[header.index(measure) + 1] == figure, measure
    assert header[header.index("Confusion") + 1] != "paper"  # no "all" column in Table 6
    assert header.count("paper") == PAPER_MEASURES


def test_the_paper_row_is_the_papers_side_as_data():
    row = paper_row("dpr", "human", "qa")
    assert row.system == "DPR" and row.label == "DPR"
    assert set(row.figures) == set(row.cells) == set(MEASURES)
    assert row.figures["accuracy@1"] == pytest.approx(13.1) and row.cells["accuracy@1"] == "13.1"
    assert row.record() == {"system": "DPR", "figures": row.figures}
    bm25 = paper_row("bm25", "human", "qa")
    assert bm25.system is None and bm25.label == NOT_IN_PAPER
    assert set(bm25.cells.values()) == {NOT_IN_PAPER}
    assert set(bm25.figures.values()) == {None}


def test_a_not_trained_row_says_why_in_place_of_its_figures():
    paper = paper_row("dense", "human", "qa")
    rows = [
        TableRow({"Retriever": "bm25"}, METRICS, paper_row("bm25", "human", "qa")),
        TableRow({"Retriever": "dense:Mixed"}, not_trained="no training item"),
        TableRow({"Retriever": "dense"}, {**METRICS, "accuracy@1": 99.0}, paper),
    ]
    lines = results_table(rows, [1, 20]).splitlines()
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    cells = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:]]
    assert [row[0] for row in cells] == ["bm25", "dense:Mixed", "dense"]  # the rows' order
    assert all(len(row) == len(header) for row in cells)
    assert cells[1][1] == "not trained: no training item"
    assert set(cells[1][2:]) == {"not trained"}
    assert cells[2][header.index("All@1")] == "99.0"
    # with no scored row, one "figures" column holds the reasons
    alone = results_table(rows[1:2], [1, 20]).splitlines()
    assert alone == [
        "| Retriever | figures |",
        "|---|---|",
        "| dense:Mixed | not trained: no training item |",
    ]


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


def test_evaluate_prints_the_papers_figure_for_a_mapped_kind(sample_predictions, tmp_path, capsys):
    dataset, predictions = sample_predictions
    evaluate(dataset, predictions, tmp_path / "report", "--retriever", "dpr")
    printed = capsys.readouterr().out
    header, row = header_and_row(printed)
    record = json.loads((tmp_path / "report" / "metrics.json").read_text())
    low, high = record["metrics"]["intervals"]["accuracy@1"]
    figure = f"{record['metrics']['accuracy@1']:.1f} [{low:.1f}, {high:.1f}]"
    assert row[header.index("All@1")] == figure
    assert row[header.index("All@1") + 1] == "13.1"  # Table 5, AmbER-H, DPR, QA All
    assert "paper: DPR in Chen et al. (ACL 2021), Table 5 p. 6, Table 6 p. 6, Table 9 p. 13" in (
        printed
    )
    assert record["retriever"] == "dpr"
    assert record["paper"]["system"] == "DPR"
    assert record["paper"]["figures"]["accuracy@1"] == pytest.approx(13.1)
    assert record["paper"]["figures"]["accuracy@20"] == pytest.approx(36.1)  # Table 9, p. 13
    markdown = (tmp_path / "report" / "report.md").read_text()
    assert "| paper |" in markdown and "| 13.1 |" in markdown


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
    assert len(paper_cells) == PAPER_MEASURES
    assert set(paper_cells) == {expected}
    assert said in printed
    assert said in (tmp_path / "report" / "report.md").read_text()


def test_evaluate_rejects_an_unknown_retriever_kind(sample_predictions, tmp_path, capsys):
    dataset, predictions = sample_predictions
    with pytest.raises(SystemExit):
        evaluate(dataset, predictions, tmp_path / "report", "--retriever", "blnk")
    assert "invalid choice: 'blnk'" in capsys.readouterr().err


def table_rows(text: str) -> tuple[list[str], list[list[str]]]:
    lines = [line for line in text.splitlines() if line.startswith("| ")]
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    return header, [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[1:]]


def test_compare_fills_every_paper_cell_for_bm25_and_dense(sample_build, tmp_path, capsys):
    out, _ = sample_build
    main(
        ["amber", "compare", "--corpus", str(SAMPLE_KILT), "--dataset", str(out / "dataset")]
        + ["--out", str(tmp_path), "--top-k", "20", "--retriever", "bm25", "--retriever", "dense"]
    )
    printed = capsys.readouterr().out
    for table in (printed, (tmp_path / "results.md").read_text()):
        header, rows = table_rows(table)
        assert header.count("paper") == PAPER_MEASURES
        assert len(rows) == 2 * 2 * 3
        for row in rows:
            paper_cells = [cell for name, cell in zip(header, row, strict=True) if name == "paper"]
            assert paper_cells == [NOT_IN_PAPER] * PAPER_MEASURES, row
            assert row[header.index("paper system")] == NOT_IN_PAPER
    results = (tmp_path / "results.md").read_text()
    assert "- paper: bm25 is not in the paper" in results
    assert "- paper: dense is not in the paper" in results
    record = json.loads((tmp_path / "reports" / "dense-nonhuman_fc" / "metrics.json").read_text())
    assert record["retriever"] == "dense" and record["paper"]["system"] is None


def test_compare_of_every_retriever_kind_gives_every_row_its_paper_cells(
    sample_build, tmp_path, capsys
):
    """The issue's command on the sample: tfidf, bm25, dense, dpr (a tiny DPR) and link in one
    table. Every paper cell of the tfidf, dpr and link rows holds the paper's figure, the
    three read by hand among them; bm25 and dense say they are not in the paper."""
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
    printed = capsys.readouterr().out
    header, rows = table_rows(printed)
    assert sorted({row[0] for row in rows}) == sorted(kinds)
    assert len(rows) == len(kinds) * 2 * 3
    names = {"human": "AmbER-H", "nonhuman": "AmbER-N"}
    for row in rows:
        cells = [cell for name, cell in zip(header, row, strict=True) if name == "paper"]
        assert len(cells) == PAPER_MEASURES
        if row[0] in ("bm25", "dense"):
            assert cells == [NOT_IN_PAPER] * PAPER_MEASURES, row
        else:
            assert all(re.fullmatch(r"\d+\.\d", c) for c in cells), row
    assert {row[header.index("paper system")] for row in rows if row[0] == "link"} == {
        "BLINK (paper)"
    }
    paper_of = {"accuracy@1": "All@1", "accuracy@1_tail": "Tail@1"}
    paper_of["entity_confusion_tail"] = "Confusion tail"
    for (kind, collection, task, measure), figure in HAND_READ.items():
        (row,) = [
            r for r in rows if r[0] == kind and names[collection] in r[1] and r[2].lower() == task
        ]
        assert row[header.index(paper_of[measure]) + 1] == f"{figure:.1f}"
    assert (
        "BLINK-style bi-encoder, not BLINK itself" in (tmp_path / "runs" / "results.md").read_text()
    )
