"""Stage 1's finished chunks in a resumable build's work folder (`amber build --work-dir`).

Stage 1 reads the whole Wikidata dump: hours at full size. With a work folder, its pass is
cut into chunks of about `namesake.dump_restart.RESTART_EVERY_BYTES` of text, and each
chunk is kept as soon as it is parsed (``chunk-000042/``: entities.arrow, relations.arrow,
chunk.json), with the restart point where the next one begins. A rerun reads the chunks
back and restarts the pass after the last of them, so a kill loses one chunk at most.

The chunks hold stage 1 before its join with page views: a rerun with other page views,
KILT pages or fewer collections uses them as they are. Another dump, or a build that
needs the relations of a property the chunks did not keep, is refused by name.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pyarrow.feather as feather

from namesake.amber.wikidata import ParsedBlock, combine_blocks
from namesake.io import BadInputError, atomic_directory
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
        """The chunks kept so far, in order (see `reused` and `restart`)."""
        while (path := self._path(self.reused)).is_dir():
            record = read_json(path / "chunk.json")
            yield ParsedBlock(
                entities=feather.read_table(str(path / "entities.arrow")),
                relations=feather.read_table(str(path / "relations.arrow")),
                property_labels={int(pid): label for pid, label in record["labels"].items()},
                problems=[tuple(problem) for problem in record["problems"]],
                first_line=record["first_line"],
                lines=record["lines"],
                edges=None if record["edges"] is None else tuple(record["edges"]),
            )
            self.reused = self._next = self.reused + 1
            self.restart = record["next"]
            if self.restart is None:
                return

    def save(self, blocks: list[ParsedBlock], next_start: dict | None) -> None:
        """Keeps the next chunk: `blocks` (at least one), and where the pass restarts after
        them (`next_start`, None at the dump's end)."""
        chunk = combine_blocks(blocks)
        with atomic_directory(self._path(self._next)) as staging:
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
