"""An encoder that was asked for but could not be trained, said so where its results would be.

``training/train_dpr.py --if_empty explain`` writes ``not_trained.json`` (``{"reason": ...}``)
into its output folder instead of a model when a training file it was given holds no item
(the demo's tiny generator can leave the synthetic set empty). Every table that lists
encoders by folder (``namesake ecqg evaluate-dpr``, ``namesake amber compare --dense-run``,
``namesake ecqg attention-report``) prints that reason in the encoder's row instead of
figures, so a missing UnCon-DPR or Mixed-DPR can never pass for a trained one, and nothing is
trained silently on gold questions alone.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from namesake.errors import BadInputError
from namesake.outputs import atomic_file

FILE = "not_trained.json"


def write_not_trained(folder: str | os.PathLike, reason: str) -> Path:
    """Records in `folder` (created) why its encoder was not trained; returns the file."""
    path = Path(folder) / FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_file(path, "w") as f:
        json.dump({"reason": reason}, f, indent=2)
        f.write("\n")
    return path


def not_trained_reason(folder: str | os.PathLike) -> str | None:
    """Why the encoder of `folder` (or of the training folder holding it) was not trained, or
    None when it was (or `folder` is a model id)."""
    for candidate in (Path(folder), Path(folder).parent):
        path = candidate / FILE
        if path.is_file():
            try:
                return str(json.loads(path.read_text(encoding="utf-8"))["reason"])
            except (json.JSONDecodeError, KeyError, TypeError):
                raise BadInputError(path, None, 'expected {"reason": "..."}') from None
    return None
