"""Parsing the Wikidata JSON dump: one compact entity per line inside a JSON array.

Each worker turns a block of dump lines into compact Arrow columns: the items that have
an English label and an English Wikipedia sitelink, their relations restricted to the
properties the later stages read, and the English labels of properties.
"""

from __future__ import annotations

from dataclasses import dataclass

import msgspec
import pyarrow as pa
from msgspec import Raw, Struct

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

    entities: pa.Table
    relations: pa.Table
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
        # The trailing comma is cut only from lines that get decoded: most are skipped,
        # and the copy cost as much as the pre-filter's scan.
        if not (line.startswith(b"{") and line.endswith((b"}", b"},"))):
            detail = line.removesuffix(b",")[-40:].decode(errors="replace")
            problems.append((line_no, "truncated entity line", detail))
            continue
        if not _may_contribute(line):
            continue
        try:
            entity = _ENTITY.decode(line.removesuffix(b","))
            _parse_entity(entity, line_no, entities, relations, property_labels, problems)
        except msgspec.ValidationError as exc:
            problems.append((line_no, "missing or malformed field", str(exc)))
        except msgspec.DecodeError as exc:
            problems.append((line_no, "invalid JSON", str(exc)))
        except ValueError as exc:  # an entity id that is not a letter and a number
            problems.append((line_no, "missing or malformed field", str(exc)))
    return ParsedBlock(
        entities=pa.Table.from_pydict(entities, schema=ENTITY_SCHEMA),
        relations=pa.Table.from_pydict(relations, schema=RELATION_SCHEMA),
        property_labels=property_labels,
        problems=problems,
        first_line=first_line,
        lines=len(lines),
        edges=_edges(lines),
    )


def combine_blocks(blocks: list[ParsedBlock]) -> ParsedBlock:
    """One ParsedBlock for consecutive blocks (tables concatenated without copying)."""
    edges = [block.edges for block in blocks if block.edges is not None]
    labels: dict[int, str] = {}
    for block in blocks:
        labels.update(block.property_labels)
    return ParsedBlock(
        entities=pa.concat_tables([ENTITY_SCHEMA.empty_table(), *(b.entities for b in blocks)]),
        relations=pa.concat_tables([RELATION_SCHEMA.empty_table(), *(b.relations for b in blocks)]),
        property_labels=labels,
        problems=[problem for block in blocks for problem in block.problems],
        first_line=blocks[0].first_line,
        lines=sum(block.lines for block in blocks),
        edges=(edges[0][0], edges[-1][1]) if edges else None,
    )


def _edges(lines: list[bytes]) -> tuple[bool, bool] | None:
    """Whether the block's first non-empty line is '[' and its last one is ']'."""
    first = next((line for line in map(bytes.strip, lines) if line), None)
    if first is None:
        return None
    last = next(line for line in map(bytes.strip, reversed(lines)) if line)
    return first == b"[", last == b"]"


def _may_contribute(line: bytes) -> bool:
    """Cheap pre-filter before parsing: only items with an English Wikipedia page and
    properties (for their labels) can contribute, so skipping the rest changes no output.

    The dump writes "type" first, so most lines are settled by their first bytes instead
    of a second scan of the whole line.
    """
    if b'"enwiki"' in line:
        return True
    if b'"type":"item"' in line[:64]:
        return False
    return b'"type":"property"' in line


# Typed decoding: msgspec skips the fields (other languages, qualifiers, references, other
# sites) that the pipeline never reads, and decodes the few it does lazily from Raw bytes.
# The dump writes an empty map as [], hence the ``| list``.
class _Text(Struct):
    value: str


class _Sitelink(Struct):
    title: str


class _DataValue(Struct):
    value: Raw


class _Snak(Struct):
    datatype: str
    datavalue: _DataValue | None = None  # somevalue / novalue snaks have none


class _Statement(Struct):
    mainsnak: _Snak


class _ItemValue(Struct):
    id: str


class _QuantityValue(Struct):
    amount: str
    unit: str


class _Entity(Struct):
    type: str
    id: str
    labels: dict[str, Raw] | list = {}
    aliases: dict[str, Raw] | list = {}
    claims: dict[str, Raw] | list = {}
    sitelinks: dict[str, Raw] | list = {}


_ENTITY = msgspec.json.Decoder(_Entity)
_TEXT = msgspec.json.Decoder(_Text)
_TEXTS = msgspec.json.Decoder(list[_Text])
_SITELINK = msgspec.json.Decoder(_Sitelink)
_STATEMENTS = msgspec.json.Decoder(list[_Statement])
_VALUE_DECODERS = {
    "wikibase-item": msgspec.json.Decoder(_ItemValue),
    "quantity": msgspec.json.Decoder(_QuantityValue),
}


def _english_label(entity: _Entity) -> str | None:
    raw = entity.labels.get("en") if entity.labels else None
    return None if raw is None else _TEXT.decode(raw).value


def _parse_entity(entity: _Entity, line_no, entities, relations, property_labels, problems):
    if entity.type == "property":
        label = _english_label(entity)
        if label is not None:
            property_labels[entity_number(entity.id)] = label
        return
    if entity.type != "item":
        return
    label = _english_label(entity)
    sitelink = entity.sitelinks.get("enwiki") if entity.sitelinks else None
    if label is None or sitelink is None:
        return
    qid = entity_number(entity.id)
    aliases = entity.aliases.get("en") if entity.aliases else None
    names = [label] + ([alias.value for alias in _TEXTS.decode(aliases)] if aliases else [])
    claims = entity.claims or {}
    types = [
        entity_number(value.id)
        for datatype, value in _claim_values(claims, INSTANCE_OF, entity, line_no, problems)
        if datatype == "wikibase-item"
    ]
    rows = [  # dump order of properties and values is kept for the outputs
        (entity_number(pid), ITEM_VALUE, entity_number(value.id), None, None)
        if datatype == "wikibase-item"
        else (entity_number(pid), QUANTITY_VALUE, None, value.amount, value.unit)
        for pid in claims
        if pid in _wanted_pids
        for datatype, value in _claim_values(claims, pid, entity, line_no, problems)
    ]
    title = _SITELINK.decode(sitelink).title.strip().replace(" ", "_")
    # Appended only once the whole entity parsed, so a bad claim leaves no partial rows.
    for row in rows:
        for column, cell in zip(("pid", "kind", "value_qid", "amount", "unit"), row, strict=True):
            relations[column].append(cell)
        relations["qid"].append(qid)
    entities["qid"].append(qid)
    entities["title"].append(title)
    entities["names"].append(names)
    entities["types"].append(types)
    entities["line"].append(line_no)


def _claim_values(claims, pid, entity, line_no, problems):
    """Yields (datatype, decoded value) of a property's item and quantity claims.

    Claims without a value (somevalue/novalue) and other datatypes are skipped; a
    datatype Wikidata does not define is reported.
    """
    raw = claims.get(pid)
    for statement in _STATEMENTS.decode(raw) if raw is not None else ():
        snak = statement.mainsnak
        if snak.datatype not in KNOWN_DATATYPES:
            problems.append(
                (line_no, "unknown datatype", f"{snak.datatype!r} in {pid} of {entity.id}")
            )
            continue
        decoder = _VALUE_DECODERS.get(snak.datatype)
        if decoder is not None and snak.datavalue is not None:
            yield snak.datatype, decoder.decode(snak.datavalue.value)
