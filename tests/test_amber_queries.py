"""`AmberQueries`, the queries of one AmbER config loaded once and passed to every stage: the
same queries, sets, gold pages and confusers from a built folder and from the authors'
released JSON lines, and what is not AmbER refused in one line."""

from __future__ import annotations

import pytest

from namesake.amber.evaluation.queries import AmberQueries
from namesake.errors import BadInputError, NamesakeError


@pytest.fixture(scope="module")
def human_qa(sample_build):
    out, _ = sample_build
    return AmberQueries.load(str(out / "dataset"), "human_qa")


def test_columns_follow_the_dataset_rows(human_qa):
    rows = human_qa.rows.to_pylist()
    assert len(human_qa) == len(rows) > 0
    assert human_qa.ids == [row["id"] for row in rows]
    assert human_qa.inputs == [row["input"] for row in rows]
    assert human_qa.is_head.tolist() == [row["is_head"] for row in rows]
    names = [row["name"] for row in rows]
    codes = human_qa.set_index.tolist()
    assert all(
        (codes[i] == codes[j]) == (names[i] == names[j])
        for i in range(len(rows))
        for j in range(len(rows))
    )
    assert codes[0] == 0 and human_qa.num_sets == len(set(names))


def test_the_columns_of_the_issue_are_there(human_qa):
    rows = human_qa.rows.to_pylist()
    assert human_qa.collection == "human" and set(human_qa.tasks) == {"qa"}
    assert human_qa.entity_ids == [row["qid"] for row in rows]
    assert human_qa.popularity.tolist() == [row["popularity"] for row in rows]
    assert human_qa.properties == [row["pid"] for row in rows]
    assert all(types == ["Q5"] for types in human_qa.entity_types)  # humans
    assert list(human_qa.to_pandas()["id"]) == human_qa.ids


def test_confusers_are_the_namesakes_pages_that_are_not_gold(human_qa):
    members = human_qa.members.to_pylist()
    for row, confusers in zip(human_qa.rows.to_pylist(), human_qa.confusers, strict=True):
        others = {
            page
            for member in members
            if member["name"] == row["name"] and member["qid"] != row["qid"]
            for page in member["wikipedia_ids"]
        }
        assert set(confusers) == others - set(row["gold_wikipedia_ids"])
        assert len(confusers) == len(set(confusers))
    assert any(human_qa.confusers)
    qrels = human_qa.qrels()
    assert list(qrels) == human_qa.ids
    assert all(
        set(qrels[q]) == set(g) for q, g in zip(human_qa.ids, human_qa.gold_pages, strict=True)
    )


def test_the_released_json_lines_give_the_same_queries(sample_build, human_qa):
    out, _ = sample_build
    released = AmberQueries.from_released(out / "jsonl", "human_qa")
    assert released.ids == human_qa.ids
    assert released.references() == human_qa.references()


def test_members_are_needed_for_confusers(sample_build):
    out, _ = sample_build
    queries = AmberQueries.load(str(out / "dataset"), "human_qa", members=False)
    assert queries.gold_pages and queries.members is None
    with pytest.raises(NamesakeError, match="loaded without its set members"):
        queries.references()


def test_what_is_not_amber_is_refused_by_name(sample_build, tmp_path):
    out, _ = sample_build
    with pytest.raises(NamesakeError, match="holds the members of the human sets"):
        AmberQueries.load(str(out / "dataset"), "human_entities")
    with pytest.raises(BadInputError, match="no config 'human_xx'"):
        AmberQueries.load(str(out / "dataset"), "human_xx")
    with pytest.raises(BadInputError, match="no such dataset folder"):
        AmberQueries.load(str(tmp_path / "nothing"), "human_qa")
