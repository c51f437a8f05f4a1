"""`namesake ecqg`: the entity-conditioned question generation steps (passages, entity
ranking, attention, generation, synthetic sets, DPR evaluation)."""

from __future__ import annotations

import argparse
import json
import sys

from namesake.commands.arguments import (
    add_batch_size,
    add_device,
    add_dpr_encoders,
    add_input,
    add_output,
    add_seed,
    fraction,
    labelled_dense_run,
    non_negative_int,
    positive_int,
    probability,
)
from namesake.errors import NamesakeError


def register(groups) -> None:
    _add_ecqg(groups.add_parser("ecqg", help="entity-conditioned question generation steps"))


def _add_ecqg(parser: argparse.ArgumentParser) -> None:
    commands = parser.add_subparsers(dest="command", required=True)
    passages = commands.add_parser(
        "passages", help="100-word passages (title kept) from a KILT file or a Wikipedia dump"
    )
    source = passages.add_mutually_exclusive_group(required=True)
    add_input(source, "--kilt", help="KILT knowledge source (JSON lines)")
    add_input(source, "--wikipedia", help="pages-articles XML dump (bz2 or plain)")
    _add_parquet_out(passages)
    passages.set_defaults(run=_ecqg_passages)

    rank = commands.add_parser(
        "rank-entities",
        help="NER, then each passage's entities ranked by encoder attention",
        description="Rank each passage's entities by the passage encoder's CLS attention "
        "(least attended first) and write them to Parquet.",
    )
    _add_passages(rank)
    add_input(rank, "--model", required=True, help="passage encoder: Hub id or local path")
    _add_parquet_out(rank)
    _add_max_passages(rank)
    rank.add_argument(
        "--entities-per-passage",
        type=positive_int,
        help="keep the N least-attended entities of each passage (default: all)",
    )
    _add_attention_options(rank)
    rank.set_defaults(run=_ecqg_rank)

    report = commands.add_parser(
        "attention-report",
        help="passage-encoder attention statistics (entropy, first sentence vs rest) per model",
        description="CLS attention statistics of passage encoders, side by side.",
    )
    _add_passages(report)
    add_input(
        report,
        "--models",
        nargs="+",
        required=True,
        metavar="[LABEL=]MODEL",
        help="passage encoders, each a Hub id, a local path or a training/train_dpr.py output "
        "folder (its passage_encoder/), optionally labelled: 'Mixed-DPR=out/mixed_dpr' "
        "(default label: the path); a folder that was not trained gets a row saying why",
    )
    report.add_argument(
        "--max-passages",
        type=positive_int,
        default=10000,
        help="analyse the first N passages (default: 10000)",
    )
    add_output(
        report,
        "--out",
        "folder for report.md and report.json",
        kind="folder",
        writer="ecqg attention-report",
    )
    _add_attention_options(report)
    report.set_defaults(run=_ecqg_attention_report)

    warm = commands.add_parser(
        "warm-start", help="a BERT2BERT question generator warm-started from an encoder"
    )
    add_input(warm, "--encoder", help="BERT-style encoder path or Hub id (default: bundled)")
    add_output(
        warm,
        "--out",
        "output model folder",
        kind="folder",
        writer="ecqg warm-start",
        required=True,
    )
    add_seed(warm, "draws the decoder's new cross-attention (default: 0)")
    warm.set_defaults(run=_ecqg_warm_start)

    _add_ecqg_generate(commands)
    _add_ecqg_build_synthetic_set(commands)
    _add_ecqg_evaluate_dpr(commands)
    _add_ecqg_split_gold(commands)


def _add_passages(parser: argparse.ArgumentParser) -> None:
    add_input(parser, "--passages", required=True, help="passages Parquet (`ecqg passages`)")


def _add_parquet_out(parser: argparse.ArgumentParser) -> None:
    add_output(parser, "--out", "output Parquet", kind="file", required=True)


def _add_max_passages(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-passages", type=positive_int, help="read the first N passages (default: all)"
    )


def _add_attention_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--layer", type=int, default=-1, help="encoder layer read (default: -1, the last)"
    )
    parser.add_argument(
        "--heads",
        type=non_negative_int,
        nargs="+",
        metavar="HEAD",
        help="attention heads averaged (default: all)",
    )
    add_batch_size(parser, 32, "passages per forward pass")
    parser.add_argument(
        "--max-length", type=positive_int, default=256, help="tokens per passage (truncated)"
    )


def _add_ecqg_generate(commands) -> None:
    generate = commands.add_parser(
        "generate",
        help="synthetic questions from a trained question generator",
        description="Sample questions (and answers) from a trained generator for each "
        "passage: conditioned on its least-attended entities, or unconditioned. Writes JSON "
        "lines {passage_id, entity, question, answer, raw} and a statistics file.",
    )
    _add_passages(generate)
    add_input(
        generate,
        "--ranked-entities",
        help="ranked entities Parquet (`ecqg rank-entities`); needed unless --unconditioned",
    )
    add_input(
        generate, "--model", required=True, help="trained generator: folder or Hub id (seq2seq)"
    )
    add_output(
        generate,
        "--out",
        "output JSON lines",
        kind="file",
        required=True,
    )
    add_output(
        generate,
        "--stats",
        "statistics JSON (default: <out>.stats.json)",
        kind="file",
    )
    add_input(
        generate,
        "--unconditioned",
        action="store_true",
        help="one input per passage, without an entity (the unconditioned generator)",
    )
    generate.add_argument(
        "--entities-per-passage",
        type=positive_int,
        default=3,
        help="least-attended entities used per passage (default: 3)",
    )
    generate.add_argument(
        "--samples-per-entity",
        type=positive_int,
        default=1,
        help="generations sampled per input (default: 1)",
    )
    generate.add_argument(
        "--top-p", type=probability, default=0.95, help="nucleus sampling mass (default: 0.95)"
    )
    generate.add_argument(
        "--sampling-top-k",
        type=non_negative_int,
        default=50,
        help="sample among the K likeliest tokens; 0: no limit (default: 50)",
    )
    generate.add_argument(
        "--max-new-tokens",
        type=positive_int,
        default=64,
        help="generated tokens per question (default: 64)",
    )
    generate.add_argument(
        "--max-source-length",
        type=positive_int,
        default=1024,
        help="input tokens (truncated; default: 1024)",
    )
    add_batch_size(generate, 16, "inputs per batch (default: 16)")
    _add_max_passages(generate)
    add_seed(generate, "sampling seed (default: 0)")
    add_device(generate)
    generate.set_defaults(run=_ecqg_generate)


def _add_ecqg_build_synthetic_set(commands) -> None:
    build = commands.add_parser(
        "build-synthetic-set",
        help="filter, mix and write the Mixed-DPR synthetic training set",
        description="Per set of generated questions: answer filter (extractive QA, or a "
        "substring check without --qa-model), then hardness filter (the baseline retriever's "
        "score of each question's own passage: dense by default, as in the paper, or BM25); "
        "then the two sets are mixed, given hard negatives from the same retriever and written "
        "in DPR's training format.",
    )
    _add_passages(build)
    add_input(
        build, "--conditioned", required=True, help="entity-conditioned questions (`ecqg generate`)"
    )
    add_input(
        build,
        "--unconditioned",
        required=True,
        help="unconditioned questions (`ecqg generate --unconditioned`)",
    )
    add_input(
        build,
        "--qa-model",
        help="AutoModelForQuestionAnswering id or path for the answer filter "
        "(default: the substring check)",
    )
    build.add_argument(
        "--no-answer-filter",
        action="store_true",
        help="keep every usable question unchecked (a toy generator's answers rarely occur in "
        "their passage); the statistics say the filter was off",
    )
    build.add_argument(
        "--qa-threshold",
        type=float,
        default=0.5,
        help="minimum QA span confidence (default: 0.5)",
    )
    build.add_argument(
        "--qa-batch-size", type=positive_int, default=32, help="questions per QA batch"
    )
    hardness = build.add_mutually_exclusive_group()
    hardness.add_argument(
        "--hard-quantile",
        type=fraction,
        default=0.5,
        help="keep pairs whose baseline score is below this quantile (default: 0.5)",
    )
    hardness.add_argument(
        "--no-hardness-filter", action="store_true", help="skip the hardness filter"
    )
    build.add_argument(
        "--hardness-retriever",
        choices=("dense", "bm25"),
        default="dense",
        help="baseline retriever of the hardness filter and the hard negatives (default: dense)",
    )
    add_input(
        build,
        "--hardness-model",
        metavar="SPEC",
        help="dense baseline: a training/train_dpr.py output folder (its st_* encoders) or a "
        "sentence-transformers model (default: the bundled MiniLM)",
    )
    _add_embeddings_cache(build)
    build.add_argument(
        "--ratio",
        type=fraction,
        default=0.5,
        help="share of conditioned questions in the mix (default: 0.5)",
    )
    build.add_argument(
        "--size",
        type=non_negative_int,
        help="questions in the mix (default: the most the ratio allows)",
    )
    add_seed(build, "mixing seed (default: 0)")
    build.add_argument(
        "--negatives-per-question",
        type=non_negative_int,
        default=1,
        help="hard negatives per question (default: 1)",
    )
    add_output(
        build,
        "--out",
        "DPR-format JSON output",
        kind="file",
        required=True,
    )
    add_output(
        build,
        "--stats",
        "statistics JSON output",
        kind="file",
    )
    build.set_defaults(run=_ecqg_build_synthetic_set)


def _add_embeddings_cache(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--embeddings-cache",
        metavar="DIR",
        help="folder of passage embeddings shared by the steps that rank the same passages "
        "with the same dense model: read from there when an earlier step encoded them, "
        "stored there otherwise (keyed by the model's files, the passages and the "
        "normalisation; default: encode every time)",
    )


def _add_ecqg_evaluate_dpr(commands) -> None:
    evaluate = commands.add_parser(
        "evaluate-dpr",
        help="top-k retrieval accuracy of DPR bi-encoders, side by side",
        description="DPR's top-k retrieval accuracy (an answer in the first k passages) of "
        "a DPR bi-encoder on a DPR test file, over passages from a Parquet file or a KILT "
        "knowledge source; with --run / --tfidf / --dpr-*, several encoders in one table on "
        "the same questions and passages, optionally on Lewis et al.'s overlap subsets.",
    )
    models = evaluate.add_mutually_exclusive_group()
    add_input(models, "--model-dir", help="a training/train_dpr.py output folder (both encoders)")
    add_input(models, "--model", help="passage encoder: a sentence-transformers folder or Hub id")
    add_input(
        evaluate, "--query-model", help="with --model: the question encoder (default: --model)"
    )
    add_input(
        evaluate,
        "--passages",
        required=True,
        help="passages Parquet (`ecqg passages`) or KILT JSON lines",
    )
    add_input(
        evaluate,
        "--test-file",
        required=True,
        help="DPR test file: question<TAB>[answers] CSV/TSV or JSON",
    )
    evaluate.add_argument(
        "--cutoffs",
        type=positive_int,
        nargs="+",
        default=[1, 5, 20, 100],
        metavar="K",
        help="top-k accuracy cut-offs (default: 1 5 20 100)",
    )
    evaluate.add_argument(
        "--similarity",
        choices=("cosine", "dot"),
        help="force cosine or the dot product (default: the similarity the passage model "
        "declares; dot, as trained, for namesake's DPR exports)",
    )
    add_batch_size(evaluate, 64, "encoding batch size (default: 64)")
    add_input(
        evaluate,
        "--run",
        dest="runs",  # args.run is the command's handler
        nargs="+",
        type=labelled_dense_run,
        default=[],
        metavar="LABEL=SPEC",
        help="labelled encoders side by side: a training/train_dpr.py folder (one whose "
        "training was skipped keeps its row, with the reason) or a sentence-transformers model",
    )
    evaluate.add_argument(
        "--tfidf", action="store_true", help="add DrQA's TF-IDF over the same passages"
    )
    add_dpr_encoders(evaluate)
    add_input(
        evaluate,
        "--overlap-annotations",
        help="Lewis et al. (2021) annotations (QA-Overlap's <dataset>-annotations.jsonl, ids = "
        "0-based lines of --test-file): adds each encoder's accuracy on every subset",
    )
    add_device(evaluate)
    _add_embeddings_cache(evaluate)
    add_output(
        evaluate,
        "--out",
        "write the metrics JSON here",
        kind="file",
    )
    add_output(
        evaluate,
        "--markdown",
        "with --run/--tfidf/--dpr-*: write the table here",
        kind="file",
    )
    evaluate.set_defaults(run=_ecqg_evaluate_dpr)


def _add_ecqg_split_gold(commands) -> None:
    split = commands.add_parser(
        "split-gold",
        help="split DPR training questions into training and held-out sets by passage",
        description="Hold out a seeded share of the distinct positive passages of a DPR "
        "training file, with every question all of whose positives they are; questions with "
        "positives on both sides are dropped and counted. No held-out question's passage is a "
        "positive of a training question.",
    )
    add_input(split, "--input", required=True, help="DPR-format JSON list of training items")
    add_output(
        split,
        "--train-out",
        "JSON output: the training items",
        kind="file",
        required=True,
    )
    add_output(
        split,
        "--held-out-out",
        "JSON output: the held-out items",
        kind="file",
        required=True,
    )
    split.add_argument(
        "--held-out-fraction",
        type=float,
        default=0.3,
        help="share of the distinct positive passages held out, in (0, 1) (default: 0.3)",
    )
    add_seed(split, "seed of the passages' shuffle (default: 0)")
    split.set_defaults(run=_ecqg_split_gold)


def _ecqg_passages(args) -> None:
    from namesake.ecqg.passages import passages_from_kilt, passages_from_wikipedia, write_passages

    source = passages_from_kilt(args.kilt) if args.kilt else passages_from_wikipedia(args.wikipedia)
    counts = write_passages(source, args.out)
    print(f"Wrote {counts['passages']:,} passages to {args.out}")


def _ecqg_rank(args) -> None:
    from namesake.ecqg.attention import rank_entities

    counts = rank_entities(
        args.passages,
        args.model,
        args.out,
        max_passages=args.max_passages,
        entities_per_passage=args.entities_per_passage,
        layer=args.layer,
        heads=args.heads,
        batch_size=args.batch_size,
        max_length=args.max_length,
    )
    print(json.dumps(counts))


def _ecqg_attention_report(args) -> None:
    from namesake.ecqg.attention import attention_report

    report = attention_report(
        args.passages,
        args.models,
        max_passages=args.max_passages,
        out=args.out,
        layer=args.layer,
        heads=args.heads,
        batch_size=args.batch_size,
        max_length=args.max_length,
    )
    sys.stdout.write(report)


def _ecqg_generate(args) -> None:
    from namesake.ecqg.generation import generate_questions

    if not args.unconditioned and not args.ranked_entities:
        raise NamesakeError("--ranked-entities is needed unless --unconditioned")
    generate_questions(
        args.passages,
        args.model,
        args.out,
        ranked_entities=None if args.unconditioned else args.ranked_entities,
        unconditioned=args.unconditioned,
        stats_path=args.stats,
        entities_per_passage=args.entities_per_passage,
        samples_per_entity=args.samples_per_entity,
        top_p=args.top_p,
        sampling_top_k=args.sampling_top_k,
        max_new_tokens=args.max_new_tokens,
        max_source_length=args.max_source_length,
        batch_size=args.batch_size,
        max_passages=args.max_passages,
        seed=args.seed,
        device=args.device,
    )


def _ecqg_build_synthetic_set(args) -> None:
    from namesake.ecqg.synthetic import build_synthetic_set

    build_synthetic_set(
        args.passages,
        args.conditioned,
        args.unconditioned,
        args.out,
        qa_model=args.qa_model,
        qa_threshold=args.qa_threshold,
        qa_batch_size=args.qa_batch_size,
        check_answers=not args.no_answer_filter,
        hard_quantile=None if args.no_hardness_filter else args.hard_quantile,
        hardness_retriever_kind=args.hardness_retriever,
        hardness_model=args.hardness_model,
        ratio=args.ratio,
        size=args.size,
        seed=args.seed,
        negatives_per_question=args.negatives_per_question,
        stats_path=args.stats,
        embeddings_cache=args.embeddings_cache,
    )


def _ecqg_evaluate_dpr(args) -> None:
    from namesake.ecqg.dpr.evaluation import evaluate_retrieval, model_dir_encoders

    if args.runs or args.tfidf or args.dpr_question_encoder or args.dpr_context_encoder:
        _ecqg_evaluate_dpr_runs(args)
        return
    if args.overlap_annotations or args.markdown:
        raise NamesakeError("--overlap-annotations and --markdown go with --run/--tfidf/--dpr-*")
    if args.model_dir:
        if args.query_model:
            raise NamesakeError("--query-model goes with --model, not --model-dir")
        passage_model, question_model = model_dir_encoders(args.model_dir)
    elif args.model:
        passage_model, question_model = args.model, args.query_model
    else:
        raise NamesakeError("evaluate-dpr: give --model-dir, --model, or --run/--tfidf/--dpr-*")
    result = evaluate_retrieval(
        args.passages,
        args.test_file,
        passage_model,
        question_model,
        cutoffs=args.cutoffs,
        similarity=args.similarity,
        batch_size=args.batch_size,
        device=args.device,
        out=args.out,
        embeddings_cache=args.embeddings_cache,
    )
    print(" ".join(f"{name} {value:.4f}" for name, value in result["metrics"].items()))


def _ecqg_evaluate_dpr_runs(args) -> None:
    """evaluate-dpr with several encoders: one table, the JSON and the markdown written."""
    import json

    from namesake.ecqg.dpr.evaluation import encoder_runs, evaluate_runs, runs_table
    from namesake.outputs import atomic_file

    runs = encoder_runs(
        model_dir=args.model_dir,
        model=args.model,
        query_model=args.query_model,
        labelled=args.runs,
        dpr_question_encoder=args.dpr_question_encoder,
        dpr_context_encoder=args.dpr_context_encoder,
        tfidf=args.tfidf,
    )
    result = evaluate_runs(
        args.passages,
        args.test_file,
        runs,
        cutoffs=args.cutoffs,
        similarity=args.similarity,
        batch_size=args.batch_size,
        device=args.device,
        overlap_annotations=args.overlap_annotations,
        embeddings_cache=args.embeddings_cache,
    )
    table = runs_table(result)
    if args.out:
        with atomic_file(args.out, "w") as f:
            f.write(json.dumps(result, indent=2) + "\n")
    if args.markdown:
        with atomic_file(args.markdown, "w") as f:
            f.write(table + "\n")
    print(table)
    print(
        f"{result['questions']} questions ({result['skipped_questions']} skipped) of "
        f"{result['test_file']}, {result['passages']:,} passages"
    )


def _ecqg_split_gold(args) -> None:
    from namesake.ecqg.dpr.split import split_gold_file

    counts = split_gold_file(
        args.input, args.train_out, args.held_out_out, args.held_out_fraction, args.seed
    )
    for side, out in (("train", args.train_out), ("held_out", args.held_out_out)):
        questions, passages = counts[side]["questions"], counts[side]["passages"]
        print(f"{side}: {questions:,} questions over {passages:,} passages -> {out}")
    print(f"dropped: {counts['dropped']:,} questions with positives on both sides")


def _ecqg_warm_start(args) -> None:
    from namesake.ecqg.generation import warm_start_generator
    from namesake.retrieval import DEFAULT_MODEL

    print(f"Wrote {warm_start_generator(args.encoder or DEFAULT_MODEL, args.out, args.seed)}")
