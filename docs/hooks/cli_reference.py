"""mkdocs hook: the CLI reference, rendered from the ``namesake`` argparse parsers at build time.

docs/reference/cli.md holds the placeholder ``<!-- namesake-cli -->``; this hook replaces it
with every command of `namesake.cli.build_parser` (each one's summary, description, usage and
arguments), so the reference is never written by hand and never drifts from the parser.
"""

from __future__ import annotations

import argparse
import html
import re

PLACEHOLDER = "<!-- namesake-cli -->"
WIDTH = 96  # the usage lines' width: fixed, so the page does not depend on the terminal


def on_page_markdown(markdown: str, page, config, files) -> str:
    if PLACEHOLDER not in markdown:
        return markdown
    from namesake.cli import build_parser

    return markdown.replace(PLACEHOLDER, render(build_parser()))


def render(parser: argparse.ArgumentParser) -> str:
    """The reference of `parser` and all its subcommands, depth first, as Markdown."""
    sections: list[str] = []
    _command(parser, [parser.prog], None, sections)
    return "\n".join(sections)


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, str | None, object]]:
    """(name, one-line help, parser) of each subcommand, in the order they were added."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            seen, found = set(), []
            for name, sub in action.choices.items():
                if id(sub) not in seen:  # an alias repeats its parser
                    seen.add(id(sub))
                    found.append((name, helps.get(name), sub))
            return found
    return []


def _anchor(path: list[str]) -> str:
    return "-".join(path)


def _command(parser, path: list[str], summary: str | None, sections: list[str]) -> None:
    level = "#" * min(len(path) + 1, 6)
    name = " ".join(path)
    sections.append(f"{level} {name} {{ #{_anchor(path)} }}\n")
    if summary:
        sections.append(f"*{_text(summary[:1].upper() + summary[1:])}*\n")
    if parser.description and parser.description != summary:
        sections.append(_paragraphs(parser.description, parser.prog) + "\n")
    formatter = parser.formatter_class(prog=parser.prog, width=WIDTH)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)
    sections.append(f"```text\n{formatter.format_help().strip()}\n```\n")
    subcommands = _subcommands(parser)
    if subcommands:
        rows = [
            f"| [`{name} {sub_name}`](#{_anchor([*path, sub_name])}) | {_cell(help or '')} |"
            for sub_name, help, _ in subcommands
        ]
        sections.append("| Command | What it does |\n| --- | --- |\n" + "\n".join(rows) + "\n")
    arguments = [
        action
        for action in parser._actions
        if not isinstance(action, argparse._HelpAction | argparse._SubParsersAction)
        and action.help != argparse.SUPPRESS
    ]
    if arguments:
        rows = [
            f"| {_cell(_signature(parser, action))} | {_cell(_help(parser, action))} |"
            for action in arguments
        ]
        sections.append("| Argument | Meaning |\n| --- | --- |\n" + "\n".join(rows) + "\n")
    for sub_name, help, sub in subcommands:
        _command(sub, [*path, sub_name], help, sections)


def _signature(parser, action: argparse.Action) -> str:
    formatter = parser.formatter_class(prog=parser.prog, width=WIDTH)
    if action.option_strings:
        metavar = ""
        if action.nargs != 0:
            default = formatter._get_default_metavar_for_optional(action)
            metavar = " " + formatter._format_args(action, default)
        return ", ".join(f"`{flag}{metavar}`" for flag in action.option_strings)
    default = formatter._get_default_metavar_for_positional(action)
    return f"`{formatter._format_args(action, default)}`"


def _help(parser, action: argparse.Action) -> str:
    formatter = parser.formatter_class(prog=parser.prog, width=WIDTH)
    text = _text(formatter._expand_help(action)) if action.help else ""
    extras = []
    if action.required and action.option_strings:
        extras.append("required")
    if action.choices is not None and action.metavar is not None:  # else the usage shows them
        extras.append("one of " + ", ".join(f"`{choice}`" for choice in action.choices))
    has_default = action.default not in (None, False, argparse.SUPPRESS, [])
    if has_default and action.nargs != 0 and "default" not in text:
        default = action.default
        if isinstance(default, list | tuple):
            default = " ".join(map(str, default))
        if f"({default})" not in text:  # "(20)": the help says it already
            extras.append(f"default: `{default}`")
    if extras:
        text = f"{text} ({'; '.join(extras)})" if text else "; ".join(extras).capitalize()
    return text


def _paragraphs(text: str, prog: str) -> str:
    """A description as argparse prints it (``%(prog)s`` filled in), in Markdown paragraphs."""
    text = text % {"prog": prog} if "%(prog)" in text else text.replace("%%", "%")
    return "\n\n".join(
        _text(" ".join(paragraph.split())) for paragraph in re.split(r"\n\s*\n", text.strip())
    )


def _text(text: str) -> str:
    """Help text as literal Markdown: outside its code spans (backquotes that pair up), HTML
    and emphasis characters escaped; an unpaired backquote escaped too."""
    parts = re.split(r"(`+[^`]+`+)", text)
    return "".join(part if index % 2 else _escape(part) for index, part in enumerate(parts))


def _escape(text: str) -> str:
    text = html.escape(text, quote=False)
    return re.sub(r"([*_`\[\]\\])", r"\\\1", text)


def _cell(text: str) -> str:
    return text.replace("|", r"\|").replace("\n", " ")
