"""Is namesake-wes-scorer-v4 better or worse than v3 on people's judgments, or is it noise?

Paired on EVOUNA's test half (NQ, TQ; with the question and with it withheld): the
difference v4 - v3 of ROC-AUC and of accuracy at each scorer's saved threshold, each with a
95% percentile bootstrap interval and a two-sided paired randomization test, both clustered
by question (the answers of five systems to one question move together), and Holm's
correction over all the figures. Accuracy goes through the AmbER statistics
(`namesake.amber.evaluation.statistics`, questions as the sets); ROC-AUC is not a sum over
questions, so its resamples recompute it (scikit-learn, questions drawn with replacement as weights;
under the null hypothesis each question's answers swap their two scores).

It reads the features that `bench_wes_scorer_study.py` cached, in the order of its records:

    .venv/bin/python benchmarks/bench_wes_scorer_study.py --wes /tmp/wes \\
        --encoder bge-small-int8=$VECTRIX/models/data/bge_small_en --out /tmp/wes_study_v4
    .venv/bin/python benchmarks/bench_wes_scorer_compare.py --wes /tmp/wes \\
        --study /tmp/wes_study_v4 [--resamples 1000] [--tests 2000]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_wes_scorer_study import records_of  # noqa: E402

from namesake.amber.evaluation.query_scores import SetSums  # noqa: E402
from namesake.amber.evaluation.statistics import (  # noqa: E402
    bootstrap_intervals,
    difference,
    holm,
    paired_randomization_test,
)
from namesake.metrics import metric_module  # noqa: E402
from namesake.wes.scoring.answer_scorer import withhold_question  # noqa: E402

# (scorer, the study's feature cache it reads: the extraction version it was fitted on)
SCORERS = (
    ("namesake-wes-scorer-v3", "features-bge-small-int8-v3.npz"),
    ("namesake-wes-scorer-v4", "features-bge-small-int8.npz"),
)


def auc_difference(labels, a, b, questions, resamples, tests, seed=0):
    """(observed, low, high, p) of ROC-AUC(b) - ROC-AUC(a), clustered by question."""
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(seed)
    clusters = int(questions.max()) + 1
    observed = roc_auc_score(labels, b) - roc_auc_score(labels, a)
    drawn = []
    for _ in range(resamples):
        weights = rng.multinomial(clusters, np.full(clusters, 1.0 / clusters))[questions]
        if len(set(labels[weights > 0])) < 2:
            continue
        drawn.append(
            roc_auc_score(labels, b, sample_weight=weights)
            - roc_auc_score(labels, a, sample_weight=weights)
        )
    low, high = np.percentile(drawn, [2.5, 97.5])
    extreme = 0
    for _ in range(tests):
        swap = rng.random(clusters)[questions] < 0.5
        first, second = np.where(swap, b, a), np.where(swap, a, b)
        flipped = roc_auc_score(labels, second) - roc_auc_score(labels, first)
        extreme += abs(flipped) >= abs(observed) - 1e-12
    return observed, float(low), float(high), (1 + extreme) / (1 + tests)


def paired_difference(labels, a, b, thresholds, questions, resamples, tests) -> dict:
    """{"roc_auc", "accuracy": (observed, low, high, p)} of scorer b minus scorer a on the
    same answers, clustered by question (`questions`: 0-based ids): ROC-AUC by
    `auc_difference`, accuracy at each scorer's threshold (`thresholds`: a's, b's) through
    the AmbER statistics, questions as the sets."""
    out = {"roc_auc": auc_difference(labels, a, b, questions, resamples, tests)}
    sums = []
    for scores, threshold in zip((a, b), thresholds, strict=True):
        correct = (scores >= threshold) == labels
        numerators = np.bincount(questions, weights=correct.astype(float))[:, None]
        denominators = np.bincount(questions).astype(float)[:, None]
        sums.append(SetSums(["accuracy"], numerators, denominators, {}))
    delta = difference(*sums)
    low, high = bootstrap_intervals(delta, resamples)["accuracy"]
    p = paired_randomization_test(*sums)["accuracy"]
    out["accuracy"] = (delta.figures()["accuracy"], low, high, p)
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--wes", required=True, help="the WES folder the study read")
    parser.add_argument("--study", required=True, help="the study's --out folder")
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples")
    parser.add_argument("--tests", type=int, default=2000, help="randomization resamples")
    args = parser.parse_args(argv)
    module = metric_module("wes_similarity")
    records = records_of(args.wes)
    scores = {}
    for name, cache in SCORERS:
        path = Path(args.study, cache)
        if not path.is_file():
            parser.error(f"{path} is missing: run bench_wes_scorer_study.py first (see --help)")
        features = np.load(path)["features"]
        if len(features) != len(records):
            parser.error(f"{path} holds {len(features):,} rows, the records {len(records):,}")
        combiner = module.LogisticCombiner(module.DEFAULT_SCORERS[name]["combiner"])
        scores[name] = {
            True: combiner.predict_proba(features),
            False: combiner.predict_proba(withhold_question(features)),
        }
    (a, _), (b, _) = SCORERS
    thresholds = tuple(module.DEFAULT_SCORERS[name]["threshold"] for name in (a, b))
    labels = np.array([r.label for r in records], dtype=bool)
    dataset = np.array([r.dataset for r in records])
    test = np.array([r.split == "test" for r in records])

    rows, pvalues = [], {}
    for d in ("nq", "tq"):
        on = test & (dataset == d)
        asked = [r.question_id for r, m in zip(records, on, strict=True) if m]
        ids = {q: i for i, q in enumerate(dict.fromkeys(asked))}
        questions = np.array([ids[q] for q in asked])
        for with_question in (True, False):
            regime = f"{d.upper()} {'with' if with_question else 'without'} q"
            sa, sb = scores[a][with_question][on], scores[b][with_question][on]
            paired = paired_difference(
                labels[on], sa, sb, thresholds, questions, args.resamples, args.tests
            )
            for figure, (observed, low, high, p) in paired.items():
                label = f"{regime}: {'ROC-AUC' if figure == 'roc_auc' else 'accuracy @ saved'}"
                rows.append((label, observed, low, high))
                pvalues[label] = p
    adjusted = holm(pvalues)
    print(f"{b} - {a}, EVOUNA test, clustered by question\n")
    print("| figure | v4 - v3 | 95% interval | p | p (Holm) | verdict at 0.05 |")
    print("|---|---:|---|---:|---:|---|")
    for figure, observed, low, high in rows:
        verdict = "differ" if adjusted[figure] < 0.05 else "no difference shown"
        print(
            f"| {figure} | {observed:+.4f} | [{low:+.4f}, {high:+.4f}] | "
            f"{pvalues[figure]:.3f} | {adjusted[figure]:.3f} | {verdict} |"
        )


if __name__ == "__main__":
    main()
