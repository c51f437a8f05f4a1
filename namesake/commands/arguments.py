"""Argument types and options that several command groups share: one definition, so that
an option keeps one name, type and meaning in every command.

Option conventions, the same in every command (tests/test_ecqg_commands.py checks them):
- long options are hyphenated, and every option has help text;
- a list is given as space-separated values after one flag (`--cutoffs 1 5 20`, `--dump
  a.xml.bz2 b.xml.bz2`), never comma-separated; only `wes score --answer` repeats, once per
  example, each a list (a prediction, then its references);
- a name keeps one meaning: `--top-k` documents retrieved per query, `--cutoffs` accuracy@k
  cut-offs, `--entities-per-passage` entities used or kept per passage, `--max-passages` the
  first N passages read, `--model` one model and `--models` several.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path

from namesake.amber.build.reference import COLLECTIONS
from namesake.amber.evaluation.retrieve import CANDIDATES
from namesake.outputs import (
    Output,
    add_input,
    check_outputs,
    claimed_folder,
    declared_inputs,
    overwriting,
    record_written_file,
)

#: How a command writes an output (`add_output`): a folder replaced whole when the command
#: succeeds, a folder filled file by file as it runs, a resumable work folder with its own
#: manifest (`namesake.work_folder`), or one file.
OUTPUT_KINDS = ("folder", "filling", "work", "file")


def int_at_least(minimum: int):
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


positive_int = int_at_least(1)


non_negative_int = int_at_least(0)


_SIZE_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}


def byte_size(text: str) -> int:
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


def add_collections(parser: argparse.ArgumentParser, verb: str) -> None:
    """``--collections``: the AmbER collections a command works on, both by default."""
    parser.add_argument(
        "--collections",
        nargs="+",
        choices=COLLECTIONS,
        default=list(COLLECTIONS),
        help=f"collections to {verb} (default: {' '.join(COLLECTIONS)})",
    )


def add_amber_dataset(parser: argparse.ArgumentParser) -> None:
    """``--dataset``: the AmbER build a command reads, a folder or a Hub id."""
    add_input(parser, "--dataset", required=True, help="AmbER folder or Hub id")


def add_amber_config(parser: argparse.ArgumentParser) -> None:
    """``--dataset`` and ``--config``: the one AmbER config a command reads."""
    add_amber_dataset(parser)
    parser.add_argument("--config", required=True, help="e.g. human_qa, nonhuman_fc")


def add_corpus(parser: argparse.ArgumentParser) -> None:
    """``--corpus``: the KILT knowledge source a command reads, required."""
    add_input(parser, "--corpus", required=True, help="KILT knowledge source (JSON lines)")


def add_top_k(parser: argparse.ArgumentParser) -> None:
    """``--top-k``: documents a retriever returns per query."""
    parser.add_argument(
        "--top-k", type=positive_int, default=100, help="documents retrieved per query"
    )


def add_metric(parser: argparse.ArgumentParser) -> None:
    """``--metric``: the entity_confusion module that scores AmbER."""
    add_input(parser, "--metric", help="entity_confusion module folder (default: metrics/)")


def add_workers(parser: argparse.ArgumentParser) -> None:
    """``--workers``: processes of a dump-reading build, every core by default."""
    parser.add_argument(
        "--workers", type=int, default=os.cpu_count() or 1, help="processes (default: all cores)"
    )


def add_seed(parser: argparse.ArgumentParser, help: str) -> None:
    """``--seed``: an integer, 0 by default; `help` says what it draws."""
    parser.add_argument("--seed", type=int, default=0, help=help)


def add_batch_size(parser: argparse.ArgumentParser, default: int, help: str) -> None:
    """``--batch-size``: a positive integer; `help` says what a batch holds."""
    parser.add_argument("--batch-size", type=positive_int, default=default, help=help)


def add_device(
    parser: argparse.ArgumentParser,
    help: str = "torch device (default: cuda when available, else cpu)",
) -> None:
    """``--device``: a torch device name (``cuda:1``, ``cpu``); `help` says the default, cuda
    when there is one unless the command says otherwise."""
    parser.add_argument("--device", help=help)


def add_memory_budget(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--memory-budget",
        type=byte_size,
        help="memory a BM25 build may hold (default 2G); beyond it, its tokenised chunks and "
        "score matrix go to disk beside the index, and the index is the same",
    )


def fraction(text: str) -> float:
    """A float in [0, 1]."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be in [0, 1], got {value}")
    return value


def probability(text: str) -> float:
    """A float in (0, 1]."""
    value = fraction(text)
    if value == 0.0:
        raise argparse.ArgumentTypeError("must be in (0, 1], got 0")
    return value


def add_candidates(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--candidates",
        choices=CANDIDATES,
        default="all",
        help="all: rank the whole corpus (default); set: rank only the pages of each query's "
        "AmbER set (the paper's Table 8 setting)",
    )


def add_rerank(parser: argparse.ArgumentParser) -> None:
    # literal defaults keep `namesake --help` from importing onnxruntime; a test checks them
    add_input(
        parser,
        "--rerank",
        nargs="?",
        const="bundled",
        metavar="MODEL",
        help="rerank the first stage's top pages with a cross-encoder reading the query beside "
        "each page's title and opening passage: bundled (the default: the int8 ONNX "
        "cross-encoder/ms-marco-MiniLM-L-12-v2), colbert (the bundled answerai-colbert-small-v1, "
        "MaxSim), an ONNX folder, or a sentence-transformers CrossEncoder Hub id or folder",
    )
    parser.add_argument(
        "--rerank-depth",
        type=positive_int,
        default=100,
        metavar="N",
        help="pages of each first-stage ranking that --rerank rescores (default: 100)",
    )


def add_scoring(parser: argparse.ArgumentParser) -> None:
    """The options of scoring predictions on AmbER (`evaluate`, `compare-runs`)."""
    parser.add_argument(
        "--format",
        choices=["kilt", "trec"],
        help="the predictions' format: KILT JSON lines or a TREC run (default: told from the "
        "content)",
    )
    parser.add_argument(
        "--cutoffs",
        type=positive_int,
        nargs="+",
        default=[1, 20],
        metavar="K",
        help="accuracy@k cut-offs (default: 1 20)",
    )
    parser.add_argument(
        "--allow-missing", action="store_true", help="score queries without a prediction as empty"
    )
    add_statistics(parser)


def add_statistics(parser: argparse.ArgumentParser) -> None:
    """The resampling settings of every interval and paired test, the same three options with
    the same defaults in `evaluate`, `amber compare` and `compare-runs`
    (`namesake.amber.evaluation.statistics.StatisticsSettings`; `statistics_settings`)."""
    # literal defaults keep `namesake --help` from importing the statistics; a test checks them
    add_seed(parser, "of the resampling behind the intervals and paired tests (default: 0)")
    parser.add_argument(
        "--bootstrap-resamples",
        type=positive_int,
        default=1000,
        metavar="N",
        help="resamples of the AmbER sets behind each 95%% interval (default: 1000)",
    )
    parser.add_argument(
        "--test-resamples",
        type=positive_int,
        default=10_000,
        metavar="N",
        help="random sign flips of the sets (and of the queries) in the paired tests "
        "(default: 10000; all of them when there are fewer)",
    )


def scoring_options(args: argparse.Namespace):
    """The `ScoringOptions` of a command's options: the statistics, and where the command
    has them ``--cutoffs``, ``--allow-missing`` and ``--metric`` (`compare-runs` compares
    per-query measures, which the metric does not make); `amber compare` scores at the
    default cut-offs, the paper's."""
    from namesake.amber.evaluation.scoring import ScoringOptions

    return ScoringOptions(
        k_values=tuple(sorted(set(getattr(args, "cutoffs", ScoringOptions.k_values)))),
        metric=getattr(args, "metric", None),
        allow_missing=getattr(args, "allow_missing", False),
        statistics=statistics_settings(args),
    )


def statistics_settings(args: argparse.Namespace):
    """The `StatisticsSettings` of `add_statistics`' options."""
    from namesake.amber.evaluation.statistics import StatisticsSettings

    return StatisticsSettings(args.seed, args.bootstrap_resamples, args.test_resamples)


def add_run_name(parser: argparse.ArgumentParser, default: str) -> None:
    """``--run-name``: the tag, the last field, of a TREC run the command writes; `default`
    says what tags it otherwise. Checked before the work by `check_run_name`."""
    parser.add_argument("--run-name", help=f"trec: the run's tag, its last field ({default})")


def check_run_name(args: argparse.Namespace) -> None:
    """Refuses, before the work, a ``--run-name`` without ``--format trec`` or one that a
    TREC line cannot hold (`namesake.trec.check_token`), rather than after the run is made."""
    if args.run_name is None:
        return
    from namesake.errors import NamesakeError
    from namesake.trec import check_token

    if args.format != "trec":
        raise NamesakeError("--run-name tags a TREC run: it goes with --format trec")
    check_token(args.run_name, "--run-name", args.out)


def add_dpr_encoders(parser: argparse.ArgumentParser) -> None:
    # Literal defaults keep `namesake --help` from importing torch; tests check them.
    add_input(
        parser,
        "--dpr-question-encoder",
        metavar="MODEL",
        help="dpr: DPRQuestionEncoder Hub id or folder "
        "(default: facebook/dpr-question_encoder-multiset-base)",
    )
    add_input(
        parser,
        "--dpr-context-encoder",
        metavar="MODEL",
        help="dpr: DPRContextEncoder Hub id or folder "
        "(default: facebook/dpr-ctx_encoder-multiset-base)",
    )


def add_similarity(parser: argparse.ArgumentParser, default: str | None = None) -> None:
    parser.add_argument(
        "--similarity",
        choices=["dot", "cos"],
        help="dense and dpr: dot product or cosine; "
        + (default or "default: the model's own (cosine for MiniLM, dot for DPR)"),
    )


def dpr_options(args) -> dict:
    """The dpr retriever's build options that the command line gives."""
    given = {
        "question_encoder": args.dpr_question_encoder,
        "context_encoder": args.dpr_context_encoder,
        "similarity": args.similarity,
    }
    return {name: value for name, value in given.items() if value}


def labelled_dense_run(value: str) -> tuple[str, str]:
    """``LABEL=SPEC`` of ``amber compare --dense-run`` and ``ecqg evaluate-dpr --run``."""
    label, equals, spec = value.partition("=")
    if not (equals and label.strip() and spec):
        raise argparse.ArgumentTypeError(
            f"expected LABEL=SPEC, e.g. Mixed-DPR=out/dpr, not {value!r}"
        )
    return label.strip(), spec


def add_output(
    parser: argparse.ArgumentParser,
    option: str,
    help: str,
    *,
    kind: str,
    writer: str | None = None,
    required: bool = False,
    expected_bytes: Callable[[argparse.Namespace], int] | None = None,
) -> None:
    """Adds an output option; `namesake.cli` checks every output a command declares before
    the command runs (`checked_outputs`), so no command can skip the checks.

    `writer`: the command named in a folder's marker (``"amber build"``), the same name the
    library writes with; `expected_bytes`: what the command is known to write, from its
    arguments, checked against the free space."""
    if kind not in OUTPUT_KINDS:
        raise ValueError(f"kind must be one of {OUTPUT_KINDS}, not {kind!r}")
    if (writer is None) != (kind in ("file", "work")):
        raise ValueError("folder outputs name their writer; file and work outputs do not")
    action = parser.add_argument(option, required=required, help=help)
    declared = parser.get_default("outputs") or ()
    parser.set_defaults(outputs=(*declared, (action.dest, option, kind, writer)))
    if expected_bytes is not None:
        parser.set_defaults(expected_bytes=expected_bytes)
    if kind != "work" and parser.get_default("overwrite") is None:
        parser.add_argument(
            "--overwrite",
            action="store_true",
            default=False,
            help="write into an output folder, or over an output file, that namesake did not "
            "write; in a folder, the files namesake did not write are kept (a file it would "
            "write over is refused)",
        )


def add_dataset_output(parser: argparse.ArgumentParser, writer: str) -> None:
    """``--out``: the Hub dataset folder a build writes (`writer`, e.g. ``"amber build"``)."""
    add_output(
        parser, "--out", "output Hub dataset folder", kind="folder", writer=writer, required=True
    )


@contextlib.contextmanager
def checked_outputs(args: argparse.Namespace) -> Iterator[None]:
    """Checks the command's declared outputs against its declared inputs (`add_input`), its
    disk and what is already there, before any work; then runs the block with
    ``--overwrite`` in force, and folders that fill up as the command runs claimed and
    marked. File outputs the command wrote are recorded as namesake's once it succeeds."""
    declared = [entry for entry in getattr(args, "outputs", ()) if getattr(args, entry[0])]
    estimate = getattr(args, "expected_bytes", None)
    with overwriting(bool(getattr(args, "overwrite", False))), contextlib.ExitStack() as stack:
        check_outputs(
            [
                Output(Path(getattr(args, dest)), kind, writer, option)
                for dest, option, kind, writer in declared
            ],
            inputs=declared_inputs(args),
            expected_bytes=estimate(args) if estimate else 0,
        )
        for dest, _, kind, writer in declared:
            if kind == "filling":
                stack.enter_context(claimed_folder(getattr(args, dest), writer=writer))
        yield
    command = " ".join(filter(None, (getattr(args, "group", None), getattr(args, "command", None))))
    for dest, _, kind, _ in declared:
        written = Path(getattr(args, dest))
        if kind == "file" and written.is_file():
            record_written_file(written, command)
