"""How a benchmark measures: peak RSS and CPU seconds from ``getrusage``, and one measurement
run in a fresh subprocess.

A measurement runs in its own interpreter because Linux keeps a process's peak RSS
(``ru_maxrss``) for its whole life, and across fork + exec: a parent that has measured, or
imported, something large would lend its peak to every later figure. The child hands its
result back as the last line it prints (``print_measurement``); the parent takes that line
(``measure_in_subprocess``).
"""

from __future__ import annotations

import json
import resource
import shlex
import subprocess

_WHO = {"self": resource.RUSAGE_SELF, "children": resource.RUSAGE_CHILDREN}


def peak_rss_mb(who: str = "self") -> float:
    """Peak resident set size in MiB (``ru_maxrss`` is KiB on Linux). For "children" it is the
    largest single child this process has waited for, not their sum."""
    return resource.getrusage(_WHO[who]).ru_maxrss / 1024


def cpu_seconds(*who: str) -> float:
    """User + system CPU seconds of "self", of the "children" this process has waited for (a
    pool's workers), or of both, summed."""
    usages = [resource.getrusage(_WHO[one]) for one in who]
    return sum(usage.ru_utime + usage.ru_stime for usage in usages)


def print_measurement(result: dict) -> None:
    """The child's side: its result as one JSON line, the last it prints."""
    print(json.dumps(result), flush=True)


def measure_in_subprocess(command: list[str], env: dict | None = None, cwd=None) -> dict:
    """Runs one measurement's command and returns the result it printed last (JSON). Its
    output is kept for the failure message: a failed measurement stops the benchmark with the
    tail of its stderr rather than a figure."""
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=cwd)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        raise SystemExit(f"measurement failed: {shlex.join(command)}\n{done.stderr[-3000:]}")
    return json.loads(lines[-1])
