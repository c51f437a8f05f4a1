"""The Space's HTML: badges, highlighting, snippets, escaping, heatmap and tables."""

import re

import pytest

from namesake.ecqg.entities import Entity
from namesake.space import formatting
from namesake.space.explorer import (
    AttentionView,
    Hit,
    Member,
    SearchResult,
    SetQuery,
    verdict,
)

PRESIDENT = Member(
    "human", "Abe Lincoln", "Q91", "Abraham Lincoln", True, 6.72, ("Q5",), ("307",),
    ("Abraham Lincoln",),
)  # fmt: skip
TROMBONIST = Member(
    "human", "Abe Lincoln", "Q4666410", "Abe Lincoln", False, 3.49, ("Q5",), ("3412877",),
    ("Abe Lincoln (musician)",),
)  # fmt: skip
XSS = '<img src=x onerror="alert(1)"><script>alert(2)</script>'


def hit(rank, page, member=None, title="T", text="some text"):
    return Hit(rank, page, title, text, 1.0 / rank, member)


def test_verdict_judges_against_the_gold_entity():
    assert verdict(hit(1, "3412877", TROMBONIST), "Q4666410") == "gold"
    assert verdict(hit(1, "307", PRESIDENT), "Q4666410") == "confused"
    assert verdict(hit(1, "307", PRESIDENT), None) == "same_name"
    assert verdict(hit(1, "99"), "Q4666410") == "unrelated"
    assert verdict(hit(1, "99"), None) == "unrelated"


@pytest.mark.parametrize(
    "kind, text, colour",
    [
        ("gold", "gold entity", "#116329"),
        ("confused", "confused", "#a40e26"),
        ("same_name", "same name", "#7d4e00"),
        ("unrelated", "unrelated", "#424a53"),
    ],
)
def test_badges_carry_their_text_colour_and_class(kind, text, colour):
    html = formatting.badge(kind)
    assert f'class="ns-badge ns-badge-{kind}"' in html
    assert f"color:{colour}" in html
    assert html.endswith(f">{text}</span>")


def test_unknown_badge_is_an_error():
    with pytest.raises(KeyError):
        formatting.badge("maybe")


def test_highlight_marks_whole_word_mentions_in_any_case_keeping_their_case():
    html = formatting.highlight("Abe Lincoln met ABE LINCOLN, not Abe Lincolnshire.", "Abe Lincoln")
    assert html == (
        '<mark class="ns-name">Abe Lincoln</mark> met <mark class="ns-name">ABE LINCOLN</mark>'
        ", not Abe Lincolnshire."
    )


def test_highlight_handles_names_with_regex_characters_and_no_name():
    assert formatting.highlight("I need Help! now", "Help!") == (
        'I need <mark class="ns-name">Help!</mark> now'
    )
    assert formatting.highlight("a < b", None) == "a &lt; b"


def test_highlight_escapes_markup_in_text_and_in_the_match():
    html = formatting.highlight(f"{XSS} and <b>Her</b>", "<b>Her</b>")
    assert "<script>" not in html and "<img" not in html
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in html
    assert '<mark class="ns-name">&lt;b&gt;Her&lt;/b&gt;</mark>' in html


def test_snippet_is_a_window_around_the_first_mention():
    words = [f"w{i}" for i in range(100)]
    words[60] = "Lincoln"
    text = " ".join(words)
    shown = formatting.snippet(text, "Lincoln", words=30)
    assert shown.startswith("… w50 ") and shown.endswith(" w79 …")
    assert len(shown.split()) == 30 + 2
    assert "Lincoln" in shown


def test_snippet_without_a_mention_starts_at_the_beginning_and_short_text_is_whole():
    text = " ".join(f"w{i}" for i in range(100))
    assert formatting.snippet(text, "Nobody", words=10) == "w0 w1 w2 w3 w4 w5 w6 w7 w8 w9 …"
    assert formatting.snippet("just five words here ok", "here", words=10) == (
        "just five words here ok"
    )
    assert formatting.snippet("", "x") == ""


def test_snippet_near_the_end_keeps_a_full_window():
    text = " ".join(f"w{i}" for i in range(50)) + " Lincoln"
    shown = formatting.snippet(text, "Lincoln", words=20)
    assert shown.startswith("… w31 ") and shown.endswith("Lincoln")


def result(gold=None, bm25=(), dense=()):
    return SearchResult(
        query=XSS + " Abe Lincoln",
        set_name="Abe Lincoln",
        members=(PRESIDENT, TROMBONIST),
        gold_qid=gold,
        hits={"bm25": list(bm25), "dense": list(dense)},
    )


def test_results_column_gives_each_hit_its_verdict_badge_and_entity_line():
    hits = [
        hit(1, "307", PRESIDENT, "Abraham Lincoln", "Abraham Lincoln was president."),
        hit(2, "3412877", TROMBONIST, "Abe Lincoln (musician)", "Abe Lincoln played trombone."),
        hit(3, "1", None, "Chicago", "A city."),
    ]
    html = formatting.results_column(result("Q4666410", bm25=hits), "bm25")
    verdicts = re.findall(r'data-verdict="(\w+)"', html)
    assert verdicts == ["confused", "gold", "unrelated"]
    assert html.startswith("<h3>BM25</h3>")
    assert "Abe Lincoln (Q4666410) · tail · popularity 3.49" in html
    assert '<mark class="ns-name">Abe Lincoln</mark> (musician)' in html
    assert html.count("ns-entity") == 2  # the unrelated hit has no entity line


def test_results_column_shows_the_papers_figure_for_the_nearest_kind():
    """The paper ran TF-IDF and DPR, not BM25 or MiniLM: each column names the nearest kind
    it ran and gives its Table 5 QA figures (hand-read, page 6), for the set's collection."""
    bm25 = formatting.results_column(result(bm25=[]), "bm25")
    assert "it did not evaluate BM25; its TF-IDF, the nearest kind" in bm25
    assert "AmbER-H 16.7% (head 28.2, tail 7.3)" in bm25 and "AmbER-N" not in bm25
    dense = formatting.results_column(result(dense=[]), "dense")
    assert "its DPR, the nearest kind" in dense and "AmbER-H 13.1% (head 19.6, tail 7.9)" in dense
    no_set = formatting.paper_note("dense", None)  # a query naming no set: both collections
    assert "AmbER-H 13.1%" in no_set and "AmbER-N 36.2% (head 49.2, tail 22.2)" in no_set


def test_results_column_without_hits_says_so():
    html = formatting.results_column(result(dense=[]), "dense")
    assert "No document shares a word" in html


def test_search_summary_escapes_the_query_and_names_set_and_gold():
    html = formatting.search_summary(result("Q91"))
    assert "<script>" not in html and "<img" not in html
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in html
    assert "<b>Abe Lincoln</b> (2 entities)" in html
    assert "about Abraham Lincoln (Q91)" in html
    assert "pick one below" in formatting.search_summary(result(None))


def test_search_summary_for_a_query_naming_no_set():
    plain = SearchResult("what is this", None, (), None, {"bm25": [], "dense": []})
    assert "names no AmbER set" in formatting.search_summary(plain)


def test_members_table_orders_by_popularity_and_marks_the_gold_row():
    html = formatting.members_table([TROMBONIST, PRESIDENT], gold_qid="Q4666410")
    assert html.index("Q91") < html.index("Q4666410")
    assert '<tr class="ns-member ns-gold-row" data-qid="Q4666410">' in html
    assert '<tr class="ns-member" data-qid="Q91">' in html
    assert "<td>tail</td><td>3.49</td>" in html


def test_rank_cells():
    assert ">1</td>" in formatting.rank_cell(1) and "#116329" in formatting.rank_cell(1)
    assert ">7</td>" in formatting.rank_cell(7)
    assert "&gt;100</td>" in formatting.rank_cell(None)


def test_set_view_lists_queries_with_each_retrievers_rank():
    queries = [
        SetQuery("qa", "Who killed Abe Lincoln?", "Q91", True, ("John Wilkes Booth",), {
            "bm25": 2, "dense": None}),
        SetQuery("fc", "Abe Lincoln plays the trombone.", "Q4666410", False, ("SUPPORTS",), {
            "bm25": 1, "dense": 1}),
    ]  # fmt: skip
    html = formatting.set_view("Abe Lincoln", [PRESIDENT, TROMBONIST], queries)
    assert '<h3 class="ns-set-name">Abe Lincoln</h3>' in html
    assert "AmbER-H · 2 entities · 2 queries" in html
    assert "<th>BM25 rank</th><th>Dense (MiniLM) rank</th>" in html
    first, second = html.split('<tr class="ns-set-query">')[1:]
    assert "Abraham Lincoln (head)" in first and ">2</td>" in first and "&gt;100" in first
    assert "Abe Lincoln (tail)" in second and "SUPPORTS" in second


def view(text, tokens, entities, attention=None, ranked=None, truncated=False):
    attention = attention or [0.1] * len(entities)
    return AttentionView(
        text, tokens, entities, attention, ranked or list(range(len(entities))), truncated
    )


def test_heatmap_shades_tokens_by_attention_and_underlines_entities():
    text = "Abe played <jazz>"
    tokens = [(0, 3, 0.2), (4, 10, 0.1), (11, 17, 0.4)]
    html = formatting.heatmap(view(text, tokens, [Entity("Abe", "PERSON", 0, 3)]))
    shaded = re.findall(r'title="([\d.]+)" style="background:rgba\(207,34,46,([\d.]+)\)">', html)
    assert shaded == [("0.2000", "0.48"), ("0.1000", "0.28"), ("0.4000", "0.88")]
    assert html.count('<u class="ns-mention">') == 1
    assert '<u class="ns-mention"><span class="ns-token" title="0.2000"' in html
    assert "&lt;jazz&gt;" in html and "<jazz>" not in html
    assert "cut at the encoder" not in html


def test_heatmap_leaves_text_outside_tokens_plain_and_notes_truncation():
    html = formatting.heatmap(view("ab cd ef", [(0, 2, 1.0)], [], truncated=True))
    assert html.count('class="ns-token"') == 1
    assert "</span> cd ef</div>" in html
    assert "cut at the encoder" in html


def test_heatmap_underlines_an_entity_spanning_several_tokens():
    text = "New York is big"
    tokens = [(0, 3, 0.1), (4, 8, 0.1), (9, 11, 0.1), (12, 15, 0.1)]
    html = formatting.heatmap(view(text, tokens, [Entity("New York", "GPE", 0, 8)]))
    assert html.count('<u class="ns-mention">') == 3  # "New", the space, "York"


def test_entity_ranking_follows_the_ranked_order_and_reports_truncated_entities():
    entities = [Entity("A", "PERSON", 0, 1), Entity("B", "GPE", 2, 3), Entity("C", "ORG", 4, 5)]
    html = formatting.entity_ranking(view("A B C", [], entities, [0.3, None, 0.1], [2, 0, 1]))
    rows = re.findall(r"<tr class=\"ns-entity-row\"><td>(\d)</td><td>(\w)</td>", html)
    assert rows == [("1", "C"), ("2", "A"), ("3", "B")]
    assert "truncated away" in html and "0.1000" in html
    assert "no named entity" in formatting.entity_ranking(view("x", [], []))


def test_answer_verdict_shows_score_threshold_lexical_scores_and_scorer():
    result = {
        "scores": [0.91], "threshold": 0.5, "exact_match": 0.0, "f1": 0.0,
        "scorer": "cross-encoder", "model": "<models>/wes",
    }  # fmt: skip
    html = formatting.answer_verdict(
        dict(result, regime="questions unused", regime_reason="a <pair> model")
    )
    assert 'data-same="true"' in html and "WES score 0.910" in html and "judged right" in html
    assert "Questions unused: a &lt;pair&gt; model" in html
    assert "Exact match 0 · token F1 0.0" in html
    assert "WES cross-encoder: &lt;models&gt;/wes" in html
    low = formatting.answer_verdict(dict(result, scores=[0.2], scorer="bi-encoder cosine"))
    assert 'data-same="false"' in low and "judged wrong" in low
    assert "bi-encoder cosine" in low
    hybrid = formatting.answer_verdict(dict(result, scorer="hybrid", model="v1"))
    assert "hybrid WES scorer: v1" in hybrid


def test_message_escapes_its_text():
    assert formatting.message("<b>x</b>", "error") == (
        '<div class="ns-message ns-error" role="status">&lt;b&gt;x&lt;/b&gt;</div>'
    )
