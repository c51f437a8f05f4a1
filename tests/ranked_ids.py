"""A `Run` from rankings of page ids alone, as the tests of the measures write them."""

from __future__ import annotations

from collections.abc import Sequence

from namesake.runs import Run


def rankings_run(query_ids: Sequence[str], rankings: Sequence[Sequence[str]]) -> Run:
    """One ranking of page ids per query of ``query_ids``, as a run without scores."""
    return Run.from_rankings(
        (query_id, [(page, None) for page in ranking])
        for query_id, ranking in zip(query_ids, rankings, strict=True)
    )
