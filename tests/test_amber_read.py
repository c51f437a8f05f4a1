"""`namesake amber read`: tiny random readers answer the AmbER sample from oracle and
retrieved documents; the scoring, the answer choice across windows, the windowing and the
refusal of readers that do not fit their task are checked on inputs with known results."""

import json

import pytest
from conftest import SAMPLE_KILT
from run_files import ranked_ids
from tiny_models import (
    save_tiny_bart,
    save_tiny_bert,
    save_tiny_bert_qa,
    save_tiny_fever_classifier,
)

from namesake.amber.evaluation.queries import AmberQueries
from namesake.amber.evaluation.readers import (
    NOT_ENOUGH_INFO,
    REFUTES,
    SUPPORTS,
    WindowResult,
    choose_answer,
    fever_labels,
    score_query,
    summarize,
    window_batches,
)
from namesake.cli import main
from namesake.errors import NamesakeError
from namesake.text import token_f1

TASKS = ("fc", "sf", "qa")
WINDOW = ["--max-length", "64", "--stride", "16", "--batch-size", "8"]


@pytest.fixture(scope="module")
def readers(tmp_path_factory):
    root = tmp_path_factory.mktemp("readers")
    return {
        "fc": save_tiny_fever_classifier(root / "fc", always=SUPPORTS),
        "sf": save_tiny_bart(root / "sf"),
        "qa": save_tiny_bert_qa(root / "qa"),
    }


@pytest.fixture(scope="module")
def runs(sample_build, readers, tmp_path_factory):
    """Every task read in both settings into one folder (retrieved: BM25's top 3)."""
    out, _ = sample_build
    dataset = str(out / "dataset")
    work = tmp_path_factory.mktemp("read")
    predictions = {}
    for task in TASKS:
        predictions[task] = work / f"bm25-human_{task}.jsonl"
        main(
            [
                "retrieve",
                *("--corpus", str(SAMPLE_KILT), "--dataset", dataset),
                *("--config", f"human_{task}", "--retriever", "bm25"),
                *("--index", str(work / "index"), "--top-k", "20"),
                *("--out", str(predictions[task])),
            ]
        )
        for setting in ("oracle", "retrieved"):
            main(
                [
                    "amber",
                    "read",
                    *("--task", task, "--reader", str(readers[task])),
                    *("--dataset", dataset, "--collection", "human"),
                    *("--corpus", str(SAMPLE_KILT), "--setting", setting),
                    *(
                        ["--predictions", str(predictions[task]), "--top-k", "3"]
                        if setting == "retrieved"
                        else []
                    ),
                    *WINDOW,
                    *("--out", str(work / "out")),
                ]
            )
    return dataset, work / "out", predictions


def _per_query(out, task, setting):
    path = out / f"human_{task}-{setting}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("setting", ["oracle", "retrieved"])
@pytest.mark.parametrize("task", TASKS)
def test_a_run_answers_every_query_from_the_documents_of_its_setting(runs, task, setting):
    dataset, out, predictions = runs
    queries = AmberQueries.load(dataset, f"human_{task}").rows.to_pydict()
    records = _per_query(out, task, setting)
    assert [r["id"] for r in records] == list(queries["id"])
    assert [r["is_head"] for r in records] == list(queries["is_head"])
    assert [r["answers"] for r in records] == list(queries["answer"])
    if setting == "oracle":
        expected = list(queries["gold_wikipedia_ids"])
    else:
        ranked = ranked_ids(predictions[task])
        expected = [ranked[query_id][:3] for query_id in queries["id"]]
    assert [r["documents"] for r in records] == expected
    assert all(r["windows"] >= len(r["documents"]) > 0 for r in records)
    # the tiny sample pages are longer than a 64-token window: some are read in pieces
    assert any(r["windows"] > len(r["documents"]) for r in records)
    for r in records:
        assert r["evidence"] is None or r["evidence"] in r["documents"]
        if task == "fc":
            assert r["prediction"] in (SUPPORTS, REFUTES, NOT_ENOUGH_INFO)
        else:
            assert r["evidence"] is not None or r["prediction"] == ""


@pytest.mark.parametrize("setting", ["oracle", "retrieved"])
@pytest.mark.parametrize("task", TASKS)
def test_metrics_are_a_recomputation_of_the_per_query_outputs(runs, task, setting):
    _, out, _ = runs
    records = _per_query(out, task, setting)
    for r in records:
        if task == "fc":
            expected = 1.0 if r["prediction"] == r["answers"][0] else 0.0
        else:
            expected = max(token_f1(r["prediction"], answer) for answer in r["answers"])
        assert r["score"] == pytest.approx(expected)
    (run,) = [
        run
        for run in json.loads((out / "metrics.json").read_text())["runs"]
        if (run["task"], run["setting"]) == (task, setting)
    ]
    head = [r["score"] for r in records if r["is_head"]]
    tail = [r["score"] for r in records if not r["is_head"]]
    assert head and tail
    assert run["all"] == pytest.approx(100 * (sum(head) + sum(tail)) / len(records))
    assert run["head"] == pytest.approx(100 * sum(head) / len(head))
    assert run["tail"] == pytest.approx(100 * sum(tail) / len(tail))
    assert run["queries"] == {"all": len(records), "head": len(head), "tail": len(tail)}
    assert run["metric"] == ("accuracy" if task == "fc" else "token_f1")


@pytest.mark.parametrize("setting", ["oracle", "retrieved"])
def test_a_reader_that_always_supports_scores_the_share_of_true_claims(runs, setting):
    dataset, out, _ = runs
    queries = AmberQueries.load(dataset, "human_fc").rows.to_pydict()
    true_claims = {True: [], False: []}
    for answer, is_head in zip(queries["answer"], queries["is_head"], strict=True):
        true_claims[is_head].append(answer == [SUPPORTS])
    records = _per_query(out, "fc", setting)
    assert {r["prediction"] for r in records} == {SUPPORTS}
    # every window is certain (probability 1.0): the tie goes to the first document read
    assert all(r["evidence"] == r["documents"][0] for r in records)
    (run,) = [
        run
        for run in json.loads((out / "metrics.json").read_text())["runs"]
        if (run["task"], run["setting"]) == ("fc", setting)
    ]
    head, tail = true_claims[True], true_claims[False]
    assert 0 < sum(head) < len(head) and 0 < sum(tail) < len(tail)
    assert run["head"] == pytest.approx(100 * sum(head) / len(head))
    assert run["tail"] == pytest.approx(100 * sum(tail) / len(tail))
    assert run["all"] == pytest.approx(100 * (sum(head) + sum(tail)) / len(queries["id"]))


def test_the_table_has_the_paper_layout_with_every_run(runs):
    """Each measure beside the paper's Table 7 figure for the same collection, task and
    setting (hand-read, page 7: AmbER-H FC, BERT oracle 77.7 / 73.6 / 80.3; BERT + BLINK
    59.8 / 60.1 / 57.7)."""
    _, out, _ = runs
    runs_written = json.loads((out / "metrics.json").read_text())["runs"]
    lines = (out / "readers.md").read_text().splitlines()
    header = [cell.strip() for cell in lines[0].split("|")[1:-1]]
    assert header[4:10] == ["All", "paper", "Head", "paper", "Tail", "paper"]
    rows = [[cell.strip() for cell in line.split("|")[1:-1]] for line in lines[2:]]
    assert [row[1:3] for row in rows] == [
        [task, setting] for task in ("FC", "SF", "QA") for setting in ("oracle", "retrieved")
    ]
    for row, run in zip(rows, runs_written, strict=True):
        assert [float(v) for v in row[4:10:2]] == pytest.approx(
            [run["all"], run["head"], run["tail"]], abs=0.05
        )
    fc_oracle, fc_retrieved = rows[0], rows[1]
    assert fc_oracle[0] == "AmbER-H"
    assert fc_oracle[5:11:2] == ["77.7", "73.6", "80.3"]
    assert fc_oracle[-1] == "BERT (Oracle) (paper, Table 7 p. 7)"
    assert fc_retrieved[5:11:2] == ["59.8", "60.1", "57.7"]
    assert fc_retrieved[-1] == "BERT + BLINK (paper, Table 7 p. 7)"


def test_scoring_of_known_predictions():
    assert score_query("fc", SUPPORTS, [SUPPORTS]) == 1.0
    assert score_query("fc", NOT_ENOUGH_INFO, [REFUTES]) == 0.0
    # "The Civil War" normalises to "civil war": exact for the second answer
    assert score_query("sf", "The Civil War", ["American Civil War", "Civil War"]) == 1.0
    # {war, of, 1812} vs {american, civil, war}: P = R = 1/3
    assert score_query("qa", "War of 1812", ["American Civil War"]) == pytest.approx(1 / 3)
    assert score_query("qa", "", ["John Wilkes Booth"]) == 0.0
    records = [
        {"is_head": True, "score": 1.0},
        {"is_head": True, "score": 0.0},
        {"is_head": True, "score": 1 / 3},
        {"is_head": False, "score": 0.5},
    ]
    summary = summarize(records)
    assert summary["all"] == pytest.approx(100 * (1 + 0 + 1 / 3 + 0.5) / 4)
    assert summary["head"] == pytest.approx(100 * (4 / 3) / 3)
    assert summary["tail"] == pytest.approx(50.0)
    assert summary["queries"] == {"all": 4, "head": 3, "tail": 1}
    assert summarize(records[:1])["tail"] is None


def test_fact_checking_takes_the_most_confident_supports_or_refutes_window():
    results = [
        ("d1", WindowResult(NOT_ENOUGH_INFO, 0.95)),
        ("d1", WindowResult(SUPPORTS, 0.5)),
        ("d2", WindowResult(REFUTES, 0.7)),
        ("d3", WindowResult(SUPPORTS, 0.6)),
    ]
    choice = choose_answer("fc", results)
    assert (choice.prediction, choice.reader_score, choice.evidence) == (REFUTES, 0.7, "d2")
    nothing = choose_answer("fc", [("d1", WindowResult(NOT_ENOUGH_INFO, 0.4))])
    assert (nothing.prediction, nothing.evidence) == (NOT_ENOUGH_INFO, None)


def test_slot_filling_takes_the_best_sequence_score_and_earlier_documents_on_ties():
    results = [
        ("d1", WindowResult("Paris", -0.5)),
        ("d2", WindowResult("Lyon", -0.2)),
        ("d3", WindowResult("Nice", -0.2)),
    ]
    choice = choose_answer("sf", results)
    assert (choice.prediction, choice.evidence) == ("Lyon", "d2")
    assert choose_answer("sf", []).prediction == ""


def test_question_answering_weighs_the_best_span_against_the_smallest_no_answer_score():
    results = [
        ("d1", WindowResult("Booth", 3.0, null_score=4.0)),
        ("d2", WindowResult("John Wilkes Booth", 5.0, null_score=6.0)),
    ]
    choice = choose_answer("qa", results)
    assert (choice.prediction, choice.evidence) == ("John Wilkes Booth", "d2")
    assert choice.reader_score == pytest.approx(1.0)
    no_answer = [
        ("d1", WindowResult("Booth", 3.0, null_score=6.5)),
        ("d2", WindowResult("John Wilkes Booth", 5.0, null_score=7.0)),
    ]
    nothing = choose_answer("qa", no_answer)
    assert (nothing.prediction, nothing.evidence) == ("", None)
    assert nothing.reader_score == pytest.approx(-1.5)


def test_windows_cover_every_token_of_a_long_document(readers):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(readers["qa"])
    long_document = " ".join(f"word{i} token{i}" for i in range(150))
    short_document = "Abraham Lincoln was a lawyer."
    query = "Who " + "very " * 60 + "long question?"
    pairs = [(query, long_document), ("Who?", short_document)]
    batches = list(window_batches(tokenizer, pairs, max_length=48, stride=10, batch_size=4))
    windows = [window for batch, _ in batches for window in batch]
    assert all(len(batch) <= 4 for batch, _ in batches)
    for batch, padded in batches:
        assert padded["input_ids"].shape == (len(batch), max(len(w.offsets) for w in batch))
    assert all(len(w.features["input_ids"]) <= 48 for w in windows)
    assert [w.pair for w in windows[-1:]] == [1]

    document_spans = [[s for s in w.offsets if s is not None] for w in windows if w.pair == 0]
    alone = tokenizer(long_document, add_special_tokens=False, return_offsets_mapping=True)
    expected = [tuple(span) for span in alone["offset_mapping"]]
    assert len(document_spans) > 5
    assert sorted({s for spans in document_spans for s in spans}) == expected
    for before, after in zip(document_spans, document_spans[1:], strict=False):
        assert before[-10:] == after[:10]  # consecutive windows share `stride` tokens
    # the long query is cut to half a window, and every window holds it
    assert all(sum(s is None for s in w.offsets) <= 24 + 3 for w in windows)
    (short,) = [w for w in windows if w.pair == 1]
    spans = [s for s in short.offsets if s is not None]
    assert short_document[spans[0][0] : spans[-1][1]] == short_document


def test_a_stride_without_room_is_refused(readers):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(readers["qa"])
    with pytest.raises(NamesakeError, match="--stride 40"):
        list(window_batches(tokenizer, [("q", "d " * 100)], max_length=64, stride=40, batch_size=2))


def test_fever_labels_accept_fever_and_nli_names_only():
    assert fever_labels("r", {0: "SUPPORTS", 1: "REFUTES", 2: "NOT ENOUGH INFO"}) == {
        0: SUPPORTS,
        1: REFUTES,
        2: NOT_ENOUGH_INFO,
    }
    assert fever_labels("r", {0: "entailment", 1: "neutral", 2: "contradiction"}) == {
        0: SUPPORTS,
        1: NOT_ENOUGH_INFO,
        2: REFUTES,
    }
    with pytest.raises(NamesakeError, match="LABEL_0"):
        fever_labels("r", {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"})
    with pytest.raises(NamesakeError, match="do not map"):
        fever_labels("r", {0: "SUPPORTS", 1: "NOT ENOUGH INFO"})


def _read(task, reader, *extra, dataset="no-such-dataset"):
    return [
        "amber",
        "read",
        *("--task", task, "--reader", str(reader), "--dataset", dataset),
        *("--collection", "human", "--corpus", str(SAMPLE_KILT), "--out", "unused"),
        *extra,
    ]


@pytest.fixture(scope="module")
def unlabelled_classifier(tmp_path_factory):
    return save_tiny_bert(tmp_path_factory.mktemp("plain") / "classifier", num_labels=3)


@pytest.mark.parametrize(
    ("task", "reader", "message"),
    [
        ("fc", "sf", "cannot read for --task fc: it needs a sequence classifier"),
        ("sf", "qa", "cannot read for --task sf: it needs a seq2seq"),
        ("qa", "fc", "cannot read for --task qa: it needs an extractive"),
        ("fc", "unlabelled", "do not map to FEVER's SUPPORTS/REFUTES"),
    ],
)
def test_a_reader_that_does_not_fit_the_task_is_refused_before_reading(
    readers, unlabelled_classifier, capsys, task, reader, message
):
    path = unlabelled_classifier if reader == "unlabelled" else readers[reader]
    with pytest.raises(SystemExit) as exited:
        main(_read(task, path, "--setting", "oracle"))
    assert str(path) in str(exited.value) and message in str(exited.value)


def test_bad_settings_are_refused(readers, sample_build):
    dataset = str(sample_build[0] / "dataset")
    cases = [
        (["--setting", "retrieved"], "--setting retrieved needs --predictions"),
        (["--setting", "oracle", "--predictions", "p.jsonl"], "--predictions is read only"),
        (["--setting", "oracle", "--max-length", "256"], "reads 128 at most"),
    ]
    for extra, message in cases:
        with pytest.raises(SystemExit) as exited:
            main(_read("qa", readers["qa"], *WINDOW, *extra, dataset=dataset))
        assert message in str(exited.value)


def test_labels_name_the_classes_of_a_classifier_whose_config_does_not(
    unlabelled_classifier, sample_build, tmp_path
):
    dataset = str(sample_build[0] / "dataset")
    fever = ["SUPPORTS", "REFUTES", "NOT ENOUGH INFO"]
    argv = _read("fc", unlabelled_classifier, *WINDOW, "--setting", "oracle", dataset=dataset)
    argv[argv.index("--out") + 1] = str(tmp_path / "out")
    main([*argv, "--labels", *fever])
    (run,) = json.loads((tmp_path / "out" / "metrics.json").read_text())["runs"]
    assert run["labels"] == fever
    predictions = {r["prediction"] for r in _per_query(tmp_path / "out", "fc", "oracle")}
    assert predictions and predictions <= set(fever)
    for labels, message in [
        (fever[:2], "--labels names 2 classes; --reader"),
        (["SUPPORTS", "REFUTES", "LABEL_2"], "do not map to FEVER's"),
    ]:
        with pytest.raises(SystemExit) as exited:
            main([*argv, "--labels", *labels])
        assert message in str(exited.value)
    with pytest.raises(SystemExit) as exited:
        main(_read("qa", "any", "--setting", "oracle", "--labels", *fever))
    assert "only with --task fc" in str(exited.value)
