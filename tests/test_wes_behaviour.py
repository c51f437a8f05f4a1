"""Behaviour tests of the metric's default scorer, CheckList style (Ribeiro et al., ACL 2020):
hand-written answers whose verdict nobody disputes, one capability per group, each judged at
the default's saved threshold with its question and without it (`compute(predictions,
references)`, the call every `evaluate` user writes first). The first four cases are the
ones that fooled namesake-wes-scorer-v1 (issue 25)."""

from pathlib import Path

import evaluate
import pytest

MODULE_DIR = Path(__file__).parent.parent / "metrics" / "wes_similarity"
RIGHT, WRONG = True, False
LARGEST_US_CITY = "Which city is the largest in the United States?"
CAPITAL_OF_FRANCE = "What is the capital of France?"
PENICILLIN = "Who discovered penicillin?"
MONA_LISA = "Who painted the Mona Lisa?"

CASES = {
    "the gold answer itself": [
        (LARGEST_US_CITY, ["New York City"], "New York City", RIGHT),
        (CAPITAL_OF_FRANCE, ["Paris"], "Paris", RIGHT),
    ],
    "a wrong name of the same type": [
        (LARGEST_US_CITY, ["New York City"], "Boston", WRONG),
        ("What is the capital of Australia?", ["Canberra"], "Sydney", WRONG),
        ("Who wrote Pride and Prejudice?", ["Jane Austen"], "Charlotte Brontë", WRONG),
        (MONA_LISA, ["Leonardo da Vinci"], "Michelangelo", WRONG),
    ],
    "negation": [
        (
            LARGEST_US_CITY,
            ["New York City"],
            "The answer is definitely not New York City, it is Boston.",
            WRONG,
        ),
        (CAPITAL_OF_FRANCE, ["Paris"], "It was not Paris but Lyon.", WRONG),
        (MONA_LISA, ["Leonardo da Vinci"], "It wasn't Leonardo da Vinci, it was Raphael.", WRONG),
    ],
    "alternatives": [
        (CAPITAL_OF_FRANCE, ["Paris"], "Paris or Lyon", WRONG),
        (PENICILLIN, ["Alexander Fleming"], "Either Alexander Fleming or Louis Pasteur.", WRONG),
    ],
    "refusal": [
        (CAPITAL_OF_FRANCE, ["Paris"], "I don't know.", WRONG),
        (PENICILLIN, ["Alexander Fleming"], "I'm sorry, I cannot answer that question.", WRONG),
    ],
    "the gold answer in a longer correct sentence": [
        (
            LARGEST_US_CITY,
            ["New York City"],
            "The largest city in the United States is New York City.",
            RIGHT,
        ),
        (
            PENICILLIN,
            ["Alexander Fleming"],
            "Penicillin was discovered by Alexander Fleming in 1928.",
            RIGHT,
        ),
    ],
    "aliases and abbreviations": [
        (LARGEST_US_CITY, ["New York City"], "NYC", RIGHT),
        ("Which country has won the most Nobel Prizes?", ["United States"], "U.S.", RIGHT),
    ],
    "numbers and dates written another way": [
        ("How many moons does Mars have?", ["2"], "two", RIGHT),
        ("How many players does a football team field?", ["eleven"], "11", RIGHT),
        ("When did Apollo 11 land on the Moon?", ["July 20, 1969"], "20 July 1969", RIGHT),
    ],
}
ROWS = [(group, *case) for group, cases in CASES.items() for case in cases]


def params():
    for row in ROWS:
        for with_question in (True, False):
            label = "with question" if with_question else "without"
            yield pytest.param(*row, with_question, id=f"{row[3][:40]}-{label}")


@pytest.fixture(scope="module")
def metric():
    return evaluate.load(str(MODULE_DIR))


@pytest.fixture(scope="module")
def verdicts(metric):
    """{(answer, with_question): (score, threshold)} for every case, in two metric calls."""
    questions = [q for _, q, _, _, _ in ROWS]
    references = [refs for _, _, refs, _, _ in ROWS]
    answers = [a for _, _, _, a, _ in ROWS]
    out = {}
    for with_question in (True, False):
        kwargs = {"questions": questions} if with_question else {}
        result = metric.compute(predictions=answers, references=references, **kwargs)
        assert result["model_source"] == "default"
        for answer, score in zip(answers, result["scores"], strict=True):
            out[(answer, with_question)] = (score, result["threshold"])
    return out


@pytest.mark.parametrize(
    ("group", "question", "references", "answer", "right", "with_question"), list(params())
)
def test_default_gets_the_verdict_right(
    verdicts, group, question, references, answer, right, with_question
):
    score, threshold = verdicts[(answer, with_question)]
    verdict = "right" if right else "wrong"
    assert (score >= threshold) == right, (
        f"{group}: {answer!r} for {references} is {verdict}, scored {score:.3f} "
        f"(threshold {threshold:.3f})"
    )
