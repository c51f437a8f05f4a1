"""The standard IR measures of a run on AmbER, per query, through ir-measures.

ir-measures runs trec_eval's own C code (pytrec_eval), so nDCG@10, MRR@10, R-precision and
Recall@k mean exactly what trec_eval means by them; ranx and a hand-worked example check them
in ``tests/test_ir_metrics.py``. AmbER judges a query's gold pages relevant (1) and nothing
else (`namesake.amber.evaluation.scoring.amber_qrels`), so R-precision is KILT's page-level
R-precision: of the first R pages, the share that are gold, R being the number of gold pages.

Rankings are cleaned as the entity_confusion metric cleans them ("None" dropped, a repeated
page kept at its first rank) and handed over with scores falling by rank, so that trec_eval
orders the pages as the run ranks them (its own tie-break, by document id, never applies).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

#: our name -> the ir-measures measure, each in points (0-100) like AmbER's own measures
IR_MEASURES = {
    "ndcg@10": "nDCG@10",
    "mrr@10": "RR@10",
    "r-precision": "Rprec",
    "recall@20": "R@20",
    "recall@100": "R@100",
}
NONE_ID = "None"  # the placeholder id the AmbER authors' script drops


def clean_ranking(ranking: Sequence[str]) -> list[str]:
    """The ranking as scored: "None" dropped, each page at its first rank."""
    cleaned = dict.fromkeys(map(str, ranking))
    cleaned.pop(NONE_ID, None)
    return list(cleaned)


def per_query_ir_measures(
    qrels: Mapping[str, Mapping[str, int]],
    rankings: Sequence[Sequence[str]],
) -> dict[str, np.ndarray]:
    """Measure name -> per-query values in points, in the order of ``qrels`` (whose keys are
    the query ids, one ranking per query, in the same order). An empty ranking scores 0."""
    import ir_measures

    query_ids = list(qrels)
    if len(query_ids) != len(rankings):
        raise ValueError(f"{len(query_ids)} queries in the qrels, {len(rankings)} rankings")
    run = {}
    for query_id, ranking in zip(query_ids, rankings, strict=True):
        cleaned = clean_ranking(ranking)
        if cleaned:
            run[query_id] = dict(zip(cleaned, range(len(cleaned), 0, -1), strict=True))
    measures = {ir_measures.parse_measure(spec): name for name, spec in IR_MEASURES.items()}
    position = {query_id: i for i, query_id in enumerate(query_ids)}
    values = {name: np.zeros(len(query_ids)) for name in IR_MEASURES}
    judged = {query_id: dict(pages) for query_id, pages in qrels.items()}
    for result in ir_measures.iter_calc(list(measures), judged, run):
        values[measures[result.measure]][position[result.query_id]] = 100.0 * result.value
    return values
