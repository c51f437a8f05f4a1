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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from namesake.dumps.reading import iter_line_blocks
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


@dataclass
class _Ranked:
    """What has been read of one query: its documents in rank order, with their line numbers."""

    docs: dict[str, int]
    scores: list[float]
    rank: int
    score: float
    line: int


def read_run(path: str | os.PathLike) -> dict[str, list[str]]:
    """query id -> its document ids in rank order (`read_scored_run` without the scores)."""
    return {query: [doc for doc, _ in ranked] for query, ranked in read_scored_run(path).items()}


def read_scored_run(path: str | os.PathLike) -> dict[str, list[tuple[str, float]]]:
    """query id -> its (document id, score) pairs in rank order; any fault is a BadInputError
    naming the line.

    A query's lines need not be contiguous (a merged run), but down the file its ranks must
    increase and its scores must not: the order the ranks give is the order trec_eval's
    scores give (ties aside: trec_eval breaks them by document id, namesake by rank).
    """
    queries: dict[str, _Ranked] = {}
    for first_line, block in iter_line_blocks(path):
        try:
            text = block.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = first_line + block[: exc.start].count(b"\n")
            raise BadInputError(path, line, "not UTF-8 text: not a TREC run?") from None
        for line_no, line in enumerate(text.splitlines(), first_line):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != 6:
                raise BadInputError(
                    path,
                    line_no,
                    f"expected 6 fields '{RUN_FIELDS}', found {len(fields)}: {line[:80]!r}",
                )
            query_id, _, doc_id, rank_text, score_text, _ = fields
            try:
                rank = int(rank_text)
            except ValueError:
                raise BadInputError(
                    path, line_no, f"rank {rank_text!r} (4th field) is not an integer"
                ) from None
            try:
                score = float(score_text)
            except ValueError:
                raise BadInputError(
                    path, line_no, f"score {score_text!r} (5th field) is not a number"
                ) from None
            if not math.isfinite(score):
                raise BadInputError(path, line_no, f"score {score_text!r} is not finite")
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
                    f"document {doc_id} is ranked twice for query {query_id} (first on line "
                    f"{seen.docs[doc_id]})",
                )
            if rank <= seen.rank:
                raise BadInputError(
                    path,
                    line_no,
                    f"rank {rank} of query {query_id} comes after rank {seen.rank} (line "
                    f"{seen.line}): ranks must increase down the file",
                )
            if score > seen.score:
                raise BadInputError(
                    path,
                    line_no,
                    f"score {score_text} at rank {rank} of query {query_id} is above the score "
                    f"{seen.score!r} of rank {seen.rank} (line {seen.line}): trec_eval orders by "
                    "score, so ranks and scores must agree",
                )
            seen.docs[doc_id] = line_no
            seen.scores.append(score)
            seen.rank, seen.score, seen.line = rank, score, line_no
    return {
        query_id: list(zip(ranked.docs, ranked.scores, strict=True))
        for query_id, ranked in queries.items()
    }


def looks_like_run_line(line: str) -> bool:
    """Whether a line has the shape of a TREC run line (six fields, integer rank, numeric
    score): how a predictions file's format is told from its content."""
    fields = line.split()
    if len(fields) != 6:
        return False
    try:
        int(fields[3])
        float(fields[4])
    except ValueError:
        return False
    return True
