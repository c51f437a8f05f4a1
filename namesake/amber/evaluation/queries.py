"""`AmberQueries`: the queries of one AmbER config, loaded and checked once per command and then
handed to every stage (retrieve, score, compare, export, read) as one object.

Before it, each stage reloaded the config from its (dataset, config) strings: `amber compare`
entered the loader 9 times for one config. The object holds the config's rows and its
collection's set members as Arrow tables, and works out once what the stages ask of them:
query ids and texts, AmbER set codes, head flags, gold pages, the namesakes' pages (the
confusers), TREC qrels. It loads from a dataset folder, a Hub id, or the AmbER authors'
released JSON lines (`from_released`), and refuses what is not AmbER here, once, in one line
naming the dataset.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
import pyarrow as pa

from namesake.errors import BadInputError, NamesakeError

#: the columns that scoring reads, of a query config and of its ``_entities`` config
QUERY_COLUMNS = ("id", "name", "qid", "is_head", "gold_wikipedia_ids")
ENTITY_COLUMNS = ("name", "qid", "is_head", "popularity", "wikipedia_ids")


@dataclass(eq=False)
class AmberQueries:
    """The queries of ``config`` (``rows``, in dataset order) and the members of its
    collection's AmBER sets (``members``, the ``<collection>_entities`` config; None when
    loaded without them, as retrieval over the whole corpus and the qrels need none).

    >>> queries = AmberQueries.load("demo_output/amber", "human_qa")  # or a Hub id
    >>> len(queries), queries.num_sets, queries.inputs[0], queries.gold_pages[0]
    """

    dataset: str
    config: str
    rows: pa.Table
    members: pa.Table | None = None
    _cache: dict = field(default_factory=dict, repr=False)

    @classmethod
    def load(cls, dataset: str | os.PathLike, config: str, members: bool = True) -> AmberQueries:
        """The config's test split from a dataset folder or a Hub id and, with ``members``,
        its collection's set members, both checked for the columns scoring reads. A config of
        set members, a config the dataset lacks, or a folder that is not AmbER is one line
        naming the dataset."""
        if not members:
            rows = _load_config(str(dataset), _query_config(str(dataset), config)).data.table
            return cls(str(dataset), config, rows)
        return cls.load_configs(dataset, [config])[config]

    @classmethod
    def load_configs(
        cls, dataset: str | os.PathLike, configs: list[str]
    ) -> dict[str, AmberQueries]:
        """Several configs of one dataset, each loaded once and the set members of each
        collection once, shared by its configs: what a command over many configs loads."""
        dataset = str(dataset)
        members: dict[str, pa.Table] = {}
        loaded = {}
        for config in configs:
            rows = _load_config(dataset, _query_config(dataset, config)).data.table
            collection = members_config(config)
            if collection not in members:
                members[collection] = load_members(dataset, config)
            loaded[config] = cls(dataset, config, rows, members[collection])
            loaded[config].check_columns()
        return loaded

    @classmethod
    def from_released(
        cls, folder: str | os.PathLike, config: str, members: bool = True
    ) -> AmberQueries:
        """The config from the AmbER authors' released JSON lines
        (``<collection>/amber_set_tuples.jsonl``, ``<collection>/<task>/amber_sets.jsonl``),
        read and checked as `namesake amber import` reads them, without writing a folder."""
        from namesake.amber.build.dataset import config_tables
        from namesake.amber.build.released import read_released_collection

        collection = _query_config(str(folder), config).partition("_")[0]
        rows, entities = read_released_collection(Path(folder) / collection)
        tables = config_tables(collection, rows, entities)
        if config not in tables:
            raise BadInputError(folder, None, f"no config {config!r}")
        queries = cls(str(folder), config, tables[config], entities if members else None)
        queries.check_columns()
        return queries

    def __len__(self) -> int:
        return self.rows.num_rows

    def _column(self, name: str) -> list:
        if name not in self._cache:
            self._cache[name] = self.rows.column(name).to_pylist()
        return self._cache[name]

    @property
    def ids(self) -> list[str]:
        """The query ids, in dataset order."""
        return self._column("id")

    @property
    def inputs(self) -> list[str]:
        """The query texts, what a retriever is asked."""
        return self._column("input")

    @property
    def gold_pages(self) -> list[list[str]]:
        """Per query, its gold Wikipedia ids."""
        return self._column("gold_wikipedia_ids")

    @property
    def collection(self) -> str:
        """The collection of the config: human or nonhuman."""
        return self.config.partition("_")[0]

    @property
    def tasks(self) -> list[str]:
        """Per query, its task: qa, sf or fc."""
        return self._column("task")

    @property
    def entity_ids(self) -> list[str]:
        """Per query, the Wikidata id of the entity it asks about."""
        return self._column("qid")

    @cached_property
    def popularity(self) -> np.ndarray:
        """Per query, its entity's popularity (log10 of its monthly page views)."""
        return np.asarray(self._column("popularity"), dtype=np.float64)

    @property
    def properties(self) -> list[str]:
        """Per query, the Wikidata property it asks about (``pid``), one that tells its
        entity apart from the other entities of its set."""
        return self._column("pid")

    @cached_property
    def entity_types(self) -> list[list[str]]:
        """Per query, its entity's Wikidata types (from the set members)."""
        members = self._members("entity types")
        types = {
            (name, qid): kinds
            for name, qid, kinds in zip(
                members["name"].to_pylist(),
                members["qid"].to_pylist(),
                members["entity_types"].to_pylist(),
                strict=True,
            )
        }
        return [
            types.get((name, qid), [])
            for name, qid in zip(self._column("name"), self.entity_ids, strict=True)
        ]

    def to_pandas(self):
        """The config's rows as a DataFrame."""
        return self.rows.to_pandas()

    @cached_property
    def is_head(self) -> np.ndarray:
        """Per query, whether it asks about its set's head (most popular) entity."""
        return np.asarray(self._column("is_head"), dtype=bool)

    @cached_property
    def set_index(self) -> np.ndarray:
        """Per query, its AmbER set as a 0-based code, in order of first appearance."""
        codes: dict[str, int] = {}
        names = self._column("name")
        return np.array([codes.setdefault(name, len(codes)) for name in names], dtype=np.int64)

    @property
    def num_sets(self) -> int:
        return int(self.set_index.max()) + 1 if len(self) else 0

    @cached_property
    def confusers(self) -> list[list[str]]:
        """Per query, the pages of the other entities of its set that are not its gold pages
        (the pages a confused retriever ranks first)."""
        pages: dict[str, dict[str, list[str]]] = defaultdict(dict)
        members = self._members("its confusers")
        for name, qid, ids in zip(
            members["name"].to_pylist(),
            members["qid"].to_pylist(),
            members["wikipedia_ids"].to_pylist(),
            strict=True,
        ):
            pages[name][qid] = ids
        return [
            list(
                dict.fromkeys(
                    page
                    for other, other_pages in pages[name].items()
                    if other != qid
                    for page in other_pages
                    if page not in gold
                )
            )
            for name, qid, gold in zip(
                self._column("name"), self._column("qid"), self.gold_pages, strict=True
            )
        ]

    def references(self) -> list[dict]:
        """The entity_confusion metric's references, one per query: gold pages, confusers,
        head flag and set name."""
        return [
            {"gold_ids": gold, "confuser_ids": confusers, "is_head": is_head, "set_id": name}
            for gold, confusers, is_head, name in zip(
                self.gold_pages,
                self.confusers,
                self._column("is_head"),
                self._column("name"),
                strict=True,
            )
        ]

    def judgments(self):
        """The `QueryJudgments` of the queries (gold pages, confusers, sets, heads as columns):
        what `query_scores` scores a run against; worked out once."""
        from namesake.amber.evaluation.query_scores import QueryJudgments

        if "judgments" not in self._cache:
            self._cache["judgments"] = QueryJudgments.from_references(self.references())
        return self._cache["judgments"]

    def set_pages(self) -> list[list[str]]:
        """Per query, every page of its AmbER set: its gold pages, then the confusers (what
        ``--candidates set`` ranks)."""
        return [
            gold + confusers
            for gold, confusers in zip(self.gold_pages, self.confusers, strict=True)
        ]

    def qrels(self) -> dict[str, dict[str, int]]:
        """TREC-style relevance judgments: every gold page of a query is relevant (1), nothing
        else is judged. One source for `amber qrels`, the BEIR export and the IR measures."""
        return {
            query_id: dict.fromkeys(map(str, gold), 1)
            for query_id, gold in zip(self.ids, self.gold_pages, strict=True)
        }

    def check_columns(self) -> None:
        """A config or its set members without the columns that scoring reads is a
        BadInputError naming them."""
        for name, table, needed in (
            (self.config, self.rows, QUERY_COLUMNS),
            (members_config(self.config), self._members("scoring"), ENTITY_COLUMNS),
        ):
            missing = [column for column in needed if column not in table.column_names]
            if missing:
                raise BadInputError(
                    self.dataset,
                    None,
                    f"config {name} has no column {', '.join(missing)}: not AmbER?",
                )

    def _members(self, purpose: str) -> pa.Table:
        if self.members is None:
            raise NamesakeError(
                f"{self.config} was loaded without its set members "
                f"({members_config(self.config)}), "
                f"which {purpose} need: load it with members=True"
            )
        return self.members


def load_members(dataset: str, config: str) -> pa.Table:
    """The members of the AmbER sets of ``config``'s collection, unchecked."""
    return _load_config(dataset, members_config(config)).data.table


def members_config(config: str) -> str:
    """The config of the set members of ``config``'s collection: human_qa -> human_entities."""
    return f"{config.partition('_')[0]}_entities"


def _query_config(dataset: str, config: str) -> str:
    """``config``, refused when it holds set members rather than queries."""
    collection, _, task = config.partition("_")
    if task == "entities":
        raise NamesakeError(  # not a BadInputError: `set_pages` rewords those
            f"{dataset}: {config} holds the members of the {collection} sets, not queries: use "
            f"{collection}, {collection}_qa, {collection}_sf or {collection}_fc"
        )
    return config


def _load_config(dataset: str, config: str):
    """The test split of one config; what `datasets` raises for a dataset that is neither a
    folder nor a Hub dataset that loads, or for a config it lacks, becomes one line."""
    from datasets import load_dataset
    from datasets.exceptions import DatasetGenerationError

    try:
        return load_dataset(dataset, config, split="test")
    except ValueError as exc:
        text = str(exc)
        if "BuilderConfig" not in text:
            if "Unknown split" in text:
                raise BadInputError(dataset, None, f"config {config} has no test split") from None
            raise
        available = re.findall(r"'([^']*)'", text.partition("Available:")[2])
        queries = [name for name in available if not name.endswith("_entities")]
        raise BadInputError(
            dataset,
            None,
            f"no config {config!r}; its query configs: {', '.join(queries) or 'none'}",
        ) from None
    except DatasetGenerationError as exc:
        cause = exc.__cause__ or exc
        raise BadInputError(dataset, None, f"config {config} does not load ({cause})") from None
    except (FileNotFoundError, ConnectionError) as exc:
        if Path(dataset).exists():
            raise BadInputError(dataset, None, f"not an AmbER dataset folder ({exc})") from None
        if Path(dataset).is_absolute() or dataset.startswith((".", "~")) or dataset.count("/") > 1:
            raise BadInputError(dataset, None, "no such dataset folder") from None
        raise BadInputError(
            dataset, None, f"no such dataset folder, nor a Hub dataset that loads ({exc})"
        ) from None
