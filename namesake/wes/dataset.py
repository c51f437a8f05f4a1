"""Writing WES as a Hugging Face Hub dataset folder (Parquet per config and split, plus a
dataset card), in the layout of the published `2018thresh5corpus` / `2018thresh5pairs`
configs (plus `hardpairs` configs with look-alike negatives), and computing the
per-threshold statistics of its card."""

from __future__ import annotations

import string
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import yaml

import namesake
from namesake.dataset_folder import (
    WrittenConfig,
    card_entries,
    read_shards,
    size_category,
    write_config,
)
from namesake.errors import BadInputError
from namesake.markdown import markdown_table
from namesake.papers import NOT_IN_PAPER, paper
from namesake.wes.hard_negatives import hardness_table
from namesake.wes.pairs import PAIR_SCHEMA

ROWS_PER_SHARD = 500_000
CARD_TEMPLATE = Path(__file__).parent / "dataset_card.md"


def corpus_config(year: int, threshold: int) -> str:
    return f"{year}thresh{threshold}corpus"


def pairs_config(year: int, threshold: int) -> str:
    return f"{year}thresh{threshold}pairs"


def hardpairs_config(year: int, threshold: int) -> str:
    return f"{year}thresh{threshold}hardpairs"


def corpus_table(corpus: pa.Table) -> pa.Table:
    """The corpus config's rows: every positive pair, `is_same` = 1."""
    ones = pa.array([1] * corpus.num_rows, pa.int64())
    return pa.table(
        {"article": corpus["article"], "link_text": corpus["link_text"], "is_same": ones},
        schema=PAIR_SCHEMA,
    )


def write_configs(
    folder: Path, configs: dict[str, dict[str, pa.Table]]
) -> dict[str, WrittenConfig]:
    """Writes ``folder/<config>/<split>-*.parquet`` for every non-empty split (the caller
    reports empty splits)."""
    return {
        config: write_config(folder, config, splits, ROWS_PER_SHARD)
        for config, splits in configs.items()
    }


def read_config(folder: str | Path, config: str, split: str = "train") -> pa.Table:
    """Reads one split of one config of a built dataset folder."""
    shards = sorted(Path(folder, config).glob(f"{split}-*.parquet"))
    if not shards:
        raise BadInputError(Path(folder, config), None, f"no {split} Parquet shards")
    return read_shards(shards, PAIR_SCHEMA, "a WES build", allow_nulls=False)


def statistics(corpus: pa.Table, pairs: dict[str, pa.Table], dropped: dict[str, int]) -> dict:
    """Counts for one threshold, as in the published table (articles, distinct link texts)
    plus the pairs of each config and split and what the filters dropped."""
    return {
        "articles": len(pc.unique(corpus["article"])) if corpus.num_rows else 0,
        "distinct_link_texts": len(pc.unique(corpus["link_text"])) if corpus.num_rows else 0,
        "corpus_pairs": corpus.num_rows,
        "pairs": {split: table.num_rows for split, table in pairs.items()},
        "positives": sum(pc.sum(t["is_same"]).as_py() or 0 for t in pairs.values()),
        "articles_per_split": {
            split: len(pc.unique(t["article"])) if t.num_rows else 0 for split, t in pairs.items()
        },
        "dropped": dropped,
    }


def statistics_table(stats: dict[int, dict]) -> str:
    """Markdown in the shape of the published WES table, one row per threshold, then the
    paper's own link corpora (Huang et al., 2022, Sec. 3.1; namesake/data/papers/wes.json),
    whose pair counts it prints for three thresholds whose values the extraction lost."""
    header = [
        "Min. inbound links (distinct sources)",
        "Articles",
        "Distinct link texts",
        "Distinct links (corpus pairs)",
        "Pairs train / validation / test",
    ]
    lines = []  # one list of cells per threshold, then per corpus of the paper's
    for threshold, s in sorted(stats.items()):
        splits = " / ".join(f"{s['pairs'].get(split, 0):,}" for split in SPLIT_NAMES)
        lines.append(
            [
                str(threshold),
                f"{s['articles']:,}",
                f"{s['distinct_link_texts']:,}",
                f"{s['corpus_pairs']:,}",
                splits,
            ]
        )
    sizes = paper("wes").table("sizes")
    for (corpus,) in sizes.rows:
        pairs = sizes.figure(corpus=corpus, measure="synonym pairs (link corpus)")
        if pairs is None:
            continue
        lost = sizes.gap(corpus=corpus, measure="link threshold n")
        label = f"paper: {corpus}" + (" (its n lost in the extraction)" if lost else "")
        lines.append([label, NOT_IN_PAPER, NOT_IN_PAPER, f"{pairs:,}", NOT_IN_PAPER])
    return markdown_table(header, lines, "rrrrl")


SPLIT_NAMES = ("train", "validation", "test")


def dataset_card(
    year: int,
    configs: dict[str, dict[str, pa.Table]],
    written: dict[str, WrittenConfig],
    stats: dict[int, dict],
    sources: dict[str, str],
    filters: list[str],
    notes: list[str],
    hard_negatives: str = "",
) -> str:
    """README.md with the Hub's YAML header (license, and the `dataset_info` and `configs`
    of the `written` configs) and the card body from the template."""
    total = sum(t.num_rows for splits in configs.values() for t in splits.values())
    header = {
        "pretty_name": "WES (Wiki Entity Similarity)",
        "license": "cc-by-sa-4.0",
        "language": ["en"],
        "task_categories": ["text-classification", "sentence-similarity"],
        "tags": ["named-entities", "synonyms", "paraphrasing", "wikipedia", "entity-similarity"],
        "size_categories": [size_category(total)],
        **card_entries(written, default=next(iter(written))),
    }
    thresholds = sorted(stats)
    example = thresholds[0] if thresholds else 5
    body = string.Template(CARD_TEMPLATE.read_text(encoding="utf-8")).substitute(
        statistics_table=statistics_table(stats),
        sources="\n".join(f"- {role}: `{name}`" for role, name in sources.items()),
        filters="\n".join(f"- {line}" for line in filters),
        notes="\n".join(f"- {note}" for note in notes) or "- none",
        hard_negatives=hard_negatives or NO_HARD_NEGATIVES,
        version=namesake.__version__,
        year=year,
        threshold=example,
        thresholds=", ".join(str(t) for t in thresholds),
    )
    return "---\n" + yaml.safe_dump(header, sort_keys=False, allow_unicode=True) + "---\n\n" + body


NO_HARD_NEGATIVES = (
    "This build has no hardpairs config: build with `--hard-negatives lexical substring "
    "cooccurrence` (any of them) to add one per threshold."
)
STRATEGY_TEXT = {
    "lexical": "`lexical`: the title or link text of another article with the highest token "
    "F1 against the title (lower-cased word tokens), found through an inverted token index "
    "that leaves out tokens held by more than `--df-cap` strings",
    "substring": '`substring`: a proper, contiguous word span of the title ("New York" or '
    '"York" for "New York City"), longest first; spans starting or ending with a stop '
    "word are skipped",
    "cooccurrence": "`cooccurrence`: the title of another article linked from the same "
    "source pages, ranked by the number of shared sources (sources linking to more than "
    "`--source-cap` articles of the corpus are left out)",
}


def hard_negatives_section(strategies, stats: dict[int, dict]) -> str:
    """The card's Hard negatives section: the strategies and, where measured, the zero-shot
    AUC of each kind of negative."""
    if not strategies:
        return NO_HARD_NEGATIVES
    lines = [
        "Each `<year>thresh<n>hardpairs` config has the pairs config's articles in the same "
        "train/validation/test split and the same positives, and one look-alike negative "
        "per positive, taken in turn from each strategy's best candidates (the strategies' "
        "order rotated per article, ties broken at random, both with the seed). Where an "
        "article runs out of look-alikes, its random negative of the pairs config fills in. "
        "The column `negative_kind` says where each row comes from: `positive`, `random` or "
        "the strategy.",
        "",
        *(f"- {STRATEGY_TEXT[s]}." for s in strategies),
        "",
        "No negative is a synonym of its article: its own link texts, the redirect titles "
        "pointing at it and its title, compared lower-cased, are filtered out of every "
        "strategy's output.",
    ]
    measured = {t: s["hardness"] for t, s in stats.items() if "hardness" in s}
    kinds = {
        t: ", ".join(f"{kind} {n:,}" for kind, n in s["negative_kinds"].items())
        for t, s in stats.items()
        if "negative_kinds" in s
    }
    if kinds:
        lines += ["", "Negatives per kind (all splits):", ""]
        lines += [f"- threshold {t}: {text}" for t, text in sorted(kinds.items())]
    if measured:
        lines += [
            "",
            "How hard each kind is: the ROC-AUC of the zero-shot cosine similarity of "
            "`all-MiniLM-L6-v2` (no training) between article and link text, separating the "
            "test split's positives from each kind of negative (at most 2,000 pairs of each, "
            "sampled with the seed). 0.5 is chance; the lower, the harder.",
            "",
            hardness_table(measured),
        ]
    return "\n".join(lines)
