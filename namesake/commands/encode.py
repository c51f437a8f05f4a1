"""`namesake encode`: a KILT corpus' passages encoded into float16 chunk folders, on every
GPU or CPU process Accelerate gives it (`namesake.retrieval.encode`)."""

from __future__ import annotations

import argparse

from namesake.commands.arguments import (
    add_batch_size,
    add_corpus,
    add_device,
    add_input,
    add_output,
    add_similarity,
    non_negative_int,
    positive_int,
)


def register(groups) -> None:
    _add_encode(
        groups.add_parser(
            "encode", help="encode a KILT corpus' passages into float16 chunks (Accelerate)"
        )
    )


def _add_encode(parser: argparse.ArgumentParser) -> None:
    # Literal defaults and choices keep `namesake --help` from importing torch and faiss;
    # tests/test_encode_index.py checks them against the modules' constants.
    parser.description = (
        "Encode the 100-word passages of a KILT knowledge source. Alone it uses one process; "
        "`accelerate launch -m namesake encode ...` splits the chunks over every process "
        "(GPUs, machines). A rerun resumes: finished chunks are skipped."
    )
    add_corpus(parser)
    add_output(
        parser,
        "--out",
        "embeddings folder (created or resumed)",
        kind="work",
        required=True,
    )
    models = parser.add_mutually_exclusive_group()
    add_input(models, "--model", help="sentence-transformers passage model (default: MiniLM)")
    add_input(
        models,
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
