"""namesake.text: the one definition of AmbER-normalised tokens, exact match and token F1."""

import pytest

from namesake.text import exact_match, get_tokens, normalize_answer, token_f1


def test_normalisation_is_ambers_not_squads():
    assert normalize_answer("The  Beatles!") == "beatles"
    assert normalize_answer("Jean-Luc Picard") == "jean luc picard"  # SQuAD: "jeanluc picard"
    assert exact_match("Jean-Luc", "jean luc") == 1.0
    assert exact_match("Jean-Luc", "jeanluc") == 0.0
    assert get_tokens("") == [] and get_tokens("A the an") == []


@pytest.mark.parametrize(
    ("prediction", "reference", "em", "f1"),
    [
        ("the New York City", "new york", 0.0, 0.8),  # P 2/3, R 1
        ("New York", "New York City", 0.0, 0.8),
        ("NYC", "New York City", 0.0, 0.0),
        ("Paris Paris", "Paris", 0.0, 2 / 3),  # repeated tokens count once each side
        # Token-less answers: they agree with each other and with nothing else.
        ("", "", 1.0, 1.0),
        ("a", "the", 1.0, 1.0),
        ("", "Paris", 0.0, 0.0),
        ("Paris", "!", 0.0, 0.0),
    ],
)
def test_exact_match_and_token_f1(prediction, reference, em, f1):
    assert exact_match(prediction, reference) == em
    assert token_f1(prediction, reference) == pytest.approx(f1)
    assert token_f1(reference, prediction) == pytest.approx(f1)  # symmetric


def test_shared_tokens_is_the_size_of_the_bags_intersection():
    """`shared_tokens` counts what `Counter.__and__` keeps, repeated tokens included, on bags
    drawn from a small vocabulary (so that most pairs share something)."""
    import random
    from collections import Counter

    from namesake.text import shared_tokens

    rng = random.Random(0)
    for _ in range(500):
        one = Counter(rng.choices("abcdef", k=rng.randint(0, 8)))
        other = Counter(rng.choices("abcdef", k=rng.randint(0, 8)))
        assert shared_tokens(one, other) == sum((one & other).values())
        assert shared_tokens(other, one) == shared_tokens(one, other)
