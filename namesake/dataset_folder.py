"""Writing a Hub dataset folder: Parquet shards named by their content, and the card's
`configs` and `dataset_info` YAML entries that describe them.

`datasets` caches a local folder under its basename, the config name and a hash of the
card's `configs` and `dataset_info`; the data files themselves do not enter the key
(huggingface/datasets#2956). A rebuild into the same folder, or a build into another folder
of the same basename, would then load the first build's rows from the cache. So:

- every shard's name carries a digest of its bytes, and the card lists shards by name, so
  any change to the data changes the card, even one that keeps every size (a popularity
  that moves while the row and byte counts stay put);
- `dataset_info` carries what `push_to_hub` records (features, rows and bytes per split,
  download and dataset sizes): the Hub shows the sizes, and `load_dataset` checks the
  row counts.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from namesake.errors import BadInputError

DIGEST_CHARS = 12  # of the shard's sha256: 48 bits, ample for the shards of one config


@dataclass
class WrittenConfig:
    """One config as written: its card entries under `configs` and `dataset_info`."""

    config: dict
    info: dict


def write_config(
    folder: Path, config: str, splits: Mapping[str, pa.Table], rows_per_shard: int
) -> WrittenConfig:
    """Writes each non-empty split as ``<config>/<split>-0000i-of-0000n-<digest>.parquet``
    (an empty Parquet split would not load; callers report empty splits) and returns the
    config's card entries."""
    # Imported here: `datasets` takes 0.7 s to import, and the builds' start-up stays fast.
    from datasets import DatasetInfo, Features, SplitDict, SplitInfo

    (folder / config).mkdir(parents=True)
    data_files, split_infos = [], SplitDict()
    download_size = 0
    for split, table in splits.items():
        if not table.num_rows:
            continue
        shards = -(-table.num_rows // rows_per_shard)
        paths = []
        for shard in range(shards):
            part = table.slice(shard * rows_per_shard, rows_per_shard)
            path = _write_shard(folder / config, f"{split}-{shard:05d}-of-{shards:05d}", part)
            download_size += path.stat().st_size
            paths.append(f"{config}/{path.name}")
        data_files.append({"split": split, "path": paths})
        split_infos.add(SplitInfo(name=split, num_bytes=table.nbytes, num_examples=table.num_rows))
    schema = next(iter(splits.values())).schema
    info = DatasetInfo(
        features=Features.from_arrow_schema(schema),
        splits=split_infos,
        download_size=download_size,
        dataset_size=sum(split.num_bytes for split in split_infos.values()),
    )
    return WrittenConfig(
        config={"config_name": config, "data_files": data_files},
        info={"config_name": config, **info._to_yaml_dict()},
    )


def card_entries(written: Mapping[str, WrittenConfig], default: str) -> dict:
    """The card header's `dataset_info` and `configs` lists, with `default` marked."""
    return {
        "dataset_info": [entry.info for entry in written.values()],
        "configs": [
            {**entry.config, **({"default": True} if name == default else {})}
            for name, entry in written.items()
        ],
    }


def size_category(rows: int) -> str:
    """The card's `size_categories` entry for a dataset of `rows` rows, in the Hub's bins."""
    bounds = [(1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")]
    bounds += [(1_000_000, "100K<n<1M"), (10_000_000, "1M<n<10M"), (100_000_000, "10M<n<100M")]
    return next((label for bound, label in bounds if rows < bound), "100M<n<1B")


def _write_shard(folder: Path, stem: str, table: pa.Table) -> Path:
    """Writes `table` to ``folder/<stem>-<digest>.parquet``, the digest of the file's bytes."""
    # imported here, not with the module (~20 ms): `import namesake.amber.build.pipeline`, which
    # every `namesake amber` command pays at start-up, goes through this module
    import pyarrow.parquet as pq

    staging = folder / f".{stem}.partial"
    pq.write_table(table, staging)
    digest = hashlib.sha256()
    with open(staging, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    path = folder / f"{stem}-{digest.hexdigest()[:DIGEST_CHARS]}.parquet"
    os.replace(staging, path)
    return path


def read_shards(
    shards: list[Path], schema: pa.Schema, what: str, allow_nulls: bool = True
) -> pa.Table:
    """The Parquet `shards` of one config as one table; a shard that is not whole, lacks a
    column of `schema`, holds it with another type (or nulls, unless `allow_nulls`) is a
    BadInputError naming it (`what`: the kind of build, for the message)."""
    import pyarrow.parquet as pq  # imported here: the builds' start-up stays fast

    tables = []
    for shard in shards:
        try:
            table = pq.read_table(shard)
            table.validate(full=True)
        except (pa.ArrowException, OSError, UnicodeDecodeError) as exc:
            raise BadInputError(shard, None, f"not a readable Parquet file ({exc})") from None
        for field in schema:
            if field.name not in table.column_names:
                raise BadInputError(shard, None, f"no column {field.name}: not {what}?")
            if table.schema.field(field.name).type != field.type:
                found = f"column {field.name} is {table.schema.field(field.name).type}"
                raise BadInputError(shard, None, f"{found}, not {field.type}")
            nulls = table.column(field.name).null_count
            if nulls and not allow_nulls:
                raise BadInputError(shard, None, f"column {field.name} has {nulls} null value(s)")
        tables.append(table)
    return pa.concat_tables(tables)
