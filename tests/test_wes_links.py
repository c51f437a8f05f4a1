"""The WES link extractor on hand-written wikitext: one test per rule, then properties."""

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from namesake.wikipedia.links import extract_links, normalize_title


def test_piped_and_unpiped_links_in_order():
    text = "The [[New York City|Big Apple]] is in [[New York (state)]], near [[Boston]]."
    assert extract_links(text) == [
        ("New York City", "Big Apple"),
        ("New York (state)", "New York (state)"),
        ("Boston", "Boston"),
    ]


def test_unpiped_text_is_the_target_as_written():
    assert extract_links("[[new_york  city]]") == [("New york city", "new_york city")]


@pytest.mark.parametrize(
    "target, title",
    [
        ("new York", "New York"),  # first letter upper-cased, the rest kept
        ("New_York_City", "New York City"),  # underscores are spaces
        ("  New \t York\n", "New York"),  # white space collapsed and trimmed
        (":Category:Cats", "Category:Cats"),  # leading colon removed
        (": foo", "Foo"),
        ("AT&amp;T", "AT&T"),  # HTML entities
        ("New&nbsp;York", "New York"),
        ("O&#39;Brien", "O'Brien"),
        ("ßtraße", "SStraße"),  # str.upper on the first character, as MediaWiki
        ("éclair", "Éclair"),
        ("iPhone", "IPhone"),
        ("Paris#History", "Paris#History"),  # sections kept for the later filter
        ("", ""),
    ],
)
def test_normalize_title(target, title):
    assert normalize_title(target) == title


def test_html_entities_are_unescaped_on_both_sides():
    text = "[[AT&amp;T|AT&amp;T Inc.]] [[O&#39;Brien]] [[New&nbsp;York|New&nbsp;York]]"
    assert extract_links(text) == [
        ("AT&T", "AT&T Inc."),
        ("O'Brien", "O'Brien"),
        ("New York", "New York"),  # the no-break space is shown as a space
    ]


def test_texts_are_stripped_and_empty_ones_dropped():
    text = "[[A| spaced  out ]] [[B|]] [[C|   ]] [[   ]] [[|orphan]] [[&nbsp;|x]] [[D|&#32;]]"
    assert extract_links(text) == [("A", "spaced out")]


def test_section_and_namespaced_links_are_kept_for_the_filter():
    text = "[[Paris#History|history of Paris]] [[#Local]] [[Category:Cities]] [[:fr:Paris]]"
    assert extract_links(text) == [
        ("Paris#History", "history of Paris"),
        ("#Local", "#Local"),
        ("Category:Cities", "Category:Cities"),
        ("Fr:Paris", ":fr:Paris"),
    ]


def test_extra_pipes_belong_to_the_text():
    assert extract_links("[[A|b|c]]") == [("A", "b|c")]


def test_blend_letters_are_not_part_of_the_text():
    assert extract_links("Two [[dog]]s and [[cat|kitten]]s.") == [
        ("Dog", "dog"),
        ("Cat", "kitten"),
    ]


def test_links_in_comments_are_ignored():
    text = "[[A]] <!-- [[B]] --> [[C]] <!-- [[D]]"  # an unclosed comment runs to the end
    assert extract_links(text) == [("A", "A"), ("C", "C")]


def test_comment_inside_a_link_is_removed():
    assert extract_links("[[Foo<!-- old name -->|bar]]") == [("Foo", "bar")]


@pytest.mark.parametrize("tag", ["ref", "nowiki", "math", "pre", "syntaxhighlight", "REF"])
def test_links_in_hiding_tags_are_ignored(tag):
    text = f'[[A]]<{tag} name="x">see [[B]] and [[C|c]]</{tag} >[[D]]'
    assert extract_links(text) == [("A", "A"), ("D", "D")]


def test_self_closing_refs_hide_nothing_after_them():
    text = 'x[[A]]<ref name="a" /> [[B]]<ref name=b/>[[C]]<ref>[[E]]</ref>'
    assert extract_links(text) == [("A", "A"), ("B", "B"), ("C", "C")]


def test_an_unclosed_hiding_tag_is_plain_text():
    assert extract_links("<ref>[[A]] <references /> [[B]]") == [("A", "A"), ("B", "B")]


def test_tag_names_must_match_whole():
    assert extract_links("<references/>[[A]]<prefix>[[B]]</prefix>") == [("A", "A"), ("B", "B")]


def test_links_in_templates_are_ignored_at_any_depth():
    text = (
        "[[A]] {{Infobox|name=[[B]]|x={{nested|[[C]]|{{deeper|[[D]]}}}}|y=[[E]]}} [[F]]"
        " {{lang|fr|[[G]]}}{{{1|[[H]]}}} [[I]]"
    )
    assert extract_links(text) == [("A", "A"), ("F", "F"), ("I", "I")]


def test_single_braces_inside_a_template():
    assert extract_links("{{a|{b} [[X]] }c}}[[Y]]") == [("Y", "Y")]


def test_unclosed_template_is_plain_text_but_its_closed_children_hide():
    text = "{{unclosed [[A]] {{closed|[[B]]}} [[C]]"
    assert extract_links(text) == [("A", "A"), ("C", "C")]
    assert extract_links("}} [[A]] }}") == [("A", "A")]


def test_deeply_nested_templates_use_the_stack():
    depth = 50
    text = "[[A]]" + "{{t|[[X]]" * depth + "}}" * depth + "[[B]]" + "{{open [[C]]"
    assert extract_links(text) == [("A", "A"), ("B", "B"), ("C", "C")]
    unbalanced = "{{" * 30 + "[[D]]" + "}}" * 10 + "[[E]]"  # 20 stay open: plain text
    assert extract_links(unbalanced) == [("E", "E")]
    assert extract_links("{{" * 30 + "}}" * 10 + "[[E]]") == [("E", "E")]


def test_file_captions_give_their_inner_links_only():
    text = "[[File:Cat.jpg|thumb|A [[cat]] on a [[mat|rug]]]] then [[Dog]]"
    assert extract_links(text) == [("Cat", "cat"), ("Mat", "rug"), ("Dog", "Dog")]


def test_links_whose_text_needs_rendering_are_dropped():
    text = "[[A|{{lang|fr|b}}]] [[C|a [b] c]] [[D|x}y]] [[E|ok]]"
    assert extract_links(text) == [("E", "ok")]


def test_a_removed_template_does_not_join_brackets():
    assert extract_links("[{{x}}[A]] [[B{{x}}]]") == []


@pytest.mark.parametrize(
    "text",
    ["", "[[", "]]", "[[[[[[", "[[A", "A]]", "[[A|", "<!--", "<ref", "<ref>", "[[]]"],
)
def test_broken_markup_gives_no_link_and_no_error(text):
    assert extract_links(text) == []


def test_triple_brackets_give_the_inner_link():
    assert extract_links("[[[A]]]") == [("A", "A")]


WIKITEXT_PIECES = st.sampled_from(
    [
        *("[[", "]]", "{{", "}}", "|", "[", "]", "{", "}", "#", ":", "_", " ", "\n", "\t"),
        *("<!--", "-->", "<ref>", "</ref>", "<ref name=a/>", "<nowiki>", "</nowiki>"),
        *("<math>", "</math>", "&amp;", "&nbsp;", "&#39;", "&", ";", "\u00a0", "a", "B", "ß"),
        *("File:", "Category:", "New York", "x y", "é"),
    ]
)
WIKITEXT = st.one_of(
    st.lists(WIKITEXT_PIECES, max_size=60).map("".join),
    st.text(max_size=200),
)


@settings(max_examples=400, deadline=None)
@given(WIKITEXT)
def test_properties_on_random_wikitext(text):
    links = extract_links(text)
    assert links == extract_links(text)  # stable
    for target, label in links:
        assert label and label == label.strip() and "  " not in label
        assert target and normalize_title(target) == target  # normalised (idempotent)
        assert "_" not in target and not target.startswith((":", " "))
        assert "[[" not in label and "]]" not in label


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet=st.characters(blacklist_characters="[]{}|<>&\x00"), min_size=1),
    st.text(alphabet=st.characters(blacklist_characters="[]{}|<>&\x00"), min_size=1),
)
def test_any_plain_piped_link_is_found(target, label):
    links = extract_links(f"x [[{target}|{label}]] y")
    expected = " ".join(label.split())
    if normalize_title(target) and expected:
        assert links == [(normalize_title(target), expected)]
    else:
        assert links == []


@pytest.mark.parametrize(
    "page",
    [
        "[[" * 2_500_000,  # 5 MB of unclosed links
        "{{" * 2_500_000,
        "[[{{" * 1_250_000,
        "{{" * 250_000 + "}}" * 250_000,  # balanced, 250k levels deep: quadratic never ends
        "<ref>" * 1_000_000,
        "<!--" * 1_250_000,
        "[[a|" * 1_250_000,
        "[[a]]{{b}}<ref>c</ref>" * 250_000,
    ],
    ids=["links", "templates", "mixed", "deep", "refs", "comments", "pipes", "wellformed"],
)
def test_huge_pathological_pages_take_linear_time(page):
    started = time.perf_counter()
    extract_links(page)
    assert time.perf_counter() - started < 2
