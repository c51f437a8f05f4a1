"""Every output of `wes_similarity`'s `compute`, as JSON, to show that a change to the
metric's code leaves its results the same byte for byte: run it before and after the change
and compare the two files with `cmp`.

The inputs are those of `bench_wes_similarity.py`: its 2,000 EVOUNA answers with and without
their questions (the default scorer), v3 and v1 by name on 300 of them, and 500 synthetic
name pairs.

    .venv/bin/python benchmarks/dump_wes_similarity_outputs.py /tmp/before.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_wes_similarity import MODULE_DIR, evouna_inputs, make_inputs  # noqa: E402

from namesake.outputs import atomic_file  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("output", type=Path, help="the JSON file to write")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import evaluate

    metric = evaluate.load(str(MODULE_DIR))
    questions, predictions, references = evouna_inputs(2000)
    synthetic_predictions, synthetic_references = make_inputs(500, 2)
    few = {"predictions": predictions[:300], "references": references[:300]}
    outputs = {
        "with": metric.compute(predictions=predictions, references=references, questions=questions),
        "without": metric.compute(predictions=predictions, references=references),
        "v3": metric.compute(
            **few, questions=questions[:300], model_name_or_path="namesake-wes-scorer-v3"
        ),
        "v1": metric.compute(
            **few, questions=questions[:300], model_name_or_path="namesake-wes-scorer-v1"
        ),
        "synthetic": metric.compute(
            predictions=synthetic_predictions, references=synthetic_references
        ),
    }
    with atomic_file(args.output, "w") as f:
        json.dump(outputs, f, sort_keys=True)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
