"""Behaviour tests of the metric's default scorer, CheckList style (Ribeiro et al., ACL 2020):
hand-written answers whose verdict nobody disputes, one capability per group, each judged at
the default's saved threshold with its question and without it (`compute(predictions,
references)`, the call every `evaluate` user writes first). The first four cases are the
ones that fooled namesake-wes-scorer-v1 (issue 25); six groups of five cases each, the
classes namesake-wes-scorer-v3 got wrong (issue 37); the last four groups, the classes
namesake-wes-scorer-v4 got wrong when written with other words (issue 53), in words that are
not in the development half of the generated cases (namesake.wes.scoring.behaviour_cases),
each with a right answer of the same shape. The held-out half of those generated cases is
judged at the end."""

from pathlib import Path

import evaluate
import pytest

from namesake.wes.scoring.behaviour_cases import HALVES, cases, halves

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
    # issue 53: v4's classes in other words; the gold answer named, another entity asserted
    "belief corrected, in other words": [
        (
            "Who invented the light bulb?",
            ["Thomas Edison"],
            "Many credit Thomas Edison, yet in truth it was Joseph Swan.",
            WRONG,
        ),
        (
            "What is the capital of Australia?",
            ["Canberra"],
            "Visitors often assume Canberra; the real capital is Sydney.",
            WRONG,
        ),
        (
            "Who painted The Last Supper?",
            ["Leonardo da Vinci"],
            "It is usually attributed to Leonardo da Vinci, although Titian actually painted it.",
            WRONG,
        ),
        (
            "What is the largest ocean?",
            ["Pacific"],
            "Many would name the Pacific; in reality it is the Atlantic.",
            WRONG,
        ),
        (
            "Who composed the Moonlight Sonata?",
            ["Ludwig van Beethoven"],
            "Most listeners think of Beethoven, but in fact Chopin wrote it.",
            WRONG,
        ),
        (
            "Who composed the Moonlight Sonata?",
            ["Ludwig van Beethoven"],
            "Ludwig van Beethoven, although many listeners think of Chopin.",
            RIGHT,
        ),
        (
            "What is the capital of Australia?",
            ["Canberra"],
            "Canberra, even though visitors often assume Sydney.",
            RIGHT,
        ),
    ],
    "denial, in other words": [
        (
            "Who wrote Don Quixote?",
            ["Miguel de Cervantes"],
            "Miguel de Cervantes wasn't the author; Lope de Vega was.",
            WRONG,
        ),
        (
            "What is the capital of Canada?",
            ["Ottawa"],
            "Absolutely not Ottawa, but Montreal.",
            WRONG,
        ),
        (
            "Who was the first man on the Moon?",
            ["Neil Armstrong"],
            "Buzz Aldrin, clearly not Neil Armstrong.",
            WRONG,
        ),
        (
            "Which planet is known as the Red Planet?",
            ["Mars"],
            "The answer isn't Mars: it's Jupiter.",
            WRONG,
        ),
        (
            "Who formulated the law of universal gravitation?",
            ["Isaac Newton"],
            "It wasn't Isaac Newton who found it, it was Galileo.",
            WRONG,
        ),
        (
            "Who was the first man on the Moon?",
            ["Neil Armstrong"],
            "Neil Armstrong, clearly not Buzz Aldrin.",
            RIGHT,
        ),
    ],
    "order or comparison, in other words": [
        (
            "Who was the first person to reach the North Pole?",
            ["Robert Peary"],
            "Frederick Cook, trailing Robert Peary by a year.",
            WRONG,
        ),
        (
            "What is the longest river in the world?",
            ["Nile"],
            "The Amazon, second only to the Nile.",
            WRONG,
        ),
        (
            "Who won the men's 100 m at the 2008 Olympics?",
            ["Usain Bolt"],
            "Richard Thompson, finishing in the wake of Usain Bolt.",
            WRONG,
        ),
        (
            "Who published the field equations of general relativity first?",
            ["Albert Einstein"],
            "David Hilbert, days prior to Albert Einstein.",
            WRONG,
        ),
        (
            "Who reached the South Pole first?",
            ["Roald Amundsen"],
            "Robert Scott got there following Roald Amundsen.",
            WRONG,
        ),
        (
            "Who was the first person to reach the North Pole?",
            ["Robert Peary"],
            "Robert Peary, with Frederick Cook trailing by a year.",
            RIGHT,
        ),
    ],
    "relative clause, in other words": [
        (
            "Which country won the 2010 FIFA World Cup?",
            ["Spain"],
            "The Netherlands, who lost the final to Spain.",
            WRONG,
        ),
        (
            "Who painted Guernica?",
            ["Pablo Picasso"],
            "Georges Braque, whose friend Pablo Picasso shared his studio.",
            WRONG,
        ),
        (
            "Who was the first president of the United States?",
            ["George Washington"],
            "It was John Adams, who served as vice president under George Washington.",
            WRONG,
        ),
        (
            "Which city hosted the 2012 Summer Olympics?",
            ["London"],
            "Paris, the city that lost the bid to London.",
            WRONG,
        ),
        (
            "Who directed Titanic?",
            ["James Cameron"],
            "Ridley Scott, with whom James Cameron is often compared.",
            WRONG,
        ),
        (
            "Which country won the 2010 FIFA World Cup?",
            ["Spain"],
            "Spain, who beat the Netherlands in the final.",
            RIGHT,
        ),
        (
            "Which country won the 1998 FIFA World Cup?",
            ["France"],
            "Brazil, which won its semi-final before losing to France.",
            WRONG,
        ),
    ],
    # the shapes of EVOUNA dev-a's right answers that v5 first misread (other words): a
    # clause that gives the gold answer as the asserted entity's counterpart is no rival's
    "relative clause that names the counterpart": [
        (
            "Who voiced the villain in The Lion King?",
            ["Jeremy Irons"],
            "The villain is Scar, who is voiced by Jeremy Irons.",
            RIGHT,
        ),
        (
            "Who played the title role in Gladiator?",
            ["Russell Crowe"],
            "Maximus, played by Russell Crowe.",
            RIGHT,
        ),
        (
            "Who wrote the novel Nineteen Eighty-Four?",
            ["George Orwell"],
            "Eric Blair, who wrote it under the pen name George Orwell.",
            RIGHT,
        ),
    ],
    # the shapes of EVOUNA dev-b1's right answers that v5 misread (other words): what
    # describes the asserted entity, a naming, and the question's own verb of saying
    "description, naming and the asked saying": [
        (
            "Which European country ruled the coast of Sri Lanka in 1700?",
            ["Netherlands"],
            "Dutch Ceylon, which was a colony of the Netherlands.",
            RIGHT,
        ),
        (
            "In which language did the first Nobel laureate in literature write?",
            ["French"],
            "The first laureate was Sully Prudhomme, a poet who wrote in the French language.",
            RIGHT,
        ),
        (
            "the first booker prize went to an author who wrote in which language",
            ["English"],
            "The first winner was P. H. Newby, an author who wrote in the English language.",
            RIGHT,
        ),
        (
            "who is the youngest child in the incredibles",
            ["Jack-Jack"],
            "The baby of the family in The Incredibles is named Jack-Jack.",
            RIGHT,
        ),
        (
            'In which film did Bogart say "Here\'s looking at you, kid"?',
            ["Casablanca"],
            'Humphrey Bogart said "Here\'s looking at you, kid" in the film "Casablanca" (1942).',
            RIGHT,
        ),
        (
            'In which film did Bogart say "Here\'s looking at you, kid"?',
            ["Casablanca"],
            'In the film "Casablanca" (1942), actor Humphrey Bogart famously says the line'
            ' "Here\'s looking at you, kid."',
            RIGHT,
        ),
        # a description still compares and denies
        (
            "Which country won the 1998 FIFA World Cup?",
            ["France"],
            "Brazil, which is older than France.",
            WRONG,
        ),
        (
            "Which country won the 1998 FIFA World Cup?",
            ["France"],
            "Brazil, which was not a colony of France.",
            WRONG,
        ),
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


# issue 53: the held-out half of the generated cases (frames and cue words never used while
# the rules were written), judged once; at least 95% right with and without questions.
HELD_OUT_TARGET = 0.95


def test_the_generated_halves_are_disjoint_and_fixed():
    for fields in halves().values():
        for split in fields.values():
            assert set(split["development"]).isdisjoint(split["held-out"])
            assert split["held-out"]  # every list has a held-out half
    assert cases("held-out") == cases("held-out")  # drawn with a fixed seed
    assert set(HALVES) == {"development", "held-out"}


@pytest.mark.parametrize("with_question", [True, False], ids=["with question", "without"])
def test_held_out_generated_cases_are_judged_right(metric, with_question):
    held = cases("held-out")
    kwargs = {"questions": [c.question for c in held]} if with_question else {}
    result = metric.compute(
        predictions=[c.answer for c in held],
        references=[list(c.references) for c in held],
        **kwargs,
    )
    wrong = [
        (round(score, 3), c.right, c.answer)
        for c, score in zip(held, result["scores"], strict=True)
        if (score >= result["threshold"]) != c.right
    ]
    accuracy = 1 - len(wrong) / len(held)
    assert accuracy >= HELD_OUT_TARGET, f"{accuracy:.3f} of {len(held)}; wrong: {wrong[:20]}"


@pytest.mark.parametrize("with_question", [True, False], ids=["with question", "without"])
def test_a_description_a_naming_and_the_asked_saying_keep_the_gold_answer(metric, with_question):
    """The right answers of the group above keep every gold mention: version 5 reads them
    as version 4 does (`asserted_text` is None), not merely to a score above the threshold
    (dropping "Netherlands" from "Dutch Ceylon, ..." still leaves "Dutch")."""
    asserted_text = _metric_module(metric).asserted_text
    for question, references, answer, right in CASES["description, naming and the asked saying"]:
        if right:
            assert asserted_text(question if with_question else None, references, answer) is None, (
                answer
            )


def _metric_module(metric):
    """The metric's own module (evaluate loads it from a copy of metrics/wes_similarity)."""
    import sys

    return sys.modules[type(metric).__module__]


def test_a_clause_the_question_asks_about_is_asserted(metric):
    """With the question, a relative clause whose verb the question asks with answers it
    ("who plays ..." and "..., whom Hugh Laurie plays"); without it, the clause only
    mentions its subject."""
    question = "Who plays the doctor in House?"
    answer = "The doctor is Gregory House, whom Hugh Laurie plays."
    with_q = metric.compute(
        predictions=[answer], references=[["Hugh Laurie"]], questions=[question]
    )
    without = metric.compute(predictions=[answer], references=[["Hugh Laurie"]])
    assert with_q["scores"][0] >= with_q["threshold"] > without["scores"][0]
