"""Stage 1: Wikidata items that have English Wikipedia page views.

One pass over the Wikidata dump (parallel over line blocks) keeps items with an English
label and an ``enwiki`` sitelink; a hash join against the page-view table keeps those whose
page was viewed and sets popularity = log10(views). Everything is held as Arrow columns
sorted by QID, so later stages look entities up with a binary search.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from namesake.amber.build import wikidata
from namesake.amber.build.entity_chunks import EntityChunks
from namesake.dumps import restart as dump_restart
from namesake.dumps.reading import map_blocks
from namesake.errors import BadInputError, InputProblems

# pyarrow.compute (~50 ms) is imported in extract_entities, not here: this module is part
# of `import namesake.amber.build.pipeline`, which every `namesake amber` command pays at start-up.


@dataclass
class Entities:
    """Stage-1 output.

    ``table``: qid, names (label then aliases), types (P31 QIDs), popularity, line (position
    in the dump, which fixes the order of entities inside a set), sorted by qid.
    ``relations``: qid, pid, kind, value_qid, amount, unit, in dump order.
    """

    table: pa.Table
    relations: pa.Table
    property_labels: dict[int, str]
    #: stage-1 chunks a resumed build read back from its work folder
    reused_chunks: int = 0

    def __post_init__(self):
        self.qids = self.table["qid"].to_numpy()

    def __len__(self) -> int:
        return self.table.num_rows

    def rows_of(self, qids) -> np.ndarray:
        """Row of each QID number in ``table``, or -1 where the item did not survive stage 1."""
        qids = np.asarray(qids, dtype=np.int64)
        rows = np.searchsorted(self.qids, qids)
        found = rows < len(self.qids)
        found[found] = self.qids[rows[found]] == qids[found]
        return np.where(found, rows, -1)


def extract_entities(
    wikidata_path: str | os.PathLike,
    pageviews: pa.Table,
    wanted_pids: frozenset[str],
    problems: InputProblems,
    workers: int = 1,
    work_dir: str | os.PathLike | None = None,
) -> Entities:
    """Runs stage 1 over the dump; relations are kept only for ``wanted_pids``.

    With `work_dir`, the pass is kept there chunk by chunk (`EntityChunks`) and a rerun
    goes on after the last chunk kept; `Entities.reused_chunks` says how many it found."""
    chunks, restart_every = None, dump_restart.RESTART_EVERY_BYTES
    if work_dir is not None:
        chunks = EntityChunks(work_dir, Path(wikidata_path), wanted_pids, restart_every)
    entity_tables, relation_tables = [], []
    property_labels: dict[int, str] = {}
    first_edges = last_edges = None
    last_line = 0
    for block in _parsed_blocks(wikidata_path, wanted_pids, workers, chunks, restart_every):
        problems.merge(wikidata_path, block.problems)
        entity_tables.append(block.entities)
        relation_tables.append(block.relations)
        property_labels.update(block.property_labels)
        if block.edges is not None:
            first_edges = first_edges or block.edges
            last_edges = block.edges
        last_line = block.first_line + block.lines - 1
    if first_edges is None or not first_edges[0]:
        raise BadInputError(
            wikidata_path, 1, "not a Wikidata JSON dump: the first line should be '['"
        )
    if not last_edges[1]:
        problems.report(wikidata_path, last_line, "missing final ']'", "the dump looks truncated")

    import pyarrow.compute as pc  # see the imports at the top

    items = pa.concat_tables([wikidata.ENTITY_SCHEMA.empty_table(), *entity_tables])
    views_row = pc.index_in(items["title"], value_set=pageviews["title"])
    viewed = pc.is_valid(views_row)
    items = items.filter(viewed)
    views = pageviews["views"].take(views_row.filter(viewed)).to_pylist()
    # math.log10, as the published pipeline, so popularities match to the last bit.
    popularity = pa.array([math.log10(v) for v in views], pa.float64())
    items = items.append_column("popularity", popularity).drop_columns(["title"])
    items = items.sort_by("qid")

    relations = pa.concat_tables([wikidata.RELATION_SCHEMA.empty_table(), *relation_tables])
    relations = relations.filter(pc.is_in(relations["qid"], value_set=items["qid"]))
    if chunks is not None and chunks.properties != wanted_pids:  # chunks that kept more
        wanted = pa.array(sorted(wikidata.entity_number(pid) for pid in wanted_pids), pa.int32())
        relations = relations.filter(pc.is_in(relations["pid"], value_set=wanted))
    entities = Entities(items.combine_chunks(), relations.combine_chunks(), property_labels)
    entities.reused_chunks = chunks.reused if chunks else 0
    return entities


def _parsed_blocks(path, wanted_pids, workers, chunks: EntityChunks | None, restart_every):
    """The dump's parsed blocks in order: with `chunks`, those kept in the work folder,
    then those of a pass from where they end, kept chunk by chunk as it goes."""
    options = {
        "worker": wikidata.parse_block,
        "workers": workers,
        "initializer": wikidata.init_worker,
        "desc": "Stage 1: Wikidata entities",
    }
    if chunks is None:
        yield from map_blocks(path, initargs=(frozenset(wanted_pids),), **options)
        return
    yield from chunks.saved()
    if chunks.restart is None:
        return
    reading = dump_restart.DumpReading(path, workers, chunks.restart, restart_every)
    pending: list[wikidata.ParsedBlock] = []
    for block, restart in map_blocks(
        path, initargs=(chunks.properties,), reading=reading, **options
    ):
        pending.append(block)
        yield block
        if restart is not None:
            chunks.save(pending, restart)
            pending = []
    if pending:
        chunks.save(pending, None)
