"""Builds the Mixed-DPR synthetic training set from generated questions (issue 5, steps 6-7).

    python training/build_synthetic_set.py --passages passages.parquet \
        --conditioned conditioned.jsonl --unconditioned unconditioned.jsonl \
        [--qa_model M --qa_threshold 0.5] [--hard_quantile 0.5 | --no_hardness_filter] \
        [--ratio 0.5 --seed 0 --size N] --out dpr.json --stats stats.json

Per input set: stage 1 answer filter (extractive QA, or the substring fallback without
``--qa_model``), stage 2 hardness filter (BM25 over the passages); then the two sets are mixed
(``--ratio`` conditioned), given BM25 hard negatives and written in DPR training format.
Counts are printed after each stage and saved to ``--stats``. Unreadable lines and records
without a question/answer are skipped and counted, never fatal.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from namesake.ecqg.filtering import answer_filter, hardness_filter  # noqa: E402
from namesake.ecqg.synthetic import (  # noqa: E402
    add_bm25_hard_negatives,
    mix,
    passage_documents,
    passage_table,
    to_dpr,
    write_dpr,
)
from namesake.io import atomic_file  # noqa: E402


def read_records(path: str | Path) -> tuple[list[dict], dict]:
    """JSON-lines records; blank lines ignored, bad lines skipped and counted."""
    records, problems = [], Counter()
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
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


def read_passage_table(path: str | Path) -> dict[str, dict]:
    import pyarrow.parquet as pq

    columns = pq.read_schema(path).names
    missing = [c for c in ("id", "title", "text") if c not in columns]
    if missing:
        raise SystemExit(f"{path}: passages Parquet lacks column(s) {', '.join(missing)}")
    return passage_table(pq.read_table(path, columns=["id", "title", "text"]))


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--passages", required=True, help="passages Parquet (id, title, text)")
    parser.add_argument("--conditioned", required=True, help="entity-conditioned JSON lines")
    parser.add_argument("--unconditioned", required=True, help="unconditioned JSON lines")
    parser.add_argument("--qa_model", default=None, help="AutoModelForQuestionAnswering id/path")
    parser.add_argument("--qa_threshold", type=float, default=0.5)
    parser.add_argument("--qa_batch_size", type=int, default=32)
    hardness = parser.add_mutually_exclusive_group()
    hardness.add_argument("--hard_quantile", type=float, default=0.5)
    hardness.add_argument("--no_hardness_filter", action="store_true")
    parser.add_argument("--ratio", type=float, default=0.5, help="share of conditioned")
    parser.add_argument("--size", type=int, default=None, help="mixed set size (default: max)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hard_negatives", type=int, default=1)
    parser.add_argument("--out", required=True, help="DPR-format JSON output")
    parser.add_argument("--stats", default=None, help="statistics JSON output")
    args = parser.parse_args(argv)
    if not 0.0 <= args.ratio <= 1.0:
        parser.error("--ratio must be in [0, 1]")
    if not 0.0 <= args.hard_quantile <= 1.0:
        parser.error("--hard_quantile must be in [0, 1]")
    for name in ("passages", "conditioned", "unconditioned"):
        if not Path(getattr(args, name)).is_file():
            parser.error(f"--{name}: no such file: {getattr(args, name)}")
    return args


def main(argv=None) -> dict:
    args = parse_args(argv)
    from namesake.retrieval.bm25 import BM25Retriever

    table = read_passage_table(args.passages)
    if not table:
        raise SystemExit(f"{args.passages}: no passages")
    texts = {pid: row["text"] for pid, row in table.items()}
    print(f"passages: {len(table)}")
    retriever = BM25Retriever.build(passage_documents(table), show_progress=False)

    qa = None
    if args.qa_model is not None:
        from namesake.ecqg.filtering import ExtractiveQA

        qa = ExtractiveQA(args.qa_model)
    stats: dict = {"passages": len(table), "sets": {}}
    filtered = {}
    for name, path in (("conditioned", args.conditioned), ("unconditioned", args.unconditioned)):
        records, read_stats = read_records(path)
        set_stats = {"read": read_stats}
        print(f"{name}: read {len(records)} record(s), skipped {read_stats['skipped_lines']}")
        records, set_stats["answer_filter"] = answer_filter(
            records, texts, qa, threshold=args.qa_threshold, batch_size=args.qa_batch_size
        )
        a = set_stats["answer_filter"]
        print(
            f"{name}: answer filter [{a['answer_filter']}] {a['in']} -> {a['out']}"
            f" (bad input {a['dropped_bad_input']})"
        )
        if args.no_hardness_filter:
            set_stats["hardness_filter"] = "disabled"
            print(f"{name}: hardness filter disabled")
        else:
            records, h = hardness_filter(records, texts, retriever, quantile=args.hard_quantile)
            set_stats["hardness_filter"] = h
            print(
                f"{name}: hardness filter (quantile {h['quantile']}, cutoff {h['score_cutoff']})"
                f" {h['in']} -> {h['out']}"
            )
        filtered[name] = records
        stats["sets"][name] = set_stats

    mixed = mix(
        filtered["conditioned"],
        filtered["unconditioned"],
        ratio=args.ratio,
        seed=args.seed,
        size=args.size,
    )
    sources = Counter(r["source"] for r in mixed)
    stats["mix"] = {"ratio": args.ratio, "seed": args.seed, "out": len(mixed), **sources}
    print(f"mix (ratio {args.ratio}): {len(mixed)} ({dict(sources)})")
    with_negatives = add_bm25_hard_negatives(mixed, table, retriever, n=args.hard_negatives)
    dpr = to_dpr(with_negatives, table)
    without = sum(1 for r in dpr if not r["hard_negative_ctxs"])
    stats["dpr"] = {"out": len(dpr), "without_hard_negative": without}
    print(f"DPR set: {len(dpr)} question(s), {without} without a hard negative -> {args.out}")
    write_dpr(dpr, args.out)
    if args.stats:
        with atomic_file(args.stats, "w") as f:
            json.dump(stats, f, ensure_ascii=False, indent=2)
    return stats


if __name__ == "__main__":
    main()
