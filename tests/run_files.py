"""A run file as the tests compare it: query id -> ranked page ids."""

from __future__ import annotations

import os

from namesake.runs import Run


def ranked_ids(path: str | os.PathLike) -> dict[str, list[str]]:
    """The ranked page ids of each query of a KILT JSON-lines file or a TREC run (told from
    its content by `Run.read`, which refuses a bad line naming it)."""
    run = Run.read(path)
    return dict(zip(run.query_ids, run.ranked_ids(), strict=True))
