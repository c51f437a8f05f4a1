"""Human-judged QA answers: EVOUNA's release format and a plain JSONL, read into one record list.

Two input formats, told apart by each file's first record:

- **EVOUNA** (Wang et al., "Evaluating Open-QA Evaluation", NeurIPS 2023 Datasets & Benchmarks;
  github.com/wangcunxiang/QA-Eval): one question per line with ``question``, ``golden_answer``
  (gold answers joined by ``/``), ``answer_<system>`` and ``judge_<system>`` per system (``judge``
  true/false: judged correct by people; null: not judged) and ``improper`` (true: an
  inappropriate question, left out). The dataset is the file name less ``evouna_`` and its
  suffixes (``evouna_nq.jsonl.bz2`` -> ``nq``).
- **plain**: one judged answer per line with ``question``, ``references`` (a non-empty list of
  strings), ``candidate`` and ``label`` (true/false or 1/0), optionally ``dataset`` (default: the
  file name less its suffixes), ``system`` (default "") and ``question_id``.

Files may be plain, ``.bz2`` or ``.gz`` (told by their magic bytes). Malformed input raises
``BadInputError`` naming the file, the line and the field. Answers that cannot be judged are
dropped and counted, never silently (``JudgedAnswers.dropped``): answers of an improper question,
answers not judged (``judge`` null), a null answer and an answer that is empty or only
whitespace. Empty pieces of a ``golden_answer`` (``a//b``) are skipped and counted too.

Each record gets:

- ``kind``: "short" when the candidate has at most ``SHORT_ANSWER_MAX_TOKENS`` (5) tokens after
  SQuAD normalisation (``namesake.text.squad_normalize``), else "sentence";
- ``split``: "dev" or "test", question-disjoint and deterministic: the parity of the first 8
  bytes of SHA-256 of ``dataset + "\\n" + squad_normalize(question)`` (about 50/50; every answer to
  a question, and every repeat of a question, falls on the same side);
- ``question_id``: the given one (plain format) or ``<dataset>-<first 12 hex digits of that
  hash>``.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from namesake.data import DATA_DIR
from namesake.dumps.reading import iter_text_lines
from namesake.errors import BadInputError, NamesakeError
from namesake.text import squad_normalize

SHORT_ANSWER_MAX_TOKENS = 5
"""A candidate with at most this many SQuAD-normalised tokens is a "short" answer."""

SPLITS = ("dev", "test")
KINDS = ("short", "sentence")
EVOUNA_DIR = DATA_DIR / "evouna"
EVOUNA_FILES = ("evouna_nq.jsonl.bz2", "evouna_tq.jsonl.bz2")
_SUFFIXES = (".bz2", ".gz", ".jsonl", ".json")


@dataclass(frozen=True, slots=True)
class JudgedAnswer:
    """One candidate answer to a question, with its gold answers and a person's judgement."""

    dataset: str
    question: str
    references: tuple[str, ...]
    candidate: str
    label: int  # 1: judged correct
    system: str  # EVOUNA's system (fid, gpt35, chatgpt, gpt4, newbing); "" when not given
    kind: str  # "short" or "sentence"
    split: str  # "dev" or "test"
    question_id: str


@dataclass
class JudgedAnswers:
    """The records read, and what was left out: ``dropped[(file, reason)] = answers``."""

    records: list[JudgedAnswer] = field(default_factory=list)
    dropped: Counter = field(default_factory=Counter)
    notes: Counter = field(default_factory=Counter)  # oddities of kept answers (empty gold pieces)

    def to_table(self):
        """The records as a pyarrow Table (references a list<string> column)."""
        import pyarrow as pa

        rows = [asdict(r) | {"references": list(r.references)} for r in self.records]
        schema = pa.schema(
            [
                ("dataset", pa.string()),
                ("question", pa.string()),
                ("references", pa.list_(pa.string())),
                ("candidate", pa.string()),
                ("label", pa.int8()),
                ("system", pa.string()),
                ("kind", pa.string()),
                ("split", pa.string()),
                ("question_id", pa.string()),
            ]
        )
        return pa.Table.from_pylist(rows, schema=schema)

    def dropped_lines(self) -> list[str]:
        """One line per (file, reason) left out or noted, for a report."""
        lines = [f"dropped {n} answer(s) from {f}: {why}" for (f, why), n in self.dropped.items()]
        lines += [f"note {f}: {n} {what}" for (f, what), n in self.notes.items()]
        return lines


def evouna_paths() -> list[Path]:
    """The EVOUNA files shipped in ``namesake/data/evouna/`` (NQ and TQ)."""
    paths = [EVOUNA_DIR / name for name in EVOUNA_FILES]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise NamesakeError(f"EVOUNA is missing from this installation: {', '.join(missing)}")
    return paths


def answer_kind(candidate: str) -> str:
    """ "short" (at most SHORT_ANSWER_MAX_TOKENS SQuAD-normalised tokens) or "sentence"."""
    tokens = len(squad_normalize(candidate).split())
    return "short" if tokens <= SHORT_ANSWER_MAX_TOKENS else "sentence"


def _question_hash(dataset: str, question: str) -> bytes:
    return hashlib.sha256(f"{dataset}\n{squad_normalize(question)}".encode()).digest()


def question_split(dataset: str, question: str) -> str:
    """ "dev" or "test" for every answer to this question (see the module docstring)."""
    return SPLITS[int.from_bytes(_question_hash(dataset, question)[:8], "big") % 2]


def dataset_name(path: str | os.PathLike) -> str:
    """The file name less its suffixes and an ``evouna_`` prefix: ``evouna_nq.jsonl.bz2`` -> nq."""
    name = Path(path).name
    while name.endswith(_SUFFIXES):
        name = name[: name.rfind(".")]
    return name.removeprefix("evouna_")


def _json_objects(path: Path) -> Iterator[tuple[int, dict]]:
    """(line number, object) of each non-empty line of a JSONL file; a missing file, a line
    that is not JSON or not an object raises, naming the file and the line."""
    for line, text in iter_text_lines(path):
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise BadInputError(path, line, f"not JSON: {exc.msg}") from None
        if not isinstance(obj, dict):
            raise BadInputError(path, line, "not a JSON object")
        yield line, obj


def _string(path, line, obj, key) -> str:
    value = obj.get(key)
    if key not in obj:
        raise BadInputError(path, line, f"field {key!r} is missing")
    if not isinstance(value, str):
        raise BadInputError(path, line, f"field {key!r} is {type(value).__name__}, not a string")
    return value


def _label(path, line, key, value) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int) and value in (0, 1):
        return value
    raise BadInputError(path, line, f"field {key!r} must be true/false or 1/0, got {value!r}")


def _record(dataset, question, references, candidate, label, system, question_id=None):
    digest = _question_hash(dataset, question)
    return JudgedAnswer(
        dataset=dataset,
        question=question,
        references=tuple(references),
        candidate=candidate,
        label=label,
        system=system,
        kind=answer_kind(candidate),
        split=SPLITS[int.from_bytes(digest[:8], "big") % 2],
        question_id=question_id or f"{dataset}-{digest.hex()[:12]}",
    )


def _read_evouna(path, line, obj, dataset, out: JudgedAnswers) -> list[JudgedAnswer]:
    systems = sorted(k.removeprefix("judge_") for k in obj if k.startswith("judge_"))
    improper = obj.get("improper", False)
    if not isinstance(improper, bool):
        raise BadInputError(path, line, f"field 'improper' must be true/false, got {improper!r}")
    if improper:
        judged = sum(isinstance(obj.get(f"judge_{s}"), bool) for s in systems)
        out.dropped[(str(path), "judged answer to an improper question (left out)")] += judged
        out.notes[(str(path), "improper question(s) left out")] += 1
        return []
    question = _string(path, line, obj, "question")
    gold = _string(path, line, obj, "golden_answer")
    pieces = [p.strip() for p in gold.split("/")]
    references = [p for p in pieces if p]
    if not references:
        raise BadInputError(path, line, "field 'golden_answer' holds no answer")
    if len(references) < len(pieces):
        skipped = len(pieces) - len(references)
        out.notes[(str(path), "empty golden_answer piece(s) skipped")] += skipped
    records = []
    for system in systems:
        judge = obj[f"judge_{system}"]
        if judge is None:
            out.dropped[(str(path), "not judged (judge null)")] += 1
            continue
        label = _label(path, line, f"judge_{system}", judge)
        answer = obj.get(f"answer_{system}")
        if answer is None:
            out.dropped[(str(path), "judged but no answer (answer null)")] += 1
            continue
        if not isinstance(answer, str):
            raise BadInputError(
                path, line, f"field 'answer_{system}' is {type(answer).__name__}, not a string"
            )
        if not answer.strip():
            out.dropped[(str(path), "empty answer (only whitespace)")] += 1
            continue
        records.append(_record(dataset, question, references, answer, label, system))
    return records


def _read_plain(path, line, obj, dataset, out: JudgedAnswers) -> list[JudgedAnswer]:
    question = _string(path, line, obj, "question")
    candidate = _string(path, line, obj, "candidate")
    if "references" not in obj:
        raise BadInputError(path, line, "field 'references' is missing")
    references = obj["references"]
    if not isinstance(references, list) or not all(isinstance(r, str) for r in references):
        raise BadInputError(path, line, "field 'references' must be a list of strings")
    if not any(r.strip() for r in references):
        raise BadInputError(path, line, "field 'references' is empty")
    if "label" not in obj:
        raise BadInputError(path, line, "field 'label' is missing")
    label = _label(path, line, "label", obj["label"])
    dataset = _string(path, line, obj, "dataset") if "dataset" in obj else dataset
    system = _string(path, line, obj, "system") if "system" in obj else ""
    question_id = _string(path, line, obj, "question_id") if "question_id" in obj else None
    if not candidate.strip():
        out.dropped[(str(path), "empty answer (only whitespace)")] += 1
        return []
    refs = [r.strip() for r in references if r.strip()]
    if len(refs) < len(references):
        out.notes[(str(path), "empty reference(s) skipped")] += len(references) - len(refs)
    return [_record(dataset, question, refs, candidate, label, system, question_id)]


def read_judged(
    paths: Iterable[str | os.PathLike] | str | os.PathLike | None = None,
    *,
    max_questions: int | None = None,
) -> JudgedAnswers:
    """Judged answers from EVOUNA or plain JSONL files (default: the shipped EVOUNA).

    ``max_questions``: read the first N questions of each file only (a quick run; in the
    plain format, the answers to the first N distinct questions)."""
    if paths is None:
        paths = evouna_paths()
    elif isinstance(paths, str | os.PathLike):
        paths = [paths]
    out = JudgedAnswers()
    for path in map(Path, paths):
        dataset, fmt, seen = dataset_name(path), None, set()
        for line, obj in _json_objects(path):
            if fmt is None:
                fmt = "evouna" if "golden_answer" in obj else "plain"
            if max_questions is not None:
                key = obj.get("question") if fmt == "plain" else line
                if key not in seen and len(seen) >= max_questions:
                    break
                seen.add(key)
            reader = _read_evouna if fmt == "evouna" else _read_plain
            out.records.extend(reader(path, line, obj, dataset, out))
        if fmt is None:
            raise BadInputError(path, None, "no judged answer in this file")
    return out


WES_SPLITS = {"validation": "dev", "test": "test"}


def wes_judged_answers(folder: str | os.PathLike, config: str) -> list[JudgedAnswer]:
    """The validation and test pairs of a WES pairs config as judged answers: the link text
    is the candidate, the article title its one reference, `is_same` the label, no question;
    validation becomes the dev split, test the test split (WES splits by article). The
    dataset is named `wes-<config>`."""
    from namesake.wes.dataset import read_config

    records = []
    for wes_split, split in WES_SPLITS.items():
        rows = read_config(folder, config, wes_split).to_pylist()
        for row in rows:
            records.append(
                JudgedAnswer(
                    dataset=f"wes-{config}",
                    question="",
                    references=(row["article"],),
                    candidate=row["link_text"],
                    label=int(row["is_same"]),
                    system="",
                    kind=answer_kind(row["link_text"]),
                    split=split,
                    question_id=f"wes-{config}-{row['article']}",
                )
            )
    return records


def read_answers_to_score(path: str | os.PathLike) -> tuple[list, list, list | None]:
    """(predictions, references, questions) of a JSONL file of answers to score, one object
    a line with `prediction`, `references` (a non-empty list of strings) and optionally
    `question` (on every line or on none; questions None when on none). Any problem raises
    BadInputError naming the file, the line and the field; nothing is scored."""
    path = Path(path)
    predictions, references, questions = [], [], []
    for line, obj in _json_objects(path):
        predictions.append(_string(path, line, obj, "prediction"))
        refs = obj.get("references")
        if not isinstance(refs, list) or not refs:
            raise BadInputError(
                path, line, "field 'references' must be a non-empty list of strings"
            )
        for i, ref in enumerate(refs):
            if not isinstance(ref, str):
                raise BadInputError(
                    path,
                    line,
                    f"field 'references': item {i} is {type(ref).__name__}, not a string",
                )
        references.append(refs)
        has_question = "question" in obj
        if questions and (questions[0] is not None) != has_question:
            raise BadInputError(path, line, "field 'question' must be on every line or on none")
        questions.append(_string(path, line, obj, "question") if has_question else None)
    if not predictions:
        raise BadInputError(path, None, "no answer to score in this file")
    return predictions, references, None if questions[0] is None else questions
