"""Lewis et al. (2021)'s train-test overlap annotations: which test questions of NQ, TriviaQA
and WebQuestions overlap with their training sets, the subsets the ECQG paper reports
(no-answer-overlap, no-question-overlap).

Their files (facebookresearch/QA-Overlap, ``data/<dataset>-annotations.jsonl``) hold one JSON
object per test question, ``{"id": i, "labels": [...], ...}``, where ``i`` is the 0-based line
of the question in the test file (``<dataset>-test.qa.csv``, DPR's ``qas`` format) and the
labels are among :data:`LABELS` (their ``evaluate.py`` reads nothing else).
"""

from __future__ import annotations

import json
import os

from namesake.dumps.reading import iter_text_lines
from namesake.errors import BadInputError

#: the labels of QA-Overlap's evaluate.py, in its order
LABELS = (
    "total",
    "question_overlap",
    "no_question_overlap",
    "answer_overlap",
    "no_answer_overlap",
    "answer_overlap_only",
)


def read_overlap_annotations(
    path: str | os.PathLike, num_questions: int
) -> dict[str, frozenset[int]]:
    """Label → the test-file indexes (0-based lines) annotated with it, for a test file of
    `num_questions` lines; every malformed line, unknown label or id outside the test file is
    an error naming the file and line."""
    subsets: dict[str, set[int]] = {label: set() for label in LABELS}
    seen: set[int] = set()
    for number, line in iter_text_lines(path):
        try:
            record = json.loads(line)
            question, labels = record["id"], record["labels"]
        except (json.JSONDecodeError, KeyError, TypeError):
            raise BadInputError(path, number, 'expected {"id": N, "labels": [...]}') from None
        if not isinstance(question, int) or not 0 <= question < num_questions:
            message = f"id {question!r} is not a line of the {num_questions}-line test file"
            raise BadInputError(path, number, message)
        if question in seen:
            raise BadInputError(path, number, f"id {question} annotated twice")
        seen.add(question)
        unknown = [label for label in labels if label not in subsets]
        if unknown:
            raise BadInputError(path, number, f"unknown label(s) {unknown}; known: {LABELS}")
        for label in labels:
            subsets[label].add(question)
    return {label: frozenset(ids) for label, ids in subsets.items() if ids}
