"""Generated behaviour cases for the WES answer scorer (issue 53): answers that name two
entities of one kind, the gold answer and another, and assert one of them. The verdict is
settled by which one the answer asserts, never by the words around them.

Four classes, each from frames (where the entities and cue words go) and cue words:

- **belief corrected**: a belief reported and corrected ("People think it is K2, but it is
  actually Mount Everest.") or conceded after the answer ("Mount Everest, though many
  believe K2.");
- **denial**: one entity denied, the other asserted ("It was not K2; it was Mount
  Everest.");
- **order or comparison**: the answer named with the other as the point of comparison
  ("Elisha Gray, hours ahead of Alexander Graham Bell.");
- **relative clause**: the other named inside a relative clause ("Brazil, which defeated
  France earlier.").

Every frame yields a WRONG case (the other entity asserted, the gold one mentioned) and a
RIGHT one of the same shape (the gold one asserted, the other mentioned), so that no rule
wins by rejecting every sentence with a cue.

**The split.** Each class's frames and each of its cue lists are cut in two halves by a
fixed seeded rule (`split`: sorted by a SHA-256 of the seed and the item, the first half
for development), fixed before any rule of the scorer was written (see the commit that
added this module). Rules are developed against `cases("development")` only;
`cases("held-out")` (frames and cue words never seen while developing) measures whether a
rule generalises beyond its own words.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass

SEED = "issue-53"
HALVES = ("development", "held-out")
RIGHT, WRONG = True, False

# (question, gold answer, another entity of the same kind that is not the answer)
FACTS = [
    ("Who invented the telephone?", "Alexander Graham Bell", "Elisha Gray"),
    ("What is the highest mountain on Earth?", "Mount Everest", "K2"),
    ("Who painted the ceiling of the Sistine Chapel?", "Michelangelo", "Raphael"),
    ("Which country won the 1998 FIFA World Cup?", "France", "Brazil"),
    ("Who wrote Hamlet?", "William Shakespeare", "Christopher Marlowe"),
    ("What is the capital of Turkey?", "Ankara", "Istanbul"),
    ("Who was the first person in space?", "Yuri Gagarin", "Alan Shepard"),
    ("Which planet is closest to the Sun?", "Mercury", "Venus"),
    ("Who composed The Four Seasons?", "Antonio Vivaldi", "Johann Sebastian Bach"),
    ("Who developed the first polio vaccine?", "Jonas Salk", "Albert Sabin"),
    ("Which city hosted the 2000 Summer Olympics?", "Sydney", "Melbourne"),
    (
        "Who proposed the theory of evolution by natural selection?",
        "Charles Darwin",
        "Alfred Russel Wallace",
    ),
    ("What is the longest river in Africa?", "Nile", "Congo"),
    ("Who wrote War and Peace?", "Leo Tolstoy", "Fyodor Dostoevsky"),
    ("Which team won the 2014 FIFA World Cup?", "Germany", "Argentina"),
    ("What is the largest desert in Asia?", "Gobi", "Taklamakan"),
    ("Who sculpted The Thinker?", "Auguste Rodin", "Camille Claudel"),
    ("Who directed Jaws?", "Steven Spielberg", "George Lucas"),
    ("Which band recorded Abbey Road?", "The Beatles", "The Rolling Stones"),
    ("What is the capital of Brazil?", "Brasília", "Rio de Janeiro"),
    ("Who discovered radium?", "Marie Curie", "Henri Becquerel"),
    ("Which river flows through Paris?", "Seine", "Loire"),
    ("Who painted The Starry Night?", "Vincent van Gogh", "Paul Gauguin"),
    (
        "Who was the first woman to fly solo across the Atlantic?",
        "Amelia Earhart",
        "Jacqueline Cochran",
    ),
    ("What is the capital of Switzerland?", "Bern", "Zurich"),
    ("Which company makes the iPhone?", "Apple", "Samsung"),
]

# Per class: frames ({A}: the entity mentioned, {B}: the one asserted; other fields are cue
# slots) and the cue lists that fill the slots.
CLASSES = {
    "belief corrected": {
        "frames": [
            "{Belief} {A}, {correction} {B}.",
            "{Belief} {A}; {correction} {B}.",
            "{Belief} {A}. {Correction} {B}.",
            "{B}, {concession} {belief} {A}.",
            "{B}; {concession} {belief} {A}.",
            "The answer is {B}, {concession} {belief} {A}.",
        ],
        "belief": [
            "people think it is",
            "many believe it was",
            "folk believe",
            "it is often credited to",
            "many attribute it to",
            "a common myth names",
            "some say",
            "it is widely assumed to be",
            "textbooks often claim it was",
            "it is popularly ascribed to",
            "most people guess",
            "tourists usually assume it is",
            "it is commonly said to be",
            "quiz books often list",
            "many mistakenly name",
            "fans tend to cite",
        ],
        "correction": [
            "but it is actually",
            "yet it was",
            "though it is truly",
            "in truth it was",
            "in fact it is",
            "however, the real answer is",
            "but really it was",
            "whereas in reality it is",
            "but the truth is",
            "though actually it is",
            "but strictly speaking it was",
            "yet the correct answer is",
        ],
        "concession": [
            "though",
            "although",
            "even though",
            "while",
            "whereas",
            "even if",
        ],
    },
    "denial": {
        "frames": [
            "It was {neg} {A}; it was {B}.",
            "{B}, {neg} {A}.",
            "{Neg} {A}, but {B}.",
            "The answer is {neg} {A}: it is {B}.",
            "{A} is {neg} the answer; {B} is.",
            "{B} is the answer, {neg} {A}.",
            "It is {B} and {neg} {A}.",
            "{A} was {neg} the one; it was {B}.",
        ],
        "neg": [
            "not",
            "never",
            "certainly not",
            "definitely not",
            "surely not",
            "absolutely not",
            "clearly not",
            "really not",
        ],
    },
    "order or comparison": {
        "frames": [
            "{B}, {order} {A}.",
            "{B} came {order} {A}.",
            "It was {B}, {order} {A}.",
            "{B} did it {order} {A}.",
            "The answer is {B}, {order} {A}.",
            "{B}, finishing {order} {A}.",
        ],
        "order": [
            "a month after",
            "hours ahead of",
            "shortly before",
            "long after",
            "just behind",
            "well ahead of",
            "years before",
            "soon after",
            "right after",
            "a day before",
            "a decade after",
            "weeks behind",
            "slightly later than",
            "earlier than",
            "narrowly ahead of",
            "far behind",
        ],
    },
    "relative clause": {
        "frames": [
            "{B}, which {rel} {A} earlier.",
            "{B}, who {rel} {A}.",
            "It was {B}, the one that {rel} {A}.",
            "{B} (who {rel} {A}).",
            "The answer is {B}, who {rel} {A} once.",
            "{B}, which famously {rel} {A}.",
        ],
        "rel": [
            "defeated",
            "beat",
            "studied under",
            "replaced",
            "succeeded",
            "overtook",
            "was confused with",
            "is often mistaken for",
            "worked with",
            "eclipsed",
            "admired",
            "rivalled",
            "followed",
            "influenced",
            "outlived",
            "competed against",
        ],
    },
}


def split(items, seed: str = SEED) -> dict[str, list[str]]:
    """{half: items}: `items` sorted by the SHA-256 of ``seed:item``, the first half (rounded
    up) for development, the rest held out. Fixed by the seed, whatever the order given."""
    ranked = sorted(items, key=lambda item: hashlib.sha256(f"{seed}:{item}".encode()).hexdigest())
    cut = (len(ranked) + 1) // 2
    return {"development": ranked[:cut], "held-out": ranked[cut:]}


def halves() -> dict[str, dict[str, dict[str, list[str]]]]:
    """{class: {"frames" or a cue list: {half: items}}}: every list of every class split."""
    return {
        name: {field: split(items, f"{SEED}:{name}:{field}") for field, items in spec.items()}
        for name, spec in CLASSES.items()
    }


@dataclass(frozen=True)
class BehaviourCase:
    behaviour: str  # the class
    question: str
    references: tuple[str, ...]
    answer: str
    right: bool
    frame: str


def _fill(frame: str, cues: dict[str, str], mentioned: str, asserted: str) -> str:
    values = {"A": mentioned, "B": asserted}
    for field, cue in cues.items():
        values[field] = cue
        values[field.capitalize()] = cue[:1].upper() + cue[1:]
    text = frame.format(**values)
    return text[:1].upper() + text[1:]


def cases(half: str, per_class: int = 80, seed: int = 53) -> list[BehaviourCase]:
    """`per_class` cases of each class from `half`'s frames and cue words (half of them
    right, half wrong), drawn with a fixed seed; every frame of the half is used."""
    if half not in HALVES:
        raise ValueError(f"half must be one of {HALVES}, got {half!r}")
    rng = random.Random(f"{seed}:{half}")
    out = []
    for name, fields in halves().items():
        frames = fields["frames"][half]
        cue_lists = {field: lists[half] for field, lists in fields.items() if field != "frames"}
        for k in range(per_class):
            frame = frames[(k // 2) % len(frames)]
            question, gold, other = rng.choice(FACTS)
            cues = {field: rng.choice(items) for field, items in cue_lists.items()}
            right = k % 2 == 0
            asserted, mentioned = (gold, other) if right else (other, gold)
            answer = _fill(frame, cues, mentioned, asserted)
            out.append(BehaviourCase(name, question, (gold,), answer, right, frame))
    return out
