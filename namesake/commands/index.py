"""`namesake index`: a FAISS index built from the chunks `namesake encode` wrote
(`namesake.retrieval.faiss_index`, through `DenseRetriever.from_embeddings`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from namesake.commands.arguments import (
    add_input,
    add_output,
    add_similarity,
    non_negative_int,
    positive_int,
)


def register(groups) -> None:
    _add_index(groups.add_parser("index", help="build a FAISS index from encoded passages"))


def _add_index(parser: argparse.ArgumentParser) -> None:
    add_input(parser, "--embeddings", required=True, help="folder `namesake encode` wrote")
    parser.add_argument(
        "--index-type",
        required=True,
        choices=["flat", "hnsw", "ivf", "ivfpq"],
        help="flat (exact), hnsw, ivf, or ivfpq (IVF + fast-scan PQ: compressed, re-ranked)",
    )
    add_output(
        parser,
        "--out",
        "index folder for `retrieve --index`",
        kind="folder",
        writer="dense index",
        required=True,
        expected_bytes=_index_bytes,
    )
    parser.add_argument("--factory", help="faiss index_factory string overriding --index-type's")
    parser.add_argument(
        "--shards", type=positive_int, default=1, help="one index per range of chunks"
    )
    parser.add_argument(
        "--train-size",
        type=positive_int,
        default=400_000,
        help="passages sampled to train ivf/ivfpq (default: 400000)",
    )
    parser.add_argument(
        "--rerank-candidates",
        type=non_negative_int,
        help="hits per query re-scored on the stored vectors (default: 1000 for ivfpq, else 0)",
    )
    parser.add_argument("--nprobe", type=positive_int, help="ivf/ivfpq lists searched")
    parser.add_argument("--ef-search", type=positive_int, help="hnsw search depth")
    questions = parser.add_mutually_exclusive_group()
    add_input(questions, "--query-model", help="DPR-style: separate question encoder")
    add_input(
        questions,
        "--dpr-question-encoder",
        metavar="MODEL",
        help="DPRQuestionEncoder Hub id or folder, for a --dpr-context-encoder encoding",
    )
    add_similarity(parser, "must be the encoding's (default: the encoding's)")
    parser.add_argument(
        "--cpu", action="store_true", help="build on the CPU even when faiss sees GPUs"
    )
    parser.set_defaults(run=_index)


def _index_bytes(args) -> int:
    """What `namesake index` will write, about: every index type but ivfpq keeps each
    float16 vector as float32 (twice the embeddings' bytes); ivfpq keeps the float16 vectors
    for re-ranking beside its codes (about their size)."""
    vectors = sum(path.stat().st_size for path in Path(args.embeddings).glob("chunk-*/*.npy"))
    return vectors if args.index_type == "ivfpq" else 2 * vectors


def _index(args) -> None:
    from namesake.retrieval.dense import DenseRetriever

    retriever = DenseRetriever.from_embeddings(
        args.embeddings,
        args.index_type,
        factory=args.factory,
        shards=args.shards,
        train_size=args.train_size,
        rerank_candidates=args.rerank_candidates,
        query_model=args.dpr_question_encoder or args.query_model,
        nprobe=args.nprobe,
        ef_search=args.ef_search,
        use_gpu=False if args.cpu else None,
        similarity=args.similarity,
    )
    retriever.save(args.out)
    settings = retriever.settings
    print(
        f"Wrote {args.out}: {settings['factory']} over {settings['num_passages']} passages "
        f"of {settings['num_documents']} pages, {settings['shards']} shard(s)"
    )
