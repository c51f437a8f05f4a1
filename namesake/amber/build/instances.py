"""Stage 5: task instances — question answering, slot filling and fact checking queries.

One query per (entity, distinguishing relation) for QA and SF, and a SUPPORTS plus a
REFUTES claim for FC, in the published ``<task>/amber_sets.jsonl`` layout. Template choice
is seeded by the QID and PID, so a rebuild picks the same templates as the published data.
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter, defaultdict

from namesake.amber.build.reference import Collection

TASKS = ("qa", "sf", "fc")
REFUTES_CANDIDATES = 50  # the published code keeps each PID's 50 most frequent values


def build_instances(tuples: list[dict], collection: Collection) -> tuple[dict[str, list], int]:
    """Returns ({task: AmbER sets with queries}, number of REFUTES claims omitted).

    A REFUTES claim needs a frequent value of the same property that is not among the
    entity's own values; where none exists the claim is omitted and counted.
    """
    frequent_values = _frequent_first_names(tuples)
    by_task: dict[str, list] = {task: [] for task in TASKS}
    omitted_refutes = 0
    for amber_set in tuples:
        name = amber_set["name"]
        task_sets = {task: {"name": name, "qids": {}} for task in TASKS}
        for qid, entity in amber_set["qids"].items():
            for task in TASKS:
                task_sets[task]["qids"][qid] = {
                    "is_head": entity["is_head"],
                    "popularity": entity["popularity"],
                    "wikipedia": entity["wikipedia"],
                    "queries": [],
                }
            for pid, relation in entity["pids"].items():
                seed = int(qid[1:] + pid[1:])
                values, additional = _answers(relation)
                output = {
                    "answer": values + additional,
                    "provenance": relation["provenance"],
                    "meta": {"values": values, "additional_values": additional},
                }
                qa_input = _template(collection.qa_templates[pid]["all"], seed)
                qa_input = qa_input.replace("$entity", name)
                sf_input = f"{name} [SEP] {relation['property']}"
                task_sets["qa"]["qids"][qid]["queries"].append(
                    _query(relation, pid, qa_input, output)
                )
                task_sets["sf"]["qids"][qid]["queries"].append(
                    _query(relation, pid, sf_input, output)
                )

                template = _template(collection.fc_templates[pid], seed)
                claims = [(_supported_value(relation), "SUPPORTS")]
                own = {value["aliases"][0] for value in relation["values"]}
                wrong = next((v for v in frequent_values[pid] if v not in own), None)
                if wrong is None:
                    omitted_refutes += 1
                else:
                    claims.append((wrong, "REFUTES"))
                for value, label in claims:
                    claim = template.replace("$entity", name).replace("$object", value)
                    task_sets["fc"]["qids"][qid]["queries"].append(
                        _query(relation, pid, claim, {**output, "answer": label})
                    )
        for task in TASKS:
            by_task[task].append(task_sets[task])
    return by_task, omitted_refutes


def _template(templates: list[str], seed: int) -> str:
    return random.Random(seed).choice(templates)


def _query(relation: dict, pid: str, text: str, output: dict) -> dict:
    query_hash = hashlib.md5(text.encode("utf-8")).hexdigest()
    return {
        "id": f"{relation['amber_id']}={query_hash}",
        "input": text,
        "output": output,
        "meta": {"pid": pid},
    }


def _answers(relation: dict) -> tuple[list[str], list[str]]:
    values = [name for value in relation["values"] for name in value["aliases"]]
    additional = [name for value in relation["values"] for name in value["additional_aliases"]]
    return values, additional


def _supported_value(relation: dict) -> str:
    """First name of the first value found in a gold passage (aligned relations have one)."""
    return next(v["aliases"][0] for v in relation["values"] if v["found_in_passage"])


def _frequent_first_names(tuples: list[dict]) -> dict[str, list[str]]:
    """PID -> its values' first names, most frequent first (ties: first seen), top 50."""
    counts: dict[str, Counter] = defaultdict(Counter)
    for amber_set in tuples:
        for entity in amber_set["qids"].values():
            for pid, relation in entity["pids"].items():
                for value in relation["values"]:
                    counts[pid][value["aliases"][0]] += 1
    return defaultdict(
        list,
        {
            # sorted() is stable, so equal counts keep first-seen order as in the published code
            pid: sorted(counter, key=counter.get, reverse=True)[:REFUTES_CANDIDATES]
            for pid, counter in counts.items()
        },
    )
