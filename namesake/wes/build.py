"""The WES build: a pages-articles dump in, a Hub dataset folder with one corpus and one
pairs config per incoming-link threshold out (and a hardpairs config with look-alike
negatives when strategies are given). Each stage lives in the module named after it
(`mining`, `pairs`, `hard_negatives`, `dataset`); this file only wires them."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa

from namesake.build_report import BuildReport, warn_skipped
from namesake.errors import InputProblems, NamesakeError
from namesake.outputs import atomic_directory
from namesake.timing import StageTimer
from namesake.wes.dataset import (
    corpus_config,
    corpus_table,
    dataset_card,
    hard_negatives_section,
    hardpairs_config,
    pairs_config,
    statistics,
    write_configs,
)
from namesake.wes.hard_negatives import (
    DEFAULT_DF_CAP,
    DEFAULT_SOURCE_CAP,
    check_strategies,
    hard_pairs,
    hardness,
    zero_shot_model,
)
from namesake.wes.mining import expand_dumps, mine_dumps
from namesake.wes.pairs import (
    MISSING_TARGETS,
    DictionaryWords,
    add_pairs,
    dictionary_filter,
    negatives,
    redirect_synonyms,
    resolve_targets,
    source_counts,
    split_pairs,
    threshold_corpus,
)

DEFAULT_THRESHOLDS = (5, 10, 20)
# Above this share of links to pages absent from the dump, the dump looks partial.
PARTIAL_DUMP_SHARE = 0.5
DUMP_DATE = re.compile(
    r"(?<![0-9])((?:19|20)[0-9]{2})(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01])(?![0-9])"
)


def dump_date(paths: Sequence[str | os.PathLike]) -> str | None:
    """The dump's date in its file name (`enwiki-20181220-pages-...` -> '2018-12-20'), or
    None when no name carries a date."""
    for path in paths:
        match = DUMP_DATE.search(Path(path).name)
        if match:
            digits = match.group(0)
            return f"{digits[:4]}-{digits[4:6]}-{digits[6:]}"
    return None


def dump_year(paths: Sequence[str | os.PathLike]) -> int | None:
    """The year of the dump's date in its file name (`enwiki-20181220-pages-...` -> 2018),
    or None when no name carries a date."""
    date = dump_date(paths)
    return int(date[:4]) if date else None


def dump_sources(paths: Sequence[Path], year: int) -> dict[str, str]:
    """The card's provenance, which `namesake publish dataset wes` requires: the dump's file
    names and its date, from the names, else the year given (``--year``) and that the names
    carry no date."""
    date = dump_date(paths) or f"{year} (given with --year; the file name carries no date)"
    return {"dump": ", ".join(p.name for p in paths), "dump date": date}


def build_wes(
    dump: str | os.PathLike | Sequence[str | os.PathLike],
    out: str | os.PathLike,
    thresholds: Sequence[int] = DEFAULT_THRESHOLDS,
    year: int | None = None,
    seed: int = 0,
    workers: int = 1,
    dictionary: bool = True,
    hard_negatives: Sequence[str] = (),
    redirects: bool = False,
    all_targets: bool = False,
    strict: bool = False,
    words: DictionaryWords | None = None,
    df_cap: int = DEFAULT_DF_CAP,
    source_cap: int = DEFAULT_SOURCE_CAP,
    measure_hardness: bool | None = None,
    model=None,
    work_dir: str | os.PathLike | None = None,
) -> BuildReport:
    """Mines WES from the dump file(s) (paths or glob patterns) into the folder `out`, which
    appears atomically, or not at all. `words` replaces the default dictionary (tests).

    `hard_negatives`: strategies of `namesake.wes.hard_negatives` for an extra
    `{year}thresh{n}hardpairs` config per threshold (same article split as the pairs
    config); `measure_hardness` (default: on when strategies are given) puts each kind of
    negative's zero-shot AUC in the card and in `report.statistics[n]["hardness"]`
    (`model`: a sentence-transformers model in place of all-MiniLM-L6-v2).

    `work_dir`: where the dump's mined ranges are kept (`namesake.wes.mining.MinedRanges`),
    so that a rerun after a crash or a kill mines only what is missing; the later stages
    run again (they read the mined links, not the dump). Another dump is refused by name;
    other settings (thresholds, filters, negatives) reuse the same mined ranges."""
    thresholds = sorted(set(int(t) for t in thresholds))
    if not thresholds or thresholds[0] < 1:
        raise NamesakeError(f"thresholds must be positive integers, got {thresholds}")
    if isinstance(hard_negatives, str):
        hard_negatives = [hard_negatives]
    try:
        strategies = check_strategies(hard_negatives or ())
    except ValueError as error:
        raise NamesakeError(f"--hard-negatives: {error}") from None
    if df_cap < 1 or source_cap < 2:
        raise NamesakeError("--df-cap must be at least 1 and --source-cap at least 2")
    measure = bool(strategies) if measure_hardness is None else measure_hardness
    if measure and not strategies:
        raise NamesakeError("--measure-hardness needs --hard-negatives")
    paths = expand_dumps(dump)
    year = year if year is not None else dump_year(paths)
    if year is None:
        names = ", ".join(p.name for p in paths)
        raise NamesakeError(f"no dump date in the file name ({names}): give --year")
    report = BuildReport()
    problems = InputProblems(strict)
    timer = StageTimer(report.seconds)

    def lap(stage: str) -> None:  # stages met once per threshold add up
        before = report.seconds.get(stage, 0.0)
        timer.lap(stage)
        report.seconds[stage] += before

    mined = mine_dumps(paths, workers, problems, work_dir=work_dir)
    if work_dir is not None:
        report.resumed.append(f"mined ranges reused from {work_dir}: {mined.reused_ranges:,}")
    report.counts["main-namespace pages"] = mined.pages.num_rows
    report.counts["redirect pages (no links)"] = mined.redirect_pages
    report.counts["links after the '#', ':', '(' filters (distinct per page)"] = (
        mined.links.num_rows
    )
    lap("mining")

    links, resolved = resolve_targets(mined.links, mined.pages, redirects, all_targets)
    for key, value in resolved.items():
        if key != "links":
            report.counts[key] = value
    partial_dump = None if all_targets else partial_dump_hint(resolved)
    if partial_dump:
        report.problems.append(partial_dump)
    counts = source_counts(links)
    words = words if words is not None or not dictionary else DictionaryWords()
    lap("targets and incoming links")

    configs: dict[str, dict[str, pa.Table]] = {}
    for threshold in thresholds:
        corpus = threshold_corpus(links, counts, threshold)
        dropped = {}
        if redirects and corpus.num_rows:
            synonyms = redirect_synonyms(mined.pages, corpus["article"])
            before = corpus.num_rows
            corpus = add_pairs(corpus, synonyms)
            dropped["redirect titles added"] = corpus.num_rows - before
        if dictionary and corpus.num_rows:
            corpus, dropped["dictionary-word link texts"] = dictionary_filter(corpus, words)
        prefix = f"threshold {threshold}"
        if not corpus.num_rows:  # an empty Parquet config would not load; say so instead
            report.problems.append(f"{prefix}: no article left; no config written")
            continue
        positives, randoms = negatives(corpus, seed)
        splits = split_pairs(corpus, pa.concat_tables([positives, randoms]), seed)
        dropped["positives without a distinct negative"] = corpus.num_rows - positives.num_rows
        report.statistics[threshold] = statistics(corpus, splits, dropped)
        report.counts[f"{prefix}: articles"] = report.statistics[threshold]["articles"]
        report.counts[f"{prefix}: corpus pairs"] = corpus.num_rows
        for key, value in dropped.items():
            report.counts[f"{prefix}: {key}"] = value
        configs[corpus_config(year, threshold)] = {"train": corpus_table(corpus)}
        if not any(t.num_rows for t in splits.values()):
            report.problems.append(f"{prefix}: no negative pair possible; no pairs config")
            continue
        for split, table in splits.items():
            report.counts[f"{prefix}: pairs {split}"] = table.num_rows
            if not table.num_rows:
                report.problems.append(f"{prefix}: empty {split} split, left out of the pairs")
        configs[pairs_config(year, threshold)] = splits
        if strategies:
            lap("corpora, negatives, splits")
            rows, kinds = hard_pairs(
                corpus, positives, randoms, strategies, mined.pages, links, seed, df_cap, source_cap
            )
            hard = split_pairs(corpus, rows, seed)
            configs[hardpairs_config(year, threshold)] = hard
            report.statistics[threshold]["hardpairs"] = {s: t.num_rows for s, t in hard.items()}
            report.statistics[threshold]["negative_kinds"] = kinds
            for kind, value in kinds.items():
                report.counts[f"{prefix}: hardpairs negatives, {kind}"] = value
            lap("hard negatives")
            if measure:
                model = model if model is not None else zero_shot_model()
                report.statistics[threshold]["hardness"] = hardness(
                    splits["test"], hard["test"], strategies, model, seed
                )
                lap("hardness (zero-shot AUC)")
    lap("corpora, negatives, splits")

    report.problems += problems.summary()
    if not configs:
        raise NamesakeError(
            "no article passed the threshold, nothing written: "
            + (f"{partial_dump}. " if partial_dump else "")
            + "; ".join(report.lines())
        )
    report.configs = list(configs)
    filters = _filters(dictionary, strategies, redirects, all_targets, seed, df_cap, source_cap)
    with atomic_directory(out, writer="wes build") as staging:
        written = write_configs(staging, configs)
        card = dataset_card(
            year,
            configs,
            written,
            report.statistics,
            dump_sources(paths, year),
            filters,
            report.notes(),
            hard_negatives_section(strategies, report.statistics),
        )
        (staging / "README.md").write_text(card, encoding="utf-8")
    lap("writing")
    warn_skipped(problems, "bad page(s)")
    return report


def partial_dump_hint(resolved: dict[str, int]) -> str | None:
    """What to do when most links point outside the dump, or None.

    In a full dump few links are red (their page does not exist); in one part of a
    multistream dump, or an excerpt, most targets are simply elsewhere, and without
    `--all-targets` almost nothing survives."""
    missing, links = resolved[MISSING_TARGETS], resolved["links"]
    if not links or missing <= PARTIAL_DUMP_SHARE * links:
        return None
    return (
        f"{missing:,} of {links:,} links ({missing / links:.1%}) point to pages missing from "
        "the dump: this looks like a partial dump (one part of a multistream dump, or an "
        "excerpt); pass --all-targets to keep links to pages outside it"
    )


def _filters(
    dictionary: bool,
    strategies: Sequence[str],
    redirects: bool,
    all_targets: bool,
    seed: int,
    df_cap: int = DEFAULT_DF_CAP,
    source_cap: int = DEFAULT_SOURCE_CAP,
) -> list[str]:
    lines = [
        "dictionary-word filter: "
        + (
            "on. A pair is dropped when its link text is a common English word and the "
            "article title is not one: the text is a single spaCy token (model "
            "`en_core_web_sm`) whose lemma, lower-cased, is a lower-case entry of the "
            "`english-words` web2 list (the list of NLTK's `words` corpus; its capitalised "
            "entries are proper nouns and never match). Such texts ('here', 'album', "
            "'capital') depend on their sentence to name the article."
            if dictionary
            else "off (`--no-dictionary-filter`)."
        ),
        "negatives: a random link text of each sampled other article (pairs configs)"
        + (
            "; look-alikes for the hardpairs configs (`--hard-negatives "
            + " ".join(strategies)
            + "`"
            + (f", `--df-cap {df_cap}`" if "lexical" in strategies else "")
            + (f", `--source-cap {source_cap}`" if "cooccurrence" in strategies else "")
            + "), see Hard negatives."
            if strategies
            else "; no hardpairs config (`--hard-negatives` not given)."
        ),
        "redirects: "
        + (
            "followed (`--redirects`): a link to a redirect page counts for its target "
            "(one hop), and redirect titles (without '#', ':', '(') are added as synonyms "
            "of their target (after the threshold, which counts linking articles only)."
            if redirects
            else "not followed: links to redirect pages are dropped and redirect titles are "
            "not synonyms (the paper's choice)."
        ),
        "targets: "
        + (
            "all kept (`--all-targets`), including pages missing from the dump (for "
            "excerpts of a dump; in a full dump these are red links)."
            if all_targets
            else "existing, non-redirect main-namespace articles of the dump only."
        ),
        f"seed: {seed} (negatives, positives kept where negatives run out, splits, row order).",
    ]
    return lines
