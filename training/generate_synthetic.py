"""Generate synthetic questions with a trained question generator (issue 5, step 5).

For each passage (Parquet from ``namesake.ecqg.passages``: ``id``, ``wikipedia_id``, ``title``,
``text``) the generator gets ``entity: <e> passage: <title>. <text>`` for each of the passage's
``--k`` least-attended entities (Parquet of ranked entities: ``id``, ``entities`` = list of
``{text, label, start, end, attention}``, least-attended first), or ``passage: <title>. <text>``
once per passage with ``--unconditioned``. Each source is sampled ``--samples_per_entity`` times
(top-p / top-k sampling), in batches.

Output ``--out``: JSON lines ``{"passage_id", "entity", "question", "answer", "raw"}`` (entity
null when unconditioned). Generations without the ``question: ... answer: ...`` shape are not
written there but counted and listed in the statistics (``--stats``, default
``<out>.stats.json``), as are empty passages and passages without ranked entities.

    python training/generate_synthetic.py --passages passages.parquet \\
        --ranked_entities ranked.parquet --model qg-conditioned --out synthetic.jsonl \\
        [--k 3] [--samples_per_entity 1] [--top_p 0.95] [--top_k 50] [--max_new_tokens 64] \\
        [--batch_size 16] [--seed 0] [--unconditioned]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq
import torch
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer, set_seed

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from namesake.ecqg.generation import format_source, parse_generation  # noqa: E402

MAX_LISTED_MALFORMED = 1000


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="Generate synthetic questions.")
    parser.add_argument("--passages", required=True, help="passages Parquet")
    parser.add_argument("--ranked_entities", default=None, help="ranked entities Parquet")
    parser.add_argument("--model", required=True, help="a trained generator (folder or Hub id)")
    parser.add_argument("--out", required=True, help="JSON lines output")
    parser.add_argument("--stats", default=None, help="default: <out>.stats.json")
    parser.add_argument("--unconditioned", action="store_true")
    parser.add_argument("--k", type=int, default=3, help="least-attended entities per passage")
    parser.add_argument("--samples_per_entity", type=int, default=1)
    parser.add_argument("--top_p", type=float, default=0.95)
    parser.add_argument("--top_k", type=int, default=50)
    parser.add_argument("--max_new_tokens", type=int, default=64)
    parser.add_argument("--max_source_length", type=int, default=1024)
    parser.add_argument("--batch_size", type=int, default=16)
    parser.add_argument("--max_passages", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default=None, help="default: cuda when available, else cpu")
    args = parser.parse_args(argv)
    if not args.unconditioned and not args.ranked_entities:
        parser.error("--ranked_entities is needed unless --unconditioned")
    for name in ("k", "samples_per_entity", "max_new_tokens", "batch_size", "max_source_length"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    if not 0 < args.top_p <= 1:
        parser.error("--top_p must be in (0, 1]")
    if args.top_k < 0:
        parser.error("--top_k must be at least 0")
    return args


def least_attended(entities, k: int) -> list[str]:
    """The first ``k`` distinct (case-insensitive) non-empty entity texts, in ranking order."""
    chosen, seen = [], set()
    for entity in entities if entities is not None else []:
        text = entity.get("text") if isinstance(entity, dict) else None
        text = " ".join(str(text or "").split())
        if not text or text.lower() in seen:
            continue
        seen.add(text.lower())
        chosen.append(text)
        if len(chosen) == k:
            break
    return chosen


def build_jobs(passages, ranked, args, stats) -> list[tuple[str, str | None, str]]:
    """(passage_id, entity or None, source) for each generator input."""
    jobs = []
    for row in passages:
        text = " ".join(str(row.get("text") or "").split())
        passage_id = str(row["id"])
        if not text:
            stats["empty_passages"] += 1
            continue
        title = " ".join(str(row.get("title") or "").split())
        passage = f"{title}. {text}" if title else text
        if args.unconditioned:
            jobs.append((passage_id, None, format_source(passage)))
            continue
        entities = least_attended(ranked.get(passage_id), args.k)
        if not entities:
            stats["passages_without_entities"] += 1
            continue
        for entity in entities:
            jobs.append((passage_id, entity, format_source(passage, entity)))
    return jobs


def write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.tmp-", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)
    os.replace(tmp, path)


def main(argv=None):
    args = parse_args(argv)
    set_seed(args.seed)
    started = time.time()
    out = Path(args.out)
    stats_path = Path(args.stats) if args.stats else out.with_name(out.name + ".stats.json")
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))

    passages = pq.read_table(args.passages).to_pylist()
    missing = {"id", "text"} - set(passages[0] if passages else {"id": 0, "text": ""})
    if missing:
        sys.exit(f"{args.passages}: no column(s) {sorted(missing)}")
    if args.max_passages is not None:
        passages = passages[: args.max_passages]
    ranked = {}
    if not args.unconditioned:
        table = pq.read_table(args.ranked_entities)
        if not {"id", "entities"} <= set(table.column_names):
            sys.exit(f"{args.ranked_entities}: needs columns id and entities")
        ranked = {str(r["id"]): r["entities"] for r in table.to_pylist()}

    stats = {
        "passages": len(passages),
        "empty_passages": 0,
        "passages_without_entities": 0,
        "conditioned": not args.unconditioned,
    }
    jobs = build_jobs(passages, ranked, args, stats)
    stats["inputs"] = len(jobs)
    print(
        f"{len(passages)} passages ({stats['empty_passages']} empty, "
        f"{stats['passages_without_entities']} without entities): {len(jobs)} generator inputs"
    )

    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForSeq2SeqLM.from_pretrained(args.model).to(device).eval()
    if device.type == "cuda" and torch.cuda.is_bf16_supported():
        model = model.to(torch.bfloat16)

    records, malformed = [], []
    n_malformed = 0
    for begin in range(0, len(jobs), args.batch_size):
        batch = jobs[begin : begin + args.batch_size]
        inputs = tokenizer(
            [source for _, _, source in batch],
            max_length=args.max_source_length,
            truncation=True,
            padding=True,
            return_tensors="pt",
        )
        inputs.pop("token_type_ids", None)
        inputs = inputs.to(device)
        with torch.no_grad():
            generated = model.generate(
                **inputs,
                do_sample=True,
                top_p=args.top_p,
                top_k=args.top_k,
                max_new_tokens=args.max_new_tokens,
                num_return_sequences=args.samples_per_entity,
            )
        texts = tokenizer.batch_decode(generated, skip_special_tokens=True)
        for i, raw in enumerate(texts):
            passage_id, entity, _ = batch[i // args.samples_per_entity]
            parsed = parse_generation(raw)
            if parsed is None:
                n_malformed += 1
                if len(malformed) < MAX_LISTED_MALFORMED:
                    malformed.append({"passage_id": passage_id, "entity": entity, "raw": raw})
                continue
            question, answer = parsed
            records.append(
                {
                    "passage_id": passage_id,
                    "entity": entity,
                    "question": question,
                    "answer": answer,
                    "raw": raw,
                }
            )
        print(f"generated {min(begin + len(batch), len(jobs))}/{len(jobs)} inputs", flush=True)

    stats.update(
        {
            "generations": len(records) + n_malformed,
            "written": len(records),
            "malformed": n_malformed,
            "malformed_examples": malformed,
            "model": args.model,
            "settings": {
                k: getattr(args, k)
                for k in ("k", "samples_per_entity", "top_p", "top_k", "max_new_tokens", "seed")
            },
            "seconds": round(time.time() - started, 2),
        }
    )
    write_atomically(out, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    write_atomically(stats_path, json.dumps(stats, indent=2, ensure_ascii=False) + "\n")
    print(
        f"wrote {len(records)} questions to {out} ({n_malformed} malformed generations, "
        f"listed in {stats_path})"
    )
    return stats


if __name__ == "__main__":
    main()
