"""DPR's files: training data, test questions, and the passage string the encoders see.

- :func:`read_dpr_file`: DPR's JSON training format (a list of objects with ``question``,
  ``answers``, ``positive_ctxs``, ``hard_negative_ctxs``; JSON lines are read too). Items that
  lack a field are counted, reported with their index and skipped (``strict=True`` raises).
- :func:`read_qa_file`: DPR test files: ``question \\t ["answer", ...]`` CSV/TSV lines, or JSON.
"""

from __future__ import annotations

import io
import json
import logging
import os
from collections.abc import Mapping
from pathlib import Path

from namesake.dumps.reading import read_text
from namesake.errors import BadInputError
from namesake.retrieval.dense import passage_input

logger = logging.getLogger(__name__)

REQUIRED_FIELDS = ("question", "answers", "positive_ctxs")


class DPRFileError(ValueError):
    """A DPR file (or, with ``strict=True``, one of its items) that cannot be used."""


def _read_text(path: Path) -> str:
    """The file's text, read as every input is (`read_text`); a file that cannot be read is
    a DPRFileError, as every other fault of a DPR file."""
    try:
        return read_text(path)
    except BadInputError as error:
        raise DPRFileError(str(error)) from None


def _load_json_items(path: Path) -> list:
    text = _read_text(path)
    stripped = text.lstrip()
    if not stripped:
        return []
    if stripped.startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise DPRFileError(f"{path}: not valid JSON ({error})") from error
        return data
    items = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            items.append(json.loads(line))
        except json.JSONDecodeError as error:
            raise DPRFileError(f"{path}, line {number}: not valid JSON ({error})") from error
    return items


def _context(ctx, where: str) -> dict:
    if isinstance(ctx, str):
        return {"title": "", "text": ctx}
    if not isinstance(ctx, Mapping) or not isinstance(ctx.get("text"), str):
        raise DPRFileError(f"{where}: a passage must be an object with a string 'text'")
    return {**ctx, "title": str(ctx.get("title") or ""), "text": ctx["text"]}


def _problem(item, index: int) -> tuple[str | None, dict | None]:
    """(message, cleaned item) for one raw item; message None when the item is usable."""
    where = f"item {index}"
    if not isinstance(item, Mapping):
        return f"{where}: not a JSON object", None
    missing = [f for f in REQUIRED_FIELDS if f not in item]
    if missing:
        return f"{where}: missing field(s) {', '.join(missing)}", None
    question = item["question"]
    if not isinstance(question, str) or not question.strip():
        return f"{where}: empty or non-string 'question'", None
    answers = item["answers"]
    if isinstance(answers, str):
        answers = [answers]
    if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
        return f"{where}: 'answers' must be a list of strings", None
    try:
        positives = [_context(c, where) for c in item["positive_ctxs"] or []]
        negatives = [_context(c, where) for c in item.get("hard_negative_ctxs") or []]
    except DPRFileError as error:
        return str(error), None
    if not positives:
        return f"{where}: empty 'positive_ctxs'", None
    return None, {
        **item,
        "question": question,
        "answers": answers,
        "positive_ctxs": positives,
        "hard_negative_ctxs": negatives,
    }


def read_dpr_file(
    path: str | os.PathLike, strict: bool = False, report: dict | None = None
) -> list[dict]:
    """The usable items of a DPR-format training file.

    Each item has a non-empty string ``question``, ``answers`` (list of strings),
    ``positive_ctxs`` (non-empty list of ``{"title", "text"}``) and ``hard_negative_ctxs``
    (possibly empty: a missing ``hard_negative_ctxs`` is not an error). An item lacking a
    required field, or with one of the wrong type, is skipped with a logged message naming its
    index (0-based) and counted; with ``strict=True`` the first such item raises
    :class:`DPRFileError`. ``report``, when given, receives ``items``, ``kept``, ``skipped``
    and ``problems`` (the first 20 messages).
    """
    path = Path(path)
    raw = _load_json_items(path)
    if isinstance(raw, Mapping):  # some dumps wrap the list: {"data": [...]}
        raw = raw.get("data", [raw])
    if not isinstance(raw, list):
        raise DPRFileError(f"{path}: expected a JSON list of DPR items")
    kept, problems = [], []
    for index, item in enumerate(raw):
        message, cleaned = _problem(item, index)
        if message is None:
            kept.append(cleaned)
            continue
        if strict:
            raise DPRFileError(f"{path}: {message}")
        problems.append(message)
        if len(problems) <= 20:
            logger.warning("%s: %s; skipped", path, message)
    if problems:
        logger.warning(
            "%s: skipped %d of %d items with missing or bad fields", path, len(problems), len(raw)
        )
    if report is not None:
        report.update(items=len(raw), kept=len(kept), skipped=len(problems), problems=problems[:20])
    return kept


def _parse_answers(value: str, where: str) -> list[str]:
    value = value.strip()
    if value.startswith("["):
        try:
            answers = json.loads(value)
        except json.JSONDecodeError:
            import ast

            try:
                answers = ast.literal_eval(value)  # DPR's files use Python list literals
            except (ValueError, SyntaxError) as error:
                raise DPRFileError(f"{where}: answers are not a list ({error})") from error
        if not isinstance(answers, list):
            raise DPRFileError(f"{where}: answers are not a list")
        return [str(a) for a in answers]
    return [value] if value else []


def read_qa_file(path: str | os.PathLike, report: dict | None = None) -> list[dict]:
    """Questions and answers of a DPR test file: ``[{"question", "answers", "index"}]``.

    ``.json``/``.jsonl``: DPR items (only ``question`` and ``answers`` are needed). Anything
    else: DPR's ``qas`` CSV/TSV, one ``question <tab> ["answer", ...]`` per line (a comma
    separates the two columns when a line has no tab). Lines or items without a question or
    answers are skipped, logged and counted in ``report``. ``index`` is the question's 0-based
    item or line number in the file, whatever was skipped before it: the id that Lewis et al.'s
    overlap annotations give it (``namesake.ecqg.dpr.overlap``).
    """
    path = Path(path)
    rows, problems = [], []
    total = 0  # items or lines: every index a question can have
    if path.suffix.lower() in (".json", ".jsonl"):
        raw = _load_json_items(path)
        if isinstance(raw, Mapping):
            raw = raw.get("data", [raw])
        for index, item in enumerate(raw):
            total = index + 1
            if (
                not isinstance(item, Mapping)
                or not isinstance(item.get("question"), str)
                or not item["question"].strip()
                or "answers" not in item
            ):
                problems.append(f"item {index}: missing 'question' or 'answers'")
                continue
            answers = item["answers"]
            rows.append(
                {
                    "question": item["question"],
                    "answers": [answers] if isinstance(answers, str) else list(answers),
                    "index": index,
                }
            )
    else:
        import csv

        with io.StringIO(_read_text(path), newline="") as f:  # lines as a file gives them
            for number, line in enumerate(f, 1):
                total = number
                if not line.strip():
                    continue
                where = f"line {number}"
                if "\t" in line:
                    parts = line.rstrip("\r\n").split("\t")
                else:
                    parts = next(csv.reader([line]))
                if len(parts) < 2 or not parts[0].strip():
                    problems.append(f"{where}: expected 'question<TAB>[answers]'")
                    continue
                try:
                    answers = _parse_answers(parts[1], where)
                except DPRFileError as error:
                    problems.append(str(error))
                    continue
                rows.append({"question": parts[0].strip(), "answers": answers, "index": number - 1})
    for message in problems[:20]:
        logger.warning("%s: %s; skipped", path, message)
    if report is not None:
        report.update(kept=len(rows), skipped=len(problems), problems=problems[:20], total=total)
    return rows


def passage_string(ctx: Mapping, separator: str) -> str:
    """The encoder input for a DPR context (``title``, ``text``): as the DenseRetriever's."""
    return passage_input(str(ctx.get("title") or ""), ctx.get("text") or "", separator)
