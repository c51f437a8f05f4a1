"""What a dataset build did, for the AmbER and WES builds alike: counts per stage, timings,
the bad input it skipped, its statistics and the configs it wrote. The command line prints
it, and the dataset card lists its counts and problems, so a user sees what was dropped
and why."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from namesake.errors import InputProblems


@dataclass
class BuildReport:
    """Counts per stage, seconds per stage, problems (one line each), statistics for the
    card (per collection or per threshold), and the configs written."""

    counts: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    statistics: dict = field(default_factory=dict)
    configs: list[str] = field(default_factory=list)
    #: what a resumed build read back from its work folder (one line each)
    resumed: list[str] = field(default_factory=list)

    def notes(self) -> list[str]:
        """The card's notes: every count and problem (timings and what a rerun reused
        change from run to run, and the output does not)."""
        return self._count_lines() + self.problems

    def lines(self) -> list[str]:
        """Everything, for the command line: counts, timings, reused work, problems."""
        timings = [f"time {stage}: {s:.1f}s" for stage, s in self.seconds.items()]
        return self._count_lines() + timings + self.resumed + self.problems

    def _count_lines(self) -> list[str]:
        return [f"{key}: {value:,}" for key, value in self.counts.items()]


def warn_skipped(problems: InputProblems, unit: str) -> None:
    """Says on stderr how much bad input was skipped (`unit`: "bad input line(s)")."""
    if problems.total():
        print(f"Skipped {problems.total():,} {unit}; --strict stops at the first.", file=sys.stderr)
