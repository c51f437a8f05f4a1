"""Behaviour tests of the metric's default scorer, CheckList style (Ribeiro et al., ACL 2020):
hand-written answers whose verdict nobody disputes, one capability per group, each judged at
the default's saved threshold with its question and without it (`compute(predictions,
references)`, the call every `evaluate` user writes first). The first four cases are the
ones that fooled namesake-wes-scorer-v1 (issue 25); the last six groups, five cases each, the
classes namesake-wes-scorer-v3 got wrong (issue 37)."""

from pathlib import Path

import evaluate
import pytest

MODULE_DIR = Path(__file__).parent.parent / "metrics" / "wes_similarity"
RIGHT, WRONG = True, False
LARGEST_US_CITY = "Which city is the largest in the United States?"
CAPITAL_OF_FRANCE = "What is the capital of France?"
PENICILLIN = "Who discovered penicillin?"
MONA_LISA = "Who painted the Mona Lisa?"
SOLAR_SYSTEM = "What is the largest planet in the Solar System?"
PRIDE_AND_PREJUDICE = "Who wrote Pride and Prejudice?"
SOUTH_POLE = "Who was the first person to reach the South Pole?"

CASES = {
    "the gold answer itself": [
        (LARGEST_US_CITY, ["New York City"], "New York City", RIGHT),
        (CAPITAL_OF_FRANCE, ["Paris"], "Paris", RIGHT),
    ],
    "a wrong name of the same type": [
        (LARGEST_US_CITY, ["New York City"], "Boston", WRONG),
        ("What is the capital of Australia?", ["Canberra"], "Sydney", WRONG),
        (PRIDE_AND_PREJUDICE, ["Jane Austen"], "Charlotte Brontë", WRONG),
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
    # issue 37: classes namesake-wes-scorer-v3 got wrong; each class several times over
    "a belief corrected, the answer committing to another entity": [
        (
            "What is the capital of Canada?",
            ["Ottawa"],
            "People often say Ottawa, but it is actually Toronto.",
            WRONG,
        ),
        (
            "What is the capital of Australia?",
            ["Canberra"],
            "Many people think it is Canberra, but the capital is actually Sydney.",
            WRONG,
        ),
        (
            "Who invented the telephone?",
            ["Alexander Graham Bell"],
            "It is commonly said that Alexander Graham Bell invented it, but in fact it was "
            "Antonio Meucci.",
            WRONG,
        ),
        (
            SOLAR_SYSTEM,
            ["Jupiter"],
            "Most people believe it is Jupiter; however, the answer is Saturn.",
            WRONG,
        ),
        (
            MONA_LISA,
            ["Leonardo da Vinci"],
            "It is often claimed to be Leonardo da Vinci, but it was really painted by Raphael.",
            WRONG,
        ),
    ],
    "the right entity named only to deny the property": [
        ("Where is the Prado Museum?", ["Madrid"], "It is not in Madrid.", WRONG),
        (MONA_LISA, ["Leonardo da Vinci"], "It was not painted by Leonardo da Vinci.", WRONG),
        (PENICILLIN, ["Alexander Fleming"], "Alexander Fleming did not discover it.", WRONG),
        ("Where was Napoleon born?", ["Corsica"], "Napoleon was not born in Corsica.", WRONG),
        (PRIDE_AND_PREJUDICE, ["Jane Austen"], "Jane Austen is not the author.", WRONG),
    ],
    "order or comparison: the gold entity named as the other one": [
        (
            SOUTH_POLE,
            ["Roald Amundsen"],
            "Robert Falcon Scott, a month after Roald Amundsen.",
            WRONG,
        ),
        (
            "Who was the first person to walk on the Moon?",
            ["Neil Armstrong"],
            "Buzz Aldrin, who stepped out after Neil Armstrong.",
            WRONG,
        ),
        (
            "What is the longest river in the world?",
            ["Nile"],
            "The Amazon, slightly shorter than the Nile.",
            WRONG,
        ),
        (SOLAR_SYSTEM, ["Jupiter"], "Saturn, the second largest after Jupiter.", WRONG),
        (
            "Who was the first President of the United States?",
            ["George Washington"],
            "John Adams, who served after George Washington.",
            WRONG,
        ),
    ],
    "a number word for another number": [
        ("How many legs does a spider have?", ["eight"], "nine", WRONG),
        ("How many moons does Mars have?", ["2"], "three", WRONG),
        ("How many players are on a cricket team?", ["eleven"], "twelve", WRONG),
        ("How many continents are there?", ["seven"], "six", WRONG),
        ("How many sides does a hexagon have?", ["six"], "It has eight sides.", WRONG),
    ],
    "the same number in words or digits": [
        ("In which year was The Matrix released?", ["1999"], "nineteen ninety-nine", RIGHT),
        ("When was the Battle of Hastings?", ["1066"], "ten sixty-six", RIGHT),
        (
            "When was the Declaration of Independence signed?",
            ["1776"],
            "seventeen seventy-six",
            RIGHT,
        ),
        ("How many keys does a piano have?", ["eighty-eight"], "88", RIGHT),
        (
            "How many bones are in the adult human body?",
            ["206"],
            "two hundred and six",
            RIGHT,
        ),
    ],
    "a surname alone for a person": [
        ("Who discovered polonium?", ["Marie Curie"], "Curie", RIGHT),
        ("Who developed the theory of relativity?", ["Albert Einstein"], "Einstein", RIGHT),
        (PENICILLIN, ["Alexander Fleming"], "Fleming", RIGHT),
        (PRIDE_AND_PREJUDICE, ["Jane Austen"], "Austen", RIGHT),
        (SOUTH_POLE, ["Roald Amundsen"], "Amundsen", RIGHT),
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
