"""Stage 1's finished chunks in a resumable build's work folder (`amber build --work-dir`).

Stage 1 reads the whole Wikidata dump: hours at full size. With a work folder, its pass is
cut into chunks of about `namesake.dumps.restart.RESTART_EVERY_BYTES` of text, and each
chunk is kept as soon as it is parsed (``chunk-000042/``: entities.arrow, relations.arrow,
chunk.json), with the restart point where the next one begins. A rerun reads the chunks
back and restarts the pass after the last of them, so a kill loses one chunk at most.

The chunks hold stage 1 before its join with page views: a rerun with other page views,
KILT pages or fewer collections uses them as they are. Another dump, or a build that
needs the relations of a property the chunks did not keep, is refused by name.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pyarrow.feather as feather
from pyarrow import ArrowException

from namesake.amber.build.wikidata import (
    ENTITY_SCHEMA,
    RELATION_SCHEMA,
    ParsedBlock,
    combine_blocks,
)
from namesake.errors import BadInputError
from namesake.outputs import atomic_directory
from namesake.work_folder import input_identity, prepare_work_folder, read_json

#: what a chunk's files hold; a change here makes old work folders be refused
CHUNK_FORMAT = 1
WORK_MANIFEST = "stage1.json"
_WORK_KEYS = ("format_version", "wikidata", "properties", "restart_every")


class EntityChunks:
    """The chunks of one dump's stage-1 pass, in order, in `folder`."""

    def __init__(self, folder, dump: Path, wanted_pids: frozenset[str], restart_every: int):
        self.folder = Path(folder)
        record = {
            "format_version": CHUNK_FORMAT,
            "wikidata": input_identity(Path(dump)),
            "properties": sorted(wanted_pids),
            "restart_every": restart_every,
        }
        manifest = self.folder / WORK_MANIFEST
        if manifest.exists():  # chunks that kept more properties serve this build too
            kept = read_json(manifest).get("properties") or []
            missing = sorted(wanted_pids - set(kept))
            if missing:
                raise BadInputError(
                    manifest,
                    None,
                    "this folder holds stage-1 chunks without the relations of "
                    + ", ".join(missing)
                    + " (kept: "
                    + ", ".join(kept)
                    + "); use another --work-dir folder or delete this one",
                )
            record["properties"] = kept
        prepare_work_folder(
            self.folder, WORK_MANIFEST, record, _WORK_KEYS, "stage-1 chunks", "--work-dir"
        )
        #: the properties whose relations the chunks (and the pass that adds to them) keep
        self.properties = frozenset(record["properties"])
        #: chunks read back by `saved`, and where the pass goes on after them (None: the
        #: dump's end was reached)
        self.reused, self.restart = 0, {"offset": 0, "line": 1}
        self._next = 0

    def _path(self, index: int) -> Path:
        return self.folder / f"chunk-{index:06d}"

    def saved(self) -> Iterator[ParsedBlock]:
        """The chunks kept so far, in order (see `reused` and `restart`). A chunk that does
        not read back whole (a file cut short or damaged on disk) is dropped, with the
        chunks after it, and said so on stderr: the pass redoes them."""
        while (path := self._path(self.reused)).is_dir():
            try:
                block, restart = _read_chunk(path)
            except (BadInputError, ArrowException, OSError, KeyError, TypeError, ValueError) as e:
                self._drop_from(self.reused, e)
                return
            yield block
            self.reused = self._next = self.reused + 1
            self.restart = restart
            if self.restart is None:
                return

    def _drop_from(self, index: int, error: Exception) -> None:
        """Removes chunk `index` and the ones after it, saying which and why."""
        dropped = 0
        while (path := self._path(index + dropped)).is_dir():
            shutil.rmtree(path)
            dropped += 1
        after = f" and the {dropped - 1} after it" if dropped > 1 else ""
        line = (self.restart or {}).get("line", 1)
        reason = str(error).replace(str(self._path(index)) + "/", "")
        print(
            f"{self._path(index)}: unreadable stage-1 chunk ({reason}); dropped it{after}, "
            f"redoing {'them' if dropped > 1 else 'it'} from line {line} of the dump",
            file=sys.stderr,
        )

    def save(self, blocks: list[ParsedBlock], next_start: dict | None) -> None:
        """Keeps the next chunk: `blocks` (at least one), and where the pass restarts after
        them (`next_start`, None at the dump's end)."""
        chunk = combine_blocks(blocks)
        with atomic_directory(self._path(self._next), writer="amber build") as staging:
            feather.write_feather(chunk.entities, str(staging / "entities.arrow"))
            feather.write_feather(chunk.relations, str(staging / "relations.arrow"))
            record = {
                "labels": {str(pid): label for pid, label in chunk.property_labels.items()},
                "problems": [list(problem) for problem in chunk.problems],
                "first_line": chunk.first_line,
                "lines": chunk.lines,
                "edges": chunk.edges,
                "next": next_start,
            }
            (staging / "chunk.json").write_text(json.dumps(record), encoding="utf-8")
        self._next += 1


def _read_chunk(path: Path) -> tuple[ParsedBlock, dict | None]:
    """A kept chunk and the restart point after it; raises if any part does not read back
    whole, with stage 1's schemas."""
    record = read_json(path / "chunk.json")
    tables = {}
    for name, schema in (("entities", ENTITY_SCHEMA), ("relations", RELATION_SCHEMA)):
        table = feather.read_table(str(path / f"{name}.arrow"))
        table.validate(full=True)
        if not table.schema.equals(schema):
            raise ValueError(f"{name}.arrow does not hold stage 1's {name}")
        tables[name] = table
    block = ParsedBlock(
        entities=tables["entities"],
        relations=tables["relations"],
        property_labels={int(pid): str(label) for pid, label in record["labels"].items()},
        problems=[(int(line), str(kind), str(detail)) for line, kind, detail in record["problems"]],
        first_line=int(record["first_line"]),
        lines=int(record["lines"]),
        edges=None if record["edges"] is None else tuple(record["edges"]),
    )
    return block, record["next"]
