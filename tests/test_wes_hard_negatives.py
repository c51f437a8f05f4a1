"""Look-alike negatives for WES: each strategy's ranking on hand-made corpora, the synonym
filter on cases built so that a naive strategy would emit a synonym, and the hardpairs
config on the real excerpt, with zero-shot AUCs below the random negatives'."""

from __future__ import annotations

from collections import defaultdict

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from datasets import load_dataset

from namesake.cli import main
from namesake.errors import NamesakeError
from namesake.wes.build import build_wes
from namesake.wes.dataset import read_config
from namesake.wes.hard_negatives import (
    STRATEGIES,
    check_strategies,
    hard_pairs,
    look_alikes,
)
from namesake.wes.mining import mine_dumps
from namesake.wes.pairs import negatives, resolve_targets

YEAR = 2016


def corpus_from(pairs: dict[str, list[str]]) -> pa.Table:
    rows = [(a, t) for a, texts in pairs.items() for t in texts]
    return pa.table({"article": [a for a, _ in rows], "link_text": [t for _, t in rows]})


def page_table(redirects: dict[str, str]) -> pa.Table:
    """A page table holding only redirect pages (title -> target)."""
    return pa.table(
        {
            "title": list(redirects),
            "page_id": list(range(1, len(redirects) + 1)),
            "redirect": list(redirects.values()),
        }
    )


def link_table(sources: dict[int, list[str]]) -> pa.Table:
    rows = [(a, s) for s, articles in sources.items() for a in articles]
    return pa.table(
        {
            "article": [a for a, _ in rows],
            "link_text": [a for a, _ in rows],
            "source": pa.array([s for _, s in rows], pa.int64()),
        }
    )


def _row_key(row: dict) -> tuple:
    return (row["article"], row["rank"])


def pair_set(table: pa.Table) -> list[tuple[str, str]]:
    return sorted(zip(table["article"].to_pylist(), table["link_text"].to_pylist(), strict=True))


def ranked(table: pa.Table) -> dict[str, list[str]]:
    out = defaultdict(list)
    rows = sorted(table.select(["article", "rank", "link_text"]).to_pylist(), key=_row_key)
    rows = [tuple(row.values()) for row in rows]
    for article, _, text in rows:
        out[article].append(text)
    return dict(out)


def synonyms_of(corpus: pa.Table, pages: pa.Table) -> dict[str, set[str]]:
    """Lower-cased synonyms: own link texts, the title, redirect titles (also to sections)."""
    out = defaultdict(set)
    for a, t in zip(corpus["article"].to_pylist(), corpus["link_text"].to_pylist(), strict=True):
        out[a] |= {a.lower(), t.lower()}
    for title, target in zip(
        pages["title"].to_pylist(), pages["redirect"].to_pylist(), strict=True
    ):
        if target is not None:
            out[target.split("#")[0]].add(title.lower())
    return out


def emitted_synonyms(table: pa.Table, synonyms: dict[str, set[str]]) -> list[tuple[str, str]]:
    pairs = zip(table["article"].to_pylist(), table["link_text"].to_pylist(), strict=True)
    return [(a, t) for a, t in pairs if t.lower() in synonyms[a]]


# ---------------------------------------------------------------- the synonym filter


# Built so that each naive strategy's first pick for "New York City" is a synonym:
# - lexical: "New York City" (a mislinked text of New Jersey, F1 1), "New York" (the title
#   of another article but also NYC's own text "new york", F1 0.8) and "York City" (a text
#   of York, but a redirect to NYC);
# - substring: "New York" (own text, other case) and "York City" (redirect) are the longest
#   spans;
# - cooccurrence: "Gotham" (a redirect to a section of NYC) and "New York" (own text) share
#   the most sources with NYC.
TRAP = corpus_from(
    {
        "New York City": ["NYC", "new york", "Big Apple"],
        "New York": ["New York State Route 9", "NY"],
        "York": ["York City", "York"],
        "New Jersey": ["New York City", "NJ", "Garden State"],
        "Gotham": ["Gotham"],
        "Brooklyn Bridge": ["Brooklyn Bridge", "New York Bridge"],
    }
)
TRAP_PAGES = page_table(
    {
        "York City": "New York City",
        "Gotham City": "New York City",
        "Gotham": "New York City#Nicknames",
    }
)
TRAP_LINKS = link_table(
    {
        1: ["New York City", "Gotham", "New York", "Brooklyn Bridge"],
        2: ["New York City", "Gotham", "New York", "Brooklyn Bridge"],
        3: ["New York City", "Gotham", "New York"],
        4: ["New York City", "New Jersey"],
    }
)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_no_strategy_emits_a_synonym_even_where_it_ranks_first(strategy):
    synonyms = synonyms_of(TRAP, TRAP_PAGES)
    table = look_alikes(TRAP, strategy, TRAP_PAGES, TRAP_LINKS, per_article=10)
    assert table.num_rows and not emitted_synonyms(table, synonyms)
    nyc = ranked(table)["New York City"]
    trapped = {"new york city", "new york", "york city", "gotham", "gotham city", "nyc"}
    assert not trapped & {t.lower() for t in nyc}
    expected_first = {
        "lexical": "New York Bridge",  # F1 2*2/(3+3): the best string that is no synonym
        "substring": "York",
        "cooccurrence": "Brooklyn Bridge",  # 2 shared sources, after Gotham and New York
    }
    assert nyc[0] == expected_first[strategy]


def test_hard_pairs_never_use_a_synonym_and_stay_balanced():
    positives, randoms = negatives(TRAP, seed=0)
    rows, kinds = hard_pairs(TRAP, positives, randoms, STRATEGIES, TRAP_PAGES, TRAP_LINKS)
    negs = rows.filter(pc.equal(rows["is_same"], 0))
    assert not emitted_synonyms(negs, synonyms_of(TRAP, TRAP_PAGES))
    assert negs.num_rows == positives.num_rows and kinds["short"] == 0
    per_article = defaultdict(int)
    for a in negs["article"].to_pylist():
        per_article[a] += 1
    for a in positives["article"].to_pylist():
        per_article[a] -= 1
    assert not any(per_article.values())
    assert set(rows["negative_kind"].to_pylist()) <= {"positive", "random", *STRATEGIES}
    assert set(rows.filter(pc.equal(rows["is_same"], 1))["negative_kind"].to_pylist()) == {
        "positive"
    }
    # no article gets the same string twice (in any case)
    seen = set()
    for a, t in zip(negs["article"].to_pylist(), negs["link_text"].to_pylist(), strict=True):
        assert (a, t.lower()) not in seen
        seen.add((a, t.lower()))


# ---------------------------------------------------------------- each strategy's ranking


def test_lexical_ranks_other_articles_strings_by_token_f1():
    corpus = corpus_from(
        {
            "Alpha Beta Gamma": ["ABG"],
            "Delta": ["Alpha Beta Gamma Delta", "Alpha"],  # F1 6/7 and 2/4
            "Epsilon": ["Alpha Beta", "Gamma Ray Burst Alpha"],  # F1 4/5 and 4/7
            "Zeta": ["zeta"],  # nothing shared
        }
    )
    order = ranked(look_alikes(corpus, "lexical", per_article=10))
    assert order["Alpha Beta Gamma"] == [
        "Alpha Beta Gamma Delta",
        "Alpha Beta",
        "Gamma Ray Burst Alpha",
        "Alpha",
    ]
    assert "Zeta" not in order  # no shared token, no look-alike
    # a token held by more strings than the cap leaves the index: "alpha" (5 strings) and
    # "beta" (3) go with a cap of 2; "gamma" (3) too, so nothing is reachable
    assert "Alpha Beta Gamma" not in ranked(look_alikes(corpus, "lexical", df_cap=2))
    capped = ranked(look_alikes(corpus, "lexical", df_cap=3, per_article=10))
    assert capped["Alpha Beta Gamma"] == [
        "Alpha Beta Gamma Delta",
        "Alpha Beta",
        "Gamma Ray Burst Alpha",
    ]


def test_substring_gives_proper_word_spans_longest_first_without_stop_word_edges():
    corpus = corpus_from(
        {
            "New York City": ["NYC"],
            "Indigenous peoples of the Americas": ["Native Americans", "Americas"],
            "Paris": ["Paris"],
        }
    )
    order = ranked(look_alikes(corpus, "substring", per_article=20))
    assert order["New York City"] == ["York City", "New York", "York", "City", "New"]
    assert order["Indigenous peoples of the Americas"] == [
        "peoples of the Americas",
        "Indigenous peoples",
        "Indigenous",
        "peoples",
    ]  # "Americas" is a synonym; "of the Americas", "the", "of" have stop-word edges
    assert "Paris" not in order  # one word: no proper span


def test_cooccurrence_ranks_titles_by_shared_sources():
    corpus = corpus_from({t: [t] for t in ["A", "B", "C", "D", "E"]})
    links = link_table({1: ["A", "B", "C"], 2: ["A", "B"], 3: ["A", "B", "D"], 4: ["C", "D"]})
    order = ranked(look_alikes(corpus, "cooccurrence", links=links, per_article=10))
    assert order["A"][0] == "B" and set(order["A"][1:]) == {"C", "D"}  # 3 shared, then 1
    assert order["D"][0] in {"A", "B", "C"} and "E" not in order
    # a source linking to more articles than the cap is left out
    capped = ranked(look_alikes(corpus, "cooccurrence", links=links, source_cap=2))
    assert capped["A"] == ["B"] and capped["C"] == ["D"]


def test_unknown_strategy_is_a_clear_error(wikipedia_excerpt, tmp_path, capsys):
    with pytest.raises(ValueError, match="unknown hard-negative strategy 'lexicon'"):
        check_strategies(["lexical", "lexicon"])
    with pytest.raises(NamesakeError, match="--hard-negatives: .*choose from lexical"):
        build_wes(
            wikipedia_excerpt, tmp_path / "out", thresholds=[2], year=YEAR, hard_negatives=["nope"]
        )
    with pytest.raises(SystemExit):
        main(
            ["wes", "build", "--dump", str(wikipedia_excerpt), "--out", str(tmp_path / "cli")]
            + ["--hard-negatives", "lexical", "nope"]
        )
    assert "invalid choice: 'nope'" in capsys.readouterr().err
    assert check_strategies(["substring", "lexical", "substring"]) == ("substring", "lexical")


# ---------------------------------------------------------------- the real excerpt


@pytest.fixture(scope="module")
def excerpt(wikipedia_excerpt, tmp_path_factory):
    """The excerpt built as the demo does (--all-targets, threshold 2), every strategy."""
    out = tmp_path_factory.mktemp("wes_hard") / "wes"
    report = build_wes(
        wikipedia_excerpt,
        out,
        thresholds=[2],
        year=YEAR,
        workers=1,
        all_targets=True,
        hard_negatives=list(STRATEGIES),
    )
    mined = mine_dumps([wikipedia_excerpt], workers=1)
    return out, report, mined


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_excerpt_look_alikes_hold_no_synonym(excerpt, strategy):
    out, _, mined = excerpt
    corpus = read_config(out, f"{YEAR}thresh2corpus")
    links, _ = resolve_targets(mined.links, mined.pages, all_targets=True)
    table = look_alikes(corpus, strategy, mined.pages, links, per_article=20)
    assert table.num_rows > 100
    assert not emitted_synonyms(table, synonyms_of(corpus, mined.pages))


def test_excerpt_hardpairs_hold_no_synonym_and_share_the_pairs_split(excerpt):
    out, report, mined = excerpt
    pairs_name, hard_name = f"{YEAR}thresh2pairs", f"{YEAR}thresh2hardpairs"
    assert report.configs == [f"{YEAR}thresh2corpus", pairs_name, hard_name]
    corpus = read_config(out, f"{YEAR}thresh2corpus")
    synonyms = synonyms_of(corpus, mined.pages)
    pairs = load_dataset(str(out), pairs_name)
    hard = load_dataset(str(out), hard_name)
    assert set(hard) == set(pairs) == {"train", "validation", "test"}
    assert hard["test"].features["negative_kind"].dtype == "string"
    for split in pairs:
        p, h = pairs[split].with_format("arrow")[:], hard[split].with_format("arrow")[:]
        assert set(h["article"].to_pylist()) == set(p["article"].to_pylist())
        positive = pc.equal(h["is_same"], 1)
        assert pair_set(h.filter(positive)) == pair_set(p.filter(pc.equal(p["is_same"], 1)))
        assert pc.sum(h["is_same"]).as_py() * 2 == h.num_rows
        assert not emitted_synonyms(h.filter(pc.invert(positive)), synonyms)
    kinds = set(hard["train"]["negative_kind"])
    assert kinds >= {"positive", *STRATEGIES}
    card = (out / "README.md").read_text(encoding="utf-8")
    assert f"config_name: {hard_name}" in card and "## Hard negatives" in card
    assert "| 2 | lexical |" in card and "| 2 | random (pairs config) |" in card


def test_excerpt_every_strategy_is_harder_than_random_negatives(excerpt):
    _, report, _ = excerpt
    auc = {name: row["auc"] for name, row in report.statistics[2]["hardness"].items()}
    random_auc = auc["random (pairs config)"]
    assert random_auc > 0.95
    for strategy in STRATEGIES:
        assert report.statistics[2]["hardness"][strategy]["negatives"] >= 20
        assert auc[strategy] < random_auc, (strategy, auc)
    assert auc["all (hardpairs config)"] < random_auc
