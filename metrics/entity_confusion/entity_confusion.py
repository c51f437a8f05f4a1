"""Entity confusion and accuracy@k on AmbER sets, as an `evaluate` metric.

Accuracy@k (all / head / tail) and all-correct@k (the published "consistency") follow the
definitions of the AmbER authors' evaluation script; entity confusion is measured on the
whole ranking. One small dict per ranking (built in C) finds the gold and confuser ranks, and
numpy does the rest, so that 80,000 rankings of 100 ids take about 1.5 s on two cores (see
``benchmarks/bench_entity_confusion.py``).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence

import datasets
import evaluate
import numpy as np

_CITATION = """\
@inproceedings{chen-etal-2021-evaluating,
    title = "Evaluating Entity Disambiguation and the Role of Popularity in Retrieval-Based {NLP}",
    author = "Chen, Anthony  and
      Gudipati, Pallavi  and
      Longpre, Shayne  and
      Ling, Xiao  and
      Singh, Sameer",
    booktitle = "Proceedings of the 59th Annual Meeting of the Association for Computational
        Linguistics and the 11th International Joint Conference on Natural Language Processing
        (Volume 1: Long Papers)",
    month = aug,
    year = "2021",
    address = "Online",
    publisher = "Association for Computational Linguistics",
    url = "https://aclanthology.org/2021.acl-long.345",
    doi = "10.18653/v1/2021.acl-long.345",
    pages = "4472--4485",
}
"""

_DESCRIPTION = """\
Retrieval metrics for AmbER sets (Chen et al., 2021): sets of queries about entities that share
a name, one popular ("head") entity and less popular ("tail") ones. For every query the metric
reads a ranked list of retrieved document ids and reports accuracy@k (a gold document among the
first k ids) on all, head and tail queries; all_correct@k, the share of AmbER sets whose every
query is right at k (the paper's "consistency"); and entity confusion, the share of queries for
which a document of another entity of the same set ranks above every gold document. Predictions
are cleaned as the published script does: the id "None" is dropped and repeated ids keep only
their first occurrence. All scores are percentages (0-100); a score over an empty subset (e.g. no
tail queries) is NaN.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `list` of `str`): one ranked list of document ids per query, best
        first. The id "None" is dropped and repeated ids keep their first occurrence.
    references (`list` of `dict`): one dict per query with keys
        - "gold_ids" (`list` of `str`): ids of the documents of the query's entity;
        - "confuser_ids" (`list` of `str`): ids of the documents of the other entities of the
          same AmbER set (an id that is also gold counts as gold);
        - "is_head" (`bool`): whether the query is about the set's most popular entity;
        - "set_id" (`str`): the AmbER set the query belongs to.
    k_values (`list` of `int`, optional): cut-offs for accuracy@k and all_correct@k, each >= 1.
        Defaults to [1, 20].
Returns:
    For each k in k_values:
        "accuracy@{k}", "accuracy@{k}_head", "accuracy@{k}_tail" (`float`, 0-100): % of (head,
            tail) queries with a gold id among the first k cleaned ids;
        "all_correct@{k}" (`float`, 0-100): % of sets whose every query is right at k.
    "entity_confusion", "entity_confusion_head", "entity_confusion_tail" (`float`, 0-100): % of
        (head, tail) queries whose best-ranked confuser ranks above the best-ranked gold id, on
        the whole ranking (gold not retrieved ranks below everything; a confuser not retrieved
        never confuses).
    "num_queries", "num_sets" (`int`).
    A percentage over an empty subset of queries (or sets) is float("nan").
Examples:
    >>> metric = evaluate.load("metrics/entity_confusion")
    >>> results = metric.compute(
    ...     predictions=[["d2", "d1"], ["d2", "d3"]],
    ...     references=[
    ...         {"gold_ids": ["d1"], "confuser_ids": ["d2"], "is_head": True, "set_id": "s"},
    ...         {"gold_ids": ["d2"], "confuser_ids": ["d1"], "is_head": False, "set_id": "s"},
    ...     ],
    ...     k_values=[1],
    ... )
    >>> results["accuracy@1"], results["entity_confusion"]
    (50.0, 50.0)
"""

NONE_ID = "None"
NEVER = np.iinfo(np.int64).max  # rank of a gold id that was not retrieved
DEFAULT_K_VALUES = (1, 20)
REFERENCE_KEYS = ("gold_ids", "confuser_ids", "is_head", "set_id")
_REFERENCE_KEY_SET = frozenset(REFERENCE_KEYS)
_STRING_TYPES = {str, np.str_}
_BOOL_TYPES = {bool, np.bool_}
_LIST_TYPES = {list, tuple, np.ndarray}


def _percent(hits: int, total: int) -> float:
    """``100 * hits / total`` with the published script's arithmetic (int, then one division)."""
    return 100 * int(hits) / int(total) if total else math.nan


def _check_k_values(k_values) -> list[int]:
    if isinstance(k_values, (int, np.integer)) and not isinstance(k_values, bool):
        k_values = [k_values]
    if isinstance(k_values, (str, bytes, Mapping)) or not isinstance(
        k_values, (Sequence, np.ndarray)
    ):
        raise TypeError(f"k_values must be a list of positive integers, got {k_values!r}")
    if len(k_values) == 0:
        raise ValueError("k_values must hold at least one cut-off")
    checked: list[int] = []
    for k in k_values:
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
            raise TypeError(f"k_values must be positive integers, got {k!r}")
        if k < 1:
            raise ValueError(f"k_values must be positive integers (k >= 1), got {int(k)}")
        if int(k) not in checked:
            checked.append(int(k))
    return checked


def _lacks(i: int, ref) -> ValueError:
    missing = [key for key in REFERENCE_KEYS if ref.get(key) is None]
    return ValueError(
        f"references[{i}] lacks {', '.join(map(repr, missing))}; each reference needs "
        f"{', '.join(map(repr, REFERENCE_KEYS))}"
    )


def _check_id_lists(column, name: str, references=None) -> None:
    """Every item of ``column`` must be a list (tuple, array) of string ids."""
    if not set(map(type, column)) <= _LIST_TYPES:  # the slow, precise check only on failure
        for i, ids in enumerate(column):
            if ids is None and references is not None:
                raise _lacks(i, references[i])
            if isinstance(ids, (str, bytes)) or not isinstance(ids, (Sequence, np.ndarray)):
                raise TypeError(
                    f"{name.format(i)} must be a list of document ids, got {type(ids).__name__}"
                )


def _check_given(predictions, references) -> None:
    """Each argument must be a list (or another iterable) of per-query items: None, a string
    or a dict is a TypeError naming the argument."""
    for name, value, items in (
        ("predictions", predictions, "rankings (lists of document ids)"),
        ("references", references, "dicts"),
    ):
        if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
            kind = "None" if value is None else type(value).__name__
            raise TypeError(f"{name} must be a list of {items}, one per query, got {kind}")


def _columns(predictions, references):
    """Validate the inputs; return the reference columns (gold, confusers, is_head, set_id)."""
    if len(predictions) != len(references):
        raise ValueError(
            f"predictions and references differ in length: {len(predictions)} predictions, "
            f"{len(references)} references"
        )
    if not set(map(type, references)) <= {dict}:
        for i, ref in enumerate(references):
            if not isinstance(ref, Mapping):
                raise TypeError(f"references[{i}] must be a dict, got {type(ref).__name__}")
    try:
        columns = tuple([ref[key] for ref in references] for key in REFERENCE_KEYS)
    except KeyError:
        for i, ref in enumerate(references):
            if not ref.keys() >= _REFERENCE_KEY_SET:
                raise _lacks(i, ref) from None
        raise
    golds, confusers, heads, set_ids = columns
    for column in columns:
        if type(None) in set(map(type, column)):
            i = next(i for i, value in enumerate(column) if value is None)
            raise _lacks(i, references[i])
    for key, column in (("gold_ids", golds), ("confuser_ids", confusers)):
        _check_id_lists(column, f"references[{{}}][{key!r}]", references)
        bad = set(map(type, itertools.chain.from_iterable(column))) - _STRING_TYPES
        if bad:
            raise TypeError(f"{key} must hold strings, found {sorted(t.__name__ for t in bad)}")
    if not set(map(type, heads)) <= _BOOL_TYPES:  # 1 or "yes" is no bool: say where it is
        i = next(i for i, head in enumerate(heads) if type(head) not in _BOOL_TYPES)
        raise TypeError(
            f"references[{i}]['is_head'] must be a bool (True or False), got {heads[i]!r}"
        )
    _check_id_lists(predictions, "predictions[{}]")
    # As evaluate does, check the first id of each ranking (checking all would cost ~0.3 s).
    bad = {type(pred[0]) for pred in predictions if len(pred)} - _STRING_TYPES
    if bad:
        raise TypeError(f"predictions must hold strings, found {sorted(t.__name__ for t in bad)}")
    return columns


def per_query_ranks(predictions, golds, confusers) -> tuple[np.ndarray, np.ndarray]:
    """Per query: the rank of its best gold id after cleaning, and whether it is confused.

    Returns ``(gold_rank, confused)``: int64 0-based ranks in the cleaned ranking ("None" dropped,
    repeats collapsed to their first occurrence), ``NEVER`` where no gold id was retrieved; and
    bool flags, True where some confuser ranks above every gold id (on the whole ranking).
    """
    # Matching strings is the only work that cannot be done in numpy; one small dict per query
    # (built in C) keeps it cache-friendly, unlike one global vocabulary of all ids (measured
    # 4x slower at 80,000 x 100). Everything after this loop is vectorised.
    repeat = itertools.repeat
    fromkeys = dict.fromkeys
    ranks = []
    confused = []
    add_rank = ranks.append
    add_confused = confused.append
    for pred, gold, confuser in zip(predictions, golds, confusers):  # noqa: B905
        size = len(pred)
        # id -> raw position of its first occurrence (later writes of earlier positions win)
        first = dict(zip(reversed(pred), range(size - 1, -1, -1)))  # noqa: B905
        if NONE_ID in first:
            del first[NONE_ID]
        get = first.get
        g = min(map(get, gold, repeat(NEVER)), default=NEVER)
        # A confuser that is also gold sits at or after the best gold id, so it never decides
        # the comparison: no need to remove gold ids from the confusers first.
        add_confused(min(map(get, confuser, repeat(NEVER)), default=NEVER) < g)
        if g != NEVER and len(first) != size:
            # Repeats or "None" in the ranking: rank = distinct non-None ids before position g.
            before = fromkeys(pred[:g])
            g = len(before) - (NONE_ID in before)
        add_rank(g)
    return np.array(ranks, dtype=np.int64), np.array(confused, dtype=bool)


def compute_entity_confusion(predictions, references, k_values=DEFAULT_K_VALUES) -> dict:
    """The metric without `evaluate`'s machinery: same inputs and outputs as ``compute``."""
    k_values = _check_k_values(DEFAULT_K_VALUES if k_values is None else k_values)
    _check_given(predictions, references)
    predictions = list(predictions)
    references = list(references)
    golds, confusers, heads, set_ids = _columns(predictions, references)
    n = len(predictions)

    gold_rank, confused = per_query_ranks(predictions, golds, confusers)
    is_head = np.array(heads, dtype=bool)
    is_tail = ~is_head
    set_codes: dict = {}
    set_index = np.fromiter(
        map(set_codes.setdefault, set_ids, itertools.count()), dtype=np.int64, count=n
    )
    n_sets = len(set_codes)
    n_head = int(is_head.sum())
    n_tail = n - n_head

    results: dict = {}
    for k in k_values:
        correct = gold_rank < k
        results[f"accuracy@{k}"] = _percent(correct.sum(), n)
        results[f"accuracy@{k}_head"] = _percent((correct & is_head).sum(), n_head)
        results[f"accuracy@{k}_tail"] = _percent((correct & is_tail).sum(), n_tail)
        # set_index values are positions of each set's first query: a set is all correct when
        # none of its queries is wrong.
        wrong_sets = np.unique(set_index[~correct]).size
        results[f"all_correct@{k}"] = _percent(n_sets - wrong_sets, n_sets)
    results["entity_confusion"] = _percent(confused.sum(), n)
    results["entity_confusion_head"] = _percent((confused & is_head).sum(), n_head)
    results["entity_confusion_tail"] = _percent((confused & is_tail).sum(), n_tail)
    results["num_queries"] = n
    results["num_sets"] = n_sets
    return results


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class EntityConfusion(evaluate.Metric):
    """Accuracy@k, all-correct@k and entity confusion on AmbER sets."""

    def _info(self):
        return evaluate.MetricInfo(
            module_type="metric",
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "predictions": datasets.Sequence(datasets.Value("string")),
                    "references": {
                        "gold_ids": datasets.Sequence(datasets.Value("string")),
                        "confuser_ids": datasets.Sequence(datasets.Value("string")),
                        "is_head": datasets.Value("bool"),
                        "set_id": datasets.Value("string"),
                    },
                }
            ),
            homepage="https://github.com/anthonywchen/AmbER-Sets",
            codebase_urls=["https://github.com/anthonywchen/AmbER-Sets"],
            reference_urls=["https://aclanthology.org/2021.acl-long.345"],
        )

    def compute(self, *, predictions=None, references=None, **kwargs):
        """Same as `evaluate.Metric.compute`, with a shortcut for one-shot calls.

        ``compute(predictions=..., references=...)`` on a single process with nothing added
        before computes directly on the inputs: evaluate's Arrow round trip (encode, write to a
        cache file, read back as Python objects) costs about 6x the metric itself at 80,000
        queries x 100 ids and changes nothing for lists of strings. After ``add``/``add_batch``,
        or with several processes, evaluate's standard path runs; both give the same results.
        """
        given = (predictions is not None, references is not None)
        if given in ((True, False), (False, True)) or (not any(given) and self.writer is None):
            _check_given(predictions, references)  # a TypeError naming the missing argument
        if (
            self.writer is None
            and self.num_process == 1
            and predictions is not None
            and references is not None
            and set(kwargs) <= {"k_values"}
        ):
            return self._compute(predictions=predictions, references=references, **kwargs)
        return super().compute(predictions=predictions, references=references, **kwargs)

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """`evaluate.Metric.add_batch`, checking the batch first for clear error messages."""
        _check_given(predictions, references)
        _columns(list(predictions), list(references))
        return super().add_batch(predictions=predictions, references=references, **kwargs)

    def _compute(self, predictions, references, k_values=DEFAULT_K_VALUES):
        return compute_entity_confusion(predictions, references, k_values=k_values)
