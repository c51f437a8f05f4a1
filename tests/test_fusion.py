"""`namesake fuse` and `namesake.amber.evaluation.fusion`: the fusion against hand-computed RRF
and CombSUM and against ranx's `fuse` on random runs, runs of other queries refused naming the
file, and the fused run scored."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import SAMPLE_KILT
from folders import folder_files

from namesake.amber.evaluation import fusion_arrays
from namesake.amber.evaluation.fusion import (
    METHODS,
    RBC_PHI,
    RRF_K,
    WEIGHTED,
    FusionSettings,
    fuse,
    fuse_runs,
)
from namesake.amber.evaluation.fusion_arrays import NORMALISATIONS
from namesake.cli import main
from namesake.errors import BadInputError, NamesakeError
from namesake.runs import Run
from namesake.trec import read_scored_run

NAMESAKE = Path(sys.executable).with_name("namesake")
RUN_A = "q1 Q0 a 1 9.0 A\nq1 Q0 b 2 5.0 A\nq1 Q0 c 3 1.0 A\nq2 Q0 x 1 2.0 A\n"
RUN_B = "q1 Q0 c 1 0.9 B\nq1 Q0 a 2 0.8 B\nq2 Q0 y 1 3.0 B\nq2 Q0 x 2 1.0 B\n"


def _fused(paths, method, **settings) -> dict[str, list[tuple[str, float]]]:
    """`fuse_runs`' fused run as {query: its ranked (page, score) pairs}."""
    return dict(fuse_runs(paths, method, **settings).rankings())


@pytest.fixture
def runs(tmp_path):
    a, b = tmp_path / "a.trec", tmp_path / "b.trec"
    a.write_text(RUN_A)
    b.write_text(RUN_B)
    return str(a), str(b)


def test_rrf_by_hand(runs):
    """RRF: sum over runs of 1 / (k + rank), k = 60, ranks from 1."""
    fused = _fused(runs, "rrf")
    expected_q1 = {
        "a": 1 / 61 + 1 / 62,
        "c": 1 / 63 + 1 / 61,
        "b": 1 / 62,
    }
    assert [doc for doc, _ in fused["q1"]] == ["a", "c", "b"]
    for doc, score in fused["q1"]:
        assert score == pytest.approx(expected_q1[doc])
    assert dict(fused["q2"]) == pytest.approx({"x": 1 / 61 + 1 / 62, "y": 1 / 61})


def test_rrf_k_changes_the_constant(runs):
    fused = _fused(runs, "rrf", k=1)
    assert dict(fused["q1"])["b"] == pytest.approx(1 / 3)


def test_combsum_by_hand(runs):
    """CombSUM of min-max normalised scores per query: q1 in A: a 1, b 0.5, c 0; in B:
    c 1, a 0 -> a 1, c 1, b 0.5."""
    fused = dict(_fused(runs, "combsum")["q1"])
    assert fused == pytest.approx({"a": 1.0, "c": 1.0, "b": 0.5})


def test_top_k_cuts_each_query(runs):
    assert len(_fused(runs, "rrf", top_k=2)["q1"]) == 2


def test_runs_of_other_queries_are_refused_naming_the_file(runs, tmp_path):
    other = tmp_path / "other.trec"
    other.write_text("q1 Q0 a 1 1.0 C\n")
    with pytest.raises(BadInputError) as caught:
        fuse_runs([runs[0], str(other)], "rrf")
    assert caught.value.path == str(other)
    assert "lacks query q2" in caught.value.message


def test_score_methods_need_scores(tmp_path, runs):
    unscored = tmp_path / "unscored.jsonl"
    unscored.write_text(
        json.dumps({"id": "q1", "output": {"provenance": [{"wikipedia_id": "a"}]}})
        + "\n"
        + json.dumps({"id": "q2", "output": {"provenance": [{"wikipedia_id": "x"}]}})
        + "\n"
    )
    with pytest.raises(BadInputError, match="without a score") as caught:
        fuse_runs([runs[0], str(unscored)], "combsum")
    assert caught.value.path == str(unscored)
    assert [doc for doc, _ in _fused([runs[0], str(unscored)], "rrf")["q1"]] == ["a", "b", "c"]


def test_wrong_arguments_are_refused(runs):
    with pytest.raises(NamesakeError, match="at least two runs"):
        fuse_runs(runs[:1], "rrf")
    with pytest.raises(NamesakeError, match="give --weights"):
        fuse_runs(runs, "wsum")
    with pytest.raises(NamesakeError, match="3 weights for 2 runs"):
        fuse_runs(runs, "wsum", weights=[1, 2, 3])


def test_fuse_command_writes_a_run_that_evaluate_scores(sample_build, tmp_path):
    out, _ = sample_build
    dataset = str(out / "dataset")
    base = ["retrieve", "--corpus", str(SAMPLE_KILT), "--dataset", dataset, "--config"]
    for kind in ("bm25", "tfidf"):
        main([*base, "human_qa", "--retriever", kind, "--out", str(tmp_path / f"{kind}.jsonl")])
    fused = tmp_path / "fused.trec"
    main(
        ["fuse", str(tmp_path / "bm25.jsonl"), str(tmp_path / "tfidf.jsonl"), "--method", "rrf"]
        + ["--out", str(fused)]
    )
    scored = read_scored_run(fused)
    assert len(scored) == 18
    assert {line.split()[5] for line in fused.read_text().splitlines()} == {"rrf"}
    main(
        ["evaluate", "--dataset", dataset, "--config", "human_qa", "--predictions", str(fused)]
        + ["--out", str(tmp_path / "report")]
    )
    metrics = json.loads((tmp_path / "report" / "metrics.json").read_text())["metrics"]
    assert 0 <= metrics["accuracy@1"] <= 100 and "ndcg@10" in metrics["intervals"]


def test_fusing_a_slice_of_queries_at_a_time_changes_nothing(runs, monkeypatch):
    """ranx fuses borda and combmax a slice of queries at a time; numpy fuses the rest whole."""
    import namesake.amber.evaluation.fusion as fusion

    methods = ("rrf", "combsum", "combmnz", "borda", "combmax")
    whole = {method: _fused(runs, method) for method in methods}
    monkeypatch.setattr(fusion, "CHUNK_QUERIES", 1)
    for method, fused in whole.items():
        assert _fused(runs, method) == fused, method


def test_rbc_by_hand(runs):
    """RBC: a page at rank r (from 0) of a run gets (1 - phi) phi^r, summed over runs; q1 with
    phi 0.5: a 0.5 + 0.25, c 0.125 + 0.5, b 0.25."""
    fused = _fused(runs, "rbc", phi=0.5)
    assert dict(fused["q1"]) == pytest.approx({"a": 0.75, "c": 0.625, "b": 0.25})
    assert [doc for doc, _ in _fused(runs, "rbc")["q1"]] == ["a", "c", "b"]  # phi 0.8


@pytest.mark.parametrize("method", WEIGHTED)
def test_weights_of_one_give_the_unweighted_method(runs, method):
    """Each method's weighted form in ranx, with every run weighing 1, is the method itself
    (wsum's unweighted self is combsum)."""
    unweighted = _fused(runs, "combsum" if method == "wsum" else method)
    assert _fused(runs, method, weights=[1.0, 1.0]) == unweighted


def test_weights_shift_the_vote_by_hand(runs):
    """Borda over q1's three pages: A gives a 3, b 2, c 1; B gives c 3, a 2 and the page it
    lacks the point left, b 1. Weighing B three times: c 1 + 9, a 3 + 6, b 2 + 3. CombSUM of
    min-max scores, B weighing 3: c 0 + 3, a 1 + 0, b 0.5."""
    borda = _fused(runs, "borda", weights=[1, 3])
    assert borda["q1"] == [("c", 10.0), ("a", 9.0), ("b", 5.0)]
    assert dict(_fused(runs, "combsum", weights=[1, 3])["q1"]) == pytest.approx(
        {"c": 3.0, "a": 1.0, "b": 0.5}
    )
    condorcet = _fused(runs, "condorcet", weights=[3, 1])  # A outvotes B on every pair
    assert [doc for doc, _ in condorcet["q1"]] == ["a", "b", "c"]


def _fuse(folder: Path, *options: str) -> subprocess.CompletedProcess:
    """`namesake fuse a.trec b.trec OPTIONS --out fused.trec` as a process, in ``folder``."""
    return subprocess.run(
        [str(NAMESAKE), "fuse", "a.trec", "b.trec", *options, "--out", "fused.trec"],
        capture_output=True,
        text=True,
        cwd=folder,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"},
        timeout=300,
    )


def _refused_fusion(folder: Path, *options: str) -> str:
    """`namesake fuse a.trec b.trec OPTIONS --out fused.trec` as a process, over an earlier
    fused.trec: exit status 1, one error line (returned), and every file of ``folder``, the
    runs and the earlier output, unchanged byte for byte."""
    before = folder_files(folder)
    done = _fuse(folder, *options)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    (line,) = [line for line in done.stderr.splitlines() if line.startswith("namesake: error: ")]
    assert folder_files(folder) == before
    return line


@pytest.fixture
def fused_before(runs) -> Path:
    """The runs' folder, holding an earlier fused.trec that namesake wrote (a rerun may
    replace it: only a refusal keeps it)."""
    folder = Path(runs[0]).parent
    done = _fuse(folder, "--run-name", "earlier")
    assert done.returncode == 0, done.stderr
    return folder


@pytest.mark.parametrize(
    "options, message",
    [
        (
            ["--method", "rrf", "--weights", "1", "2"],
            "rrf takes no weights: drop --weights, or fuse with a method that weighs the runs "
            "(borda, condorcet, combsum, combmnz, wsum)",
        ),
        (
            ["--method", "wsum", "--weights", "nan", "1"],
            "--weights nan: a weight is a run's share of the vote, a finite number of at least 0",
        ),
        (
            ["--method", "combsum", "--weights", "1", "inf"],
            "--weights inf: a weight is a run's share of the vote, a finite number of at least 0",
        ),
        (
            ["--method", "borda", "--weights", "-1", "2"],
            "--weights -1.0: a weight is a run's share of the vote, a finite number of at least 0",
        ),
        (
            ["--method", "wsum", "--weights", "0", "0"],
            "every weight is 0: give at least one run a weight above 0",
        ),
        (["--method", "rbc", "--rbc-phi", "1"], "rbc's phi must be above 0 and below 1, not 1.0"),
    ],
    ids=["rrf weighted", "nan", "inf", "negative", "all zero", "rbc phi"],
)
def test_weights_a_method_cannot_take_are_refused_before_a_run_is_read(
    fused_before, options, message
):
    assert _refused_fusion(fused_before, *options) == f"namesake: error: {message}"


@pytest.mark.parametrize("format", ["trec", "kilt"])
def test_a_fused_score_that_overflows_is_refused_by_the_writer(fused_before, format):
    """Finite weights can still overflow: a page first in both runs (min-max 1) weighed 1e308
    by each sums to inf. The writer refuses it, naming query and rank, and the earlier
    output stays (a JSON line would have held null, a TREC run inf)."""
    (fused_before / "b.trec").write_text(RUN_A.replace(" A\n", " B\n"))
    line = _refused_fusion(
        fused_before, "--method", "combsum", "--weights", "1e308", "1e308", "--format", format
    )
    assert (
        line
        == "namesake: error: query q1: the score of rank 1 is inf: a run holds finite scores only"
    )


def test_a_run_name_that_splits_the_line_is_refused_before_the_fusion(fused_before):
    line = _refused_fusion(fused_before, "--run-name", "my run")
    assert line == (
        "namesake: error: --run-name 'my run' cannot be written to fused.trec: it is empty or "
        "holds white space"
    )


def test_amber_compare_offers_only_methods_it_can_run_without_weights(capsys):
    """amber compare has no --weights: wsum, which needs them, is refused by the parser,
    before any retrieval, not after every first stage ran."""
    from namesake.amber.evaluation.fusion import METHODS
    from namesake.cli import build_parser

    base = ["amber", "compare", "--corpus", "c", "--dataset", "d", "--out", "o", "--fuse"]
    with pytest.raises(SystemExit):
        build_parser().parse_args([*base, "wsum"])
    assert "invalid choice: 'wsum'" in capsys.readouterr().err
    for name in METHODS.keys() - {"wsum"}:
        assert build_parser().parse_args([*base, name]).fuse == name


# --- fusion over columnar runs: numpy's fusion is ranx's -----------------------------------------

#: (method, norm, weights) fused by numpy, each against ranx's `fuse`
NUMPY_FUSIONS = [
    ("rrf", "min-max", None),
    ("isr", "min-max", None),
    ("rbc", "min-max", None),
    *[(method, norm, None) for method in ("combsum", "combmnz") for norm in NORMALISATIONS],
    *[
        (method, norm, (0.3, 2.0, 1.0))
        for method in ("combsum", "combmnz", "wsum")
        for norm in NORMALISATIONS
    ],
]
#: and a few that ranx fuses, through the same columns
RANX_FUSIONS = [
    ("borda", "min-max", None),
    ("condorcet", "min-max", (1.0, 0.5, 2.0)),
    ("combmax", "zmuv", None),
    ("combsum", "rank", None),
    ("combmnz", "borda", None),
]


def _page_id(rng, long: bool) -> str:
    """A page id as runs hold them: digits of any length (so "12" < "7" as text), letters,
    accents, the empty id and, if ``long``, now and then one longer than 8 bytes (all of the
    runs' ids are then keyed by the shared vocabulary, else by their bytes)."""
    kind = rng.integers(0, 10)
    if 6 <= kind < 8:
        return "".join(rng.choice(list("abé日_"), rng.integers(1, 3)))
    if kind == 8:
        return ""
    if kind == 9 and long:
        return f"Page_{rng.integers(0, 50)}_long"
    return str(rng.integers(0, 10 ** rng.integers(1, 9)))


def _random_rankings(rng, queries: list[str], pool: list[str], scored: bool, fewest: int):
    """One run's rankings: each query's pages drawn from ``pool`` (which the runs share in
    part), ``fewest`` to 12 of them, scores falling with ties (few distinct values) or none."""
    rankings = []
    for query in rng.permutation(queries).tolist():
        size = int(rng.integers(fewest, min(12, len(pool)) + 1))
        pages = rng.choice(pool, size, replace=False).tolist()
        values = np.sort(rng.choice([-2.0, 0.5, 1.0, 3.25, 7.0], size) * rng.choice([1, 10]))
        scores = values[::-1].tolist() if scored else [None] * size
        rankings.append((query, list(zip(pages, scores, strict=True))))
    return rankings


def _random_runs(seed: int, scored: bool, empty: bool = True) -> list[Run]:
    """Three runs of 40 queries, in different query orders, with overlapping and disjoint
    pages, and ``empty`` rankings among them; at least one page in each run, which ranx's Run
    needs. Seed 2 has long ids among its pages."""
    rng = np.random.default_rng(seed)
    queries = [f"q{i}" for i in range(40)]
    shared = list(dict.fromkeys(_page_id(rng, long=seed == 2) for _ in range(15)))
    runs = []
    for name in ("bm25", "dense", "splade"):
        own = [
            page
            for page in dict.fromkeys(_page_id(rng, long=seed == 2) for _ in range(10))
            if page not in shared
        ]
        rankings = _random_rankings(rng, queries, shared + own, scored, fewest=0 if empty else 1)
        rankings[0] = (rankings[0][0], [(shared[0], 1.0 if scored else None)])
        runs.append(Run.from_rankings(rankings, name=name))
    return runs


def _ranx_fusion(runs: list[Run], method: str, settings: FusionSettings) -> list:
    """ranx's `fuse` of ``runs`` read as `fuse_runs` handed them to ranx before the columns:
    {query: {page: score}}, scores falling by rank for rank-based methods; each query's pages
    sorted by (-score, page) and cut to top_k, in the first run's query order."""
    from ranx import Run as RanxRun
    from ranx import fuse as ranx_fuse

    rank_based = METHODS[method].rank_based
    ranx_runs = []
    for run in runs:
        rankings = {}
        for query, ranking in run.rankings():
            rankings[query] = {
                page: float(len(ranking) - rank) if rank_based else score
                for rank, (page, score) in enumerate(ranking)
            }
        ranx_runs.append(RanxRun(rankings, name=run.name))
    forms = METHODS[method]
    params = {"rrf": {"k": settings.rrf_k}, "rbc": {"phi": settings.rbc_phi}}.get(method, {})
    if settings.weights is not None:
        params["weights"] = list(settings.weights)
    fused = ranx_fuse(
        ranx_runs,
        norm=None if rank_based else settings.norm,
        method=forms.unweighted if settings.weights is None else forms.weighted,
        params=params,
    ).to_dict()
    return [
        (
            query,
            sorted(fused[query].items(), key=lambda item: (-item[1], item[0]))[: settings.top_k],
        )
        for query in runs[0].query_ids
    ]


def _assert_same_fusion(ours: Run, theirs: list) -> None:
    """The same queries in the same order, the same pages in the same order, scores equal
    within 1e-9 relative."""
    ours = list(ours.rankings())
    assert [query for query, _ in ours] == [query for query, _ in theirs]
    for (query, ranking), (_, expected) in zip(ours, theirs, strict=True):
        assert [page for page, _ in ranking] == [page for page, _ in expected], query
        assert [score for _, score in ranking] == pytest.approx(
            [score for _, score in expected], rel=1e-9, abs=1e-12
        ), query


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("method, norm, weights", NUMPY_FUSIONS + RANX_FUSIONS)
def test_fusion_equals_ranx_on_random_runs(method, norm, weights, seed):
    rank_based = METHODS[method].rank_based
    # rank-based methods need no scores; ranx's zmuv loses queries after an empty ranking
    # (`test_an_empty_ranking_leaves_the_other_queries_whole`)
    runs = _random_runs(seed, scored=not rank_based or seed != 0, empty=norm != "zmuv")
    settings = FusionSettings(rrf_k=[60, 1, 7][seed], rbc_phi=[0.8, 0.5, 0.95][seed])
    settings = dataclasses.replace(settings, norm=norm, weights=weights, top_k=[100, 5, 2][seed])
    long_ids = fusion_arrays.page_keys(runs)[0].dtype == np.int64  # vocabulary positions
    assert long_ids == (seed == 2)
    fused = fuse(runs, method, settings)
    _assert_same_fusion(fused, _ranx_fusion(runs, method, settings))
    assert fused.name == method and fused.provenance["runs"] == ["bm25", "dense", "splade"]


@pytest.mark.parametrize("method, norm", [("combsum", "zmuv"), ("rrf", "min-max")])
def test_an_empty_ranking_leaves_the_other_queries_whole(method, norm):
    """Each query fuses as it does alone. ranx's zmuv does not hold to it: an empty ranking's
    mean divides by 0 inside a numba thread, which then leaves the rest of its queries empty,
    silently (ranx 0.3.21)."""
    runs = _random_runs(5, scored=True)
    assert any(not length for run in runs for length in run.lengths)
    settings = FusionSettings(norm=norm)
    whole = list(fuse(runs, method, settings).rankings())
    for query, ranking in whole:
        alone = fuse([run.select([query]) for run in runs], method, settings)
        assert list(alone.rankings()) == [(query, ranking)]


def test_numpy_fuses_the_methods_it_has_and_ranx_the_others():
    """The comparison above holds for numpy's arithmetic only where numpy fuses."""
    for method, norm, _ in NUMPY_FUSIONS:
        assert fusion_arrays.votes(method, norm, RRF_K, RBC_PHI) is not None, method
    for method, norm, _ in RANX_FUSIONS:
        assert fusion_arrays.votes(method, norm, RRF_K, RBC_PHI) is None, method


@pytest.mark.parametrize("method", ["rrf", "combsum", "borda"])
def test_a_page_repeated_in_a_ranking_counts_once_at_its_first_rank(method):
    """A KILT provenance may name a page once a passage: c repeated at ranks 3 and 4 of A
    fuses as A without the repeat."""
    b = Run.from_rankings([("q", [("c", 4.0), ("d", 3.0), ("a", 1.0)])], name="B")
    repeated = Run.from_rankings(
        [("q", [("a", 9.0), ("b", 5.0), ("c", 2.0), ("c", 8.0), ("d", 1.0)])], name="A"
    )
    once = Run.from_rankings([("q", [("a", 9.0), ("b", 5.0), ("c", 2.0), ("d", 1.0)])], name="A")
    assert list(fuse([repeated, b], method).rankings()) == list(fuse([once, b], method).rankings())


def test_page_keys_order_and_equal_as_the_ids():
    """Short ids are their own bytes, long or NUL-holding ones positions in the shared
    vocabulary: either way a key's order is its id's (as Python sorts str) and equal ids,
    in any run, have equal keys."""
    rng = np.random.default_rng(3)
    short = [_page_id(rng, long=False) for _ in range(300)]
    for ids in (short, [*short, "a\x00", "a", "a_page_id_of_many_bytes"]):
        runs = [
            Run.from_rankings([("q", [(page, 1.0) for page in part])])
            for part in (ids[: len(ids) // 2], ids[len(ids) // 2 :])
        ]
        keys = np.concatenate(fusion_arrays.page_keys(runs))
        assert keys.dtype == (np.uint64 if ids is short else np.int64)
        by_key = [ids[i] for i in np.argsort(keys, kind="stable")]
        assert by_key == sorted(ids)
        for i, j in rng.integers(0, len(ids), (500, 2)):
            assert (keys[i] == keys[j]) == (ids[i] == ids[j])


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.uint64])
def test_segment_order_is_a_stable_sort_of_each_segment(dtype):
    """Against Python's sort of each segment (stable), NaN last, cut to the limit; segments of
    0 to 30 values, some slices of the padded matrix holding a single segment."""
    rng = np.random.default_rng(4)
    lengths = rng.integers(0, 31, 200)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    values = rng.integers(0, 6, offsets[-1]).astype(dtype)
    if dtype == np.float64:
        values[rng.random(len(values)) < 0.1] = np.nan
    if dtype != np.float64:
        values[rng.random(len(values)) < 0.1] = np.iinfo(dtype).max  # the padding's value
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fusion_arrays, "SORT_CELLS", 64)
        order, kept = fusion_arrays.segment_order(values, offsets, limit=7)
    expected = []
    for start, stop in zip(offsets[:-1], offsets[1:], strict=True):
        key = [(math.isnan(v), 0 if math.isnan(v) else v) for v in values[start:stop].tolist()]
        expected += sorted(range(start, stop), key=lambda i: key[i - start])[:7]
    assert order.tolist() == expected
    assert kept.tolist() == np.minimum(lengths, 7).tolist()


def test_fuse_refuses_runs_naming_them():
    scored = Run.from_rankings([("q1", [("a", 1.0)]), ("q2", [])], name="bm25.trec")
    unscored = Run.from_rankings([("q1", [("a", None)]), ("q2", [])], name="dense.jsonl")
    with pytest.raises(BadInputError) as caught:
        fuse([scored, unscored], "combsum")
    assert str(caught.value) == (
        "dense.jsonl: query q1 has pages without a score: fuse it with a rank-based method "
        "(borda, condorcet, isr, rbc, rrf)"
    )
    other = Run.from_rankings([("q1", [("a", 1.0)]), ("q3", [])], name="other.trec")
    with pytest.raises(BadInputError) as caught:
        fuse([scored, other], "rrf")
    assert str(caught.value) == (
        "other.trec: lacks query q2 of bm25.trec (1 missing, 1 added): fused runs must answer "
        "the same queries"
    )
    twice = Run.from_rankings([("q1", []), ("q2", []), ("q1", [])], name="twice.trec")
    with pytest.raises(BadInputError, match="twice.trec: query q1 comes twice"):
        fuse([scored, twice], "rrf")


@pytest.mark.parametrize(
    "settings, message",
    [
        (FusionSettings(norm="softmax"), "no normalisation 'softmax'"),
        (FusionSettings(top_k=0), "top_k must be a whole number of at least 1, not 0"),
        (FusionSettings(rrf_k=-1), "rrf_k must be a whole number of at least 1, not -1"),
        (FusionSettings(rbc_phi=0.0), "rbc's phi must be above 0 and below 1, not 0.0"),
        (FusionSettings(weights=(1.0,)), "rrf takes no weights"),
    ],
)
def test_fuse_refuses_settings_before_any_work(settings, message):
    runs = [Run.from_rankings([("q", [("a", 1.0)])], name=name) for name in ("a", "b")]
    with pytest.raises(NamesakeError, match=re.escape(message)):
        fuse(runs, "rrf", settings)


def test_the_commands_start_without_numpy():
    """Every command's parser reads fusion's methods at start-up: the fusion itself, with
    numpy and pyarrow, loads only when a fusion runs."""
    code = (
        "import sys; from namesake.cli import build_parser; build_parser(); "
        "print(sorted({'numpy', 'pyarrow'} & set(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
