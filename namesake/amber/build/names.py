"""Stage 2: polysemous names — names shared by several entities of a collection.

The grouping of all names runs as Arrow hash aggregations; Python only sees the names
that at least two entities share. The output is one dict per name in the published AmbER
tuple layout: ``{"name": ..., "qids": {"Q91": {"popularity", "is_head", "label",
"aliases", "entity_types", "pids": {"P607": {"values": [...], "property": ...}}}}}``.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from functools import cache

import numpy as np
import pyarrow as pa

from namesake.amber.build.entities import Entities
from namesake.amber.build.reference import PRACTICED_BY, USED_BY, Collection
from namesake.amber.build.wikidata import ITEM_VALUE, entity_number

# pyarrow.compute (~50 ms) and inflect (~20 ms) are imported inside the functions that use
# them: this module is part of `import namesake.amber.build.pipeline`, which every `namesake amber`
# command pays at start-up, --help included.

MIN_POPULARITY_GAP_PERCENT = 10


@cache
def _inflect():
    import inflect  # see the imports above

    return inflect.engine()


def find_polysemous_names(entities: Entities, collection: Collection) -> list[dict]:
    """Names kept for ``collection``, each with its entities and their resolved relations."""
    table = entities.table
    popularity = table["popularity"].to_pylist()
    line = table["line"].to_numpy()
    in_collection = _has_type(table["types"], collection.type_qids)

    sets = []
    for name, rows in _shared_names(table["names"]).items():
        # The head is the most popular entity of the name *before* the type filter.
        top = max(popularity[row] for row in rows)
        members = sorted((row for row in rows if in_collection[row]), key=line.__getitem__)
        if len(members) < 2:
            continue
        first, second = sorted((popularity[row] for row in members), reverse=True)[:2]
        if _popularity_gap_percent(first, second) >= MIN_POPULARITY_GAP_PERCENT:
            sets.append((name, [(row, popularity[row] == top) for row in members]))

    resolved = _resolve_relations(entities, sorted({row for _, m in sets for row, _ in m}))
    names = table["names"]
    types = table["types"]
    return [
        {
            "name": name,
            "qids": {
                f"Q{entities.qids[row]}": {
                    "popularity": popularity[row],
                    "is_head": is_head,
                    "label": names[row].as_py()[0],
                    "aliases": names[row].as_py(),
                    "entity_types": [f"Q{t}" for t in types[row].as_py()],
                    # An entity with several shared names is in several sets: each set gets
                    # its own copy, since later stages write per-set ids into relations.
                    "pids": copy.deepcopy(resolved[row]),
                }
                for row, is_head in members
            },
        }
        for name, members in sets
    ]


def _popularity_gap_percent(first: float, second: float) -> float:
    """Relative gap between the two highest popularities, written as the published code."""
    if first + second == 0:  # both pages viewed once: no gap (the published code crashes)
        return 0.0
    return 100 * (first - second) / (0.5 * first + 0.5 * second)


def _shared_names(names: pa.ChunkedArray) -> dict[str, list[int]]:
    """name -> rows of the entities carrying it, for names carried by >= 2 entities."""
    import pyarrow.compute as pc  # imported here, not with the module: see the imports

    pairs = (
        pa.table({"name": pc.list_flatten(names), "row": pc.list_parent_indices(names)})
        .group_by(["name", "row"], use_threads=False)
        .aggregate([])
    )
    counts = pairs.group_by("name", use_threads=False).aggregate([("row", "count")])
    shared = counts.filter(pc.greater_equal(counts["row_count"], 2))["name"]
    pairs = pairs.filter(pc.is_in(pairs["name"], value_set=shared))
    grouped: dict[str, list[int]] = defaultdict(list)
    for name, row in zip(pairs["name"].to_pylist(), pairs["row"].to_pylist(), strict=True):
        grouped[name].append(row)
    return grouped


def _has_type(types: pa.ChunkedArray, type_qids: frozenset[int]) -> np.ndarray:
    import pyarrow.compute as pc  # imported here, not with the module: see the imports

    flat = pc.list_flatten(types)
    hit = pc.is_in(flat, value_set=pa.array(sorted(type_qids), pa.int64()))
    mask = np.zeros(len(types), dtype=bool)
    mask[pc.list_parent_indices(types).filter(hit).to_numpy()] = True
    return mask


def _resolve_relations(entities: Entities, rows: list[int]) -> dict[int, dict]:
    """Relations of the given entity rows, with names attached to every value."""
    import pyarrow.compute as pc  # imported here, not with the module: see the imports

    qids = entities.table["qid"].take(pa.array(rows, pa.int64()))
    relations = entities.relations.filter(pc.is_in(entities.relations["qid"], value_set=qids))
    records = relations.to_pylist()
    value_qids = sorted({r["value_qid"] for r in records if r["kind"] == ITEM_VALUE})
    value_names = _names_of(entities, value_qids)
    value_types = dict(zip(value_qids, _column_of(entities, value_qids, "types"), strict=True))
    extra_names = _participant_names(entities, value_qids)

    by_qid: dict[int, dict[str, dict]] = defaultdict(dict)
    for record in records:
        pid = f"P{record['pid']}"
        relation = by_qid[record["qid"]].setdefault(
            pid, {"values": [], "property": entities.property_labels.get(record["pid"], pid)}
        )
        if record["kind"] == ITEM_VALUE:
            qid = record["value_qid"]
            value = {
                "type": "wikibase-item",
                "qid": f"Q{qid}",
                "aliases": value_names[qid],
                "additional_aliases": extra_names.get(qid, []),
                "entity_types": [f"Q{t}" for t in value_types[qid] or []],
            }
        else:
            value = {
                "type": "quantity",
                "amount": record["amount"],
                "unit": record["unit"],
                **_quantity_names(record["amount"]),
            }
        relation["values"].append(value)
    for relations_of_entity in by_qid.values():
        for relation in relations_of_entity.values():
            relation["values"] = [v for v in relation["values"] if v["aliases"]]
    return {row: by_qid.get(qid, {}) for row, qid in zip(rows, qids.to_pylist(), strict=True)}


def _column_of(entities: Entities, qids: list[int], column: str) -> list:
    """Values of ``column`` for the given QIDs (None where the item did not survive stage 1)."""
    rows = entities.rows_of(qids)
    values = entities.table[column].take(pa.array(np.where(rows < 0, 0, rows))).to_pylist()
    return [value if row >= 0 else None for row, value in zip(rows, values, strict=True)]


def _names_of(entities: Entities, qids: list[int]) -> dict[int, list[str]]:
    return {
        qid: names or []
        for qid, names in zip(qids, _column_of(entities, qids, "names"), strict=True)
    }


def _participant_names(entities: Entities, value_qids: list[int]) -> dict[int, list[str]]:
    """Names of the items a value is practiced by / used by ("guitar" -> "guitarist")."""
    import pyarrow.compute as pc  # imported here, not with the module: see the imports

    pids = pa.array([entity_number(PRACTICED_BY), entity_number(USED_BY)], pa.int32())
    relations = entities.relations
    links = relations.filter(
        pc.and_(
            pc.is_in(relations["qid"], value_set=pa.array(value_qids, pa.int64())),
            pc.and_(
                pc.is_in(relations["pid"], value_set=pids), pc.equal(relations["kind"], ITEM_VALUE)
            ),
        )
    ).to_pylist()
    participants = _names_of(entities, sorted({link["value_qid"] for link in links}))
    names: dict[int, set[str]] = defaultdict(set)
    for link in links:
        names[link["qid"]].update(participants[link["value_qid"]])
    return {qid: sorted(found) for qid, found in names.items()}


def _quantity_names(amount: str) -> dict[str, list[str]]:
    """'+8336817' -> aliases ['8336817'], additional ['eight million, ...']."""
    number = amount[1:] if amount[:1] in ("+", "-") else amount
    try:
        words = [_inflect().number_to_words(number)]
    except Exception:  # inflect rejects some amounts; the published code skips them too
        words = []
    return {"aliases": [number], "additional_aliases": words}
