"""Top-k retrieval accuracy of a DPR bi-encoder on a DPR-format test file (issue 5, step 9).

Passages come from a Parquet file (columns ``id``, ``wikipedia_id``, ``title``, ``text``: one
row per passage, not split further) or a KILT JSONL knowledge source (split into DPR's
100-word passages by ``namesake.retrieval.split_passages``, ids ``{wikipedia_id}_{n}``). Every
passage is indexed as its own entry of a flat :class:`namesake.retrieval.DenseRetriever`, so the
ranking is over passages, as in DPR. Questions come from DPR's ``question \\t ["answers"]``
CSV/TSV or a JSON file. A question is answered at k when one of its first k passages contains
an answer (``namesake.ecqg.dpr.evaluation.has_answer``).

``--similarity cosine`` (default) searches with the DenseRetriever (normalised embeddings);
``--similarity dot`` encodes with the same sentence-transformers models without normalising
and searches by the plain dot product, DPR's scoring.

    python training/evaluate_dpr.py --model_dir DPR_OUTPUT | --question_model Q --passage_model P \\
        --passages passages.parquet|kilt.jsonl --test_file test.tsv [--k 1,5,20,100] \\
        [--similarity cosine|dot] [--out metrics.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from namesake.ecqg.dpr.data import DPRFileError, read_qa_file  # noqa: E402
from namesake.ecqg.dpr.evaluation import top_k_accuracy  # noqa: E402
from namesake.retrieval import DenseRetriever, Document, read_kilt_documents  # noqa: E402
from namesake.retrieval.corpus import split_passages  # noqa: E402
from namesake.retrieval.dense import passage_input  # noqa: E402

WHOLE = 10**9  # passage length that never splits a (pre-split) passage again


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="Top-k retrieval accuracy of a DPR model.")
    parser.add_argument("--model_dir", default=None, help="a training/train_dpr.py output")
    parser.add_argument("--question_model", default=None)
    parser.add_argument("--passage_model", default=None)
    parser.add_argument("--passages", required=True, help="Parquet passages or KILT JSONL")
    parser.add_argument("--test_file", required=True, help="DPR CSV/TSV or JSON test file")
    parser.add_argument("--k", default="1,5,20,100")
    parser.add_argument("--similarity", choices=("cosine", "dot"), default="cosine")
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--device", default=None)
    parser.add_argument("--out", default=None, help="write the metrics JSON here")
    args = parser.parse_args(argv)
    if args.model_dir:
        if args.question_model or args.passage_model:
            parser.error("give --model_dir or --question_model/--passage_model, not both")
        root = Path(args.model_dir)
        args.question_model = str(root / "st_question_encoder")
        args.passage_model = str(root / "st_passage_encoder")
    elif not args.passage_model:
        parser.error("give --model_dir, or --passage_model (and --question_model)")
    try:
        args.ks = sorted({int(k) for k in args.k.split(",") if k.strip()})
    except ValueError:
        parser.error(f"--k must be comma-separated integers, not {args.k!r}")
    if not args.ks or args.ks[0] < 1:
        parser.error("--k values must be at least 1")
    return args


def read_passages(path: str) -> list[Document]:
    """Passages as one-passage documents (id = passage id)."""
    if path.endswith(".parquet"):
        import pyarrow.parquet as pq

        table = pq.read_table(path)
        missing = {"id", "title", "text"} - set(table.column_names)
        if missing:
            sys.exit(f"{path}: passages lack columns {sorted(missing)}")
        rows = table.select(["id", "title", "text"]).to_pylist()
        return [Document(str(r["id"]), r["title"] or "", r["text"] or "") for r in rows]
    counts: dict[str, int] = {}
    out = []
    for passage in split_passages(read_kilt_documents(path)):
        n = counts.get(passage.wikipedia_id, 0)
        counts[passage.wikipedia_id] = n + 1
        out.append(Document(f"{passage.wikipedia_id}_{n}", passage.title, passage.text))
    return out


def dot_rankings(args, passages, questions, k) -> list[list[str]]:
    import faiss
    import numpy as np
    from sentence_transformers import SentenceTransformer

    passage_encoder = SentenceTransformer(args.passage_model, device=args.device)
    question_encoder = (
        SentenceTransformer(args.question_model, device=args.device)
        if args.question_model
        else passage_encoder
    )
    separator = getattr(passage_encoder.tokenizer, "sep_token", None) or "."
    texts = [passage_input(p.title, p.text, separator) for p in passages]
    p = passage_encoder.encode(texts, batch_size=args.batch_size, convert_to_numpy=True)
    q = question_encoder.encode(questions, batch_size=args.batch_size, convert_to_numpy=True)
    index = faiss.IndexFlatIP(p.shape[1])
    index.add(np.ascontiguousarray(p, dtype=np.float32))
    _, labels = index.search(np.ascontiguousarray(q, dtype=np.float32), min(k, len(passages)))
    return [[passages[i].wikipedia_id for i in row if i >= 0] for row in labels]


def main(argv=None):
    args = parse_args(argv)
    report: dict = {}
    try:
        qas = read_qa_file(args.test_file, report=report)
    except DPRFileError as error:
        sys.exit(str(error))
    if not qas:
        sys.exit(f"{args.test_file}: no usable questions ({report.get('skipped', 0)} skipped)")
    passages = read_passages(args.passages)
    if not passages:
        sys.exit(f"{args.passages}: no passages")
    texts = {p.wikipedia_id: p.text for p in passages}
    if len(texts) != len(passages):
        sys.exit(f"{args.passages}: passage ids are not unique")
    questions = [qa["question"] for qa in qas]
    k = max(args.ks)
    if args.similarity == "dot":
        rankings = dot_rankings(args, passages, questions, k)
    else:
        retriever = DenseRetriever.build(
            passages,
            model=args.passage_model,
            query_model=args.question_model,
            index="flat",
            batch_size=args.batch_size,
            words=WHOLE,
            device=args.device,
            show_progress=False,
        )
        rankings = [[pid for pid, _ in hits] for hits in retriever.search(questions, k)]
    metrics = top_k_accuracy(rankings, [qa["answers"] for qa in qas], texts, args.ks)
    result = {
        "metrics": metrics,
        "questions": len(qas),
        "skipped_questions": report.get("skipped", 0),
        "passages": len(passages),
        "similarity": args.similarity,
        "question_model": args.question_model,
        "passage_model": args.passage_model,
        "test_file": str(args.test_file),
    }
    print(" ".join(f"{name} {value:.4f}" for name, value in metrics.items()))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return result


if __name__ == "__main__":
    main()
