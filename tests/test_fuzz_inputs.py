"""Fuzzing every input format namesake reads: one line (or, for Parquet folders, one file)
is mutated and the format's public reading function runs, in this process.

Mutations: the line cut short, a field given a value of another JSON type (for the XML
dump, a page's <ns> or <id> that is not a number), a byte that is not UTF-8 inside a string
value, the line emptied, a huge line (a MiB of padding that leaves it valid, or a huge value).

The outcome must always be one of:
- the line skipped and counted, at its own line of its own file (readers that count bad
  lines: Wikidata, page views, KILT pages for the AmbER build); `--strict` then stops there;
- a BadInputError naming the file (and, for a line, that line);
- the input read as before, where the mutation touched nothing the reader reads (an unread
  field, an item that cannot contribute, a blank line reads as the line left out).
Never another exception. Readers whose input cannot be checked against a rereading (page
views, where a shorter count is a valid count; the XML dump, where a cut line of wikitext is
valid wikitext) are held to the first two and to "no other exception".

The examples are derandomized and bounded (`FUZZ`), so `make test` runs the same ones in
a few seconds a format.

Every line format is also read whole in the ways a user gives a file besides a plain path:
saved with a UTF-8 byte-order mark, through a pipe (``/dev/stdin``, a FIFO), each read as the
file is; and a folder given for the file is refused by name.
"""

from __future__ import annotations

import bz2
import gzip
import json
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import msgspec
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import (
    SAMPLE_KILT,
    SAMPLE_PAGECOUNTS_EZ,
    SAMPLE_PAGEVIEWS_COMPLETE,
    SAMPLE_WIKIDATA,
    WIKIPEDIA_EXCERPT,
)
from dumps import item, split_pages
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pipe_inputs import PIPES, piped

from namesake.dumps.reading import UTF8_BOM
from namesake.errors import BadInputError, InputProblems

#: the same examples on every run (`make test` is not a lottery), few enough for seconds a
#: format; NAMESAKE_FUZZ_EXAMPLES=1000 and a random seed (NAMESAKE_FUZZ_RANDOM=1) explore more
FUZZ = settings(
    max_examples=int(os.environ.get("NAMESAKE_FUZZ_EXAMPLES", "45")),
    deadline=None,
    derandomize=not os.environ.get("NAMESAKE_FUZZ_RANDOM"),
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

HUGE = 1 << 20
MARK = "\ue000"  # stands for the byte that is not UTF-8 until the line is encoded
NOT_UTF8 = b"\xff"
#: values of each JSON type; a field gets one of another type than its own
JSON_VALUES = ("a string", 7, 2.5, [1], {"x": 1}, None, True)


def _json_type(value) -> str:
    return "null" if value is None else type(value).__name__.replace("int", "float")


def _paths(value, prefix=(), depth=5):
    """The paths of every value inside a decoded JSON record (keys and list indices)."""
    if depth and isinstance(value, dict):
        for key, inner in value.items():
            yield (*prefix, key)
            yield from _paths(inner, (*prefix, key), depth - 1)
    elif depth and isinstance(value, list):
        for index, inner in enumerate(value[:3]):
            yield (*prefix, index)
            yield from _paths(inner, (*prefix, index), depth - 1)


def _get(record, path):
    for key in path:
        record = record[key]
    return record


def _set(record, path, value):
    _get(record, path[:-1])[path[-1]] = value


def _encode(record) -> bytes:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode()


@dataclass
class Mutation:
    index: int  # of the line
    kind: str
    line: bytes  # the mutated line
    lenient: bool = False  # a wrong type the reader may take as a valid value of its own

    @property
    def line_no(self) -> int:
        return self.index + 1


@dataclass
class LineFormat:
    """A line-based input: its lines, how to write them, and its public reader."""

    name: str
    lines: list[bytes]
    read: Callable  # (path, strict) -> (result, [(file, line) counted]) or result
    counts: bool  # the reader skips and counts bad lines (else: strict only)
    exact: bool = True  # an uncounted mutation must read as before (or as the line left out)
    json: bool = True
    lenient_keys: frozenset = frozenset()  # fields whose type is a union of several
    suffix: str = ".txt"
    lines_of_interest: list[int] = field(default_factory=list)

    def write(self, path: Path, lines: list[bytes]) -> Path:
        path.write_bytes(b"\n".join(lines) + b"\n")
        return path


@st.composite
def mutations(draw, fmt: LineFormat) -> Mutation:
    indices = fmt.lines_of_interest or range(len(fmt.lines))
    index = draw(st.sampled_from(list(indices)))
    line = fmt.lines[index]
    kinds = ["truncated", "wrong type", "not UTF-8", "empty", "huge"]
    kind = draw(st.sampled_from(kinds))
    if kind == "truncated":
        return Mutation(index, kind, line[: draw(st.integers(0, max(0, len(line) - 1)))])
    if kind == "empty":
        return Mutation(index, kind, b"")
    if fmt.json:
        return _json_mutation(draw, fmt, index, line, kind)
    return _text_mutation(draw, index, line, kind)


def _json_mutation(draw, fmt: LineFormat, index: int, line: bytes, kind: str) -> Mutation:
    comma = b"," if line.endswith(b",") else b""
    try:
        record = json.loads(line.removesuffix(b","))
    except ValueError:  # '[' and ']' of the Wikidata dump
        record = None
    if kind == "huge" or not isinstance(record, dict):
        if draw(st.booleans()) or record is None:  # padding: the same record, a MiB long
            return Mutation(index, "huge", line[:1] + b" " * HUGE + line[1:])
        path = draw(st.sampled_from(list(_paths(record)) or [()])) if record else ()
        if path and isinstance(_get(record, path), str):
            _set(record, path, "x" * HUGE)  # a huge value: valid, read as a new value
            return Mutation(index, "huge", _encode(record) + comma, lenient=True)
        return Mutation(index, "huge", line[:1] + b" " * HUGE + line[1:])
    paths = list(_paths(record))
    if kind == "wrong type":
        path = draw(st.sampled_from(paths))
        old = _get(record, path)
        value = draw(st.sampled_from([v for v in JSON_VALUES if _json_type(v) != _json_type(old)]))
        _set(record, path, value)
        lenient = path[-1] in fmt.lenient_keys
        return Mutation(index, kind, _encode(record) + comma, lenient)
    strings = [p for p in paths if isinstance(_get(record, p), str)]
    if not strings:
        return Mutation(index, "not UTF-8", line[:1] + NOT_UTF8 + line[1:])
    path = draw(st.sampled_from(strings))
    old = _get(record, path)
    at = draw(st.integers(0, len(old)))
    _set(record, path, old[:at] + MARK + old[at:])
    return Mutation(index, kind, _encode(record).replace(MARK.encode(), NOT_UTF8) + comma)


def _text_mutation(draw, index: int, line: bytes, kind: str) -> Mutation:
    if kind == "huge":
        at = draw(st.integers(0, len(line)))
        return Mutation(index, kind, line[:at] + b"X" * HUGE + line[at:])
    if kind == "not UTF-8":
        at = draw(st.integers(0, len(line)))
        return Mutation(index, kind, line[:at] + NOT_UTF8 + line[at:])
    # wrong type: in the XML dump, a number that is not one; in page views, a count
    elements = list(re.finditer(rb"<(ns|id)>([^<]*)</\1>", line))
    value = draw(st.sampled_from([b"x", b"", b"1.5", b"9" * 25, b"-1", b"12abc"]))
    if elements:
        found = draw(st.sampled_from(elements))
        return Mutation(index, kind, line[: found.start(2)] + value + line[found.end(2) :])
    fields = line.split(b" ")
    if len(fields) in (3, 6):  # a page-view count
        fields[2 if len(fields) == 3 else 4] = value
        return Mutation(index, kind, b" ".join(fields))
    return Mutation(index, kind, value)  # a line of another kind: replaced by the value


def check_outcome(fmt: LineFormat, folder: Path, mutation: Mutation, baseline) -> None:
    """Reads the mutated input and checks that the outcome is one of the three allowed."""
    lines = list(fmt.lines)
    lines[mutation.index] = mutation.line
    path = fmt.write(folder / f"{fmt.name}{fmt.suffix}", lines)
    try:
        outcome = fmt.read(path, False)
    except BadInputError as error:  # refused: names the file, and the line where it has one
        assert error.path == str(path), error
        if fmt.json and not fmt.counts:  # else: a whole-file problem (no '[' any more, no
            assert error.line in (mutation.line_no, None), error  # English line), or where
        return  # the XML parser found the damage
    result, counted = outcome if fmt.counts else (outcome, [])
    assert all(where == (str(path), mutation.line_no) for where in counted), counted
    if counted:
        with pytest.raises(BadInputError) as caught:  # --strict stops at that line
            fmt.read(path, True)
        assert (caught.value.path, caught.value.line) == (str(path), mutation.line_no)
        return
    if not fmt.exact or mutation.lenient:
        return
    if not mutation.line.strip():
        return  # a blank line holds no record: read as if it were left out
    assert result == baseline, mutation  # read as before: it touched nothing read


# ---------------------------------------------------------------------------------------
# The formats


def _sample_lines(path: Path) -> list[bytes]:
    data = path.read_bytes()
    if data.startswith(b"BZh"):
        data = bz2.decompress(data)
    elif data.startswith(b"\x1f\x8b"):
        data = gzip.decompress(data)
    return data.splitlines()


def _counting(read: Callable) -> Callable:
    """(path, strict) -> (read's result, [(file, line) of each counted line])."""

    def run(path: Path, strict: bool):
        problems = InputProblems(strict)
        result = read(path, problems)
        counted = [
            (file, line)
            for (file, kind), lines in problems.examples.items()
            for line in lines
            if problems.counts[(file, kind)]
        ]
        assert problems.total() == len(counted), "every counted line is an example here"
        return result, counted

    return run


def wikidata_format() -> LineFormat:
    from namesake.amber.build.entities import extract_entities

    sample = _sample_lines(SAMPLE_WIKIDATA)
    properties = [line for line in sample if b'"type":"property"' in line][:3]
    items = [line for line in sample if b'"type":"item"' in line[:64]][:8]
    no_page = msgspec.json.encode(
        {**item("Q99", "Neunundneunzig"), "sitelinks": {"dewiki": {"site": "dewiki", "title": "N"}}}
    )
    entities = [line.removesuffix(b",") for line in properties + items] + [no_page]
    lines = [b"[", *(line + b"," for line in entities[:-1]), entities[-1], b"]"]
    records = [json.loads(line) for line in entities]
    titles = [
        r["sitelinks"]["enwiki"]["title"] for r in records if "enwiki" in r.get("sitelinks", {})
    ]
    views = pa.table({"title": [t.replace(" ", "_") for t in titles], "views": [10] * len(titles)})
    pids = frozenset(pid for r in records for pid in r.get("claims") or {})

    def read(path, problems):
        found = extract_entities(path, views, pids, problems, workers=1)
        return (
            found.table.to_pylist(),
            found.relations.to_pylist(),
            dict(sorted(found.property_labels.items())),
        )

    return LineFormat("wikidata", lines, _counting(read), counts=True, suffix=".json")


def kilt_format() -> LineFormat:
    from namesake.amber.build.kilt import read_pages

    lines = _sample_lines(SAMPLE_KILT)[:6]
    wanted = {json.loads(line)["wikidata_info"]["wikidata_id"] for line in lines[:4]}

    def read(path, problems):
        pages = read_pages(path, wanted, problems, workers=1)
        return {q: [(p.wikipedia_id, p.title, p.tokens) for p in ps] for q, ps in pages.items()}

    return LineFormat(
        "kilt", lines, _counting(read), counts=True, lenient_keys=frozenset({"wikipedia_id"})
    )


def kilt_documents_format() -> LineFormat:
    from namesake.retrieval.corpus import read_kilt_documents

    return LineFormat(
        "kilt_documents",
        _sample_lines(SAMPLE_KILT)[:6],
        lambda path, strict: list(read_kilt_documents(path)),
        counts=False,
        lenient_keys=frozenset({"wikipedia_id"}),
    )


def predictions_format() -> LineFormat:
    from run_files import ranked_ids

    lines = [
        _encode(
            {
                "id": f"query-{n}",
                "output": {
                    "provenance": [
                        {"wikipedia_id": str(100 + n + k), "score": 1.0 / (k + 1)} for k in range(3)
                    ]
                },
            }
        )
        for n in range(5)
    ]
    return LineFormat(
        "predictions",
        lines,
        lambda path, strict: ranked_ids(path),
        counts=False,
        lenient_keys=frozenset({"wikipedia_id"}),
        suffix=".jsonl",
    )


def trec_run_format() -> LineFormat:
    """A TREC run as `namesake evaluate` and `compare-runs` read it (format told from the
    content): a mutated line is read, or refused naming the file."""
    from run_files import ranked_ids

    lines = [
        f"query-{n} Q0 {100 + n + k} {k + 1} {3.0 - k:.1f} bm25".encode()
        for n in range(5)
        for k in range(3)
    ]
    return LineFormat(
        "trec_run",
        lines,
        lambda path, strict: ranked_ids(path),
        counts=False,
        exact=False,  # a huge or cut query id is another, valid query id
        json=False,
        suffix=".trec",
    )


def pageviews_format(sample: Path, english: bytes) -> LineFormat:
    from namesake.amber.build.pageviews import read_pageviews

    all_lines = _sample_lines(sample)
    fields = 3 if english == b"en.z " else 6  # the well-formed lines, the sample has others
    lines = [line for line in all_lines if line.startswith(english)]
    lines = [line for line in lines if len(line.split(b" ")) == fields][:10]
    lines = [next(line for line in all_lines if not line.startswith(english)), *lines]

    def read(path, problems):
        return sorted(tuple(row.values()) for row in read_pageviews(path, problems).to_pylist())

    return LineFormat(
        f"pageviews-{english.decode().strip()}",
        lines,
        _counting(read),
        counts=True,
        exact=False,
        json=False,
    )


def xml_format() -> LineFormat:
    from namesake.wes.mining import mine_dumps

    header, pages, footer = split_pages(bz2.decompress(WIKIPEDIA_EXCERPT.read_bytes()))
    redirects = sorted((p for p in pages if b"<redirect" in p), key=len)[:2]
    articles = sorted((p for p in pages if b"<redirect" not in p), key=len)[:2]
    small = [page for page in pages if page in redirects + articles]
    lines = (header + b"".join(small) + footer).splitlines()

    def read(path, strict):
        mined = mine_dumps([path], workers=1, problems=InputProblems(strict))
        return mined.pages.to_pylist(), mined.links.to_pylist()

    return LineFormat(
        "wikipedia", lines, read, counts=False, exact=False, json=False, suffix=".xml"
    )


def beir_corpus_format() -> LineFormat:
    """A BEIR export's corpus.jsonl, as `namesake.mteb` reads it for MTEB."""
    from namesake.mteb import BeirDocument, read_beir_lines

    lines = [
        _encode({"_id": str(300 + n), "title": f"Café {n}", "text": f"The text of page {n}."})
        for n in range(6)
    ]
    return LineFormat(
        "beir_corpus",
        lines,
        lambda path, strict: read_beir_lines(path, BeirDocument).to_list(),
        counts=False,
        lenient_keys=frozenset({"_id"}),  # a number or a string: read as its text
        suffix=".jsonl",
    )


def beir_queries_format() -> LineFormat:
    from namesake.mteb import BeirQuery, read_beir_lines

    lines = [_encode({"_id": f"query-{n}", "text": f"Who is Abe {n}?"}) for n in range(6)]
    return LineFormat(
        "beir_queries",
        lines,
        lambda path, strict: read_beir_lines(path, BeirQuery).to_list(),
        counts=False,
        lenient_keys=frozenset({"_id"}),
        suffix=".jsonl",
    )


def beir_qrels_format() -> LineFormat:
    """A BEIR export's qrels/test.tsv: a header, then 'query-id TAB corpus-id TAB score'."""
    from namesake.mteb import read_qrels

    lines = [b"query-id\tcorpus-id\tscore"]
    lines += [f"query-{n}\t{300 + n + k}\t{k % 2}".encode() for n in range(4) for k in range(2)]
    return LineFormat(
        "beir_qrels",
        lines,
        lambda path, strict: read_qrels(path),
        counts=False,
        exact=False,  # a huge or cut id is another, valid id
        json=False,
        suffix=".tsv",
    )


FORMATS = {
    "wikidata": wikidata_format,
    "kilt": kilt_format,
    "kilt_documents": kilt_documents_format,
    "predictions": predictions_format,
    "trec_run": trec_run_format,
    "pagecounts-ez": lambda: pageviews_format(SAMPLE_PAGECOUNTS_EZ, b"en.z "),
    "pageviews-complete": lambda: pageviews_format(SAMPLE_PAGEVIEWS_COMPLETE, b"en.wikipedia "),
    "wikipedia": xml_format,
    "beir_corpus": beir_corpus_format,
    "beir_queries": beir_queries_format,
    "beir_qrels": beir_qrels_format,
}


@pytest.mark.parametrize("name", list(FORMATS))
def test_fuzz_line_formats(name, tmp_path_factory):
    fmt = FORMATS[name]()
    folder = tmp_path_factory.mktemp(f"fuzz-{name}")
    baseline = fmt.read(fmt.write(folder / f"baseline{fmt.suffix}", fmt.lines), False)
    if fmt.counts:
        baseline, counted = baseline
        assert counted == [], counted
    assert baseline

    @FUZZ
    @given(mutations(fmt))
    def mutated(mutation):
        check_outcome(fmt, folder, mutation, baseline)

    mutated()


# ---------------------------------------------------------------------------------------
# The same input as a file, with a byte-order mark, through a pipe; and a folder instead


def _read_whole(fmt: LineFormat, path: Path):
    """What `fmt`'s reader makes of `path`, which must hold no bad line."""
    outcome = fmt.read(path, False)
    if fmt.counts:
        outcome, counted = outcome
        assert counted == [], counted
    return outcome


def _json_lines(*records) -> list[bytes]:
    return [_encode(record) for record in records]


def _judged_answers(path, strict):
    from namesake.wes.scoring.judgments import read_judged

    return [(r.question, r.candidate, r.label) for r in read_judged([path]).records]


def _answers_to_score(path, strict):
    from namesake.wes.scoring.judgments import read_answers_to_score

    return read_answers_to_score(path)


def _dpr_training_file(path, strict):
    from namesake.ecqg.dpr.data import read_dpr_file

    return read_dpr_file(path, strict=True)


def _dpr_test_file(path, strict):
    from namesake.ecqg.dpr.data import read_qa_file

    return read_qa_file(path)


def _dpr_passages(path, strict):
    from namesake.ecqg.dpr.evaluation import read_passage_documents

    return read_passage_documents(path)


def _overlap_annotations(path, strict):
    from namesake.ecqg.dpr.overlap import read_overlap_annotations

    return read_overlap_annotations(path, 2)


def _generated_questions(path, strict):
    from namesake.ecqg.synthetic import read_records

    return read_records(path)


_QUESTION = {"question": "capital of France?", "answers": ["Paris"]}
_CONTEXT = {"title": "Paris", "text": "Paris is the capital of France."}

#: the readers of small text inputs that word or skip a bad line their own way (a
#: DPRFileError, a skipped and logged line), so are not fuzzed line by line above, but
#: follow the same rules for byte-order marks, pipes and folders
TEXT_READERS = {
    fmt.name: fmt
    for fmt in (
        LineFormat(
            "judged_answers",
            _json_lines(
                {"question": "q?", "references": ["Paris"], "candidate": "Paris", "label": 1},
                {"question": "q?", "references": ["Paris"], "candidate": "Lyon", "label": 0},
            ),
            _judged_answers,
            counts=False,
            suffix=".jsonl",
        ),
        LineFormat(
            "answers_to_score",
            _json_lines({"prediction": "Paris", "references": ["Paris", "paris"]}),
            _answers_to_score,
            counts=False,
            suffix=".jsonl",
        ),
        LineFormat(
            "dpr_training_file",
            [b"[", _encode({**_QUESTION, "positive_ctxs": [_CONTEXT]}), b"]"],
            _dpr_training_file,
            counts=False,
            suffix=".json",
        ),
        LineFormat(
            "dpr_test_file",
            [b'capital of France?\t["Paris"]', b'largest planet?\t["Jupiter"]'],
            _dpr_test_file,
            counts=False,
            suffix=".tsv",
        ),
        LineFormat(
            "dpr_passages",  # a KILT source, told from a Parquet file by its first bytes
            _sample_lines(SAMPLE_KILT)[:3],
            _dpr_passages,
            counts=False,
            suffix=".json",
        ),
        LineFormat(
            "overlap_annotations",
            _json_lines({"id": 0, "labels": ["total"]}, {"id": 1, "labels": ["total"]}),
            _overlap_annotations,
            counts=False,
            suffix=".jsonl",
        ),
        LineFormat(
            "generated_questions",
            _json_lines({"passage_id": "1", "question": "q?", "answer": "a"}),
            _generated_questions,
            counts=False,
            suffix=".jsonl",
        ),
    )
}

#: every reader: the line formats fuzzed above, and the small text inputs
EVERY_READER = {**FORMATS, **{name: lambda fmt=fmt: fmt for name, fmt in TEXT_READERS.items()}}


@pytest.mark.parametrize("name", list(EVERY_READER))
def test_every_reader_reads_a_file_with_a_byte_order_mark_as_without(name, tmp_path):
    """A UTF-8 file saved with a byte-order mark (EF BB BF) reads as without it: its first
    line is not lost, nor its first id changed (a TREC run's first query id began with it)."""
    fmt = EVERY_READER[name]()
    path = fmt.write(tmp_path / f"{name}{fmt.suffix}", fmt.lines)
    marked = tmp_path / f"marked{fmt.suffix}"
    marked.write_bytes(UTF8_BOM + path.read_bytes())
    assert _read_whole(fmt, marked) == _read_whole(fmt, path)


@pytest.mark.parametrize("how", PIPES)
@pytest.mark.parametrize("name", list(EVERY_READER))
def test_every_reader_reads_a_pipe_as_the_file(name, how, tmp_path):
    """/dev/stdin on a pipe, or a FIFO (`<(zcat dump.gz)`): read once, whole. Before, the
    first bytes went to telling the compression (and a run's format), then were lost."""
    fmt = EVERY_READER[name]()
    path = fmt.write(tmp_path / f"{name}{fmt.suffix}", fmt.lines)
    with piped(path.read_bytes(), how, tmp_path) as pipe:
        assert _read_whole(fmt, pipe) == _read_whole(fmt, path)


@pytest.mark.parametrize("name", list(EVERY_READER))
def test_every_reader_refuses_a_folder_by_name(name, tmp_path):
    fmt = EVERY_READER[name]()
    folder = tmp_path / f"{name}{fmt.suffix}"
    folder.mkdir()
    with pytest.raises(ValueError) as caught:  # a BadInputError, or a DPRFileError
        fmt.read(folder, False)
    assert str(caught.value) == f"{folder}: is a folder, not a file"


# ---------------------------------------------------------------------------------------
# Folders: the AmbER authors' release (JSON lines), built AmbER and WES folders (Parquet)


@pytest.fixture(scope="module")
def amber_build(tmp_path_factory) -> tuple[Path, Path]:
    """The small fixture of tests/test_amber_inputs.py built: (Hub folder, JSON-lines layout)."""
    from test_amber_inputs import write_inputs

    from namesake.amber.build.pipeline import build_amber

    folder = tmp_path_factory.mktemp("fuzz-amber")
    inputs = write_inputs(folder / "in")
    out, jsonl = folder / "dataset", folder / "released"
    build_amber(inputs["wikidata"], inputs["pageviews"], inputs["kilt"], out, jsonl_dir=jsonl)
    return out, jsonl


def test_fuzz_released_amber_folder(amber_build, tmp_path_factory):
    from test_amber_inputs import parquet_tables

    from namesake.amber.build.released import import_released

    _, release = amber_build
    folder = tmp_path_factory.mktemp("fuzz-released")
    files = sorted(release.rglob("*.jsonl"))
    originals = {path: path.read_bytes().splitlines() for path in files}
    import_released(release, folder / "baseline")
    baseline = parquet_tables(folder / "baseline")
    formats = {
        path: LineFormat(
            path.name,
            originals[path],
            None,
            counts=False,
            lenient_keys=frozenset({"popularity", "answer"}),
        )
        for path in files
    }

    @FUZZ
    @given(st.sampled_from(files).flatmap(lambda p: st.tuples(st.just(p), mutations(formats[p]))))
    def mutated(case):
        path, mutation = case
        lines = list(originals[path])
        lines[mutation.index] = mutation.line
        path.write_bytes(b"\n".join(lines) + b"\n")
        out = folder / "out"
        try:
            import_released(release, out)
        except BadInputError as error:
            assert Path(error.path) in files, error  # the mutated file, or its partner
            assert not out.exists()
            return
        finally:
            path.write_bytes(b"\n".join(originals[path]) + b"\n")
        tables = parquet_tables(out)
        shutil.rmtree(out)
        if not mutation.lenient:
            assert tables == baseline, mutation

    mutated()


def _wes_folder(folder: Path) -> Path:
    from namesake.wes.pairs import PAIR_SCHEMA

    config = folder / "2016thresh1pairs"
    config.mkdir(parents=True)
    for split, rows in (("train", 6), ("validation", 3), ("test", 3)):
        table = pa.table(
            {
                "article": [f"Article {split} {n}" for n in range(rows)],
                "link_text": [f"link {n}" for n in range(rows)],
                "is_same": [n % 2 for n in range(rows)],
            },
            schema=PAIR_SCHEMA,
        )
        pq.write_table(table, config / f"{split}-00000-of-00001.parquet")
    return folder


@st.composite
def file_mutations(draw, data: bytes, table: pa.Table):
    """What a Parquet shard may become: cut short, a byte overwritten, a column of another
    type, empty, or huge (a row with a MiB-long string: valid)."""
    kind = draw(st.sampled_from(["truncated", "not UTF-8", "wrong type", "empty", "huge"]))
    if kind == "truncated":
        return kind, data[: draw(st.integers(1, len(data) - 1))]
    if kind == "not UTF-8":
        at = draw(st.integers(0, len(data) - 1))
        return kind, data[:at] + NOT_UTF8 + data[at + 1 :]
    if kind == "empty":
        return kind, b""
    if kind == "huge":
        first = {name: table[name][:1] for name in table.column_names}
        name = next(f.name for f in table.schema if pa.types.is_string(f.type))
        first[name] = pa.array(["y" * HUGE], table.schema.field(name).type)
        changed = pa.concat_tables([table, pa.table(first, schema=table.schema)])
    else:
        name = draw(st.sampled_from(table.column_names))
        column = table[name]
        other = (
            pa.array([str(v) for v in column.to_pylist()])
            if not pa.types.is_string(column.type)
            else pa.array(range(len(column)), pa.int64())
        )
        changed = table.set_column(table.column_names.index(name), name, other)
    sink = pa.BufferOutputStream()
    pq.write_table(changed, sink)
    return kind, sink.getvalue().to_pybytes()


def _fuzz_parquet_folder(shards: list[Path], read: Callable, must_refuse: set[str]) -> None:
    """Mutates one of `shards` (those `read` reads) at a time."""
    originals = {shard: shard.read_bytes() for shard in shards}
    tables = {shard: pq.read_table(shard) for shard in shards}
    baseline = read()

    @FUZZ
    @given(
        st.sampled_from(shards).flatmap(
            lambda s: st.tuples(st.just(s), file_mutations(originals[s], tables[s]))
        )
    )
    def mutated(case):
        shard, (kind, data) = case
        shard.write_bytes(data)
        try:
            result = read()
        except BadInputError as error:
            assert error.path in (str(shard), str(shard.parent)), error
            return
        finally:
            shard.write_bytes(originals[shard])
        assert kind not in must_refuse, kind
        if kind != "huge":  # a byte Parquet does not check may change a value, not more
            assert len(result) == len(baseline)

    mutated()


def test_fuzz_built_amber_folder(amber_build):
    from namesake.amber.build.dataset import folder_statistics

    dataset, _ = amber_build

    def read():
        return folder_statistics(dataset)

    # `amber stats` reads the all-tasks config and the set members of each collection
    shards = [s for s in sorted(dataset.rglob("*.parquet")) if "_" not in s.parent.name[5:]]
    shards += sorted(dataset.glob("*_entities/*.parquet"))
    assert len(shards) == 4
    _fuzz_parquet_folder(shards, read, {"truncated", "wrong type", "empty"})


def test_fuzz_wes_folder(tmp_path):
    from namesake.wes.dataset import read_config

    folder = _wes_folder(tmp_path / "wes")

    def read():
        return [
            row
            for split in ("train", "validation", "test")
            for row in read_config(folder, "2016thresh1pairs", split).to_pylist()
        ]

    shards = sorted(folder.rglob("*.parquet"))
    _fuzz_parquet_folder(shards, read, {"truncated", "wrong type", "empty"})
