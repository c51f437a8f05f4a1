"""The synthetic training set: mixing, hard negatives, DPR format, and the whole
``namesake ecqg build-synthetic-set`` run (:func:`build_synthetic_set`).

:func:`mix` draws a `ratio` share of entity-conditioned and the rest unconditioned records
(the paper's Mixed-DPR uses 50/50), deterministically for a seed. :func:`add_hard_negatives`
gives each question the top passages of the baseline retriever that are neither its own passage
nor contain its answer (DPR's convention with BM25; here the retriever of the hardness filter).
:func:`to_dpr` writes DPR's training format, keeping which generator each question came from::

    {"question": q, "answers": [a], "source": "conditioned" | "unconditioned",
     "positive_ctxs": [{"title", "text", "passage_id"}], "negative_ctxs": [],
     "hard_negative_ctxs": [{"title", "text", "passage_id"}, ...]}

"Contains the answer" is :func:`namesake.ecqg.filtering.contains_answer`: the AmbER-normalised
answer occurs on word boundaries in the normalised passage text.

:func:`build_synthetic_set` takes the generated questions of both generators through stage 1
(answer filter: extractive QA, or the substring fallback without a QA model) and stage 2
(hardness filter) of :mod:`namesake.ecqg.filtering`, mixes the two sets, adds hard negatives and
writes the DPR file. The baseline retriever of stage 2 and of the negatives is, as in the paper,
a neural one (:func:`hardness_retriever`: the bundled MiniLM, or a DPR trained on gold
questions), or BM25 when asked. Counts are printed after each stage and
returned (and saved as JSON when asked). Unreadable lines and records without a
question/answer are skipped and counted, never fatal.
"""

from __future__ import annotations

import json
import math
import os
import random
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path

from namesake.dumps.reading import iter_text_lines
from namesake.ecqg.filtering import (
    answer_filter,
    contains_answer,
    hardness_filter,
    no_answer_filter,
)
from namesake.errors import BadInputError, NamesakeError
from namesake.outputs import atomic_file
from namesake.retrieval.corpus import Document


def passage_table(passages) -> dict[str, dict]:
    """Passage id (str) → {"title", "text"} from a pyarrow Table, rows or a mapping.

    Accepts a ``pyarrow.Table`` / list of row dicts with ``id``, ``title``, ``text`` (the
    passages Parquet), or a mapping id → row dict or id → text.
    """
    if hasattr(passages, "to_pylist"):
        passages = passages.to_pylist()
    if isinstance(passages, Mapping):
        table = {}
        for pid, value in passages.items():
            if isinstance(value, Mapping):
                table[str(pid)] = {
                    "title": value.get("title") or "",
                    "text": value.get("text") or "",
                }
            else:
                table[str(pid)] = {"title": "", "text": value or ""}
        return table
    return {
        str(row["id"]): {"title": row.get("title") or "", "text": row.get("text") or ""}
        for row in passages
    }


def passage_documents(passages) -> list[Document]:
    """Documents for a retriever's ``build`` whose ``wikipedia_id`` is the passage id."""
    return [
        Document(pid, row["title"], row["text"]) for pid, row in passage_table(passages).items()
    ]


HARDNESS_RETRIEVERS = ("dense", "bm25")


def hardness_retriever(
    passages,
    kind: str = "dense",
    model: str | os.PathLike | None = None,
    embeddings_cache: str | os.PathLike | None = None,
) -> tuple[object, dict]:
    """The baseline retriever over `passages` (ids = passage ids, one passage per document)
    and what it is, for the statistics.

    ``"dense"`` encodes with `model` (see :func:`dense_model_encoders`; default the bundled
    MiniLM) in an exact flat index; ``"bm25"`` takes no model. A `model` folder whose training
    was skipped (``not_trained.json``) is refused with its reason. `embeddings_cache`: a folder
    of passage embeddings shared with the other steps that rank these passages with this model
    (:mod:`namesake.ecqg.dpr.embedding_cache`).
    """
    from namesake.ecqg.dpr.evaluation import dense_run

    documents = passage_documents(passages)
    if kind == "bm25":
        if model is not None:
            raise NamesakeError("--hardness-model applies to --hardness-retriever dense only")
        from namesake.retrieval.bm25 import BM25Retriever

        return BM25Retriever.build(documents, show_progress=False), {"retriever": "bm25"}
    if kind != "dense":
        raise ValueError(f"hardness retriever must be one of {HARDNESS_RETRIEVERS}, not {kind!r}")
    from namesake.ecqg.dpr.embedding_cache import flat_dense_retriever
    from namesake.retrieval.dense import DEFAULT_MODEL

    model = str(model or DEFAULT_MODEL)
    encoder = dense_run("hardness", model)
    if encoder.not_trained is not None:
        raise NamesakeError(f"--hardness-model {model}: not trained ({encoder.not_trained})")
    passage_model, question_model = encoder.passage_model, encoder.question_model
    retriever = flat_dense_retriever(
        documents,
        passage_model,
        question_model,
        show_progress=False,
        cache=embeddings_cache,
    )
    about = {
        "retriever": "dense",
        "model": model,
        "passage_model": passage_model,
        "question_model": question_model or passage_model,
        "similarity": retriever.similarity,
    }
    return retriever, about


def mix(
    conditioned: list[dict],
    unconditioned: list[dict],
    ratio: float = 0.5,
    seed: int = 0,
    size: int | None = None,
) -> list[dict]:
    """A shuffled sample with a `ratio` share of `conditioned` records, the rest unconditioned.

    Without `size` the set is the largest the two lists allow at that ratio; a larger `size`
    is cut down to that. Same inputs and seed, same output. Records are copied and tagged with
    ``"source": "conditioned" | "unconditioned"``.
    """
    if not 0.0 <= ratio <= 1.0:
        raise ValueError(f"ratio must be in [0, 1], got {ratio}")
    if size is not None and size < 0:
        raise ValueError(f"size must be ≥ 0, got {size}")
    limits = []
    if ratio > 0:
        limits.append(len(conditioned) / ratio)
    if ratio < 1:
        limits.append(len(unconditioned) / (1 - ratio))
    largest = math.floor(min(limits) + 1e-9)
    total = largest if size is None else min(size, largest)
    n_conditioned = min(round(total * ratio), len(conditioned))
    n_unconditioned = min(total - n_conditioned, len(unconditioned))
    rng = random.Random(seed)
    chosen = [
        {**record, "source": "conditioned"}
        for record in rng.sample(list(conditioned), n_conditioned)
    ] + [
        {**record, "source": "unconditioned"}
        for record in rng.sample(list(unconditioned), n_unconditioned)
    ]
    rng.shuffle(chosen)
    return chosen


def add_hard_negatives(
    records: Iterable[dict], passages_table, retriever, n: int = 1, depth: int = 100
) -> list[dict]:
    """Copies of `records` with ``hard_negative_ids``: up to `n` negatives per question.

    A negative is among the top `depth` passages `retriever` returns for the question (ids are
    passage ids), best first, not the record's own passage and not containing its answer. A
    question with no such passage gets an empty list.
    """
    records = list(records)
    table = passage_table(passages_table)
    if not records or n < 1:
        return [{**r, "hard_negative_ids": []} for r in records]
    results = retriever.search([str(r.get("question") or "") for r in records], depth)
    out = []
    for record, found in zip(records, results, strict=True):
        own, answer = str(record.get("passage_id")), str(record.get("answer") or "")
        negatives = []
        for pid, _ in found:
            row = table.get(pid)
            if pid == own or row is None or contains_answer(answer, row["text"]):
                continue
            negatives.append(pid)
            if len(negatives) == n:
                break
        out.append({**record, "hard_negative_ids": negatives})
    return out


def _ctx(pid: str, row: dict) -> dict:
    return {"title": row["title"], "text": row["text"], "passage_id": pid}


def to_dpr(records: Iterable[dict], passages) -> list[dict]:
    """Records (with optional ``hard_negative_ids``) in DPR training format.

    A record's ``source`` (``mix``'s conditioned / unconditioned tag) is kept, so a trained
    model's data can be told apart; ``read_dpr_file`` passes extra keys through. Records whose
    passage is unknown are left out.
    """
    table = passage_table(passages)
    out = []
    for record in records:
        pid = str(record.get("passage_id"))
        if pid not in table:
            continue
        source = {"source": record["source"]} if "source" in record else {}
        out.append(
            {
                "question": record["question"],
                "answers": [record["answer"]],
                **source,
                "positive_ctxs": [_ctx(pid, table[pid])],
                "negative_ctxs": [],
                "hard_negative_ctxs": [
                    _ctx(str(neg), table[str(neg)])
                    for neg in record.get("hard_negative_ids") or []
                    if str(neg) in table
                ],
            }
        )
    return out


def write_dpr(records: list[dict], path: str | os.PathLike) -> None:
    """Writes DPR-format `records` as one JSON list, replacing `path` only when complete."""
    with atomic_file(path, "w") as f:
        json.dump(records, f, ensure_ascii=False, indent=1)
        f.write("\n")


def read_records(path: str | os.PathLike) -> tuple[list[dict], dict]:
    """JSON-lines records; blank lines ignored, bad lines skipped and counted."""
    records, problems = [], Counter()
    for _, line in iter_text_lines(path):
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            problems["invalid JSON"] += 1
            continue
        if not isinstance(record, dict):
            problems["not a JSON object"] += 1
            continue
        records.append(record)
    return records, {"lines_read": len(records), "skipped_lines": dict(problems)}


def build_synthetic_set(
    passages_path: str | os.PathLike,
    conditioned_path: str | os.PathLike,
    unconditioned_path: str | os.PathLike,
    out: str | os.PathLike,
    *,
    qa_model: str | None = None,
    qa_threshold: float = 0.5,
    qa_batch_size: int = 32,
    check_answers: bool = True,
    hard_quantile: float | None = 0.5,
    hardness_retriever_kind: str = "dense",
    hardness_model: str | os.PathLike | None = None,
    ratio: float = 0.5,
    size: int | None = None,
    seed: int = 0,
    negatives_per_question: int = 1,
    stats_path: str | os.PathLike | None = None,
    embeddings_cache: str | os.PathLike | None = None,
) -> dict:
    """The Mixed-DPR training set from generated questions (see the module docstring).

    `check_answers` False skips the answer filter (``--no-answer-filter``: a toy generator's
    answers rarely occur in their passage); `hard_quantile` None disables the hardness filter;
    the statistics' ``filters`` say which ran. `hardness_retriever_kind` and `hardness_model`
    choose the baseline retriever of the hardness filter and the hard negatives
    (:func:`hardness_retriever`; `embeddings_cache` its passage embeddings' folder). Writes
    the DPR JSON to `out` and, with `stats_path`, the statistics there (both atomically);
    returns the statistics.
    """
    from namesake.ecqg.passages import read_passages

    if qa_model is not None and not check_answers:
        raise NamesakeError("--qa-model and --no-answer-filter contradict each other")
    for path in (conditioned_path, unconditioned_path):
        if not Path(path).is_file():
            raise BadInputError(path, None, "no such file")
    table = passage_table(read_passages(passages_path, columns=["id", "title", "text"]))
    if not table:
        raise BadInputError(passages_path, None, "no passages")
    texts = {pid: row["text"] for pid, row in table.items()}
    print(f"passages: {len(table)}")
    retriever, about = hardness_retriever(
        table, hardness_retriever_kind, hardness_model, embeddings_cache
    )
    print(f"baseline retriever: {about}")

    qa = None
    if qa_model is not None:
        from namesake.ecqg.filtering import ExtractiveQA

        qa = ExtractiveQA(qa_model)
    stats: dict = {"passages": len(table), "baseline_retriever": about, "sets": {}}
    stats["filters"] = {
        "answer_filter": (
            ("extractive QA" if qa else "substring fallback") if check_answers else "disabled"
        ),
        "hardness_filter": (
            "disabled"
            if hard_quantile is None
            else f"{about['retriever']}: own passage scored below the {hard_quantile} quantile"
        ),
    }
    filtered = {}
    for name, path in (("conditioned", conditioned_path), ("unconditioned", unconditioned_path)):
        records, read_stats = read_records(path)
        set_stats = {"read": read_stats}
        print(f"{name}: read {len(records)} record(s), skipped {read_stats['skipped_lines']}")
        if check_answers:
            records, set_stats["answer_filter"] = answer_filter(
                records, texts, qa, threshold=qa_threshold, batch_size=qa_batch_size
            )
        else:
            records, set_stats["answer_filter"] = no_answer_filter(records, texts)
        a = set_stats["answer_filter"]
        print(
            f"{name}: answer filter [{a['answer_filter']}] {a['in']} -> {a['out']}"
            f" (bad input {a['dropped_bad_input']})"
        )
        if hard_quantile is None:
            set_stats["hardness_filter"] = "disabled"
            print(f"{name}: hardness filter disabled")
        else:
            records, h = hardness_filter(records, texts, retriever, quantile=hard_quantile)
            set_stats["hardness_filter"] = h
            print(
                f"{name}: hardness filter [{about['retriever']}] (quantile {h['quantile']},"
                f" cutoff {h['score_cutoff']})"
                f" {h['in']} -> {h['out']}"
            )
        filtered[name] = records
        stats["sets"][name] = set_stats

    mixed = mix(
        filtered["conditioned"], filtered["unconditioned"], ratio=ratio, seed=seed, size=size
    )
    sources = Counter(r["source"] for r in mixed)
    stats["mix"] = {"ratio": ratio, "seed": seed, "out": len(mixed), **sources}
    print(f"mix (ratio {ratio}): {len(mixed)} ({dict(sources)})")
    with_negatives = add_hard_negatives(mixed, table, retriever, n=negatives_per_question)
    dpr = to_dpr(with_negatives, table)
    without = sum(1 for r in dpr if not r["hard_negative_ctxs"])
    stats["dpr"] = {"out": len(dpr), "without_hard_negative": without}
    print(f"DPR set: {len(dpr)} question(s), {without} without a hard negative -> {out}")
    write_dpr(dpr, out)
    if stats_path:
        with atomic_file(stats_path, "w") as f:
            json.dump(stats, f, ensure_ascii=False, indent=2)
    return stats
