"""Writes realistic synthetic AmbER input dumps: Wikidata JSON, pagecounts-ez, KILT.

Why synthetic: the real dumps are ~100 GB (Wikidata bz2), ~35 GB (KILT) and cannot be
downloaded in a benchmark. What matters for speed is that the *shape* matches:

- Wikidata entity lines of real size (several KB on average; items with an English page
  tens of KB) made of what real lines are made of: labels/descriptions/aliases in many
  languages, claims with statement ids, hashes, qualifiers and references, many
  external ids, many sitelinks. The file layout is the dump's: ``[``, one entity per line
  ending with ``,``, ``]``; ``sitelinks`` comes after ``claims`` so the ``"enwiki"``
  pre-filter has to scan most of a line that lacks it, as in the real dump.
- About a third of the items have no English Wikipedia page (scholarly articles, taxa,
  ...), and a few properties are mixed in, so stage 1's pre-filter and parser both work.
- Names are shared: humans, works (films, albums, songs, books, TV series share one
  title pool), cities, ... draw their names from pools a few times larger than the number
  of entities of that kind, so ~15-25% of names are carried by several entities. Entities
  have the types and distinguishing properties of the bundled AmbER reference (Q5 with
  P1303/P54/P641/P413/..., Q11424 with P58/P161, Q515 with P1082, ...), and their values
  point to items (instruments with P3095 "practiced by", teams, labels, ...) that
  themselves have English pages, so stages 2-5 have real work.
- The KILT page of an item mentions most of its relation values in its first paragraph,
  followed by filler paragraphs (~6 KB a page, like KILT's 35 GB / 5.9 M pages).
- `--shape compressible` writes the same items as lines that bz2 shrinks ~39:1 (the
  realistic shape: ~7.5:1), ~8.5 KB each: the label and one description per kind in 33
  languages, repeating hashes and statement ids, no external ids. Decompression then
  costs less per MB, so parsing weighs more against it.

Everything is streamed (one entity at a time) and deterministic for a given --seed.
Every entity's name and kind is a pure function of (seed, QID), so values can point to
any other entity without keeping a table of entities in memory.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import queue
import random
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from namesake.dumps import formats

SHAPES = ("realistic", "compressible")


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entities", type=int, default=50_000, help="number of items")
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--compression",
        choices=["bz2", "gz", "plain"],
        default="bz2",
        help="of the Wikidata and page-view files (the KILT file is plain JSON lines, as KILT's)",
    )
    parser.add_argument(
        "--shape",
        choices=SHAPES,
        default="realistic",
        help="Wikidata lines: realistic (~17.6 KB, ~7.5:1 with bz2) or compressible "
        "(~8.5 KB, ~39:1: repetitive padding, see item_line)",
    )
    return parser.parse_args(argv)


# ---------------------------------------------------------------------------------------
# Deterministic per-QID randomness
# ---------------------------------------------------------------------------------------

_MASK = (1 << 64) - 1


def mix(*values: int) -> int:
    """splitmix64 over the values: a stable 64-bit hash (Python's hash() is salted)."""
    h = 0x9E3779B97F4A7C15
    for v in values:
        h = (h ^ (v & _MASK)) * 0xBF58476D1CE4E5B9 & _MASK
        h = (h ^ (h >> 31)) * 0x94D049BB133111EB & _MASK
        h ^= h >> 29
    return h


_SYLLABLES = (  # noqa: SIM905 (word lists read better as text)
    "ka ri mo lan te su vo ne da el bar tor min ges ha lo pe ru an is ol ven cor mar "
    "sel tin por gal ber fon del ros mi ka ta zu ni ber wen dor lis can ter vil mun"
).split()
_WORDS = (  # noqa: SIM905 (word lists read better as text)
    "time year people way day man thing woman life child world school state family "
    "student group country problem hand part place case week company system program "
    "question work government number night point home water room mother area money story "
    "fact month lot right study book eye job word business issue side kind head house "
    "service friend father power hour game line end member law car city community name "
    "president team minute idea kid body information back parent face others level office "
    "door health person art war history party result change morning reason research girl "
    "guy moment air teacher force education foot boy age policy music market sense nation "
    "plan college interest death experience effect use class control care field film "
    "river island valley mountain song album record season league club station church"
).split()
_LANGUAGES = (  # noqa: SIM905 (word lists read better as text)
    "en de fr es it nl pl ru ja zh pt sv uk ca ar fa vi he hu fi cs ko id tr ro no da "
    "sr bg el sk lt sl et hr eo eu gl ms hi bn ta te th ka hy az kk be lv sq mk is ga cy "
    "af sw tl la oc br lb fy an ast bs ce ckb cv gd io ia ie ilo jv kn ku ky li lmo mg ml "
    "mn mr my nds ne nn pa pms qu sa sco scn si su tg tt ur uz vec war wa yi yo zu"
).split()
_CYRILLIC = str.maketrans("abcdeghiklmnoprstuvz", "абцдегхиклмнопрстувз")
_CYRILLIC_LANGUAGES = frozenset(("ru", "uk", "bg", "sr"))


def syllable_word(n: int) -> str:
    """A distinct pronounceable word for every n >= 0 (base-len(_SYLLABLES) digits)."""
    base = len(_SYLLABLES)
    n += base  # at least two syllables
    parts = []
    while n:
        n, digit = divmod(n, base)
        parts.append(_SYLLABLES[digit])
    return "".join(parts).capitalize()


# ---------------------------------------------------------------------------------------
# Kinds of items
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Kind:
    name: str
    type_qid: int  # P31 value
    word: str  # for titles "X (film)" and descriptions
    weight: float  # share of the non-pool items
    enwiki: float  # probability of an English Wikipedia page
    name_pool: str  # which name generator


KINDS = [
    Kind("human", 5, "person", 30, 0.80, "person"),
    Kind("film", 11424, "film", 7, 0.85, "work"),
    Kind("tv series", 5398426, "TV series", 2, 0.85, "work"),
    Kind("album", 482994, "album", 5, 0.80, "work"),
    Kind("song", 7366, "song", 4, 0.80, "work"),
    Kind("band", 215380, "band", 2, 0.80, "band"),
    Kind("literary work", 7725634, "novel", 3, 0.80, "work"),
    Kind("city", 515, "city", 4, 0.90, "place"),
    Kind("company", 4830453, "company", 3, 0.75, "company"),
    Kind("scholarly article", 13442814, "scholarly article", 25, 0.0, "article"),
    Kind("taxon", 16521, "species", 15, 0.30, "taxon"),
]
_KIND_CUMULATIVE = []
_total = sum(k.weight for k in KINDS)
_acc = 0.0
for _kind in KINDS:
    _acc += _kind.weight / _total
    _KIND_CUMULATIVE.append(_acc)

# The value pool: the first QIDs are the items that relations point to.
POOL_KINDS = [
    # name, type QID, share of the pool, English names
    ("country", 6256, 0.04, None),
    ("instrument", 34379, 0.05, "guitar piano violin drums bass cello flute trumpet organ harp"),
    ("sport", 349, 0.05, "football tennis basketball cricket rugby hockey golf boxing rowing"),
    ("occupation", 28640, 0.12, None),
    ("sports team", 476028, 0.25, None),
    ("record label", 18127, 0.10, None),
    ("music genre", 188451, 0.08, None),
    ("industry", 268592, 0.05, None),
    ("position", 4611891, 0.05, "goalkeeper defender midfielder forward winger striker"),
    ("military branch", 176799, 0.05, None),
    ("conflict", 180684, 0.06, None),
    ("award", 618779, 0.10, None),
]


@dataclass
class Layout:
    """Where each kind of item lives in QID space, and the sizes of the name pools."""

    entities: int
    seed: int
    pool_size: int = 0
    pool_ranges: dict[str, range] = field(default_factory=dict)
    name_pools: dict[str, int] = field(default_factory=dict)

    def __post_init__(self):
        self.pool_size = max(300, self.entities // 40)
        start = 1
        for name, _, share, _ in POOL_KINDS:
            size = max(5, int(self.pool_size * share))
            self.pool_ranges[name] = range(start, start + size)
            start += size
        self.pool_size = start - 1
        rest = self.entities - self.pool_size
        weights = {k.name_pool: 0.0 for k in KINDS}
        for k in KINDS:
            weights[k.name_pool] += k.weight / _total
        # ~5 names per entity of a pool: ~15-20% of names end up shared (3x for places).
        factor = {"place": 2}
        for pool, weight in weights.items():
            self.name_pools[pool] = max(20, int(rest * weight * factor.get(pool, 5)))

    def kind(self, qid: int):
        """The Kind of a non-pool item, or the pool kind name of a pool item."""
        if qid <= self.pool_size:
            for name, rng in self.pool_ranges.items():
                if qid in rng:
                    return name
        u = (mix(self.seed, qid, 1) >> 11) / (1 << 53)
        for kind, edge in zip(KINDS, _KIND_CUMULATIVE, strict=True):
            if u < edge:
                return kind
        return KINDS[-1]

    def name(self, qid: int) -> str:
        """English label of any item (pure function of seed and QID)."""
        kind = self.kind(qid)
        h = mix(self.seed, qid, 2)
        if isinstance(kind, str):  # pool item
            index = qid - self.pool_ranges[kind].start
            words = next(p[3] for p in POOL_KINDS if p[0] == kind)
            if words:
                words = words.split()
                base = words[index % len(words)]
                return base if index < len(words) else f"{base} {syllable_word(index).lower()}"
            if kind == "sports team":
                return f"{syllable_word(index)} FC"
            if kind == "occupation":
                return f"{syllable_word(index).lower()}ist"
            return f"{syllable_word(index)} {kind}"
        size = self.name_pools[kind.name_pool]
        n = h % size
        if kind.name_pool == "person":
            first, last = divmod(n, max(1, size // 300))
            return f"{syllable_word(first)} {syllable_word(1000 + last)}"
        if kind.name_pool == "work":
            a, b = divmod(n, len(_WORDS))
            return f"{'The ' if h >> 40 & 3 == 0 else ''}{syllable_word(a)} {_WORDS[b]}"
        if kind.name_pool == "band":
            return f"The {syllable_word(n)}s"
        if kind.name_pool == "company":
            return f"{syllable_word(n)} {('Inc.', 'Group', 'Corporation', 'Ltd')[h >> 50 & 3]}"
        if kind.name_pool == "place":
            return syllable_word(5000 + n)
        return f"{syllable_word(n)} {syllable_word(h >> 32 & 0xFFFF).lower()}"

    def random_of(self, rng: random.Random, kind_name: str) -> int:
        """A random QID of a pool kind, or (by rejection) of a non-pool kind."""
        if kind_name in self.pool_ranges:
            return rng.choice(self.pool_ranges[kind_name])
        for _ in range(200):
            qid = rng.randint(self.pool_size + 1, self.entities)
            kind = self.kind(qid)
            if not isinstance(kind, str) and kind.name == kind_name:
                return qid
        return self.pool_size + 1


# ---------------------------------------------------------------------------------------
# Snaks, statements and references: f-strings for the few shapes this script draws, in the
# format of `namesake.dumps.formats` (tests/test_dump_formats.py checks that they write what
# its builders write). Its builders, generic (any datavalue, qualifiers, reference snaks),
# took about 40% more time per item line. All strings here are JSON-safe.
# ---------------------------------------------------------------------------------------


def hex_hash(rng: random.Random) -> str:
    return f"{rng.getrandbits(160):040x}"


def content_hash(*parts) -> str:
    """A hash that repeats wherever `parts` repeat (Wikibase's are digests of the content)."""
    return hashlib.sha1(repr(parts).encode()).hexdigest()


SHARED_STATEMENT_GUID = 0x5A0B2C9E0D1F4E3A8B7C6D5E4F3A2B1C


def datavalue(kind: str, value) -> tuple[str, str]:
    """(datavalue JSON, datatype) for a claim value."""
    if kind == "item":
        return (
            f'{{"value":{{"entity-type":"item","numeric-id":{value},"id":"Q{value}"}},'
            f'"type":"wikibase-entityid"}}',
            "wikibase-item",
        )
    if kind == "quantity":
        return (
            f'{{"value":{{"amount":"+{value}","unit":"1"}},"type":"quantity"}}',
            "quantity",
        )
    if kind == "time":
        return (
            f'{{"value":{{"time":"+{value}-00-00T00:00:00Z","timezone":0,"before":0,'
            f'"after":0,"precision":9,"calendarmodel":"{formats.GREGORIAN_CALENDAR}"}},'
            f'"type":"time"}}',
            "time",
        )
    if kind == "monolingualtext":
        return (
            f'{{"value":{{"text":"{value}","language":"en"}},"type":"monolingualtext"}}',
            "monolingualtext",
        )
    datatype = "external-id" if kind == "external-id" else "string"
    return f'{{"value":"{value}","type":"string"}}', datatype


def snak(pid: str, kind: str, value, rng: random.Random, shared: bool = False) -> str:
    """A snak; `shared`: its hash repeats for each property (else it is random)."""
    digest = content_hash(pid, kind) if shared else hex_hash(rng)
    if value is None:
        return (
            f'{{"snaktype":"{formats.SOMEVALUE}","property":"{pid}","hash":"{digest}",'
            f'"datatype":"wikibase-item"}}'
        )
    dv, datatype = datavalue(kind, value)
    return (
        f'{{"snaktype":"value","property":"{pid}","hash":"{digest}",'
        f'"datavalue":{dv},"datatype":"{datatype}"}}'
    )


def references(rng: random.Random, shared: bool = False) -> str:
    """0-2 references, each 'stated in' an item and 'retrieved' on a date, as most are.

    `shared`: drawn from a few common ones (as "imported from English Wikipedia", which
    millions of statements carry with the same hash) instead of unique ones.
    """
    refs = []
    for _ in range(rng.choice((0, 0, 1, 1, 2))):
        source = rng.choice((328, 8447, 206855)) if shared else rng.randint(1, 60_000_000)
        stated = snak("P248", "item", source, rng, shared)
        retrieved = snak("P813", "time", 2019 if shared else rng.randint(2012, 2024), rng, shared)
        digest = content_hash(stated, retrieved) if shared else hex_hash(rng)
        refs.append(
            f'{{"hash":"{digest}","snaks":{{"P248":[{stated}],"P813":[{retrieved}]}},'
            f'"snaks-order":["P248","P813"]}}'
        )
    return f',"references":[{",".join(refs)}]' if refs else ""


def statement(qid: int, pid: str, kind: str, value, rng: random.Random, shared=False) -> str:
    """A statement; `shared`: with repeating hashes and a fixed statement id (random GUIDs
    and hashes would keep a dump from compressing 40:1)."""
    qualifiers = ""
    if rng.random() < 0.2:
        start = snak("P580", "time", rng.randint(1900, 2020), rng, shared)
        qualifiers = f'"qualifiers":{{"P580":[{start}]}},"qualifiers-order":["P580"],'
    mainsnak = snak(pid, kind, value, rng, shared)
    guid = formats.statement_id(
        f"Q{qid}", SHARED_STATEMENT_GUID if shared else rng.getrandbits(128)
    )
    return (
        f'{{"mainsnak":{mainsnak},"type":"statement",{qualifiers}'
        f'"id":"{guid}","rank":"normal"{references(rng, shared)}}}'
    )


# External ids / strings that real items carry in bulk (authority control and the like).
_EXTERNAL_IDS = (  # noqa: SIM905 (word lists read better as text)
    "P214 P227 P244 P213 P269 P268 P1006 P646 P2163 P7859 P345 P1015 P1207 P1741 P2671 "
    "P3417 P4823 P5034 P6366 P691 P7293 P8189 P950 P906 P409 P1368 P1695 P3348 P7902 "
    "P10832 P2949 P1417 P3222 P3365 P4342 P5361 P6058 P8408 P9037 P2002 P2003 P2013 P434"
).split()


# ---------------------------------------------------------------------------------------
# One item
# ---------------------------------------------------------------------------------------


@dataclass
class Item:
    qid: int
    type_qid: int
    word: str
    label: str | None
    aliases: list[str]
    enwiki: str | None
    relations: list[tuple[str, str, object]]  # (pid, value kind, value)
    filler: list[tuple[str, str, object]]
    languages: int
    sitelinks: int
    pool_extra: list[tuple[str, str, object]] = field(default_factory=list)


def make_item(layout: Layout, qid: int) -> Item:
    """Draws an item's content; the relations are those the AmbER stages read."""
    rng = random.Random(mix(layout.seed, qid, 3))
    kind = layout.kind(qid)
    label = layout.name(qid)
    relations: list[tuple[str, str, object]] = []
    aliases: list[str] = []
    if isinstance(kind, str):  # pool item: always has an English page
        type_qid = next(p[1] for p in POOL_KINDS if p[0] == kind)
        word, has_page = kind, True
        if kind in ("instrument", "sport"):
            relations.append(("P3095", "item", layout.random_of(rng, "occupation")))
        if kind == "sports team":
            relations.append(("P641", "item", layout.random_of(rng, "sport")))
        filler_claims = rng.randint(5, 20)
    else:
        type_qid, word = kind.type_qid, kind.word
        has_page = rng.random() < kind.enwiki
        relations = kind_relations(layout, kind.name, rng)
        filler_claims = rng.randint(5, 25) if has_page else rng.randint(1, 6)
        if kind.name == "human" and rng.random() < 0.3:
            first, last = label.split(" ", 1)
            aliases.append(f"{first[0]}. {last}")
    if rng.random() < 0.03:  # a few items lack an English label
        label = None
    filler = []
    for pid in rng.sample(_EXTERNAL_IDS, min(len(_EXTERNAL_IDS), filler_claims)):
        filler.append((pid, "external-id", f"{rng.getrandbits(40):010d}"))
    if not isinstance(kind, str) and kind.name == "scholarly article":
        for _ in range(rng.randint(2, 12)):  # cites work: articles are long lists of items
            filler.append(("P2860", "item", rng.randint(1, 60_000_000)))
        for i in range(rng.randint(1, 5)):
            filler.append(("P2093", "string", f"{syllable_word(i + qid % 997)} {_WORDS[i]}"))
    return Item(
        qid=qid,
        type_qid=type_qid,
        word=word,
        label=label,
        aliases=aliases,
        enwiki=f"{label} ({word} {qid})" if has_page and label else None,
        relations=relations,
        filler=filler,
        languages=rng.randint(10, 80) if has_page else rng.randint(1, 8),
        sitelinks=rng.randint(3, 40) if has_page else 0,
    )


def kind_relations(layout: Layout, kind: str, rng: random.Random) -> list:
    """Relations by kind, with the distinguishing properties of the AmbER reference."""
    r: list[tuple[str, str, object]] = []
    pick = layout.random_of
    if kind == "human":
        r.append(("P21", "item", 6581097))
        r.append(("P27", "item", pick(rng, "country")))
        r.append(("P569", "time", rng.randint(1850, 2005)))
        role = rng.random()
        if role < 0.25:  # musician
            r.append(("P106", "item", pick(rng, "occupation")))
            for _ in range(rng.randint(1, 3)):
                r.append(("P1303", "item", pick(rng, "instrument")))
            r.append(("P264", "item", pick(rng, "record label")))
        elif role < 0.5:  # footballer
            r.append(("P106", "item", pick(rng, "occupation")))
            r.append(("P641", "item", pick(rng, "sport")))
            for _ in range(rng.randint(1, 6)):
                r.append(("P54", "item", pick(rng, "sports team")))
            r.append(("P413", "item", pick(rng, "position")))
        elif role < 0.62:  # athlete
            r.append(("P641", "item", pick(rng, "sport")))
        elif role < 0.72:  # soldier
            r.append(("P241", "item", pick(rng, "military branch")))
            r.append(("P607", "item", pick(rng, "conflict")))
        elif role < 0.82:  # writer
            r.append(("P135", "item", pick(rng, "music genre")))
            r.append(("P166", "item", pick(rng, "award")))
        else:
            r.append(("P106", "item", pick(rng, "occupation")))
            if rng.random() < 0.1:
                r.append(("P157", None, None))  # killed by: somevalue
    elif kind in ("film", "tv series"):
        r.append(("P495", "item", pick(rng, "country")))
        r.append(("P57", "item", pick(rng, "human")))
        for _ in range(rng.randint(1, 3)):
            r.append(("P58", "item", pick(rng, "human")))
        for _ in range(rng.randint(2, 10)):
            r.append(("P161", "item", pick(rng, "human")))
        r.append(("P577", "time", rng.randint(1920, 2023)))
        if kind == "film":
            r.append(("P2047", "quantity", rng.randint(60, 200)))
        else:
            r.append(("P2437", "quantity", rng.randint(1, 15)))
    elif kind in ("album", "song"):
        performer = pick(rng, "band") if rng.random() < 0.5 else pick(rng, "human")
        r.append(("P175", "item", performer))
        r.append(("P264", "item", pick(rng, "record label")))
        r.append(("P136", "item", pick(rng, "music genre")))
        if kind == "album":
            for _ in range(rng.randint(0, 8)):
                r.append(("P658", "item", pick(rng, "song")))
    elif kind == "band":
        r.append(("P264", "item", pick(rng, "record label")))
        r.append(("P136", "item", pick(rng, "music genre")))
    elif kind == "literary work":
        r.append(("P50", "item", pick(rng, "human")))
        r.append(("P577", "time", rng.randint(1700, 2023)))
    elif kind == "city":
        r.append(("P17", "item", pick(rng, "country")))
        r.append(("P1082", "quantity", int(10 ** rng.uniform(3, 7))))
    elif kind == "company":
        r.append(("P452", "item", pick(rng, "industry")))
        r.append(("P17", "item", pick(rng, "country")))
    elif kind == "scholarly article":
        r.append(("P577", "time", rng.randint(1950, 2023)))
        r.append(("P1476", "monolingualtext", f"On the {_WORDS[rng.randrange(len(_WORDS))]}"))
    return r


COMPRESSIBLE_LANGUAGES = 33  # lines of ~8.5 KB, ~39:1 with bz2 -9


def item_line(layout: Layout, item: Item, compressible: bool = False) -> bytes:
    """The item as one line of the dump (without the trailing comma).

    `compressible`: the shape of a dump that bz2 shrinks ~40:1 (lines of ~8.5 KB): the
    label in COMPRESSIBLE_LANGUAGES languages and the same per-kind description in each
    (as bots write them), repeating hashes and statement ids, common references, and no
    external ids (random numbers); the claims the pipeline reads are the same.
    """
    rng = random.Random(mix(layout.seed, item.qid, 4))
    languages = _LANGUAGES[: COMPRESSIBLE_LANGUAGES if compressible else item.languages]
    labels, descriptions = {}, {}
    if item.label:
        cyrillic = item.label.lower().translate(_CYRILLIC)
        labels = {
            lang: cyrillic if lang in _CYRILLIC_LANGUAGES else item.label for lang in languages
        }
        for lang in languages if compressible else languages[: max(1, len(languages) // 3)]:
            words = "" if compressible else " " + " ".join(rng.choices(_WORDS, k=rng.randint(2, 6)))
            descriptions[lang] = f"{item.word}{words}"
    claims = {"P31": [statement(item.qid, "P31", "item", item.type_qid, rng, compressible)]}
    for pid, kind, value in item.relations + ([] if compressible else item.filler):
        claims.setdefault(pid, []).append(statement(item.qid, pid, kind, value, rng, compressible))
    titles = {"enwiki": item.enwiki} if item.enwiki else {}
    for lang in _LANGUAGES[1 : item.sitelinks]:
        titles[f"{lang}wiki"] = item.label or str(item.qid)  # (the number: as it always was)
    entity = formats.item(
        f"Q{item.qid}",
        labels=labels,
        descriptions=descriptions,
        aliases={"en": item.aliases} if item.aliases else None,
        claims=claims,
        titles=titles,
        pageid=item.qid + 100,
        ns=0,
        title=f"Q{item.qid}",
        lastrevid=rng.randint(10**8, 2 * 10**9),
        modified=f"2024-01-0{rng.randint(1, 9)}T00:00:00Z",
    )
    return entity.encode()


_PROPERTY_LABELS = {
    "P17": "country", "P19": "place of birth", "P21": "sex or gender",
    "P27": "country of citizenship",
    "P31": "instance of", "P50": "author", "P54": "member of sports team", "P57": "director",
    "P58": "screenwriter", "P106": "occupation", "P135": "movement", "P136": "genre",
    "P157": "killed by", "P161": "cast member", "P166": "award received", "P175": "performer",
    "P185": "doctoral student", "P241": "military branch", "P248": "stated in",
    "P264": "record label", "P413": "position played on team / speciality", "P452": "industry",
    "P495": "country of origin", "P569": "date of birth", "P577": "publication date",
    "P580": "start time", "P607": "conflict", "P641": "sport", "P658": "tracklist",
    "P813": "retrieved", "P1082": "population", "P1303": "instrument", "P1441": "present in work",
    "P1476": "title", "P1535": "used by", "P2047": "duration", "P2093": "author name string",
    "P2437": "number of seasons", "P2860": "cites work", "P3095": "practiced by",
}  # fmt: skip


def property_line(pid: str, label: str) -> bytes:
    labels = {"en": label, "de": label}
    entity = formats.property_entity(
        pid, "wikibase-item", labels, lastrevid=1, modified="2024-01-01T00:00:00Z"
    )
    return entity.encode()


# ---------------------------------------------------------------------------------------
# Page views and KILT
# ---------------------------------------------------------------------------------------


def pageview_lines(layout: Layout, item: Item) -> bytes:
    """pagecounts-ez lines: the item's page (90% are viewed) and some unrelated pages."""
    rng = random.Random(mix(layout.seed, item.qid, 5))
    lines = []
    if item.enwiki and rng.random() < 0.9:
        views = max(1, int(10 ** rng.gauss(2.3, 1.1)))
        lines.append(formats.pagecounts_line(item.enwiki, views))
    if rng.random() < 0.5:  # pages without a Wikidata item here (redirects, talk pages)
        lines.append(formats.pagecounts_line(f"Talk:{syllable_word(item.qid)}", rng.randint(1, 50)))
    if rng.random() < 0.3:
        lines.append(formats.pagecounts_line(syllable_word(item.qid), rng.randint(1, 500), "de.z"))
    return "".join(line + "\n" for line in lines).encode()


def kilt_line(layout: Layout, item: Item) -> bytes | None:
    """A KILT page whose lead mentions most relation values; filler paragraphs after."""
    if not item.enwiki or not item.label:
        return None
    rng = random.Random(mix(layout.seed, item.qid, 6))
    if rng.random() < 0.05:  # some pages are missing from KILT
        return None
    mentions = [
        layout.name(value) if kind == "item" else str(value)
        for _, kind, value in item.relations
        if kind in ("item", "quantity") and rng.random() < 0.75
    ]
    lead = f"{item.label} is a {item.word}. " + " ".join(
        f"It is associated with {m}." for m in mentions
    )
    paragraphs = [
        " ".join(rng.choices(_WORDS, k=rng.randint(40, 160))) + "."
        for _ in range(rng.randint(3, 10))
    ]
    page = formats.kilt_page(
        item.qid * 3,
        item.enwiki,
        [lead, *paragraphs],
        history={"pageid": item.qid * 3, "revid": rng.randint(10**8, 10**9)},
        anchors=[formats.kilt_anchor(1, 0, len(m), m, m) for m in mentions[:5]],
        categories=f"{item.word}s",
        wikidata_info=formats.kilt_wikidata_info(f"Q{item.qid}", item.label),
    )
    return formats.kilt_line(page).encode() + b"\n"


# ---------------------------------------------------------------------------------------
# Streaming writers
# ---------------------------------------------------------------------------------------


class Writer:
    """Compresses in a background thread (bz2/zlib release the GIL): the generator and
    the compressor then use both cores."""

    def __init__(self, path: Path, level: int = 9):
        self.file = formats.open_compressed(path, level)  # compressed by its suffix
        self.queue: queue.Queue = queue.Queue(maxsize=16)
        self.pending: list[bytes] = []
        self.pending_bytes = 0
        self.written = 0
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while (chunk := self.queue.get()) is not None:
            self.file.write(chunk)

    def write(self, data: bytes):
        self.pending.append(data)
        self.pending_bytes += len(data)
        self.written += len(data)
        if self.pending_bytes >= 4 << 20:
            self.queue.put(b"".join(self.pending))
            self.pending, self.pending_bytes = [], 0

    def close(self):
        self.queue.put(b"".join(self.pending))
        self.queue.put(None)
        self.thread.join()
        self.file.close()


def dump_paths(out: Path, compression: str) -> dict[str, Path]:
    suffix = {"bz2": ".bz2", "gz": ".gz", "plain": ""}[compression]
    return {
        "wikidata": out / f"wikidata.json{suffix}",
        "pageviews": out / f"pagecounts-ez-totals{suffix}",
        "kilt": out / "kilt_knowledgesource.json",
        "meta": out / "meta.json",
    }


def generate(
    entities: int, out: Path, seed: int = 0, compression: str = "bz2", shape: str = "realistic"
) -> dict:
    """Writes the three dumps and a meta.json with counts and sizes; returns the meta."""
    out.mkdir(parents=True, exist_ok=True)
    paths = dump_paths(out, compression)
    layout = Layout(entities, seed)
    started = time.perf_counter()
    level = 6 if compression == "gz" else 9  # gzip at its default level, bz2 at its best
    wikidata = Writer(paths["wikidata"], level)
    pageviews = Writer(paths["pageviews"], level)
    kilt = Writer(paths["kilt"])
    for project, title, views in (("aa.z", "Main_Page", 12), ("de.z", "Berlin", 5000)):
        pageviews.write(formats.pagecounts_line(title, views, project).encode() + b"\n")
    counts = {"items": 0, "items with enwiki": 0, "properties": 0, "kilt pages": 0}
    wikidata.write(formats.WIKIDATA_OPEN)
    separator = b""
    for pid, label in sorted(_PROPERTY_LABELS.items(), key=lambda p: int(p[0][1:])):
        wikidata.write(separator + property_line(pid, label))
        separator = formats.WIKIDATA_SEPARATOR
        counts["properties"] += 1
    for qid in range(1, entities + 1):
        item = make_item(layout, qid)
        wikidata.write(separator + item_line(layout, item, shape == "compressible"))
        pageviews.write(pageview_lines(layout, item))
        page = kilt_line(layout, item)
        if page:
            kilt.write(page)
            counts["kilt pages"] += 1
        counts["items"] += 1
        counts["items with enwiki"] += item.enwiki is not None
    wikidata.write(formats.WIKIDATA_CLOSE)
    for writer in (wikidata, pageviews, kilt):
        writer.close()
    meta = {
        "entities": entities,
        "seed": seed,
        "compression": compression,
        "shape": shape,
        "counts": counts,
        "wikidata_bytes": wikidata.written,
        "wikidata_compressed_bytes": paths["wikidata"].stat().st_size,
        "pageviews_bytes": pageviews.written,
        "kilt_bytes": kilt.written,
        "mean_entity_line_bytes": wikidata.written / max(1, entities),
        "seconds": round(time.perf_counter() - started, 1),
    }
    paths["meta"].write_text(json.dumps(meta, indent=2) + "\n")
    return meta


def main(argv=None) -> None:
    args = parse_args(argv)
    meta = generate(args.entities, Path(args.out), args.seed, args.compression, args.shape)
    print(json.dumps(meta, indent=2))


if __name__ == "__main__":
    main()
