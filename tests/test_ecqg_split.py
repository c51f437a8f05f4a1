"""namesake.ecqg.dpr.split and `namesake ecqg split-gold`: held-out questions by passage."""

import json
import math
import random
from pathlib import Path

import pytest

from namesake.cli import main
from namesake.ecqg.dpr.split import SplitError, positive_passages, split_by_passage
from namesake.outputs import FILES_RECORD

GOLD = Path(__file__).parent.parent / "training" / "data" / "tiny_dpr_train.json"


def passages_of(items) -> set:
    return set().union(*(positive_passages(item, i) for i, item in enumerate(items)))


def question(text, *passages):
    return {
        "question": text,
        "answers": ["x"],
        "positive_ctxs": [{"title": title, "text": body} for title, body in passages],
        "hard_negative_ctxs": [],
    }


def crafted():
    """Ten passages, one question each, plus a question for every pair of passages: with
    three held out, 21 of the 45 pair questions straddle the split."""
    passages = [(f"P{i}", f"passage number {i}") for i in range(10)]
    single = [question(f"about {title}?", (title, text)) for title, text in passages]
    pairs = [
        question(f"about {a[0]} and {b[0]}?", a, b)
        for i, a in enumerate(passages)
        for b in passages[i + 1 :]
    ]
    return single, pairs


def test_gold_file_split_disjoint_by_passage():
    items = json.loads(GOLD.read_text())
    train, held_out, dropped = split_by_passage(items, held_out_fraction=0.3, seed=0)
    assert len(train) + len(held_out) + len(dropped) == len(items) == 40
    assert not dropped  # one positive per question: nothing can straddle
    assert train and held_out
    assert not passages_of(train) & passages_of(held_out)
    assert len(passages_of(held_out)) == math.ceil(0.3 * 14)
    assert len(passages_of(train)) == 14 - math.ceil(0.3 * 14)
    assert all(item in items for item in train + held_out)  # the items themselves


def test_straddling_questions_are_dropped_and_returned():
    single, pairs = crafted()
    train, held_out, dropped = split_by_passage(single + pairs, held_out_fraction=0.3, seed=1)
    held_out_passages = passages_of(q for q in single if q in held_out)
    train_passages = passages_of(q for q in single if q in train)
    assert len(held_out_passages) == 3 and len(train_passages) == 7
    for item in pairs:
        mine = positive_passages(item, 0)
        if mine <= held_out_passages:
            assert item in held_out
        elif mine <= train_passages:
            assert item in train
        else:
            assert item in dropped
    assert len(dropped) == 3 * 7
    assert not passages_of(train) & passages_of(held_out)


def test_passages_compared_with_whitespace_normalised():
    items = [
        question("a?", ("Paris", "Paris is  the capital.")),
        question("b?", ("Paris ", "Paris is the\ncapital.")),
        question("c?", ("Rome", "Rome is a city.")),
    ]
    train, held_out, dropped = split_by_passage(items, held_out_fraction=0.5)
    assert len(passages_of(items)) == 2 and not dropped
    assert {len(train), len(held_out)} == {1, 2}  # a? and b? stay together


def test_split_depends_on_seed_not_item_order():
    items = json.loads(GOLD.read_text())
    first = split_by_passage(items, seed=3)
    shuffled = items[:]
    random.Random(0).shuffle(shuffled)
    again = split_by_passage(shuffled, seed=3)
    questions = [{q["question"] for q in side} for side in first]
    assert [{q["question"] for q in side} for side in again] == questions
    held_out_by_seed = {
        frozenset(q["question"] for q in split_by_passage(items, seed=seed).held_out)
        for seed in range(5)
    }
    assert len(held_out_by_seed) > 1


@pytest.mark.parametrize("fraction", [0, 1, -0.1, 1.5])
def test_fraction_outside_zero_one_is_an_error(fraction):
    with pytest.raises(SplitError, match="between 0 and 1"):
        split_by_passage(json.loads(GOLD.read_text()), held_out_fraction=fraction)


def test_empty_side_and_missing_positives_are_errors():
    one_passage = [question("a?", ("P", "text")), question("b?", ("P", "text"))]
    with pytest.raises(SplitError, match="no training question left"):
        split_by_passage(one_passage, held_out_fraction=0.5)
    single, pairs = crafted()
    # Pair questions only, 9 of 10 passages held out: the one training passage always has a
    # held-out partner, so every pair is held out or straddles, and none is left to train on.
    with pytest.raises(SplitError, match="no training question left"):
        split_by_passage(pairs, held_out_fraction=0.9)
    with pytest.raises(SplitError, match="item 1: no positive passage"):
        split_by_passage([single[0], {"question": "q", "positive_ctxs": []}])


def test_cli_split_gold_writes_items_unchanged_and_counts(tmp_path, capsys):
    single, pairs = crafted()
    source = tmp_path / "gold.json"
    items = single + pairs
    source.write_text(json.dumps(items, indent=1))
    train_out, held_out_out = tmp_path / "out" / "train.json", tmp_path / "out" / "held.json"
    main(["ecqg", "split-gold", "--input", str(source), "--train-out", str(train_out),
          "--held-out-out", str(held_out_out), "--held-out-fraction", "0.3",
          "--seed", "1"])  # fmt: skip
    train, held_out = json.loads(train_out.read_text()), json.loads(held_out_out.read_text())
    expected = split_by_passage(items, held_out_fraction=0.3, seed=1)
    assert train == expected.train and held_out == expected.held_out  # input order, unchanged
    printed = capsys.readouterr().out.splitlines()
    assert printed == [
        f"train: {len(train)} questions over 7 passages -> {train_out}",
        f"held_out: {len(held_out)} questions over 3 passages -> {held_out_out}",
        "dropped: 21 questions with positives on both sides",
    ]
    assert sorted(p.name for p in train_out.parent.iterdir()) == [
        FILES_RECORD,
        "held.json",
        "train.json",
    ]


def test_cli_split_gold_errors_name_the_input(tmp_path):
    common = ["--train-out", str(tmp_path / "t.json"), "--held-out-out", str(tmp_path / "h.json")]
    with pytest.raises(SystemExit, match=f"{GOLD}: the held-out fraction must be between"):
        main(["ecqg", "split-gold", "--input", str(GOLD), "--held-out-fraction", "1", *common])
    broken = tmp_path / "broken.json"
    broken.write_text('{"question": "not a list"}')
    with pytest.raises(SystemExit, match=f"{broken}: expected a JSON list"):
        main(["ecqg", "split-gold", "--input", str(broken), *common])
    assert not (tmp_path / "t.json").exists()
