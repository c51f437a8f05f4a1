"""`namesake ecqg evaluate-dpr` with several encoders side by side (the ECQG paper's Table 3):
labelled runs, TF-IDF, DPR checkpoints, not-trained encoders and Lewis et al.'s overlap
subsets, on a corpus small enough to compute every figure by hand."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from namesake.cli import main
from namesake.ecqg.dpr.evaluation import EncoderRun, evaluate_runs, runs_table
from namesake.ecqg.dpr.not_trained import write_not_trained
from namesake.ecqg.dpr.overlap import read_overlap_annotations
from namesake.errors import BadInputError, NamesakeError
from namesake.retrieval.dense import DEFAULT_MODEL

PASSAGES = [
    ("France", "Paris is the capital of France."),
    ("Germany", "Berlin is the capital of Germany."),
    ("Spain", "Madrid is the capital of Spain."),
    ("Italy", "Rome is the capital of Italy."),
]
# line 0 is malformed, so the questions are lines 1-4: the ids Lewis et al.'s files give them
TEST_LINES = [
    "a line without answers",
    'capital of France\t["Paris"]',  # TF-IDF: France only in p0 -> hit at 1
    'capital of Germany\t["Berlin"]',  # hit at 1
    'capital of Atlantis\t["Paris"]',  # "capital" is in every passage (idf 0): nothing ranked
    'capital of Spain or Italy\t["Rome"]',  # Spain and Italy tie; p2 (Spain) first -> hit at 5
]
# ids 1..4 = the four questions above
ANNOTATIONS = [
    {"id": 1, "labels": ["total", "no_answer_overlap"]},
    {"id": 2, "labels": ["total", "answer_overlap"]},
    {"id": 3, "labels": ["total", "no_answer_overlap", "no_question_overlap"]},
    {"id": 4, "labels": ["total", "answer_overlap"]},
]


@pytest.fixture
def inputs(tmp_path):
    rows = [
        {"id": f"p{i}", "wikipedia_id": str(i), "title": title, "text": text}
        for i, (title, text) in enumerate(PASSAGES)
    ]
    passages = tmp_path / "passages.parquet"
    pq.write_table(pa.Table.from_pylist(rows), passages)
    test = tmp_path / "test.tsv"
    test.write_text("\n".join(TEST_LINES) + "\n")
    annotations = tmp_path / "annotations.jsonl"
    annotations.write_text("".join(json.dumps(a) + "\n" for a in ANNOTATIONS))
    return passages, test, annotations


def test_tfidf_row_and_overlap_subsets_match_hand_computed_figures(inputs):
    passages, test, annotations = inputs
    result = evaluate_runs(
        passages,
        test,
        [EncoderRun("TF-IDF", "tfidf")],
        cutoffs=(1, 5),
        overlap_annotations=annotations,
    )
    assert result["questions"] == 4 and result["skipped_questions"] == 1
    (run,) = result["runs"]
    assert run["metrics"] == {"top_1": 0.5, "top_5": 0.75}
    subsets = {label: found["metrics"] for label, found in run["subsets"].items()}
    assert subsets["total"] == run["metrics"]
    assert subsets["no_answer_overlap"] == {"top_1": 0.5, "top_5": 0.5}  # France, Atlantis
    assert subsets["answer_overlap"] == {"top_1": 0.5, "top_5": 1.0}  # Germany, Spain/Italy
    assert subsets["no_question_overlap"] == {"top_1": 0.0, "top_5": 0.0}  # Atlantis
    assert run["subsets"]["answer_overlap"]["questions"] == 2
    table = runs_table(result)
    # beside ours, the ECQG paper's Table 3 TF-IDF row (NQ; hand-read: 14.2 / 32.0 on the
    # full test set, 14.6 / 31.8 without question overlap)
    assert "| TF-IDF | 4 | TF-IDF, NQ Full test (paper) | 50.0 | 14.2 | 75.0 | 32.0 |" in table
    assert (
        "| TF-IDF, no question overlap | 1 | TF-IDF, NQ No ques. ovlp. (paper) "
        "| 0.0 | 14.6 | 0.0 | 31.8 |" in table
    )
    assert "| TF-IDF, answer overlap | 2 | not in the paper | 50.0 | not in the paper |" in table


def test_encoders_side_by_side_keep_a_not_trained_row(inputs, tmp_path):
    passages, test, _ = inputs
    write_not_trained(tmp_path / "uncon", "synthetic.json holds no training item")
    runs = [
        EncoderRun("start", "dense", DEFAULT_MODEL),
        EncoderRun("again", "dense", DEFAULT_MODEL),
        EncoderRun("UnCon-DPR", not_trained="synthetic.json holds no training item"),
    ]
    result = evaluate_runs(passages, test, runs, cutoffs=(1, 5))
    start, again, uncon = result["runs"]
    assert start["metrics"] == again["metrics"]  # the same encoder on the same questions
    assert start["similarity"] == "cosine"  # MiniLM's own
    assert "metrics" not in uncon and uncon["not_trained"].startswith("synthetic.json")
    table = runs_table(result)
    assert (
        "| UnCon-DPR | 4 | UnCon-DPR, NQ Full test (paper) "
        "| not trained: synthetic.json holds no training item | 45.8 | — | 68.4 |" in table
    )
    assert "| start | 4 | not in the paper |" in table  # a dense run of ours the paper lacks


def test_dpr_checkpoints_rank_by_inner_product_by_default(inputs, tmp_path):
    from tiny_models import save_tiny_dpr

    passages, test, _ = inputs
    question, context = save_tiny_dpr(tmp_path / "dpr")
    run = EncoderRun("DPR", "dpr", str(context), str(question))
    result = evaluate_runs(passages, test, [run], cutoffs=(1, 4))
    (found,) = result["runs"]
    assert found["similarity"] == "dot"
    # the paper's baseline DPR beside it (Table 3, NQ: 44.3 top-1; it reports no top-4)
    assert "| DPR | 4 | DPR (ours), NQ Full test (paper) |" in runs_table(result)
    assert "| 44.3 |" in runs_table(result)
    assert found["metrics"]["top_4"] == 1.0  # all 4 passages ranked: every answer is in one
    (forced,) = evaluate_runs(passages, test, [run], cutoffs=(1, 4), similarity="cosine")["runs"]
    assert forced["similarity"] == "cosine"


def test_the_cli_prints_one_table_and_writes_json_and_markdown(inputs, tmp_path, capsys):
    passages, test, annotations = inputs
    write_not_trained(tmp_path / "mixed", "mixed.json holds no training item")
    out, markdown = tmp_path / "runs.json", tmp_path / "runs.md"
    main(
        ["ecqg", "evaluate-dpr", "--passages", str(passages), "--test-file", str(test)]
        + ["--run", f"MiniLM={DEFAULT_MODEL}", f"Mixed-DPR={tmp_path / 'mixed'}", "--tfidf"]
        + ["--overlap-annotations", str(annotations), "--cutoffs", "1", "5"]
        + ["--out", str(out), "--markdown", str(markdown)]
    )
    printed = capsys.readouterr().out
    result = json.loads(out.read_text())
    assert [run["label"] for run in result["runs"]] == ["MiniLM", "Mixed-DPR", "TF-IDF"]
    assert markdown.read_text().strip() in printed
    assert (
        "| Mixed-DPR | 4 | Mixed-DPR, NQ Full test (paper) "
        "| not trained: mixed.json holds no training item | 45.9 | — | 69.0 |" in printed
    )
    assert "4 questions (1 skipped)" in printed


def test_overlap_annotations_are_checked_line_by_line(tmp_path):
    path = tmp_path / "annotations.jsonl"
    for lines, message in (
        ([{"id": 0, "labels": ["total"]}, {"id": 5, "labels": []}], r":2: id 5 is not a line"),
        ([{"id": 0, "labels": ["total"]}, {"id": 0, "labels": []}], r":2: id 0 annotated twice"),
        ([{"id": 1, "labels": ["overlap"]}], r":1: unknown label"),
        (["not json"], r":1: expected"),
    ):
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
        with pytest.raises(BadInputError, match=message):
            read_overlap_annotations(path, num_questions=3)
    path.write_text(json.dumps({"id": 2, "labels": ["no_answer_overlap", "total"]}) + "\n")
    assert read_overlap_annotations(path, 3) == {
        "total": frozenset({2}),
        "no_answer_overlap": frozenset({2}),
    }


def test_labels_must_differ_and_something_must_run(inputs):
    passages, test, _ = inputs
    with pytest.raises(NamesakeError, match="labels must differ"):
        evaluate_runs(passages, test, [EncoderRun("x", "tfidf"), EncoderRun("x", "tfidf")])
    with pytest.raises(NamesakeError, match="nothing to evaluate"):
        evaluate_runs(passages, test, [])
