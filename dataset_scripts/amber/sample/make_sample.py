#!/usr/bin/env python3
"""Write the hand-made AmbER dump sample that lives next to this script.

The sample is *not* real dump content.  It is a small, hand-designed set of
entities, page-view counts and Wikipedia pages, written to look like the real
dump formats and to exercise every rule of the AmbER pipeline (see README.md in
this folder for the list of names and the outcome each one is meant to have).

Files written (next to this script):

* ``wikidata-sample-all.json.bz2``            Wikidata JSON dump ("[", one entity per line, "]")
* ``pagecounts-sample-views-ge-5-totals.bz2``  2019 pagecounts-ez monthly totals
* ``pageviews-sample-user.gz``                 pageviews-complete monthly (user agent) format
* ``kilt_knowledgesource-sample.json``         KILT knowledge source (JSON lines)

The formats are written by ``namesake.dumps.formats``, as the test fixtures and the
benchmark dumps are; this script holds only the sample's content.  The output is
deterministic: running the script twice produces byte-identical files (gzip mtime is 0).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import msgspec

from namesake.dumps import formats

HERE = Path(__file__).resolve().parent

# ---------------------------------------------------------------------------
# Properties: id -> (English label, datatype).  Labels are the real English
# Wikidata labels.
# ---------------------------------------------------------------------------
PROPERTIES = {
    "P31": ("instance of", "wikibase-item"),
    "P21": ("sex or gender", "wikibase-item"),
    "P27": ("country of citizenship", "wikibase-item"),
    "P19": ("place of birth", "wikibase-item"),
    "P26": ("spouse", "wikibase-item"),
    "P106": ("occupation", "wikibase-item"),
    "P57": ("director", "wikibase-item"),
    "P1303": ("instrument", "wikibase-item"),
    "P241": ("military branch", "wikibase-item"),
    "P641": ("sport", "wikibase-item"),
    "P157": ("killed by", "wikibase-item"),
    "P607": ("conflict", "wikibase-item"),
    "P185": ("doctoral student", "wikibase-item"),
    "P1441": ("present in work", "wikibase-item"),
    "P54": ("member of sports team", "wikibase-item"),
    "P135": ("movement", "wikibase-item"),
    "P413": ("position played on team / speciality", "wikibase-item"),
    "P264": ("record label", "wikibase-item"),
    "P658": ("tracklist", "wikibase-item"),
    "P175": ("performer", "wikibase-item"),
    "P50": ("author", "wikibase-item"),
    "P2437": ("number of seasons", "quantity"),
    "P161": ("cast member", "wikibase-item"),
    "P58": ("screenwriter", "wikibase-item"),
    "P1082": ("population", "quantity"),
    "P452": ("industry", "wikibase-item"),
    "P3095": ("practiced by", "wikibase-item"),
    "P1535": ("used by", "wikibase-item"),
    "P2044": ("elevation above sea level", "quantity"),
    "P2048": ("height", "quantity"),
    "P569": ("date of birth", "time"),
    "P577": ("publication date", "time"),
    "P580": ("start time", "time"),
    "P18": ("image", "commonsMedia"),
    "P214": ("VIAF ID", "external-id"),
    "P625": ("coordinate location", "globe-coordinate"),
    "P856": ("official website", "url"),
    "P1476": ("title", "monolingualtext"),
}

# ---------------------------------------------------------------------------
# Claim value notation.  A claim is written as (PID, value); a plain "Q..."
# string is an item value, the tuples below are the other snak kinds.
# ---------------------------------------------------------------------------


def qty(amount: str, unit: str | None = None, bounds: bool = False):
    return ("quantity", amount, unit, bounds)


def time(value: str, precision: int = 11):
    return ("time", value, precision)


def string(value: str):
    return ("string", value)


def coord(lat: float, lon: float):
    return ("coord", lat, lon)


def mono(text: str, lang: str = "en"):
    return ("mono", text, lang)


SOMEVALUE = (formats.SOMEVALUE,)
NOVALUE = (formats.NOVALUE,)
VALUE_WRITERS = {
    "quantity": formats.quantity_value,
    "time": formats.time_value,
    "string": formats.string_value,
    "coord": formats.globe_value,
    "mono": formats.monolingual_value,
}


def snak(pid: str, value) -> str:
    datatype = PROPERTIES[pid][1]
    if isinstance(value, str):
        return formats.snak(pid, datatype, formats.item_value(value))
    if value in (SOMEVALUE, NOVALUE):
        return formats.snak(pid, datatype, value[0])
    kind, *arguments = value
    return formats.snak(pid, datatype, VALUE_WRITERS[kind](*arguments))


def statement(qid: str, n: int, pid: str, value, qualifier=None) -> str:
    """The entity's n-th claim, with its qualifier (pid, value) if any."""
    guid = formats.statement_id(qid, int(hashlib.md5(f"{qid}|{pid}|{n}".encode()).hexdigest(), 16))
    if qualifier is None:
        return formats.statement(guid, snak(pid, value))
    written = msgspec.json.decode(
        formats.statement(guid, snak(pid, value), {qualifier[0]: [snak(*qualifier)]})
    )
    # The committed sample has the qualifiers after the rank (the dump writes them before the
    # id); kept there, so that a re-run reproduces the files byte for byte.
    for key in ("qualifiers", "qualifiers-order"):
        written[key] = written.pop(key)
    return msgspec.json.encode(written).decode()


# ---------------------------------------------------------------------------
# Entities.  QIDs written without a comment are real Wikidata identifiers as
# far as the author knows (not verified offline).  QIDs in the Q9000000xx
# range are placeholders made up for this sample.
# ---------------------------------------------------------------------------
ENTITIES: list[dict] = []
VIEWS: dict[str, int] = {}  # enwiki title (with spaces) -> monthly views


def item(
    qid,
    label,
    description,
    *,
    aliases=(),
    claims=(),
    enwiki=None,
    views=None,
    other_labels=None,
    other_sitelinks=None,
    qualifiers=None,
):
    if enwiki is not None and views is not None:
        VIEWS[enwiki] = views
    statements: dict[str, list[str]] = {}
    for n, (pid, value) in enumerate(claims):
        qualifier = (qualifiers or {}).get((pid, value))
        statements.setdefault(pid, []).append(statement(qid, n, pid, value, qualifier))
    entity = formats.item(
        qid,
        labels={**({"en": label} if label is not None else {}), **(other_labels or {})},
        descriptions={"en": description} if description else None,
        aliases={"en": aliases} if aliases else None,
        claims=statements,
        titles={**({"enwiki": enwiki} if enwiki is not None else {}), **(other_sitelinks or {})},
        lastrevid=1_000_000_000 + int(hashlib.md5(qid.encode()).hexdigest()[:6], 16),
    )
    ENTITIES.append(msgspec.json.decode(entity))  # decoded: the KILT pages read its texts


HUMAN = ("P31", "Q5")
MALE = ("P21", "Q6581097")
FEMALE = ("P21", "Q6581072")
FILM, ALBUM, SONG, CITY = ("P31", "Q11424"), ("P31", "Q482994"), ("P31", "Q7366"), ("P31", "Q515")
BUSINESS, TV, LITWORK = ("P31", "Q4830453"), ("P31", "Q5398426"), ("P31", "Q7725634")
WRITTEN, GROUP = ("P31", "Q47461344"), ("P31", "Q215380")

# --- a few class items (enwiki sitelink but no page views -> not entities) --
item(
    "Q5",
    "human",
    "any member of Homo sapiens",
    aliases=["person", "people"],
    enwiki="Human",
    other_labels={"fr": "être humain"},
    other_sitelinks={"frwiki": "Être humain"},
)
item(
    "Q11424",
    "film",
    "sequence of images that give the impression of movement",
    aliases=["movie"],
    enwiki="Film",
)
item("Q515", "city", "large permanent human settlement", aliases=["town"], enwiki="City")

# --- Abe Lincoln ----------------------------------------------------------
item(
    "Q91",
    "Abraham Lincoln",
    "16th president of the United States",
    aliases=["Abe Lincoln", "Honest Abe", "President Lincoln"],
    claims=[
        HUMAN,
        MALE,
        ("P607", "Q8676"),
        ("P157", "Q900000001"),
        ("P19", "Q900000090"),
        ("P569", time("+1809-02-12T00:00:00Z")),
        ("P18", string("Abraham Lincoln O-77 matte collodion print.jpg")),
        ("P214", string("31432428")),
        ("P2048", qty("+1.93", "Q11573")),
    ],
    enwiki="Abraham Lincoln",
    views=5_200_000,
    other_labels={"fr": "Abraham Lincoln", "de": "Abraham Lincoln"},
    other_sitelinks={"frwiki": "Abraham Lincoln", "dewiki": "Abraham Lincoln"},
)
item(
    "Q4666410",
    "Abe Lincoln",
    "American jazz trombonist (1907-2000)",
    claims=[HUMAN, MALE, ("P1303", "Q8333"), ("P106", "Q900000003")],
    enwiki="Abe Lincoln (musician)",
    views=3_100,
)
item(
    "Q8676",
    "American Civil War",
    "civil war in the United States from 1861 to 1865",
    aliases=["Civil War", "War Between the States"],
    enwiki="American Civil War",
    views=1_900_000,
)
item(
    "Q900000001",
    "John Wilkes Booth",
    "American actor, assassin of Abraham Lincoln",
    claims=[HUMAN, MALE],
    enwiki="John Wilkes Booth",
    views=420_000,
)
item(
    "Q8333",
    "trombone",
    "musical instrument in the brass family",
    claims=[("P1535", "Q900000003"), ("P1535", "Q900000004")],
    enwiki="Trombone",
    views=95_000,
)
item(
    "Q900000003", "trombonist", "musician who plays the trombone", enwiki="Trombonist", views=2_400
)
item(
    "Q900000004",
    "brass band",
    "musical ensemble of brass and percussion instruments",
    enwiki="Brass band",
    views=21_000,
)

# --- Napoleon ---------------------------------------------------------------
item(
    "Q517",
    "Napoleon",
    "French military leader and emperor (1769-1821)",
    aliases=["Napoleon Bonaparte", "Napoléon Bonaparte", "Napoleon I", "Bonaparte"],
    claims=[
        HUMAN,
        MALE,
        ("P607", "Q900000005"),
        ("P241", "Q900000006"),
        ("P27", "Q142"),
        ("P569", time("+1769-08-15T00:00:00Z")),
    ],
    enwiki="Napoleon",
    views=3_000_000,
    other_labels={"fr": "Napoléon Ier"},
    other_sitelinks={"frwiki": "Napoléon Ier"},
)
item(
    "Q7721",
    "Napoleon III",
    "Emperor of the French from 1852 to 1870",
    aliases=["Napoleon", "Louis-Napoléon Bonaparte", "Louis Napoleon"],
    claims=[HUMAN, MALE, ("P1441", "Q900000007"), ("P27", "Q142")],
    enwiki="Napoleon III",
    views=630_000,
    other_labels={"fr": "Napoléon III"},
    other_sitelinks={"frwiki": "Napoléon III"},
)
item(
    "Q900000008",
    "Napoleon",
    "1927 silent film by Abel Gance",
    aliases=["Napoléon"],
    claims=[FILM, ("P58", "Q900000009"), ("P577", time("+1927-04-07T00:00:00Z"))],
    enwiki="Napoleon (1927 film)",
    views=900_000,
)
item(
    "Q900000009",
    "Abel Gance",
    "French film director (1889-1981)",
    claims=[HUMAN, MALE],
    enwiki="Abel Gance",
    views=30_000,
)
item(
    "Q900000005",
    "Napoleonic Wars",
    "series of wars fought between 1803 and 1815",
    enwiki="Napoleonic Wars",
    views=600_000,
)
item(
    "Q900000006",
    "French Army",
    "land warfare branch of the French Armed Forces",
    enwiki="French Army",
    views=120_000,
    other_labels={"fr": "Armée de terre"},
)
item(
    "Q900000007",
    "Napoléon le Petit",
    "1852 political pamphlet by Victor Hugo",
    claims=[WRITTEN],
    enwiki="Napoléon le Petit",
    views=4_000,
)

# --- Michael Jordan / Jordan ------------------------------------------------
item(
    "Q810",
    "Jordan",
    "country in Western Asia",
    aliases=["Hashemite Kingdom of Jordan"],
    claims=[("P31", "Q6256"), ("P1082", qty("+10203140")), ("P625", coord(31.0, 36.0))],
    enwiki="Jordan",
    views=3_500_000,
)
item(
    "Q41421",
    "Michael Jordan",
    "American basketball player and businessman",
    aliases=["MJ", "Air Jordan", "Jordan", "His Airness"],
    claims=[
        HUMAN,
        MALE,
        ("P641", "Q5372"),
        ("P54", "Q900000010"),
        ("P413", "Q900000011"),
        ("P2048", qty("+1.98", "Q11573")),
        ("P569", time("+1963-02-17T00:00:00Z")),
    ],
    qualifiers={("P54", "Q900000010"): ("P580", time("+1984-00-00T00:00:00Z", 9))},
    enwiki="Michael Jordan",
    views=2_000_000,
)
item(
    "Q900000012",
    "Michael I. Jordan",
    "American computer scientist, professor at UC Berkeley",
    aliases=["Michael Jordan", "Michael Irwin Jordan"],
    claims=[HUMAN, MALE, ("P185", "Q900000013")],
    enwiki="Michael I. Jordan",
    views=30_000,
)
item(
    "Q900000014",
    "Michael Jordan",
    "English association football goalkeeper (born 1986)",
    claims=[HUMAN, MALE, ("P54", "Q900000015"), ("P413", "Q900000016")],
    enwiki="Michael Jordan (footballer)",
    views=900,
)
item(
    "Q900000017",
    "Katie Price",
    "English media personality and model",
    aliases=["Jordan", "Katrina Amy Alexandria Alexis Infield"],
    claims=[HUMAN, FEMALE, ("P1303", "Q17172850")],
    enwiki="Katie Price",
    views=400_000,
)
item(
    "Q5372",
    "basketball",
    "team sport played on a court with baskets on either end",
    claims=[("P3095", "Q900000018")],
    enwiki="Basketball",
    views=310_000,
)
item(
    "Q900000018",
    "basketball player",
    "person who plays basketball",
    enwiki="Basketball player",
    views=5_500,
)
item(
    "Q900000010",
    "Chicago Bulls",
    "American professional basketball team",
    enwiki="Chicago Bulls",
    views=350_000,
)
item("Q900000011", "shooting guard", "basketball position", enwiki="Shooting guard", views=25_000)
item(
    "Q900000013",
    "Andrew Ng",
    "American computer scientist",
    claims=[HUMAN, MALE],
    enwiki="Andrew Ng",
    views=80_000,
)
item(
    "Q900000015",
    "Chesterfield F.C.",
    "association football club in Chesterfield, England",
    enwiki="Chesterfield F.C.",
    views=30_000,
)
item(
    "Q900000016",
    "goalkeeper",
    "position in association football",
    enwiki="Goalkeeper (association football)",
    views=40_000,
)
item(
    "Q17172850", "voice", "musical instrument: the human voice", enwiki="Human voice", views=60_000
)

# --- Edge / Sting ----------------------------------------------------------
item(
    "Q900000019",
    "Edge",
    "Canadian professional wrestler and actor",
    aliases=["Adam Copeland"],
    claims=[HUMAN, MALE, ("P641", "Q131359")],
    enwiki="Edge (wrestler)",
    views=800_000,
)
item(
    "Q900000020",
    "The Edge",
    "Irish musician, guitarist of U2",
    aliases=["Edge", "David Howell Evans", "Dave Evans"],
    claims=[HUMAN, MALE, ("P1303", "Q6607")],
    enwiki="The Edge",
    views=120_000,
)
item(
    "Q900000021",
    "Edge",
    "British video game magazine",
    claims=[("P31", "Q900000091")],
    enwiki="Edge (magazine)",
    other_labels={"de": "Edge"},
    other_sitelinks={"dewiki": "Edge (Zeitschrift)"},
)
item(
    "Q483203",
    "Sting",
    "English musician, singer and actor",
    aliases=["Gordon Sumner", "Gordon Matthew Thomas Sumner"],
    claims=[HUMAN, MALE, ("P1303", "Q46185"), ("P1303", "Q17172850")],
    enwiki="Sting (musician)",
    views=900_000,
)
item(
    "Q900000022",
    "Sting",
    "American professional wrestler",
    aliases=["Steve Borden"],
    claims=[HUMAN, MALE, ("P641", "Q131359")],
    enwiki="Sting (wrestler)",
    views=150_000,
)
item(
    "Q131359",
    "professional wrestling",
    "form of performance art and entertainment",
    enwiki="Professional wrestling",
    views=260_000,
)
item(
    "Q6607",
    "guitar",
    "fretted string instrument",
    claims=[("P3095", "Q900000023")],
    enwiki="Guitar",
    views=150_000,
)
item("Q900000023", "guitarist", "person who plays the guitar", enwiki="Guitarist", views=9_000)
item(
    "Q46185",
    "bass guitar",
    "stringed instrument played primarily with the fingers or thumb",
    aliases=["electric bass"],
    claims=[("P3095", "Q900000024"), ("P1535", "Q900000025")],
    enwiki="Bass guitar",
    views=85_000,
)
item("Q900000024", "bassist", "musician who plays a bass instrument", enwiki="Bassist", views=7_000)
item("Q900000025", "band", "group of musicians", enwiki="Musical ensemble", views=12_000)

# --- Michael Collins --------------------------------------------------------
item(
    "Q900000026",
    "Michael Collins",
    "Irish revolutionary leader (1890-1922)",
    aliases=["The Big Fellow", "Mícheál Ó Coileáin"],
    claims=[HUMAN, MALE, ("P607", "Q900000027"), ("P157", SOMEVALUE), ("P26", NOVALUE)],
    enwiki="Michael Collins (Irish leader)",
    views=350_000,
    other_labels={"ga": "Mícheál Ó Coileáin"},
    other_sitelinks={"gawiki": "Mícheál Ó Coileáin"},
)
item(
    "Q900000028",
    "Michael Collins",
    "American astronaut (1930-2021)",
    claims=[HUMAN, MALE, ("P241", "Q900000029")],
    enwiki="Michael Collins (astronaut)",
    views=60_000,
)
item(
    "Q900000027",
    "Irish War of Independence",
    "guerrilla war in Ireland from 1919 to 1921",
    enwiki="Irish War of Independence",
    views=90_000,
)
item(
    "Q900000029",
    "United States Air Force",
    "air service branch of the United States Armed Forces",
    aliases=["USAF", "U.S. Air Force"],
    enwiki="United States Air Force",
    views=300_000,
)

# --- Tom Jones -------------------------------------------------------------
item(
    "Q900000030",
    "Tom Jones",
    "Welsh singer",
    aliases=["Thomas John Woodward", "Sir Tom Jones"],
    claims=[HUMAN, MALE, ("P1303", "Q17172850")],
    enwiki="Tom Jones (singer)",
    views=1_200_000,
)
item(
    "Q900000031",
    "Tom Jones",
    "Welsh association football player (born 1964)",
    claims=[HUMAN, MALE, ("P641", "Q2736"), ("P54", "Q900000032")],
    enwiki="Tom Jones (footballer, born 1964)",
    views=5_000,
)
item(
    "Q900000033",
    "The History of Tom Jones, a Foundling",
    "1749 novel by Henry Fielding",
    aliases=["Tom Jones"],
    claims=[
        WRITTEN,
        ("P50", "Q900000034"),
        ("P1476", mono("The History of Tom Jones, a Foundling")),
    ],
    enwiki="The History of Tom Jones, a Foundling",
    views=90_000,
)
item(
    "Q900000035",
    "Tom Jones",
    "1963 film by Tony Richardson",
    claims=[FILM, ("P58", "Q900000036"), ("P161", "Q900000037"), ("P57", "Q900000092")],
    enwiki="Tom Jones (1963 film)",
    views=12_000,
)
item(
    "Q2736",
    "association football",
    "team sport played with a spherical ball",
    aliases=["soccer", "football"],
    enwiki="Association football",
    views=400_000,
)
item(
    "Q900000032",
    "Swindon Town F.C.",
    "association football club in Swindon, England",
    enwiki="Swindon Town F.C.",
    views=40_000,
)
item(
    "Q900000034",
    "Henry Fielding",
    "English novelist and dramatist (1707-1754)",
    claims=[HUMAN, MALE],
    enwiki="Henry Fielding",
    views=45_000,
)
item(
    "Q900000036",
    "John Osborne",
    "English playwright (1929-1994)",
    claims=[HUMAN, MALE],
    enwiki="John Osborne",
    views=35_000,
)
item(
    "Q900000037",
    "Albert Finney",
    "English actor (1936-2019)",
    claims=[HUMAN, MALE],
    enwiki="Albert Finney",
    views=110_000,
)

# --- John Williams (gap just below 10 %) ------------------------------------
item(
    "Q131285",
    "John Williams",
    "American composer and conductor",
    aliases=["John Towner Williams"],
    claims=[HUMAN, MALE, ("P1303", "Q5994")],
    enwiki="John Williams",
    views=1_000_000,
)
item(
    "Q900000038",
    "John Williams",
    "Australian classical guitarist",
    aliases=["John Christopher Williams"],
    claims=[HUMAN, MALE, ("P1303", "Q6607")],
    enwiki="John Williams (guitarist)",
    views=304_000,
)
item("Q5994", "piano", "keyboard musical instrument", enwiki="Piano", views=180_000)

# --- Ronaldo (every PID shared) ---------------------------------------------
item(
    "Q11571",
    "Cristiano Ronaldo",
    "Portuguese association football player",
    aliases=["Ronaldo", "CR7", "Cristiano Ronaldo dos Santos Aveiro"],
    claims=[HUMAN, MALE, ("P641", "Q2736"), ("P54", "Q900000039"), ("P413", "Q900000040")],
    enwiki="Cristiano Ronaldo",
    views=4_000_000,
)
item(
    "Q529207",
    "Ronaldo",
    "Brazilian association football player",
    aliases=["Ronaldo Nazário", "Ronaldo Luís Nazário de Lima", "R9"],
    claims=[HUMAN, MALE, ("P641", "Q2736"), ("P54", "Q900000039"), ("P413", "Q900000040")],
    enwiki="Ronaldo (Brazilian footballer)",
    views=700_000,
)
item(
    "Q900000039",
    "Real Madrid CF",
    "association football club in Madrid, Spain",
    aliases=["Real Madrid"],
    enwiki="Real Madrid CF",
    views=500_000,
)
item(
    "Q900000040",
    "forward",
    "position in association football",
    enwiki="Forward (association football)",
    views=20_000,
)

# --- Yoko Ono (second entity has no KILT page) ------------------------------
item(
    "Q117012",
    "Yoko Ono",
    "Japanese multimedia artist, singer and peace activist",
    aliases=["Yoko Ono Lennon", "Ono Yōko"],
    claims=[HUMAN, FEMALE, ("P135", "Q900000041"), ("P26", "Q1203")],
    enwiki="Yoko Ono",
    views=500_000,
    other_labels={"ja": "オノ・ヨーコ"},
    other_sitelinks={"jawiki": "オノ・ヨーコ"},
)
item(
    "Q900000042",
    "Yoko Ono",
    "Japanese volleyball player",
    claims=[HUMAN, FEMALE, ("P641", "Q900000043")],
    enwiki="Yoko Ono (volleyball)",
    views=2_000,
)
item("Q900000041", "Fluxus", "international community of artists", enwiki="Fluxus", views=25_000)
item(
    "Q900000043",
    "volleyball",
    "team sport played with a ball over a net",
    enwiki="Volleyball",
    views=150_000,
)

# --- John Nash ----------------------------------------------------------------
item(
    "Q900000044",
    "John Forbes Nash Jr.",
    "American mathematician (1928-2015)",
    aliases=["John Nash", "John F. Nash"],
    claims=[HUMAN, MALE, ("P1441", "Q900000045")],
    enwiki="John Forbes Nash Jr.",
    views=400_000,
)
item(
    "Q900000046",
    "John Nash",
    "English architect (1752-1835)",
    claims=[HUMAN, MALE, ("P135", "Q900000047")],
    enwiki="John Nash (architect)",
    views=40_000,
)
item(
    "Q900000045",
    "A Beautiful Mind",
    "2001 film by Ron Howard",
    claims=[FILM],
    enwiki="A Beautiful Mind (film)",
    views=200_000,
)
item(
    "Q900000047",
    "Neoclassicism",
    "Western cultural movement of the 18th and 19th centuries",
    enwiki="Neoclassicism",
    views=70_000,
)

# --- Apple --------------------------------------------------------------------
item(
    "Q312",
    "Apple Inc.",
    "American multinational technology company",
    aliases=["Apple", "Apple Computer, Inc.", "AAPL"],
    claims=[
        BUSINESS,
        ("P31", "Q891723"),
        ("P452", "Q900000048"),
        ("P452", "Q900000049"),
        ("P856", string("https://www.apple.com/")),
    ],
    enwiki="Apple Inc.",
    views=2_000_000,
)
item(
    "Q89",
    "apple",
    "fruit of the apple tree",
    aliases=["apples"],
    claims=[("P31", "Q900000093")],
    enwiki="Apple",
    views=700_000,
)
item(
    "Q213710",
    "Apple Records",
    "British record label founded by the Beatles",
    aliases=["Apple"],
    claims=[("P31", "Q18127")],
    enwiki="Apple Records",
    views=150_000,
)
item(
    "Q900000050",
    "Apple",
    "1990 album by Mother Love Bone",
    claims=[
        ALBUM,
        ("P175", "Q900000051"),
        ("P264", "Q900000052"),
        ("P264", "Q900000053"),
        ("P577", time("+1990-07-19T00:00:00Z")),
    ],
    enwiki="Apple (album)",
    views=30_000,
)
item(
    "Q900000048",
    "consumer electronics",
    "electronic equipment intended for everyday use",
    enwiki="Consumer electronics",
    views=60_000,
)
item(
    "Q900000049",
    "software industry",
    "businesses for development, maintenance and publication of software",
    enwiki="Software industry",
    views=15_000,
)
item(
    "Q900000051",
    "Mother Love Bone",
    "American rock band",
    claims=[GROUP],
    enwiki="Mother Love Bone",
    views=50_000,
)
item("Q900000052", "Stardog Records", "American record label", enwiki="Stardog Records")  # no views
item(
    "Q900000053", "Mercury Records", "American record label", enwiki="Mercury Records", views=45_000
)

# --- Chicago ------------------------------------------------------------------
item(
    "Q1297",
    "Chicago",
    "city in Illinois, United States",
    aliases=["Chicago, Illinois", "Windy City", "Chi-Town"],
    claims=[
        CITY,
        ("P1082", qty("+2746388")),
        ("P625", coord(41.881944, -87.627778)),
        ("P2044", qty("+181", "Q11573")),
    ],
    enwiki="Chicago",
    views=2_000_000,
)
item(
    "Q900000054",
    "Chicago",
    "2002 film directed by Rob Marshall",
    claims=[
        FILM,
        ("P58", "Q900000055"),
        ("P161", "Q900000056"),
        ("P161", "Q900000057"),
        ("P161", "Q900000058"),
        ("P161", "Q900000059"),
    ],
    enwiki="Chicago (2002 film)",
    views=300_000,
)
item(
    "Q900000060",
    "Chicago",
    "American rock band",
    aliases=["Chicago Transit Authority"],
    claims=[GROUP, ("P264", "Q900000061")],
    enwiki="Chicago (band)",
    views=250_000,
)
item(
    "Q900000062",
    "Chicago",
    "1927 American silent film",
    claims=[FILM, ("P58", "Q900000055")],
    other_labels={"fr": "Chicago"},
    other_sitelinks={"frwiki": "Chicago (film, 1927)"},
)  # no enwiki
item(
    "Q900000055",
    "Bill Condon",
    "American screenwriter and director",
    claims=[HUMAN, MALE],
    enwiki="Bill Condon",
    views=20_000,
)
item(
    "Q900000056",
    "Renée Zellweger",
    "American actress",
    claims=[HUMAN, FEMALE],
    enwiki="Renée Zellweger",
    views=600_000,
)
item(
    "Q900000057",
    "Catherine Zeta-Jones",
    "Welsh actress",
    claims=[HUMAN, FEMALE],
    enwiki="Catherine Zeta-Jones",
    views=500_000,
)
item(
    "Q900000058",
    "Richard Gere",
    "American actor",
    claims=[HUMAN, MALE],
    enwiki="Richard Gere",
    views=400_000,
)
item(
    "Q900000059",
    None,
    "American actor",  # English label deliberately absent
    claims=[HUMAN, MALE],
    enwiki="Taye Diggs",
    views=90_000,
    other_labels={"de": "Taye Diggs", "fr": "Taye Diggs"},
)
item(
    "Q900000061",
    "Columbia Records",
    "American record label",
    enwiki="Columbia Records",
    views=70_000,
)

# --- Dune (tie for the head) --------------------------------------------------
item(
    "Q900000063",
    "Dune",
    "science fiction media franchise",
    aliases=["Dune franchise"],
    claims=[("P31", "Q196600")],
    enwiki="Dune (franchise)",
    views=700_000,
)
item(
    "Q190192",
    "Dune",
    "1965 science fiction novel by Frank Herbert",
    claims=[
        LITWORK,
        ("P31", "Q8261"),
        ("P50", "Q900000064"),
        ("P577", time("+1965-08-01T00:00:00Z", 10)),
    ],
    enwiki="Dune (novel)",
    views=700_000,
)
item(
    "Q900000065",
    "Dune",
    "1984 film directed by David Lynch",
    claims=[FILM, ("P58", "Q900000066"), ("P161", "Q900000067"), ("P161", "Q483203")],
    enwiki="Dune (1984 film)",
    views=120_000,
)
item(
    "Q900000068",
    "Dune",
    "2021 film directed by Denis Villeneuve",
    aliases=["Dune: Part One"],
    claims=[FILM, ("P161", "Q900000069")],
    enwiki="Dune (2021 film)",
)  # no views
item(
    "Q900000064",
    "Frank Herbert",
    "American science fiction author (1920-1986)",
    claims=[HUMAN, MALE],
    enwiki="Frank Herbert",
    views=150_000,
)
item(
    "Q900000066",
    "David Lynch",
    "American filmmaker",
    claims=[HUMAN, MALE],
    enwiki="David Lynch",
    views=350_000,
)
item(
    "Q900000067",
    "Kyle MacLachlan",
    "American actor",
    claims=[HUMAN, MALE],
    enwiki="Kyle MacLachlan",
    views=200_000,
)
item(
    "Q900000069",
    "Timothée Chalamet",
    "American actor",
    claims=[HUMAN, MALE],
    enwiki="Timothée Chalamet",
    views=900_000,
)

# --- Her ----------------------------------------------------------------------
item(
    "Q900000070",
    "Her",
    "2013 film by Spike Jonze",
    claims=[FILM, ("P58", "Q900000071"), ("P161", "Q900000072"), ("P161", "Q900000073")],
    enwiki="Her (film)",
    views=500_000,
)
item(
    "Q900000074",
    "Her",
    "2016 single by Marlowe Station",
    claims=[SONG, ("P175", "Q900000075"), ("P264", "Q900000061")],
    enwiki="Her (Marlowe Station song)",
    views=40_000,
)
item(
    "Q900000071",
    "Spike Jonze",
    "American filmmaker",
    claims=[HUMAN, MALE],
    enwiki="Spike Jonze",
    views=120_000,
)
item(
    "Q900000072",
    "Joaquin Phoenix",
    "American actor",
    claims=[HUMAN, MALE],
    enwiki="Joaquin Phoenix",
    views=1_500_000,
)
item(
    "Q900000073",
    "Scarlett Johansson",
    "American actress",
    claims=[HUMAN, FEMALE],
    enwiki="Scarlett Johansson",
    views=1_400_000,
)
item(
    "Q900000075",
    "Marlowe Station",
    "English indie rock band",
    claims=[GROUP],
    enwiki="Marlowe Station",
    views=3_000,
)

# --- Frozen -------------------------------------------------------------------
item(
    "Q246283",
    "Frozen",
    "2013 animated film produced by Walt Disney Animation Studios",
    claims=[FILM, ("P58", "Q900000076"), ("P161", "Q900000077"), ("P161", "Q900000078")],
    enwiki="Frozen (2013 film)",
    views=1_500_000,
)
item(
    "Q900000079",
    "Frozen",
    "1998 single by Madonna",
    claims=[SONG, ("P175", "Q1744"), ("P264", "Q900000080"), ("P264", "Q900000081")],
    enwiki="Frozen (Madonna song)",
    views=80_000,
)
item(
    "Q900000076",
    "Jennifer Lee",
    "American filmmaker and screenwriter",
    claims=[HUMAN, FEMALE],
    enwiki="Jennifer Lee (filmmaker)",
    views=60_000,
)
item(
    "Q900000077",
    "Kristen Bell",
    "American actress",
    claims=[HUMAN, FEMALE],
    enwiki="Kristen Bell",
    views=700_000,
)
item(
    "Q900000078",
    "Idina Menzel",
    "American actress and singer",
    claims=[HUMAN, FEMALE],
    enwiki="Idina Menzel",
    views=350_000,
)
item(
    "Q1744",
    "Madonna",
    "American singer-songwriter",
    aliases=["Madonna Louise Ciccone"],
    claims=[HUMAN, FEMALE],
    enwiki="Madonna",
    views=1_800_000,
)
item(
    "Q900000080",
    "Maverick Records",
    "American record label",
    enwiki="Maverick Records",
    views=15_000,
)
item(
    "Q900000081",
    "Warner Bros. Records",
    "American record label",
    aliases=["Warner Records"],
    enwiki="Warner Records",
    views=55_000,
)

# --- Help! --------------------------------------------------------------------
item(
    "Q900000082",
    "Help!",
    "1965 album by the Beatles",
    claims=[
        ALBUM,
        ("P175", "Q1299"),
        ("P264", "Q900000083"),
        ("P658", "Q900000084"),
        ("P658", "Q900000085"),
    ],
    enwiki="Help! (album)",
    views=200_000,
)
item(
    "Q900000086",
    "Help!",
    "1965 film directed by Richard Lester",
    claims=[
        FILM,
        ("P58", "Q900000087"),
        ("P58", "Q900000088"),
        ("P161", "Q1203"),
        ("P161", "Q2599"),
        ("P161", "Q2643"),
        ("P161", "Q2632"),
    ],
    enwiki="Help! (film)",
    views=40_000,
)
item(
    "Q1299",
    "The Beatles",
    "English rock band",
    aliases=["the Fab Four"],
    claims=[GROUP],
    enwiki="The Beatles",
    views=1_300_000,
)
item("Q900000083", "Parlophone", "British record label", enwiki="Parlophone", views=25_000)
item(
    "Q900000084",
    "Ticket to Ride",
    "1965 single by the Beatles",
    claims=[SONG],
    enwiki="Ticket to Ride",
    views=45_000,
)
item(
    "Q900000085",
    "Yesterday",
    "1965 song by the Beatles",
    claims=[SONG],
    enwiki="Yesterday (Beatles song)",
    views=110_000,
)
item(
    "Q900000087",
    "Marc Behm",
    "American screenwriter (1925-2007)",
    claims=[HUMAN, MALE],
    enwiki="Marc Behm",
    views=3_500,
)
item(
    "Q900000088",
    "Charles Wood",
    "English playwright and screenwriter (1932-2010)",
    claims=[HUMAN, MALE],
)  # no sitelinks at all
item(
    "Q1203",
    "John Lennon",
    "English musician, member of the Beatles",
    claims=[HUMAN, MALE],
    enwiki="John Lennon",
    views=1_600_000,
)
item(
    "Q2599",
    "Paul McCartney",
    "English musician, member of the Beatles",
    claims=[HUMAN, MALE],
    enwiki="Paul McCartney",
    views=1_200_000,
)
item(
    "Q2643",
    "George Harrison",
    "English musician, member of the Beatles",
    claims=[HUMAN, MALE],
    enwiki="George Harrison",
    views=900_000,
)
item(
    "Q2632",
    "Ringo Starr",
    "English musician, drummer of the Beatles",
    claims=[HUMAN, MALE],
    enwiki="Ringo Starr",
    views=800_000,
)

# --- Paris (head loses all its relations) -------------------------------------
item(
    "Q90",
    "Paris",
    "capital of France",
    aliases=["City of Light"],
    claims=[CITY, ("P1082", qty("+2165423", bounds=True)), ("P625", coord(48.856667, 2.352222))],
    enwiki="Paris",
    views=2_500_000,
    other_labels={"fr": "Paris"},
    other_sitelinks={"frwiki": "Paris"},
)
item(
    "Q900000089",
    "Paris",
    "city in Lamar County, Texas, United States",
    aliases=["Paris, Texas"],
    claims=[CITY, ("P1082", qty("+24476"))],
    enwiki="Paris, Texas",
    views=50_000,
)
item(
    "Q900000094",
    "Paris",
    "2008 film by Cédric Klapisch",
    claims=[FILM, ("P58", "Q900000095")],
    enwiki="Paris (2008 film)",
    views=20_000,
)
item(
    "Q900000096",
    "Paris",
    "2006 album by Paris Hilton",
    claims=[ALBUM, ("P175", "Q900000097"), ("P264", "Q900000081")],
    enwiki="Paris (Paris Hilton album)",
    views=15_000,
)
item(
    "Q900000095",
    "Cédric Klapisch",
    "French film director and screenwriter",
    claims=[HUMAN, MALE],
    enwiki="Cédric Klapisch",
    views=8_000,
)
item(
    "Q900000097",
    "Paris Hilton",
    "American media personality",
    claims=[HUMAN, FEMALE],
    enwiki="Paris Hilton",
    views=900_000,
)

# --- Amsterdam ----------------------------------------------------------------
item(
    "Q727",
    "Amsterdam",
    "capital and largest city of the Netherlands",
    claims=[CITY, ("P1082", qty("+921402")), ("P2044", qty("-2", "Q11573"))],
    enwiki="Amsterdam",
    views=1_200_000,
    other_labels={"nl": "Amsterdam"},
    other_sitelinks={"nlwiki": "Amsterdam"},
)
item(
    "Q900000098",
    "Amsterdam",
    "1998 novel by Ian McEwan",
    claims=[LITWORK, ("P50", "Q900000099")],
    enwiki="Amsterdam (novel)",
    views=25_000,
)
item(
    "Q900000100",
    "Amsterdam",
    "2022 film by David O. Russell",
    claims=[FILM, ("P58", "Q900000101"), ("P161", "Q900000102")],
    enwiki="Amsterdam (2022 film)",
    views=150_000,
)
item(
    "Q900000099",
    "Ian McEwan",
    "English novelist",
    claims=[HUMAN, MALE],
    enwiki="Ian McEwan",
    views=70_000,
)
item(
    "Q900000101",
    "David O. Russell",
    "American filmmaker",
    claims=[HUMAN, MALE],
    enwiki="David O. Russell",
    views=60_000,
)
item(
    "Q900000102",
    "Christian Bale",
    "English actor",
    claims=[HUMAN, MALE],
    enwiki="Christian Bale",
    views=1_100_000,
)

# --- Fargo --------------------------------------------------------------------
item(
    "Q900000103",
    "Fargo",
    "American television anthology series",
    claims=[TV, ("P2437", qty("+5")), ("P161", "Q900000104"), ("P58", "Q900000105")],
    enwiki="Fargo (TV series)",
    views=2_000_000,
)
item(
    "Q900000106",
    "Fargo",
    "1996 film by Joel and Ethan Coen",
    claims=[FILM, ("P58", "Q900000107"), ("P58", "Q900000108"), ("P161", "Q900000109")],
    enwiki="Fargo (1996 film)",
    views=250_000,
)
item(
    "Q900000110",
    "Fargo",
    "city in North Dakota, United States",
    aliases=["Fargo, North Dakota"],
    claims=[CITY, ("P1082", qty("+125990"))],
    enwiki="Fargo, North Dakota",
    views=300_000,
)
item(
    "Q900000104",
    "Billy Bob Thornton",
    "American actor",
    claims=[HUMAN, MALE],
    enwiki="Billy Bob Thornton",
    views=300_000,
)
item(
    "Q900000105",
    "Noah Hawley",
    "American author and showrunner",
    claims=[HUMAN, MALE],
    enwiki="Noah Hawley",
    views=40_000,
)
item(
    "Q900000107",
    "Joel Coen",
    "American filmmaker",
    claims=[HUMAN, MALE],
    enwiki="Joel Coen",
    views=90_000,
)
item(
    "Q900000108",
    "Ethan Coen",
    "American filmmaker",
    claims=[HUMAN, MALE],
    enwiki="Ethan Coen",
    views=60_000,
)
item(
    "Q900000109",
    "Frances McDormand",
    "American actress",
    claims=[HUMAN, FEMALE],
    enwiki="Frances McDormand",
    views=500_000,
)


# ---------------------------------------------------------------------------
# Page views.  Same totals in both formats; plus noise lines that must be
# ignored (other projects / wikis, malformed lines).
# ---------------------------------------------------------------------------
OTHER_PROJECT_VIEWS = [  # (pagecounts-ez project, pageviews-complete domain, title, views)
    ("de.z", "de.wikipedia", "Napoleon_Bonaparte", 150_000),
    ("de.z", "de.wikipedia", "Edge_(magazine)", 2_000),
    ("fr.z", "fr.wikipedia", "Paris", 900_000),
    ("fr.z", "fr.wikipedia", "Chicago_(film,_1927)", 700),
    ("en.b", "en.wiktionary", "Edge_(magazine)", 30),
    ("en.b", "en.wiktionary", "Dune_(2021_film)", 12),
    ("en.d", "en.wiktionary", "apple", 9_000),
    ("en.v", "commons.wikimedia", "Stardog_Records", 40),
    ("en.q", "commons.wikimedia", "Abraham_Lincoln", 6_000),
]
MALFORMED_PAGECOUNTS = [
    "en.z Broken_line_without_count",
    "en.z Dune_(2021_film) many",
    "en.z Charles_Wood 12 extra",
    "en.z",
]


def split_access(title: str, total: int) -> list[tuple[str, int]]:
    """Split a title's total over 2 or 3 access methods (deterministically)."""
    if int(hashlib.md5(title.encode()).hexdigest(), 16) % 3 == 0:
        desktop = total * 55 // 100
        return [("desktop", desktop), ("mobile-web", total - desktop)]
    desktop = total * 45 // 100
    web = total * 45 // 100
    return [("desktop", desktop), ("mobile-app", total - desktop - web), ("mobile-web", web)]


def daily(count: int) -> str:
    """The month's views spread over its first two days ("A12B3")."""
    first = count // 2
    return formats.daily_counts([first, count - first] if first else [count])


# ---------------------------------------------------------------------------
# KILT knowledge source pages: (wikipedia_id, title, QID or None, paragraphs).
# The first paragraph is the title, as in KILT.
# ---------------------------------------------------------------------------
NAPOLEON_LONG = [
    "Napoleon Bonaparte (born Napoleone Buonaparte; 15 August 1769 – 5 May 1821), later known by his "
    "regnal name Napoleon I, was a French military officer and statesman who rose to prominence during "
    "the French Revolution and led a series of successful campaigns across Europe during the "
    "Revolutionary Wars and the Napoleonic Wars. He was the leader of the French Republic as First "
    "Consul from 1799 to 1804, then of the French Empire as Emperor of the French from 1804 until 1814, "
    "and briefly again in 1815.",
    "Section::::Early life.",
    "Napoleon was born in Ajaccio, on the island of Corsica, shortly after its annexation by the Kingdom "
    "of France. His family belonged to the minor Corsican nobility. He was sent to a religious school in "
    "Autun and then to the military academy at Brienne-le-Château, where he studied mathematics, history "
    "and geography. He graduated from the École Militaire in 1785 and was commissioned as a second "
    "lieutenant of artillery.",
    "Section::::Rise to power.",
    "During the Revolution he supported the Jacobins and gained notice at the siege of Toulon in 1793, "
    "where his handling of the artillery helped drive the British fleet from the harbour. In 1795 he "
    "dispersed a royalist uprising in the capital, and in the following year he was given command of the "
    "campaign in Italy, where a string of victories over the Austrians made him a national hero. An "
    "expedition to Egypt and Syria followed in 1798. On his return he took part in the coup of 18 "
    "Brumaire, which established the Consulate with Napoleon as First Consul.",
    "Section::::Empire.",
    "Napoleon crowned himself Emperor in the cathedral of Notre-Dame in December 1804. The Napoleonic "
    "Code, a unified civil law, was introduced in the same year and later adopted in much of Europe. His "
    "victories at Austerlitz, Jena and Friedland brought most of the continent under French control or "
    "influence, but the Peninsular War in Spain and the disastrous invasion of Russia in 1812 exhausted "
    "his resources.",
    "Section::::Fall and exile.",
    "After his defeat at Leipzig in 1813 the coalition armies invaded France, and Napoleon abdicated in "
    "April 1814. He was exiled to the island of Elba, escaped in February 1815 and returned to power for "
    "the Hundred Days, which ended with his defeat at Waterloo. He spent his final years as a prisoner of "
    "the British on the remote island of Saint Helena in the South Atlantic, where he died in 1821.",
    "Section::::Legacy.",
    "Historians continue to debate his reputation. He is remembered as one of the greatest military "
    "commanders in history, and his campaigns are still studied at military academies around the world. "
    "His legal and administrative reforms, including a centralised state administration, the spread of "
    "the metric system and a merit-based system of secondary education, long outlived his empire. Critics "
    "point to the enormous human cost of his wars, the restoration of slavery in the colonies in 1802 and "
    "his authoritarian style of government.",
    "Section::::Military organisation.",
    "Napoleon reorganised the French Army into self-contained corps, each with its own infantry, cavalry "
    "and artillery, which allowed it to march dispersed and to concentrate rapidly before a battle. He "
    "also expanded the use of massed artillery and created the Imperial Guard as an elite reserve.",
]

PAGES = [
    (
        307,
        "Abraham Lincoln",
        "Q91",
        [
            "Abraham Lincoln (February 12, 1809 – April 15, 1865) was an American lawyer and statesman who "
            "served as the 16th president of the United States from 1861 until his assassination in 1865. "
            "Lincoln led the nation through the American Civil War, preserved the Union and issued the "
            "Emancipation Proclamation.",
            "Born in a log cabin in Kentucky, Lincoln was largely self-educated. He became a lawyer in "
            "Illinois, served in the state legislature and in the House of Representatives, and rose to "
            "national prominence during his debates with Stephen A. Douglas in 1858.",
            "Section::::Assassination.",
            "On April 14, 1865, five days after the surrender of the main Confederate army at Appomattox, "
            "Lincoln was shot at Ford's Theatre in Washington, D.C. by the actor John Wilkes Booth. He died "
            "the following morning.",
        ],
    ),
    (
        3412877,
        "Abe Lincoln (musician)",
        "Q4666410",
        [
            "Abe Lincoln (March 29, 1907 – June 8, 2000) was an American jazz trombonist who spent most of "
            "his career in Los Angeles. He played trombone in the dance bands of the 1920s and 1930s before "
            "becoming a studio musician, and later recorded with several Dixieland revival groups.",
        ],
    ),
    (69880, "Napoleon", "Q517", NAPOLEON_LONG),
    (
        5528174,
        "Early life of Napoleon",
        "Q517",
        [
            "The early life of Napoleon covers the first twenty years of Napoleon Bonaparte, from his birth "
            "in Ajaccio in 1769 to the outbreak of the French Revolution. His experiences as a young Corsican "
            "officer shaped the commander who would later dominate Europe during the Napoleonic Wars.",
        ],
    ),
    (
        21416,
        "Napoleon III",
        "Q7721",
        [
            "Napoleon III (Charles-Louis Napoléon Bonaparte; 20 April 1808 – 9 January 1873) was the first "
            "president of France from 1848 to 1852 and the last monarch of France, ruling as Emperor of the "
            "French from 1852 until his overthrow in 1870. A nephew of Napoleon I, he modernised the French "
            "economy and oversaw the rebuilding of Paris by Baron Haussmann.",
            "The exiled writer Victor Hugo attacked him in the pamphlet Napoléon le Petit (1852), which "
            "portrayed him as a petty usurper of his uncle's legacy.",
        ],
    ),
    (
        20455,
        "Michael Jordan",
        "Q41421",
        [
            "Michael Jeffrey Jordan (born February 17, 1963), also known by his initials MJ, is an American "
            "businessman and former professional basketball player. He played fifteen seasons in the National "
            "Basketball Association, winning six championships with the Chicago Bulls, and is widely regarded "
            "as one of the greatest players of all time.",
            "Jordan played as a shooting guard and was known for his scoring, his defence and his leaping "
            'ability, which earned him the nickname "Air Jordan".',
        ],
    ),
    (
        1017587,
        "Michael I. Jordan",
        "Q900000012",
        [
            "Michael Irwin Jordan (born February 25, 1956) is an American scientist, professor at the "
            "University of California, Berkeley, and researcher in machine learning, statistics and artificial "
            "intelligence. He is known for his work on graphical models, variational inference and Bayesian "
            "nonparametrics. His former doctoral students include the computer scientist Andrew Ng.",
        ],
    ),
    (
        22894551,
        "Michael Jordan (footballer)",
        "Q900000014",
        [
            "Michael William Jordan (born 7 April 1986) is an English former footballer who played as a "
            "goalkeeper. He came through the youth system at Arsenal and later played for Chesterfield F.C. "
            "in League Two before moving into non-League football.",
        ],
    ),
    (
        456091,
        "Katie Price",
        "Q900000017",
        [
            "Katrina Amy Alexandria Alexis Infield (born 22 May 1978), known professionally as Katie Price and "
            "formerly by the pseudonym Jordan, is an English media personality, model and businesswoman. She "
            "has also recorded music, lending her voice to several pop singles and a duet album with Peter "
            "Andre.",
        ],
    ),
    (
        350170,
        "Edge (wrestler)",
        "Q900000019",
        [
            "Adam Copeland (born October 30, 1973), better known by the ring name Edge, is a Canadian "
            "professional wrestler and actor. A record-setting tag team champion, he won numerous world "
            "championships in WWE and is considered one of the most successful performers in the history of "
            "professional wrestling.",
        ],
    ),
    (
        149426,
        "The Edge",
        "Q900000020",
        [
            "David Howell Evans (born 8 August 1961), better known by his stage name the Edge, is a "
            "British-born Irish musician and songwriter, best known as the lead guitarist and keyboardist of "
            "the rock band U2. His guitar playing is characterised by chiming timbres, echoed notes and the "
            "extensive use of effects units.",
        ],
    ),
    (
        28211,
        "Sting (musician)",
        "Q483203",
        [
            "Gordon Matthew Thomas Sumner (born 2 October 1951), known as Sting, is an English musician, "
            "singer and songwriter. He was the principal songwriter, lead singer and bass guitar player of the "
            "new wave band the Police before launching a solo career.",
            "Known for his distinctive tenor voice, he has also worked as an actor, appearing in Quadrophenia "
            "and Dune.",
        ],
    ),
    (
        312487,
        "Sting (wrestler)",
        "Q900000022",
        [
            "Steve Borden (born March 20, 1959), better known by the ring name Sting, is an American retired "
            "professional wrestler. He is best known for his long tenure with World Championship Wrestling, "
            "where his dark, face-painted persona made him one of the most popular figures in professional "
            "wrestling.",
        ],
    ),
    (
        19982,
        "Michael Collins (Irish leader)",
        "Q900000026",
        [
            "Michael Collins (16 October 1890 – 22 August 1922) was an Irish revolutionary, soldier and "
            "politician who was a leading figure in the early twentieth-century struggle for Irish "
            "independence. He was Director of Intelligence of the IRA during the Irish War of Independence and "
            "led the negotiation of the Anglo-Irish Treaty.",
            "Collins was killed in an ambush at Béal na Bláth during the Irish Civil War.",
        ],
    ),
    (
        20235,
        "Michael Collins (astronaut)",
        "Q900000028",
        [
            "Michael Collins (October 31, 1930 – April 28, 2021) was an American astronaut and test pilot who "
            "flew the command module Columbia around the Moon during Apollo 11 in 1969. Before joining NASA "
            "he served as an experimental flight test officer in the United States Air Force, and he retired "
            "from the Air Force Reserve as a major general.",
        ],
    ),
    (
        180913,
        "Tom Jones (singer)",
        "Q900000030",
        [
            "Sir Thomas John Woodward (born 7 June 1940), known professionally as Tom Jones, is a Welsh "
            "singer. His career began with a string of top-ten hits in the mid-1960s, including \"It's Not "
            'Unusual", and he has since sold over 100 million records. He is known for his powerful, '
            "full-throated baritone voice and his energetic live performances.",
        ],
    ),
    (
        11840221,
        "Tom Jones (footballer, born 1964)",
        "Q900000031",
        [
            "Thomas Jones (born 7 October 1964) is a Welsh former professional footballer who played "
            "association football as a midfielder. He made over 150 league appearances for Swindon Town F.C. "
            "and later played for Reading.",
        ],
    ),
    (
        187795,
        "Cristiano Ronaldo",
        "Q11571",
        [
            "Cristiano Ronaldo dos Santos Aveiro (born 5 February 1985) is a Portuguese professional "
            "footballer who plays as a forward. He has won five Ballon d'Or awards and is the all-time top "
            "scorer in the UEFA Champions League, having played for Manchester United and Real Madrid.",
        ],
    ),
    (
        2148371,
        "Ronaldo (Brazilian footballer)",
        "Q529207",
        [
            "Ronaldo Luís Nazário de Lima (born 18 September 1976), commonly known as Ronaldo, is a Brazilian "
            "former professional footballer who played as a striker. He won two FIFA World Cups with Brazil "
            "and played for Barcelona, Inter Milan and Real Madrid.",
        ],
    ),
    (
        34296,
        "Yoko Ono",
        "Q117012",
        [
            "Yoko Ono (born February 18, 1933) is a Japanese multimedia artist, singer, songwriter and peace "
            "activist. Her early work in performance art and conceptual art brought her into contact with the "
            "Fluxus movement in New York in the early 1960s. She married John Lennon in 1969.",
        ],
    ),
    (
        45223,
        "John Forbes Nash Jr.",
        "Q900000044",
        [
            "John Forbes Nash Jr. (June 13, 1928 – May 23, 2015) was an American mathematician who made "
            "fundamental contributions to game theory, differential geometry and the study of partial "
            "differential equations. He shared the 1994 Nobel Memorial Prize in Economic Sciences.",
            "His life and his struggle with schizophrenia were depicted in the 2001 film A Beautiful Mind.",
        ],
    ),
    (
        198770,
        "John Nash (architect)",
        "Q900000046",
        [
            "John Nash (18 January 1752 – 13 May 1835) was a British architect responsible for much of the "
            "layout of Regency London. Working in the manner of Neoclassicism and the Picturesque, he designed "
            "Regent Street, Regent's Park and its terraces, and remodelled Buckingham Palace.",
        ],
    ),
    (
        856,
        "Apple Inc.",
        "Q312",
        [
            "Apple Inc. is an American multinational technology company headquartered in Cupertino, "
            "California. Founded in 1976 by Steve Jobs, Steve Wozniak and Ronald Wayne, it is one of the "
            "largest companies in the consumer electronics and software industry, best known for the iPhone, "
            "the Mac and the iPad.",
        ],
    ),
    (
        2364907,
        "Apple (album)",
        "Q900000050",
        [
            "Apple is the only studio album by the American rock band Mother Love Bone, released in July 1990 "
            "by Stardog and Mercury Records. Singer Andrew Wood died shortly before the album's release, and "
            "the band broke up soon afterwards.",
        ],
    ),
    (
        6886,
        "Chicago",
        "Q1297",
        [
            "Chicago is the most populous city in the U.S. state of Illinois and the third most populous city "
            "in the United States. With a population of 2,746,388 at the 2020 census, it lies on the "
            "southwestern shore of Lake Michigan.",
            "Section::::History.",
            "The city grew rapidly in the mid-nineteenth century as a hub of railways and shipping, and was "
            "rebuilt after the Great Chicago Fire of 1871.",
        ],
    ),
    (
        376813,
        "Chicago (2002 film)",
        "Q900000054",
        [
            "Chicago is a 2002 American musical crime comedy-drama film directed by Rob Marshall from a "
            "screenplay by Bill Condon, based on the stage musical of the same name. It stars Renée Zellweger, "
            "Catherine Zeta-Jones and Richard Gere, with Queen Latifah, John C. Reilly and Taye Diggs in "
            "supporting roles. The film won six Academy Awards, including Best Picture.",
        ],
    ),
    (
        6870,
        "Chicago (band)",
        "Q900000060",
        [
            "Chicago is an American rock band formed in Chicago in 1967. Known for combining rock with a horn "
            "section, the band released its early albums on Columbia Records and became one of the "
            'best-selling groups of all time, with hits such as "25 or 6 to 4" and "If You Leave Me Now".',
        ],
    ),
    (
        8966941,
        "Dune (novel)",
        "Q190192",
        [
            "Dune is a 1965 epic science fiction novel by American author Frank Herbert, originally published "
            "as two separate serials in Analog magazine. It tied with Roger Zelazny's This Immortal for the "
            "Hugo Award in 1966 and won the inaugural Nebula Award for Best Novel.",
        ],
    ),
    (
        142000,
        "Dune (1984 film)",
        "Q900000065",
        [
            "Dune is a 1984 American epic science fiction film written and directed by David Lynch, based on "
            "the 1965 novel by Frank Herbert. The film stars Kyle MacLachlan as the young nobleman Paul "
            "Atreides, with Sting, Francesca Annis and Sean Young among the ensemble cast.",
        ],
    ),
    (
        38445487,
        "Her (film)",
        "Q900000070",
        [
            "Her is a 2013 American science fiction romantic drama film written, directed and co-produced by "
            "Spike Jonze. It follows Theodore Twombly (Joaquin Phoenix), a man who develops a relationship "
            "with Samantha, an artificially intelligent virtual assistant voiced by Scarlett Johansson. The "
            "film received the Academy Award for Best Original Screenplay.",
        ],
    ),
    (
        49872310,
        "Her (Marlowe Station song)",
        "Q900000074",
        [
            '"Her" is a song by the English indie rock band Marlowe Station, released in 2016 as the lead '
            "single from their second album. It was issued by Columbia Records and reached the top forty of "
            "the UK Singles Chart.",
        ],
    ),
    (
        35868981,
        "Frozen (2013 film)",
        "Q246283",
        [
            "Frozen is a 2013 American computer-animated musical fantasy film produced by Walt Disney "
            "Animation Studios. Directed by Chris Buck and Jennifer Lee from a screenplay by Jennifer Lee, it "
            "features the voices of Kristen Bell, Idina Menzel, Jonathan Groff and Josh Gad.",
        ],
    ),
    (
        1552846,
        "Frozen (Madonna song)",
        "Q900000079",
        [
            '"Frozen" is a song by American singer Madonna from her seventh studio album, Ray of Light '
            "(1998). It was released as the lead single from the album by Maverick Records and Warner Bros. "
            "Records and became one of her most successful songs in Europe.",
        ],
    ),
    (
        156398,
        "Help! (album)",
        "Q900000082",
        [
            "Help! is the fifth studio album by the English rock band the Beatles and the soundtrack to their "
            "film of the same name. It was released on 6 August 1965 by Parlophone.",
            'Seven of its fourteen songs appeared in the film, including the singles "Ticket to Ride" and the '
            'title track, while the second side includes "Yesterday", one of the most recorded songs in the '
            "history of popular music.",
        ],
    ),
    (
        195032,
        "Help! (film)",
        "Q900000086",
        [
            "Help! is a 1965 British musical comedy film directed by Richard Lester. It stars the four members "
            "of the band: John Lennon, Paul McCartney, George Harrison and Ringo Starr, alongside Leo McKern "
            "and Eleanor Bron. The screenplay was written by Marc Behm and Charles Wood.",
        ],
    ),
    (
        22989,
        "Paris",
        "Q90",
        [
            "Paris is the capital and most populous city of France. With an estimated population of 2,165,423 "
            "residents in 2019 in an area of more than 105 km2, it is one of the most densely populated cities "
            "in Europe.",
        ],
    ),
    (
        136411,
        "Paris, Texas",
        "Q900000089",
        [
            "Paris is a city in and the county seat of Lamar County, Texas, United States. As of the 2020 "
            "census, the population of the city was 24,476. It lies about 100 miles northeast of the Dallas–Fort "
            "Worth metroplex.",
        ],
    ),
    (
        17262418,
        "Paris (2008 film)",
        "Q900000094",
        [
            "Paris is a 2008 French comedy-drama film written and directed by Cédric Klapisch. The ensemble "
            "cast includes Juliette Binoche, Romain Duris and Fabrice Luchini, and the film follows a dancer "
            "with a heart condition who observes the lives of the people around him.",
        ],
    ),
    (
        6891532,
        "Paris (Paris Hilton album)",
        "Q900000096",
        [
            "Paris is the debut studio album by American media personality Paris Hilton, released on August "
            '22, 2006, by Warner Bros. Records. It includes the single "Stars Are Blind".',
        ],
    ),
    (
        844,
        "Amsterdam",
        "Q727",
        [
            "Amsterdam is the capital and most populous city of the Netherlands, with a population of 921,402 "
            "within the city proper in 2022. Much of the city lies below sea level and is protected by dikes, "
            "and its seventeenth-century canal ring is a UNESCO World Heritage Site.",
        ],
    ),
    (
        1103428,
        "Amsterdam (novel)",
        "Q900000098",
        [
            "Amsterdam is a 1998 novel by the British writer Ian McEwan, which won the Booker Prize in the "
            "same year. It tells the story of two old friends, a composer and a newspaper editor, who make a "
            "euthanasia pact after the death of their former lover.",
        ],
    ),
    (
        31109,
        "The History of Tom Jones, a Foundling",
        "Q900000033",
        [
            "The History of Tom Jones, a Foundling, often known simply as Tom Jones, is a comic novel by the "
            "English playwright and novelist Henry Fielding, first published in 1749. It is considered one of "
            "the earliest English prose works describable as a novel.",
        ],
    ),
    (
        1243016,
        "Tom Jones (1963 film)",
        "Q900000035",
        [
            "Tom Jones is a 1963 British comedy film directed by Tony Richardson from a screenplay by John "
            "Osborne, adapted from Henry Fielding's 1749 novel. It stars Albert Finney in the title role and "
            "won four Academy Awards, including Best Picture.",
        ],
    ),
    (
        41520913,
        "Fargo (TV series)",
        "Q900000103",
        [
            "Fargo is an American black comedy crime drama anthology television series created and primarily "
            "written by Noah Hawley. It is inspired by the 1996 film of the same name, and each season follows "
            "a different crime story in the American Midwest.",
            "The series has run for five seasons; season 5 premiered in November 2023. The first season "
            "starred Billy Bob Thornton and Martin Freeman.",
        ],
    ),
    (
        173906,
        "Fargo (1996 film)",
        "Q900000106",
        [
            "Fargo is a 1996 black comedy crime film written, produced and directed by Joel Coen and Ethan "
            "Coen. Frances McDormand stars as Marge Gunderson, a pregnant police chief investigating roadside "
            "homicides in Minnesota.",
        ],
    ),
    (
        55474,
        "Fargo, North Dakota",
        "Q900000110",
        [
            "Fargo is the most populous city in the U.S. state of North Dakota and the county seat of Cass "
            "County. According to the 2020 census, its population was 125,990. Fargo lies on the western bank "
            "of the Red River of the North, opposite Moorhead, Minnesota.",
        ],
    ),
    # A page without wikidata_info: it mentions the French Army early, but it is
    # nobody's page, so it must not give Napoleon's P241 any provenance.
    (
        4459012,
        "List of battles of the Napoleonic Wars",
        None,
        [
            "This is a list of battles fought by the French Army and its allies during the Napoleonic Wars, "
            "from the Battle of Montebello in 1800 to the Battle of Waterloo in 1815.",
        ],
    ),
]

CATEGORIES = {
    "Abraham Lincoln": "Presidents of the United States,Assassinated American politicians",
    "Napoleon": "Emperors of the French,French military personnel",
}


def entity_by_qid() -> dict[str, dict]:
    return {e["id"]: e for e in ENTITIES}


def kilt_line(pageid: int, title: str, qid: str | None, paragraphs: list[str]) -> str:
    info = None
    if qid is not None:
        ent = entity_by_qid()[qid]
        info = formats.kilt_wikidata_info(
            qid,
            ent["labels"]["en"]["value"],
            ent["descriptions"]["en"]["value"],
            [a["value"] for a in ent["aliases"].get("en", [])],
        )
    revid = 900_000_000 + pageid % 100_000_000
    history = {
        "revid": revid,
        "timestamp": "2019-08-01T00:00:00Z",
        "parentid": revid - 1,
        "pre_dump": True,
        "pageid": pageid,
        "url": "https://en.wikipedia.org/w/index.php?title="
        + title.replace(" ", "%20")
        + f"&oldid={revid}",
    }
    page = formats.kilt_page(
        pageid,
        title,
        paragraphs,
        history=history,
        categories=CATEGORIES.get(title, ""),
        wikidata_info=info,
    )
    return formats.kilt_line(page)


# ---------------------------------------------------------------------------
# Writers
# ---------------------------------------------------------------------------


def property_line(pid: str) -> bytes:
    label, datatype = PROPERTIES[pid]
    entity = formats.property_entity(
        pid, datatype, {"en": label}, lastrevid=2_000_000_000 + int(pid[1:])
    )
    return entity.encode()


def wikidata_lines() -> list[bytes]:
    items = [msgspec.json.encode(entity) for entity in ENTITIES]
    # Properties are interleaved after the first few items, as in the real
    # dump (which is ordered by page id, not by entity type).
    return items[:6] + [property_line(p) for p in PROPERTIES] + items[6:]


def pagecounts_lines() -> list[str]:
    rows = [("en.z", formats.page_title(t), v) for t, v in VIEWS.items()]
    rows += [(proj, title, v) for proj, _, title, v in OTHER_PROJECT_VIEWS]
    lines = [formats.pagecounts_line(t, v, p) for p, t, v in sorted(rows)]
    # sprinkle the malformed lines at fixed positions
    for k, bad in enumerate(MALFORMED_PAGECOUNTS):
        lines.insert(7 + 23 * k, bad)
    return lines


def pageviews_lines() -> list[str]:
    page_ids = {title: pid for pid, title, _, _ in PAGES}
    rows = []
    for n, (title, total) in enumerate(VIEWS.items()):
        page_id = str(page_ids.get(title, 60_000_000 + n))
        if title == "Marc Behm":
            page_id = "null"  # real files contain a few lines without a page id
        for access, count in split_access(title, total):
            rows.append(("en.wikipedia", formats.page_title(title), page_id, access, count))
    for _, domain, title, views in OTHER_PROJECT_VIEWS:
        for access, count in split_access(domain + title, views):
            rows.append((domain, title, "70000001", access, count))
    rows.sort(key=lambda r: (r[0], r[1], r[3]))
    return [formats.pageviews_complete_line(t, pid, a, c, daily(c), d) for d, t, pid, a, c in rows]


def main(folder: Path = HERE) -> None:
    """Writes the sample's four files into `folder` (next to this script by default)."""
    wikidata = formats.wikidata_dump(wikidata_lines())
    formats.write_dump_file(folder / "wikidata-sample-all.json.bz2", wikidata)
    formats.write_lines(folder / "pagecounts-sample-views-ge-5-totals.bz2", pagecounts_lines())
    formats.write_lines(folder / "pageviews-sample-user.gz", pageviews_lines())
    pages = (kilt_line(*page) for page in PAGES)
    formats.write_lines(folder / "kilt_knowledgesource-sample.json", pages)


if __name__ == "__main__":
    main()
