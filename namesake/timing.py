"""Wall-clock time of a build's stages, for its report."""

from __future__ import annotations

import time


class StageTimer:
    """Writes the wall-clock seconds of each stage of a build into `seconds`, in order."""

    def __init__(self, seconds: dict[str, float]):
        self.seconds = seconds
        self._last = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.seconds[stage] = now - self._last
        self._last = now
