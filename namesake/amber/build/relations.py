"""Stage 3: keep only the relations that tell the entities of a set apart.

A relation (PID) of an entity is kept if it is a distinguishing property of one of the
entity's types, no other entity of the set has that PID, and it has at least one value.
"""

from __future__ import annotations

from collections import Counter

from namesake.amber.build.reference import Collection


def keep_distinguishing_relations(sets: list[dict], collection: Collection) -> None:
    """Filters each entity's ``pids`` in place."""
    for amber_set in sets:
        entities = amber_set["qids"].values()
        # Counted over every PID an entity has, including PIDs whose values all lacked names.
        pid_counts = Counter(pid for entity in entities for pid in entity["pids"])
        for entity in entities:
            distinguishing = {
                pid
                for entity_type in entity["entity_types"]
                for pid in collection.distinguishing_properties.get(entity_type, [])
            }
            entity["pids"] = {
                pid: relation
                for pid, relation in entity["pids"].items()
                if pid in distinguishing and pid_counts[pid] == 1 and relation["values"]
            }
