"""The published AmbER reference data of a collection: allowed entity types, their
distinguishing properties, and the QA / fact-checking templates (CC0, from the AmbER
authors' release, bundled in ``namesake/amber/reference``)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from namesake.errors import BadInputError

COLLECTIONS = ("human", "nonhuman")
COLLECTION_NAMES = {"human": "AmbER-H", "nonhuman": "AmbER-N"}  # as the paper names them
BUNDLED_REFERENCE = Path(__file__).parent / "reference"
# Stage 2 reads these on relation values to add aliases ("guitar" -> "guitarist").
PRACTICED_BY, USED_BY = "P3095", "P1535"


@dataclass(frozen=True)
class Collection:
    name: str
    distinguishing_properties: dict[str, list[str]]  # entity type QID -> PIDs
    qa_templates: dict[str, dict[str, list[str]]]  # PID -> {"all": [...], type: [...]}
    fc_templates: dict[str, list[str]]  # PID -> [...]

    @property
    def type_qids(self) -> frozenset[int]:
        return frozenset(int(qid[1:]) for qid in self.distinguishing_properties)

    @property
    def pids(self) -> frozenset[str]:
        return frozenset(p for pids in self.distinguishing_properties.values() for p in pids)


def load_collection(name: str, reference_dir: str | os.PathLike | None = None) -> Collection:
    """Loads a collection's reference files from ``reference_dir/<name>/`` (default: bundled)."""
    if name not in COLLECTIONS:
        raise ValueError(f"unknown collection {name!r}; choose from {', '.join(COLLECTIONS)}")
    folder = Path(reference_dir or BUNDLED_REFERENCE) / name
    files = {
        key: folder / f"{key}.json"
        for key in ("entity_types_to_distinguishing_properties", "qa_templates", "fc_templates")
    }
    loaded = {}
    for key, path in files.items():
        try:
            loaded[key] = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise BadInputError(path, None, "reference file missing") from None
        except json.JSONDecodeError as exc:
            raise BadInputError(path, exc.lineno, f"invalid JSON: {exc.msg}") from None
    collection = Collection(
        name,
        loaded["entity_types_to_distinguishing_properties"],
        loaded["qa_templates"],
        loaded["fc_templates"],
    )
    for pid in sorted(collection.pids):
        for key, templates in (
            ("qa_templates", collection.qa_templates),
            ("fc_templates", collection.fc_templates),
        ):
            if pid not in templates:
                raise BadInputError(files[key], None, f"no templates for property {pid}")
    return collection
