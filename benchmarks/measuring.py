"""How a benchmark measures: peak RSS and CPU seconds from ``getrusage``, in one place so
that every script's figures mean the same thing."""

from __future__ import annotations

import resource

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
