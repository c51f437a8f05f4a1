"""Publishing the two Hub datasets namesake builds: AmbER (`namesake amber build` or
`namesake amber import`) and WES (`namesake wes build`). Each is staged as it was built
(Parquet per config and split, the card's YAML `configs` naming the shards) and checked as
the Hub and its users will read it: the card parses with ``huggingface_hub.DatasetCard`` and
carries a license, task categories, a size category and `configs`; every config loads with
``datasets.load_dataset(staged, config)`` from the staged copy, into a fresh cache (a cached
load of another folder of the same name would prove nothing)."""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from namesake.errors import BadInputError
from namesake.publish.staging import copy_publishable, stage_folder

#: the YAML fields of a dataset card that the Hub needs to list and load a dataset
CARD_FIELDS = ("license", "task_categories", "size_categories", "configs")


@dataclass(frozen=True)
class DatasetKind:
    """What makes a folder one kind of dataset build, and what its card must say."""

    name: str
    writer: str
    is_config: Callable[[str], bool]
    #: what the folder lacks when no config is of this kind, and which command writes one
    missing: str
    license: str | None = None
    #: lines the card's body must hold (``- dump: `...```): where the rows come from
    provenance: tuple[str, ...] = ()


def _amber_kind() -> DatasetKind:
    from namesake.amber.build.reference import COLLECTIONS

    return DatasetKind(
        name="AmbER",
        writer="publish dataset amber",
        is_config=lambda config: config in COLLECTIONS,
        missing=f"no config named {' or '.join(COLLECTIONS)}: not an AmbER build "
        "(`namesake amber build` or `namesake amber import` writes one)",
    )


#: WES's config names (`namesake.wes.dataset.corpus_config`, `pairs_config`,
#: `hardpairs_config`) and the sources its card names (`namesake.wes.build.dump_sources`).
#: Written out here, since importing namesake.wes would close a circle (wes -> training ->
#: publish); tests/test_publish.py stages a fresh WES build, which keeps them in step.
WES_CONFIG = re.compile(r"[0-9]{4}thresh[0-9]+(corpus|pairs|hardpairs)")
WES_PROVENANCE = ("dump", "dump date")


def _wes_kind() -> DatasetKind:
    return DatasetKind(
        name="WES",
        writer="publish dataset wes",
        is_config=lambda config: WES_CONFIG.fullmatch(config) is not None,
        missing="no <year>thresh<n>corpus, pairs or hardpairs config: not a WES build "
        "(`namesake wes build` writes one)",
        license="cc-by-sa-4.0",
        provenance=WES_PROVENANCE,
    )


def check_dataset_folder(folder: str | os.PathLike, kind: DatasetKind) -> list[str]:
    """The config names of the build `folder` of `kind`, after checking its card: it parses
    with ``DatasetCard``, carries `CARD_FIELDS` (and the kind's license and provenance),
    and names a config of the kind, each config's data files present. Every problem is one
    line naming the card and what is missing."""
    from huggingface_hub import DatasetCard

    folder = Path(folder)
    card_path = folder / "README.md"
    if not folder.is_dir():
        raise BadInputError(folder, None, "no such folder")
    if not card_path.is_file():
        raise BadInputError(card_path, None, f"no dataset card: not a build of {kind.name}")
    card = DatasetCard.load(card_path)
    data = card.data.to_dict()
    for field in CARD_FIELDS:
        if not data.get(field):
            raise BadInputError(card_path, None, f"the card's YAML has no {field}")
    configs = [entry.get("config_name") for entry in data["configs"]]
    if not any(kind.is_config(str(config)) for config in configs):
        raise BadInputError(card_path, None, kind.missing)
    if kind.license and data["license"] != kind.license:
        raise BadInputError(
            card_path, None, f"license {data['license']!r}, not {kind.license!r} ({kind.name})"
        )
    for role in kind.provenance:
        if f"\n- {role}: " not in card.text:
            raise BadInputError(card_path, None, f"the card does not say the {role} it is from")
    for entry in data["configs"]:
        _check_data_files(folder, card_path, entry)
    return configs


def _check_data_files(folder: Path, card_path: Path, entry: dict) -> None:
    for split in entry.get("data_files") or []:
        paths = split.get("path")
        for path in [paths] if isinstance(paths, str) else paths or []:
            if not (folder / path).is_file():
                raise BadInputError(
                    card_path, None, f"config {entry.get('config_name')}: no file {path}"
                )


def check_configs_load(staged: Path, configs: list[str], source: Path) -> None:
    """Loads every config of the staged folder with ``datasets.load_dataset`` into a fresh
    cache; a config that does not load, or loads a split without rows, is a one-line error
    naming the card of `source`, the folder it was staged from (the staged copy is gone)."""
    from datasets import load_dataset

    card_path = source / "README.md"
    with tempfile.TemporaryDirectory(prefix="namesake-publish-load-") as cache:
        for config in configs:
            try:
                loaded = load_dataset(str(staged), config, cache_dir=cache)
            except Exception as exc:  # noqa: BLE001 -- any failure to load is the finding
                raise BadInputError(
                    card_path, None, f"config {config} does not load: {_first_line(exc)}"
                ) from None
            empty = [split for split, rows in loaded.num_rows.items() if not rows]
            if empty:
                raise BadInputError(card_path, None, f"config {config}: empty {empty[0]} split")


def _first_line(exc: Exception) -> str:
    """What went wrong, in one line: the error's first line, else its cause's, else its type."""
    for error in (exc, exc.__cause__):
        lines = str(error or "").strip().splitlines()
        if lines:
            return lines[0]
    return type(exc).__name__


def stage_dataset(folder: str | os.PathLike, out: str | os.PathLike, kind: DatasetKind) -> Path:
    """Checks the build `folder` of `kind`, writes its publishable files to `out` and checks
    the copy, every config loaded from it: the folder a dataset upload sends."""
    check_dataset_folder(folder, kind)

    def check(staging: Path) -> None:
        check_configs_load(staging, check_dataset_folder(staging, kind), Path(folder))

    return stage_folder(out, kind.writer, lambda staging: copy_publishable(folder, staging), check)


def stage_amber(folder: str | os.PathLike, out: str | os.PathLike) -> Path:
    """The staged AmbER dataset (`stage_dataset`)."""
    return stage_dataset(folder, out, _amber_kind())


def stage_wes(folder: str | os.PathLike, out: str | os.PathLike) -> Path:
    """The staged WES dataset (`stage_dataset`): its card must also carry the license of
    Wikipedia's text (CC BY-SA 4.0) and the dump's name and date."""
    return stage_dataset(folder, out, _wes_kind())
