"""Builds killed partway with SIGKILL, for the resume tests of `amber build --work-dir` and
`wes build --work-dir`: each kill comes from a hook in the build's own save step, so it
lands right after a chunk or range is kept."""

import signal
import subprocess
import sys
from pathlib import Path


def kill_after_saves(script: str, dump: Path, out: Path, work: Path, plan, kept: str) -> int:
    """Runs `script` (argv: dump, out, work folder, saves before the kill) once per number in
    `plan`, each run killed after saving that many more parts. After each, the output folder
    must not exist (it appears whole or not at all) and the work folder must hold exactly the
    parts saved so far (`kept`: their glob). Returns how many there are."""
    saved = 0
    for after in plan:
        killed = subprocess.run(
            [sys.executable, "-c", script, str(dump), str(out), str(work), str(after)],
            capture_output=True,
        )
        assert killed.returncode == -signal.SIGKILL, killed.stderr.decode()[-2000:]
        assert not out.exists()
        saved += after
        assert len(list(work.glob(kept))) == saved
    return saved
