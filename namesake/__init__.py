"""namesake: measure and fix entity ambiguity in retrieval.

The Python API, imported lazily (``import namesake`` stays instant; each name loads its
module on first use). The evaluation stages are functions over two objects: `AmberQueries`
(the queries of one AmbER config, loaded once) and `Run` (one system's rankings, columnar)::

    import namesake

    queries = namesake.AmberQueries.load("demo_output/amber", "human_qa")
    bm25 = namesake.score(namesake.Run.read("bm25-human_qa.jsonl"), queries)
    mine = namesake.score(namesake.Run.read("my_run.trec"), queries)
    print(namesake.compare([bm25, mine])[0].table())
    mine.to_pandas()
    print(namesake.leaderboard([bm25, mine]).table())  # ranks, pairs, popularity effects

Every command of the ``namesake`` CLI is these functions with files around them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

__version__ = "0.1.0"

#: public name -> the module that defines it
_API = {
    "AmberQueries": "namesake.amber.evaluation.queries",
    "Run": "namesake.runs",
    "open_retriever": "namesake.amber.evaluation.retrieve",
    "retrieve": "namesake.amber.evaluation.retrieve",
    "read_pages": "namesake.amber.evaluation.retrieve",
    "rerank": "namesake.amber.evaluation.retrieve",
    "FusionSettings": "namesake.amber.evaluation.fusion",
    "fuse": "namesake.amber.evaluation.fusion",
    "ScoringOptions": "namesake.amber.evaluation.scoring",
    "StatisticsSettings": "namesake.amber.evaluation.statistics",
    "Evaluation": "namesake.amber.evaluation.scoring",
    "score": "namesake.amber.evaluation.scoring",
    "RunComparison": "namesake.amber.evaluation.compare_runs",
    "compare_pair": "namesake.amber.evaluation.compare_runs",
    "compare": "namesake.amber.evaluation.compare_runs",
    "breakdowns": "namesake.amber.evaluation.breakdowns",
    "popularity_effect": "namesake.amber.evaluation.popularity_effect",
    "Leaderboard": "namesake.amber.evaluation.leaderboard",
    "leaderboard": "namesake.amber.evaluation.leaderboard",
}
__all__ = [
    "AmberQueries",
    "Run",
    "open_retriever",
    "retrieve",
    "read_pages",
    "rerank",
    "FusionSettings",
    "fuse",
    "ScoringOptions",
    "StatisticsSettings",
    "Evaluation",
    "score",
    "RunComparison",
    "compare_pair",
    "compare",
    "breakdowns",
    "popularity_effect",
    "Leaderboard",
    "leaderboard",
]

if TYPE_CHECKING:  # for type checkers and IDEs; at run time each name loads on first use
    from namesake.amber.evaluation.breakdowns import breakdowns
    from namesake.amber.evaluation.compare_runs import RunComparison, compare, compare_pair
    from namesake.amber.evaluation.fusion import FusionSettings, fuse
    from namesake.amber.evaluation.leaderboard import Leaderboard, leaderboard
    from namesake.amber.evaluation.popularity_effect import popularity_effect
    from namesake.amber.evaluation.queries import AmberQueries
    from namesake.amber.evaluation.retrieve import open_retriever, read_pages, rerank, retrieve
    from namesake.amber.evaluation.scoring import Evaluation, ScoringOptions, score
    from namesake.amber.evaluation.statistics import StatisticsSettings
    from namesake.runs import Run


def __getattr__(name: str):
    if name not in _API:
        raise AttributeError(f"module 'namesake' has no attribute {name!r}")
    value = getattr(importlib.import_module(_API[name]), name)
    globals()[name] = value  # once loaded, a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
