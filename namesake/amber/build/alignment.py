"""Stage 4: align AmbER tuples to KILT Wikipedia pages.

An entity's pages are the KILT pages carrying its QID. A relation's provenance is the set
of those pages whose first 350 words contain one of its values' names; relations without
provenance, and entities without pages, are dropped. A set survives if at least two of
its entities still have relations and one of them is a head.
"""

from __future__ import annotations

import hashlib

from namesake.amber.build.kilt import Page
from namesake.text import get_tokens


def amber_id(name: str, qid: str, pid: str) -> str:
    """The published AmbER tuple id."""
    return hashlib.md5(repr([name, qid, pid]).encode()).hexdigest()


def align_to_pages(sets: list[dict], pages: dict[str, list[Page]]) -> list[dict]:
    """Adds ``wikipedia``, ``provenance``, ``found_in_passage`` and ``amber_id``; returns the
    surviving sets sorted by name."""
    for amber_set in sets:
        for qid, entity in list(amber_set["qids"].items()):
            entity_pages = pages.get(qid, [])
            if not entity_pages:
                del amber_set["qids"][qid]
                continue
            entity["wikipedia"] = [_reference(page) for page in entity_pages]
            for pid, relation in list(entity["pids"].items()):
                relation["provenance"] = _provenance(relation["values"], entity_pages)
                if not relation["provenance"]:
                    del entity["pids"][pid]

    kept = [amber_set for amber_set in sets if _is_answerable(amber_set)]
    for amber_set in kept:
        for qid, entity in amber_set["qids"].items():
            for pid, relation in entity["pids"].items():
                relation["amber_id"] = amber_id(amber_set["name"], qid, pid)
    return sorted(kept, key=lambda amber_set: amber_set["name"])


def _reference(page: Page) -> dict:
    return {"wikipedia_id": page.wikipedia_id, "title": page.title}


def _provenance(values: list[dict], pages: list[Page]) -> list[dict]:
    """Pages mentioning a value, in (value, name, page) order; marks each value found or not."""
    provenance: list[dict] = []
    for value in values:
        value["found_in_passage"] = False
        for name in value["aliases"]:
            tokens = get_tokens(name)
            for page in pages:
                if page.contains(tokens):
                    value["found_in_passage"] = True
                    if _reference(page) not in provenance:
                        provenance.append(_reference(page))
    return provenance


def _is_answerable(amber_set: dict) -> bool:
    with_relations = [entity for entity in amber_set["qids"].values() if entity["pids"]]
    return len(with_relations) >= 2 and any(entity["is_head"] for entity in with_relations)
