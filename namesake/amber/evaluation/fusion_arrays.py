"""Fusion as array operations over columnar runs (`namesake.runs.Run`): the arithmetic behind
`namesake.amber.evaluation.fusion.fuse`. It is a module of its own so that the commands, which
read fusion's methods for their options at every start, do not load numpy and pyarrow.

ranx's `fuse` holds each query's pages in numba dictionaries: two runs of AmbER's 80,000
queries x 100 pages took it 201 s and 5.8 GB. Here a page is an integer (`page_keys`), each
query's pages of every run are sorted by it to bring a page's votes together, the votes are
summed by `np.bincount` and each query's pages sorted by fused score. The sums are ranx's,
term by term in the same order, so the fused scores, and so their ties, are ranx's to the bit:
`tests/test_fusion.py` compares the two on random runs.

A query's pages are sorted as the rows of a padded matrix (`segment_order`), not as one long
array: AmbER's 80,000 rows of 200 pages sort in well under a second so, against seconds for
16M entries sorted whole.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from namesake.runs import Run, shared_vocabulary

#: the longest page id, in UTF-8 bytes, that is its own integer key (KILT's wikipedia ids
#: have at most 8 digits); runs with a longer id are keyed by `shared_vocabulary`
PACKED_BYTES = 8
#: the cells of one padded matrix of a query per row, sorted a slice of queries at a time
#: (4M: 32 MB of float64)
SORT_CELLS = 1 << 22
#: ranx's floor under a normalisation's denominator (a query whose scores are all equal)
NORM_FLOOR = 1e-9
#: above this exponent numba raises a float to an integer power with pow(), not by squaring
NUMBA_SQUARING_LIMIT = 0x10000

#: (each ranked page's vote, from its run; whether a page's summed votes are multiplied by
#: the summed weights of the runs that rank it, as ranx's comb_mnz and wmnz do)
Votes = tuple[Callable[[Run], np.ndarray], bool]


def votes(method: str, norm: str, rrf_k: int, rbc_phi: float) -> Votes | None:
    """How `fused` fuses ``method`` (fusion's name for it) with ``norm``, or None where only
    ranx does: the rank-based rrf, isr and rbc, and combsum, wsum and combmnz (weighted or
    not) of scores normalised by min-max, max, sum or zmuv. The rank and borda norms, and
    the other methods, whose orders of equal scores are ranx's own, stay with ranx."""
    if method == "rrf":
        return partial(_rrf_votes, k=rrf_k), False
    if method == "isr":
        return _isr_votes, True  # ranx's isr is comb_mnz of these votes
    if method == "rbc":
        return partial(_rbc_votes, phi=rbc_phi), False
    if method in SCORE_METHODS and norm in NORMALISATIONS:
        return NORMALISATIONS[norm], SCORE_METHODS[method]
    return None


def fused(
    runs: Sequence[Run],
    run_votes: Votes,
    weights: Sequence[float] | None,
    top_k: int,
    name: str,
) -> Run:
    """The fusion of ``runs`` (the same queries in the same order): each query's pages with
    their fused score, the sum over the runs of their votes, each times its run's weight
    where there are ``weights`` (or, for the comb_mnz kind, the votes' sum times the number,
    or the weights' sum, of the runs that rank the page), the ``top_k`` best by score, equal
    scores by page id."""
    vote, multiplied = run_votes
    runs, pages = distinct_pages(runs)
    values = np.concatenate([vote(run) for run in runs])[pages.entries]
    group = np.cumsum(pages.first) - 1
    if weights is None:
        scores = np.bincount(group, weights=values)
        if multiplied:
            scores *= np.bincount(group)
    else:
        owners = np.searchsorted(_bounds(runs)[1:], pages.entries, side="right")
        entry_weights = np.asarray(weights, dtype=np.float64)[owners]
        if multiplied:
            scores = np.bincount(group, weights=values) * np.bincount(group, weights=entry_weights)
        else:
            scores = np.bincount(group, weights=entry_weights * values)
        del entry_weights
    del values, group
    group_offsets = np.concatenate([[0], np.cumsum(pages.first)])[pages.offsets]
    best, kept = segment_order(-scores, group_offsets, top_k)
    chosen = pages.entries[pages.first][best]
    page_ids = pa.chunked_array([run.page_ids for run in runs]).take(pa.array(chosen))
    return Run(
        runs[0].query_ids, _offsets(kept), page_ids.combine_chunks(), scores[best], name=name
    )


@dataclass
class Pages:
    """The pages of every query across runs: ``entries``, positions in the runs' entries
    laid end to end, sorted by query, then page, then run, then rank; ``first``, whether an
    entry is the first of its page in its query; ``repeated``, whether it repeats the page
    of an earlier rank of its run; ``offsets``, where each query's entries start."""

    entries: np.ndarray
    first: np.ndarray
    repeated: np.ndarray
    offsets: np.ndarray


def distinct_pages(runs: Sequence[Run]) -> tuple[list[Run], Pages]:
    """``runs`` without a page repeated in one ranking after its first rank (a KILT
    provenance may name a page once a passage), and the `Pages` of what is left. A repeated
    page counts once, at its first rank, as the scorers count it
    (`namesake.amber.evaluation.ir_metrics.clean_ranking`)."""
    runs = list(runs)
    keys = np.concatenate(page_keys(runs))
    pages = _pages_by_query(runs, keys)
    if not pages.repeated.any():
        return runs, pages
    keep = np.ones(len(keys), dtype=bool)
    keep[pages.entries[pages.repeated]] = False
    bounds = _bounds(runs)
    runs = [_kept(run, keep[a:b]) for run, a, b in zip(runs, bounds, bounds[1:], strict=False)]
    return runs, _pages_by_query(runs, keys[keep])


def page_keys(runs: Sequence[Run]) -> list[np.ndarray]:
    """Per run, per ranked page, an integer for its page id, the same in every run: equal ids
    get equal keys and keys are ordered as the ids are (as Python orders str), so that sorting
    by key breaks ties by page id. Ids of at most `PACKED_BYTES` bytes are their own key
    (`_packed_ids`); otherwise keys are positions in the runs' `shared_vocabulary`, which
    costs seconds more at AmbER's size (a hash of 16M ids and a sort of 5M)."""
    packed = [_packed_ids(run.page_ids) for run in runs]
    if all(keys is not None for keys in packed):
        return packed
    vocabulary = shared_vocabulary(*(run.page_ids for run in runs))
    return [run.page_codes(vocabulary) for run in runs]


def _packed_ids(ids: pa.Array) -> np.ndarray | None:
    """Each id's UTF-8 bytes, NUL-padded to `PACKED_BYTES`, read as one big-endian number:
    bytes compare as the ids do (UTF-8's byte order is its code points'), and so do the
    numbers. None where an id is longer, holds a NUL (it would pad like a shorter id) or is
    missing."""
    ids = ids.cast(pa.string())
    if not len(ids):
        return np.zeros(0, dtype=np.uint64)
    if (
        ids.null_count
        or pc.max(pc.binary_length(ids)).as_py() > PACKED_BYTES
        or pc.any(pc.match_substring(ids, "\x00")).as_py()
    ):
        return None
    padded = pc.ascii_rpad(ids, width=PACKED_BYTES, padding="\x00")  # pads bytes, not letters
    start = int(np.frombuffer(padded.buffers()[1], np.int32, 1, padded.offset * 4)[0])
    packed = np.frombuffer(padded.buffers()[2], ">u8", len(padded), start)
    return packed.astype(np.uint64)


def _pages_by_query(runs: Sequence[Run], keys: np.ndarray) -> Pages:
    """The runs' entries (their page ``keys`` laid end to end) gathered query by query, the
    first run's then the next's, and sorted by page key within each query; the sort is
    stable, so one page's entries keep the runs' order and, within a run, the ranks'."""
    lengths = np.stack([run.lengths for run in runs])
    totals = lengths.sum(axis=0)
    earlier = np.cumsum(lengths, axis=0) - lengths  # per query, the entries of earlier runs
    bases = _bounds(runs)
    offsets = _offsets(totals)
    entries = np.empty(offsets[-1], dtype=np.int64)
    first, repeated = np.empty(offsets[-1], dtype=bool), np.empty(offsets[-1], dtype=bool)
    for start, stop, width in _row_slices(totals):
        cells = np.full((stop - start) * width, np.iinfo(keys.dtype).max, dtype=keys.dtype)
        sources = np.zeros((stop - start) * width, dtype=np.int64)
        for run, before, base in zip(runs, earlier, bases, strict=False):
            where = _cells(run.lengths[start:stop], width, before[start:stop])
            span = slice(base + run.offsets[start], base + run.offsets[stop])
            cells[where], sources[where] = keys[span], np.arange(span.start, span.stop)
        ranked = np.argsort(cells.reshape(-1, width), axis=1, kind="stable")
        sorted_keys = np.take_along_axis(cells.reshape(-1, width), ranked, axis=1)
        sorted_sources = np.take_along_axis(sources.reshape(-1, width), ranked, axis=1)
        new = np.ones(ranked.shape, dtype=bool)
        new[:, 1:] = sorted_keys[:, 1:] != sorted_keys[:, :-1]
        owner = np.searchsorted(bases[1:], sorted_sources, side="right")
        again = ~new
        again[:, 1:] &= owner[:, 1:] == owner[:, :-1]
        wanted = np.arange(width) < totals[start:stop, None]
        span = slice(offsets[start], offsets[stop])
        entries[span], first[span], repeated[span] = (
            sorted_sources[wanted],
            new[wanted],
            again[wanted],
        )
    return Pages(entries, first, repeated, offsets)


def segment_order(
    values: np.ndarray, offsets: np.ndarray, limit: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Each segment ``values[offsets[i]:offsets[i + 1]]`` sorted ascending, equal values
    (and NaN, last) in position order: the positions of its first ``limit`` (all when None),
    segment after segment, and how many each segment kept. The segments are the rows of a
    matrix padded with NaN or the dtype's largest value (a stable sort leaves the padding
    behind any real value)."""
    lengths = np.diff(offsets)
    kept = lengths if limit is None else np.minimum(lengths, limit)
    kept_offsets = _offsets(kept)
    order = np.empty(kept_offsets[-1], dtype=np.int64)
    pad = np.nan if values.dtype.kind == "f" else np.iinfo(values.dtype).max
    for start, stop, width in _row_slices(lengths):
        cells = np.full((stop - start) * width, pad, dtype=values.dtype)
        cells[_cells(lengths[start:stop], width)] = values[offsets[start] : offsets[stop]]
        ranked = np.argsort(cells.reshape(-1, width), axis=1, kind="stable")
        wanted = np.arange(width) < kept[start:stop, None]
        ranked += offsets[start:stop, None]
        order[kept_offsets[start] : kept_offsets[stop]] = ranked[wanted]
    return order, kept


def _row_slices(lengths: np.ndarray) -> Iterator[tuple[int, int, int]]:
    """(first row, row after the last, width): slices of the rows of ``lengths`` values whose
    padded matrix, as wide as their longest row, holds at most about `SORT_CELLS` cells;
    slices of empty rows are left out."""
    rows = max(1, SORT_CELLS // max(1, int(lengths.max(initial=0))))
    for start in range(0, len(lengths), rows):
        stop = min(start + rows, len(lengths))
        width = int(lengths[start:stop].max(initial=0))
        if width:
            yield start, stop, width


def _cells(lengths: np.ndarray, width: int, shifts: np.ndarray | int = 0) -> np.ndarray:
    """The flat position, in a matrix ``width`` wide, of each value of rows of ``lengths``
    values laid end to end, each row's values from column ``shifts`` on."""
    row_starts = np.arange(len(lengths)) * width + shifts - (np.cumsum(lengths) - lengths)
    return np.repeat(row_starts, lengths) + np.arange(int(lengths.sum()))


def _rrf_votes(run: Run, k: int) -> np.ndarray:
    """RRF: 1 / (k + rank), ranks from 1."""
    return 1 / (k + run.ranks() + 1)


def _isr_votes(run: Run) -> np.ndarray:
    """ISR: 1 / rank², ranks from 1."""
    return 1 / (run.ranks() + 1) ** 2


def _rbc_votes(run: Run, phi: float) -> np.ndarray:
    """RBC: (1 - phi) phi^rank, ranks from 0, the power taken as ranx's numba takes it."""
    ranks = run.ranks()
    powers = _numba_powers(phi, np.arange(int(ranks.max(initial=0)) + 1))
    return (1 - phi) * powers[ranks]


def _numba_powers(base: float, exponents: np.ndarray) -> np.ndarray:
    """``base ** exponents`` (whole exponents, at least 0) as numba computes a float to an
    integer power: by squaring, which can differ from pow() in the last bit, and then RBC's
    ties would not be ranx's."""
    powers = np.ones(len(exponents))
    remaining = exponents.copy()
    square = base
    while remaining.any():
        odd = (remaining & 1).astype(bool)
        powers[odd] *= square
        remaining >>= 1
        square *= square
    large = exponents > NUMBA_SQUARING_LIMIT
    powers[large] = np.power(base, exponents[large].astype(np.float64))
    return powers


def _min_max(run: Run) -> np.ndarray:
    """(score - query's least) / (its greatest - its least), at least `NORM_FLOOR` below."""
    least, greatest = _query_extremes(run)
    return (run.scores - least) / np.maximum(greatest - least, NORM_FLOOR)


def _max(run: Run) -> np.ndarray:
    """score / query's greatest, at least `NORM_FLOOR` below."""
    _, greatest = _query_extremes(run)
    return run.scores / np.maximum(greatest, NORM_FLOOR)


def _sum(run: Run) -> np.ndarray:
    """(score - query's least) / (its sum - its least x its pages), at least `NORM_FLOOR`."""
    least, _ = _query_extremes(run)
    query = run.query_index()
    totals = np.bincount(query, weights=run.scores, minlength=len(run))[query]
    return (run.scores - least) / np.maximum(totals - least * run.lengths[query], NORM_FLOOR)


def _zmuv(run: Run) -> np.ndarray:
    """(score - query's mean) / its standard deviation, at least `NORM_FLOOR`; the mean and
    the squared deviations summed one score after another, as numba's np.mean and np.var."""
    query = run.query_index()
    pages = np.maximum(run.lengths, 1)
    means = (np.bincount(query, weights=run.scores, minlength=len(run)) / pages)[query]
    deviations = run.scores - means
    variances = np.bincount(query, weights=deviations * deviations, minlength=len(run)) / pages
    return deviations / np.maximum(np.sqrt(variances), NORM_FLOOR)[query]


def _query_extremes(run: Run) -> tuple[np.ndarray, np.ndarray]:
    """Per ranked page, the least and the greatest score of its query."""
    lengths = run.lengths
    starts = run.offsets[:-1][lengths > 0]
    if not len(starts):
        return np.zeros(0), np.zeros(0)
    counts = lengths[lengths > 0]
    least = np.repeat(np.minimum.reduceat(run.scores, starts), counts)
    return least, np.repeat(np.maximum.reduceat(run.scores, starts), counts)


#: ranx's normalisations of a query's scores, per ranked page (ranx/normalization)
NORMALISATIONS = {"min-max": _min_max, "max": _max, "sum": _sum, "zmuv": _zmuv}
#: the score-based methods fused here -> whether of the comb_mnz kind
SCORE_METHODS = {"combsum": False, "wsum": False, "combmnz": True}


def _kept(run: Run, keep: np.ndarray) -> Run:
    """``run`` with only the ranked pages ``keep`` marks, each query's in its order."""
    counts = np.bincount(run.query_index()[keep], minlength=len(run))
    first_stage = run.first_stage_scores
    return Run(
        run.query_ids,
        _offsets(counts),
        run.page_ids.filter(pa.array(keep)),
        run.scores[keep],
        None if first_stage is None else first_stage[keep],
        run.name,
        dict(run.provenance),
    )


def _bounds(runs: Sequence[Run]) -> np.ndarray:
    """Where each run's entries start in the runs' entries laid end to end, and their total."""
    return _offsets([len(run.page_ids) for run in runs])


def _offsets(lengths: np.ndarray) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])
