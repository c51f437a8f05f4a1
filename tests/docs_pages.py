"""The documentation's pages as the docs tests read them: fenced blocks with their markers,
inline code spans and links, the shell commands in a block, and every parser a command can
name (namesake's subcommands, the repository's scripts, the Makefile's targets).

The contract between the pages and the tests (issue 52): every fenced ``bash``/``sh``/
``shell``/``console`` block has, on the line right before its opening fence, exactly one marker:

- ``<!-- docs: run -->``: `tests/test_docs_blocks.py` runs it (in order, per page, in one fresh
  folder; a ``python`` block with this marker runs too);
- ``<!-- docs: check, needs REASON -->``: not run, but `tests/test_docs_references.py` checks
  that every ``namesake``/``python PATH``/``accelerate launch PATH``/``make`` line in it names
  existing subcommands, scripts, flags and targets;
- ``<!-- docs: output -->`` before a ``text`` block right after a runnable block: each of its
  non-blank lines must appear in that block's stdout.

Every function takes the pages (paths) it reads, so the tests' self-tests call them on small
planted pages. Run as a script (``python tests/docs_pages.py --dump-parsers REPO PATH...``)
it prints the flags of each script's argparse parser as JSON, without running the script's
work: the parser is caught when the script asks it to parse.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

#: the pages outside docs/ that the tests read (those that exist)
ROOT_PAGES = (
    "README.md",
    "CONTRIBUTING.md",
    "CHANGELOG.md",
    "training/README.md",
    "benchmarks/README.md",
    "examples/README.md",
)
SHELL_LANGUAGES = {"bash", "sh", "shell", "console"}
OUTPUT_LANGUAGES = {"text", "txt", "output", ""}
RUN_MARKER = "<!-- docs: run -->"
OUTPUT_MARKER = "<!-- docs: output -->"
CHECK_MARKER = re.compile(r"^<!-- docs: check, needs (\S.*?) -->$")
ANY_MARKER = re.compile(r"^<!--\s*docs\s*:.*-->$")
FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
INLINE_CODE = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+[\"'][^)]*[\"'])?\s*\)")
REFERENCE_LINK = re.compile(r"^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)")
HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")

#: path prefixes that name repository files (in inline code or links)
REPO_PREFIXES = (
    "namesake/",
    "tests/",
    "benchmarks/",
    "training/",
    "metrics/",
    "dataset_scripts/",
    "space_app/",
    "model_cards/",
    "docs/",
    "examples/",
)
#: root files a page may name without a folder
ROOT_FILES = {
    "Makefile",
    "setup.cfg",
    "setup.py",
    "pyproject.toml",
    "mkdocs.yml",
    "README.md",
    "CONTRIBUTING.md",
    "CHANGELOG.md",
    "LICENSE",
    "LICENSE.md",
    ".importlinter",
    ".gitignore",
}


def ignored_folders(repo: Path = REPO) -> tuple[str, ...]:
    """The git-ignored folders of .gitignore (benchmarks/output/, space_app/wheels/, ...):
    what the commands write there is output, named by pages but never committed."""
    gitignore = repo / ".gitignore"
    lines = gitignore.read_text(encoding="utf-8").splitlines() if gitignore.is_file() else []
    return tuple(
        line.strip().lstrip("/")
        for line in lines
        if line.strip().endswith("/") and not re.search(r"[*?\[!#]", line)
    )


def under_ignored_folder(token: str, repo: Path = REPO) -> bool:
    """Whether ``token`` is a git-ignored folder (``benchmarks/gpu_wheels``, named without its
    slash) or a path inside one."""
    return any(
        token == folder.rstrip("/") or token.startswith(folder) for folder in ignored_folders(repo)
    )


#: scripts whose parser takes its own flags and hands the rest to a namesake subcommand
FORWARDED = {
    "dataset_scripts/amber/build.py": ("amber", "build"),
    "dataset_scripts/wes/build.py": ("wes", "build"),
}
#: the folders whose Python files are scripts a page may run (``python PATH``)
SCRIPT_GLOBS = (
    "training/*.py",
    "dataset_scripts/*/*.py",
    "benchmarks/*.py",
    "examples/*.py",
    "space_app/app.py",
)


@dataclass(frozen=True)
class Problem:
    """One thing wrong on a page, at ``path:line``."""

    path: Path
    line: int
    message: str

    def __str__(self) -> str:
        return f"{display(self.path)}:{self.line}: {self.message}"


def display(path: Path) -> str:
    """The path as a failure names it: relative to the repository when inside it."""
    try:
        return str(Path(path).resolve().relative_to(REPO))
    except ValueError:
        return str(path)


@dataclass
class Block:
    """A fenced block: ``line`` is its opening fence's (1-based), ``marker`` one of ``run``,
    ``check``, ``output`` or None; ``output`` is the ``text`` block that shows its stdout."""

    path: Path
    line: int
    language: str
    text: str
    marker: str | None = None
    reason: str | None = None
    output: Block | None = None

    @property
    def shell(self) -> bool:
        return self.language in SHELL_LANGUAGES

    @property
    def runnable(self) -> bool:
        return self.marker == "run" and (self.shell or self.language == "python")

    @property
    def first_line(self) -> str:
        return next((line.strip() for line in self.text.splitlines() if line.strip()), "")

    def script(self) -> str:
        """What runs: the block's text; in a ``console`` block, only the ``$ `` lines (with
        their continuations): the rest is output."""
        if self.language != "console":
            return self.text
        lines, continuing = [], False
        for line in self.text.splitlines():
            stripped = line.strip()
            if stripped.startswith("$ ") or stripped == "$":
                lines.append(stripped[2:])
            elif continuing:
                lines.append(line)
            else:
                continue
            continuing = line.rstrip().endswith("\\")
        return "\n".join(lines) + "\n"

    def commands(self) -> list[tuple[int, list[str]]]:
        """The simple commands of a shell block: (line on the page, argv)."""
        return [(self.line + offset, argv) for offset, argv in shell_commands(self.script())]


@dataclass
class Page:
    path: Path
    blocks: list[Block] = field(default_factory=list)
    #: (line, text) of each inline code span outside fenced blocks
    spans: list[tuple[int, str]] = field(default_factory=list)
    #: (line, target) of each markdown link or reference definition outside fenced blocks
    links: list[tuple[int, str]] = field(default_factory=list)
    #: missing, unknown or misplaced markers
    problems: list[Problem] = field(default_factory=list)


def doc_pages(repo: Path = REPO) -> list[Path]:
    """The pages the docs tests read: the root pages that exist, then docs/**/*.md."""
    pages = [repo / name for name in ROOT_PAGES if (repo / name).is_file()]
    return pages + sorted((repo / "docs").rglob("*.md"))


def _language(info: str) -> str:
    word = info.strip().split(maxsplit=1)[0] if info.strip() else ""
    return word.strip("{}").lstrip(".").lower()


@functools.cache
def parse_page(path: Path) -> Page:
    """Reads one page: its fenced blocks with their markers, its prose's code spans and links."""
    path = Path(path)
    page = Page(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    previous_block: Block | None = None
    previous_end = -1  # index of the previous block's closing fence
    i = 0
    while i < len(lines):
        line = lines[i]
        opening = FENCE.match(line)
        if not opening:
            stripped = line.strip()
            if ANY_MARKER.match(stripped):
                following = lines[i + 1] if i + 1 < len(lines) else ""
                if not FENCE.match(following):
                    page.problems.append(
                        Problem(path, i + 1, f"marker {stripped} is not right before a fence")
                    )
            else:
                _scan_prose(page, i + 1, line)
            i += 1
            continue
        fence, indent = opening["fence"], len(opening["indent"])
        body, j = [], i + 1
        closing = re.compile(rf"^\s*{re.escape(fence[0])}{{{len(fence)},}}\s*$")
        while j < len(lines) and not closing.match(lines[j]):
            # the fence's own indentation comes off (a block inside a list item); the code's
            # stays (a heredoc's Python)
            body.append(lines[j][indent:] if not lines[j][:indent].strip() else lines[j].lstrip())
            j += 1
        block = Block(path, i + 1, _language(opening["info"]), "\n".join(body) + "\n")
        _read_marker(page, block, lines[i - 1].strip() if i else "")
        if block.marker == "output":
            between = lines[previous_end + 1 : i - 1]
            if block.language not in OUTPUT_LANGUAGES:
                page.problems.append(
                    Problem(path, i + 1, f"an output block is ```text, not ```{block.language}")
                )
            elif (
                previous_block is None
                or not previous_block.runnable
                or previous_block.output is not None
                or any(text.strip() for text in between)
            ):
                page.problems.append(
                    Problem(path, i + 1, "output block not right after a runnable block")
                )
            else:
                previous_block.output = block
        page.blocks.append(block)
        previous_block, previous_end = block, j
        i = j + 1
    return page


def _read_marker(page: Page, block: Block, before: str) -> None:
    check = CHECK_MARKER.match(before)
    if before == RUN_MARKER:
        block.marker = "run"
    elif check:
        block.marker, block.reason = "check", check[1]
    elif before == OUTPUT_MARKER:
        block.marker = "output"
    elif ANY_MARKER.match(before):
        page.problems.append(
            Problem(
                page.path,
                block.line,
                f"unknown marker {before} (use {RUN_MARKER}, <!-- docs: check, needs REASON -->"
                f" or {OUTPUT_MARKER})",
            )
        )
        return
    if block.shell and block.marker not in ("run", "check"):
        page.problems.append(
            Problem(
                page.path,
                block.line,
                f"```{block.language} block without a marker: put {RUN_MARKER} or "
                "<!-- docs: check, needs REASON --> on the line before its fence",
            )
        )
    elif block.marker == "run" and not block.runnable:
        page.problems.append(
            Problem(page.path, block.line, f"```{block.language} blocks cannot be run")
        )


def _scan_prose(page: Page, number: int, line: str) -> None:
    for match in INLINE_CODE.finditer(line):
        text = match[2]
        if text.startswith(" ") and text.endswith(" ") and text.strip():
            text = text[1:-1]
        page.spans.append((number, text))
    prose = INLINE_CODE.sub("", line)
    for match in LINK.finditer(prose):
        page.links.append((number, match[1]))
    reference = REFERENCE_LINK.match(prose)
    if reference:
        page.links.append((number, reference[1]))


def marker_problems(paths: list[Path]) -> list[Problem]:
    """Every missing, unknown or misplaced marker on the pages."""
    return [problem for path in paths for problem in parse_page(Path(path)).problems]


# ---- shell commands --------------------------------------------------------------------------

SEPARATORS = {"|", "||", "&&", ";", "&", "(", ")", "|&", ";;", "$", "{", "}", "`"}
KEYWORDS = {
    "if",
    "then",
    "else",
    "elif",
    "do",
    "while",
    "until",
    "!",
    "time",
    "nohup",
    "exec",
    "env",
    "sudo",
}


def _logical_lines(script: str) -> list[tuple[int, str]]:
    """(0-based offset of the first line, text) per command line: continuations joined,
    heredoc bodies left out."""
    result: list[tuple[int, str]] = []
    lines = script.splitlines()
    i = 0
    while i < len(lines):
        start, text = i, lines[i]
        while text.rstrip().endswith("\\") and i + 1 < len(lines):
            i += 1
            text = text.rstrip()[:-1] + " " + lines[i]
        result.append((start + 1, text))
        heredoc = HEREDOC.search(text)
        i += 1
        if heredoc:
            while i < len(lines) and lines[i].strip() != heredoc[2]:
                i += 1
            i += 1
    return result


def _tokens(text: str) -> list[str]:
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        return list(lexer)
    except ValueError:  # an unbalanced quote: judge the words as they stand
        return text.split("#", 1)[0].split()


def shell_commands(script: str) -> list[tuple[int, list[str]]]:
    """The simple commands of a shell script, as (line offset from the block's fence, argv):
    split at pipes, ``&&``, ``;`` and ``$(...)``; redirections, variable assignments and
    ``time``/``env``/``timeout`` wrappers dropped."""
    commands = []
    for offset, text in _logical_lines(script):
        for inner in re.findall(r"\$\(([^()]*)\)", text):  # "$(...)" inside quotes too
            commands += [(offset, argv) for argv in _split_commands(inner)]
        commands += [(offset, argv) for argv in _split_commands(text)]
    return commands


def _split_commands(text: str) -> list[list[str]]:
    commands, current = [], []
    tokens = _tokens(text)
    skip = False
    for token in tokens:
        if skip:
            skip = False
            continue
        if token in SEPARATORS:
            commands.append(current)
            current = []
        elif set(token) <= set("<>&") and set(token) & set("<>"):
            if current and current[-1] in ("1", "2") and re.search(rf"{current[-1]}>", text):
                current.pop()  # a file descriptor: 2> err.log
            skip = not token.endswith("&")  # the target file; >&2 has its own token
        else:
            current.append(token)
    commands.append(current)
    return [argv for argv in map(_unwrap, commands) if argv]


def _unwrap(argv: list[str]) -> list[str]:
    argv = list(argv)
    while argv:
        word = argv[0]
        if word in KEYWORDS or re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", word):
            argv.pop(0)
        elif word == "timeout":
            argv = argv[2:]
        elif os.path.basename(word) == "time":  # /usr/bin/time -v / -f FORMAT
            argv.pop(0)
            while argv and argv[0].startswith("-"):
                flag = argv.pop(0)
                if flag in ("-f", "-o", "--format", "--output") and argv:
                    argv.pop(0)
        else:
            break
    return argv


# ---- parsers ---------------------------------------------------------------------------------


@functools.cache
def namesake_parser() -> argparse.ArgumentParser:
    from namesake.cli import build_parser

    return build_parser()


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parser's subcommands by name (aliases included); empty for a leaf command."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def namesake_commands() -> dict[tuple[str, ...], argparse.ArgumentParser]:
    """Every command path of the ``namesake`` CLI (the root is ``()``) and its parser."""
    found = {}

    def walk(path: tuple[str, ...], parser: argparse.ArgumentParser) -> None:
        found[path] = parser
        for name, sub in subcommands(parser).items():
            walk((*path, name), sub)

    walk((), namesake_parser())
    return found


def option_strings(parser: argparse.ArgumentParser) -> set[str]:
    return set(parser._option_string_actions)


def check_namesake(argv: list[str], where: str = "namesake") -> list[str]:
    """What is wrong with a ``namesake ...`` command line (argv without ``namesake``): an
    unknown subcommand or a flag its parser does not accept."""
    parser, path, i = namesake_parser(), ["namesake"], 0
    while i < len(argv):
        choices = subcommands(parser)
        if not choices or argv[i].startswith("-"):
            break
        if argv[i] not in choices:
            return [f"`{' '.join(path)}` has no subcommand `{argv[i]}` ({', '.join(choices)})"]
        parser = choices[argv[i]]
        path.append(argv[i])
        i += 1
    if subcommands(parser) and not {"-h", "--help"} & set(argv[i:]):
        return [f"`{' '.join(path)}` needs a subcommand ({', '.join(subcommands(parser))})"]
    return [
        f"`{' '.join(path)}` has no flag `{flag}`"
        for flag in flags_used(argv[i:])
        if flag not in option_strings(parser)
    ]


def flags_used(args: list[str]) -> list[str]:
    """The flags among the arguments (up to ``--``): ``--x=1`` is ``--x``; ``-1`` is a value;
    ``--$mode`` is the shell's to fill in; ``[--workers N]`` shows an optional flag."""
    flags = []
    for arg in args:
        if arg == "--":
            break
        arg = arg.lstrip("[").rstrip("]")  # usage-style optional parts: [--workers N]
        if arg.startswith("-") and arg != "-" and not re.match(r"^-\d", arg) and "$" not in arg:
            flags.append(arg.split("=", 1)[0])
    return flags


def repo_scripts(repo: Path = REPO) -> list[str]:
    return sorted(
        str(path.relative_to(repo)) for pattern in SCRIPT_GLOBS for path in repo.glob(pattern)
    )


@functools.cache
def script_parsers(scripts: tuple[str, ...], repo: Path = REPO) -> dict[str, dict]:
    """{script: {"flags": [...]} or {"error": why}} for the repository's scripts, read in one
    subprocess (the scripts import torch and more; none of it stays in the test process), in
    an empty temporary folder (whatever a script might do before parsing lands there)."""
    if not scripts:
        return {}
    with tempfile.TemporaryDirectory() as folder:
        result = _dump_in(folder, scripts, repo)
    if result.returncode:
        raise RuntimeError(f"reading the scripts' parsers failed:\n{result.stderr[-3000:]}")
    parsers = json.loads(result.stdout.strip().splitlines()[-1])
    for script, forward in FORWARDED.items():
        if "flags" in parsers.get(script, {}):
            parsers[script]["flags"] += sorted(option_strings(namesake_commands()[forward]))
    return parsers


def _dump_in(folder: str, scripts: tuple[str, ...], repo: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--dump-parsers", str(repo), *scripts],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"},
    )


@functools.cache
def accelerate_launch_flags() -> frozenset[str]:
    from accelerate.commands.launch import launch_command_parser

    return frozenset(option_strings(launch_command_parser()))


@functools.cache
def make_targets(makefile: Path = REPO / "Makefile") -> frozenset[str]:
    targets = set()
    for line in makefile.read_text(encoding="utf-8").splitlines():
        rule = re.match(r"^([A-Za-z0-9_.%/-]+(?:[ \t]+[A-Za-z0-9_.%/-]+)*)[ \t]*:(?![=:])", line)
        if rule:
            targets.update(rule[1].split())
    return frozenset(target for target in targets if not target.startswith("."))


SCRIPT_WAIT_S = 60


class _Caught(Exception):
    def __init__(self, parser: argparse.ArgumentParser) -> None:
        self.parser = parser


def _dump_parsers(repo: Path, scripts: list[str]) -> None:
    """Runs each script as ``__main__`` with argparse's parsing replaced by a trap that
    raises with the parser: its flags, without any of the script's work. A script whose text
    never parses arguments is not run (it takes no flags); one that has not asked within
    `SCRIPT_WAIT_S` is stopped."""
    import contextlib
    import io
    import runpy
    import signal

    def trap(self, args=None, namespace=None):
        raise _Caught(self)

    def too_long(signum, frame):
        raise TimeoutError(f"it did not ask argparse to parse within {SCRIPT_WAIT_S} s")

    signal.signal(signal.SIGALRM, too_long)

    argparse.ArgumentParser.parse_known_args = trap
    argparse.ArgumentParser.parse_args = trap
    if hasattr(argparse.ArgumentParser, "parse_known_intermixed_args"):
        argparse.ArgumentParser.parse_known_intermixed_args = trap
        argparse.ArgumentParser.parse_intermixed_args = trap
    found = {}
    for script in scripts:
        path = repo / script
        if not re.search(r"pars|argv", path.read_text(encoding="utf-8")):
            found[script] = {"flags": []}
            continue
        sys.argv = [str(path), "--help"]
        sys.path.insert(0, str(path.parent))  # as `python script` would
        try:
            signal.alarm(SCRIPT_WAIT_S)
            with contextlib.redirect_stdout(io.StringIO()):
                runpy.run_path(str(path), run_name="__main__")
            found[script] = {"error": "it never asked argparse to parse its arguments"}
        except _Caught as caught:
            flags = option_strings(caught.parser)
            for sub in subcommands(caught.parser).values():
                flags |= option_strings(sub)
            found[script] = {"flags": sorted(flags)}
        except BaseException as exc:  # noqa: BLE001 - reported per script, never fatal
            found[script] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
        finally:
            signal.alarm(0)
            sys.path.pop(0)
    print(json.dumps(found))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--dump-parsers"]:
        sys.path.insert(0, sys.argv[2])
        _dump_parsers(Path(sys.argv[2]), sys.argv[3:])
