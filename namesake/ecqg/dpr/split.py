"""A held-out split of DPR training questions by passage (``namesake ecqg split-gold``).

Splitting questions at random would leak: the questions of one passage ask about the same
facts, so a held-out question whose passage is a positive of a training question measures
recall of that passage, not retrieval. :func:`split_by_passage` holds out whole passages
instead: a seeded share of the distinct positive passages, and with them every question all
of whose positives are among them. A question whose positives fall on both sides belongs to
neither (it is *dropped*, returned and logged, never silently lost), so no held-out question's
passage is ever a positive of a training question.

It works on DPR items as JSON holds them or as :func:`namesake.ecqg.dpr.data.read_dpr_file`
returns them (only ``positive_ctxs`` is read, a passage being an object with ``title`` and
``text`` or a bare string), and returns the items themselves, untouched:
:func:`split_gold_file` writes them out exactly as the input had them.
"""

from __future__ import annotations

import json
import logging
import math
import os
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from namesake.dumps.reading import read_text
from namesake.errors import BadInputError, NamesakeError
from namesake.outputs import atomic_file

logger = logging.getLogger(__name__)

Passage = tuple[str, str]


class SplitError(NamesakeError, ValueError):
    """A split that cannot be made as asked (fraction out of range, a side left empty)."""


class PassageSplit(NamedTuple):
    train: list
    held_out: list
    #: Questions with positives on both sides, in neither list.
    dropped: list


def _normalised(text) -> str:
    return " ".join(str(text or "").split())


def positive_passages(item: Mapping, index: int) -> frozenset[Passage]:
    """The ``(title, text)`` of `item`'s positive passages, whitespace normalised, so that
    the same passage copied into several items with different spacing counts once."""
    contexts = item.get("positive_ctxs") if isinstance(item, Mapping) else None
    passages = set()
    for ctx in contexts or ():
        if isinstance(ctx, str):
            passages.add(("", _normalised(ctx)))
        elif isinstance(ctx, Mapping) and isinstance(ctx.get("text"), str):
            passages.add((_normalised(ctx.get("title")), _normalised(ctx["text"])))
        else:
            raise SplitError(
                f"item {index}: a positive passage must be a string or an object with a "
                "string 'text'"
            )
    if not passages:
        raise SplitError(f"item {index}: no positive passage, so no side to put it on")
    return frozenset(passages)


def split_by_passage(
    items: Sequence[Mapping], held_out_fraction: float = 0.3, seed: int = 0
) -> PassageSplit:
    """``(train, held_out, dropped)``: `items` split by their positive passages.

    The distinct positive passages are sorted, shuffled with `seed` and the first
    ``ceil(held_out_fraction × passages)`` held out, so the split depends on the passages and
    the seed only, not on the order of the items. A question is held out when all its
    positives are held out, trained on when none is, dropped otherwise. Raises
    :class:`SplitError` for a fraction outside (0, 1), an item without positive passage, or a
    split that leaves either side without questions.
    """
    if not 0 < held_out_fraction < 1:
        raise SplitError(f"the held-out fraction must be between 0 and 1, not {held_out_fraction}")
    positives = [positive_passages(item, index) for index, item in enumerate(items)]
    passages = sorted(set().union(*positives))
    random.Random(seed).shuffle(passages)
    held_out_passages = set(passages[: math.ceil(held_out_fraction * len(passages))])
    split = PassageSplit([], [], [])
    for item, passages_of_item in zip(items, positives, strict=True):
        held = len(passages_of_item & held_out_passages)
        if held == len(passages_of_item):
            split.held_out.append(item)
        elif held == 0:
            split.train.append(item)
        else:
            split.dropped.append(item)
    for side, questions in (("training", split.train), ("held-out", split.held_out)):
        if not questions:
            raise SplitError(
                f"no {side} question left: {len(items)} questions over {len(passages)} "
                f"passages, {len(held_out_passages)} held out (fraction {held_out_fraction}), "
                f"{len(split.dropped)} dropped for positives on both sides"
            )
    if split.dropped:
        logger.warning(
            "%d questions dropped: their positive passages are on both sides of the split",
            len(split.dropped),
        )
    return split


def passage_count(items: Sequence[Mapping]) -> int:
    """How many distinct positive passages `items` have."""
    return len(set().union(*(positive_passages(item, i) for i, item in enumerate(items))))


def split_gold_file(
    path: str | os.PathLike,
    train_out: str | os.PathLike,
    held_out_out: str | os.PathLike,
    held_out_fraction: float = 0.3,
    seed: int = 0,
) -> dict:
    """Splits the DPR JSON list at `path` (:func:`split_by_passage`) and writes each side as a
    JSON list of the input's items, unchanged, each file replaced atomically. Returns the
    counts: ``{"train": {"questions", "passages"}, "held_out": {...}, "dropped": n}``."""
    path = Path(path)
    try:
        items = json.loads(read_text(path))
    except json.JSONDecodeError as error:
        raise BadInputError(path, error.lineno, f"not valid JSON ({error.msg})") from None
    if not isinstance(items, list):
        raise BadInputError(path, None, "expected a JSON list of DPR items")
    try:
        split = split_by_passage(items, held_out_fraction, seed)
    except SplitError as error:
        raise SplitError(f"{path}: {error}") from None
    for out, side in ((train_out, split.train), (held_out_out, split.held_out)):
        with atomic_file(out, "w") as f:
            json.dump(side, f, ensure_ascii=False)
            f.write("\n")
    return {
        "train": {"questions": len(split.train), "passages": passage_count(split.train)},
        "held_out": {"questions": len(split.held_out), "passages": passage_count(split.held_out)},
        "dropped": len(split.dropped),
    }
