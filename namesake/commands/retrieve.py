"""`namesake retrieve`: AmbER queries answered by a retriever, written as KILT predictions or
a TREC run (`namesake.amber.evaluation.retrieve`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from namesake.amber.evaluation.retrieve import RETRIEVER_KINDS
from namesake.commands.arguments import (
    add_amber_config,
    add_candidates,
    add_dpr_encoders,
    add_input,
    add_memory_budget,
    add_output,
    add_rerank,
    add_run_name,
    add_similarity,
    add_top_k,
    check_run_name,
    dpr_options,
)
from namesake.errors import NamesakeError


def register(groups) -> None:
    _add_retrieve(groups.add_parser("retrieve", help="answer AmbER queries with a retriever"))


def _add_retrieve(parser: argparse.ArgumentParser) -> None:
    add_input(parser, "--corpus", help="KILT knowledge source; needed unless --index exists")
    add_amber_config(parser)
    parser.add_argument(
        "--retriever", required=True, choices=RETRIEVER_KINDS, help="which retriever"
    )
    add_input(
        parser,
        "--model",
        help="dense: sentence-transformers model path or Hub id, bundled:bge-small or an ONNX "
        "folder; link: a trained linker folder or Hub id (default: the bundled MiniLM, "
        "zero-shot); splade: a SparseEncoder Hub id or folder",
    )
    add_input(parser, "--query-model", help="dense, DPR-style: separate question encoder")
    add_dpr_encoders(parser)
    add_similarity(parser)
    add_input(parser, "--index", help="saved index folder: loaded if present, else built there")
    parser.add_argument(
        "--index-type",
        choices=["flat", "ivf", "hnsw"],
        help="dense and dpr: faiss index built when --index is new (default: flat); a saved "
        "index of another type is refused",
    )
    add_top_k(parser)
    add_candidates(parser)
    add_rerank(parser)
    add_memory_budget(parser)
    add_output(
        parser,
        "--out",
        "predictions file: KILT JSON lines or a TREC run (--format)",
        kind="file",
        required=True,
    )
    parser.add_argument(
        "--format",
        choices=["kilt", "trec"],
        default="kilt",
        help="kilt: JSON lines with KILT provenance (default); trec: a TREC run "
        "'qid Q0 docid rank score tag', for trec_eval, ranx and ir-measures",
    )
    add_run_name(parser, "default: the --retriever kind")
    parser.set_defaults(run=_retrieve)


def _retrieve(args) -> None:
    from namesake.amber.evaluation.retrieve import open_retriever, retrieve_config, retriever_class

    if args.similarity and args.retriever not in ("dense", "dpr"):
        raise NamesakeError("--similarity goes with --retriever dense or dpr")
    if args.retriever == "dpr" and (args.model or args.query_model):
        raise NamesakeError(
            "--retriever dpr takes --dpr-question-encoder and --dpr-context-encoder, "
            "not --model / --query-model"
        )
    if args.retriever != "dpr" and (args.dpr_question_encoder or args.dpr_context_encoder):
        raise NamesakeError("--dpr-question-encoder/--dpr-context-encoder go with --retriever dpr")
    check_run_name(args)  # before the retrieval, not after it
    if args.index is not None:  # an index to build is checked as an output, before any work
        from namesake.retrieval.storage import check_new_index

        check_new_index(args.index, retriever_class(args.retriever).INDEX_KIND, "--index")
    options = {}
    # Only what the command line names: a saved index checks it against its record
    # (`open_retriever`), and a new one takes its own defaults for the rest.
    index_type = {"index": args.index_type} if args.index_type else {}
    if args.retriever == "dense":
        options = {**index_type, "query_model": args.query_model}
        options["similarity"] = args.similarity
        if args.model:
            options["model"] = args.model
    elif args.retriever == "dpr":
        options = {**index_type, **dpr_options(args)}
    elif args.retriever in ("link", "splade") and args.model:
        options = {"model": args.model}
    elif args.retriever == "bm25" and args.memory_budget:
        options = {"memory_budget": args.memory_budget}
    if args.index is None or not Path(args.index).exists():
        from namesake.amber.evaluation.queries import AmberQueries

        # a bad config fails before the index build
        AmberQueries.load(args.dataset, args.config, members=False)
    reranker = None
    if args.rerank:
        from namesake.retrieval.rerankers import open_reranker

        if not args.corpus:
            raise NamesakeError(
                "--rerank reads each page's title and opening passage: give --corpus"
            )
        reranker = open_reranker(args.rerank)  # a bad model fails before the first stage runs
    retriever = open_retriever(args.retriever, args.corpus, args.index, **options)
    count = retrieve_config(
        retriever,
        args.dataset,
        args.config,
        args.top_k,
        args.out,
        args.candidates,
        format=args.format,
        run_name=args.run_name or args.retriever + ("+rerank" if args.rerank else ""),
        reranker=reranker,
        rerank_depth=args.rerank_depth,
        corpus=args.corpus,
    )
    print(f"Wrote {count} predictions to {args.out}")
