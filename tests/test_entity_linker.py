"""The entity-linking retriever and its data: query mentions (spaCy NER, noun chunks), link
mentions of a dump, the split by source article, same-name negatives, the retriever's ranking,
saving, and `namesake retrieve --retriever link` / `namesake amber compare --linker`."""

import json

import numpy as np
import pytest
from conftest import SAMPLE_KILT, WIKIPEDIA_EXCERPT
from dumps import write_dump
from tiny_models import save_tiny_bert

from namesake.cli import main
from namesake.errors import BadInputError
from namesake.linking.inputs import (
    RESERVED_MARKERS,
    TEXT_MARKERS,
    mark_mention,
    mention_markers,
    read_linker_settings,
)
from namesake.linking.linker import EntityLinkRetriever
from namesake.linking.query_mentions import find_mentions
from namesake.linking.same_name import SameNameIndex, name_key
from namesake.linking.wiki_mentions import read_link_data, split_by_source
from namesake.retrieval.bm25 import BM25Retriever
from namesake.retrieval.corpus import Document


@pytest.fixture(scope="module")
def excerpt():
    return read_link_data(WIKIPEDIA_EXCERPT, show_progress=False)


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    return save_tiny_bert(tmp_path_factory.mktemp("linker") / "tiny-bert")


# --- query mentions ---


def test_query_mentions_are_named_entities_without_values():
    (mentions,) = find_mentions(["How many people lived in Lincoln, Nebraska in 2010?"])
    assert [(m.text, m.source) for m in mentions] == [
        ("Lincoln", "entity"),
        ("Nebraska", "entity"),
    ]
    text = "How many people lived in Lincoln, Nebraska in 2010?"
    assert all(text[m.start : m.end] == m.text for m in mentions)


def test_query_without_entities_falls_back_to_noun_chunks_then_the_query():
    texts = ["who wrote the novel about the white whale?", "it is what it is", "   "]
    chunks, whole, empty = find_mentions(texts)
    # no pronoun chunk ("who"), no leading determiner ("the white whale")
    assert [(m.text, m.source) for m in chunks] == [
        ("novel", "noun_chunk"),
        ("white whale", "noun_chunk"),
    ]
    assert [(m.text, m.source, m.start, m.end) for m in whole] == [
        ("it is what it is", "query", 0, 16)
    ]
    assert empty == []


# --- encoder inputs ---


def test_reserved_markers_stay_single_tokens(tiny_model):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    size = len(tokenizer)
    markers = mention_markers(tokenizer)
    assert markers == RESERVED_MARKERS and len(tokenizer) == size  # no new embedding row
    text = mark_mention("Who directed Lincoln in 2012?", 13, 20, markers)
    assert text == "Who directed [unused0] Lincoln [unused1] in 2012?"
    assert tokenizer.tokenize(text)[2:5] == ["[unused0]", "lincoln", "[unused1]"]


def test_a_vocabulary_without_reserved_entries_gets_text_markers():
    class Vocabulary:
        def get_vocab(self):
            return {"a": 0}

    assert mention_markers(Vocabulary()) == TEXT_MARKERS


def test_context_is_cut_to_words_on_each_side():
    text = "one two three four Lincoln five six seven"
    start = text.index("Lincoln")
    marked = mark_mention(text, start, start + 7, ("<", ">"), context_words=2)
    assert marked == "three four < Lincoln > five six"
    with pytest.raises(ValueError, match="outside"):
        mark_mention(text, 5, 100, ("<", ">"))


def test_linker_settings_default_and_bad_file(tmp_path):
    assert read_linker_settings("some/hub-id") == {"context_words": 24, "page_words": 48}
    (tmp_path / "linker.json").write_text('{"page_words": -1}')
    with pytest.raises(BadInputError, match="linker.json.*page_words"):
        read_linker_settings(tmp_path)


# --- link mentions of a dump ---


def test_link_mentions_keep_visible_links_in_their_sentence(tmp_path):
    wikitext = (
        "'''Lincoln''' is the capital of [[Nebraska|the state of Nebraska]].<ref>See "
        "[[Omaha]].</ref> It was named after [[Abe Lincoln#Early life|the president]]. "
        "{{Infobox city|seat=[[Hidden]]}} [[File:Map.png|thumb|A map of [[Lancaster County]]]] "
        "The [[Lincoln Memorial]] is in [[Washington, D.C.]]! See [[#History|below]] and "
        "[[Category:Cities]]."
    )
    dump = write_dump(
        tmp_path / "dump.xml",
        {"Lincoln, Nebraska": wikitext, "Abraham Lincoln": "A [[lawyer]] from Kentucky."},
        {"Abe Lincoln": "Abraham Lincoln"},
    )
    data = read_link_data(dump, page_words=4, show_progress=False)
    found = [(m.source, m.text, m.target, m.context) for m in data.mentions]
    assert found == [
        ("Lincoln, Nebraska", "the state of Nebraska", "Nebraska",
         "Lincoln is the capital of the state of Nebraska."),
        ("Lincoln, Nebraska", "the president", "Abraham Lincoln",
         "It was named after the president."),
        ("Lincoln, Nebraska", "Lincoln Memorial", "Lincoln Memorial",
         "The Lincoln Memorial is in Washington, D.C.!"),
        ("Lincoln, Nebraska", "Washington, D.C.", "Washington, D.C.",
         "The Lincoln Memorial is in Washington, D.C.!"),
        ("Abraham Lincoln", "lawyer", "Lawyer", "A lawyer from Kentucky."),
    ]  # fmt: skip
    # pages: every target (redirect resolved); opening words only for articles in the dump
    assert data.pages == {
        "Nebraska": "",
        "Abraham Lincoln": "A lawyer from Kentucky.",
        "Lincoln Memorial": "",
        "Washington, D.C.": "",
        "Lawyer": "",
    }


def test_the_excerpt_gives_mentions_whose_spans_are_their_link_texts(excerpt):
    assert len(excerpt.mentions) > 10_000
    assert {m.target for m in excerpt.mentions} == set(excerpt.pages)
    for m in excerpt.mentions:
        assert m.text and m.text == m.text.strip() and m.context[m.start : m.end] == m.text
        # no placeholder or link markup left (single brackets do occur in quotations)
        assert not any(c in m.context for c in ("\x01", "\x02", "\x03", "[[", "]]"))
    # "Abraham Lincoln" is an article of the excerpt: its page has its opening words
    assert excerpt.pages["Abraham Lincoln"].startswith("Abraham Lincoln")
    assert len(excerpt.pages["Abraham Lincoln"].split()) == 48
    assert sum(map(bool, excerpt.pages.values())) < len(excerpt.pages) / 10


def test_split_is_disjoint_by_source_article(excerpt):
    train, held = split_by_source(excerpt.mentions, 0.1, seed=0)
    train_sources = {m.source for m in train}
    held_sources = {m.source for m in held}
    assert train_sources.isdisjoint(held_sources)
    assert len(train) + len(held) == len(excerpt.mentions)
    assert len(held_sources) == round(0.1 * len(train_sources | held_sources))
    again, _ = split_by_source(excerpt.mentions, 0.1, seed=0)
    assert again == train
    _, other = split_by_source(excerpt.mentions, 0.1, seed=1)
    assert {m.source for m in other} != held_sources
    with pytest.raises(ValueError, match="held_out_share"):
        split_by_source(excerpt.mentions, 1.0)


# --- same-name negatives ---


def test_namesakes_share_the_name_and_are_never_the_gold():
    titles = ["Lincoln, Nebraska", "Abraham Lincoln", "Lincoln (2012 film)", "Lincolnshire",
              "Paris", "Lincoln Memorial", "Of Mice and Men"]  # fmt: skip
    index = SameNameIndex(titles, {"Abraham Lincoln": 5, "Lincoln Memorial": 2})
    # most linked first, then shorter titles, then by title; "Lincolnshire" is no word match
    assert index.namesakes("Lincoln", exclude="Lincoln (2012 film)") == [
        "Abraham Lincoln",
        "Lincoln Memorial",
        "Lincoln, Nebraska",
    ]
    assert index.namesakes("lincoln", exclude="Abraham Lincoln", limit=1) == ["Lincoln Memorial"]
    assert index.namesakes("Of") == [] and index.namesakes("...") == []


def test_namesakes_of_the_excerpts_mentions(excerpt):
    index = SameNameIndex(excerpt.pages)
    checked = 0
    for m in excerpt.mentions[::50]:
        key = f" {name_key(m.text)} "
        for title in index.namesakes(m.text, exclude=m.target, limit=3):
            assert title != m.target and key in f" {name_key(title)} "
            checked += 1
    assert checked > 50


# --- the retriever ---

DOCUMENTS = [
    Document("1", "Lincoln, Nebraska", "Lincoln is the capital of the U.S. state of Nebraska."),
    Document("2", "Abraham Lincoln", "Abraham Lincoln was the 16th president."),
    Document("3", "Lincoln (2012 film)", "Lincoln is a 2012 historical drama film."),
    Document("4", "Paris", "Paris is the capital of France."),
    Document("5", "Oxygen", ""),
]
QUERIES = ["Which county is Lincoln, Nebraska in?", "Who directed Lincoln?", "it is what it is"]


@pytest.fixture(scope="module")
def retriever(tiny_model):
    return EntityLinkRetriever.build(DOCUMENTS, model=str(tiny_model), show_progress=False)


def test_the_linked_page_ranks_first_and_the_rest_by_best_mention_score(retriever):
    pages = retriever.index.reconstruct_n(0, len(DOCUMENTS))
    results = retriever.search(QUERIES, k=5)
    for query, ranking in zip(QUERIES, results, strict=True):
        inputs, _ = retriever.mention_inputs([query])
        scores = retriever._encode(inputs) @ pages.T  # mentions × pages
        mention, page = np.unravel_index(np.argmax(scores), scores.shape)
        assert ranking[0][0] == DOCUMENTS[page].wikipedia_id  # best mention's best page
        best = scores.max(axis=0)
        expected = sorted(range(len(DOCUMENTS)), key=lambda p: (-best[p], p))
        assert [i for i, _ in ranking] == [DOCUMENTS[p].wikipedia_id for p in expected]
        assert [s for _, s in ranking] == pytest.approx([best[p] for p in expected], abs=1e-5)
    # two mentions (Lincoln, Nebraska) in the first query; the whole query in the last
    assert len(retriever.mention_inputs(QUERIES[:1])[0]) == 2
    assert retriever.mention_inputs(QUERIES[2:])[0] == ["[unused0] it is what it is [unused1]"]
    assert [len(r) for r in retriever.search(QUERIES, k=2)] == [2, 2, 2]
    assert retriever.search([], 3) == [] and retriever.search(["x"], 0) == [[]]
    with pytest.raises(TypeError):
        retriever.search("Lincoln", 3)


def test_save_and_load_give_the_same_rankings(retriever, tmp_path):
    retriever.save(tmp_path / "link")
    settings = json.loads((tmp_path / "link" / "retriever.json").read_text())
    assert settings["kind"] == "link" and settings["num_documents"] == 5
    loaded = EntityLinkRetriever.load(tmp_path / "link")
    assert len(loaded) == 5
    for a, b in zip(loaded.search(QUERIES, 5), retriever.search(QUERIES, 5), strict=True):
        assert [i for i, _ in a] == [i for i, _ in b]
        assert [s for _, s in a] == pytest.approx([s for _, s in b], abs=1e-5)
    BM25Retriever.build(DOCUMENTS, show_progress=False).save(tmp_path / "bm25")
    with pytest.raises(BadInputError, match="'bm25' index, not 'link'"):
        EntityLinkRetriever.load(tmp_path / "bm25")


def test_retrieve_command_with_the_link_retriever(sample_build, tmp_path, capsys):
    out, _ = sample_build
    predictions = tmp_path / "link-human_qa.jsonl"
    common = ["--dataset", str(out / "dataset"), "--config", "human_qa", "--retriever", "link"]
    args = [*common, "--index", str(tmp_path / "index"), "--top-k", "5"]
    main(["retrieve", "--corpus", str(SAMPLE_KILT), *args, "--out", str(predictions)])
    assert "Wrote 18 predictions" in capsys.readouterr().out
    settings = json.loads((tmp_path / "index" / "retriever.json").read_text())
    assert settings["kind"] == "link" and settings["model_is_default"]
    corpus_ids = {json.loads(line)["wikipedia_id"] for line in SAMPLE_KILT.read_text().splitlines()}
    lines = [json.loads(line) for line in predictions.read_text().splitlines()]
    assert len(lines) == 18
    for line in lines:
        ids = [p["wikipedia_id"] for p in line["output"]["provenance"]]
        assert len(ids) == 5 and len(set(ids)) == 5 and set(ids) <= corpus_ids
    again = tmp_path / "again.jsonl"
    main(["retrieve", *args, "--out", str(again)])  # the saved index, no corpus
    assert again.read_text() == predictions.read_text()


def test_compare_passes_the_linker_to_the_link_retriever(monkeypatch, tmp_path):
    seen = {}

    def compare(corpus, dataset, out, plan):
        seen.update(vars(plan))
        return "table"

    monkeypatch.setattr("namesake.amber.evaluation.compare.compare_retrievers", compare)
    base = ["amber", "compare", "--corpus", "c", "--dataset", "d", "--out", str(tmp_path)]
    main([*base, "--retriever", "link", "--linker", "my-linker"])
    assert seen["retrievers"] == ("link",)
    assert seen["retriever_options"] == {"link": {"model": "my-linker"}}
    main([*base, "--retriever", "link"])
    assert seen["retriever_options"] == {}
