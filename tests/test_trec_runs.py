"""TREC runs in and out: `retrieve --format trec`, `evaluate` reading a run (told from its
content), `amber qrels`, and ranx scoring the same run on those qrels by itself; a bad run is
refused naming its line."""

from __future__ import annotations

import gzip
import itertools
import json
import math
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from conftest import SAMPLE_KILT
from hypothesis import given, settings
from hypothesis import strategies as st
from pipe_inputs import PIPES, fifo_of, piped
from run_files import ranked_ids

from namesake import runs as runs_module
from namesake.cli import main
from namesake.errors import BadInputError, NamesakeError
from namesake.runs import Run
from namesake.trec import read_run, read_tagged_run, write_qrels, write_run

IR = ("ndcg@10", "mrr@10", "r-precision", "recall@20", "recall@100")
NAMESAKE = Path(sys.executable).with_name("namesake")
BOM = b"\xef\xbb\xbf"


@pytest.fixture(scope="module")
def runs(sample_build, tmp_path_factory):
    """BM25 on human_qa written both ways, each scored by `evaluate`."""
    out, _ = sample_build
    dataset = str(out / "dataset")
    work = tmp_path_factory.mktemp("trec")
    common = ["--corpus", str(SAMPLE_KILT), "--dataset", dataset, "--config", "human_qa"]
    common += ["--retriever", "bm25", "--index", str(work / "index")]
    main(["retrieve", *common, "--out", str(work / "bm25.jsonl")])
    main(["retrieve", *common, "--out", str(work / "bm25.trec"), "--format", "trec"])
    for name in ("bm25.jsonl", "bm25.trec"):
        main(
            ["evaluate", "--dataset", dataset, "--config", "human_qa"]
            + ["--predictions", str(work / name), "--out", str(work / f"report-{name}")]
        )
    return dataset, work


def _metrics(folder):
    return json.loads((folder / "metrics.json").read_text())["metrics"]


def test_a_trec_run_holds_the_same_ranking_as_the_json_lines(runs):
    _, work = runs
    lines = (work / "bm25.trec").read_text().splitlines()
    fields = lines[0].split()
    assert len(fields) == 6 and fields[1] == "Q0" and fields[3] == "1" and fields[5] == "bm25"
    assert read_run(work / "bm25.trec") == ranked_ids(work / "bm25.jsonl")


def test_evaluate_scores_a_trec_run_as_the_json_lines(runs):
    _, work = runs
    kilt, trec = _metrics(work / "report-bm25.jsonl"), _metrics(work / "report-bm25.trec")
    assert kilt == trec
    assert {f"{name}{part}" for name in IR for part in ("", "_head", "_tail")} <= set(trec)
    assert all(len(trec["intervals"][name]) == 2 for name in IR)


def test_ranx_on_the_qrels_file_gives_evaluate_s_figures(runs, tmp_path):
    """What a user does without namesake: `amber qrels` + the TREC run, scored by ranx."""
    from ranx import Qrels, Run, evaluate

    dataset, work = runs
    qrels = tmp_path / "qrels.txt"
    main(["amber", "qrels", "--dataset", dataset, "--config", "human_qa", "--out", str(qrels)])
    lines = qrels.read_text().splitlines()
    assert all(len(line.split()) == 4 and line.split()[1::2] == ["0", "1"] for line in lines)
    ranx_figures = evaluate(
        Qrels.from_file(str(qrels), kind="trec"),
        Run.from_file(str(work / "bm25.trec"), kind="trec"),
        list(IR),
    )
    ours = _metrics(work / "report-bm25.trec")
    for name in IR:
        assert ours[name] == pytest.approx(100 * ranx_figures[name]), name


def test_run_name_tags_the_run(runs, tmp_path):
    dataset, work = runs
    out = tmp_path / "run.trec"
    main(
        ["retrieve", "--dataset", dataset, "--config", "human_qa", "--retriever", "bm25"]
        + ["--index", str(work / "index"), "--format", "trec", "--run-name", "my-bm25"]
        + ["--out", str(out)]
    )
    assert {line.split()[5] for line in out.read_text().splitlines()} == {"my-bm25"}


@pytest.mark.parametrize(
    "name, message",
    [("my run", "empty or holds white space"), ("", "empty or holds white space")],
)
def test_a_run_name_that_splits_the_line_is_refused_before_the_work(name, message, tmp_path):
    with pytest.raises(SystemExit) as caught:
        main(
            ["retrieve", "--corpus", str(SAMPLE_KILT), "--dataset", "nowhere", "--config"]
            + ["human_qa", "--retriever", "bm25", "--format", "trec", "--run-name", name]
            + ["--out", str(tmp_path / "run.trec")]
        )
    assert message in str(caught.value)
    assert not (tmp_path / "run.trec").exists()


GOOD = "q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 2.0 t\nq2 Q0 d1 1 1.5 t\n"


#: runs the strict reader refuses, the line it names, and what it says
BAD_RUNS = [
    (GOOD + "q2 Q0 d3 2 1.0\n", 4, "expected 6 fields"),
    (GOOD + "q2 Q0 d3 two 1.0 t\n", 4, "rank 'two' (4th field) is not an integer"),
    (GOOD + "q2 Q0 d3 2 high t\n", 4, "score 'high' (5th field) is not a number"),
    (GOOD + "q2 Q0 d3 2 nan t\n", 4, "is not finite"),
    (
        GOOD + "q1 Q0 d1 3 1.0 t\n",
        4,
        "document d1 is ranked twice for query q1 (first on line 1)",
    ),
    (GOOD + "q1 Q0 d3 2 1.0 t\n", 4, "rank 2 of query q1 comes after rank 2 (line 2)"),
    (GOOD + "q2 Q0 d3 2 9.0 t\n", 4, "is above the score 1.5 of rank 1 (line 3)"),
    ("q1 Q0 d1 1 3.0 t\nq1 Q0 \xff 2 2.0 t\n", 2, "not UTF-8"),
    # read as trec_eval reads them: Python's int and float take these, trec_eval does not
    (GOOD + "q2 Q0 d3 1_0 1.0 t\n", 4, "rank '1_0' (4th field) is not an integer"),
    (GOOD + "q2 Q0 d3 2 0_5 t\n", 4, "score '0_5' (5th field) is not a number"),
    (GOOD + "q2 Q0 d3 \u0662 1.0 t\n", 4, "rank '\u0662' (4th field) is not an integer"),
    (GOOD + "q2 Q0 d3 2 \uff11.0 t\n", 4, "score '\uff11.0' (5th field) is not a number"),
    # split on ASCII white space only: a no-break space, an em space or \x1f splits nothing
    (GOOD + "q2 Q0 d3\u00a02 1.0 t\n", 4, "expected 6 fields"),
    (GOOD + "q2 Q0 d3 2\u20031.0 t\n", 4, "expected 6 fields"),
    (GOOD + "q2 Q0 d3\x1f2 1.0 t\n", 4, "expected 6 fields"),
]


def _run_bytes(text: str) -> bytes:
    return text.encode("utf-8").replace("\xff".encode(), b"\xff")


@pytest.mark.parametrize("text, line, message", BAD_RUNS)
def test_a_bad_run_is_refused_naming_its_line(tmp_path, text, line, message):
    path = tmp_path / "run.trec"
    path.write_bytes(_run_bytes(text))
    with pytest.raises(BadInputError) as caught:
        Run.read(path)
    assert (caught.value.path, caught.value.line) == (str(path), line)
    assert message in caught.value.message


@pytest.mark.parametrize("first", ["q1 d1 1", "q1 Q0 d1 1_0 3.0 t", "q1 Q0 d1 1 3.0\u00a0t"])
def test_a_file_of_neither_format_is_refused_naming_its_line(tmp_path, first):
    """The format is told by the rules the TREC reader reads by: a line it would refuse is
    not taken for a run line."""
    path = tmp_path / "run.txt"
    path.write_text(f"\n{first}\n")
    with pytest.raises(BadInputError, match="neither a KILT JSON line nor a TREC run line") as e:
        Run.read(path)
    assert e.value.line == 2


ODD_SPACES = "q\u00a01\tQ0\x0bd\u20281\x0c1 3.0 t\r\nq\u00a01 Q0 d\x852 2 2e0 t\r\n"
MERGED = "q1 Q0 a 1 3 t\nq2 Q0 c 1 5 t\nq1 Q0 b 2 2 t\n\nq2 Q0 d 7 1 t\n"


def test_fields_are_split_on_ascii_white_space_and_ids_kept_whole(tmp_path):
    """trec_eval splits on C's isspace (space, tab, CR, LF, VT, FF) and ends a line at LF
    only: ids holding a no-break space or a Unicode line separator are one field on one
    line, and CRLF line ends read as LF."""
    path = tmp_path / "run.trec"
    path.write_bytes(ODD_SPACES.encode())
    assert read_run(path) == {"q\u00a01": ["d\u20281", "d\x852"]}


def test_a_merged_run_reads_per_query_in_rank_order(tmp_path):
    """Queries interleaved (runs concatenated) read fine; order is the rank order."""
    path = tmp_path / "run.trec"
    path.write_text(MERGED)
    assert read_run(path) == {"q1": ["a", "b"], "q2": ["c", "d"]}


def test_writing_refuses_what_trec_eval_would_reorder_or_split(tmp_path):
    with pytest.raises(NamesakeError, match="ordered by score"):
        write_run(tmp_path / "r.trec", [("q", [("a", 1.0), ("b", 2.0)])], "t")
    with pytest.raises(NamesakeError, match="white space"):
        write_run(tmp_path / "r.trec", [("q 1", [("a", 1.0)])], "t")
    assert not (tmp_path / "r.trec").exists()  # nothing half-written


def test_evaluate_scores_a_run_of_unknown_queries_as_an_error_naming_the_file(runs, tmp_path):
    dataset, _ = runs
    path = tmp_path / "other.trec"
    path.write_text("nope Q0 307 1 1.0 t\n")
    with pytest.raises(SystemExit) as caught:
        main(
            ["evaluate", "--dataset", dataset, "--config", "human_qa", "--predictions", str(path)]
            + ["--out", str(tmp_path / "report")]
        )
    assert str(path) in str(caught.value) and "none of the 1 predictions" in str(caught.value)


@pytest.mark.parametrize("format", ["trec", "kilt"])
@pytest.mark.parametrize("score", [math.nan, math.inf, -math.inf])
def test_a_score_that_is_not_finite_is_never_written(tmp_path, format, score):
    """Neither format holds it (namesake refuses nan in a run, JSON has no nan: msgspec
    writes null): the writer refuses it, naming query and rank, before replacing the file."""
    path = tmp_path / "run"
    path.write_bytes(b"earlier\n")
    ranking = [("a", 2.0), ("b", score)]
    with pytest.raises(NamesakeError) as caught:
        Run.from_rankings([("q1", [("z", 1.0)]), ("q2", ranking)]).write(path, format, "t")
    assert str(caught.value) == (
        f"query q2: the score of rank 2 is {score!r}: a run holds finite scores only"
    )
    # JSON lines keep the first stage's too: a Run holds NaN for "none", so one given as
    # NaN or inf is refused as the run is made, before it could be taken for none
    reranked = [("a", 2.0, 1.0), ("b", 1.0, score)]
    with pytest.raises(NamesakeError, match="q2: the first-stage score of rank 2 is"):
        Run.from_rankings([("q2", reranked)]).write(path, "kilt")
    assert path.read_bytes() == b"earlier\n"
    none_given = Run.from_rankings([("q2", [("a", 2.0, None), ("b", 1.0)])])
    assert none_given.first_stage_scores is None and none_given.ranking(0)[0] == ("a", 2.0)


@pytest.mark.parametrize("bad", ["q\t1", "q\n1", "q 1", ""])
def test_an_id_that_splits_a_line_is_refused_by_every_trec_writer(tmp_path, bad):
    """`check_token`, the check of every TREC and TSV writer: nothing is written."""
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.trec"
    writes = {
        "query id": lambda: write_qrels(qrels, {bad: {"1": 1}}),
        "document id": lambda: write_qrels(qrels, {"q": {bad: 1}}),
        "run tag": lambda: write_run(run, [("q", [("1", 1.0)])], bad),
    }
    for what, write in writes.items():
        with pytest.raises(NamesakeError) as caught:
            write()
        destination = run if what == "run tag" else qrels
        assert str(caught.value) == (
            f"{what} {bad!r} cannot be written to {destination}: it is empty or holds white space"
        )
    with pytest.raises(NamesakeError, match=re.escape(f"document id {bad!r} cannot be written")):
        write_run(run, [("q", [(bad, 1.0)])], "t")
    assert not qrels.exists() and not run.exists()


def _namesake(*args, **options) -> subprocess.CompletedProcess:
    return subprocess.run([str(NAMESAKE), *map(str, args)], capture_output=True, **options)


def _evaluate(dataset, predictions, out, **options) -> subprocess.CompletedProcess:
    return _namesake(
        *("evaluate", "--dataset", dataset, "--config", "human_qa"),
        *("--predictions", predictions, "--out", out),
        **options,
    )


@pytest.mark.parametrize(
    "run, given",
    [
        ("bm25.trec", "stdin"),
        ("bm25.jsonl", "stdin, gzip"),
        ("bm25.trec", "fifo"),
        ("bm25.trec", "byte-order mark"),
        ("bm25.jsonl", "byte-order mark"),
    ],
)
def test_a_run_from_a_pipe_or_with_a_byte_order_mark_scores_as_the_file(runs, tmp_path, run, given):
    """`--predictions /dev/stdin` (a pipe, as `zcat run.gz | namesake evaluate ...` gives it),
    a FIFO (bash's `<(zcat run.gz)`) and a run saved with a UTF-8 byte-order mark all give the
    file's figures. Before, a pipe lost the block that format and compression detection read
    ('no predictions', or wrong figures with --allow-missing), and the mark made the first
    query id U+FEFF and the query id (entity confusion 38.9 -> 33.3 on the demo's BM25 run)."""
    dataset, work = runs
    data = (work / run).read_bytes()
    out = tmp_path / "report"
    if given.startswith("stdin"):
        piped = gzip.compress(data) if "gzip" in given else data
        done = _evaluate(dataset, "/dev/stdin", out, input=piped)
    elif given == "fifo":
        with fifo_of(data, tmp_path) as fifo:
            done = _evaluate(dataset, fifo, out)
    else:
        marked = tmp_path / f"marked-{run}"
        marked.write_bytes(BOM + data)
        done = _evaluate(dataset, marked, out)
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    assert _metrics(out) == _metrics(work / f"report-{run}")


def test_a_run_and_its_copy_with_a_byte_order_mark_compare_as_equal(runs, tmp_path):
    """compare-runs of a run against itself saved with a mark: every difference is 0 (it
    reported entity confusion +5.6, with no warning)."""
    dataset, work = runs
    marked = tmp_path / "marked.trec"
    marked.write_bytes(BOM + (work / "bm25.trec").read_bytes())
    out = tmp_path / "comparison"
    done = _namesake(
        *("compare-runs", work / "bm25.trec", marked, "--dataset", dataset),
        *("--config", "human_qa", "--out", out),
    )
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    measures = json.loads((out / "comparison.json").read_text())["measures"]
    assert measures and all(row["difference"] == 0 for row in measures)


@pytest.mark.parametrize("command", ["evaluate", "fuse", "compare-runs", "amber export"])
def test_a_folder_given_for_a_file_is_refused_in_one_line_before_any_output(
    runs, tmp_path, command
):
    """A folder where a run (or the KILT corpus) is expected: one line naming it, not an
    IsADirectoryError traceback, and no output."""
    dataset, work = runs
    folder = tmp_path / "run.trec"
    folder.mkdir()
    out = tmp_path / "out"
    config = ("--dataset", dataset, "--config", "human_qa")
    args = {
        "evaluate": ("evaluate", *config, "--predictions", folder, "--out", out),
        "fuse": ("fuse", work / "bm25.trec", folder, "--out", out),
        "compare-runs": ("compare-runs", work / "bm25.trec", folder, *config, "--out", out),
        "amber export": ("amber", "export", "--format", "beir", *config, "--corpus", folder)
        + ("--out", out),
    }[command]
    done = _namesake(*args, text=True)
    assert done.returncode == 1, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        f"namesake: error: {folder}: is a folder, not a file"
    )
    assert not out.exists()


# ---------------------------------------------------------------------------------------
# `Run.read`'s columnar path against the strict line reader: the same run, the same error


def _strict(path):
    """What the strict line reader makes of `path`: (rankings, provenance) or the error."""
    try:
        rankings, tags = read_tagged_run(path)
    except BadInputError as error:
        return error.path, error.line, error.message
    provenance = {"format": "trec", **({"tag": next(iter(tags))} if len(tags) == 1 else {})}
    return list(rankings.items()), provenance


def _columnar(path):
    """What `Run.read` makes of `path` as a TREC run, in the same terms as `_strict`."""
    try:
        run = Run.read(path, "trec")
    except BadInputError as error:
        return error.path, error.line, error.message
    assert run.provenance.pop("path") == str(path)
    return list(run.rankings()), run.provenance


@pytest.fixture
def strict_reader_calls(monkeypatch):
    """Counts the runs `Run.read` hands to the strict reader."""
    calls = []

    def counted(path, blocks=None):
        calls.append(path)
        return read_tagged_run(path, blocks)

    monkeypatch.setattr(runs_module, "read_tagged_run", counted)
    return calls


def _random_run(rng, merged: bool) -> tuple[list[tuple[str, bytes, str, str, str]], dict]:
    """Random TREC lines (query, docid, rank, score, tag texts) and the rankings they hold:
    ids short and long (some alike in their first 8 bytes), non-ASCII, ranks with gaps and
    leading zeros, scores in every notation trec_eval reads, with ties; queries interleaved
    where `merged`."""
    pool = [str(n) for n in rng.integers(0, 5_900_000, 300)]
    pool += [f"page-with-a-long-id-{n}" for n in range(40)] + [f"é{n}ü" for n in range(20)]
    pool = list(dict.fromkeys(pool))
    lines, expected = [], {}
    for query in range(int(rng.integers(1, 25))):
        query_id = rng.choice([f"q{query}", f"query-number-{query:05d}", f"ké{query}"])
        depth = int(rng.integers(1, 40))
        docs = rng.choice(pool, depth, replace=False)
        ranks = np.cumsum(rng.integers(1, 3, depth)) - int(rng.integers(0, 2))
        scores = -np.sort(-np.round(rng.normal(0, 10, depth), int(rng.integers(0, 4))))
        ranked = []
        for doc, rank, score in zip(docs, ranks, scores, strict=True):
            text = str(rng.choice([repr(float(score)), f"{score:.6e}", f"{score:+.3f}"]))
            rank_text = str(rng.choice([str(rank), f"{rank:03d}"]))
            lines.append((query_id, str(doc), rank_text, text, "tag"))
            ranked.append((str(doc), float(text)))
        expected[query_id] = ranked
    if merged:  # each query's lines in order, the queries interleaved
        order = sorted(range(len(lines)), key=lambda i: (rng.random(), i))
        by_query = {}
        for i in range(len(lines)):
            by_query.setdefault(lines[i][0], []).append(lines[i])
        queue = [lines[i][0] for i in order]
        lines = [by_query[query].pop(0) for query in queue]
        expected = {query: expected[query] for query in dict.fromkeys(queue)}
    return lines, expected


@pytest.mark.parametrize("seed", range(12))
def test_a_random_run_reads_by_columns_as_the_strict_reader_reads_it(
    seed, tmp_path, strict_reader_calls
):
    """Random runs, contiguous or merged, space- or tab-separated, LF or CRLF, with blank
    lines and a byte-order mark: `Run.read` gives the strict reader's rankings and tag, and
    never needed it."""
    rng = np.random.default_rng(seed)
    lines, expected = _random_run(rng, merged=seed % 2 == 1)
    delimiter = "\t" if seed % 3 == 0 else " "
    end = "\r\n" if seed % 4 == 1 else "\n"
    text = "".join(
        delimiter.join((query, "Q0", doc, rank, score, tag)) + end + ("\n" if i % 7 == 3 else "")
        for i, (query, doc, rank, score, tag) in enumerate(lines)
    )
    path = tmp_path / "run.trec"
    path.write_bytes((BOM if seed % 5 == 2 else b"") + text.encode())
    read = _columnar(path)
    assert strict_reader_calls == []  # the columns were enough
    assert read == (list(expected.items()), {"format": "trec", "tag": "tag"})
    assert read == _strict(path)


@pytest.mark.parametrize("text", [ODD_SPACES, MERGED] + [text for text, _, _ in BAD_RUNS])
def test_the_runs_above_read_by_columns_as_the_strict_reader_reads_them(text, tmp_path):
    path = tmp_path / "run.trec"
    path.write_bytes(_run_bytes(text))
    assert _columnar(path) == _strict(path)


#: lines that Arrow's CSV reader and the strict reader could read apart: each must read (or
#: be refused, naming the same line) as the strict reader reads it
DIVERGING_LINES = {
    "plus rank": "q2 Q0 d3 +2 1.0 t",
    "hex rank": "q2 Q0 d3 0x10 1.0 t",
    "hex score": "q2 Q0 d3 2 0x1p0 t",
    "negative zero rank": "q1 Q0 d3 -0 1.0 t",
    "huge rank": "q2 Q0 d3 99999999999999999999 1.0 t",
    "negative rank": "q2 Q0 d3 -2 1.0 t",
    "rank with an exponent": "q2 Q0 d3 2e0 1.0 t",
    "score of a lone point": "q2 Q0 d3 2 . t",
    "score ending in a point": "q2 Q0 d3 2 1. t",
    "score with a plus": "q2 Q0 d3 2 +.5e-1 t",
    "score overflowing": "q2 Q0 d3 2 1e999 t",
    "infinite score": "q2 Q0 d3 2 -Infinity t",
    "leading space": " q2 Q0 d3 2 1.0 t",
    "trailing space": "q2 Q0 d3 2 1.0 t ",
    "doubled space": "q2 Q0  d3 2 1.0 t",
    "a field lost, a space doubled": "q2  d3 2 1.0 t",
    "a field lost to a leading space": " q2 Q0 5 1 t",
    "tab in a space-separated run": "q2 Q0 d3\t2 1.0 t",
    "vertical tab": "q2 Q0 d3\x0b2 1.0 t",
    "form feed": "q2 Q0 d3 2\x0c1.0 t",
    "lone CR": "q2 Q0 d3 2 1.0 t\rq2 Q0 d4 3 0.5 t",
    "CR in a field": "q2 Q0 d\r3 2 1.0 t",
    "CRLF": "q2 Q0 d3 2 1.0 t\r",
    "white space alone": " \t ",
    "no-break space": "q2 Q0 d3\u00a02 1.0 t",
    "byte-order mark inside": "\ufeffq2 Q0 d3 2 1.0 t",
    "quote": 'q2 Q0 "d3 2" 1.0 t',
    "not UTF-8 in Q0": "q2 \udcff d3 2 1.0 t",
    "other tag": "q2 Q0 d3 2 1.0 other",
    "a line longer than Arrow's blocks": f"q2 Q0 {'d' * (3 << 20)} 2 1.0 t",
    "NUL": "q2 Q0 d\x003 2 1.0 t",
    "seven fields": "q2 Q0 d3 2 1.0 t x",
    "page ranked twice": "q1 Q0 d1 3 1.0 t",
    "rank not increasing": "q1 Q0 d3 2 1.0 t",
    "score rising": "q2 Q0 d3 2 9.0 t",
}


@pytest.mark.parametrize("name", list(DIVERGING_LINES))
def test_a_line_arrow_might_read_otherwise_reads_as_the_strict_reader_reads_it(name, tmp_path):
    """Both ways: nothing the strict reader refuses is read, nothing it reads is refused."""
    path = tmp_path / "run.trec"
    path.write_bytes((GOOD + DIVERGING_LINES[name] + "\n").encode("utf-8", "surrogateescape"))
    assert _columnar(path) == _strict(path)


def test_every_short_rank_and_score_reads_as_the_strict_reader_reads_it(tmp_path):
    """Every rank and score of up to three characters made of a digit, signs, points,
    exponents and the letters of hex, inf and nan, and some longer ones: Arrow's number
    parsers take or refuse them as trec_eval's rules do, or the strict reader reads them."""
    alphabet = "1.e+-xn"
    tokens = ["".join(t) for n in (1, 2, 3) for t in itertools.product(alphabet, repeat=n)]
    tokens += ["inf", "nan", "Infinity", "-iNf", "1E5", "1e+05", "0x1p3", "1.5e-3", "+.5", "09"]
    for token in tokens:
        for line in (f"q1 Q0 d1 1 {token} t\n", f"q1 Q0 d1 {token} 1.0 t\n"):
            path = tmp_path / "run.trec"
            path.write_text(line)
            assert _columnar(path) == _strict(path), line


@pytest.mark.parametrize(
    "text, query_ids",
    [
        ("\ufeffq1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 2.0 t\n", ["\ufeffq1", "q1"]),
        ("q1\tQ0\td1\t1\t3.0\tt\nq1\tQ0 d2\t2\t2.0\tt\n", ["q1"]),
    ],
)
def test_a_second_byte_order_mark_or_a_tab_run_reads_as_the_strict_reader_reads_it(
    text, query_ids, tmp_path
):
    """A file marked twice keeps the second mark in its first query id (the strict reader
    drops one); a tab-separated run with a space in it is split on the space too."""
    path = tmp_path / "run.trec"
    path.write_bytes(BOM + text.encode())
    read = _columnar(path)
    assert read == _strict(path)
    assert [query_id for query_id, _ in read[0]] == query_ids


#: what a fault can be made of, where Arrow and the strict reader might part
_PIECES = [" ", "  ", "\t", "\r", "\r\n", "\n", "\x0b", "\x0c", "\u00a0", "\ufeff", "+", "-"]
_PIECES += ["0x", "_", "e", ".", "nan", "inf", "0", "9", "q1", "d1", "Q0", '"', "\udcff", "\x00"]


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(st.lists(st.tuples(st.integers(0, len(GOOD)), st.sampled_from(_PIECES)), max_size=3))
def test_a_run_mutated_anywhere_reads_as_the_strict_reader_reads_it(insertions):
    """Pieces of white space, signs, notations and ids put anywhere in a good run: read,
    or refused naming the line, exactly as the strict reader does."""
    text = GOOD
    for at, piece in sorted(insertions, reverse=True):
        text = text[:at] + piece + text[at:]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "run.trec"
        path.write_bytes(text.encode("utf-8", "surrogateescape"))
        assert _columnar(path) == _strict(path)


def test_one_long_ranking_among_short_ones_is_checked_for_pages_ranked_twice(tmp_path):
    """Rankings of very unequal lengths (the check that lays them out as a table does not,
    then): a page ranked twice in the long one is found, as the strict reader finds it."""
    lines = [f"q0 Q0 page-{n:04d}-of-q0 {n + 1} {-n} t" for n in range(3000)]
    lines += [f"q{n} Q0 7 1 1.0 t" for n in range(1, 20)]
    path = tmp_path / "run.trec"
    path.write_text("\n".join(lines) + "\n")
    assert _columnar(path) == _strict(path)
    assert isinstance(_columnar(path)[0], list)
    path.write_text("\n".join([*lines, "q0 Q0 page-0042-of-q0 3001 -3000 t"]) + "\n")
    assert _columnar(path) == _strict(path) == (str(path), 3020, _strict(path)[2])
    assert "ranked twice for query q0 (first on line 43)" in _strict(path)[2]


@pytest.mark.parametrize("how", PIPES)
@pytest.mark.parametrize("fault", ["", "q1 Q0 d2 3 1.0 t\n"])
def test_a_run_from_a_pipe_is_read_once_and_its_fault_named_as_in_the_file(how, fault, tmp_path):
    """A pipe cannot be read again: the strict reader rereads what was read of it, and
    names the same line as for the file."""
    data = (GOOD + fault).encode()
    path = tmp_path / "run.trec"
    path.write_bytes(data)
    with piped(data, how, tmp_path) as pipe:
        read = _columnar(pipe)
    expected = _columnar(path)
    assert read == (expected if not fault else (str(pipe), *expected[1:]))


def test_a_compressed_run_reads_as_the_plain_file(tmp_path):
    path = tmp_path / "run.trec"
    path.write_text(GOOD)
    packed = tmp_path / "run.trec.gz"
    packed.write_bytes(gzip.compress(GOOD.encode()))
    assert _columnar(packed) == _columnar(path) == _strict(path)
