"""The generated behaviour cases of issue 53 (`namesake.wes.scoring.behaviour_cases`), judged
by a wes_similarity scorer: how many of each class it gets right, in each half, with and
without the question. The development half is what the rules were written against; the
held-out half (frames and cue words never seen while writing them) is the figure to report.

    .venv/bin/python benchmarks/bench_wes_generated_cases.py
    .venv/bin/python benchmarks/bench_wes_generated_cases.py --scorers namesake-wes-scorer-v4
"""

from __future__ import annotations

import argparse
from collections import Counter

import evaluate

from namesake.metrics import metric_path
from namesake.wes.scoring.behaviour_cases import HALVES, cases

DEVELOPMENT_PER_CLASS = 600  # the development half's size while the rules were written
HELD_OUT_PER_CLASS = 80  # the held-out half's, as tests/test_wes_behaviour.py reads it


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--scorers",
        default="namesake-wes-scorer-v5,namesake-wes-scorer-v4",
        help="comma-separated scorer names (the metric's DEFAULT_SCORERS)",
    )
    parser.add_argument("--show-wrong", action="store_true", help="print the cases judged wrong")
    args = parser.parse_args()
    sizes = dict(zip(HALVES, (DEVELOPMENT_PER_CLASS, HELD_OUT_PER_CLASS), strict=True))
    print("| scorer | half | questions | " + " | ".join(_classes()) + " | all |")
    print("|---|---|---|" + "---:|" * (len(_classes()) + 1))
    metric = evaluate.load(str(metric_path("wes_similarity")))
    for name in args.scorers.split(","):
        for half in HALVES:
            generated = cases(half, per_class=sizes[half])
            for with_question in (True, False):
                extra = {"questions": [c.question for c in generated]} if with_question else {}
                result = metric.compute(
                    predictions=[c.answer for c in generated],
                    references=[list(c.references) for c in generated],
                    model_name_or_path=name,
                    **extra,
                )
                right, total = Counter(), Counter()
                for case, score in zip(generated, result["scores"], strict=True):
                    total[case.behaviour] += 1
                    if (score >= result["threshold"]) == case.right:
                        right[case.behaviour] += 1
                    elif args.show_wrong:
                        print(f"  wrong ({half}, q={with_question}): {score:.2f} {case}")
                cells = [f"{right[k]}/{total[k]}" for k in _classes()]
                share = sum(right.values()) / sum(total.values())
                q = "with" if with_question else "without"
                print(f"| {name} | {half} | {q} | " + " | ".join(cells) + f" | {share:.3f} |")


def _classes() -> list[str]:
    return list(dict.fromkeys(c.behaviour for c in cases("held-out", per_class=2)))


if __name__ == "__main__":
    main()
