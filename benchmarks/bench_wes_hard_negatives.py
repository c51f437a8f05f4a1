"""WES look-alike negatives at scale: time and peak RSS of each `--hard-negatives` strategy
on a synthetic corpus of realistic shape, extrapolated to full English Wikipedia.

The corpus (cached in `--output`, git-ignored) has `--pairs` (article, link text) pairs:
titles of 1-5 words drawn from a Zipfian vocabulary, ~5.5 link texts per article (the title,
case variants, spans of the title, abbreviations and unrelated Zipfian phrases), one
redirect page per article, and link triples (article, link text, source page id) with
every article linked from at least 5 sources, sources drawn with a Zipfian popularity (a
few hub pages link to thousands of articles, as lists and navigation boxes do). Each
strategy runs in a fresh subprocess (this script with --measure), so each peak RSS is its
own; the kernel is compiled (numba, cached) on a tiny corpus before the clock starts.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from measuring import measure_in_subprocess, peak_rss_mb, print_measurement

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from namesake.wes.hard_negatives import (  # noqa: E402
    DEFAULT_DF_CAP,
    DEFAULT_SOURCE_CAP,
    STRATEGIES,
    hard_pairs,
    look_alikes,
)
from namesake.wes.pairs import negatives  # noqa: E402

WIKIPEDIA_PAIRS = 5_800_000  # corpus pairs of the 5-source threshold on a full English dump


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=1_000_000, help="corpus pairs")
    parser.add_argument("--vocabulary", type=int, default=300_000, help="distinct words")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--df-cap", type=int, default=DEFAULT_DF_CAP)
    parser.add_argument("--source-cap", type=int, default=DEFAULT_SOURCE_CAP)
    parser.add_argument("--output", default=str(HERE / "output"), help="cache (git-ignored)")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def zipf_words(rng, vocabulary: int, n: int) -> np.ndarray:
    """Word ids with a Zipfian (s = 1.1) frequency over `vocabulary` words."""
    ranks = np.arange(1, vocabulary + 1, dtype=np.float64)
    p = ranks**-1.1
    cdf = np.cumsum(p / p.sum())
    return np.minimum(np.searchsorted(cdf, rng.random(n)), vocabulary - 1)


def word_strings(vocabulary: int) -> np.ndarray:
    """Pronounceable distinct words (w0 -> 'ba', ...), capitalised."""
    syllables = [c + v for c in "bcdfghklmnprstvz" for v in "aeiou"]  # 80
    out = []
    for i in range(vocabulary):
        parts, j = [], i
        while True:
            parts.append(syllables[j % 80])
            j //= 80
            if not j:
                break
        out.append("".join(parts).capitalize())
    return np.array(out, dtype=object)


def phrases(words: np.ndarray, ids: np.ndarray, lengths: np.ndarray) -> list[str]:
    out, i = [], 0
    for n in lengths.tolist():
        out.append(" ".join(words[ids[i : i + n]]))
        i += n
    return out


def make_corpus(pairs: int, vocabulary: int, seed: int, folder: Path) -> Path:
    """Writes corpus.parquet, pages.parquet, links.parquet under folder (once)."""
    folder.mkdir(parents=True, exist_ok=True)
    if (folder / "links.parquet").exists():
        return folder
    rng = np.random.default_rng(seed)
    words = word_strings(vocabulary)
    n_articles = int(pairs / 3.95)  # ~5.5 texts drawn per article, ~4 distinct
    title_len = rng.choice([1, 2, 3, 4, 5], size=n_articles, p=[0.25, 0.35, 0.22, 0.12, 0.06])
    title_ids = zipf_words(rng, vocabulary, int(title_len.sum()))
    titles = phrases(words, title_ids, title_len)
    seen: set[str] = set()
    for i, title in enumerate(titles):  # distinct titles, as in a wiki
        if title in seen:
            titles[i] = title = f"{title} {i}"
        seen.add(title)
    starts = np.concatenate([[0], np.cumsum(title_len)[:-1]])
    # link texts per article: the title, then variants
    per_article = np.maximum(1, rng.poisson(5.0, n_articles) + 1)
    article = np.repeat(np.arange(n_articles), per_article)
    kind = rng.choice(5, size=len(article), p=[0.25, 0.15, 0.25, 0.1, 0.25])
    first = np.concatenate([[True], article[1:] != article[:-1]])
    kind[first] = 0
    texts = []
    other_len = rng.choice([1, 2, 3], size=len(article), p=[0.5, 0.35, 0.15])
    other_ids = zipf_words(rng, vocabulary, int(other_len.sum()))
    other = phrases(words, other_ids, other_len)
    for row, (a, k) in enumerate(zip(article.tolist(), kind.tolist(), strict=True)):
        title = titles[a]
        n = int(title_len[a])
        if k == 0:
            texts.append(title)
        elif k == 1:
            texts.append(title.lower())
        elif k == 2 and n > 1:  # a span of the title
            i = int(rng.integers(n))
            texts.append(" ".join(words[title_ids[starts[a] + i : starts[a] + n]]))
        elif k == 3:
            texts.append("".join(w[0] for w in title.split()).upper())
        else:
            texts.append(other[row])
    corpus = pa.table({"article": pa.array(titles).take(pa.array(article)), "link_text": texts})
    corpus = corpus.group_by(["article", "link_text"]).aggregate([])
    pq.write_table(corpus, folder / "corpus.parquet")
    # one redirect per article: a variant of its title
    redirect_titles = [f"{t} (disambiguation)" if i % 3 else f"{t}s" for i, t in enumerate(titles)]
    pages = pa.table(
        {
            "title": titles + redirect_titles,
            "page_id": np.arange(2 * n_articles),
            "redirect": [None] * n_articles + titles,
        }
    )
    pq.write_table(pages, folder / "pages.parquet")
    # link triples: >= 5 sources per article, Zipfian source popularity
    sources_per = 5 + rng.geometric(0.3, n_articles) - 1
    link_article = np.repeat(np.arange(n_articles), sources_per)
    n_sources = 2 * n_articles
    source = zipf_words(rng, n_sources, len(link_article))
    links = pa.table(
        {
            "article": pa.array(titles).take(pa.array(link_article)),
            "link_text": pa.array(titles).take(pa.array(link_article)),
            "source": pa.array(source.astype(np.int64) + 10 * n_articles),
        }
    )
    pq.write_table(links, folder / "links.parquet")
    return folder


def warm_up() -> None:
    corpus = pa.table({"article": ["A b", "B c", "C"], "link_text": ["a", "b c", "c"]})
    links = pa.table(
        {"article": ["A b", "B c", "C"], "link_text": ["x"] * 3, "source": pa.array([1, 1, 1])}
    )
    for strategy in STRATEGIES:
        look_alikes(corpus, strategy, links=links)


def run_measurement(name: str, folder: Path, args) -> dict:
    warm_up()
    import_rss = peak_rss_mb()
    corpus = pq.read_table(folder / "corpus.parquet")
    pages = pq.read_table(folder / "pages.parquet")
    links = pq.read_table(folder / "links.parquet")
    base_rss = peak_rss_mb()
    started = time.perf_counter()
    if name == "all":
        positives, randoms = negatives(corpus, args.seed)
        drawn = time.perf_counter()
        rows, kinds = hard_pairs(
            corpus,
            positives,
            randoms,
            STRATEGIES,
            pages,
            links,
            args.seed,
            args.df_cap,
            args.source_cap,
        )
        count, extra = rows.num_rows, {"kinds": kinds, "random_s": drawn - started}
    else:
        table = look_alikes(
            corpus,
            name,
            pages,
            links,
            args.seed,
            df_cap=args.df_cap,
            source_cap=args.source_cap,
        )
        count = table.num_rows
        extra = {"articles_with": len(pc.unique(table["article"]))}
    return {
        "name": name,
        "wall_s": time.perf_counter() - started,
        "rows": count,
        "corpus_pairs": corpus.num_rows,
        "articles": len(pc.unique(corpus["article"])),
        "links": links.num_rows,
        "rss_import_mb": import_rss,
        "rss_base_mb": base_rss,
        "rss_peak_mb": peak_rss_mb(),
        **extra,
    }


def main(argv=None) -> None:
    args = parse_args(argv)
    folder = Path(args.output) / f"wes-hard-{args.pairs}-s{args.seed}"
    common = ["--pairs", str(args.pairs), "--seed", str(args.seed), "--output", args.output]
    common += ["--df-cap", str(args.df_cap), "--source-cap", str(args.source_cap)]
    if args.measure == "build":
        make_corpus(args.pairs, args.vocabulary, args.seed, folder)
        return
    if args.measure:
        print_measurement(run_measurement(args.measure, folder, args))
        return
    run = [sys.executable, __file__, *common, "--vocabulary", str(args.vocabulary)]
    subprocess.run([*run, "--measure", "build"], check=True)
    rows = []
    for name in [*STRATEGIES, "all"]:
        rows.append(measure_in_subprocess([*run, "--measure", name]))
        print(rows[-1], flush=True)
    scale = WIKIPEDIA_PAIRS / rows[0]["corpus_pairs"]
    first = rows[0]
    print(
        f"\ncorpus: {first['corpus_pairs']:,} pairs, {first['articles']:,} articles, "
        f"{first['links']:,} link triples; df cap {args.df_cap}, source cap {args.source_cap}\n"
    )
    print(
        "| strategy | wall s | candidates | peak RSS MB (after imports / inputs loaded) | "
        f"wall s at {WIKIPEDIA_PAIRS / 1e6:.1f}M pairs (x{scale:.2f}) | peak RSS GB at 5.8M |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for row in rows:
        label = "hard_pairs, all three" if row["name"] == "all" else row["name"]
        # imports stay; inputs and work grow with the corpus
        peak = row["rss_import_mb"] + (row["rss_peak_mb"] - row["rss_import_mb"]) * scale
        print(
            f"| {label} | {row['wall_s']:.1f} | {row['rows']:,} "
            f"| {row['rss_peak_mb']:.0f} ({row['rss_import_mb']:.0f} / {row['rss_base_mb']:.0f}) "
            f"| {row['wall_s'] * scale:.0f} | {peak / 1024:.1f} |"
        )
    results = Path(args.output) / f"results-wes-hard-{args.pairs}.json"
    results.write_text(json.dumps({"folder": str(folder), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
