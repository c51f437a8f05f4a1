"""`namesake encode`, `index`, `retrieve` and `evaluate`: encoding a corpus, indexing it,
answering AmbER queries with a retriever and scoring the predictions."""

from __future__ import annotations

import argparse
from pathlib import Path

from namesake.amber.retrieve import RETRIEVER_KINDS
from namesake.commands.arguments import (
    add_batch_size,
    add_candidates,
    add_device,
    add_dpr_encoders,
    add_memory_budget,
    add_output,
    add_rerank,
    add_scoring,
    add_similarity,
    dpr_options,
    non_negative_int,
    positive_int,
)
from namesake.errors import NamesakeError


def register(groups) -> None:
    _add_encode(
        groups.add_parser(
            "encode", help="encode a KILT corpus' passages into float16 chunks (Accelerate)"
        )
    )
    _add_index(groups.add_parser("index", help="build a FAISS index from encoded passages"))
    _add_retrieve(groups.add_parser("retrieve", help="answer AmbER queries with a retriever"))
    _add_evaluate(groups.add_parser("evaluate", help="score AmbER predictions, with a report"))


def _add_encode(parser: argparse.ArgumentParser) -> None:
    # Literal defaults and choices keep `namesake --help` from importing torch and faiss;
    # tests/test_encode_index.py checks them against the modules' constants.
    parser.description = (
        "Encode the 100-word passages of a KILT knowledge source. Alone it uses one process; "
        "`accelerate launch -m namesake encode ...` splits the chunks over every process "
        "(GPUs, machines). A rerun resumes: finished chunks are skipped."
    )
    parser.add_argument("--corpus", required=True, help="KILT knowledge source (JSON lines)")
    add_output(
        parser,
        "--out",
        "embeddings folder (created or resumed)",
        kind="work",
        required=True,
    )
    models = parser.add_mutually_exclusive_group()
    models.add_argument("--model", help="sentence-transformers passage model (default: MiniLM)")
    models.add_argument(
        "--dpr-context-encoder",
        metavar="MODEL",
        help="or a DPRContextEncoder Hub id or folder (then index with --dpr-question-encoder)",
    )
    add_similarity(parser)
    add_batch_size(parser, 128, "passages per forward pass")
    parser.add_argument(
        "--chunk-passages",
        type=positive_int,
        default=8192,
        help="passages per chunk file, the unit of resuming (default: 8192)",
    )
    parser.add_argument(
        "--max-passages", type=positive_int, help="encode only the corpus' first N passages"
    )
    add_device(parser, "e.g. cuda:1 or cpu (default: Accelerate's choice)")
    parser.add_argument(
        "--mixed-precision",
        choices=["no", "fp16", "bf16"],
        help="autocast dtype (default: fp16 on CUDA, no on CPU)",
    )
    parser.add_argument(
        "--tokenizer-workers",
        type=non_negative_int,
        help="DataLoader processes tokenising ahead of the model (default: 0 on CPU; on CUDA "
        "the cores per process on this machine less two)",
    )
    parser.set_defaults(run=_encode)


def _add_index(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--embeddings", required=True, help="folder `namesake encode` wrote")
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
    questions.add_argument("--query-model", help="DPR-style: separate question encoder")
    questions.add_argument(
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


def _add_retrieve(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--corpus", help="KILT knowledge source; needed unless --index exists")
    parser.add_argument("--dataset", required=True, help="AmbER folder or Hub id")
    parser.add_argument("--config", required=True, help="e.g. human_qa, nonhuman_fc")
    parser.add_argument(
        "--retriever", required=True, choices=RETRIEVER_KINDS, help="which retriever"
    )
    parser.add_argument(
        "--model",
        help="dense: sentence-transformers model path or Hub id, bundled:bge-small or an ONNX "
        "folder; link: a trained linker folder or Hub id (default: the bundled MiniLM, "
        "zero-shot); splade: a SparseEncoder Hub id or folder",
    )
    parser.add_argument("--query-model", help="dense, DPR-style: separate question encoder")
    add_dpr_encoders(parser)
    add_similarity(parser)
    parser.add_argument("--index", help="saved index folder: loaded if present, else built there")
    parser.add_argument(
        "--index-type",
        choices=["flat", "ivf", "hnsw"],
        help="dense and dpr: faiss index built when --index is new (default: flat); a saved "
        "index of another type is refused",
    )
    parser.add_argument(
        "--top-k", type=positive_int, default=100, help="documents retrieved per query"
    )
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
    parser.add_argument(
        "--run-name", help="trec: the run's tag, its last field (default: the --retriever kind)"
    )
    parser.set_defaults(run=_retrieve)


def _add_evaluate(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dataset", required=True, help="AmbER folder or Hub id")
    parser.add_argument("--config", required=True, help="e.g. human_qa, nonhuman_fc")
    parser.add_argument(
        "--predictions",
        required=True,
        help="predictions file: KILT JSON lines or a TREC run (told from the content)",
    )
    add_output(
        parser,
        "--out",
        "report folder",
        kind="folder",
        writer="evaluate",
        required=True,
    )
    add_scoring(parser)
    from namesake.amber.paper import PAPER_KINDS

    parser.add_argument(
        "--retriever",
        choices=tuple(dict.fromkeys(RETRIEVER_KINDS + PAPER_KINDS)),
        help="the kind of retriever that made the predictions: the table shows the AmbER "
        "paper's figure for the same kind beside ours (default: unknown, no figure)",
    )
    parser.set_defaults(run=_evaluate)


def _encode(args) -> None:
    from namesake.retrieval.dense import DEFAULT_MODEL
    from namesake.retrieval.encode import encode_corpus

    model, encoder_type = args.model or DEFAULT_MODEL, "sentence-transformers"
    if args.dpr_context_encoder:
        model, encoder_type = args.dpr_context_encoder, "dpr"
    summary = encode_corpus(
        args.corpus,
        args.out,
        model,
        encoder_type=encoder_type,
        similarity=args.similarity,
        batch_size=args.batch_size,
        chunk_passages=args.chunk_passages,
        max_passages=args.max_passages,
        device=args.device,
        mixed_precision=args.mixed_precision,
        tokenizer_workers=args.tokenizer_workers,
    )
    from accelerate import PartialState

    if PartialState().is_main_process:
        print(
            f"{args.out}: {summary.num_passages} passages of {summary.num_documents} pages in "
            f"{summary.num_chunks} chunks; encoded {summary.chunks_encoded} chunks now, "
            f"{summary.chunks_skipped} were already done (per process: "
            f"{' '.join(map(str, summary.chunks_encoded_per_process))})"
        )


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


def _retrieve(args) -> None:
    from namesake.amber.retrieve import open_retriever, retrieve_config

    if args.similarity and args.retriever not in ("dense", "dpr"):
        raise NamesakeError("--similarity goes with --retriever dense or dpr")
    if args.retriever == "dpr" and (args.model or args.query_model):
        raise NamesakeError(
            "--retriever dpr takes --dpr-question-encoder and --dpr-context-encoder, "
            "not --model / --query-model"
        )
    if args.retriever != "dpr" and (args.dpr_question_encoder or args.dpr_context_encoder):
        raise NamesakeError("--dpr-question-encoder/--dpr-context-encoder go with --retriever dpr")
    if args.run_name is not None and args.format != "trec":
        raise NamesakeError("--run-name tags a TREC run: it goes with --format trec")
    if args.run_name is not None and (not args.run_name or any(map(str.isspace, args.run_name))):
        raise NamesakeError(
            f"--run-name {args.run_name!r}: a TREC run's tag is one field, without white space"
        )
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
        from namesake.amber.evaluation import load_queries

        load_queries(args.dataset, args.config)  # a bad config fails before the index build
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


def _evaluate(args) -> None:
    from namesake.amber.evaluation import coverage_lines
    from namesake.amber.paper import paper_line, split_config
    from namesake.amber.report import IR_LINE, evaluate_run, intervals_line, results_table
    from namesake.metrics import load_metric

    k_values = sorted(set(args.cutoffs))
    metrics = evaluate_run(
        args.dataset,
        args.config,
        args.predictions,
        args.out,
        k_values,
        load_metric("entity_confusion", args.metric),
        allow_missing=args.allow_missing,
        retriever=args.retriever,
        predictions_format=args.format,
        resamples=args.bootstrap_resamples,
    )
    collection, task = split_config(args.config)
    rows = [({"Config": args.config}, metrics)]
    print(results_table(rows, k_values, paper_rows=[(args.retriever, collection, task)]))
    print(paper_line(args.retriever))
    print(f"{intervals_line(metrics)} {IR_LINE}")
    print("\n".join(coverage_lines(metrics["coverage"], args.config)))
    print(f"Report: {args.out}/report.md, metrics.json, popularity_gap.png")
