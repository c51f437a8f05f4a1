"""Evaluations of synthetic AmbER queries, larger than the bundled sample's 8 sets, so that
breakdowns by popularity, property, task and set size have groups with figures: AmbER's
columns, sets of 2-12 entities (a head and its namesakes), 1-3 queries an entity over three
tasks and a handful of properties, one property asked in 2 sets only (too few for a figure),
and runs that rank a query's gold page first with a chance that grows with its popularity."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from namesake.amber.evaluation.queries import AmberQueries
from namesake.amber.evaluation.scoring import ScoringOptions, score
from namesake.amber.evaluation.statistics import StatisticsSettings
from namesake.runs import Run

PROPERTIES = {"P106": "occupation", "P27": "country of citizenship", "P641": "sport"}
RARE_PROPERTY = ("P1303", "instrument")  # asked in the first two sets only
TASKS = ("qa", "sf", "fc")


def synthetic_queries(seed: int = 0, sets: int = 60) -> AmberQueries:
    """The queries (config ``human``) and set members of ``sets`` synthetic AmbER sets."""
    rng = np.random.default_rng(seed)
    rows, members = [], []
    for number in range(sets):
        name = f"Name {number}"
        size = int(rng.choice([2, 2, 3, 3, 4, 5, 6, 8, 12]))
        head_popularity = float(np.round(rng.uniform(3, 7), 1))
        for entity in range(size):
            qid = f"Q{len(members) + 1}"
            popularity = head_popularity - (entity > 0) * float(np.round(rng.uniform(0.2, 2), 1))
            pages = [f"{qid}-page{page}" for page in range(int(rng.integers(1, 3)))]
            members.append(
                {
                    "name": name,
                    "qid": qid,
                    "label": f"{name} ({qid})",
                    "is_head": entity == 0,
                    "popularity": popularity,
                    "wikipedia_ids": pages,
                }
            )
            pid, label = RARE_PROPERTY if number < 2 else list(PROPERTIES.items())[number % 3]
            for _ in range(int(rng.integers(1, 4))):
                rows.append(
                    {
                        "id": f"q{len(rows)}",
                        "name": name,
                        "qid": qid,
                        "is_head": entity == 0,
                        "popularity": popularity,
                        "task": TASKS[int(rng.integers(3))],
                        "pid": pid,
                        "property": label,
                        "input": f"What is the {label} of {name}?",
                        "gold_wikipedia_ids": pages,
                    }
                )
    queries = AmberQueries(
        "synthetic", "human", pa.Table.from_pylist(rows), pa.Table.from_pylist(members)
    )
    queries.check_columns()
    return queries


def synthetic_run(queries: AmberQueries, seed: int, name: str) -> Run:
    """Each query's set pages and two pages of no entity, shuffled, the gold page moved first
    with a chance that grows with the query's popularity."""
    rng = np.random.default_rng(seed)
    rankings = []
    for query_id, pages, gold, popularity in zip(
        queries.ids, queries.set_pages(), queries.gold_pages, queries.popularity, strict=True
    ):
        ranked = [str(page) for page in rng.permutation([*pages, "other-1", "other-2"])]
        if rng.random() < popularity / 8:
            ranked.remove(gold[0])
            ranked.insert(0, gold[0])
        rankings.append((query_id, [(page, -rank) for rank, page in enumerate(ranked)]))
    return Run.from_rankings(rankings, name=name)


def synthetic_evaluation(queries: AmberQueries, seed: int = 1, name: str = "system", **options):
    """A synthetic run on ``queries`` scored with cut-offs 1 and 5 and 200 resamples (or
    ``options``, `ScoringOptions`' fields)."""
    options = {
        "k_values": (1, 5),
        "statistics": StatisticsSettings(seed=3, bootstrap_resamples=200),
        **options,
    }
    return score(synthetic_run(queries, seed, name), queries, ScoringOptions(**options))
