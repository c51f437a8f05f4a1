"""Parsing the Wikidata JSON dump: one compact entity per line inside a JSON array.

Each worker turns a block of dump lines into compact Arrow columns: the items that have
an English label and an English Wikipedia sitelink, their relations restricted to the
properties the later stages read, and the English labels of properties.
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson
import pyarrow as pa

ITEM_VALUE, QUANTITY_VALUE = 0, 1
INSTANCE_OF = "P31"
KNOWN_DATATYPES = frozenset(
    [
        *("wikibase-item", "wikibase-property", "wikibase-lexeme", "wikibase-form"),
        *("wikibase-sense", "entity-schema", "string", "external-id", "url", "commonsMedia"),
        *("monolingualtext", "quantity", "time", "globe-coordinate", "math"),
        *("musical-notation", "tabular-data", "geo-shape"),
    ]
)

ENTITY_SCHEMA = pa.schema(
    [
        ("qid", pa.int64()),
        ("title", pa.string()),
        ("names", pa.list_(pa.string())),
        ("types", pa.list_(pa.int64())),
        ("line", pa.int64()),
    ]
)
RELATION_SCHEMA = pa.schema(
    [
        ("qid", pa.int64()),
        ("pid", pa.int32()),
        ("kind", pa.int8()),
        ("value_qid", pa.int64()),
        ("amount", pa.string()),
        ("unit", pa.string()),
    ]
)


@dataclass
class ParsedBlock:
    """What one block of dump lines contributes."""

    entities: pa.RecordBatch
    relations: pa.RecordBatch
    property_labels: dict[int, str]
    problems: list[tuple[int, str, str]]
    first_line: int
    lines: int
    edges: tuple[bool, bool] | None  # block opens with '[' / closes with ']'


_wanted_pids: frozenset[str] = frozenset()


def init_worker(wanted_pids: frozenset[str]) -> None:
    """Sets the properties whose relations are kept (the worker processes' only state)."""
    global _wanted_pids
    _wanted_pids = wanted_pids


def entity_number(entity_id: str) -> int:
    """'Q91' -> 91, 'P31' -> 31."""
    return int(entity_id[1:])


def _mapping(entity: dict, key: str) -> dict:
    """A map field of an entity; the dump writes empty maps as ``[]``."""
    value = entity.get(key)
    return value if isinstance(value, dict) else {}


def _english(entity: dict, key: str):
    return _mapping(entity, key).get("en")


def parse_block(block: tuple[int, bytes]) -> ParsedBlock:
    """Parses a block of dump lines (runs in a worker process)."""
    first_line, data = block
    entities = {name: [] for name in ENTITY_SCHEMA.names}
    relations = {name: [] for name in RELATION_SCHEMA.names}
    property_labels: dict[int, str] = {}
    problems: list[tuple[int, str, str]] = []
    lines = data.splitlines()
    for line_no, raw in enumerate(lines, first_line):
        line = raw.strip()
        if line in (b"[", b"]", b""):
            continue
        if line.endswith(b","):
            line = line[:-1]
        if not (line.startswith(b"{") and line.endswith(b"}")):
            problems.append((line_no, "truncated entity line", line[-40:].decode(errors="replace")))
            continue
        # Cheap pre-filter before parsing: only items with an English Wikipedia page and
        # properties (for their labels) can contribute. Dropping it changes no output.
        if b'"enwiki"' not in line and b'"type":"property"' not in line:
            continue
        try:
            entity = orjson.loads(line)
            _parse_entity(entity, line_no, entities, relations, property_labels, problems)
        except orjson.JSONDecodeError as exc:
            problems.append((line_no, "invalid JSON", str(exc)))
        except (KeyError, TypeError, AttributeError, ValueError, IndexError) as exc:
            problems.append((line_no, "missing or malformed field", repr(exc)))
    return ParsedBlock(
        entities=pa.RecordBatch.from_pydict(entities, schema=ENTITY_SCHEMA),
        relations=pa.RecordBatch.from_pydict(relations, schema=RELATION_SCHEMA),
        property_labels=property_labels,
        problems=problems,
        first_line=first_line,
        lines=len(lines),
        edges=_edges(lines),
    )


def _edges(lines: list[bytes]) -> tuple[bool, bool] | None:
    """Whether the block's first non-empty line is '[' and its last one is ']'."""
    first = next((line for line in map(bytes.strip, lines) if line), None)
    if first is None:
        return None
    last = next(line for line in map(bytes.strip, reversed(lines)) if line)
    return first == b"[", last == b"]"


def _parse_entity(entity, line_no, entities, relations, property_labels, problems):
    kind = entity["type"]
    if kind == "property":
        label = _english(entity, "labels")
        if label is not None:
            property_labels[entity_number(entity["id"])] = label["value"]
        return
    if kind != "item":
        return
    label = _english(entity, "labels")
    sitelink = _mapping(entity, "sitelinks").get("enwiki")
    if label is None or sitelink is None:
        return
    qid = entity_number(entity["id"])
    names = [label["value"]] + [alias["value"] for alias in _english(entity, "aliases") or []]
    claims = _mapping(entity, "claims")
    types = [
        entity_number(value["id"])
        for datatype, value in _claim_values(claims, INSTANCE_OF, entity, line_no, problems)
        if datatype == "wikibase-item"
    ]
    for pid in claims:  # dump order of properties and values is kept for the outputs
        if pid not in _wanted_pids:
            continue
        pid_number = entity_number(pid)
        for datatype, value in _claim_values(claims, pid, entity, line_no, problems):
            relations["qid"].append(qid)
            relations["pid"].append(pid_number)
            if datatype == "wikibase-item":
                relations["kind"].append(ITEM_VALUE)
                relations["value_qid"].append(entity_number(value["id"]))
                relations["amount"].append(None)
                relations["unit"].append(None)
            else:
                relations["kind"].append(QUANTITY_VALUE)
                relations["value_qid"].append(None)
                relations["amount"].append(value["amount"])
                relations["unit"].append(value["unit"])
    entities["qid"].append(qid)
    entities["title"].append(sitelink["title"].strip().replace(" ", "_"))
    entities["names"].append(names)
    entities["types"].append(types)
    entities["line"].append(line_no)


def _claim_values(claims, pid, entity, line_no, problems):
    """Yields (datatype, datavalue value) of a property's item and quantity claims.

    Claims without a value (somevalue/novalue) and other datatypes are skipped; a
    datatype Wikidata does not define is reported.
    """
    for statement in claims.get(pid, []):
        snak = statement["mainsnak"]
        datatype = snak["datatype"]
        if datatype not in KNOWN_DATATYPES:
            problems.append(
                (line_no, "unknown datatype", f"{datatype!r} in {pid} of {entity['id']}")
            )
            continue
        if "datavalue" in snak and datatype in ("wikibase-item", "quantity"):
            yield datatype, snak["datavalue"]["value"]
