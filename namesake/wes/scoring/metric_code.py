"""The `wes_similarity` metric's code, for namesake: the one way in.

The metric (``metrics/wes_similarity/``) is self-contained, so that `evaluate.load` works from a
copy of its folder; namesake's WES scoring (fitting and judging scorers, the classic metrics
beside them, the Space) reads its scorers and features from it rather than keeping a second
copy. Every namesake module reaches that code through `wes_similarity_code`, one import that
import-linter sees, instead of loading the script itself.
"""

from __future__ import annotations

from namesake.metrics import metric_module


def wes_similarity_code():
    """The metric's script as a module (`namesake.metrics.metric_module`): what its ``__all__``
    names (scorers, features, the frozen versions), and its sibling modules as attributes
    (``.scorers``, ``.span_encoder``, ``.features``, ``.answer_text``, ``.frozen_scorers``)."""
    return metric_module("wes_similarity")
