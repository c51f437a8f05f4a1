"""README's section "How much does my retriever favour popular namesakes?" is code: every
flag its commands name exists on that command, and the leaderboard rows it quotes carry the
columns the command prints."""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path

from namesake.amber.evaluation.leaderboard import POPULARITY_COLUMNS
from namesake.cli import build_parser

README = Path(__file__).resolve().parents[1] / "README.md"
TITLE = "## How much does my retriever favour popular namesakes?"


def _section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index(TITLE)
    return text[start : text.index("\n## ", start + len(TITLE))]


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


def test_every_flag_of_the_section_s_commands_exists():
    commands = _commands(_section())
    assert [command[1] for command in commands] == ["leaderboard", "evaluate"]
    for command in commands:
        flags = {word for word in command if word.startswith("--")}
        assert flags and flags <= _options(command[1]), command[1]


def test_the_quoted_leaderboard_has_the_command_s_popularity_columns():
    header = next(line for line in _section().splitlines() if line.startswith("| Rank |"))
    for title, _ in POPULARITY_COLUMNS:
        assert f"| {title} |" in header + " |"
