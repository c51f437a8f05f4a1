"""`namesake.runs.Run`, the columnar run every evaluation stage passes on: built from
rankings, it gives them back; selecting, cutting and coding pages keep each query's order."""

from __future__ import annotations

import json
import math

import msgspec
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from pipe_inputs import PIPES, piped

from namesake import runs as runs_module
from namesake.errors import BadInputError, NamesakeError
from namesake.runs import (
    _WHITE_SPACE,
    FORMATS,
    Run,
    _in_order_of_appearance,
    shared_vocabulary,
)
from namesake.trec import write_run

RANKINGS = [
    ("q1", [("10", 3.0), ("7", 2.5), ("12", 1.0)]),
    ("q2", []),
    ("q3", [("7", None), ("99", None)]),
]


def test_rankings_come_back_as_given():
    run = Run.from_rankings(RANKINGS, name="bm25", provenance={"tag": "bm25"})
    assert list(run.rankings()) == RANKINGS
    assert len(run) == 3 and run.lengths.tolist() == [3, 0, 2]
    assert run.query_index().tolist() == [0, 0, 0, 2, 2]
    assert run.ranks().tolist() == [0, 1, 2, 0, 1]
    assert not run.has_scores() and run.first_stage_scores is None
    assert run.name == "bm25" and run.provenance == {"tag": "bm25"}


def test_first_stage_scores_are_kept_beside_the_scores():
    run = Run.from_rankings([("q", [("a", 2.0, 0.5), ("b", 1.0, 0.7)])])
    assert run.ranking(0) == [("a", 2.0, 0.5), ("b", 1.0, 0.7)]


def test_select_orders_and_fills_missing_queries_with_empty_rankings():
    run = Run.from_rankings(RANKINGS).select(["q3", "q0", "q1"])
    assert list(run.rankings()) == [RANKINGS[2], ("q0", []), RANKINGS[0]]


def test_top_cuts_every_ranking():
    run = Run.from_rankings(RANKINGS).top(1)
    assert [ranking for _, ranking in run.rankings()] == [[("10", 3.0)], [], [("7", None)]]


def test_codes_of_a_shared_vocabulary_follow_the_ids_order():
    a = Run.from_rankings(RANKINGS)
    b = Run.from_rankings([("q1", [("5", 1.0), ("10", 0.5)])])
    vocabulary = shared_vocabulary(a.page_ids, b.page_ids)
    assert vocabulary.to_pylist() == sorted({"10", "7", "12", "99", "5"})
    codes = a.page_codes(vocabulary)
    assert [vocabulary[int(c)].as_py() for c in codes] == a.page_ids.to_pylist()
    assert b.page_codes(shared_vocabulary(b.page_ids)).tolist() == [1, 0]
    assert a.page_codes(b.page_ids).tolist() == [1, -1, -1, -1, -1]


def test_inconsistent_columns_are_refused():
    with pytest.raises(ValueError, match="do not describe one run"):
        Run(np.array(["q"], dtype=object), np.array([0, 2]), ["a"], np.array([1.0]))
    assert math.isnan(Run.from_rankings([("q", [("a", None)])]).scores[0])


# ---------------------------------------------------------------------------------------
# Reading and writing run files


def _random_rankings(rng, first_stage: bool) -> list[tuple[str, list[tuple]]]:
    """Random rankings, best first: page ids of every length, non-ASCII among them, scores
    falling with ties, and after reranking a first-stage score beside each."""
    rankings = []
    for query in range(int(rng.integers(1, 30))):
        pages = [str(page) for page in rng.integers(0, 5_900_000, int(rng.integers(0, 30)))]
        pages = list(dict.fromkeys(pages + ["é-page"] * int(rng.integers(0, 2))))
        scores = -np.sort(-np.round(rng.normal(0, 5, len(pages)), 2))
        firsts = rng.normal(0, 5, len(pages))
        rankings.append(
            (
                f"q{query}-ü",
                [
                    (page, float(score), float(first)) if first_stage else (page, float(score))
                    for page, score, first in zip(pages, scores, firsts, strict=True)
                ],
            )
        )
    return rankings


@pytest.mark.parametrize("seed", range(6))
def test_a_kilt_file_reads_as_it_was_written(seed, tmp_path, monkeypatch):
    """Ids given as text or as numbers (read as text), scores missing (NaN) or given, and
    first-stage scores where a reranker kept them; the pages made columns a few at a time
    or all at once."""
    monkeypatch.setattr(runs_module, "_KILT_CHUNK", 7 if seed < 3 else runs_module._KILT_CHUNK)
    rng = np.random.default_rng(seed)
    rankings = _random_rankings(rng, first_stage=seed % 2 == 1)
    path = tmp_path / "bm25.jsonl"
    with path.open("w") as f:
        for query_id, ranking in rankings:
            provenance = []
            for page, *scores in ranking:
                record = {"wikipedia_id": int(page) if page.isdigit() and seed % 3 else page}
                record.update(zip(("score", "first_stage_score"), scores, strict=False))
                if seed == 4:
                    del record["score"]
                provenance.append(record)
            f.write(json.dumps({"id": query_id, "output": {"provenance": provenance}}) + "\n")
    run = Run.read(path)
    expected = [
        (
            query_id,
            [(page, None, *scores[1:]) if seed == 4 else (page, *scores) for page, *scores in r],
        )
        for query_id, r in rankings
    ]
    assert list(run.rankings()) == expected
    assert run.name == "bm25" and run.provenance == {"format": "kilt", "path": str(path)}


@pytest.mark.parametrize("format", FORMATS)
@pytest.mark.parametrize("seed", range(4))
def test_a_run_written_reads_back_the_same(seed, format, tmp_path):
    """Scores come back to the bit (``repr`` in a TREC run, msgspec's shortest form in JSON);
    JSON lines keep the first-stage scores, a TREC run the final ones and its tag. A query
    without pages has no line in a TREC run."""
    rng = np.random.default_rng(seed)
    rankings = _random_rankings(rng, first_stage=format == "kilt" and seed % 2 == 1)
    run = Run.from_rankings(rankings, name="dense", provenance={"tag": "dense-e5"})
    path = tmp_path / f"run.{format}"
    run.write(path, format)
    back = Run.read(path, name="again")
    kept = [(q, r) for q, r in rankings if r or format == "kilt"]
    assert list(back.rankings()) == kept
    assert back.name == "again"
    assert back.provenance == {
        "format": format,
        "path": str(path),
        **({"tag": "dense-e5"} if format == "trec" else {}),
    }


def test_the_trec_writer_writes_the_lines_of_write_run(tmp_path, monkeypatch):
    """Formatted by columns (`write_run`, line by line, is not called), the same bytes."""
    rankings = _random_rankings(np.random.default_rng(7), first_stage=True)
    write_run(tmp_path / "old.trec", [(q, [p[:2] for p in r]) for q, r in rankings], "fused")
    monkeypatch.setattr(runs_module, "write_run", None)
    Run.from_rankings(rankings, name="fused").write(tmp_path / "run.trec", "trec")
    expected = "".join(
        f"{query_id} Q0 {page} {rank} {score!r} fused\n"
        for query_id, ranking in rankings
        for rank, (page, score, _) in enumerate(ranking, 1)
    )
    written = (tmp_path / "run.trec").read_text()
    assert written == (tmp_path / "old.trec").read_text() == expected


def test_the_kilt_writer_writes_one_json_object_a_line_in_the_keys_order(tmp_path):
    rankings = _random_rankings(np.random.default_rng(8), first_stage=True)
    rankings[0] = (rankings[0][0], [item[:2] for item in rankings[0][1]])  # not reranked
    Run.from_rankings(rankings).write(tmp_path / "run.jsonl")
    keys = ("wikipedia_id", "score", "first_stage_score")
    expected = b"".join(
        msgspec.json.encode(
            {
                "id": query_id,
                "output": {"provenance": [dict(zip(keys, p, strict=False)) for p in ranking]},
            }
        )
        + b"\n"
        for query_id, ranking in rankings
    )
    assert (tmp_path / "run.jsonl").read_bytes() == expected


@pytest.mark.parametrize("format", FORMATS)
def test_a_page_without_a_score_is_not_written(format, tmp_path):
    """Read from JSON lines without scores, a run cannot be written with them: refused,
    naming the query and rank, and nothing written."""
    run = Run.from_rankings([("q1", [("a", 2.0)]), ("q2", [("b", 1.0), ("c", None)])])
    with pytest.raises(NamesakeError, match=r"^query q2: the score of rank 2 is nan"):
        run.write(tmp_path / "run", format)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("how", PIPES)
def test_a_second_prediction_is_named_in_a_pipe_as_in_the_file(how, tmp_path):
    data = b'{"id": "q1", "output": {"provenance": []}}\n\n'
    data += b'{"id": "q1", "output": {"provenance": [{"wikipedia_id": 7}]}}\n'
    with piped(data, how, tmp_path) as pipe, pytest.raises(BadInputError) as caught:
        Run.read(pipe)
    assert (caught.value.path, caught.value.line) == (str(pipe), 3)
    assert caught.value.message == "second prediction for q1"


def test_formats_are_checked(tmp_path):
    with pytest.raises(ValueError, match="format must be one of"):
        Run.read(tmp_path / "run", "csv")
    with pytest.raises(ValueError, match="format must be one of"):
        Run.from_rankings(RANKINGS).write(tmp_path / "run", "csv")


def test_query_codes_out_of_their_order_of_appearance_are_not_trusted():
    """Arrow numbers a run's queries in the order they first appear, which is the order of
    the run's queries; codes numbered otherwise send the run to the strict reader."""
    assert _in_order_of_appearance(np.array([0, 0, 1, 0, 2, 1]), 3)
    assert not _in_order_of_appearance(np.array([0, 2, 1]), 3)
    assert not _in_order_of_appearance(np.array([1, 0]), 2)
    assert not _in_order_of_appearance(np.array([0, 1]), 3)


def test_the_white_space_the_trec_writer_looks_for_is_what_str_isspace_takes():
    """The page ids of a run are checked by Arrow, with a regular expression: it must find
    in an id exactly the characters `check_token` refuses, every code point tried."""
    characters = [chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000]
    found = pc.match_substring_regex(pa.array(characters), _WHITE_SPACE).to_pylist()
    assert found == [character.isspace() for character in characters]


GOOD_RANKINGS = [("q1", [("a", 3.0), ("b", 2.0)]), ("q2", []), ("q3", [("c", 1.0)])]


@pytest.mark.parametrize(
    "query_id, page, score, tag",
    [
        ("q\u20031", "c", 1.0, "t"),
        ("", "c", 1.0, "t"),
        ("q3", "c\x1cd", 1.0, "t"),
        ("q3", "", 1.0, "t"),
        ("q3", "c", 1.0, "my run"),
        ("q3", "c", 1.0, ""),
        ("q3", "c", math.nan, "t"),
        ("q3", "c", -math.inf, "t"),
        ("q3", "c", 0.1, "t"),  # below the next page's
        ("q\u20031", "c", 0.1, "t"),  # the query id is checked first
    ],
)
def test_what_a_trec_run_cannot_hold_is_refused_as_write_run_refuses_it(
    query_id, page, score, tag, tmp_path
):
    """The same message as `write_run`'s, for the first fault it meets, and nothing
    written."""
    rankings = [*GOOD_RANKINGS[:2], (query_id, [(page, score), ("d", 0.5)])]
    with pytest.raises(NamesakeError) as expected:
        write_run(tmp_path / "old.trec", rankings, tag)
    with pytest.raises(NamesakeError) as caught:
        Run.from_rankings(rankings).write(tmp_path / "run.trec", "trec", tag)
    assert str(caught.value) == str(expected.value).replace("old.trec", "run.trec")
    assert not (tmp_path / "run.trec").exists()
