"""The one Markdown table renderer: the header, the alignment rule (the last letter holding for
the columns after it), the rows as their callers formatted them, and a row of the wrong width
refused."""

import pytest

from namesake.markdown import markdown_table


def test_a_label_then_figures_by_default():
    table = markdown_table(
        ["Run", "All@1", "Head@1"], [["bm25", "50.0", "33.3"], ["dpr", "1", "2"]]
    )
    assert table.splitlines() == [
        "| Run | All@1 | Head@1 |",
        "|---|---:|---:|",
        "| bm25 | 50.0 | 33.3 |",
        "| dpr | 1 | 2 |",
    ]
    assert not table.endswith("\n")


def test_the_last_alignment_letter_holds_for_the_columns_after_it():
    rule = markdown_table(["a", "b", "c", "d", "e"], [], "llr").splitlines()[1]
    assert rule == "|---|---|---:|---:|---:|"
    assert markdown_table(["a", "b"], [], "l").splitlines()[1] == "|---|---|"
    assert markdown_table(["a", "b", "c"], [], "rlr").splitlines()[1] == "|---:|---|---:|"
    assert markdown_table(["a", "b", "c"], [], "lrl").splitlines()[1] == "|---|---:|---|"


def test_cells_are_written_as_given():
    """Nothing is escaped, padded or formatted: each caller's cells read as it wrote them."""
    rows = iter([["x | y", "", " 1,234 "]])  # any iterable of rows
    table = markdown_table(["α", "β", "γ"], rows, "l")
    assert table.splitlines()[2] == "| x | y |  |  1,234  |"


def test_a_table_without_rows_is_its_header_and_rule():
    assert markdown_table(["figures"], [], "l") == "| figures |\n|---|"


@pytest.mark.parametrize("row", [["only one"], ["a", "b", "c", "d"]])
def test_a_row_of_the_wrong_width_is_refused(row):
    with pytest.raises(ValueError, match=rf"row 2: {len(row)} cells for 3 columns"):
        markdown_table(["a", "b", "c"], [["1", "2", "3"], row])


@pytest.mark.parametrize("align", ["", "lx", "lrrr", "c"])
def test_an_alignment_not_of_l_and_r_letters_for_the_columns_is_refused(align):
    with pytest.raises(ValueError, match="alignment"):
        markdown_table(["a", "b", "c"], [], align)
