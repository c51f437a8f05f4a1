"""The errors that name a bad input: the one-line error of the command line, the malformed
file (its path and line), the tally of bad lines a lenient pass counts, and what is wrong
with a JSON line, said in words.
"""

from __future__ import annotations

import itertools
import os
import re
from collections import Counter
from collections.abc import Iterable


class NamesakeError(Exception):
    """An error the command line reports in one line, without a traceback."""


def describe_os_error(exc: OSError) -> str:
    """An error of the system on a path, in one line: 'PATH: Is a directory', 'A -> B:
    Permission denied', or the error's own words where it names no path."""
    paths = [str(name) for name in (exc.filename, exc.filename2) if name is not None]
    if not paths:
        return str(exc)
    return f"{' -> '.join(paths)}: {exc.strerror or exc}"


class BadInputError(NamesakeError, ValueError):
    """An input file is malformed; names the file and, where known, the line."""

    def __init__(self, path: str | os.PathLike, line: int | None, message: str):
        self.path, self.line, self.message = str(path), line, message
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")

    def __reduce__(self):  # keep the three fields when raised inside a worker process
        return (type(self), (self.path, self.line, self.message))


class InputProblems:
    """Tallies bad input lines: raises on the first one in strict mode, else counts them,
    keeping the first few lines of each kind and what was wrong with each (`summary`)."""

    MAX_EXAMPLES = 3

    def __init__(self, strict: bool = False):
        self.strict = strict
        self.counts: Counter[tuple[str, str]] = Counter()
        self.examples: dict[tuple[str, str], list[int | None]] = {}
        self.details: dict[tuple[str, str], list[str]] = {}  # beside `examples`, line for line

    def report(self, path: str | os.PathLike, line: int | None, kind: str, detail: str = ""):
        if self.strict:
            raise BadInputError(path, line, f"{kind}{': ' + detail if detail else ''}")
        key = (str(path), kind)
        self.counts[key] += 1
        examples = self.examples.setdefault(key, [])
        if len(examples) < self.MAX_EXAMPLES:
            examples.append(line)
            self.details.setdefault(key, []).append(detail)

    def merge(self, path: str | os.PathLike, problems: Iterable[tuple[int, str, str]]):
        for line, kind, detail in problems:
            self.report(path, line, kind, detail)

    def total(self) -> int:
        return sum(self.counts.values())

    def summary(self) -> list[str]:
        """One line per file and kind: 'FILE: skipped 2 line(s): wrong type (line 91:
        sitelinks is a string, not an object; line 95: ...)'."""
        lines = []
        for (path, kind), count in sorted(self.counts.items()):
            numbers = self.examples.get((path, kind), [])
            details = self.details.get((path, kind), [])
            if any(details):
                where = "; ".join(
                    f"line {n}: {_shorten(d)}" if d else f"line {n}"
                    for n, d in itertools.zip_longest(numbers, details[: len(numbers)])
                )
            else:
                where = "e.g. line " + ", ".join(str(n) for n in numbers)
            lines.append(f"{path}: skipped {count} line(s): {kind} ({where})")
        return lines


def _shorten(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


#: how a JSON type reads in a message, by Python type of the decoded value (`json_type`) and
#: by msgspec's name for it (`describe_json_error`)
_JSON_TYPES = {
    type(None): "null",
    bool: "true or false",
    int: "a number",
    float: "a number",
    str: "a string",
    list: "a list",
    dict: "an object",
}
_MSGSPEC_TYPES = {
    "null": "null",
    "bool": "true or false",
    "int": "an integer",
    "float": "a number",
    "str": "a string",
    "array": "a list",
    "object": "an object",
}


def json_type(value: object) -> str:
    """'a string', 'a list', 'an object', 'a number', 'true or false' or 'null'."""
    return _JSON_TYPES.get(type(value), type(value).__name__)


def wrong_type(field: str, value: object, expected: str) -> str:
    """The reason a field of a decoded JSON record has the wrong type, in words:
    ``wrong_type("sitelinks", "x", "an object")`` -> 'sitelinks is a string, not an object'."""
    return f"{field} is {json_type(value)}, not {expected}"


def not_an_object(line: bytes) -> str:
    """Why a JSON line that is not '{...}' is not a record (the detail of a "not JSON" line
    that a pre-filter rejects before decoding)."""
    if line.startswith(b"{"):
        end = line[-40:].decode(errors="replace")
        return f"cut short: no closing '}}' (the line ends ...{end})"
    return f"not an object: the line starts {line[:40].decode(errors='replace')!r}"


#: what a typed msgspec decoder raises on a line that is not a record, besides its
#: DecodeError (ValidationError included): a string that is not UTF-8, nesting too deep
JSON_LINE_ERRORS: tuple[type[BaseException], ...] = (UnicodeDecodeError, RecursionError)


def describe_json_error(exc: BaseException) -> tuple[str, str]:
    """(kind, detail) of the error a typed decoder raised on one line, in words: ("not
    JSON", why), ("not UTF-8", where), ("missing field id", "in output"), ("wrong type",
    "output.provenance is a string, not a list"), else ("invalid field", msgspec's words).
    The kind groups lines in `InputProblems`; the detail is the line's own."""
    import msgspec

    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8", f"byte {exc.object[exc.start : exc.end].hex()} ({exc.reason})"
    if isinstance(exc, RecursionError):
        return "not JSON", "nested too deeply"
    text = str(exc)
    if not isinstance(exc, msgspec.ValidationError):
        return "not JSON", text
    message, _, at = text.partition(" - at `")
    location = at.removesuffix("`").removeprefix("$").removeprefix(".")
    missing = re.fullmatch(r"Object missing required field `(.*)`", message)
    if missing:
        return f"missing field {missing[1]}", f"in {location}" if location else ""
    types = re.fullmatch(r"Expected `(.*)`, got `(.*)`", message)
    if types:
        expected = " or ".join(_MSGSPEC_TYPES.get(t, t) for t in types[1].split(" | "))
        got = _MSGSPEC_TYPES.get(types[2], types[2])
        got = "a number" if types[2] in ("int", "float") else got
        return "wrong type", f"{location or 'the line'} is {got}, not {expected}"
    return "invalid field", f"{location}: {message}" if location else message
