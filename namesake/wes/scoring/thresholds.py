"""Scores against 0/1 labels: ROC-AUC, the accuracy-maximising decision threshold, and
accuracy and F1 at a threshold. numpy only, and below every WES module that decides with a
threshold (the metric's scorer fit, `namesake wes judge`, the training scripts), so none of
them has to import another for these."""

from __future__ import annotations

import math

import numpy as np


def binary_metrics(labels, scores, threshold) -> dict:
    """Accuracy, F1 of the "same" class and ROC-AUC of scores against 0/1 labels."""
    labels = np.asarray(labels, dtype=bool)
    scores = np.asarray(scores, dtype=np.float64)
    predicted = scores >= threshold
    tp = int(np.sum(predicted & labels))
    fp = int(np.sum(predicted & ~labels))
    fn = int(np.sum(~predicted & labels))
    return {
        "accuracy": float(np.mean(predicted == labels)) if len(labels) else math.nan,
        "f1": 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0,
        "roc_auc": roc_auc(labels, scores),
        "threshold": float(threshold),
    }


def roc_auc(labels, scores) -> float:
    """Area under the ROC curve (Mann-Whitney U, ties count half); NaN with one class only."""
    labels = np.asarray(labels, dtype=bool)
    n_pos, n_neg = int(labels.sum()), int((~labels).sum())
    if n_pos == 0 or n_neg == 0:
        return math.nan
    order = np.argsort(scores, kind="mergesort")
    sorted_scores = np.asarray(scores)[order]
    ranks = np.empty(len(scores), dtype=np.float64)
    # Average ranks (1-based) over runs of tied scores.
    _, starts, counts = np.unique(sorted_scores, return_index=True, return_counts=True)
    for start, count in zip(starts, counts, strict=True):
        ranks[order[start : start + count]] = start + (count + 1) / 2
    return float((ranks[labels].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def best_threshold(labels, scores) -> float:
    """The threshold with the highest accuracy (score >= threshold: positive), among the
    midpoints between distinct scores and one step below / above them; the lowest on ties.
    O(n log n): accuracies from sorted positives and negatives, not one pass per candidate."""
    labels = np.asarray(labels, dtype=bool)
    scores = np.asarray(scores, dtype=np.float64)
    values = np.unique(scores)
    if len(values) == 0:
        return 0.5
    candidates = np.concatenate(
        [[values[0] - 1e-6], (values[1:] + values[:-1]) / 2, [values[-1] + 1e-6]]
    )
    positives, negatives = np.sort(scores[labels]), np.sort(scores[~labels])
    # positives at or above t + negatives below t
    correct = (len(positives) - np.searchsorted(positives, candidates, side="left")) + (
        np.searchsorted(negatives, candidates, side="left")
    )
    return float(candidates[int(np.argmax(correct))])


def accuracy_at(labels, scores, threshold: float) -> float:
    """Share of answers where (score >= threshold) agrees with the label; NaN when empty."""
    labels = np.asarray(labels, dtype=bool)
    if not len(labels):
        return math.nan
    return float(np.mean((np.asarray(scores, dtype=np.float64) >= threshold) == labels))
