"""Writing AmbER as a Hugging Face Hub dataset folder (Parquet shards + dataset card) and
in the published JSON-lines layout, and computing the paper's statistics from it."""

from __future__ import annotations

import json
import os
import string
from collections import Counter
from pathlib import Path

import pyarrow as pa

import namesake
from namesake.amber.build.instances import TASKS
from namesake.amber.build.reference import COLLECTION_NAMES, COLLECTIONS
from namesake.dataset_folder import (
    WrittenConfig,
    card_entries,
    read_shards,
    size_category,
    write_config,
)
from namesake.errors import BadInputError
from namesake.markdown import markdown_table
from namesake.papers import paper

# pyarrow.compute (~50 ms), pyarrow.parquet and yaml (~20 ms each) are imported in the
# functions that use them: this module is part of `import namesake.amber.build.pipeline`,
# which every `namesake amber` command pays at start-up, --help included.

ROWS_PER_SHARD = 200_000
CARD_TEMPLATE = Path(__file__).parent / "dataset_card.md"
TASK_NAMES = {"qa": "question answering", "sf": "slot filling", "fc": "fact checking"}
REBUILT_ORIGIN = (
    "This folder was rebuilt from Wikidata, Wikipedia page views and the KILT Wikipedia snapshot "
    "by namesake {version}, reproducing the pipeline of Chen et al. (ACL 2021)."
)

QUERY_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("amber_id", pa.string()),
        ("name", pa.string()),
        ("qid", pa.string()),
        ("is_head", pa.bool_()),
        ("popularity", pa.float64()),
        ("task", pa.string()),
        ("pid", pa.string()),
        ("property", pa.string()),
        ("input", pa.string()),
        ("answer", pa.list_(pa.string())),
        ("values", pa.list_(pa.string())),
        ("additional_values", pa.list_(pa.string())),
        ("gold_wikipedia_ids", pa.list_(pa.string())),
        ("gold_titles", pa.list_(pa.string())),
    ]
)
ENTITY_SCHEMA = pa.schema(
    [
        ("name", pa.string()),
        ("qid", pa.string()),
        ("label", pa.string()),
        ("is_head", pa.bool_()),
        ("popularity", pa.float64()),
        ("entity_types", pa.list_(pa.string())),
        ("wikipedia_ids", pa.list_(pa.string())),
        ("wikipedia_titles", pa.list_(pa.string())),
        ("pids", pa.list_(pa.string())),
    ]
)


def query_rows(tuples: list[dict], instances: dict[str, list]) -> pa.Table:
    """One row per query of every task, in set order, then entity, then task."""
    rows = []
    for index, amber_set in enumerate(tuples):
        for qid, entity in amber_set["qids"].items():
            for task in TASKS:
                for query in instances[task][index]["qids"][qid]["queries"]:
                    pid = query["meta"]["pid"]
                    relation = entity["pids"][pid]
                    output = query["output"]
                    answer = output["answer"]
                    rows.append(
                        {
                            "id": query["id"],
                            "amber_id": relation["amber_id"],
                            "name": amber_set["name"],
                            "qid": qid,
                            "is_head": entity["is_head"],
                            "popularity": entity["popularity"],
                            "task": task,
                            "pid": pid,
                            "property": relation["property"],
                            "input": query["input"],
                            "answer": [answer] if isinstance(answer, str) else answer,
                            "values": output["meta"]["values"],
                            "additional_values": output["meta"]["additional_values"],
                            "gold_wikipedia_ids": [p["wikipedia_id"] for p in output["provenance"]],
                            "gold_titles": [p["title"] for p in output["provenance"]],
                        }
                    )
    return pa.Table.from_pylist(rows, schema=QUERY_SCHEMA)


def entity_rows(tuples: list[dict]) -> pa.Table:
    """One row per entity of every set, those without queries included (they confuse too)."""
    rows = [
        {
            "name": amber_set["name"],
            "qid": qid,
            "label": entity["label"],
            "is_head": entity["is_head"],
            "popularity": entity["popularity"],
            "entity_types": entity["entity_types"],
            "wikipedia_ids": [page["wikipedia_id"] for page in entity["wikipedia"]],
            "wikipedia_titles": [page["title"] for page in entity["wikipedia"]],
            "pids": list(entity["pids"]),
        }
        for amber_set in tuples
        for qid, entity in amber_set["qids"].items()
    ]
    return pa.Table.from_pylist(rows, schema=ENTITY_SCHEMA)


def config_tables(collection: str, queries: pa.Table, entities: pa.Table) -> dict[str, pa.Table]:
    """The dataset configs of one collection: all tasks, each task, and the set members."""
    import pyarrow.compute as pc  # see the imports at the top

    configs = {collection: queries}
    for task in TASKS:
        configs[f"{collection}_{task}"] = queries.filter(pc.equal(queries["task"], task))
    configs[f"{collection}_entities"] = entities
    return configs


def write_configs(folder: Path, configs: dict[str, pa.Table]) -> dict[str, WrittenConfig]:
    """Writes every config as the ``test`` split (``folder/<config>/test-*.parquet``)."""
    return {
        config: write_config(folder, config, {"test": table}, ROWS_PER_SHARD)
        for config, table in configs.items()
    }


def write_jsonl_layout(folder: Path, collection: str, tuples: list[dict], instances: dict) -> None:
    """The published layout: ``<collection>/amber_set_tuples.jsonl`` and
    ``<collection>/<task>/amber_sets.jsonl``."""
    files = {Path(collection, "amber_set_tuples.jsonl"): tuples}
    files.update({Path(collection, task, "amber_sets.jsonl"): instances[task] for task in TASKS})
    for relative, records in files.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            for record in records:
                f.write(json.dumps(record, ensure_ascii=False) + "\n")


def read_config(folder: str | Path, config: str) -> pa.Table:
    """Reads one config of a built dataset folder."""
    shards = sorted(Path(folder, config).glob("*.parquet"))
    if not shards:
        raise BadInputError(Path(folder, config), None, "no Parquet shards: not an AmbER build?")
    schema = ENTITY_SCHEMA if config.endswith("_entities") else QUERY_SCHEMA
    return read_shards(shards, schema, "an AmbER build")


def statistics(queries: pa.Table, entities: pa.Table) -> dict:
    """The paper's Table 4 figures (and Table 3's property distribution) for one collection."""
    sets = len(set(entities["name"].to_pylist()))
    pids = entities["pids"].to_pylist()
    tasks = Counter(queries["task"].to_pylist())
    heads = Counter(zip(queries["task"].to_pylist(), queries["is_head"].to_pylist(), strict=True))
    per_property: Counter = Counter()
    labels = dict(zip(queries["pid"].to_pylist(), queries["property"].to_pylist(), strict=True))
    for types, entity_pids in zip(entities["entity_types"].to_pylist(), pids, strict=True):
        for pid in entity_pids:
            per_property[(" ".join(types), pid)] += 1
    tuples = sum(len(p) for p in pids)
    return {
        "sets": sets,
        "entities_per_set": len(pids) / sets if sets else 0.0,
        "entities_with_queries_per_set": sum(1 for p in pids if p) / sets if sets else 0.0,
        "properties_per_set": tuples / sets if sets else 0.0,
        "tuples": tuples,
        "queries": {task: tasks[task] for task in TASKS},
        "head_queries": {task: heads[(task, True)] for task in TASKS},
        "tail_queries": {task: heads[(task, False)] for task in TASKS},
        "property_distribution": [
            {
                "entity_types": types,
                "pid": pid,
                "property": labels.get(pid, pid),
                "percent": 100 * count / tuples,
            }
            for (types, pid), count in sorted(per_property.items(), key=lambda kv: -kv[1])
        ],
    }


# Table 4's rows, in our columns' order (namesake/data/papers/amber.json)
PAPER_STATISTICS = (
    "# AmbER Sets",
    "avg # entities",
    "avg # entities w/ properties",
    "avg # properties",
    *(f"# input queries ({task.upper()})" for task in TASKS),
)


def folder_statistics(folder: str | os.PathLike) -> dict[str, dict]:
    """`statistics` of each collection an AmbER build folder holds (`amber stats`)."""
    found = {
        c: statistics(read_config(folder, c), read_config(folder, f"{c}_entities"))
        for c in COLLECTIONS
        if os.path.isdir(os.path.join(folder, c))
    }
    if not found:
        raise BadInputError(folder, None, "no human/ or nonhuman/ config: not an AmbER build")
    return found


def statistics_table(stats: dict[str, dict]) -> str:
    """Markdown in the shape of the paper's Table 4, one row per collection, each followed by
    the paper's own figures for that collection."""
    table4 = paper("amber").table(4)
    header = [
        "Collection",
        "# AmbER sets",
        "Entities / set",
        "Entities with queries / set",
        "Properties / set",
        "QA queries",
        "SF queries",
        "FC queries",
    ]
    lines = []  # per collection, one list of cells of ours, then one of the paper's
    for collection, s in stats.items():
        name = _display_name(collection)
        lines.append(
            [
                name,
                f"{s['sets']:,}",
                f"{s['entities_per_set']:.2f}",
                f"{s['entities_with_queries_per_set']:.2f}",
                f"{s['properties_per_set']:.2f}",
                *(f"{s['queries'][task]:,}" for task in TASKS),
            ]
        )
        cells = [table4.printed(statistic=row, collection=name) for row in PAPER_STATISTICS]
        lines.append([f"{name}, paper (Table 4, p. {table4.page})", *cells])
    return markdown_table(header, lines)


def property_table(stats: dict[str, dict]) -> str:
    """Markdown in the shape of the paper's Table 3: share of AmbER tuples per property."""
    return markdown_table(
        ["Collection", "Entity types", "Property", "Share of tuples"],
        (
            [
                _display_name(collection),
                row["entity_types"],
                f"{row['property']} ({row['pid']})",
                f"{row['percent']:.1f}%",
            ]
            for collection, s in stats.items()
            for row in s["property_distribution"]
        ),
        "lllr",
    )


def _display_name(collection: str) -> str:
    return COLLECTION_NAMES.get(collection, collection)


def dataset_card(
    stats: dict[str, dict],
    sources: dict[str, str],
    notes: list[str],
    written: dict[str, WrittenConfig],
    origin: str = REBUILT_ORIGIN,
) -> str:
    """README.md with the Hub's YAML header (license, tasks, and the `dataset_info` and
    `configs` of the `written` configs) and the card body; `origin` says where the rows come
    from (a rebuild, or the authors' release), `{version}` standing for namesake's."""
    import yaml  # see the imports at the top

    header = {
        "pretty_name": "AmbER (Ambiguous Entity Retrieval)",
        "license": "cc0-1.0",
        "language": ["en"],
        "task_categories": ["question-answering", "text-retrieval", "text-classification"],
        "tags": ["entity-disambiguation", "retrieval", "popularity-bias", "wikidata", "kilt"],
        # the queries, as the paper counts AmbER's size (entities rows are their sets' members)
        "size_categories": [size_category(sum(sum(s["queries"].values()) for s in stats.values()))],
        **card_entries(written, default=next(iter(stats))),
    }
    body = string.Template(CARD_TEMPLATE.read_text(encoding="utf-8")).substitute(
        statistics_table=statistics_table(stats),
        property_table=property_table(stats),
        sources="\n".join(f"- {role}: `{name}`" for role, name in sources.items()),
        notes="\n".join(f"- {note}" for note in notes) or "- none",
        origin=origin.format(version=namesake.__version__),
        first_config=next(iter(stats)),
    )
    return "---\n" + yaml.safe_dump(header, sort_keys=False, allow_unicode=True) + "---\n\n" + body
