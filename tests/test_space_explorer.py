"""The Space's computations on the sample AmbER build, with the real retrievers, encoder,
spaCy model and WES metric: artifacts loading, search verdicts, the set browser, attention
and answer scoring, and the messages bad input gets."""

import pytest
from conftest import SAMPLE_KILT

from namesake.errors import BadInputError, NamesakeError
from namesake.retrieval.corpus import read_kilt_documents
from namesake.space.artifacts import cache_folder, load_artifacts
from namesake.space.documents import DocumentStore, write_documents
from namesake.space.explorer import Explorer, SpaceInputError, gold_rank

TROMBONIST_QUERY = "What musical instrument does Abe Lincoln play?"
TROMBONIST, PRESIDENT = "Q4666410", "Q91"
TROMBONIST_PAGE, PRESIDENT_PAGE = "3412877", "307"


@pytest.fixture(scope="module")
def explorer(space_artifacts):
    return Explorer(load_artifacts(space_artifacts, corpus=SAMPLE_KILT, report=lambda _: None))


# --- artifacts and the page store -----------------------------------------------------------


def test_missing_indexes_are_built_on_first_start_then_reused(sample_build, tmp_path):
    out, _ = sample_build
    (tmp_path / "amber").symlink_to(out / "dataset")
    said = []
    first = load_artifacts(tmp_path, corpus=SAMPLE_KILT, report=said.append)
    assert [m.split(" index")[0] for m in said] == ["Building the bm25", "Building the dense"]
    for name in ("bm25/retriever.json", "dense/index.faiss", "documents.arrow"):
        # a folder the user made is only read: built in the cache (tests/test_space_cache.py)
        assert (cache_folder(tmp_path, SAMPLE_KILT) / name).is_file()
    said.clear()
    again = load_artifacts(tmp_path, corpus=SAMPLE_KILT, report=said.append)
    assert said == []
    assert len(again.documents) == len(first.documents) == 47
    assert again.queries.num_rows == first.queries.num_rows
    assert set(again.queries["collection"].to_pylist()) == {"human", "nonhuman"}
    assert again.wes_model is None  # no wes_scorer/ in this folder


def test_missing_artifacts_are_a_message_not_a_traceback(sample_build, tmp_path):
    with pytest.raises(NamesakeError, match="No artifacts folder at .*nowhere.*make demo"):
        load_artifacts(tmp_path / "nowhere")
    with pytest.raises(NamesakeError, match=r"No AmbER dataset at .*amber: run `make demo`"):
        load_artifacts(tmp_path)
    (tmp_path / "amber").symlink_to(sample_build[0] / "dataset")
    with pytest.raises(NamesakeError, match="no saved index, and no --corpus.*pass --corpus"):
        load_artifacts(tmp_path, corpus=None)


def test_page_store_round_trip_and_bad_file(tmp_path):
    path = tmp_path / "pages.arrow"
    assert write_documents(read_kilt_documents(SAMPLE_KILT), path) == 47
    store = DocumentStore(path)
    pages = store.get([TROMBONIST_PAGE, "no-such-page"])
    assert list(pages) == [TROMBONIST_PAGE]
    assert pages[TROMBONIST_PAGE].title == "Abe Lincoln (musician)"
    assert "trombonist" in pages[TROMBONIST_PAGE].text
    assert store.get([]) == {}
    assert len(store.titles(3)) == 3
    (tmp_path / "bad.arrow").write_text("not arrow")
    with pytest.raises(BadInputError, match="bad.arrow: not a page store"):
        DocumentStore(tmp_path / "bad.arrow")


# --- ambiguous search -----------------------------------------------------------------------


def test_examples_are_dataset_qa_queries_tails_first(explorer):
    examples = explorer.examples()
    queries = explorer.artifacts.queries.to_pylist()
    by_input = {q["input"]: q for q in queries if q["task"] == "qa"}
    assert examples and all(text in by_input for text in examples)
    heads = [by_input[text]["is_head"] for text in examples]
    assert heads == sorted(heads)  # all tails, then all heads
    assert heads[0] is False and heads[-1] is True
    assert TROMBONIST_QUERY in examples
    assert len(explorer.examples(limit=3)) == 3


@pytest.mark.parametrize(
    "query, name",
    [
        (TROMBONIST_QUERY, "Abe Lincoln"),
        ("what did abe lincoln play", "Abe Lincoln"),  # any case, when no exact-case name
        ("Which label released Help! in 1965?", "Help!"),
        ("Lincoln alone", None),
        ("Abe Lincolnshire", None),  # whole words only
    ],
)
def test_find_set_reads_the_name_in_the_query(explorer, query, name):
    assert explorer.find_set(query) == name


def test_search_judges_each_hit_against_the_querys_entity(explorer):
    result = explorer.search(TROMBONIST_QUERY, k=5)
    assert result.set_name == "Abe Lincoln"
    assert result.gold_qid == TROMBONIST
    assert {m.qid for m in result.members} == {TROMBONIST, PRESIDENT}
    for kind in ("bm25", "dense"):
        hits = result.hits[kind]
        assert 1 <= len(hits) <= 5
        assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
        owners = {h.wikipedia_id: h.member.qid for h in hits if h.member}
        assert owners == {TROMBONIST_PAGE: TROMBONIST, PRESIDENT_PAGE: PRESIDENT}
        trombonist = next(h for h in hits if h.wikipedia_id == TROMBONIST_PAGE)
        assert trombonist.title == "Abe Lincoln (musician)" and "trombon" in trombonist.text


def test_with_gold_rejudges_and_rejects_entities_of_other_sets(explorer):
    result = explorer.search("Tell me about Abe Lincoln", k=3)
    assert result.gold_qid is None  # not an AmbER query: the user says which one
    assert explorer.with_gold(result, PRESIDENT).gold_qid == PRESIDENT
    with pytest.raises(SpaceInputError, match="Q1 is not an entity of the set 'Abe Lincoln'"):
        explorer.with_gold(result, "Q1")


def test_k_is_clamped_to_what_the_page_offers(explorer):
    assert len(explorer.search(TROMBONIST_QUERY, k=500).hits["dense"]) == 20  # of 47 pages
    assert len(explorer.search(TROMBONIST_QUERY, k=0).hits["dense"]) == 1


@pytest.mark.parametrize(
    "query, message",
    [
        ("", "Type a query"),
        ("   \n ", "Type a query"),
        (None, "Type a query"),
        ("x" * 10_000, "10,000 characters long; the limit is 1,000"),
    ],
)
def test_bad_queries_get_a_message(explorer, query, message):
    with pytest.raises(SpaceInputError, match=message):
        explorer.search(query)


def test_markup_in_a_query_is_just_text(explorer):
    query = "<script>alert(1)</script> Abe Lincoln"
    result = explorer.search(query)
    assert result.query == query and result.set_name == "Abe Lincoln"


# --- AmbER browser --------------------------------------------------------------------------


def test_gold_rank():
    assert gold_rank(["a", "b", "c"], ["c", "b"]) == 2
    assert gold_rank(["a"], ["z"]) is None
    assert gold_rank([], ["z"]) is None


def test_open_set_lists_members_and_each_querys_gold_rank(explorer):
    name, members, queries = explorer.open_set("  abe LINCOLN ")
    assert name == "Abe Lincoln"
    assert {m.qid for m in members} == {TROMBONIST, PRESIDENT}
    dataset_rows = [q for q in explorer.artifacts.queries.to_pylist() if q["name"] == "Abe Lincoln"]
    assert [q.input for q in queries] == [q["input"] for q in dataset_rows]
    assert {q.task for q in queries} == {"qa", "sf", "fc"}
    # The browser's rank agrees with where the search tab shows the gold page.
    row = next(q for q in queries if q.input == TROMBONIST_QUERY)
    hits = explorer.search(TROMBONIST_QUERY, k=20).hits
    for kind in ("bm25", "dense"):
        shown = [h.rank for h in hits[kind] if h.wikipedia_id == TROMBONIST_PAGE]
        assert row.ranks[kind] == shown[0]


@pytest.mark.parametrize(
    "name, message",
    [
        ("Abe", r"No AmbER set is named 'Abe'\. Did you mean: Abe Lincoln\?"),
        ("Zebediah", r"No AmbER set is named 'Zebediah'\.$"),
        ("", "Type a set name"),
    ],
)
def test_unknown_set_names_get_a_message(explorer, name, message):
    with pytest.raises(SpaceInputError, match=message):
        explorer.open_set(name)


def test_matching_sets_and_set_names(explorer):
    assert explorer.matching_sets("mich") == ["Michael Jordan", "Michael Collins"]
    names = explorer.set_names()
    assert len(names) == len(set(names)) == 16 and "Abe Lincoln" in names


# --- where the encoder looks ----------------------------------------------------------------


def test_first_passage(explorer):
    title, text = explorer.first_passage(TROMBONIST_PAGE)
    assert title == "Abe Lincoln (musician)"
    assert text.startswith("Abe Lincoln") and len(text.split()) <= 100
    with pytest.raises(SpaceInputError, match="No page with id 'nope'"):
        explorer.first_passage("nope")


def test_attention_covers_the_text_tokens_and_ranks_spacys_entities(explorer):
    text = "Abe Lincoln was an American jazz trombonist who played in Los Angeles."
    view = explorer.attention("Abe Lincoln (musician)", text)
    assert not view.truncated
    assert all(0 <= s < e <= len(text) for s, e, _ in view.tokens)
    assert view.tokens[0][0] == 0 and view.tokens[-1][1] == len(text)
    assert sum(w for _, _, w in view.tokens) < 1  # CLS also attends to title and specials
    assert {"Abe Lincoln", "Los Angeles"} <= {e.text for e in view.entities}
    assert sorted(view.ranked) == list(range(len(view.entities)))
    weights = [view.entity_attention[i] for i in view.ranked]
    assert weights == sorted(weights)  # least attended first


def test_attention_notes_text_past_the_encoders_limit(explorer):
    view = explorer.attention("", "Lincoln played trombone. " * 100)
    assert view.truncated and len(view.tokens) < 256


@pytest.mark.parametrize(
    "text, message", [("", "Paste a passage"), ("y " * 3000, "the limit is 5,000")]
)
def test_bad_passages_get_a_message(explorer, text, message):
    with pytest.raises(SpaceInputError, match=message):
        explorer.attention("t", text)


# --- is this answer right? ------------------------------------------------------------------


def test_score_answer_uses_the_wes_metric(explorer):
    close = explorer.score_answer("New York City\n\nThe Big Apple\n", "NYC")
    far = explorer.score_answer("New York City", "a trombone")
    same = explorer.score_answer("New York City", "new york city")
    assert close["scorer"] == "hybrid" and close["model"] == "namesake-wes-scorer-v5"
    assert close["num_pairs"] == 2 and close["regime"] == "without questions"
    assert close["scores"][0] > far["scores"][0]
    assert same["exact_match"] == 100.0 and close["exact_match"] == 0.0


def test_score_answer_passes_the_question_on(explorer):
    """The tab's optional question reaches the metric: a negated gold answer is judged wrong
    with it, and the result says which regime judged."""
    asked = explorer.score_answer(
        "New York City",
        "The answer is definitely not New York City, it is Boston.",
        "Which city is the largest in the United States?",
    )
    assert asked["regime"] == "with questions"
    assert asked["scores"][0] < asked["threshold"]
    blank = explorer.score_answer("New York City", "NYC", "   ")
    assert blank["regime"] == "without questions"


@pytest.mark.parametrize(
    "references, candidate, message",
    [
        ("New York City", " ", "Type a candidate answer"),
        ("\n \n", "NYC", "Type at least one reference answer"),
        ("New York City", "n" * 1001, "the limit is 1,000"),
    ],
)
def test_bad_answers_get_a_message(explorer, references, candidate, message):
    with pytest.raises(SpaceInputError, match=message):
        explorer.score_answer(references, candidate)


def test_a_huge_question_gets_a_message(explorer):
    with pytest.raises(SpaceInputError, match="That question is 1,001 characters"):
        explorer.score_answer("New York City", "NYC", "q" * 1001)


# --- the leaderboard ------------------------------------------------------------------------


def test_without_a_leaderboard_the_tab_says_how_to_make_one(explorer):
    assert explorer.artifacts.leaderboard is None  # the folder holds the AmbER build only
    with pytest.raises(SpaceInputError, match=r"No leaderboard in .*leaderboard: `make demo`"):
        explorer.leaderboard()


def test_the_leaderboard_tab_shows_the_files_namesake_leaderboard_wrote(explorer, tmp_path):
    from dataclasses import replace

    (tmp_path / "leaderboard.md").write_text("# Leaderboard on human_qa\n\n| Rank |\n")
    (tmp_path / "popularity_curve.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    shown = Explorer(replace(explorer.artifacts, leaderboard=tmp_path))
    board, curve = shown.leaderboard()
    assert board.startswith("# Leaderboard on human_qa") and curve == str(
        tmp_path / "popularity_curve.png"
    )
