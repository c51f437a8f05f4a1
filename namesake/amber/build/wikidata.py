"""Parsing the Wikidata JSON dump: one compact entity per line inside a JSON array.

Each worker turns a block of dump lines into compact Arrow columns: the items that have
an English label and an English Wikipedia sitelink, their relations restricted to the
properties the later stages read, and the English labels of properties.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import msgspec
import pyarrow as pa
from msgspec import UNSET, Raw, Struct, UnsetType

from namesake.errors import JSON_LINE_ERRORS, describe_json_error, not_an_object, wrong_type

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
    """'Q91' -> 91, 'P31' -> 31; ValueError for an id that is not a letter and a number
    (of at most 18 digits: it is kept as int64)."""
    digits = entity_id[1:]
    if not (entity_id[:1].isalpha() and digits.isdecimal() and len(digits) <= 18):
        raise ValueError(f"{entity_id[:40]!r} is not an entity id (a letter and a number)")
    return int(digits)


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
            problems.append((line_no, "not JSON", not_an_object(line.removesuffix(b","))))
            continue
        if not _may_contribute(line):
            continue
        try:
            entity = _ENTITY.decode(line.removesuffix(b","))
            _parse_entity(entity, line_no, entities, relations, property_labels, problems)
        except _WrongType as exc:
            problems.append((line_no, "wrong type", str(exc)))
        except (msgspec.DecodeError, *JSON_LINE_ERRORS) as exc:
            problems.append((line_no, *describe_json_error(exc)))
        except _UnknownType as exc:
            problems.append((line_no, "unknown entity type", str(exc)))
        except ValueError as exc:  # an entity id that is not a letter and a number
            problems.append((line_no, "bad entity id", str(exc)))
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
    of a second scan of the whole line. A line that may be an item with pages after all (its
    sitelinks cut short or of the wrong type, `_without_pages`), or that is of no type the
    dump has, is decoded all the same, so that it is reported rather than dropped unseen.
    """
    if b'"enwiki"' in line:
        return True
    head = line[:64]
    if b'"type":"item"' in head:
        return not _without_pages(line)
    return b'"type":"property"' in line or not any(kind in head for kind in _OTHER_TYPES)


#: the dumps' entities that are neither items nor properties, skipped undecoded
_OTHER_TYPES_NAMES = (b"lexeme", b"form", b"sense", b"mediainfo", b"entity-schema")
_OTHER_TYPES = tuple(b'"type":"%s"' % kind for kind in _OTHER_TYPES_NAMES)


def _without_pages(line: bytes) -> bool:
    """Whether an item line without "enwiki" (its trailing comma kept) ends with a whole
    sitelinks map, which then has no English page: the item cannot contribute. The dump
    writes sitelinks last, so the backward search reads a few bytes; most items have none
    ('"sitelinks":{}'), and only the others' sitelinks are decoded to check them."""
    at = line.rfind(b'"sitelinks":')
    if at < 0:
        return False  # cut before its sitelinks, or not a dump's item: decode it
    tail = line[at:].removesuffix(b",")
    if tail[12:14] in (b"{}", b"[]") and _EMPTY_SITELINKS_END.fullmatch(tail, 14):
        return True
    try:
        return isinstance(_SITELINKS_TAIL.decode(b"{" + tail).sitelinks, dict)
    except (msgspec.DecodeError, *JSON_LINE_ERRORS):
        return False


_EMPTY_SITELINKS_END = re.compile(rb'(,"lastrevid":\d+)?}')


# Typed decoding: msgspec skips the fields (other languages, qualifiers, references, other
# sites) that the pipeline never reads, and decodes the few it does lazily from Raw bytes.
# The four maps take any JSON value, so that `_map` says in words which has the wrong type.
class _Text(Struct):
    value: str


class _Sitelink(Struct):
    title: str


class _DataValue(Struct):
    value: Raw


class _Snak(Struct):
    datatype: str
    # somevalue / novalue snaks have none (not null: the dump leaves the key out)
    datavalue: _DataValue | UnsetType = UNSET


class _Statement(Struct):
    mainsnak: _Snak


class _ItemValue(Struct):
    id: str


class _QuantityValue(Struct):
    amount: str
    unit: str


_ANY_JSON = dict[str, Raw] | list | str | float | bool | None


class _Entity(Struct):
    type: str
    id: str
    labels: _ANY_JSON = {}
    aliases: _ANY_JSON = {}
    claims: _ANY_JSON = {}
    sitelinks: _ANY_JSON = {}


class _SitelinksTail(Struct):
    """'{' and the end of an item line from its sitelinks on (`_without_pages`)."""

    sitelinks: _ANY_JSON = {}


_MAPS = ("labels", "aliases", "claims", "sitelinks")


class _WrongType(ValueError):
    """One of an entity's maps is not a map: 'sitelinks is a string, not an object'."""


class _UnknownType(ValueError):
    """An entity of a type the dumps do not have."""


def _map(entity: _Entity, name: str) -> dict[str, Raw]:
    """The entity's map `name` (one of `_MAPS`): an object, or [] (the dump writes an
    empty map as an empty list); anything else raises _WrongType."""
    value = getattr(entity, name)
    if isinstance(value, dict):
        return value
    if isinstance(value, list) and not value:
        return {}
    raise _WrongType(wrong_type(name, value, "an object"))


_ENTITY = msgspec.json.Decoder(_Entity)
_SITELINKS_TAIL = msgspec.json.Decoder(_SitelinksTail)
_TEXT = msgspec.json.Decoder(_Text)
_TEXTS = msgspec.json.Decoder(list[_Text])
_SITELINK = msgspec.json.Decoder(_Sitelink)
_STATEMENTS = msgspec.json.Decoder(list[_Statement])
_VALUE_DECODERS = {
    "wikibase-item": msgspec.json.Decoder(_ItemValue),
    "quantity": msgspec.json.Decoder(_QuantityValue),
}


def _english_label(maps: dict[str, dict[str, Raw]]) -> str | None:
    raw = maps["labels"].get("en")
    return None if raw is None else _decode(_TEXT, raw, "labels.en").value


def _parse_entity(entity: _Entity, line_no, entities, relations, property_labels, problems):
    maps = {name: _map(entity, name) for name in _MAPS}
    if entity.type == "property":
        label = _english_label(maps)
        if label is not None:
            property_labels[entity_number(entity.id)] = label
        return
    if entity.type != "item":
        if entity.type.encode() not in _OTHER_TYPES_NAMES:
            raise _UnknownType(f"{entity.type[:40]!r} is not a type of the dump's entities")
        return
    label = _english_label(maps)
    sitelink = maps["sitelinks"].get("enwiki")
    if label is None or sitelink is None:
        return
    qid = entity_number(entity.id)
    aliases = maps["aliases"].get("en")
    aliases = _decode(_TEXTS, aliases, "aliases.en") if aliases else []
    names = [label] + [alias.value for alias in aliases]
    claims = maps["claims"]
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
    title = _decode(_SITELINK, sitelink, "sitelinks.enwiki").title.strip().replace(" ", "_")
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
    statements = _decode(_STATEMENTS, raw, f"claims.{pid}") if raw is not None else ()
    for index, statement in enumerate(statements):
        snak = statement.mainsnak
        if snak.datatype not in KNOWN_DATATYPES:
            problems.append(
                (line_no, "unknown datatype", f"{snak.datatype!r} in {pid} of {entity.id}")
            )
            continue
        decoder = _VALUE_DECODERS.get(snak.datatype)
        if decoder is not None and snak.datavalue is not UNSET:
            where = f"claims.{pid}[{index}].mainsnak.datavalue.value"
            yield snak.datatype, _decode(decoder, snak.datavalue.value, where)


def _decode(decoder: msgspec.json.Decoder, raw: Raw, where: str):
    """Decodes a Raw part of the line; a ValidationError says where in the line it is."""
    try:
        return decoder.decode(raw)
    except msgspec.ValidationError as exc:
        message, _, at = str(exc).partition(" - at `$")
        raise msgspec.ValidationError(f"{message} - at `$.{where}{at or '`'}") from None
