"""The Space under load: N simulated users search, open AmbER sets and score answers against
`make space` for a fixed time, through Gradio's own client (its queue protocol, as a browser
uses it).

The script starts the Space (`space_app/app.py` on the artifacts `make demo` wrote, loopback
only) with the queue settings given, waits until it answers, then for each user count runs
that many users side by side, each a thread with its own `gradio_client.Client` (its own
session), looping search -> open set -> score answer with inputs drawn from the AmbER
sample, until the time is up. A request fails when the client raises (queue full, timeout,
server error) or the handler answers with its error notice. Users stop by themselves; the
Space is stopped at the end.

Prints, per user count and per action: requests, requests/s, p50 and p95 latency, errors;
writes the same as JSON under benchmarks/output/.

    .venv/bin/python benchmarks/bench_space_load.py --users 1 8 32 --seconds 120 \
        [--concurrency-limit 1] [--max-queue 64]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "benchmarks" / "output"
ERROR_NOTICE = "ns-message ns-error"
ANSWERS = [
    ("New York City", "NYC", "Which city is the largest in the United States?"),
    ("Paris", "It was not Paris but Lyon.", "What is the capital of France?"),
    ("Alexander Fleming", "Penicillin was discovered by Alexander Fleming.", ""),
    ("Canberra", "Sydney", ""),
]


def sample_inputs(artifacts: Path) -> tuple[list[str], list[str]]:
    """QA queries and set names of the AmbER folder the Space serves."""
    from namesake.amber.build.dataset import read_config

    queries, names = [], []
    for collection in ("human", "nonhuman"):
        table = read_config(str(artifacts / "amber"), collection)
        rows = zip(table["task"].to_pylist(), table["input"].to_pylist(), strict=True)
        queries += [text for task, text in rows if task == "qa"]
        names += table["name"].to_pylist()
    return queries, sorted(set(names))


def start_space(args) -> subprocess.Popen:
    command = [
        sys.executable,
        str(ROOT / "space_app" / "app.py"),
        "--artifacts",
        args.artifacts,
        "--port",
        str(args.port),
        "--concurrency-limit",
        str(args.concurrency_limit),
        "--max-queue",
        str(args.max_queue),
    ]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the Space exited ({server.returncode}): {' '.join(command)}")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{args.port}/", timeout=5)
            return server
        except OSError:
            time.sleep(1)
    server.kill()
    raise SystemExit("the Space did not answer within 5 minutes")


def user(url: str, seed: int, stop_at: float, inputs, records: list, lock: threading.Lock):
    """One simulated user: search, open a set, score an answer, again, until `stop_at`."""
    from gradio_client import Client

    rng = random.Random(seed)
    queries, names = inputs
    client = Client(url, verbose=False)
    actions = [
        ("search", lambda: client.predict(rng.choice(queries), 5, api_name="/run_search")),
        ("open set", lambda: client.predict(rng.choice(names), api_name="/show_set")),
        ("score answer", lambda: client.predict(*rng.choice(ANSWERS), api_name="/run_score")),
    ]
    step = rng.randrange(len(actions))
    while time.monotonic() < stop_at:
        name, call = actions[step % len(actions)]
        step += 1
        start = time.perf_counter()
        try:
            result = call()
            ok = ERROR_NOTICE not in str(result[0] if isinstance(result, tuple) else result)
        except Exception:  # noqa: BLE001 (the failure is what is measured)
            ok = False
        with lock:
            records.append((name, time.perf_counter() - start, ok, time.monotonic()))


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def run_load(url: str, users: int, seconds: float, inputs) -> dict:
    records: list = []
    lock = threading.Lock()
    stop_at = time.monotonic() + seconds
    threads = [
        threading.Thread(target=user, args=(url, seed, stop_at, inputs, records, lock))
        for seed in range(users)
    ]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    summary = {}
    for name in ("all", "search", "open set", "score answer"):
        chosen = [r for r in records if name == "all" or r[0] == name]
        latencies = [r[1] for r in chosen if r[2]]
        summary[name] = {
            "requests": len(chosen),
            "per_second": len(chosen) / elapsed,
            "errors": sum(not r[2] for r in chosen),
            "p50_s": statistics.median(latencies) if latencies else None,
            "p95_s": percentile(latencies, 0.95) if latencies else None,
        }
    return {"users": users, "seconds": elapsed, "actions": summary}


def markdown(results: list[dict], settings: str) -> str:
    lines = [
        f"Queue: {settings}",
        "",
        "| users | action | requests | requests/s | p50 s | p95 s | errors |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    for result in results:
        for name, row in result["actions"].items():
            p50 = "–" if row["p50_s"] is None else f"{row['p50_s']:.2f}"
            p95 = "–" if row["p95_s"] is None else f"{row['p95_s']:.2f}"
            lines.append(
                f"| {result['users']} | {name} | {row['requests']:,} | {row['per_second']:.2f} "
                f"| {p50} | {p95} | {row['errors']} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--artifacts", default=str(ROOT / "demo_output"))
    parser.add_argument("--users", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--port", type=int, default=7871)
    parser.add_argument("--concurrency-limit", type=int, default=1)
    parser.add_argument("--max-queue", type=int, default=64)
    args = parser.parse_args()
    inputs = sample_inputs(Path(args.artifacts))
    server = start_space(args)
    try:
        url = f"http://127.0.0.1:{args.port}/"
        results = [run_load(url, n, args.seconds, inputs) for n in args.users]
    finally:
        server.terminate()
        server.wait(timeout=60)
    settings = f"concurrency limit {args.concurrency_limit}, max size {args.max_queue}"
    OUTPUT.mkdir(parents=True, exist_ok=True)
    name = f"space_load_c{args.concurrency_limit}_q{args.max_queue}.json"
    (OUTPUT / name).write_text(json.dumps({"settings": settings, "results": results}, indent=2))
    print(markdown(results, settings))


if __name__ == "__main__":
    main()
