"""namesake-wes-scorer-v5 against v4 (issue 53): what reading the asserted entity costs or
gains on people's judgments.

v5 is v4's regression on features version 5, which differ from version 4 only where an
answer's parse finds every gold mention merely mentioned while it asserts a rival
(`asserted_text`); elsewhere the two versions compute the same features (scores do not
depend on the rest of a call). So version 4's features of EVOUNA's test split are computed
once (cached under ``--out``) and version 5's only for the answers `asserted_text` reads
otherwise. Reported: EVOUNA test, NQ and TQ, with and without questions, ROC-AUC and
accuracy at the saved threshold, v4 against v5, and the answers read otherwise.

EVOUNA's dev split is halved by question (SHA-256 of its text, `dev_half`): v5's rules may be
developed on dev-a's answers; dev-b is held out, and for it (and test) only counts and
figures are written, never the answers.

    .venv/bin/python benchmarks/bench_wes_asserted.py --out /tmp/wes_v5
    .venv/bin/python benchmarks/bench_wes_asserted.py --out /tmp/wes_v5 --split dev-a
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_wes_scorer_compare import paired_difference  # noqa: E402

from namesake.metrics import load_metric, metric_module  # noqa: E402
from namesake.wes.scoring.answer_scorer import (  # noqa: E402
    hybrid_features,
    record_features,
    surname_pairs,
    withhold_question,
)
from namesake.wes.scoring.judgments import read_judged, wes_judged_answers  # noqa: E402
from namesake.wes.scoring.thresholds import accuracy_at, roc_auc  # noqa: E402


def features_of(records, encoder: str, version: int, cache: Path) -> np.ndarray:
    """HYBRID_FEATURES of every record with its question, computed once, cached."""
    if cache.is_file():
        return np.load(cache)["features"]
    start = time.perf_counter()
    features = record_features(records, encoder, version)
    print(f"features version {version}: {time.perf_counter() - start:.0f} s")
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.savez(cache, features=features)
    return features


RESAMPLES = 1000  # bootstrap resamples, as bench_wes_scorer_compare.py's default
TESTS = 2000  # randomization-test resamples, as bench_wes_scorer_compare.py's default


def v5_against_v4(labels, questions, scores4, scores5, threshold: float) -> dict:
    """v5 minus v4 on the same answers, clustered by question (`paired_difference` of
    bench_wes_scorer_compare.py: ROC-AUC and accuracy at the threshold, each with its 95%
    bootstrap interval and paired randomization p), and how many answers only one of the
    two gets right."""
    right4 = (scores4 >= threshold) == labels
    right5 = (scores5 >= threshold) == labels
    ids = {q: i for i, q in enumerate(dict.fromkeys(questions))}
    clusters = np.array([ids[q] for q in questions])
    paired = paired_difference(
        labels, scores4, scores5, (threshold, threshold), clusters, RESAMPLES, TESTS
    )
    return {
        figure: dict(zip(("observed", "low", "high", "p"), values, strict=True))
        for figure, values in paired.items()
    } | {
        "right only with v4": int((right4 & ~right5).sum()),
        "right only with v5": int((right5 & ~right4).sum()),
    }


def wes_name_figures(folder: str, module) -> None:
    """The WES columns of the encoder study (`bench_wes_scorer_study.py`: test pairs, no
    question; thresholds 2 and 5 without threshold 1's articles, which v4 was fitted on; the
    look-alike pairs of threshold 1 again without a surname alone) for v4 and v5, and the
    pairs v5 reads otherwise."""
    records = [
        r
        for threshold in (1, 2, 5)
        for kind in ("pairs", "hardpairs")
        for r in wes_judged_answers(folder, f"2016thresh{threshold}{kind}")
    ]
    fitted = {r.references[0] for r in records if r.dataset.startswith("wes-2016thresh1")}
    test = [r for r in records if r.split == "test"]
    read = [r for r in test if module.asserted_text(None, list(r.references), r.candidate)]
    print(f"WES test pairs read otherwise by v5: {len(read)} of {len(test):,}")
    for r in read:
        print(f"  {r.candidate!r} for {r.references[0]!r} ({r.dataset}, same: {r.label})")
    labels = np.array([r.label for r in test])
    dataset = np.array([r.dataset for r in test])
    unseen = np.array([r.references[0] not in fitted for r in test])
    groups = {}
    for kind, label in (("pairs", "random"), ("hardpairs", "hard")):
        for threshold in (1, 2, 5):
            mask = dataset == f"wes-2016thresh{threshold}{kind}"
            groups[f"WES {label} t{threshold}"] = mask & unseen if threshold > 1 else mask
    hard = groups["WES hard t1"]
    v4 = module.DEFAULT_SCORERS["namesake-wes-scorer-v4"]
    features = np.zeros((len(test), len(module.HYBRID_FEATURES)))
    features[hard] = hybrid_features(
        [None] * int(hard.sum()),
        [list(r.references) for r, h in zip(test, hard, strict=True) if h],
        [r.candidate for r, h in zip(test, hard, strict=True) if h],
        v4["encoder"],
        version=4,
    )
    groups["WES hard t1, no surname alone"] = hard & ~surname_pairs(test, features)
    metric = load_metric("wes_similarity")
    print("| scorer (ROC-AUC) | " + " | ".join(groups) + " |")
    print("| pairs (test) | " + " | ".join(f"{int(m.sum()):,}" for m in groups.values()) + " |")
    for name in ("namesake-wes-scorer-v4", "namesake-wes-scorer-v5"):
        scores = np.array(
            metric.compute(
                predictions=[r.candidate for r in test],
                references=[list(r.references) for r in test],
                model_name_or_path=name,
            )["scores"]
        )
        cells = [f"{roc_auc(labels[m], scores[m]):.4f}" for m in groups.values()]
        print(f"| {name} | " + " | ".join(cells) + " |")


def dev_half(question: str) -> str:
    """Which half of EVOUNA's dev split a question falls in, by a fixed rule (SHA-256 of the
    question's text): "dev-a" may be read while the rules are developed, "dev-b" is held out
    (only its aggregate figures are reported)."""
    digest = hashlib.sha256(f"issue-53:dev:{question}".encode()).digest()
    return "dev-a" if digest[0] % 2 == 0 else "dev-b"


def dev_b_half(question: str) -> str:
    """dev-b halved again (SHA-256 of ``issue-53:dev-b:<question>``), after dev-b's figures
    showed v5 below v4: dev-b1's answers may be read to find why, dev-b2 stays unread."""
    digest = hashlib.sha256(f"issue-53:dev-b:{question}".encode()).digest()
    return "dev-b1" if digest[0] % 2 == 0 else "dev-b2"


def in_split(record, split: str) -> bool:
    question = record.question or ""
    if split.startswith("dev-"):
        if record.split != "dev" or dev_half(question) != split[:5]:
            return False
        return len(split) == 5 or dev_b_half(question) == split
    return record.split == split


#: the splits whose answers the benchmark may write out (the others: aggregate figures only)
READABLE = ("dev-a", "dev-b1")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="cache and result folder")
    parser.add_argument(
        "--split",
        choices=["test", "dev", "dev-a", "dev-b", "dev-b1", "dev-b2"],
        default="test",
        help="EVOUNA's split: dev was not read while v5's rules were narrowed on test's answers;"
        " dev-a and dev-b are its halves by question (dev-a for development, dev-b held out),"
        " dev-b1 and dev-b2 dev-b's (dev-b1 read after dev-b fell below v4, dev-b2 held out);"
        " answers read otherwise are written out for dev-a and dev-b1 only",
    )
    parser.add_argument(
        "--wes",
        help="a WES build folder (thresholds 1 2 5, look-alike negatives): also the encoder"
        " study's WES columns for v4 and v5, and the test pairs v5 reads otherwise",
    )
    args = parser.parse_args()
    out = Path(args.out)
    module = metric_module("wes_similarity")
    if args.wes:
        wes_name_figures(args.wes, module)
    v4 = module.DEFAULT_SCORERS["namesake-wes-scorer-v4"]
    v5 = module.DEFAULT_SCORERS["namesake-wes-scorer-v5"]
    base = "dev" if args.split.startswith("dev") else args.split
    every = [r for r in read_judged().records if r.split == base]
    features4 = features_of(every, v4["encoder"], 4, out / f"features-v4-{base}.npz")
    keep = np.array([in_split(r, args.split) for r in every], dtype=bool)
    records = [r for r, k in zip(every, keep, strict=True) if k]
    features4 = features4[keep]
    labels = np.array([r.label for r in records])
    start = time.perf_counter()
    otherwise = {}  # record index: the text version 5 scores
    for i, r in enumerate(records):
        text = module.asserted_text(r.question or None, list(r.references), r.candidate)
        if text is not None:
            otherwise[i] = text
    parse_s = time.perf_counter() - start
    features5 = features4.copy()
    rows = sorted(otherwise)
    if rows:
        features5[rows] = hybrid_features(
            [records[i].question or None for i in rows],
            [list(records[i].references) for i in rows],
            [records[i].candidate for i in rows],
            v5["encoder"],
            version=5,
        )
    scorers = {"namesake-wes-scorer-v4": (v4, features4), "namesake-wes-scorer-v5": (v5, features5)}
    dataset = np.array([r.dataset for r in records])
    result = {"read otherwise": {}, "figures": {}, "v5 - v4": {}, "asserted_text seconds": parse_s}
    computed = {}  # tag: {scorer: scores}
    readable = args.split in READABLE
    for d in ("nq", "tq"):
        on = dataset == d
        result["read otherwise"][d] = sum(bool(on[i]) for i in rows)
        right = sum(bool(on[i]) and records[i].label == 1 for i in rows)
        key = "read otherwise, judged right"
        result[key] = result.get(key, 0) + right
        if readable:
            result["read otherwise"][d] = [
                {
                    "question": records[i].question,
                    "references": list(records[i].references),
                    "answer": records[i].candidate,
                    "label": records[i].label,
                    "scored": otherwise[i],
                }
                for i in rows
                if on[i]
            ]
        for name, (config, values) in scorers.items():
            combiner = module.LogisticCombiner(config["combiner"])
            for with_q in (True, False):
                scores = combiner.predict_proba(values if with_q else withhold_question(values))
                tag = f"{d.upper()} {'with' if with_q else 'without'} q"
                result["figures"].setdefault(name, {})[tag] = {
                    "auc": roc_auc(labels[on], scores[on]),
                    "accuracy": accuracy_at(labels[on], scores[on], config["threshold"]),
                }
                computed.setdefault(tag, {})[name] = scores[on]
        questions = [r.question for r, o in zip(records, on, strict=True) if o]
        for tag, pair in computed.items():
            if tag.startswith(d.upper()):
                result["v5 - v4"][tag] = v5_against_v4(
                    labels[on].astype(bool),
                    questions,
                    pair["namesake-wes-scorer-v4"],
                    pair["namesake-wes-scorer-v5"],
                    v5["threshold"],
                )
    # the encoder study's other columns (docs/performance/wes.md): sentences, FiD's short answers
    sentence = np.array([r.kind == "sentence" for r in records])
    fid_short = np.array([r.system == "fid" and r.kind == "short" for r in records])
    for name, (config, values) in scorers.items():
        combiner = module.LogisticCombiner(config["combiner"])
        with_q = combiner.predict_proba(values)
        without_q = combiner.predict_proba(withhold_question(values))
        row = result.setdefault("study columns", {}).setdefault(name, {})
        for d in ("nq", "tq"):
            on = (dataset == d) & sentence
            row[f"{d.upper()} with q, sentence"] = roc_auc(labels[on], with_q[on])
            row[f"{d.upper()} without q, sentence"] = roc_auc(labels[on], without_q[on])
        row["FiD short with q"] = roc_auc(labels[fid_short], with_q[fid_short])
    (out / f"v5-{args.split}.json").write_text(json.dumps(result, indent=2))
    counts = {d: v if isinstance(v, int) else len(v) for d, v in result["read otherwise"].items()}
    print(
        f"{args.split} ({len(records)} answers): read otherwise by version 5: {counts},"
        f" judged right by people: {result['read otherwise, judged right']} ({parse_s:.1f} s)"
    )
    print(
        "| scorer (ROC-AUC / accuracy at the saved threshold) | "
        + " | ".join(next(iter(result["figures"].values())))
        + " |"
    )
    for name, row in result["figures"].items():
        cells = [f"{v['auc']:.4f} / {v['accuracy']:.4f}" for v in row.values()]
        print(f"| {name} | " + " | ".join(cells) + " |")
    cells = []
    for d in result["v5 - v4"].values():
        auc = d["roc_auc"]
        cells.append(
            f"{auc['observed']:+.4f} [{auc['low']:+.4f}, {auc['high']:+.4f}] p={auc['p']:.2f},"
            f" {d['right only with v4']}:{d['right only with v5']}"
            f" p={d['accuracy']['p']:.2f}"
        )
    columns = next(iter(result["study columns"].values()))
    print("| scorer (ROC-AUC) | " + " | ".join(columns) + " |")
    for name, row in result["study columns"].items():
        print(f"| {name} | " + " | ".join(f"{v:.4f}" for v in row.values()) + " |")
    label = "v5 - v4 (ROC-AUC [95% CI] p; right only with v4:v5, accuracy p)"
    print(f"| {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
