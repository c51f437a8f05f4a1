"""`namesake wes judge`: judged answers read from EVOUNA and plain JSONL, the question-disjoint
split, the dev-threshold evaluation, the classic metrics as scorers and the command end to end."""

import bz2
import configparser
import fnmatch
import gzip
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from namesake.errors import BadInputError
from namesake.text import squad_normalize
from namesake.wes.scoring import judgments
from namesake.wes.scoring.classic_metrics import (
    CLASSIC_METRICS,
    LexicalScorer,
    available_metrics,
    make_scorer,
)
from namesake.wes.scoring.judge import evaluate_scorers, markdown_tables
from namesake.wes.scoring.judgments import JudgedAnswer, answer_kind, evouna_paths, read_judged
from namesake.wes.scoring.thresholds import accuracy_at, best_threshold, roc_auc

ROOT = Path(__file__).resolve().parent.parent

EVOUNA_ROWS = [
    {
        "question": "who got the first nobel prize in physics",
        "golden_answer": "Wilhelm Conrad Röntgen/Röntgen",
        "answer_fid": "Wilhelm Röntgen",
        "judge_fid": True,
        "answer_gpt35": "The first Nobel Prize in Physics went to Albert Einstein in 1901.",
        "judge_gpt35": False,
        "answer_newbing": "   ",
        "judge_newbing": True,
        "improper": False,
    },
    {
        "question": "an improper question",
        "golden_answer": "x",
        "answer_fid": "x",
        "judge_fid": True,
        "answer_gpt35": "x",
        "judge_gpt35": "nan",
        "answer_newbing": "x",
        "judge_newbing": None,
        "improper": True,
    },
    {
        "question": "where is the eiffel tower",
        "golden_answer": "Paris//Paris, France",
        "answer_fid": "Paris",
        "judge_fid": True,
        "answer_gpt35": None,
        "judge_gpt35": True,
        "answer_newbing": "Lyon",
        "judge_newbing": None,
        "improper": False,
    },
]

PLAIN_ROWS = [
    {"question": "capital of France?", "references": ["Paris"], "candidate": "Paris", "label": 1},
    {
        "question": "capital of France?",
        "references": ["Paris"],
        "candidate": "Lyon",
        "label": False,
    },
    {
        "question": "largest planet?",
        "references": ["Jupiter"],
        "candidate": "It is Jupiter, the gas giant of the solar system.",
        "label": True,
        "system": "mine",
        "dataset": "planets",
    },
]


def write_jsonl(path: Path, rows, opener=open) -> Path:
    with opener(path, "wt", encoding="utf-8") as f:
        for row in rows:
            f.write((row if isinstance(row, str) else json.dumps(row)) + "\n")
    return path


# --- reading ---


@pytest.mark.parametrize(
    ("name", "opener"),
    [
        ("evouna_nq.jsonl", open),
        ("evouna_nq.jsonl.bz2", bz2.open),
        ("evouna_nq.jsonl.gz", gzip.open),
    ],
)
def test_reads_evouna_format(tmp_path, name, opener):
    path = write_jsonl(tmp_path / name, EVOUNA_ROWS, opener)
    judged = read_judged([path])
    records = judged.records
    assert [(r.system, r.candidate, r.label) for r in records] == [
        ("fid", "Wilhelm Röntgen", 1),
        ("gpt35", "The first Nobel Prize in Physics went to Albert Einstein in 1901.", 0),
        ("fid", "Paris", 1),
    ]
    assert {r.dataset for r in records} == {"nq"}
    assert records[0].references == ("Wilhelm Conrad Röntgen", "Röntgen")
    assert records[2].references == ("Paris", "Paris, France")
    assert [r.kind for r in records] == ["short", "sentence", "short"]
    assert records[0].question_id == records[1].question_id != records[2].question_id
    dropped = {why: n for (_, why), n in judged.dropped.items()}
    assert dropped == {
        "empty answer (only whitespace)": 1,
        "judged answer to an improper question (left out)": 1,  # "nan" and null are no judgement
        "judged but no answer (answer null)": 1,
        "not judged (judge null)": 1,
    }
    notes = {what: n for (_, what), n in judged.notes.items()}
    assert notes == {"improper question(s) left out": 1, "empty golden_answer piece(s) skipped": 1}
    assert all(str(path) in line for line in judged.dropped_lines())
    table = judged.to_table()
    assert table.num_rows == 3 and table.column("references").to_pylist()[2] == list(
        records[2].references
    )


def test_reads_plain_format_and_several_files(tmp_path):
    plain = write_jsonl(tmp_path / "my_answers.jsonl", PLAIN_ROWS)
    evouna = write_jsonl(tmp_path / "evouna_tq.jsonl", EVOUNA_ROWS)
    records = read_judged([plain, evouna]).records
    mine = [r for r in records if r.dataset != "tq"]
    assert [(r.dataset, r.candidate, r.label, r.system) for r in mine] == [
        ("my_answers", "Paris", 1, ""),
        ("my_answers", "Lyon", 0, ""),
        ("planets", "It is Jupiter, the gas giant of the solar system.", 1, "mine"),
    ]
    assert mine[0].question_id == mine[1].question_id and mine[0].split == mine[1].split
    assert mine[2].kind == "sentence"
    assert {r.dataset for r in records} == {"my_answers", "planets", "tq"}
    # max_questions: the answers to the first N questions of each file
    assert len(read_judged([plain], max_questions=1).records) == 2


@pytest.mark.parametrize(
    ("row", "field"),
    [
        ({"references": ["a"], "candidate": "a", "label": 1}, "question"),
        ({"question": "q", "candidate": "a", "label": 1}, "references"),
        ({"question": "q", "references": [], "candidate": "a", "label": 1}, "references"),
        ({"question": "q", "references": ["a"], "candidate": "a", "label": "yes"}, "label"),
        ({"question": "q", "references": ["a"], "candidate": "a", "label": 2}, "label"),
        ({"question": "q", "references": ["a"], "candidate": "a"}, "label"),
        ({"question": "q", "references": ["a"], "candidate": 3, "label": 1}, "candidate"),
        ({"question": "q", "golden_answer": "a", "answer_fid": "a", "judge_fid": "T"}, "judge_fid"),
        ({"question": "q", "golden_answer": " / ", "answer_fid": "a", "judge_fid": 1}, "golden"),
        ({"question": "q", "golden_answer": None, "answer_fid": "a", "judge_fid": 1}, "golden"),
    ],
)
def test_bad_input_names_file_line_and_field(tmp_path, row, field):
    good = PLAIN_ROWS[0] if "golden_answer" not in row else EVOUNA_ROWS[0]
    path = write_jsonl(tmp_path / "bad.jsonl", [good, row])
    with pytest.raises(BadInputError) as error:
        read_judged([path])
    assert error.value.path == str(path) and error.value.line == 2
    assert field in error.value.message
    assert f"{path}:2" in str(error.value)


def test_bad_json_and_missing_file(tmp_path):
    path = write_jsonl(tmp_path / "bad.jsonl", [PLAIN_ROWS[0], "{not json"])
    with pytest.raises(BadInputError, match=r"bad\.jsonl:2: not JSON"):
        read_judged([path])
    with pytest.raises(BadInputError, match=r"missing\.jsonl: no such file"):
        read_judged([tmp_path / "missing.jsonl"])
    with pytest.raises(BadInputError, match=": is a folder, not a file"):
        read_judged([tmp_path])


@pytest.mark.parametrize("given", ["fifo", "byte-order mark"])
def test_judged_answers_from_a_pipe_or_with_a_byte_order_mark_read_as_the_file(tmp_path, given):
    """The judged answers and the answers to score are read like every input: a pipe loses
    no first bytes (they were read to tell the compression, then opened again), and a
    byte-order mark is dropped (json refused the first line)."""
    from pipe_inputs import fifo_of

    path = write_jsonl(tmp_path / "judged.jsonl", PLAIN_ROWS)
    expected = read_judged([path])
    data = path.read_bytes()
    if given == "fifo":
        with fifo_of(bz2.compress(data), tmp_path) as fifo:
            records = read_judged([fifo])
    else:
        marked = tmp_path / "marked.jsonl"
        marked.write_bytes(b"\xef\xbb\xbf" + data)
        records = read_judged([marked])
    assert [(r.candidate, r.label) for r in records.records] == [
        (r.candidate, r.label) for r in expected.records
    ]


def test_kind_rule():
    assert judgments.SHORT_ANSWER_MAX_TOKENS == 5
    assert answer_kind("one two three four five") == "short"
    assert answer_kind("one two three four five six") == "sentence"
    # SQuAD normalisation: articles and punctuation are no tokens
    assert answer_kind("The Beatles, a band!") == "short"


# --- the split ---


@pytest.fixture(scope="module")
def evouna():
    return read_judged()


def test_shipped_evouna(evouna):
    paths = evouna_paths()
    assert [p.name for p in paths] == ["evouna_nq.jsonl.bz2", "evouna_tq.jsonl.bz2"]
    assert (paths[0].parent / "LICENSE-Apache-2.0.txt").is_file()
    assert "Evaluating Open-QA Evaluation" in (paths[0].parent / "README.md").read_text()
    records = evouna.records
    assert len(records) == 23_495
    assert sum(r.dataset == "nq" for r in records) == 13_805
    assert {r.system for r in records} == {"fid", "gpt35", "chatgpt", "gpt4", "newbing"}
    dropped = {}
    for (_, why), n in evouna.dropped.items():
        dropped[why] = dropped.get(why, 0) + n
    assert dropped == {
        "judged answer to an improper question (left out)": 559,
        "not judged (judge null)": 1,
        "judged but no answer (answer null)": 1,
        "empty answer (only whitespace)": 3,
    }


def test_shipped_evouna_is_package_data():
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    patterns = config["options.package_data"]["namesake.data"].split()
    data = ROOT / "namesake" / "data"
    for path in (data / "evouna").iterdir():
        relative = path.relative_to(data).as_posix()
        assert any(fnmatch.fnmatch(relative, p) for p in patterns), relative


def test_split_is_question_disjoint_deterministic_and_even(evouna):
    sides: dict[tuple[str, str], set[str]] = {}
    for r in evouna.records:
        sides.setdefault((r.dataset, squad_normalize(r.question)), set()).add(r.split)
    assert all(len(s) == 1 for s in sides.values())
    for dataset in ("nq", "tq"):
        splits = [next(iter(s)) for (d, _), s in sides.items() if d == dataset]
        assert 0.45 < splits.count("dev") / len(splits) < 0.55
    # a stable hash (not Python's salted hash()): the same on every run and machine
    digest = hashlib.sha256(b"nq\nwho got first nobel prize in physics").digest()
    expected = ("dev", "test")[int.from_bytes(digest[:8], "big") % 2]
    assert judgments.question_split("nq", "Who got the first Nobel Prize in physics?") == expected
    code = (
        "from namesake.wes.scoring.judgments import question_split as s;"
        "print([s('tq', q) for q in ('a', 'b', 'c', 'd', 'e', 'f')])"
    )
    runs = {
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout
        for _ in range(2)
    }
    assert len(runs) == 1


# --- the evaluation ---


def test_binary_metrics_match_sklearn():
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, 300)
    scores = np.round(rng.random(300), 1)  # many ties
    assert roc_auc(labels, scores) == pytest.approx(metrics.roc_auc_score(labels, scores))
    threshold = best_threshold(labels, scores)
    brute = max(
        metrics.accuracy_score(labels, scores >= t) for t in np.concatenate([[-1], scores, [2]])
    )
    assert accuracy_at(labels, scores, threshold) == pytest.approx(brute)
    assert metrics.accuracy_score(labels, scores >= 0.5) == accuracy_at(labels, scores, 0.5)


def _toy(question, candidate, label, split, kind="short", system="fid", dataset="toy"):
    return JudgedAnswer(
        dataset, question, ("gold",), candidate, label, system, kind, split, question
    )


def test_evaluation_on_a_hand_made_case():
    metrics = pytest.importorskip("sklearn.metrics")
    dev = [("d1", 0.1, 0), ("d2", 0.4, 0), ("d3", 0.6, 1), ("d4", 0.9, 1)]
    test = [("t1", 0.2, 0), ("t2", 0.55, 1), ("t3", 0.7, 0), ("t4", 0.3, 1), ("t5", 0.8, 1)]
    records = [_toy(q, q, y, "dev") for q, _, y in dev]
    records += [_toy(q, q, y, "test", "sentence" if q == "t5" else "short") for q, _, y in test]
    table = {q: s for q, s, _ in dev + test}

    def scorer(questions, references, candidates):
        return np.array([table[c] for c in candidates])

    scorer.threshold = 0.25  # a saved scorer's own threshold
    result = evaluate_scorers(records, {"toy_scorer": scorer})
    block = result["datasets"]["toy"]
    assert block["dev_thresholds"]["toy_scorer"] == pytest.approx(0.5)  # midpoint of 0.4 and 0.6
    row = block["groups"]["all"]["scorers"]["toy_scorer"]
    labels = [y for _, _, y in test]
    scores = [s for _, s, _ in test]
    assert row["roc_auc"] == pytest.approx(metrics.roc_auc_score(labels, scores))
    assert row["accuracy"] == pytest.approx(metrics.accuracy_score(labels, np.array(scores) >= 0.5))
    assert row["accuracy_saved"] == pytest.approx(
        metrics.accuracy_score(labels, np.array(scores) >= 0.25)
    )
    lexical = block["groups"]["all"]["scorers"]["lexical_sum"]  # always there, the reference
    assert row["delta_vs_lexical_sum"] == pytest.approx(row["accuracy"] - lexical["accuracy"])

    def kappa(truth, verdicts):  # Cohen's κ by hand: observed against chance agreement
        truth, verdicts = np.asarray(truth, bool), np.asarray(verdicts, bool)
        observed = np.mean(truth == verdicts)
        chance = truth.mean() * verdicts.mean() + (1 - truth.mean()) * (1 - verdicts.mean())
        return (observed - chance) / (1 - chance)

    # at 0.5: verdicts 0 1 1 0 1 against 0 1 0 1 1; at the saved 0.25: 0 1 1 1 1
    assert row["kappa"] == pytest.approx(kappa(labels, np.array(scores) >= 0.5))
    assert row["kappa"] == pytest.approx(1 / 6)
    assert row["kappa_saved"] == pytest.approx(kappa(labels, np.array(scores) >= 0.25))
    assert lexical["kappa"] is not None and "kappa_saved" not in lexical  # no saved threshold
    short = block["groups"]["short"]
    assert short["n"] == 8 and short["n_test"] == 4
    assert short["scorers"]["toy_scorer"]["roc_auc"] == pytest.approx(
        metrics.roc_auc_score(labels[:4], scores[:4])
    )
    sentence = block["groups"]["sentence"]["scorers"]["toy_scorer"]
    assert sentence["roc_auc"] is None and sentence["kappa"] is None  # one answer, one class
    assert "system:fid" in block["groups"]
    json.dumps(result, allow_nan=False)
    text = markdown_tables(result)
    assert "| toy_scorer | " in text and "| lexical_sum | " in text and "accuracy @ saved" in text
    assert "| κ |" in text and "κ @ saved" in text


def test_thresholds_are_chosen_per_dataset():
    records = [
        _toy("a1", "a1", 0, "dev", dataset="a"),
        _toy("a2", "a2", 1, "dev", dataset="a"),
        _toy("a3", "a3", 1, "test", dataset="a"),
        _toy("b1", "b1", 0, "dev", dataset="b"),
        _toy("b2", "b2", 1, "dev", dataset="b"),
        _toy("b3", "b3", 1, "test", dataset="b"),
    ]
    table = {"a1": 0.1, "a2": 0.2, "a3": 0.2, "b1": 0.8, "b2": 0.9, "b3": 0.9}

    def scorer(questions, references, candidates):
        return np.array([table[c] for c in candidates])

    result = evaluate_scorers(records, {"s": scorer})
    assert result["datasets"]["a"]["dev_thresholds"]["s"] == pytest.approx(0.15)
    assert result["datasets"]["b"]["dev_thresholds"]["s"] == pytest.approx(0.85)
    assert result["datasets"]["all"]["groups"]["all"]["scorers"]["s"]["accuracy"] == 1.0


# --- the classic metrics ---

PARAPHRASES = [
    # (gold answers, a correct answer phrased differently, a wrong answer)
    (["Barack Obama", "Obama"], "It was Barack Obama, in 2009.", "George W. Bush"),
    (["New York City"], "new york city", "Los Angeles"),
    (["Mount Everest", "Everest"], "Everest is the highest.", "K2 is the highest."),
]


@pytest.mark.parametrize("name", CLASSIC_METRICS)
def test_each_metric_scores_a_correct_paraphrase_above_a_wrong_answer(name):
    why = available_metrics()[name]
    if why is not None:
        pytest.skip(f"{name} unavailable here: {why}")
    scorer = make_scorer(name)
    references = [gold for gold, _, _ in PARAPHRASES]
    questions = ["q"] * len(PARAPHRASES)
    right = scorer(questions, references, [c for _, c, _ in PARAPHRASES])
    wrong = scorer(questions, references, [w for _, _, w in PARAPHRASES])
    if name == "exact_match":  # only the same string after normalisation counts
        assert right[1] > wrong[1]
    else:
        assert (right > wrong).all(), (right, wrong)


def test_judging_without_meteor_never_loads_wordnet():
    """Loading WordNet takes seconds (make demo judged twice without METEOR and waited for
    it each time): only METEOR's availability reads it."""
    code = (
        "import sys; from namesake.wes.scoring.classic_metrics import classic_scorers;"
        "scorers, skipped = classic_scorers(['token_f1', 'lexical_sum', 'exact_match']);"
        "print(sorted(scorers), sorted(skipped), 'nltk' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['exact_match', 'lexical_sum', 'token_f1'] [] False"
    with pytest.raises(ValueError, match="no metric 'meteorr'"):
        available_metrics(["token_f1", "meteorr"])


def test_meteor_uses_wordnet_synonyms():
    why = available_metrics()["meteor"]
    if why is not None:
        pytest.skip(f"METEOR unavailable here: {why}")
    scores = make_scorer("meteor")(["q", "q"], [["child"], ["child"]], ["kid", "dog"])
    assert scores[0] > 0 and scores[1] == 0


def test_lexical_sum_reproduces_evouna_auc(evouna):
    labels = np.array([r.label for r in evouna.records])
    datasets = np.array([r.dataset for r in evouna.records])
    scores = LexicalScorer("lexical_sum")(
        [r.question for r in evouna.records],
        [r.references for r in evouna.records],
        [r.candidate for r in evouna.records],
    )
    assert roc_auc(labels[datasets == "nq"], scores[datasets == "nq"]) >= 0.94
    assert roc_auc(labels[datasets == "tq"], scores[datasets == "tq"]) >= 0.97


# --- the command ---


def test_judge_help_imports_nothing_heavy():
    code = (
        "import sys; from namesake.cli import build_parser;"
        "build_parser().parse_args(['wes', 'judge', '--max-questions', '3']);"
        "heavy = {'torch', 'transformers', 'sacrebleu', 'bert_score', 'nltk', 'rouge_score',"
        " 'sklearn', 'sentence_transformers'};"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_judge_command_end_to_end(tmp_path, capsys):
    from namesake.cli import main

    out = tmp_path / "judge.json"
    main(["wes", "judge", "--max-questions", "25", "--out", str(out)])
    printed = capsys.readouterr().out
    result = json.loads(out.read_text())
    assert set(result["datasets"]) == {"nq", "tq", "all"}
    assert result["inputs"] == "bundled EVOUNA"
    ran = [n for n, s in result["scorers"].items() if s["asked"]]
    for name in ("exact_match", "token_f1", "token_recall", "containment", "lexical_sum"):
        assert name in ran
    for name, why in available_metrics().items():
        assert name in ran or name in result["left_out"], (name, why)
    groups = result["datasets"]["nq"]["groups"]
    assert {"all", "short", "sentence", "system:fid", "system:gpt4"} <= set(groups)
    assert groups["all"]["n"] <= 25 * 5
    for name in ran:
        assert f"| {name} | " in printed
    assert "### NQ:" in printed and "### TQ:" in printed and "dev threshold" in printed


def test_judge_command_on_a_plain_file(tmp_path, capsys):
    from namesake.cli import main

    rows = []
    for i in range(40):
        rows.append(
            {"question": f"q{i}", "references": [f"gold {i}"], "candidate": f"gold {i}", "label": 1}
        )
        rows.append(
            {"question": f"q{i}", "references": [f"gold {i}"], "candidate": "nothing", "label": 0}
        )
    path = write_jsonl(tmp_path / "toy.jsonl", rows)
    main(["wes", "judge", "--judged", str(path), "--metrics", "lexical_sum", "token_f1"])
    printed = capsys.readouterr().out
    assert "### TOY: 80 judged answers" in printed
    assert "| lexical_sum | 1.000 |" in printed
    with pytest.raises(SystemExit, match="no metric nope"):
        main(["wes", "judge", "--judged", str(path), "--metrics", "nope"])
