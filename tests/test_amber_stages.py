"""Unit tests of the AmbER pipeline, one stage at a time, on hand-built dumps.

Every fixture is written in the real dump formats (tests/dumps.py) and run through the real
stage functions. Each test checks one rule of the AmbER pipeline (the paper's and the
published code's) and would fail if that rule were implemented differently.
"""

from __future__ import annotations

import hashlib
import json
import math
import random

import pytest
from dumps import item, page, prop, write_kilt, write_pagecounts, write_wikidata

from namesake.amber.build.alignment import align_to_pages
from namesake.amber.build.entities import extract_entities
from namesake.amber.build.instances import build_instances
from namesake.amber.build.kilt import read_pages
from namesake.amber.build.names import find_polysemous_names
from namesake.amber.build.pageviews import read_pageviews
from namesake.amber.build.pipeline import build_amber
from namesake.amber.build.reference import PRACTICED_BY, USED_BY, load_collection
from namesake.amber.build.relations import keep_distinguishing_relations
from namesake.amber.build.wikidata import ITEM_VALUE, QUANTITY_VALUE
from namesake.errors import InputProblems

HUMAN = load_collection("human")
NONHUMAN = load_collection("nonhuman")
WANTED_PIDS = HUMAN.pids | NONHUMAN.pids | {PRACTICED_BY, USED_BY}
PROPERTY_LABELS = {
    "P31": "instance of",
    "P54": "member of sports team",
    "P161": "cast member",
    "P607": "conflict",
    "P1082": "population",
    "P1303": "instrument",
    "P1535": "used by",
    "P3095": "practiced by",
}
HUMAN_TYPE, FILM, CITY = "Q5", "Q11424", "Q515"


def md5(text: str) -> str:
    return hashlib.md5(text.encode("utf-8")).hexdigest()


class World:
    """A tiny Wikidata + page views + KILT world, written in the real dump formats."""

    def __init__(self):
        self.entities = [prop(pid, label) for pid, label in PROPERTY_LABELS.items()]
        self.views = {"Main Page": 1}
        self.pages = []

    def item(
        self, qid, label, views=10, *, types=(), aliases=(), claims=None, title=None, enwiki=True
    ):
        """Adds an item; ``views`` (if any) go to its enwiki title."""
        title = title or label
        all_claims = {"P31": list(types)} if types else {}
        all_claims.update(claims or {})
        self.entities.append(item(qid, label, aliases, title if enwiki else None, all_claims))
        if views:
            self.views[title] = views
        return qid

    def human(self, qid, label, views, **kwargs):
        return self.item(qid, label, views, types=[HUMAN_TYPE], **kwargs)

    def entity(self, qid) -> dict:
        return next(e for e in self.entities if e["id"] == qid)

    def set_claims(self, qid, pid, values):
        """Replaces (or adds) the claims of ``pid`` on an item already in the world."""
        self.entity(qid)["claims"][pid] = item(qid, "x", claims={pid: values})["claims"][pid]

    def replace_page(self, title, *paragraphs):
        """Replaces the text of the page titled ``title``, keeping its id, QID and position."""
        index = next(i for i, p in enumerate(self.pages) if p["wikipedia_title"] == title)
        old = self.pages[index]
        qid = old["wikidata_info"]["wikidata_id"]
        self.pages[index] = page(old["wikipedia_id"], title, list(paragraphs), qid)
        return self.pages[index]

    def add_page(self, qid, title, *paragraphs, wikipedia_id=None):
        wikipedia_id = wikipedia_id or str(1000 + len(self.pages))
        self.pages.append(page(wikipedia_id, title, list(paragraphs), qid))
        return wikipedia_id

    def stage1(self, tmp_path, workers=1, wanted=WANTED_PIDS):
        wikidata = write_wikidata(tmp_path / "wikidata.json", self.entities)
        views = read_pageviews(
            write_pagecounts(tmp_path / "pagecounts", self.views), InputProblems()
        )
        return extract_entities(wikidata, views, wanted, InputProblems(), workers=workers)

    def stage2(self, tmp_path, collection=HUMAN):
        return find_polysemous_names(self.stage1(tmp_path), collection)

    def stage3(self, tmp_path, collection=HUMAN):
        sets = self.stage2(tmp_path, collection)
        keep_distinguishing_relations(sets, collection)
        return sets

    def stage4(self, tmp_path, collection=HUMAN):
        sets = self.stage3(tmp_path, collection)
        kilt = write_kilt(tmp_path / "kilt.jsonl", self.pages)
        pages = read_pages(kilt, {qid for s in sets for qid in s["qids"]}, InputProblems())
        return align_to_pages(sets, pages)

    def stage5(self, tmp_path, collection=HUMAN):
        tuples = self.stage4(tmp_path, collection)
        instances, omitted = build_instances(tuples, collection)
        return tuples, instances, omitted


def by_name(sets: list[dict]) -> dict[str, dict]:
    return {amber_set["name"]: amber_set for amber_set in sets}


def rows_by_qid(entities) -> dict[int, dict]:
    return {row["qid"]: row for row in entities.table.to_pylist()}


def lincoln_world() -> World:
    """The published README's "Abe Lincoln" set: the president (head) and the trombonist."""
    world = World()
    world.item("Q1", "Black Hawk War", 5000)
    world.item("Q8350", "trombone", 5000)
    world.human(
        "Q91",
        "Abraham Lincoln",
        1_000_000,
        aliases=["Abe Lincoln", "Honest Abe"],
        claims={"P607": ["Q1"]},
    )
    world.human(
        "Q4666410", "Abe Lincoln", 1000, title="Abe Lincoln (musician)", claims={"P1303": ["Q8350"]}
    )
    world.add_page(
        "Q91",
        "Abraham Lincoln",
        "Abraham Lincoln was the 16th president of the United States.",
        "He served as a captain in the Black Hawk War.",
    )
    world.add_page(
        "Q4666410", "Abe Lincoln (musician)", "Abe Lincoln was an American jazz trombone player."
    )
    return world


def two_humans(
    world: World,
    name: str,
    head_claims: dict,
    other_claims: dict,
    head_qid="Q100",
    other_qid="Q200",
) -> tuple[str, str]:
    """Two humans sharing ``name``; the first is clearly the more popular one (the head)."""
    world.human(head_qid, name, 100_000, title=f"{name} (first)", claims=head_claims)
    world.human(other_qid, name, 100, title=f"{name} (second)", claims=other_claims)
    return head_qid, other_qid


# ---------------------------------------------------------------------------------------
# Stage 1: entities
# ---------------------------------------------------------------------------------------


def test_stage1_matches_sitelink_title_with_spaces_to_underscored_pageview_title(tmp_path):
    world = World()
    world.entities.append(item("Q91", "Abraham Lincoln", enwiki="Abraham Lincoln"))
    world.views["Abraham_Lincoln"] = 1234
    assert list(rows_by_qid(world.stage1(tmp_path))) == [91]


def test_stage1_drops_item_without_english_label(tmp_path):
    world = World()
    world.item("Q1", "kept", 100)
    unlabelled = item("Q2", None, enwiki="Unlabelled page")
    unlabelled["labels"] = {"fr": {"language": "fr", "value": "sans anglais"}}
    world.entities.append(unlabelled)
    world.views["Unlabelled page"] = 100
    assert list(rows_by_qid(world.stage1(tmp_path))) == [1]


def test_stage1_drops_item_without_enwiki_sitelink(tmp_path):
    world = World()
    world.item("Q1", "kept", 100)
    french_only = item("Q2", "Paris")
    french_only["sitelinks"] = {"frwiki": {"site": "frwiki", "title": "Paris", "badges": []}}
    world.entities.append(french_only)
    world.views["Paris"] = 100  # an English page of that title has views
    assert list(rows_by_qid(world.stage1(tmp_path))) == [1]


def test_stage1_drops_item_whose_page_has_no_views(tmp_path):
    world = World()
    world.item("Q1", "kept", 100)
    world.item("Q2", "never viewed", views=None)
    world.views["never_viewed_other"] = 5
    assert list(rows_by_qid(world.stage1(tmp_path))) == [1]


def test_stage1_popularity_is_math_log10_of_views(tmp_path):
    world = World()
    world.item("Q1", "thousand", 1000)
    world.item("Q2", "many", 8_336_817)
    rows = rows_by_qid(world.stage1(tmp_path))
    # log(1000)/log(10) is 2.9999999999999996: only log10 gives exactly 3.0.
    assert rows[1]["popularity"] == math.log10(1000) == 3.0
    assert rows[2]["popularity"] == math.log10(8_336_817)


def test_stage1_names_are_label_then_aliases_in_order_duplicates_kept(tmp_path):
    world = World()
    world.item("Q91", "Abe", 100, aliases=["Abraham", "Abe", "Honest Abe"])
    assert rows_by_qid(world.stage1(tmp_path))[91]["names"] == [
        "Abe",
        "Abraham",
        "Abe",
        "Honest Abe",
    ]


def test_stage1_types_are_p31_item_values(tmp_path):
    world = World()
    world.item("Q91", "Abe", 100, claims={"P31": ["Q5", None, "Q215627"]})
    assert rows_by_qid(world.stage1(tmp_path))[91]["types"] == [5, 215627]


def test_stage1_only_item_and_quantity_claims_with_a_value_are_relations(tmp_path):
    world = World()
    entity = item(
        "Q91",
        "Abe",
        enwiki="Abe",
        claims={"P1303": ["Q6607", None], "P1082": ["+12"], "P1477": ["Abraham"]},
    )
    entity["claims"]["P569"] = [
        {
            "mainsnak": {
                "snaktype": "value",
                "property": "P569",
                "datavalue": {
                    "value": {
                        "time": "+1809-02-12T00:00:00Z",
                        "precision": 11,
                        "calendarmodel": "http://www.wikidata.org/entity/Q1985727",
                    },
                    "type": "time",
                },
                "datatype": "time",
            },
            "type": "statement",
            "rank": "normal",
        }
    ]
    entity["claims"]["P54"] = [
        {
            "mainsnak": {"snaktype": "novalue", "property": "P54", "datatype": "wikibase-item"},
            "type": "statement",
            "rank": "normal",
        }
    ]
    world.entities.append(entity)
    world.views["Abe"] = 100
    entities = world.stage1(tmp_path, wanted=WANTED_PIDS | {"P1477", "P569"})
    assert entities.relations.to_pylist() == [
        {
            "qid": 91,
            "pid": 1303,
            "kind": ITEM_VALUE,
            "value_qid": 6607,
            "amount": None,
            "unit": None,
        },
        {
            "qid": 91,
            "pid": 1082,
            "kind": QUANTITY_VALUE,
            "value_qid": None,
            "amount": "+12",
            "unit": "1",
        },
    ]


def test_stage1_collects_property_labels(tmp_path):
    world = World()
    world.item("Q1", "something", 100)
    labels = world.stage1(tmp_path).property_labels
    assert labels[607] == "conflict"
    assert labels[1303] == "instrument"


def test_stage1_with_two_workers_equals_one_worker(tmp_path):
    """The dump spans several 8 MiB blocks, so two workers really split it."""
    world = World()
    for i in range(1, 6):
        world.human(f"Q{i}", f"early {i}", 100 * i, claims={"P1303": [f"Q{100 + i}"]})
    filler = "x" * 500_000
    for i in range(20):  # ~10 MB of items that the stages must skip or keep in order
        entity = item(f"Q{1000 + i}", f"filler {i}", enwiki=f"Filler {i}", claims={"P1303": ["Q1"]})
        entity["descriptions"] = {"en": {"language": "en", "value": filler}}
        world.entities.append(entity)
        if i % 2:
            world.views[f"Filler {i}"] = 7
    for i in range(6, 11):
        world.human(f"Q{i}", f"late {i}", 100 * i, claims={"P54": [f"Q{100 + i}"]})
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    one = world.stage1(tmp_path / "one")
    two = world.stage1(tmp_path / "two", workers=2)
    assert (tmp_path / "one" / "wikidata.json").stat().st_size > 8 << 20
    assert len(one) == 20
    assert two.table.equals(one.table)
    assert two.relations.equals(one.relations)
    assert two.property_labels == one.property_labels


# ---------------------------------------------------------------------------------------
# Stage 2: polysemous names
# ---------------------------------------------------------------------------------------


def her_world() -> World:
    """A name whose most popular carrier is a film, not a human."""
    world = World()
    world.item("Q6607", "guitar")
    world.item("Q7", "Springfield Isotopes")
    world.item("Q1000", "Her", 1_000_000, types=[FILM], title="Her (film)")
    world.human("Q1001", "H.E.R.", 100_000, aliases=["Her"], claims={"P1303": ["Q6607"]})
    world.human("Q1002", "Her", 100, title="Her (athlete)", claims={"P54": ["Q7"]})
    world.add_page("Q1000", "Her (film)", "Her is a 2013 film.")
    world.add_page("Q1001", "H.E.R.", "H.E.R. is a singer who plays the guitar.")
    world.add_page("Q1002", "Her (athlete)", "Her played for the Springfield Isotopes.")
    return world


def test_stage2_head_is_decided_before_the_type_filter(tmp_path):
    her = by_name(her_world().stage2(tmp_path))["Her"]
    assert list(her["qids"]) == ["Q1001", "Q1002"]
    assert [entity["is_head"] for entity in her["qids"].values()] == [False, False]


def test_set_whose_head_is_outside_the_collection_is_dropped_at_stage4(tmp_path):
    world = her_world()
    sets = world.stage3(tmp_path)
    assert "Her" in by_name(sets)  # both humans keep a distinguishing relation
    assert world.stage4(tmp_path) == []


def test_stage2_tied_most_popular_entities_are_both_heads(tmp_path):
    world = World()
    world.item("Q10", "Her", 10_000, types=[FILM], title="Her (film)")
    world.human("Q11", "Her", 10_000, title="Her (singer)")
    world.human("Q12", "Her", 100, title="Her (athlete)")
    world.item("Q13", "Her", 100, types=[FILM], title="Her (short film)")
    humans = by_name(world.stage2(tmp_path, HUMAN))["Her"]["qids"]
    films = by_name(world.stage2(tmp_path, NONHUMAN))["Her"]["qids"]
    assert {qid: e["is_head"] for qid, e in humans.items()} == {"Q11": True, "Q12": False}
    assert {qid: e["is_head"] for qid, e in films.items()} == {"Q10": True, "Q13": False}


def published_gap(first_views: int, second_views: int) -> float:
    p1, p2 = math.log10(first_views), math.log10(second_views)
    return 100 * (p1 - p2) / (0.5 * p1 + 0.5 * p2)


@pytest.mark.parametrize(
    ("first_views", "kept"),
    [(2070, True), (2069, False)],
    ids=["gap-just-over-10-percent", "gap-just-under-10-percent"],
)
def test_stage2_popularity_gap_of_10_percent(tmp_path, first_views, kept):
    gap = published_gap(first_views, 1000)
    assert (10 <= gap < 10.01) if kept else (9.99 < gap < 10)
    world = World()
    world.human("Q1", "John Smith", first_views, title="John Smith (a)")
    world.human("Q2", "John Smith", 1000, title="John Smith (b)")
    assert ("John Smith" in by_name(world.stage2(tmp_path))) is kept


def test_stage2_gap_is_between_the_two_most_popular_entities_of_the_collection(tmp_path):
    world = World()
    world.item("Q1", "John Smith", 1_000_000, types=[FILM], title="John Smith (film)")
    world.human("Q2", "John Smith", 2069, title="John Smith (a)")  # gap < 10% to Q3
    world.human("Q3", "John Smith", 1000, title="John Smith (b)")
    assert world.stage2(tmp_path) == []


def test_stage2_value_item_not_in_stage1_leaves_the_pid_with_no_values(tmp_path):
    world = World()
    world.item("Q6607", "guitar")
    world.item("Q66", "kazoo", enwiki=False)  # no enwiki: not a stage-1 entity
    world.item("Q67", "ukulele", views=None)  # no page views: not a stage-1 entity
    head, other = two_humans(world, "Abe", {"P1303": ["Q66", "Q67"]}, {"P1303": ["Q6607"]})
    entities = by_name(world.stage2(tmp_path))["Abe"]["qids"]
    assert entities[head]["pids"]["P1303"]["values"] == []
    assert [v["qid"] for v in entities[other]["pids"]["P1303"]["values"]] == ["Q6607"]


def test_stage2_item_value_carries_its_names_and_types(tmp_path):
    world = World()
    world.item("Q6607", "guitar", aliases=["six-string"], types=["Q1798603"])
    head, _ = two_humans(world, "Abe", {"P1303": ["Q6607"]}, {})
    relation = by_name(world.stage2(tmp_path))["Abe"]["qids"][head]["pids"]["P1303"]
    assert relation["property"] == "instrument"
    [value] = relation["values"]
    assert value["qid"] == "Q6607"
    assert value["aliases"] == ["guitar", "six-string"]
    assert value["entity_types"] == ["Q1798603"]


def test_stage2_quantity_names_are_amount_without_sign_and_its_words(tmp_path):
    world = World()
    world.item(
        "Q1",
        "Springfield",
        100_000,
        types=[CITY],
        title="Springfield, Illinois",
        claims={"P1082": ["+8336817"]},
    )
    world.item(
        "Q2",
        "Springfield",
        100,
        types=[CITY],
        title="Springfield, Vermont",
        claims={"P1082": ["-12"]},
    )
    cities = by_name(world.stage2(tmp_path, NONHUMAN))["Springfield"]["qids"]
    [big] = cities["Q1"]["pids"]["P1082"]["values"]
    [small] = cities["Q2"]["pids"]["P1082"]["values"]
    assert (big["amount"], big["unit"]) == ("+8336817", "1")
    assert big["aliases"] == ["8336817"]
    assert big["additional_aliases"] == [
        "eight million, three hundred and thirty-six thousand, eight hundred and seventeen"
    ]
    assert (small["aliases"], small["additional_aliases"]) == (["12"], ["twelve"])


def test_stage2_practiced_by_and_used_by_names_are_sorted_deduplicated_aliases(tmp_path):
    world = World()
    world.item("Q639669", "musician")
    world.item("Q855091", "guitarist", aliases=["guitar player"])
    world.item("Q5741069", "rock band")
    world.item("Q9", "axeman", enwiki=False)  # not a stage-1 entity: contributes nothing
    world.item(
        "Q6607",
        "guitar",
        claims={PRACTICED_BY: ["Q639669", "Q855091", "Q9"], USED_BY: ["Q855091", "Q5741069"]},
    )
    head, _ = two_humans(world, "Abe", {"P1303": ["Q6607"]}, {})
    [value] = by_name(world.stage2(tmp_path))["Abe"]["qids"][head]["pids"]["P1303"]["values"]
    assert value["additional_aliases"] == ["guitar player", "guitarist", "musician", "rock band"]


def test_stage2_entities_of_a_set_keep_dump_order(tmp_path):
    world = World()
    world.human("Q300", "John Smith", 100, title="John Smith (c)")
    world.human("Q100", "John Smith", 100_000, title="John Smith (a)")
    world.human("Q200", "John Smith", 1000, title="John Smith (b)")
    assert list(by_name(world.stage2(tmp_path))["John Smith"]["qids"]) == [
        "Q300",
        "Q100",
        "Q200",
    ]


# ---------------------------------------------------------------------------------------
# Stage 3: distinguishing relations
# ---------------------------------------------------------------------------------------


def values_world() -> World:
    world = World()
    for qid, label in [
        ("Q6607", "guitar"),
        ("Q5994", "piano"),
        ("Q1", "Black Hawk War"),
        ("Q7", "Springfield Isotopes"),
        ("Q8", "Casablanca"),
    ]:
        world.item(qid, label)
    world.item("Q66", "kazoo", enwiki=False)
    return world


def pids_after_stage3(world, tmp_path, name="Abe") -> dict[str, list[str]]:
    return {
        qid: list(e["pids"]) for qid, e in by_name(world.stage3(tmp_path))[name]["qids"].items()
    }


def test_stage3_pid_shared_by_two_entities_is_dropped_for_both(tmp_path):
    world = values_world()
    two_humans(
        world, "Abe", {"P1303": ["Q6607"], "P607": ["Q1"]}, {"P1303": ["Q5994"], "P54": ["Q7"]}
    )
    assert pids_after_stage3(world, tmp_path) == {"Q100": ["P607"], "Q200": ["P54"]}


def test_stage3_pid_not_distinguishing_for_the_entity_type_is_dropped(tmp_path):
    world = values_world()
    # P161 (cast member) distinguishes films and P1082 (population) cities, not humans.
    two_humans(world, "Abe", {"P161": ["Q8"], "P1082": ["+5"], "P607": ["Q1"]}, {"P54": ["Q7"]})
    assert pids_after_stage3(world, tmp_path) == {"Q100": ["P607"], "Q200": ["P54"]}


def test_stage3_pid_counts_as_shared_even_when_its_values_were_all_dropped(tmp_path):
    world = values_world()
    two_humans(
        world, "Abe", {"P1303": ["Q66"], "P607": ["Q1"]}, {"P1303": ["Q5994"], "P54": ["Q7"]}
    )
    assert pids_after_stage3(world, tmp_path) == {"Q100": ["P607"], "Q200": ["P54"]}


def test_stage3_pid_without_values_is_dropped(tmp_path):
    world = values_world()
    two_humans(world, "Abe", {"P1303": ["Q66"], "P607": ["Q1"]}, {"P54": ["Q7"]})
    assert pids_after_stage3(world, tmp_path) == {"Q100": ["P607"], "Q200": ["P54"]}


# ---------------------------------------------------------------------------------------
# Stage 4: KILT alignment
# ---------------------------------------------------------------------------------------


def text_with_word_at(position: int, title: str, lead: str, word: str) -> str:
    """A paragraph that puts ``word`` at whitespace token ``position`` (0-based) of the page,
    whose text starts with its title. Half the filler is "the" and "-", whitespace tokens
    that normalise to nothing: positions count whitespace tokens, not normalised ones."""
    before = len(f"{title} {lead}".split())
    filler = [("filler", "the", "-")[i % 3] for i in range(position - before)]
    return " ".join([lead, *filler, word, "and", "more", "words"])


@pytest.mark.parametrize(
    ("position", "found"),
    [(349, True), (350, False)],
    ids=["350th-token", "351st-token"],
)
def test_stage4_value_only_counts_within_the_first_350_tokens(tmp_path, position, found):
    world = lincoln_world()
    world.item("Q7", "Springfield Isotopes")
    world.set_claims("Q4666410", "P54", ["Q7"])
    title = "Abe Lincoln (musician)"
    paragraph = text_with_word_at(
        position, title, "He played for Springfield Isotopes.", "trombone"
    )
    written = world.replace_page(title, paragraph)
    assert " ".join(written["text"]).split().index("trombone") == position
    [abe] = world.stage4(tmp_path)
    assert list(abe["qids"]["Q4666410"]["pids"]) == (["P1303", "P54"] if found else ["P54"])


def test_stage4_name_straddling_the_350th_token_is_not_found(tmp_path):
    world = lincoln_world()
    world.item("Q8351", "bass trombone")
    world.set_claims("Q4666410", "P1303", ["Q8351"])
    title = "Abe Lincoln (musician)"
    paragraph = text_with_word_at(349, title, "He played", "bass trombone")
    written = world.replace_page(title, paragraph)
    assert " ".join(written["text"]).split()[349:351] == ["bass", "trombone"]
    assert world.stage4(tmp_path) == []


@pytest.mark.parametrize(
    ("value_label", "page_phrase", "found"),
    [
        ("Black Hawk War", "BLACK HAWK WAR", True),
        ("Black Hawk War", "Black Hawk War.", True),
        ("Black-Hawk War", "black hawk war", True),
        ("Black Hawk War", "Black-Hawk war", True),
        ("The Black Hawk War", "a Black Hawk War", True),
        ("Black Hawk War!", "(Black Hawk) War,", True),
        ("Black Hawk War", "Blackhawk War", False),
        ("Black Hawk War", "Black Hawk Wars", False),
    ],
)
def test_stage4_names_match_after_squad_normalisation(tmp_path, value_label, page_phrase, found):
    world = lincoln_world()
    world.entity("Q1")["labels"]["en"]["value"] = value_label  # the P607 value
    world.replace_page("Abraham Lincoln", f"He served as a captain in the {page_phrase} of 1832.")
    tuples = world.stage4(tmp_path)
    assert bool(tuples) is found
    if found:
        relation = tuples[0]["qids"]["Q91"]["pids"]["P607"]
        assert relation["provenance"] == [{"wikipedia_id": "1000", "title": "Abraham Lincoln"}]


def test_stage4_several_pages_per_entity(tmp_path):
    world = lincoln_world()
    world.item("Q8", "tuba")
    world.item("Q9", "kazoo")
    world.set_claims("Q4666410", "P1303", ["Q8350", "Q8", "Q9"])
    world.pages = [
        world.pages[1],  # "Abe Lincoln (musician)" (id 1001): mentions the trombone
        page("3001", "Abe Lincoln discography", ["He recorded with a tuba section."], "Q4666410"),
        world.pages[0],  # the president's page between the musician's pages
        page("3002", "Abe Lincoln Quartet", ["A jazz band from Chicago."], "Q4666410"),
        page("3003", "Abe Lincoln live", ["Live tuba and trombone recordings."], "Q4666410"),
    ]
    [abe] = world.stage4(tmp_path)
    musician = abe["qids"]["Q4666410"]
    assert musician["wikipedia"] == [
        {"wikipedia_id": "1001", "title": "Abe Lincoln (musician)"},
        {"wikipedia_id": "3001", "title": "Abe Lincoln discography"},
        {"wikipedia_id": "3002", "title": "Abe Lincoln Quartet"},
        {"wikipedia_id": "3003", "title": "Abe Lincoln live"},
    ]
    relation = musician["pids"]["P1303"]
    provenance = [p["wikipedia_id"] for p in relation["provenance"]]
    assert sorted(provenance) == ["1001", "3001", "3003"]  # each page once
    assert [v["found_in_passage"] for v in relation["values"]] == [True, True, False]


def test_stage4_entity_without_page_is_dropped(tmp_path):
    world = lincoln_world()
    world.item("Q7", "Springfield Isotopes")
    world.human("Q5000", "Abe Lincoln", 10, title="Abe Lincoln (athlete)", claims={"P54": ["Q7"]})
    [abe] = world.stage4(tmp_path)
    assert list(abe["qids"]) == ["Q91", "Q4666410"]


def test_stage4_set_needs_two_entities_with_relations(tmp_path):
    world = lincoln_world()
    world.replace_page("Abe Lincoln (musician)", "A jazz player.")
    assert world.stage4(tmp_path) == []


def test_stage4_set_needs_a_head_with_relations(tmp_path):
    world = lincoln_world()
    world.item("Q7", "Springfield Isotopes")
    world.human("Q5000", "Abe Lincoln", 10, title="Abe Lincoln (athlete)", claims={"P54": ["Q7"]})
    world.add_page("Q5000", "Abe Lincoln (athlete)", "He played for the Springfield Isotopes.")
    world.replace_page("Abraham Lincoln", "The 16th president.")
    sets = world.stage3(tmp_path)
    assert [e["is_head"] for e in by_name(sets)["Abe Lincoln"]["qids"].values()] == [
        True,
        False,
        False,
    ]
    assert world.stage4(tmp_path) == []


def test_stage4_sets_are_sorted_by_name(tmp_path):
    world = World()
    world.item("Q6607", "guitar")
    world.item("Q7", "Springfield Isotopes")
    for name, first in [("Zed", "Q10"), ("Abe", "Q20"), ("Mia", "Q30")]:
        head, other = two_humans(
            world,
            name,
            {"P1303": ["Q6607"]},
            {"P54": ["Q7"]},
            head_qid=first,
            other_qid=f"{first}1",
        )
        world.add_page(head, f"{name} (first)", "Plays the guitar.")
        world.add_page(other, f"{name} (second)", "Plays for the Springfield Isotopes.")
    assert [s["name"] for s in world.stage4(tmp_path)] == ["Abe", "Mia", "Zed"]


def test_stage4_amber_id_is_md5_of_the_repr_of_name_qid_pid(tmp_path):
    world = World()
    world.item("Q6607", "guitar")
    world.item("Q7", "Springfield Isotopes")
    # repr() writes this name in double quotes and the ids in single quotes; json.dumps or
    # "|".join would give other hashes.
    name = "Dan O'Brien"
    two_humans(world, name, {"P1303": ["Q6607"]}, {"P54": ["Q7"]})
    world.add_page("Q100", "a", "Plays the guitar.")
    world.add_page("Q200", "b", "Plays for the Springfield Isotopes.")
    [dan] = world.stage4(tmp_path)
    assert dan["qids"]["Q100"]["pids"]["P1303"]["amber_id"] == md5(
        "[\"Dan O'Brien\", 'Q100', 'P1303']"
    )
    assert dan["qids"]["Q200"]["pids"]["P54"]["amber_id"] == md5("[\"Dan O'Brien\", 'Q200', 'P54']")


def test_entity_in_two_sets_gets_each_sets_amber_id(tmp_path):
    """Q100 carries two shared names, so it is in two sets; ids and provenance are per set."""
    world = World()
    world.item("Q6607", "guitar")
    world.human("Q100", "Dan Smith", 100_000, aliases=["D. Smith"], claims={"P1303": ["Q6607"]})
    world.human("Q200", "Dan Smith", 100, title="Dan Smith (boxer)", claims={"P54": ["Q7"]})
    world.human("Q300", "D. Smith", 100, title="D. Smith (soldier)", claims={"P607": ["Q8"]})
    world.item("Q7", "Springfield Isotopes")
    world.item("Q8", "Boer War")
    world.add_page("Q100", "Dan Smith", "Plays the guitar.")
    world.add_page("Q200", "Dan Smith (boxer)", "Played for the Springfield Isotopes.")
    world.add_page("Q300", "D. Smith (soldier)", "Fought in the Boer War.")
    sets = by_name(world.stage4(tmp_path))
    assert set(sets) == {"Dan Smith", "D. Smith"}
    for name, amber_set in sets.items():
        relation = amber_set["qids"]["Q100"]["pids"]["P1303"]
        assert relation["amber_id"] == md5(repr([name, "Q100", "P1303"]))


# ---------------------------------------------------------------------------------------
# Stage 5: task instances
# ---------------------------------------------------------------------------------------


def fc_claim(name: str, qid: str, pid: str, value: str) -> str:
    template = random.Random(int(qid[1:] + pid[1:])).choice(HUMAN.fc_templates[pid])
    return template.replace("$entity", name).replace("$object", value)


def queries(instances, task: str, name: str, qid: str) -> list[dict]:
    [task_set] = [s for s in instances[task] if s["name"] == name]
    return task_set["qids"][qid]["queries"]


def instruments_world() -> World:
    """Four sets whose heads play instruments. Over the collection, P1303's first names are
    piano x2, guitar x2, violin x1; in name order piano is seen first (Alpha), although the
    dump and the alphabet both put guitar first."""
    world = World()
    for qid, label in [("Q6607", "guitar"), ("Q5994", "piano"), ("Q8355", "violin")]:
        world.item(qid, label)
    sets = [
        ("Beta", "Q20", ["Q6607"], "She plays the guitar."),
        ("Alpha", "Q10", ["Q5994"], "She plays the piano."),
        ("Gamma", "Q40", ["Q6607", "Q5994"], "She plays the piano."),
        ("Delta", "Q30", ["Q8355"], "She plays the violin."),
    ]
    for name, head, instruments, text in sets:
        team = world.item(f"{head}9", f"{name} Rovers")
        other = f"{head}1"
        two_humans(world, name, {"P1303": instruments}, {"P54": [team]}, head, other)
        world.add_page(head, f"{name} (first)", text)
        world.add_page(other, f"{name} (second)", f"He plays for {name} Rovers.")
    return world


def test_stage5_refutes_uses_most_frequent_other_value_ties_first_seen_in_name_order(tmp_path):
    _, instances, _ = instruments_world().stage5(tmp_path)
    refutes = {
        name: [
            q["input"]
            for q in queries(instances, "fc", name, head)
            if q["output"]["answer"] == "REFUTES"
        ]
        for name, head in [("Alpha", "Q10"), ("Beta", "Q20"), ("Delta", "Q30"), ("Gamma", "Q40")]
    }
    assert refutes == {
        "Alpha": [fc_claim("Alpha", "Q10", "P1303", "guitar")],
        "Beta": [fc_claim("Beta", "Q20", "P1303", "piano")],
        "Delta": [fc_claim("Delta", "Q30", "P1303", "piano")],  # tie: piano seen first
        "Gamma": [fc_claim("Gamma", "Q40", "P1303", "violin")],  # not its guitar or piano
    }


def test_stage5_supports_uses_first_value_found_in_a_passage(tmp_path):
    _, instances, _ = instruments_world().stage5(tmp_path)
    supports = [
        q["input"]
        for q in queries(instances, "fc", "Gamma", "Q40")
        if q["output"]["answer"] == "SUPPORTS"
    ]
    # Gamma's values are [guitar, piano]; only the piano is on its page.
    assert supports == [fc_claim("Gamma", "Q40", "P1303", "piano")]


def test_stage5_missing_refutes_value_is_omitted_and_counted(tmp_path):
    # Each PID of the Abe Lincoln set has one value in the whole collection: its own.
    _, instances, omitted = lincoln_world().stage5(tmp_path)
    assert omitted == 2
    for qid, pid, value in [("Q91", "P607", "Black Hawk War"), ("Q4666410", "P1303", "trombone")]:
        fc = queries(instances, "fc", "Abe Lincoln", qid)
        assert [(q["input"], q["output"]["answer"]) for q in fc] == [
            (fc_claim("Abe Lincoln", qid, pid, value), "SUPPORTS")
        ]


def test_stage5_slot_filling_input_is_name_sep_property_label(tmp_path):
    _, instances, _ = lincoln_world().stage5(tmp_path)
    assert [q["input"] for q in queries(instances, "sf", "Abe Lincoln", "Q91")] == [
        "Abe Lincoln [SEP] conflict"
    ]
    assert [q["input"] for q in queries(instances, "sf", "Abe Lincoln", "Q4666410")] == [
        "Abe Lincoln [SEP] instrument"
    ]


def test_stage5_query_id_is_amber_id_and_md5_of_input(tmp_path):
    tuples, instances, _ = instruments_world().stage5(tmp_path)
    amber_ids = {
        (s["name"], qid, pid): relation["amber_id"]
        for s in tuples
        for qid, entity in s["qids"].items()
        for pid, relation in entity["pids"].items()
    }
    checked = 0
    for task in ("qa", "sf", "fc"):
        for task_set in instances[task]:
            for qid, entity in task_set["qids"].items():
                for query in entity["queries"]:
                    amber = amber_ids[task_set["name"], qid, query["meta"]["pid"]]
                    assert query["id"] == f"{amber}={md5(query['input'])}"
                    checked += 1
    assert checked == 8 + 8 + 16  # 8 tuples: a QA, an SF, a SUPPORTS and a REFUTES query each


def test_stage5_answer_is_all_value_names_then_all_additional_aliases(tmp_path):
    world = World()
    world.item("Q855091", "guitarist")
    world.item("Q639669", "pianist")
    world.item("Q6607", "guitar", aliases=["six-string"], claims={PRACTICED_BY: ["Q855091"]})
    world.item("Q5994", "piano", aliases=["pianoforte"], claims={PRACTICED_BY: ["Q639669"]})
    world.item("Q7", "Springfield Isotopes")
    two_humans(world, "Abe", {"P1303": ["Q6607", "Q5994"]}, {"P54": ["Q7"]})
    world.add_page("Q100", "Abe (first)", "Plays the piano.")
    world.add_page("Q200", "Abe (second)", "Plays for the Springfield Isotopes.")
    _, instances, _ = world.stage5(tmp_path)
    [qa] = queries(instances, "qa", "Abe", "Q100")
    assert qa["output"]["answer"] == [
        "guitar",
        "six-string",
        "piano",
        "pianoforte",
        "guitarist",
        "pianist",
    ]


# ---------------------------------------------------------------------------------------
# Parity with the published AmbER data (README example of the "Abe Lincoln" set)
# ---------------------------------------------------------------------------------------

PUBLISHED_ABE_LINCOLN = {
    ("Q91", "P607"): (
        "6981ec17f0438a7cc94fff740cc9bb23",
        "Which battle did Abe Lincoln fight in?",
        "6981ec17f0438a7cc94fff740cc9bb23=f12393b7ba0631871ea7126dd5127772",
    ),
    ("Q4666410", "P1303"): (
        "edf1ff070a3cbd5fdee738262db8e740",
        "What musical instrument does Abe Lincoln play?",
        "edf1ff070a3cbd5fdee738262db8e740=44a67ee4dd88179d1147102e9753a5fa",
    ),
}


def test_published_abe_lincoln_tuple_ids_and_qa_queries(tmp_path):
    tuples, instances, _ = lincoln_world().stage5(tmp_path)
    [abe] = tuples
    assert abe["name"] == "Abe Lincoln"
    assert [(qid, e["is_head"]) for qid, e in abe["qids"].items()] == [
        ("Q91", True),
        ("Q4666410", False),
    ]
    for (qid, pid), (amber, question, query_id) in PUBLISHED_ABE_LINCOLN.items():
        assert list(abe["qids"][qid]["pids"]) == [pid]
        assert abe["qids"][qid]["pids"][pid]["amber_id"] == amber
        [qa] = queries(instances, "qa", "Abe Lincoln", qid)
        assert (qa["input"], qa["id"]) == (question, query_id)


def test_published_abe_lincoln_through_build_amber_jsonl(tmp_path):
    world = lincoln_world()
    wikidata = write_wikidata(tmp_path / "wikidata.json.bz2", world.entities)
    views = write_pagecounts(tmp_path / "pagecounts.gz", world.views)
    kilt = write_kilt(tmp_path / "kilt_knowledgesource.json", world.pages)
    build_amber(
        wikidata,
        views,
        kilt,
        tmp_path / "out",
        collections=("human",),
        jsonl_dir=tmp_path / "jsonl",
    )
    lines = (tmp_path / "jsonl" / "human" / "qa" / "amber_sets.jsonl").read_text().splitlines()
    [abe] = [json.loads(line) for line in lines]
    found = {
        qid: [(q["input"], q["id"]) for q in entity["queries"]]
        for qid, entity in abe["qids"].items()
    }
    assert found == {
        qid: [(question, query_id)]
        for (qid, _), (_, question, query_id) in PUBLISHED_ABE_LINCOLN.items()
    }
