"""`namesake retrieve`, `namesake evaluate` and `namesake amber compare` end to end on the
bundled sample."""

import json

import matplotlib.image
import pytest
from conftest import SAMPLE_KILT

from namesake.amber.evaluation.queries import AmberQueries
from namesake.amber.evaluation.scoring import GAP_BINS, _gap_bin
from namesake.cli import main

# Hand-computed from the sample's popularities (tests/data/amber_sample_expected): the pair
# (head, tail) of each AmbER-H set whose tail has queries, binned by (p_head - p_tail) / p_tail.
# Edge 16%, Michael Collins 16%, Napoleon 12%, Sting 15%; John Nash 22%; Michael Jordan's
# professor 41% (the footballer has no query); Tom Jones 64%; Abe Lincoln 92%.
HUMAN_PAIRS_PER_BIN = {
    "0-20%": 4,
    "20-40%": 1,
    "40-60%": 1,
    "60-80%": 1,
    "80-100%": 1,
    ">100%": 0,
}


@pytest.fixture(scope="module")
def bm25_run(sample_build, tmp_path_factory):
    out, _ = sample_build
    work = tmp_path_factory.mktemp("run")
    predictions = work / "bm25-human_qa.jsonl"
    main([*bm25_retrieve(out / "dataset", work, predictions), "--corpus", str(SAMPLE_KILT)])
    return out / "dataset", work, predictions


def bm25_retrieve(dataset, work, predictions) -> list[str]:
    """`namesake retrieve` of AmbER-H QA with BM25, its index in `work`, top 20."""
    return ["retrieve", "--dataset", str(dataset), "--config", "human_qa"] + [
        *("--retriever", "bm25", "--index", str(work / "index")),
        *("--top-k", "20", "--out", str(predictions)),
    ]


def test_retrieve_writes_the_published_predictions_format(bm25_run):
    dataset, _, predictions = bm25_run
    queries = AmberQueries.load(str(dataset), "human_qa").rows.to_pydict()
    lines = [json.loads(line) for line in predictions.read_text().splitlines()]
    assert [line["id"] for line in lines] == list(queries["id"])
    for line in lines:
        ids = [p["wikipedia_id"] for p in line["output"]["provenance"]]
        assert 0 < len(ids) <= 20 and len(set(ids)) == len(ids)


def test_retrieve_reuses_a_saved_index_without_the_corpus(bm25_run, tmp_path):
    dataset, work, predictions = bm25_run
    again = tmp_path / "again.jsonl"
    main(bm25_retrieve(dataset, work, again))  # no --corpus: the saved index is enough
    assert again.read_text() == predictions.read_text()


def evaluate_args(dataset, predictions, out, *extra) -> list[str]:
    """`namesake evaluate`'s arguments for AmbER-H QA."""
    return [
        "evaluate", "--dataset", str(dataset), "--config", "human_qa",
        "--predictions", str(predictions), "--out", str(out), *extra,
    ]  # fmt: skip


def test_evaluate_writes_metrics_report_and_plot(bm25_run, tmp_path, capsys):
    dataset, _, predictions = bm25_run
    report = tmp_path / "report"
    main(evaluate_args(dataset, predictions, report, "--cutoffs", "1", "20"))
    assert "| human_qa |" in capsys.readouterr().out
    record = json.loads((report / "metrics.json").read_text())
    metrics = record["metrics"]
    assert metrics["num_queries"] == 18 and metrics["num_sets"] == 8
    for key in (
        "accuracy@1",
        "accuracy@1_head",
        "accuracy@1_tail",
        "all_correct@1",
        "accuracy@20",
        "all_correct@20",
        "entity_confusion",
    ):
        assert 0 <= metrics[key] <= 100
    assert metrics["accuracy@20"] >= metrics["accuracy@1"]
    bins = {b["bin"]: b["pairs"] for b in record["popularity_gap"]}
    assert bins == HUMAN_PAIRS_PER_BIN
    assert record["overall_head_tail_gap@1"] == pytest.approx(
        metrics["accuracy@1_head"] - metrics["accuracy@1_tail"]
    )
    png = report / "popularity_gap.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    height, width, _ = matplotlib.image.imread(png).shape
    assert width > 400 and height > 300
    markdown = (report / "report.md").read_text()
    assert "| 80-100% | 1 |" in markdown and "popularity_gap.png" in markdown


@pytest.mark.parametrize(
    ("head", "tail", "low"),
    [(2.0, 1.9, 0), (2.0, 1.0, 100), (1.0, 0.0, 100), (0.0, 0.0, 0), (3.0, 1.5, 100)],
)
def test_gap_bins_cover_zero_popularity_tails(head, tail, low):
    """A tail seen once (log10 views = 0) has an infinite gap: the open last bin."""
    assert GAP_BINS[_gap_bin(head, tail)][0] == low


def test_references_use_the_other_members_pages_as_confusers(sample_build):
    out, _ = sample_build
    amber = AmberQueries.load(str(out / "dataset"), "human_qa")
    queries, references = amber.rows.to_pydict(), amber.references()
    row = list(queries["qid"]).index("Q4666410")  # Abe Lincoln the trombonist
    assert references[row] == {
        "gold_ids": ["3412877"],
        "confuser_ids": ["307"],  # the president's page
        "is_head": False,
        "set_id": "Abe Lincoln",
    }
    jordan = list(queries["qid"]).index("Q41421")  # the footballer, without queries, still confuses
    assert set(references[jordan]["confuser_ids"]) == {"1017587", "22894551"}


def test_missing_predictions_are_an_error_unless_allowed(bm25_run, tmp_path):
    dataset, _, predictions = bm25_run
    partial = tmp_path / "partial.jsonl"
    partial.write_text("\n".join(predictions.read_text().splitlines()[:-3]) + "\n")
    args = evaluate_args(dataset, partial, tmp_path / "report")
    with pytest.raises(SystemExit) as exit_:
        main(args)
    assert "3 of 18 queries have no prediction" in str(exit_.value.code)
    assert not (tmp_path / "report").exists()
    main([*args, "--allow-missing"])
    assert (
        json.loads((tmp_path / "report" / "metrics.json").read_text())["metrics"]["num_queries"]
        == 18
    )


def test_bad_prediction_line_names_file_and_line(bm25_run, tmp_path):
    dataset, _, _ = bm25_run
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "output": {"provenance": []}}\n{"id": "y"\n')
    with pytest.raises(SystemExit) as exit_:
        main(evaluate_args(dataset, bad, tmp_path / "r"))
    assert f"{bad}:2: not JSON" in str(exit_.value.code)


def compare_args(dataset) -> list[str]:
    """`namesake amber compare`'s arguments for the bundled sample corpus."""
    return ["amber", "compare", "--corpus", str(SAMPLE_KILT), "--dataset", str(dataset)]


def test_compare_prints_one_row_per_retriever_collection_and_task(sample_build, tmp_path, capsys):
    out, _ = sample_build
    main([*compare_args(out / "dataset"), "--out", str(tmp_path), "--top-k", "20"])
    printed = capsys.readouterr().out
    rows = [
        line
        for line in printed.splitlines()
        if line.startswith("| bm25") or line.startswith("| dense")
    ]
    assert len(rows) == 2 * 2 * 3
    assert "| dense | AmbER-N | FC |" in printed
    assert (tmp_path / "results.md").read_text().count("| bm25 |") == 6
    assert (tmp_path / "reports" / "dense-nonhuman_sf" / "popularity_gap.png").is_file()


def test_compare_keeps_its_indexes_in_index_dir_and_reuses_them(sample_build, tmp_path, capsys):
    out, _ = sample_build
    argv = [
        *compare_args(out / "dataset"),
        "--retriever",
        "bm25",
        "--collections",
        "human",
        "--index-dir",
        str(tmp_path / "indexes"),
    ]
    main([*argv, "--out", str(tmp_path / "first")])
    settings = tmp_path / "indexes" / "bm25" / "retriever.json"
    built = settings.stat().st_mtime_ns
    main([*argv, "--out", str(tmp_path / "second")])
    assert settings.stat().st_mtime_ns == built  # loaded, not rebuilt
    first = (tmp_path / "first" / "results.md").read_text()
    assert first == (tmp_path / "second" / "results.md").read_text()
    assert first.count("| bm25 | AmbER-H |") == 3
