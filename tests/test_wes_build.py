"""WES mining rules on hand-made pages and pairs, and the whole build on the real sample dump."""

from __future__ import annotations

import bz2
import itertools
import re
from collections import Counter, defaultdict

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from datasets import load_dataset
from dumps import write_dump, write_multistream

from namesake.cli import main
from namesake.errors import BadInputError, NamesakeError
from namesake.wes.build import build_wes, dump_year
from namesake.wes.dataset import read_config
from namesake.wes.mining import mine_dumps, mine_pages, page_links
from namesake.wes.pairs import (
    DictionaryWords,
    add_pairs,
    dictionary_filter,
    negatives,
    pair_splits,
    redirect_synonyms,
    resolve_targets,
    source_counts,
    split_articles,
    threshold_corpus,
)
from namesake.wikipedia.dump import Page

YEAR = 2016  # the sample's revisions are of 2016; its file name has no date


PAGE_IDS = itertools.count(1)


def page(title: str, text: str = "", redirect: str | None = None, ns: int = 0) -> Page:
    return Page(title, ns, next(PAGE_IDS), redirect, text)


def pairs_of(table: pa.Table) -> set[tuple[str, str]]:
    return set(zip(table["article"].to_pylist(), table["link_text"].to_pylist(), strict=True))


def corpus_from(pairs: dict[str, list[str]]) -> pa.Table:
    rows = [(a, t) for a, texts in pairs.items() for t in texts]
    return pa.table({"article": [a for a, _ in rows], "link_text": [t for _, t in rows]})


def mined_corpus(pages: list[Page], threshold: int = 1, **resolve) -> pa.Table:
    mined = mine_pages(pages)
    links, _ = resolve_targets(mined.links, mined.pages, **resolve)
    return threshold_corpus(links, source_counts(links), threshold)


# ---------------------------------------------------------------- links and targets


def test_redirect_pages_contribute_no_links():
    redirect = page("NYC", "#REDIRECT [[New York City]] [[Boston]]", redirect="New York City")
    assert page_links(redirect) == []
    mined = mine_pages([redirect, page("New York City", "[[Boston]]"), page("Boston")])
    assert mined.links["source"].to_pylist() == [mined.pages["page_id"][1].as_py()]
    assert mined.redirect_pages == 1


def test_targets_with_hash_colon_or_parenthesis_are_dropped():
    text = (
        "[[Paris#History|history of Paris]] [[Category:Cities]] [[File:x.jpg|thumb|x]] "
        "[[Mercury (planet)|Mercury]] [[Star Wars: Episode IV|A New Hope]] [[Paris|the capital]]"
    )
    assert page_links(page("France", text)) == [("Paris", "the capital")]


def test_other_namespaces_are_skipped():
    mined = mine_pages([page("Talk:Paris", "[[Paris]]", ns=1), page("Paris")])
    assert mined.pages["title"].to_pylist() == ["Paris"]
    assert mined.links.num_rows == 0


def test_pairs_are_deduplicated_case_sensitively():
    pages = [
        page("A", "[[New York City|NYC]] [[New York City|NYC]] [[New York City|nyc]]"),
        page("B", "[[New York City|NYC]] [[new York City|NYC]] [[New_York_City]]"),
        page("New York City"),
    ]
    corpus = mined_corpus(pages)
    assert corpus.num_rows == 3
    assert pairs_of(corpus) == {
        ("New York City", "NYC"),
        ("New York City", "nyc"),
        ("New York City", "New_York_City"),
    }
    # within a page a repeated pair is one triple
    assert mine_pages(pages[:1]).links.num_rows == 2


def test_threshold_counts_distinct_sources_not_links():
    pages = [
        page("S1", "[[Often]] [[Often|often]] [[Often|it]] [[Spread]]"),
        page("S2", "[[Often]] [[Spread]]"),
        page("S3", "[[Spread]]"),
        page("Often"),
        page("Spread"),
    ]
    mined = mine_pages(pages)
    links, _ = resolve_targets(mined.links, mined.pages)
    counts = dict(zip(*source_counts(links).to_pydict().values(), strict=True))
    assert counts == {"Often": 2, "Spread": 3}
    assert set(threshold_corpus(links, source_counts(links), 3)["article"].to_pylist()) == {
        "Spread"
    }
    assert set(threshold_corpus(links, source_counts(links), 2)["article"].to_pylist()) == {
        "Often",
        "Spread",
    }


def test_only_existing_non_redirect_articles_are_targets():
    pages = [
        page("S", "[[Red link]] [[NYC|the city]] [[New York City|Big Apple]]"),
        page("NYC", "#REDIRECT [[New York City]]", redirect="New York City"),
        page("New York City"),
    ]
    assert pairs_of(mined_corpus(pages)) == {("New York City", "Big Apple")}
    everything = pairs_of(mined_corpus(pages, all_targets=True))
    assert everything == {("New York City", "Big Apple"), ("Red link", "Red link")}


def test_redirects_option_resolves_links_and_adds_redirect_titles():
    pages = [
        page("S", "[[NYC|the city]] [[New York City|Big Apple]]"),
        page("NYC", "#REDIRECT [[New York City]]", redirect="New York City"),
        page("New York (city)", "#REDIRECT", redirect="New York City"),
        page("Gotham", "#REDIRECT", redirect="New York City#Nicknames"),
        page("New York City"),
        page("T", "[[Mercury|planet]]"),
        page("Mercury", "#REDIRECT [[Mercury (planet)]]", redirect="Mercury (planet)"),
        page("Mercury (planet)"),
    ]
    corpus = mined_corpus(pages, redirects=True)
    assert pairs_of(corpus) == {("New York City", "Big Apple"), ("New York City", "the city")}
    mined = mine_pages(pages)
    with_titles = add_pairs(corpus, redirect_synonyms(mined.pages, corpus["article"]))
    # "New York (city)" has '(' and Gotham points to a section: neither is added
    assert pairs_of(with_titles) == pairs_of(corpus) | {("New York City", "NYC")}


# ---------------------------------------------------------------- dictionary filter


def test_dictionary_filter_with_spacy_and_web2():
    words = DictionaryWords()
    assert words("apples") and words("here") and not words("NYC") and not words("Apple Inc.")
    corpus = corpus_from(
        {
            "Apple Inc.": ["apple", "Apple Computer", "AAPL"],  # title is no word: drop "apple"
            "Anarchism": ["anarchists", "Anarchism"],  # title is a word: keep its word texts
        }
    )
    kept, dropped = dictionary_filter(corpus, words)
    assert dropped == 1
    assert pairs_of(kept) == pairs_of(corpus) - {("Apple Inc.", "apple")}


def test_dictionary_filter_rule_with_a_given_word_list():
    words = DictionaryWords(["city", "run"], lemmatize=lambda texts: [t.lower() for t in texts])
    corpus = corpus_from({"City": ["city", "town"], "Gotham": ["city", "Gotham"], "NYC": ["run"]})
    kept, dropped = dictionary_filter(corpus, words)
    assert pairs_of(kept) == {("City", "city"), ("City", "town"), ("Gotham", "Gotham")}
    assert dropped == 2


# ---------------------------------------------------------------- negatives and splits


def synthetic_corpus(articles: int = 60, seed_sizes=(1, 2, 3, 5, 8)) -> pa.Table:
    """Articles with unique link texts, so each negative names its source article."""
    return corpus_from(
        {
            f"Article {a:03d}": [f"name {a}-{k}" for k in range(seed_sizes[a % len(seed_sizes)])]
            for a in range(articles)
        }
    )


def owner(text: str) -> str:
    return f"Article {int(text.split()[1].split('-')[0]):03d}"


def test_negatives_are_balanced_distinct_other_articles_never_synonyms():
    corpus = synthetic_corpus()
    positives, negs = negatives(corpus, seed=0)
    assert positives.num_rows == negs.num_rows == corpus.num_rows
    synonyms = defaultdict(set)
    for a, t in pairs_of(corpus):
        synonyms[a].add(t)
    sources = defaultdict(list)
    for a, t in zip(negs["article"].to_pylist(), negs["link_text"].to_pylist(), strict=True):
        assert t not in synonyms[a]
        assert owner(t) != a
        sources[a].append(owner(t))
    for a, others in sources.items():
        assert len(others) == len(synonyms[a]) == len(set(others)), a


def test_negatives_never_use_a_shared_synonym():
    # every text of B is also a synonym of A: A's negatives must come from C
    corpus = corpus_from({"A": ["x", "y", "a"], "B": ["x", "y"], "C": ["c1", "c2", "c3"]})
    for seed in range(5):
        _, negs = negatives(corpus, seed)
        a_negs = [t for a, t in pairs_of(negs) if a == "A"]
        assert len(a_negs) == 1 and a_negs[0].startswith("c")


def test_negatives_are_deterministic_for_a_seed_and_vary_with_it():
    corpus = synthetic_corpus()
    first, second = negatives(corpus, seed=3)[1], negatives(corpus, seed=3)[1]
    assert first.equals(second)
    assert not first.equals(negatives(corpus, seed=4)[1])
    splits, _ = pair_splits(corpus, seed=3)
    again, _ = pair_splits(corpus, seed=3)
    assert all(splits[s].equals(again[s]) for s in splits)


def test_tiny_corpus_stays_balanced_when_negatives_run_out():
    corpus = corpus_from({"A": [f"a{i}" for i in range(5)], "B": ["b"], "C": ["c"]})
    positives, negs = negatives(corpus, seed=0)
    per_article = Counter(negs["article"].to_pylist())
    assert per_article == Counter(positives["article"].to_pylist())
    assert per_article["A"] == 2  # only two other articles
    splits, short = pair_splits(corpus, seed=0)
    assert short == 3


def test_splits_are_disjoint_75_15_10_and_hold_whole_articles():
    corpus = synthetic_corpus(articles=200)
    titles = split_articles(corpus["article"], seed=0)
    sizes = {split: len(t) for split, t in titles.items()}
    assert sizes == {"train": 150, "validation": 30, "test": 20}
    sets = {split: set(t.to_pylist()) for split, t in titles.items()}
    assert not (sets["train"] & sets["validation"] or sets["train"] & sets["test"])
    assert not sets["validation"] & sets["test"]
    assert split_articles(corpus["article"], seed=1)["test"] != titles["test"]
    splits, short = pair_splits(corpus, seed=0)
    assert short == 0
    for split, table in splits.items():
        assert set(table["article"].to_pylist()) == sets[split]
        assert pc.sum(table["is_same"]).as_py() * 2 == table.num_rows


# ---------------------------------------------------------------- the whole build


def test_dump_year_from_file_name():
    assert dump_year(["/x/enwiki-20181220-pages-articles-multistream.xml.bz2"]) == 2018
    assert dump_year(["enwiki-latest-pages-articles1.xml-p1p41242.bz2"]) is None


@pytest.fixture(scope="module")
def sample_build(wikipedia_excerpt, tmp_path_factory):
    out = tmp_path_factory.mktemp("wes") / "dataset"
    report = build_wes(wikipedia_excerpt, out, thresholds=[1, 2], year=YEAR, seed=0, workers=2)
    return out, report


def test_sample_build_counts(sample_build):
    _, report = sample_build
    assert report.counts["main-namespace pages"] == 205
    assert report.counts["redirect pages (no links)"] == 99
    assert report.statistics[1]["articles"] > report.statistics[2]["articles"] > 0
    for stats in report.statistics.values():
        assert stats["positives"] * 2 == sum(stats["pairs"].values())
    assert report.configs == [
        f"{YEAR}thresh{n}{kind}" for n in (1, 2) for kind in ("corpus", "pairs")
    ]


@pytest.mark.parametrize("threshold", [1, 2])
def test_sample_configs_load_offline_balanced_disjoint(sample_build, threshold):
    out, report = sample_build
    corpus = load_dataset(str(out), f"{YEAR}thresh{threshold}corpus", split="train")
    pairs = load_dataset(str(out), f"{YEAR}thresh{threshold}pairs")
    assert corpus.num_rows == report.statistics[threshold]["corpus_pairs"]
    assert set(corpus["is_same"]) == {1}
    assert corpus.features["is_same"].dtype == "int64"
    synonyms = defaultdict(set)
    for a, t in zip(corpus["article"], corpus["link_text"], strict=True):
        synonyms[a].add(t)
    seen: dict[str, str] = {}
    for split in pairs:
        rows = pairs[split]
        assert sum(rows["is_same"]) * 2 == rows.num_rows  # balanced
        for a, t, same in zip(rows["article"], rows["link_text"], rows["is_same"], strict=True):
            assert seen.setdefault(a, split) == split  # no article in two splits
            assert (t in synonyms[a]) == bool(same)  # negatives are never real synonyms
    assert set(seen) == set(synonyms)
    card = (out / "README.md").read_text(encoding="utf-8")
    assert f"config_name: {YEAR}thresh{threshold}pairs" in card
    assert "cc-by-sa-4.0" in card and "Tis but Thy Name" in card
    assert "dictionary-word filter: on" in card


def test_multistream_workers_mine_the_same_links(wikipedia_excerpt, tmp_path):
    xml = bz2.decompress(wikipedia_excerpt.read_bytes())
    multistream = tmp_path / "enwiki-20160305-pages-articles-multistream.xml.bz2"
    write_multistream(multistream, xml, pages_per_stream=20)
    single = mine_dumps([wikipedia_excerpt], workers=1)
    parallel = mine_dumps([multistream], workers=3, streams_per_task=2)
    assert parallel.pages.num_rows == single.pages.num_rows == 205
    key = ["article", "link_text", "source"]
    assert parallel.links.sort_by([(k, "ascending") for k in key]).equals(
        single.links.sort_by([(k, "ascending") for k in key])
    )
    # and the year comes from the file name
    report = build_wes(multistream, tmp_path / "out", thresholds=[2], workers=3)
    assert report.configs == ["2016thresh2corpus", "2016thresh2pairs"]  # the name's year
    assert (tmp_path / "out" / "2016thresh2pairs").is_dir()


def test_empty_threshold_is_reported_not_written(wikipedia_excerpt, tmp_path):
    report = build_wes(wikipedia_excerpt, tmp_path / "out", thresholds=[1, 10_000], year=YEAR)
    assert any("threshold 10000: no article left" in p for p in report.problems)
    assert not (tmp_path / "out" / f"{YEAR}thresh10000corpus").exists()
    with pytest.raises(NamesakeError, match="nothing written"):
        build_wes(wikipedia_excerpt, tmp_path / "none", thresholds=[10_000], year=YEAR)
    assert not (tmp_path / "none").exists()
    with pytest.raises(NamesakeError, match="--year"):
        build_wes(wikipedia_excerpt, tmp_path / "none", thresholds=[1])


def test_a_rebuild_into_one_folder_loads_the_new_rows(wikipedia_excerpt, tmp_path, monkeypatch):
    """datasets caches a local folder by basename, config and card; every load here shares
    one cache, as a user's would, and must still see the latest build."""
    import datasets

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf_cache")
    out = tmp_path / "wes"
    corpus, pairs = f"{YEAR}thresh1corpus", f"{YEAR}thresh1pairs"

    build_wes(wikipedia_excerpt, out, thresholds=[1], year=YEAR, seed=0)
    first = load_dataset(str(out), pairs, split="train")
    loaded = load_dataset(str(out), corpus, split="train").with_format("arrow")[:]
    assert pairs_of(loaded) == pairs_of(read_config(out, corpus))

    # The same dump and another seed: the same number of pairs, drawn differently.
    build_wes(wikipedia_excerpt, out, thresholds=[1], year=YEAR, seed=1)
    second = load_dataset(str(out), pairs, split="train")
    assert second.num_rows == first.num_rows
    assert second.to_list() == read_config(out, pairs).to_pylist() != first.to_list()

    # Another dump altogether.
    dump = tmp_path / "other-pages-articles.xml"
    pages = [
        "<page><title>A</title><ns>0</ns><id>1</id><revision><text>[[B|bee]]</text></revision></page>",
        "<page><title>B</title><ns>0</ns><id>2</id><revision><text>[[A]]</text></revision></page>",
    ]
    dump.write_text("<mediawiki>" + "".join(pages) + "</mediawiki>", encoding="utf-8")
    build_wes(dump, out, thresholds=[1], year=YEAR, dictionary=False)
    loaded = load_dataset(str(out), corpus, split="train").with_format("arrow")[:]
    assert pairs_of(loaded) == {("A", "A"), ("B", "bee")}


def test_a_partial_dump_says_to_pass_all_targets(tmp_path, capsys):
    """Every link leads out of this part of a dump: say what to do, not only 'nothing'."""
    outward = "[[Paris|the capital]] [[London]] [[Rome|the eternal city]]"
    dump = write_dump(tmp_path / "part.xml", {"A": outward, "B": outward, "C": "[[Paris]]"})
    hint = (
        r"7 of 7 links \(100.0%\) point to pages missing from the dump: this looks like a "
        r"partial dump \(one part of a multistream dump, or an excerpt\); pass --all-targets "
        "to keep links to pages outside it"
    )
    with pytest.raises(NamesakeError, match="no article passed the threshold.*" + hint):
        build_wes(dump, tmp_path / "out", thresholds=[1], year=YEAR, dictionary=False)
    with pytest.raises(SystemExit, match=hint):
        main(
            ["wes", "build", "--dump", str(dump), "--out", str(tmp_path / "cli")]
            + ["--thresholds", "1", "--year", str(YEAR), "--no-dictionary-filter"]
        )
    assert "Traceback" not in capsys.readouterr().err

    report = build_wes(
        dump, tmp_path / "out", thresholds=[1], year=YEAR, dictionary=False, all_targets=True
    )
    assert pairs_of(read_config(tmp_path / "out", f"{YEAR}thresh1corpus")) == {
        ("Paris", "the capital"),
        ("Paris", "Paris"),
        ("London", "London"),
        ("Rome", "the eternal city"),
    }
    assert not any("--all-targets" in p for p in report.problems)


def test_partial_dump_hint_on_a_build_that_still_writes(sample_build):
    _, report = sample_build  # a 206-page excerpt: 82 of its 20,774 links stay inside
    (hint,) = [p for p in report.problems if "pass --all-targets" in p]
    assert hint.startswith("20,691 of 20,774 links (99.6%) point to pages missing")


def test_no_partial_dump_hint_when_links_stay_inside(tmp_path):
    dump = write_dump(
        tmp_path / "whole.xml", {"A": "[[B|bee]] [[C]]", "B": "[[A]] [[Nowhere]]", "C": "[[A]]"}
    )
    report = build_wes(dump, tmp_path / "out", thresholds=[1], year=YEAR, dictionary=False)
    assert report.counts["links to pages missing from the dump (neither article nor redirect)"] == 1
    assert not any("--all-targets" in p for p in report.problems)


def test_cli_build_with_options(wikipedia_excerpt, tmp_path, capsys):
    out = tmp_path / "cli"
    argv = [
        "wes",
        "build",
        "--dump",
        str(wikipedia_excerpt),
        "--out",
        str(out),
        "--thresholds",
        "2",
    ]
    argv += ["--year", "2016", "--seed", "7", "--workers", "1", "--no-dictionary-filter"]
    main(
        [*argv, "--hard-negatives", "lexical", "substring", "--redirects", "--no-measure-hardness"]
    )
    printed = capsys.readouterr().out
    assert "2016thresh2pairs" in printed and "| 2 |" in printed
    assert "2016thresh2hardpairs" in printed
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "dictionary-word filter: off" in card and "--hard-negatives lexical substring" in card
    assert "redirects: followed" in card
    train = read_config(out, "2016thresh2pairs")
    assert pc.sum(train["is_same"]).as_py() * 2 == train.num_rows
    hard = read_config(out, "2016thresh2hardpairs")
    assert set(hard["negative_kind"].to_pylist()) <= {"positive", "random", "lexical", "substring"}
    with pytest.raises(SystemExit, match="--year"):
        main(["wes", "build", "--dump", str(wikipedia_excerpt), "--out", str(tmp_path / "x")])
    assert not re.search(r"Traceback", capsys.readouterr().err)


def test_bad_pages_are_counted_or_fatal_with_strict(tmp_path):
    dump = tmp_path / "enwiki-20200101-pages-articles.xml"
    pages = [
        "<page><title>A</title><ns>0</ns><id>1</id><revision><text>[[B|bee]]</text></revision></page>",
        "<page><title>B</title><ns>0</ns><id>2</id><revision><text>[[A]]</text></revision></page>",
        "<page><title>C</title><ns>0</ns><id>3</id><revision></revision></page>",
    ]
    dump.write_text("<mediawiki>" + "".join(pages) + "</mediawiki>", encoding="utf-8")
    report = build_wes(dump, tmp_path / "out", thresholds=[1], dictionary=False)
    assert report.configs == ["2020thresh1corpus", "2020thresh1pairs"]  # the file name's year
    assert any("page without text" in p for p in report.problems)
    assert pairs_of(read_config(tmp_path / "out", "2020thresh1corpus")) == {
        ("A", "A"),
        ("B", "bee"),
    }
    with pytest.raises(BadInputError, match="page without text"):
        build_wes(dump, tmp_path / "strict", thresholds=[1], strict=True)
    assert not (tmp_path / "strict").exists()
