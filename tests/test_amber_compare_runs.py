"""`namesake amber compare --dense-run LABEL=SPEC`: named dense encoders side by side on the
AmbER sample, through the same code as the retriever kinds."""

from __future__ import annotations

import pytest
from conftest import SAMPLE_KILT

from namesake.amber.evaluation.compare import file_stem
from namesake.bundled_models import minilm_path
from namesake.cli import main
from namesake.ecqg.dpr.not_trained import write_not_trained

REASON = "the training file holds no item"


def _rows(text: str) -> dict[str, list[list[str]]]:
    """Retriever label -> the cells after it (collection, task, measures) of its table rows."""
    rows: dict[str, list[list[str]]] = {}
    for line in [line for line in text.splitlines() if line.startswith("| ")][1:]:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        rows.setdefault(cells[0], []).append(cells[1:])
    return rows


@pytest.fixture(scope="module")
def compared(sample_build, tmp_path_factory):
    """`amber compare` on the human collection: dense, the bundled MiniLM under two labels
    (once as a training folder, once as a model), and a folder whose training was skipped."""
    out, _ = sample_build
    work = tmp_path_factory.mktemp("compare_runs")
    minilm = minilm_path()
    gold = work / "gold_dpr"  # what training/train_dpr.py leaves, encoders shared here
    gold.mkdir()
    for name in ("st_question_encoder", "st_passage_encoder"):
        (gold / name).symlink_to(minilm, target_is_directory=True)
    write_not_trained(work / "mixed_dpr", REASON)
    main(
        ["amber", "compare", "--corpus", str(SAMPLE_KILT), "--dataset", str(out / "dataset")]
        + ["--out", str(work / "out"), "--index-dir", str(work / "indexes")]
        + ["--top-k", "20", "--collections", "human", "--retriever", "dense"]
        + ["--dense-run", f"MiniLM={minilm}", f"DPR on gold={gold}"]
        + [f"Mixed-DPR={work / 'mixed_dpr'}"]
    )
    return work


def test_the_same_encoder_under_two_labels_gives_the_same_rows(compared):
    rows = _rows((compared / "out" / "results.md").read_text())
    assert list(rows) == ["dense", "dense:MiniLM", "dense:DPR on gold", "dense:Mixed-DPR"]
    assert len(rows["dense:MiniLM"]) == 3  # one per task of the human collection
    # the bundled MiniLM is the dense kind's default: all three agree, paper cells included
    assert rows["dense:MiniLM"] == rows["dense"] == rows["dense:DPR on gold"]
    assert "not in the paper" in rows["dense:MiniLM"][0]
    figures = [cell.split(" [")[0] for cell in rows["dense:MiniLM"][0][2:]]
    assert any(figure.replace(".", "").isdigit() for figure in figures)


def test_each_run_has_its_own_files(compared):
    predictions = {p.name for p in (compared / "out" / "predictions").iterdir()}
    for stem in ("dense", "dense-MiniLM", "dense-DPR_on_gold"):
        assert {f"{stem}-human_{task}.jsonl" for task in ("fc", "sf", "qa")} <= predictions
        assert (compared / "indexes" / stem).is_dir()
    reports = {p.name for p in (compared / "out" / "reports").iterdir()}
    assert "dense-DPR_on_gold-human_qa" in reports
    assert not any("Mixed" in name for name in predictions | reports)


def test_a_not_trained_encoder_gets_rows_saying_why(compared):
    rows = _rows((compared / "out" / "results.md").read_text())
    for cells in rows["dense:Mixed-DPR"]:
        assert cells[2] == f"not trained: {REASON}"
        assert set(cells[3:]) == {"not trained"}
        assert len(cells) == len(rows["dense"][0])


def test_run_labels_must_stay_distinct_as_file_names(sample_build, tmp_path):
    out, _ = sample_build
    minilm = minilm_path()
    base = ["amber", "compare", "--corpus", str(SAMPLE_KILT), "--dataset", str(out / "dataset")]
    base += ["--out", str(tmp_path), "--retriever", "bm25"]
    with pytest.raises(SystemExit, match="would share the name 'dense-a_b'"):
        main([*base, "--dense-run", f"a b={minilm}", f"a/b={minilm}"])
    with pytest.raises(SystemExit):
        main([*base, "--dense-run", str(minilm)])  # no LABEL=
    assert file_stem("UnCon-DPR (v2)") == "UnCon-DPR_v2"
