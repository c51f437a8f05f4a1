"""Start-up cost: `import namesake.amber.build.pipeline` and `namesake <command> --help`.

Every `namesake amber build` pays the import before reading its first byte, and every
`--help` should answer at once. Each figure is the median wall-clock time of fresh
subprocesses (nothing cached in the interpreter), with the slowest import found by
``python -X importtime`` beside it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HELP_COMMANDS = [
    [],
    ["amber"],
    ["amber", "build"],
    ["amber", "stats"],
    ["amber", "push"],
    ["amber", "compare"],
    ["retrieve"],
    ["evaluate"],
    ["ecqg"],
    ["ecqg", "passages"],
    ["ecqg", "rank-entities"],
    ["ecqg", "warm-start"],
    ["ecqg", "attention-report"],
    ["ecqg", "generate"],
    ["ecqg", "build-synthetic-set"],
    ["ecqg", "evaluate-dpr"],
    ["wes"],
    ["wes", "build"],
    ["wes", "score"],
]


def median_seconds(command: list[str], runs: int) -> float:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env=env)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def slowest_imports(module: str, top: int) -> list[tuple[float, str]]:
    """(cumulative seconds, module) of the `top` slowest imports under `module`."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"],
        check=True,
        capture_output=True,
        text=True,
    )
    rows = []
    for line in result.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, name = (part.strip() for part in line.split("|"))
        rows.append((int(cumulative) / 1e6, name))
    return sorted(rows, reverse=True)[:top]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="subprocesses per figure")
    args = parser.parse_args(argv)
    namesake = str(Path(sys.executable).with_name("namesake"))

    print("| what | median of fresh runs |")
    print("|---|---:|")
    seconds = median_seconds(
        [sys.executable, "-c", "import namesake.amber.build.pipeline"], args.runs
    )
    print(f"| `import namesake.amber.build.pipeline` | {seconds:.2f} s |")
    for command in HELP_COMMANDS:
        seconds = median_seconds([namesake, *command, "--help"], args.runs)
        print(f"| `namesake {' '.join([*command, '--help'])}` | {seconds:.2f} s |")
    print("\nSlowest imports under namesake.amber.build.pipeline (cumulative, one run):")
    for seconds, name in slowest_imports("namesake.amber.build.pipeline", top=5):
        print(f"  {seconds:6.3f} s  {name}")


if __name__ == "__main__":
    main()
