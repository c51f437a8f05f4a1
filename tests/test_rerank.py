"""The second stage (`namesake.retrieval.rerank`): the top pages reordered by a pair scorer,
the rest kept below, both scores kept; page texts read from the KILT corpus. The scorer here
is a word-overlap count, so every expected order is computed by hand; the real scorers are
tested in tests/test_rerankers.py, and end to end in tests/test_rerank_commands.py."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from conftest import SAMPLE_KILT

from namesake.errors import NamesakeError
from namesake.retrieval.rerank import opening_passages, pages_to_rerank, rerank
from namesake.runs import Run


class WordOverlap:
    """Score = number of the query's words in the text (hand-computable)."""

    name = "word overlap"

    def __init__(self):
        self.calls = []

    def score(self, query, texts):
        self.calls.append(len(texts))
        words = set(re.findall(r"\w+", query.lower()))
        found = [len(words & set(re.findall(r"\w+", text.lower()))) for text in texts]
        return np.array(found, np.float32)


TEXTS = {
    "p1": "Abraham Lincoln: president civil war",
    "p2": "Abe Lincoln: trombone player jazz",
    "p3": "Lincoln Nebraska: city",
    "p4": "Other: nothing",
}


def test_the_top_pages_are_reordered_and_keep_their_first_stage_score():
    ranking = [("p3", 9.0), ("p2", 8.0), ("p1", 7.0), ("p4", 6.0)]
    scorer = WordOverlap()
    [result] = rerank(["lincoln trombone jazz"], [ranking], TEXTS, scorer, depth=3)
    # overlaps: p3 1 (lincoln), p2 3 (lincoln trombone jazz), p1 1; p4 below depth
    assert [page for page, *_ in result] == ["p2", "p3", "p1", "p4"]
    assert [score for _, score, _ in result[:3]] == [3.0, 1.0, 1.0]  # tie keeps p3 before p1
    assert [first for *_, first in result] == [8.0, 9.0, 7.0, 6.0]
    assert result[3][1] < result[2][1]  # the tail stays below every reranked page
    assert scorer.calls == [3]


def test_scores_fall_down_the_ranking_so_a_trec_run_can_hold_it(tmp_path):
    ranking = [(p, 1.0) for p in ("p1", "p2", "p3", "p4")]
    [result] = rerank(["lincoln"], [ranking], TEXTS, WordOverlap(), depth=2)
    scores = [score for _, score, _ in result]
    assert scores == sorted(scores, reverse=True)
    run = Run.from_rankings([("q", result)])
    run.write(tmp_path / "run.trec", "trec", "rr")
    run.write(tmp_path / "run.jsonl")
    provenance = json.loads((tmp_path / "run.jsonl").read_text())["output"]["provenance"]
    assert provenance[0].keys() == {"wikipedia_id", "score", "first_stage_score"}


def test_a_page_without_text_is_an_error_naming_the_corpus():
    with pytest.raises(NamesakeError, match="1 ranked pages are not in kilt.json"):
        rerank(["q"], [[("p9", 1.0)]], TEXTS, WordOverlap(), source="kilt.json")


def test_empty_rankings_stay_empty():
    assert rerank(["q", "r"], [[], [("p1", 1.0)]], TEXTS, WordOverlap())[0] == []


def test_opening_passages_are_title_and_first_hundred_words():
    pages = {"307", "12345678"}
    texts = opening_passages(SAMPLE_KILT, pages)
    assert set(texts) == {"307"}  # a page the corpus lacks is not invented
    title, _, opening = texts["307"].partition(": ")
    assert title == "Abraham Lincoln"
    assert opening.startswith("Abraham Lincoln (February 12, 1809")
    assert len(opening.split()) == 100


def test_pages_to_rerank_are_the_top_of_each_ranking():
    rankings = [[("a", 1), ("b", 0)], [("c", 1), ("a", 0), ("d", 0)]]
    assert pages_to_rerank(rankings, 1) == {"a", "c"}
