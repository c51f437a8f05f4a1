"""`Run`: one system's rankings of one query set, held as columns, the object that every
evaluation stage takes and returns (retrieve, fuse, rerank, score, compare).

A run of AmbER's 80,000 queries x 100 pages is 8M ranked pages. As Python dictionaries of
strings it took 2.2 GB and minutes to read, fuse or score; as columns it is one array of page
ids (Arrow strings: ~90 MB), one of scores and one of offsets, and every stage is a handful
of vectorised operations over them. Query ``i`` ranks ``page_ids[offsets[i]:offsets[i + 1]]``,
best first; ranks are implied by the order.

A page id is compared as text (KILT's ``wikipedia_id`` is a string of digits in one file and a
number in another; both are read as the same text). `shared_vocabulary` and `Run.page_codes`
turn the ids of several runs into integers that mean the same page in each, which is how runs
are fused and scored against the gold pages without a dictionary per query.

`Run.read` and `Run.write` are namesake's one reader and writer of run files, in either of the
two formats a retrieval system's output comes in, so that any system's (Pyserini, ColBERT, an
LLM reranker) is scored without conversion: KILT JSON lines, the format the AmbER authors'
evaluation reads, one line per query with its pages best first
(``{"id": ..., "output": {"provenance": [{"wikipedia_id": ..., "score": ...}, ...]}}``, and
after reranking each page's ``first_stage_score`` beside its score), or TREC runs
(``qid Q0 docid rank score tag``, `namesake.trec`: one score a line, the final one). A TREC
run is parsed by Arrow's CSV reader and checked over its columns, 8M lines in seconds; where
that cannot vouch for the file, the strict line reader reads it again and names the line at
fault, so that the fast path accepts nothing the strict reader refuses, and words no error
its own way.
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path

import msgspec
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from namesake.dumps.reading import UTF8_BOM, iter_json_lines, iter_line_blocks
from namesake.errors import BadInputError
from namesake.outputs import atomic_file
from namesake.trec import checked_score, looks_like_run_line, read_tagged_run, write_run

#: a ranked page as the writers and the rerankers hand it over: (page id, score) or, after
#: reranking, (page id, score, first-stage score)
RankedPage = tuple

#: the formats of a run file: KILT JSON lines, or a TREC run
FORMATS = ("kilt", "trec")


@dataclass(eq=False)
class Run:
    """One system's rankings: ``query_ids`` (str, in the run's order), ``offsets`` (int64,
    one more than the queries), the flat ``page_ids`` (Arrow strings) and ``scores``
    (float64; NaN where the file gave a page no score), and after reranking the
    ``first_stage_scores`` beside them. ``name`` labels the run in tables (a file's stem, a
    retriever's kind); ``provenance`` says what made it (the TREC tag, the retriever kind,
    its index and models), as far as it is known.

    >>> run = Run.read("bm25-human_qa.trec")        # or made in memory: retrieve(...)
    >>> len(run), run.ranking(0)[:2]
    >>> run.top(10).write("bm25-top10.jsonl")
    """

    query_ids: np.ndarray
    offsets: np.ndarray
    page_ids: pa.Array
    scores: np.ndarray
    first_stage_scores: np.ndarray | None = None
    name: str = "run"
    provenance: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.query_ids = np.asarray(self.query_ids, dtype=object)
        self.offsets = np.asarray(self.offsets, dtype=np.int64)
        self.scores = np.asarray(self.scores, dtype=np.float64)
        if not isinstance(self.page_ids, pa.Array):
            self.page_ids = pa.array(self.page_ids, type=pa.string())
        entries = len(self.page_ids)
        if (
            len(self.offsets) != len(self.query_ids) + 1
            or self.offsets[0] != 0
            or self.offsets[-1] != entries
            or np.any(np.diff(self.offsets) < 0)
            or len(self.scores) != entries
            or (self.first_stage_scores is not None and len(self.first_stage_scores) != entries)
        ):
            raise ValueError("a Run's offsets, page ids and scores do not describe one run")

    @classmethod
    def from_rankings(
        cls,
        rankings: Iterable[tuple[str, Sequence[RankedPage]]],
        name: str = "run",
        provenance: dict | None = None,
    ) -> Run:
        """A run from (query id, ranked pages) pairs, each page (id, score) or (id, score,
        first-stage score); a score of None is kept as NaN (no score). How a retriever's
        rankings become a run in memory, without a file.

        A first-stage score given as NaN or inf is refused here, naming its query and rank
        (`checked_score`): the run holds NaN for "none", so a NaN given would silently be
        taken for none, and the reranked run written without it."""
        query_ids, lengths, pages, scores, firsts = [], [], [], [], []
        for query_id, ranking in rankings:
            query_ids.append(str(query_id))
            lengths.append(len(ranking))
            for rank, item in enumerate(ranking, 1):
                pages.append(str(item[0]))
                scores.append(np.nan if item[1] is None else float(item[1]))
                firsts.append(np.nan if len(item) < 3 else _first_stage(item[2], query_id, rank))
        offsets = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])
        first_stage = np.asarray(firsts, dtype=np.float64)
        return cls(
            np.asarray(query_ids, dtype=object),
            offsets,
            pa.array(pages, type=pa.string()),
            np.asarray(scores, dtype=np.float64),
            first_stage if firsts and not np.isnan(first_stage).all() else None,
            name,
            dict(provenance or {}),
        )

    @classmethod
    def read(
        cls, path: str | os.PathLike, format: str | None = None, name: str | None = None
    ) -> Run:
        """The run of a KILT JSON-lines file or a TREC run (``format``, else told from its
        first line: `detect_format`), named ``name`` or else the file's stem; its provenance
        says the path, the format and, where every line of a TREC run has the same, the tag.

        The file is read once (`iter_line_blocks`: compressed or plain, a leading byte-order
        mark dropped), so a pipe (``/dev/stdin``, ``<(zcat run.gz)``) reads as the file would.
        A fault is a BadInputError naming the line, worded as before: for a TREC run, that of
        `namesake.trec.read_tagged_run` (a page ranked twice for a query, ranks that do not
        increase down the file, a score that is not finite or above a better rank's); for KILT
        lines, what msgspec found wrong, or a second prediction for a query id. A page without
        a score (KILT) has NaN."""
        if format not in (None, *FORMATS):
            raise ValueError(f"format must be one of {FORMATS}, not {format!r}")
        blocks = iter_line_blocks(path)
        if format is None:
            format, blocks = detect_format(path, blocks)
        name = Path(path).stem if name is None else name
        run = (_read_trec if format == "trec" else _read_kilt)(path, blocks, name)
        run.provenance["path"] = str(path)  # what reports and comparisons name it by
        return run

    def write(self, path: str | os.PathLike, format: str = "kilt", tag: str | None = None) -> None:
        """Writes the run atomically: as KILT JSON lines, which keep the first-stage scores
        beside the scores after reranking, or as a TREC run (`namesake.trec.write_run`: ranks
        from 1, scores as ``repr`` writes them) tagged ``tag``, else the run's TREC tag, else
        its name. A score that is not finite is refused naming its query and rank
        (`checked_score`), as is what a TREC run cannot hold, ``path`` left as it was."""
        if format == "trec":
            _write_trec(self, path, self._tag() if tag is None else tag)
        elif format == "kilt":
            _write_kilt(self, path)
        else:
            raise ValueError(f"format must be one of {FORMATS}, not {format!r}")

    def _tag(self) -> str:
        return self.provenance.get("tag") or self.name

    def _scored_rankings(self) -> Iterator[tuple[str, Iterator[tuple[str, float]]]]:
        """(query id, its (page id, score) pairs), NaN scores kept for the writer to refuse."""
        pages, scores = self.page_ids.to_pylist(), self.scores.tolist()
        offsets = self.offsets.tolist()
        for query_id, start, stop in zip(self.query_ids, offsets[:-1], offsets[1:], strict=True):
            yield query_id, zip(pages[start:stop], scores[start:stop], strict=True)

    def __len__(self) -> int:
        return len(self.query_ids)

    @property
    def lengths(self) -> np.ndarray:
        """The number of pages of each query's ranking."""
        return np.diff(self.offsets)

    def query_index(self) -> np.ndarray:
        """Per ranked page, the index of its query."""
        return np.repeat(np.arange(len(self), dtype=np.int64), self.lengths)

    def ranks(self) -> np.ndarray:
        """Per ranked page, its 0-based rank in its query's ranking."""
        return np.arange(len(self.page_ids), dtype=np.int64) - np.repeat(
            self.offsets[:-1], self.lengths
        )

    def has_scores(self) -> bool:
        """Whether every ranked page has a score (score-based fusion needs them)."""
        return not np.isnan(self.scores).any()

    def page_codes(self, vocabulary: pa.Array) -> np.ndarray:
        """Per ranked page, its position in ``vocabulary`` (`shared_vocabulary`), -1 where
        the vocabulary lacks it."""
        return _codes(self.page_ids, vocabulary)

    def ranking(self, index: int) -> list[RankedPage]:
        """Query ``index``'s ranked pages as (page id, score[, first-stage score]) tuples,
        a score None where none was given."""
        start, stop = self.offsets[index], self.offsets[index + 1]
        pages = self.page_ids[start:stop].to_pylist()
        scores = [None if s != s else s for s in self.scores[start:stop].tolist()]
        if self.first_stage_scores is None:
            return list(zip(pages, scores, strict=True))
        firsts = self.first_stage_scores[start:stop].tolist()
        return [
            (page, score) if first != first else (page, score, first)
            for page, score, first in zip(pages, scores, firsts, strict=True)
        ]

    def ranked_ids(self) -> list[list[str]]:
        """Each query's page ids in rank order, as lists: what the entity_confusion metric
        and the readers take."""
        pages = self.page_ids.to_pylist()
        bounds = self.offsets.tolist()
        return [pages[start:stop] for start, stop in zip(bounds[:-1], bounds[1:], strict=True)]

    def rankings(self) -> Iterator[tuple[str, list[RankedPage]]]:
        """(query id, ranked pages) of every query, in the run's order: what the writers and
        the per-query stages (reranking) read."""
        for index, query_id in enumerate(self.query_ids):
            yield query_id, self.ranking(index)

    def select(self, query_ids: Sequence[str]) -> Run:
        """The rankings of ``query_ids``, in that order; a query the run lacks gets an empty
        ranking (`namesake evaluate --allow-missing` scores it so)."""
        position = {query_id: i for i, query_id in enumerate(self.query_ids)}
        chosen = np.array([position.get(query_id, -1) for query_id in query_ids], dtype=np.int64)
        lengths = np.where(chosen >= 0, self.lengths[np.maximum(chosen, 0)], 0)
        starts = self.offsets[:-1][np.maximum(chosen, 0)]
        return self._taken(np.asarray(list(query_ids), dtype=object), starts, lengths)

    def top(self, k: int) -> Run:
        """Each ranking cut to its first ``k`` pages."""
        return self._taken(self.query_ids, self.offsets[:-1], np.minimum(self.lengths, k))

    def _taken(self, query_ids: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> Run:
        """The run of ``query_ids`` whose query i holds this run's ranked pages
        starts[i] .. starts[i] + lengths[i] - 1."""
        take = _spans(starts, lengths)
        first = self.first_stage_scores
        return Run(
            query_ids,
            np.concatenate([[0], np.cumsum(lengths)]),
            self.page_ids.take(pa.array(take)),
            self.scores[take],
            None if first is None else first[take],
            self.name,
            dict(self.provenance),
        )


def _first_stage(score: float | None, query_id: str, rank: int) -> float:
    """A reranked page's first-stage score as given: None is none (NaN), a NaN or inf is
    refused (`checked_score`)."""
    return np.nan if score is None else checked_score(score, query_id, rank, "first-stage score")


def _spans(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The indices starts[i] .. starts[i] + lengths[i] - 1 of every i, concatenated."""
    total = int(lengths.sum())
    if not total:
        return np.zeros(0, dtype=np.int64)
    base = np.repeat(starts - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    return base + np.arange(total, dtype=np.int64)


def shared_vocabulary(*page_ids: pa.Array) -> pa.Array:
    """The distinct page ids of several arrays, sorted (as Python sorts str: by code point),
    so that a code's order is its id's order and a tie broken by code is broken by id."""
    distinct = pc.unique(pa.chunked_array([ids.cast(pa.string()) for ids in page_ids]))
    return distinct.take(pc.sort_indices(distinct))


def _codes(values: pa.Array, vocabulary: pa.Array) -> np.ndarray:
    found = pc.index_in(values.cast(pa.string()), value_set=vocabulary)
    return found.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)


def detect_format(
    path: str | os.PathLike, blocks: Iterator[tuple[int, bytes]]
) -> tuple[str, Iterator]:
    """("kilt" or "trec", the line `blocks` of `path` again), the format told from the first
    non-blank line; neither is an error naming it. The blocks read to tell it are given
    again before the rest, so that the file is read once (a pipe cannot be read twice)."""
    read: list[tuple[int, bytes]] = []
    for first_line, block in blocks:
        read.append((first_line, block))
        for line_no, line in enumerate(block.split(b"\n"), first_line):
            text = line.strip()  # bytes.strip: ASCII white space, as the readers split on
            if not text:
                continue
            if text.startswith(b"{"):
                return "kilt", itertools.chain(read, blocks)
            if looks_like_run_line(text):
                return "trec", itertools.chain(read, blocks)
            raise BadInputError(
                path,
                line_no,
                "neither a KILT JSON line nor a TREC run line ('qid Q0 docid rank score "
                f"tag'): {text[:80].decode('utf-8', 'replace')!r}",
            )
    return "kilt", iter(read)  # an empty file: no predictions, which the caller reports


# --- KILT JSON lines


class _Provenance(msgspec.Struct, omit_defaults=True):
    """A ranked page of a KILT JSON line: its score may be missing (a run that only ranks);
    after reranking, the first stage's score is kept beside it."""

    wikipedia_id: str | int
    score: float | None = None
    first_stage_score: float | None = None


class _Output(msgspec.Struct):
    provenance: list[_Provenance]


class _Prediction(msgspec.Struct):
    id: str
    output: _Output


_PREDICTION = msgspec.json.Decoder(_Prediction)
_PAGE, _SCORE, _FIRST_STAGE = (
    attrgetter(name) for name in ("wikipedia_id", "score", "first_stage_score")
)


#: ranked pages of a KILT file held as Python objects at most before they are made columns
#: (8M at once took 0.9 GB)
_KILT_CHUNK = 1 << 20


def _read_kilt(path: str | os.PathLike, blocks: Iterator, name: str) -> Run:
    query_ids: list[str] = []
    lengths, pages, scores, firsts, chunks = [], [], [], [], []
    seen: set[str] = set()
    for line_no, prediction in iter_json_lines(path, _PREDICTION, blocks):
        if prediction.id in seen:
            raise BadInputError(path, line_no, f"second prediction for {prediction.id}")
        seen.add(prediction.id)
        ranked = prediction.output.provenance
        query_ids.append(prediction.id)
        lengths.append(len(ranked))
        pages.extend(map(_PAGE, ranked))
        scores.extend(map(_SCORE, ranked))
        firsts.extend(map(_FIRST_STAGE, ranked))
        if len(pages) >= _KILT_CHUNK:
            chunks.append(_kilt_columns(pages, scores, firsts))
            pages, scores, firsts = [], [], []
    columns = pa.Table.from_batches([*chunks, _kilt_columns(pages, scores, firsts)])
    first_stage = columns["first_stage_score"].to_numpy()  # None: NaN
    return Run(
        np.asarray(query_ids, dtype=object),
        np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)]),
        columns["wikipedia_id"].combine_chunks(),
        columns["score"].to_numpy(),
        None if np.isnan(first_stage).all() else first_stage,
        name,
        {"format": "kilt"},
    )


def _kilt_columns(pages: list, scores: list, firsts: list) -> pa.RecordBatch:
    return pa.record_batch(
        [_page_id_array(pages), pa.array(scores, pa.float64()), pa.array(firsts, pa.float64())],
        names=["wikipedia_id", "score", "first_stage_score"],
    )


def _page_id_array(pages: list) -> pa.Array:
    """The page ids as text: a ``wikipedia_id`` given as a number reads as its digits."""
    try:
        return pa.array(pages, type=pa.string())
    except pa.ArrowTypeError:  # some ids are numbers
        return pa.array(list(map(str, pages)), type=pa.string())


def _write_kilt(run: Run, path: str | os.PathLike) -> None:
    _check_finite(run)
    pages, scores, offsets = run.page_ids.to_pylist(), run.scores.tolist(), run.offsets
    firsts = [None] * len(pages)  # no first-stage score: the key left out
    if run.first_stage_scores is not None:
        firsts = [None if math.isnan(first) else first for first in run.first_stage_scores.tolist()]
    encode = msgspec.json.Encoder().encode
    with atomic_file(path) as f:
        for query_id, start, stop in zip(run.query_ids, offsets[:-1], offsets[1:], strict=True):
            ranked = map(_Provenance, pages[start:stop], scores[start:stop], firsts[start:stop])
            f.write(encode(_Prediction(query_id, _Output(list(ranked)))))
            f.write(b"\n")


def _check_finite(run: Run) -> None:
    """Refuses the first score or first-stage score (NaN: none) that is not finite, as
    `checked_score` words it: JSON has no such number (msgspec would write ``null``)."""
    bad = ~np.isfinite(run.scores)
    if run.first_stage_scores is not None:
        bad |= np.isinf(run.first_stage_scores)
    if not bad.any():
        return
    at = int(np.argmax(bad))
    index = int(np.searchsorted(run.offsets, at, side="right")) - 1
    query_id, rank = run.query_ids[index], at - int(run.offsets[index]) + 1
    checked_score(run.scores[at], query_id, rank)
    checked_score(run.first_stage_scores[at], query_id, rank, "first-stage score")


# --- TREC runs

_TREC_COLUMNS = ("qid", "q0", "docid", "rank", "score", "tag")
_CODED = pa.dictionary(pa.int32(), pa.string())
#: the rank is read as text and cast once checked to be ASCII digits (Arrow reads '0x10' as
#: 16, trec_eval does not); query ids, Q0 and tags, few, are coded as they are read
_TREC_CONVERT = pa_csv.ConvertOptions(
    column_types={
        "qid": _CODED,
        "q0": _CODED,
        "docid": pa.string(),
        "rank": pa.string(),
        "score": pa.float64(),
        "tag": _CODED,
    },
    null_values=[],
    strings_can_be_null=False,
    quoted_strings_can_be_null=False,
)
_TREC_READ = pa_csv.ReadOptions(column_names=list(_TREC_COLUMNS))
#: beside the delimiter Arrow splits a line on, the ASCII white space that `bytes.split` (and
#: trec_eval) splits on too, which Arrow would keep inside a field
_OTHER_SPACE = {b" ": (b"\t", b"\x0b", b"\x0c"), b"\t": (b" ", b"\x0b", b"\x0c")}


def _read_trec(path: str | os.PathLike, blocks: Iterator, name: str) -> Run:
    """A TREC run, parsed by Arrow block by block as it is read (`_parse_trec`) or, where that
    cannot vouch for it, by `read_tagged_run`, line by line, which names the line at fault.

    The strict reader reads the run again: a regular file from its path, so that the raw
    bytes (850 MB for AmbER's 8M lines) are not held beside the parsed columns; anything else
    (a pipe is read once) from the blocks kept as they were read."""
    rereadable = Path(path).is_file()
    kept: list[tuple[int, bytes]] = []

    def read() -> Iterator[tuple[int, bytes]]:
        for item in blocks:
            if not rereadable:
                kept.append(item)
            yield item

    reading = read()
    run = _parse_trec(reading, name)
    if run is not None:
        return run
    again = iter_line_blocks(path) if rereadable else itertools.chain(kept, reading)
    rankings, tags = read_tagged_run(path, again)
    return Run.from_rankings(rankings.items(), name, _trec_provenance(tags))


def _trec_provenance(tags: Iterable[str]) -> dict:
    tags = set(tags)
    return {"format": "trec", **({"tag": tags.pop()} if len(tags) == 1 else {})}


def _parse_trec(blocks: Iterator[tuple[int, bytes]], name: str) -> Run | None:
    """The run, parsed by Arrow's CSV reader block by block and checked over its columns;
    None where Arrow cannot parse it, where it might split a line otherwise than
    `bytes.split`, or where any check fails: the strict reader then reads it."""
    tables, delimiter = [], None
    for _, block in blocks:
        if delimiter is None:
            delimiter = _delimiter(block)
            if delimiter is None:
                continue  # blank so far
        if not _splits_alike(block, delimiter):
            return None
        parse = pa_csv.ParseOptions(delimiter=delimiter.decode(), quote_char=False)
        try:
            tables.append(
                pa_csv.read_csv(
                    pa.py_buffer(block),
                    read_options=_TREC_READ,
                    parse_options=parse,
                    convert_options=_TREC_CONVERT,
                )
            )
        except pa.ArrowInvalid:  # a line Arrow cannot parse, a rank beyond int64
            return None
    if delimiter is None:
        return None
    try:
        return _checked_run(pa.concat_tables(tables), name)
    except pa.ArrowInvalid:
        return None


def _delimiter(block: bytes) -> bytes | None:
    """A tab where the block's first non-blank line holds one, else a space; None: no such
    line in this block."""
    text = block.lstrip()
    if not text:
        return None
    return b"\t" if b"\t" in text.split(b"\n", 1)[0] else b" "


def _splits_alike(block: bytes, delimiter: bytes) -> bool:
    """Whether Arrow, splitting on `delimiter`, splits `block`'s lines and fields where
    `bytes.split` does: no other ASCII white space, CR only before LF (Arrow ends a line at
    a lone CR too), and no byte-order mark at the block's start (Arrow drops one there; the
    strict reader only at the file's, which `iter_line_blocks` has dropped)."""
    if block.startswith(UTF8_BOM) or any(space in block for space in _OTHER_SPACE[delimiter]):
        return False
    return b"\r" not in block or block.count(b"\r") == block.count(b"\r\n")


def _checked_run(table: pa.Table, name: str) -> Run | None:
    """The Run of a parsed TREC run if it passes every check of `read_tagged_run`, else
    None. Arrow has checked the field count and UTF-8; here: no empty field (a doubled
    delimiter), ranks of ASCII digits, finite scores, and per query, down the file, ranks
    increasing, scores not, and no page twice."""
    queries, q0, tags = (table[column].combine_chunks() for column in ("qid", "q0", "tag"))
    pages = table["docid"].combine_chunks()
    codes = queries.indices.to_numpy()
    ranks_text = table["rank"]
    scores = table["score"].to_numpy()
    if (
        not _in_order_of_appearance(codes, len(queries.dictionary))
        or any(
            _has_empty(texts)
            for texts in (queries.dictionary, q0.dictionary, tags.dictionary, pages)
        )
        or not pc.all(pc.ascii_is_decimal(ranks_text)).as_py()
        or not np.isfinite(scores).all()
    ):
        return None
    ranks = pc.cast(ranks_text, pa.int64()).to_numpy()
    if np.any(np.diff(codes) < 0):  # a merged run: each query's lines brought together
        order = np.argsort(codes, kind="stable")
        codes, ranks, scores, pages = codes[order], ranks[order], scores[order], pages.take(order)
    same_query = codes[1:] == codes[:-1]
    offsets = np.concatenate(
        [[0], np.cumsum(np.bincount(codes, minlength=len(queries.dictionary)))]
    )
    if (
        np.any(same_query & (ranks[1:] <= ranks[:-1]))
        or np.any(same_query & (scores[1:] > scores[:-1]))
        or _repeats_within(_text_hashes(pages), offsets)
    ):
        return None
    return Run(
        queries.dictionary.to_numpy(zero_copy_only=False),
        offsets,
        pages,
        scores,
        None,
        name,
        _trec_provenance(tags.dictionary.to_pylist()),
    )


#: lines of a TREC run formatted at a time (`_write_trec`): ~50 MB of text
_WRITE_ROWS = 1 << 20
#: the characters `str.isspace` takes (`namesake.trec.check_token` refuses them in a field),
#: as an RE2 class, so that 8M page ids are checked by Arrow
_WHITE_SPACE = (
    r"[\t-\r\x{1c}-\x{20}\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}"
    r"\x{205f}\x{3000}]"
)


def _write_trec(run: Run, path: str | os.PathLike, tag: str) -> None:
    """`namesake.trec.write_run`'s lines, formatted by Arrow a million at a time (scores by
    ``repr``), where the run passes its checks (`_writable_as_trec`); else `write_run`
    itself writes it, line by line, and refuses the first fault as it meets it."""
    if not _writable_as_trec(run, tag):
        write_run(path, run._scored_rankings(), tag)
        return
    query_ids = pa.array(run.query_ids.tolist(), type=pa.string())
    query_index, ranks = run.query_index(), run.ranks() + 1
    with atomic_file(path) as f:
        for start in range(0, len(run.page_ids), _WRITE_ROWS):
            rows = slice(start, start + _WRITE_ROWS)
            lines = pc.binary_join_element_wise(
                query_ids.take(query_index[rows]),
                "Q0",
                run.page_ids[rows],
                pa.array(ranks[rows]).cast(pa.string()),
                pa.array(list(map(repr, run.scores[rows].tolist())), type=pa.string()),
                f"{tag}\n",
                " ",
            )
            offsets = np.frombuffer(lines.buffers()[1], np.int32, len(lines) + 1, 4 * lines.offset)
            f.write(memoryview(lines.buffers()[2])[offsets[0] : offsets[-1]])


def _writable_as_trec(run: Run, tag: str) -> bool:
    """Whether `write_run` would write the run: no id or tag empty or holding white space,
    scores finite and not rising down a ranking."""
    texts = (pa.array([tag]), pa.array(run.query_ids.tolist(), type=pa.string()), run.page_ids)
    if any(
        _has_empty(column) or pc.any(pc.match_substring_regex(column, _WHITE_SPACE)).as_py()
        for column in texts
    ):
        return False
    scores, same_query = run.scores, np.diff(run.query_index()) == 0
    return bool(np.isfinite(scores).all() and not np.any(same_query & (scores[1:] > scores[:-1])))


def _in_order_of_appearance(codes: np.ndarray, count: int) -> bool:
    """Whether the query codes number the queries in the order they first appear (the
    order of the strict reader's queries): each new code one above the highest before.
    Arrow's dictionary unification gives this order; the check costs little."""
    highest = np.maximum.accumulate(codes)
    starts_at_0 = codes[0] == 0 and highest[-1] == count - 1
    return bool(starts_at_0 and np.all(np.diff(highest) <= 1))


def _has_empty(texts: pa.Array) -> bool:
    return bool(pc.any(pc.equal(pc.binary_length(texts), 0)).as_py())


def _repeats_within(keys: np.ndarray, offsets: np.ndarray) -> bool:
    """Whether a key stands twice in one span ``keys[offsets[i]:offsets[i + 1]]``.

    The spans are laid as the rows of a table, padded with 0, 1, 2... (which no two keys of
    a row share; a key equal to one only sends the run to the strict reader), and each row
    is sorted: 80,000 rows of 100 take 0.02 s, one sort of all 8M keys 0.5 s. Where one
    long span would make the table too big, that one sort, the span mixed into the key."""
    lengths = np.diff(offsets)
    count, width = len(lengths), int(lengths.max(initial=0))
    if count * width > 2 * len(keys) + 1024:
        spans = np.repeat(np.arange(count, dtype=np.uint64), lengths)
        values = np.sort(keys ^ (spans * _MIX))
        return bool(np.any(values[1:] == values[:-1]))
    rows = np.tile(np.arange(width, dtype=np.uint64), count)
    rows[np.arange(len(keys)) + np.repeat(np.arange(count) * width - offsets[:-1], lengths)] = keys
    rows = rows.reshape(count, width)
    rows.sort(axis=1)
    return bool(np.any(rows[:, 1:] == rows[:, :-1]))


#: an odd 64-bit constant (the golden ratio's), to mix bits in hashing
_MIX = np.uint64(0x9E3779B97F4A7C15)
#: the mask of the first 0..8 bytes of a little-endian 64-bit word
_BYTE_MASKS = np.array([(1 << (8 * k)) - 1 for k in range(9)], dtype=np.uint64)


def _text_hashes(texts: pa.Array) -> np.ndarray:
    """A 64-bit hash of each string, from its bytes 8 at a time, equal for equal strings:
    how a page ranked twice for a query is found among 8M lines without a hash table of
    strings (Arrow's dictionary_encode took 1.5-2.6 s). Unequal strings that share a hash
    (1 in 2^64 a pair) only send the run to the strict reader, which compares the ids."""
    offsets = np.frombuffer(texts.buffers()[1], np.int32, len(texts) + 1, 4 * texts.offset)
    data = texts.buffers()[2]
    data = np.frombuffer(data, np.uint8) if data is not None else np.zeros(0, np.uint8)
    starts, lengths = offsets[:-1], np.diff(offsets)
    longest = int(lengths.max(initial=0))
    padded = np.concatenate([data, np.zeros(longest + 8, np.uint8)])  # every word in range
    # words[i]: the 8 bytes from data[i], little-endian (an unaligned view, nothing copied)
    words = np.ndarray((len(data) + longest + 1,), dtype="<u8", buffer=padded, strides=(1,))
    hashes = lengths.astype(np.uint64)
    hashes *= _MIX
    for at in range(0, longest, 8):
        word = words[starts + at]
        remaining = lengths - at
        word &= _BYTE_MASKS[np.clip(remaining, 0, 8, out=remaining)]
        hashes ^= word
        hashes *= _MIX
        hashes ^= hashes >> np.uint64(29)
    return hashes
