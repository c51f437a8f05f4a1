"""The guide's section "N runs: how much does each favour popular namesakes?"
(docs/guides/evaluating-and-comparing.md, once README's "How much does my retriever favour
popular namesakes?") is code: every flag of its command exists on that command, and the
leaderboard it shows carries the columns the command prints. (tests/test_docs_blocks.py also
runs the block and checks the shown table against its output; this test says what the section
must keep, whatever the sample prints.)"""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path

from namesake.amber.evaluation.leaderboard import POPULARITY_COLUMNS
from namesake.cli import build_parser

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "guides" / "evaluating-and-comparing.md"
TITLE = "## N runs: how much does each favour popular namesakes?"


def _section() -> str:
    text = GUIDE.read_text(encoding="utf-8")
    start = text.index(TITLE)
    end = text.find("\n## ", start + len(TITLE))
    return text[start : end if end >= 0 else len(text)]


def _commands(section: str) -> list[list[str]]:
    (block,) = re.findall(r"```bash\n(.*?)```", section, flags=re.S)
    lines = block.replace("\\\n", " ").splitlines()
    return [shlex.split(line) for line in lines if line.startswith("namesake ")]


def _options(command: str) -> set[str]:
    groups = next(
        action
        for action in build_parser()._actions
        if isinstance(action, argparse._SubParsersAction)
    )
    parser = groups.choices[command]
    return {flag for action in parser._actions for flag in action.option_strings}


def test_every_flag_of_the_section_s_command_exists():
    commands = _commands(_section())
    assert [command[1] for command in commands] == ["leaderboard"]
    for command in commands:
        flags = {word for word in command if word.startswith("--")}
        assert flags and flags <= _options(command[1]), command[1]


def test_the_shown_leaderboard_has_the_command_s_popularity_columns():
    header = next(line for line in _section().splitlines() if line.startswith("| Rank |"))
    for title, _ in POPULARITY_COLUMNS:
        assert f"| {title} |" in header + " |"
