"""Docs that cannot lie, by running them: every shell block a page marks ``<!-- docs: run -->``
runs here, on the bundled sample, and the suite fails when one breaks.

Per page, in order, in ONE fresh folder: each runnable block with ``bash -euo pipefail`` (a
``python`` block with the virtualenv's python), offline (HF_HUB_OFFLINE=1,
HF_DATASETS_OFFLINE=1), with the virtualenv's bin first on PATH, 300 s at most. The folder holds
symlinks to the repository's dataset_scripts/, metrics/, training/, examples/, benchmarks/,
space_app/ and tests/data/, and a copy of ``demo_output/amber`` (the sample's AmbER build, as
``make demo`` writes it); anything else a page needs it builds in an earlier block. A
``<!-- docs: output -->`` text block after a runnable block lists lines its stdout must show
(whitespace-normalised). Every shell block of every page must carry a marker
(`tests/docs_pages.py` has the contract).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from docs_pages import REPO, display, doc_pages, marker_problems, parse_page

#: what a page's folder links to in the repository
LINKED = (
    "dataset_scripts",
    "metrics",
    "training",
    "examples",
    "benchmarks",
    "space_app",
    "tests/data",
)
TIMEOUT_S = 300
VENV_BIN = Path(sys.prefix) / "bin"
PYTHON = VENV_BIN / "python" if (VENV_BIN / "python").exists() else Path(sys.executable)


def page_folder(folder: Path, amber: Path | None) -> Path:
    """A fresh folder for one page: the repository's symlinks and a copy of the AmbER build."""
    folder.mkdir(parents=True)
    for name in LINKED:
        if (REPO / name).exists():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).symlink_to(REPO / name, target_is_directory=True)
    if amber is not None:
        shutil.copytree(amber, folder / "demo_output" / "amber")
    return folder


def block_environment() -> dict[str, str]:
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    return env


def _run(argv: list[str], folder: Path, timeout: float) -> tuple[int | None, str, str]:
    """(exit status or None on timeout, stdout, stderr); on timeout the block's whole process
    group is killed, not only its shell."""
    process = subprocess.Popen(
        argv,
        cwd=folder,
        env=block_environment(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        return None, stdout, stderr
    return process.returncode, stdout, stderr


def _normalised(text: str) -> str:
    return " ".join(text.split())


def run_page(
    path: Path, folder: Path, amber: Path | None = None, timeout: float = TIMEOUT_S
) -> list[str]:
    """Runs the page's runnable blocks in order in `folder` (created here); the failures, each
    naming ``file:line`` and the block's first line. The page stops at its first failing
    block: the next ones build on it."""
    runnable = [block for block in parse_page(Path(path)).blocks if block.runnable]
    if not runnable:
        return []
    page_folder(folder, amber)
    for block in runnable:
        where = f"{display(block.path)}:{block.line}: `{block.first_line}`"
        if block.language == "python":
            argv = [str(PYTHON), "-c", block.text]
        else:
            argv = ["bash", "-euo", "pipefail", "-c", block.script()]
        status, stdout, stderr = _run(argv, folder, timeout)
        if status is None:
            return [f"{where} timed out after {timeout:g} s\n{_tail(stdout, stderr)}"]
        if status:
            return [f"{where} exited with status {status}\n{_tail(stdout, stderr)}"]
        if block.output is not None:
            shown = [_normalised(line) for line in stdout.splitlines()]
            missing = [
                f"{display(block.path)}:{block.output.line + 1 + n}: output line not in the "
                f"stdout of {where}: {line.strip()!r}"
                for n, line in enumerate(block.output.text.splitlines())
                if line.strip() and not any(_normalised(line) in text for text in shown)
            ]
            if missing:
                return missing + [f"--- its stdout ---\n{stdout[-3000:]}"]
    return []


def _tail(stdout: str, stderr: str) -> str:
    return f"--- stdout (end) ---\n{stdout[-1500:]}\n--- stderr (end) ---\n{stderr[-3000:]}"


@pytest.fixture(scope="session")
def docs_amber(tmp_path_factory) -> Path:
    """The sample's AmbER build as ``make demo`` writes it, once per session."""
    out = tmp_path_factory.mktemp("docs_amber") / "amber"
    subprocess.run(
        [str(PYTHON), str(REPO / "dataset_scripts" / "amber" / "build.py"), "--out", str(out)],
        cwd=REPO,
        env=block_environment(),
        check=True,
        capture_output=True,
        timeout=TIMEOUT_S,
    )
    return out


PAGES = doc_pages()


def test_every_shell_block_is_marked():
    problems = marker_problems(PAGES)
    assert not problems, "\n".join(map(str, problems))


@pytest.mark.parametrize("page", PAGES, ids=[display(page) for page in PAGES])
def test_runnable_blocks(page, request, tmp_path):
    if not any(block.runnable for block in parse_page(page).blocks):
        return  # nothing to run: no AmbER build for it
    failures = run_page(page, tmp_path / "page", request.getfixturevalue("docs_amber"))
    assert not failures, "\n".join(failures)


# ---- self-tests: planted pages fail as they should, at file:line ------------------------------

UNMARKED = """\
# Planted

```bash
namesake --help
```

<!-- docs: runnable -->
```sh
echo hi
```

<!-- docs: output -->
```text
hi
```

<!-- docs: run -->

```bash
echo the marker is a line too far
```
"""

RUNS = """\
# Blocks share one folder, in order

<!-- docs: run -->
```bash
echo "first" > written.txt
test -L dataset_scripts && test -L tests/data && test -f demo_output/amber/README.md
test ! -e demo_output/retrieval
test "$HF_HUB_OFFLINE" = 1 && test "$HF_DATASETS_OFFLINE" = 1
test "$(command -v namesake)" = "{venv_bin}/namesake"
test "$(command -v python)" = "{venv_bin}/python"
```

<!-- docs: run -->
```python
import sys
from pathlib import Path

assert Path("written.txt").read_text() == "first\\n"
assert sys.prefix == {prefix!r}
print("Recall@1     0.42   [0.30, 0.55]")
```

<!-- docs: output -->
```text
Recall@1 0.42 [0.30, 0.55]
```

<!-- docs: run -->
```console
$ cat written.txt
first
```

<!-- docs: check, needs a GPU -->
```bash
exit 1
```
"""

FAILS = """\
# A failing block stops the page

<!-- docs: run -->
```bash
echo fine
```

<!-- docs: run -->
```bash
false | true
echo "never printed"
```

<!-- docs: run -->
```bash
touch should-not-exist
```
"""

DRIFTS = """\
# Shown output that drifted

<!-- docs: run -->
```bash
printf 'MRR  0.51\\nnDCG 0.60\\n'
```

<!-- docs: output -->
```text
MRR 0.51

nDCG 0.61
```
"""


def _plant(tmp_path: Path, text: str, name: str = "page.md") -> Path:
    page = tmp_path / name
    page.write_text(text, encoding="utf-8")
    parse_page.cache_clear()
    return page


@pytest.fixture
def fake_amber(tmp_path) -> Path:
    amber = tmp_path / "built" / "amber"
    amber.mkdir(parents=True)
    (amber / "README.md").write_text("an AmbER build\n", encoding="utf-8")
    return amber


def test_self_test_unmarked_and_misplaced_markers_are_failures(tmp_path):
    page = _plant(tmp_path, UNMARKED)
    problems = [str(problem) for problem in marker_problems([page])]
    assert [problem.split(": ", 1)[0] for problem in problems] == [
        f"{page}:3",  # no marker
        f"{page}:8",  # an unknown marker
        f"{page}:13",  # an output block after a block that does not run
        f"{page}:17",  # a marker not right before its fence
        f"{page}:19",  # ...so that block has none
    ]
    assert "without a marker" in problems[0] and "unknown marker" in problems[1]


def test_self_test_blocks_run_in_order_in_one_folder_offline(tmp_path, fake_amber):
    page = _plant(tmp_path, RUNS.format(venv_bin=VENV_BIN, prefix=sys.prefix))
    assert marker_problems([page]) == []
    assert run_page(page, tmp_path / "run", fake_amber) == []
    assert (tmp_path / "run" / "written.txt").read_text() == "first\n"


def test_self_test_a_failing_block_names_its_line_and_stops_the_page(tmp_path):
    page = _plant(tmp_path, FAILS)
    failures = run_page(page, tmp_path / "run")
    assert len(failures) == 1
    assert failures[0].startswith(f"{page}:9: `false | true` exited with status 1")
    assert not (tmp_path / "run" / "should-not-exist").exists()


def test_self_test_output_that_drifted_is_a_failure(tmp_path):
    page = _plant(tmp_path, DRIFTS)
    failures = run_page(page, tmp_path / "run")
    assert failures[0] == (
        f"{page}:12: output line not in the stdout of {page}:4: "
        "`printf 'MRR  0.51\\nnDCG 0.60\\n'`: 'nDCG 0.61'"
    )
    assert len(failures) == 2 and "MRR  0.51" in failures[1]


def test_self_test_a_block_past_its_time_is_killed(tmp_path):
    page = _plant(tmp_path, "<!-- docs: run -->\n```bash\nsleep 30 & wait\n```\n")
    failures = run_page(page, tmp_path / "run", timeout=1)
    assert len(failures) == 1 and failures[0].startswith(f"{page}:2: `sleep 30 & wait` timed out")
