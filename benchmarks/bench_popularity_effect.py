"""Speed and memory of the within-set popularity effect (`namesake compare-runs`' odds ratio
per 10x page views) at AmbER's full size: 80,000 queries in 7,330 AmbER sets of 2-30 queries,
1,000 bootstrap resamples of the sets, one run.

Goal (issue 50): one run's odds ratio with its interval in at most 5 s and 500 MB on 2 cores.
The data are synthetic and shaped like AmbER: each set holds 2-8 entities, each with its own
popularity (log10 page views ~ N(3, 1)) shared by its queries, and its own difficulty (the
set's baseline log odds); success@1 follows a logistic model with the given odds ratio per
10x views. Timed: the point estimate and the bootstrap (`within_set_effect`). Peak RSS is the
process's (``ru_maxrss``), imports included.

    .venv/bin/python benchmarks/bench_popularity_effect.py [--queries 80000] [--sets 7330]
"""

from __future__ import annotations

import argparse
import json
import math
import time

import numpy as np
from measuring import peak_rss_mb

from namesake.amber.evaluation.popularity_effect import within_set_effect
from namesake.amber.evaluation.statistics import StatisticsSettings

SMALLEST, LARGEST = 2, 30  # queries in an AmbER set


def set_sizes(rng, queries: int, sets: int) -> np.ndarray:
    """``sets`` sizes from SMALLEST to LARGEST summing to ``queries``: skewed like AmbER's
    (most sets small, a few large), then moved one query at a time to the exact total."""
    sizes = np.clip(SMALLEST + rng.geometric(1 / (queries / sets - 1), sets) - 1, SMALLEST, LARGEST)
    while (excess := int(sizes.sum()) - queries) != 0:
        movable = np.flatnonzero(sizes > SMALLEST if excess > 0 else sizes < LARGEST)
        chosen = rng.choice(movable, min(abs(excess), len(movable)), replace=False)
        sizes[chosen] -= int(math.copysign(1, excess))
    return sizes


def synthetic(rng, queries: int, sets: int, odds_ratio: float):
    """Per query: success@1, its entity's log10 page views and its set's code."""
    sizes = set_sizes(rng, queries, sets)
    set_index = np.repeat(np.arange(sets), sizes)
    entities = np.minimum(rng.integers(2, 9, sets), sizes)  # per set
    entity = rng.integers(0, entities[set_index])  # each query's entity within its set
    first = np.r_[0, np.cumsum(entities)[:-1]]  # the set's first entity's number
    popularity = rng.normal(3, 1, entities.sum())[first[set_index] + entity]
    baseline = rng.normal(0, 1.5, sets)[set_index]
    log_odds = baseline + math.log(odds_ratio) * (popularity - 3)
    success = rng.random(queries) < 1 / (1 + np.exp(-log_odds))
    return success, popularity, set_index


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=80_000)
    parser.add_argument("--sets", type=int, default=7_330)
    parser.add_argument("--bootstrap-resamples", type=int, default=1000)
    parser.add_argument("--odds-ratio", type=float, default=1.5)
    args = parser.parse_args()
    success, popularity, set_index = synthetic(
        np.random.default_rng(0), args.queries, args.sets, args.odds_ratio
    )
    start = time.perf_counter()
    effect = within_set_effect(
        success,
        popularity,
        set_index,
        StatisticsSettings(bootstrap_resamples=args.bootstrap_resamples),
    )
    seconds = time.perf_counter() - start
    print(
        json.dumps(
            {
                "queries": args.queries,
                "sets": args.sets,
                "resamples": args.bootstrap_resamples,
                "true_odds_ratio": args.odds_ratio,
                "odds_ratio": round(effect.odds_ratio, 4),
                "interval": [round(bound, 4) for bound in effect.interval],
                "informative_sets": effect.informative_sets,
                "seconds": round(seconds, 2),
                "peak_rss_mb": round(peak_rss_mb(), 1),
            }
        )
    )


if __name__ == "__main__":
    main()
