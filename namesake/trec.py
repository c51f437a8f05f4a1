"""TREC run and qrels files, the exchange format of trec_eval, ranx, ir-measures and Pyserini.

A run line is ``qid Q0 docid rank score tag``, a qrels line ``qid 0 docid relevance``, fields
separated by white space. Runs are read strictly, as namesake's JSON lines are: a malformed
line, a document ranked twice for one query, ranks that do not increase down the file, or a
score above the score of a better rank is an error naming the file and line. trec_eval orders
a query's documents by score, not by the rank column; a run whose scores disagree with its
ranks would be scored differently by it and by namesake, so it is refused rather than guessed.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from namesake.dumps.reading import decode_block, iter_line_blocks
from namesake.errors import BadInputError, NamesakeError
from namesake.outputs import atomic_file

RUN_FIELDS = "qid Q0 docid rank score tag"


def check_token(value: str, what: str, destination: str | os.PathLike) -> str:
    """A field of a TREC line or of a TSV line (BEIR's qrels) cannot be empty or hold white
    space: a tab or a newline splits the line for every reader, a space a TREC line. The one
    check of every writer of these files, before the field is written."""
    if not value or any(character.isspace() for character in value):
        raise NamesakeError(
            f"{what} {value!r} cannot be written to {destination}: it is empty or holds white space"
        )
    return value


def checked_score(score: float, query_id: str, rank: int, what: str = "score") -> float:
    """``score`` as a float, if finite: a nan or infinite score is refused, naming the query
    and rank, since neither namesake nor trec_eval reads it back and JSON has no such number
    (msgspec would write ``null``)."""
    score = float(score)
    if not math.isfinite(score):
        raise NamesakeError(
            f"query {query_id}: the {what} of rank {rank} is {score!r}: a run holds finite "
            "scores only"
        )
    return score


def write_run(
    path: str | os.PathLike,
    rankings: Iterable[tuple[str, Iterable[tuple[str, float]]]],
    tag: str,
) -> None:
    """Writes (query id, ranked (docid, score) pairs) as a TREC run, ranks from 1, atomically:
    a refused field or score leaves ``path`` as it was.

    Scores are written as given (``repr`` of the float, so that nothing is rounded into a tie);
    a ranking whose scores increase down the ranks is refused, since trec_eval would reorder it,
    and so is a score that is not finite (`checked_score`).
    """
    check_token(tag, "run tag", path)
    with atomic_file(path, "w") as f:
        for query_id, ranking in rankings:
            check_token(query_id, "query id", path)
            previous = math.inf
            for rank, (doc_id, score) in enumerate(ranking, 1):
                score = checked_score(score, query_id, rank)
                if score > previous:
                    raise NamesakeError(
                        f"query {query_id}: the score of rank {rank} ({score!r}) is above the "
                        f"score of rank {rank - 1} ({previous!r}): a TREC run is ordered by score"
                    )
                previous = score
                f.write(f"{query_id} Q0 {check_token(str(doc_id), 'document id', path)} {rank} ")
                f.write(f"{score!r} {tag}\n")


def write_qrels(path: str | os.PathLike, qrels: Mapping[str, Mapping[str, int]]) -> None:
    """Writes {query id: {docid: relevance}} as TREC qrels (``qid 0 docid relevance``),
    atomically."""
    with atomic_file(path, "w") as f:
        for query_id, judged in qrels.items():
            check_token(query_id, "query id", path)
            for doc_id, relevance in judged.items():
                f.write(f"{query_id} 0 {check_token(str(doc_id), 'document id', path)} ")
                f.write(f"{relevance}\n")


#: a rank and a score as trec_eval reads them (C's atol and atof): ASCII digits only. Python's
#: int and float take '1_0' for 10 and digits of other scripts, which trec_eval does not.
#: nan and inf are read, and refused as not finite.
_RANK = re.compile(rb"[+-]?[0-9]+")
_SCORE = re.compile(
    rb"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|(?i:nan|inf|infinity))"
)


def _is_rank(text: bytes) -> bool:
    return text.isdigit() or _RANK.fullmatch(text) is not None  # isdigit: the fast, usual case


def _is_score(text: bytes) -> bool:
    """Whether `text` is a score (`_SCORE`); a plain decimal ('12.75') is told without the
    regular expression, which takes three times as long as reading the rest of the line."""
    return text.replace(b".", b"", 1).isdigit() or _SCORE.fullmatch(text) is not None


@dataclass
class _Ranked:
    """What has been read of one query: its documents in rank order, with their line numbers."""

    docs: dict[bytes, int]
    scores: list[float]
    rank: int
    score: float
    line: int


def read_run(path: str | os.PathLike) -> dict[str, list[str]]:
    """query id -> its document ids in rank order (`read_scored_run` without the scores)."""
    return {query: [doc for doc, _ in ranked] for query, ranked in read_scored_run(path).items()}


def read_scored_run(
    path: str | os.PathLike, blocks: Iterator[tuple[int, bytes]] | None = None
) -> dict[str, list[tuple[str, float]]]:
    """query id -> its (document id, score) pairs in rank order (`read_tagged_run`)."""
    return read_tagged_run(path, blocks)[0]


def read_tagged_run(
    path: str | os.PathLike, blocks: Iterator[tuple[int, bytes]] | None = None
) -> tuple[dict[str, list[tuple[str, float]]], set[str]]:
    """(query id -> its (document id, score) pairs in rank order, the run tags of its lines);
    any fault is a BadInputError naming the line. `blocks`: the file's line blocks where the
    caller has begun reading them (`namesake.dumps.reading.iter_line_blocks`), as a pipe is
    read once.

    Lines are read as trec_eval reads them: split on ASCII white space only (a no-break space
    is part of a field, as in trec_eval), the rank and score in ASCII digits (`_RANK`,
    `_SCORE`); ids are UTF-8. A query's lines need not be contiguous (a merged run), but down
    the file its ranks must increase and its scores must not: the order the ranks give is the
    order trec_eval's scores give (ties aside: trec_eval breaks them by document id, namesake
    by rank).
    """
    queries: dict[bytes, _Ranked] = {}
    tags: set[bytes] = set()
    for first_line, block in iter_line_blocks(path) if blocks is None else blocks:
        decode_block(path, first_line, block, "not a TREC run?")  # ids are UTF-8
        for line_no, line in enumerate(block.split(b"\n"), first_line):
            fields = line.split()  # bytes.split: on ASCII white space only
            if not fields:
                continue
            if len(fields) != 6:
                raise BadInputError(
                    path,
                    line_no,
                    f"expected 6 fields '{RUN_FIELDS}', found {len(fields)}: "
                    f"{line[:80].decode(errors='replace')!r}",
                )
            query_id, _, doc_id, rank_text, score_text, tag = fields
            tags.add(tag)
            if not _is_rank(rank_text):
                raise BadInputError(
                    path, line_no, f"rank {rank_text.decode()!r} (4th field) is not an integer"
                )
            if not _is_score(score_text):
                raise BadInputError(
                    path, line_no, f"score {score_text.decode()!r} (5th field) is not a number"
                )
            rank, score = int(rank_text), float(score_text)
            if not math.isfinite(score):
                raise BadInputError(path, line_no, f"score {score_text.decode()!r} is not finite")
            if rank < 0:
                raise BadInputError(path, line_no, f"rank {rank} is negative")
            seen = queries.get(query_id)
            if seen is None:
                queries[query_id] = _Ranked({doc_id: line_no}, [score], rank, score, line_no)
                continue
            if doc_id in seen.docs:
                raise BadInputError(
                    path,
                    line_no,
                    f"document {doc_id.decode()} is ranked twice for query {query_id.decode()} "
                    f"(first on line {seen.docs[doc_id]})",
                )
            if rank <= seen.rank:
                raise BadInputError(
                    path,
                    line_no,
                    f"rank {rank} of query {query_id.decode()} comes after rank {seen.rank} "
                    f"(line {seen.line}): ranks must increase down the file",
                )
            if score > seen.score:
                raise BadInputError(
                    path,
                    line_no,
                    f"score {score_text.decode()} at rank {rank} of query {query_id.decode()} is "
                    f"above the score {seen.score!r} of rank {seen.rank} (line {seen.line}): "
                    "trec_eval orders by score, so ranks and scores must agree",
                )
            seen.docs[doc_id] = line_no
            seen.scores.append(score)
            seen.rank, seen.score, seen.line = rank, score, line_no
    rankings = {
        query_id.decode(): [
            (doc_id.decode(), score)
            for doc_id, score in zip(ranked.docs, ranked.scores, strict=True)
        ]
        for query_id, ranked in queries.items()
    }
    return rankings, {tag.decode() for tag in tags}


def looks_like_run_line(line: bytes) -> bool:
    """Whether a line has the shape of a TREC run line as `read_scored_run` reads it (six
    fields, integer rank, numeric score): how a predictions file's format is told from its
    content."""
    fields = line.split()
    return len(fields) == 6 and _is_rank(fields[3]) and _is_score(fields[4])
