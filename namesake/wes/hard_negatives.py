"""Look-alike ("hard") negatives for WES pairs: strings that resemble an article's names but
name something else.

Three strategies, each one indexed or vectorised pass over the whole corpus:

- `lexical`: every other article's title and link texts ranked by token F1 with the title.
  Titles and texts are lower-cased word tokens; an inverted index maps each token to the
  strings holding it, and tokens held by more than `df_cap` strings ("of", "the", "john")
  are left out of the index (they still count in the F1's denominators). A numba kernel
  walks, per article, its title's indexed tokens and counts the shared tokens of every
  string reached, then keeps the best ones.
- `substring`: proper, contiguous word spans of the title ("New York" and "York" for "New
  York City"), longest first; spans that start or end with a stop word are skipped.
  Built with Arrow list kernels, without a loop per title.
- `cooccurrence`: titles of the other articles linked from the same source pages as the
  article, ranked by the number of shared sources (sources linking to more than
  `source_cap` corpus articles, lists and navigation pages, are left out). The same kernel
  as `lexical`, with sources in place of tokens.

Ties are broken by a random priority fixed by the seed. No strategy may emit a synonym of
the article: its own link texts, the redirect titles pointing at it and its title, all
compared lower-cased. One final vectorised filter (`drop_synonyms`) enforces it for every
strategy; the kernels skip synonyms as well, only so that they do not waste their slots.

`hard_pairs` turns the candidates into the hardpairs config's negatives: per article as many
as it has positives, spread across the chosen strategies (rank 1 of each, then rank 2 ...),
falling back to the article's random negatives where look-alikes run out; the column
`negative_kind` says which. `zero_shot_auc` measures how hard each kind is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numba
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from namesake.markdown import markdown_table

STRATEGIES = ("lexical", "substring", "cooccurrence")
KINDS = ("positive", "random", *STRATEGIES)
DEFAULT_DF_CAP = 1000
DEFAULT_SOURCE_CAP = 1000
# Candidates each strategy keeps per article: its positives plus this many.
SLACK = 2
# Spans of at most this many words (long titles would give quadratically many).
MAX_SPAN_WORDS = 6
WORD = r"[^\p{L}\p{N}_]+"  # separators between word tokens (any script)
STOP_WORDS = frozenset(
    ["a", "an", "and", "are", "as", "at", "be", "by", "de", "del", "der", "des", "di", "du"]
    + ["for", "from", "in", "into", "is", "it", "la", "le", "les", "of", "on", "or", "the"]
    + ["to", "von", "van", "was", "with"]
)
HARD_PAIR_SCHEMA = pa.schema(
    [
        ("article", pa.string()),
        ("link_text", pa.string()),
        ("is_same", pa.int64()),
        ("negative_kind", pa.string()),
    ]
)
AUC_SAMPLE = 2000


def check_strategies(strategies: Sequence[str]) -> tuple[str, ...]:
    """The strategies, deduplicated in order; a ValueError names an unknown one."""
    unknown = [s for s in strategies if s not in STRATEGIES]
    if unknown:
        raise ValueError(
            f"unknown hard-negative strategy {unknown[0]!r}; choose from {', '.join(STRATEGIES)}"
        )
    return tuple(dict.fromkeys(strategies))


# ---------------------------------------------------------------- names and synonyms


@dataclass
class Names:
    """The corpus's articles and every string around them, lower-cased into one key space.

    `titles`: sorted distinct articles (article codes index it). `keys`: sorted distinct
    lower-cased strings: titles, link texts and redirect titles pointing at the articles;
    `shown[k]`: an original spelling of key k (a link text or title where there is one);
    `candidate[k]`: k is a title or link text (redirect titles only count as synonyms).
    `title_key[a]`: the key of article a's title. `synonyms`: sorted int64
    article * len(keys) + key of every (article, synonym) pair."""

    titles: pa.Array
    keys: pa.Array
    shown: pa.Array
    candidate: np.ndarray
    title_key: np.ndarray
    synonyms: np.ndarray

    @property
    def n_keys(self) -> int:
        return max(len(self.keys), 1)

    def key_of(self, strings: pa.Array | pa.ChunkedArray) -> np.ndarray:
        """Keys of strings (-1 where the lower-cased string is no key)."""
        where = pc.index_in(pc.utf8_lower(strings), value_set=self.keys)
        return _numpy(pc.fill_null(where, -1))

    def synonym_csr(self) -> tuple[np.ndarray, np.ndarray]:
        """Per article, the keys of its synonyms (CSR: pointers, keys)."""
        article = self.synonyms // self.n_keys
        ptr = np.zeros(len(self.titles) + 1, np.int64)
        np.cumsum(np.bincount(article, minlength=len(self.titles)), out=ptr[1:])
        return ptr, self.synonyms % self.n_keys


def names(corpus: pa.Table, pages: pa.Table | None) -> Names:
    """The key space of a corpus: its titles, texts and the redirect titles of `pages` (a
    page table with `title` and `redirect`; a redirect to a section counts for the
    article) that point at its articles."""
    titles = _sorted_unique(corpus["article"])
    article = _numpy(pc.index_in(corpus["article"], value_set=titles))
    redirect_article = np.zeros(0, np.int64)
    redirect_titles = pa.array([], pa.string())
    if pages is not None and pages.num_rows:
        redirects = pages.filter(pc.is_valid(pages["redirect"]))
        target = pc.replace_substring_regex(redirects["redirect"], "#.*$", "")
        where = pc.index_in(target, value_set=titles)
        hit = pc.fill_null(pc.is_valid(where), False)
        redirect_article = _numpy(where.filter(hit))
        redirect_titles = redirects["title"].filter(hit)
    strings = pa.chunked_array(
        [
            _chunk(corpus["link_text"]),
            titles,
            _chunk(redirect_titles),
        ],
        pa.string(),
    ).combine_chunks()
    n_candidates = corpus.num_rows + len(titles)
    lower = pc.utf8_lower(strings)
    keys = _sorted_unique(lower)
    key = _numpy(pc.index_in(lower, value_set=keys))
    # The spelling shown for a key: its first candidate string (texts and titles first).
    order = np.argsort(key, kind="stable")
    first = order[np.unique(key[order], return_index=True)[1]]
    shown = strings.take(pa.array(first, pa.int64()))
    candidate = np.zeros(len(keys), bool)
    candidate[key[:n_candidates]] = True
    title_key = key[corpus.num_rows : n_candidates]
    owner = np.concatenate([article, np.arange(len(titles)), redirect_article])
    synonyms = np.unique(owner.astype(np.int64) * max(len(keys), 1) + key)
    return Names(titles, keys, shown, candidate, title_key, synonyms)


def drop_synonyms(names: Names, article: np.ndarray, text: pa.Array) -> np.ndarray:
    """The filter every strategy's output goes through: True where `text` (any case) is no
    synonym of the article code `article`."""
    key = names.key_of(text)
    pair = article.astype(np.int64) * names.n_keys + key
    where = np.minimum(np.searchsorted(names.synonyms, pair), max(len(names.synonyms) - 1, 0))
    is_synonym = (key >= 0) & (len(names.synonyms) > 0)
    if len(names.synonyms):
        is_synonym &= names.synonyms[where] == pair
    return ~is_synonym


# ---------------------------------------------------------------- the ranking kernel


@numba.njit(parallel=True, cache=True)
def _rank(
    row_mid_ptr,
    row_mid,
    mid_col_ptr,
    mid_col,
    col_key,
    excl_ptr,
    excl,
    row_n,
    col_n,
    f1,
    priority,
    out_ptr,
    n_cols,
    n_keys,
    n_chunks,
):
    """For each row r: every col reached through a mid of r (row -> mids -> cols), scored
    by the number of mids shared (`f1`: 2 shared / (row_n[r] + col_n[c]), token F1), cols
    whose key is among r's excluded keys skipped; the best out_ptr[r+1]-out_ptr[r] cols
    (score descending, then priority ascending) go to out_col[out_ptr[r]:], -1 padded."""
    n_rows = len(row_mid_ptr) - 1
    out_col = np.full(out_ptr[-1], -1, np.int64)
    out_score = np.zeros(out_ptr[-1], np.float64)
    for chunk in numba.prange(n_chunks):
        lo = chunk * n_rows // n_chunks
        hi = (chunk + 1) * n_rows // n_chunks
        count = np.zeros(n_cols, np.int32)
        mark = np.full(n_keys, -1, np.int64)
        touched = np.empty(n_cols, np.int64)
        for r in range(lo, hi):
            k = out_ptr[r + 1] - out_ptr[r]
            if k == 0:
                continue
            for i in range(excl_ptr[r], excl_ptr[r + 1]):
                mark[excl[i]] = r
            n_touched = 0
            for i in range(row_mid_ptr[r], row_mid_ptr[r + 1]):
                m = row_mid[i]
                for j in range(mid_col_ptr[m], mid_col_ptr[m + 1]):
                    c = mid_col[j]
                    if mark[col_key[c]] == r:
                        continue
                    if count[c] == 0:
                        touched[n_touched] = c
                        n_touched += 1
                    count[c] += 1
            base = out_ptr[r]
            filled = 0
            for t in range(n_touched):
                c = touched[t]
                score = 2.0 * count[c] / (row_n[r] + col_n[c]) if f1 else float(count[c])
                count[c] = 0
                # insertion into the sorted top k
                pos = filled
                while pos > 0:
                    prev = out_col[base + pos - 1]
                    ps = out_score[base + pos - 1]
                    if ps > score or (ps == score and priority[prev] < priority[c]):
                        break
                    pos -= 1
                if pos >= k:
                    continue
                last = filled if filled < k else k - 1
                for q in range(last, pos, -1):
                    out_col[base + q] = out_col[base + q - 1]
                    out_score[base + q] = out_score[base + q - 1]
                out_col[base + pos] = c
                out_score[base + pos] = score
                if filled < k:
                    filled += 1
    return out_col, out_score


def _ranked(
    names: Names,
    row_mid: tuple[np.ndarray, np.ndarray],
    mid_col: tuple[np.ndarray, np.ndarray],
    col_key: np.ndarray,
    wanted: np.ndarray,
    seed: int,
    salt: int,
    row_n: np.ndarray | None = None,
    col_n: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(article, col, rank) of the kernel's picks, `wanted[a]` at most per article."""
    n_rows, n_cols = len(names.titles), len(col_key)
    out_ptr = np.zeros(n_rows + 1, np.int64)
    np.cumsum(wanted, out=out_ptr[1:])
    excl_ptr, excl = names.synonym_csr()
    priority = np.random.default_rng([seed, 5, salt]).permutation(n_cols).astype(np.int64)
    f1 = row_n is not None
    dummy = np.zeros(0, np.float64)
    threads = numba.get_num_threads()
    # each chunk holds scratch arrays the size of the columns and keys
    chunks = max(1, min(threads * 4 if max(n_cols, names.n_keys) < 1_000_000 else threads, n_rows))
    col, _ = _rank(
        *row_mid,
        *mid_col,
        col_key,
        excl_ptr,
        excl,
        row_n if f1 else dummy,
        col_n if f1 else dummy,
        f1,
        priority,
        out_ptr,
        n_cols,
        names.n_keys,
        chunks,
    )
    article = np.repeat(np.arange(n_rows), wanted)
    rank = np.arange(len(col)) - out_ptr[article]
    found = col >= 0
    return article[found], col[found], rank[found]


def _csr(rows: np.ndarray, cols: np.ndarray, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    order = np.lexsort((cols, rows))
    ptr = np.zeros(n_rows + 1, np.int64)
    np.cumsum(np.bincount(rows, minlength=n_rows), out=ptr[1:])
    return ptr, cols[order].astype(np.int64)


# ---------------------------------------------------------------- strategies


def lexical(names: Names, wanted: np.ndarray, seed: int, df_cap: int = DEFAULT_DF_CAP) -> pa.Table:
    """(article, link_text, rank): other articles' titles and link texts by token F1 with
    the title, through an inverted index without the tokens of more than `df_cap` strings."""
    tokens = pc.split_pattern_regex(names.keys, WORD)
    lengths = _numpy(pc.list_value_length(tokens))
    flat = pc.list_flatten(tokens)
    owner = np.repeat(np.arange(len(names.keys)), lengths)
    nonempty = _numpy(pc.greater(pc.utf8_length(flat), 0)).astype(bool)
    flat, owner = flat.filter(pa.array(nonempty)), owner[nonempty]
    vocabulary = pc.unique(flat)
    token = _numpy(pc.index_in(flat, value_set=vocabulary))
    n_tokens = max(len(vocabulary), 1)
    pair = np.unique(owner.astype(np.int64) * n_tokens + token)
    owner, token = pair // n_tokens, pair % n_tokens
    n_strings = len(names.keys)
    string_n = np.bincount(owner, minlength=n_strings).astype(np.float64)
    # document frequency over candidate strings; the index holds candidates only
    is_candidate = names.candidate[owner]
    df = np.bincount(token[is_candidate], minlength=n_tokens)
    indexed = (df <= df_cap) & (df >= 2)
    keep = indexed[token]
    index = _csr(token[keep & is_candidate], owner[keep & is_candidate], n_tokens)
    string_tokens = _csr(owner[keep], token[keep], n_strings)
    # rows: articles, through their title's string
    ptr, mids = string_tokens
    title = names.title_key
    counts = ptr[title + 1] - ptr[title]
    row_ptr = np.zeros(len(title) + 1, np.int64)
    np.cumsum(counts, out=row_ptr[1:])
    starts = np.repeat(ptr[title] - row_ptr[:-1], counts)
    row_mid = mids[np.arange(row_ptr[-1]) + starts]
    article, col, rank = _ranked(
        names,
        (row_ptr, row_mid),
        index,
        np.arange(n_strings),
        wanted,
        seed,
        1,
        row_n=string_n[title],
        col_n=string_n,
    )
    return _candidates(article, names.shown.take(pa.array(col, pa.int64())), rank)


def substring(names: Names, wanted: np.ndarray) -> pa.Table:
    """(article, link_text, rank): proper word spans of each title, longest first (then
    the longer string, then the earlier span); a span starting or ending with a stop word,
    or longer than MAX_SPAN_WORDS, is skipped."""
    words = pc.split_pattern(names.titles, " ")
    n_words = _numpy(pc.list_value_length(words))
    flat = pc.list_flatten(words)
    trimmed = pc.utf8_trim(flat, characters=",.;:!?\"'")
    stop = _numpy(pc.is_in(pc.utf8_lower(trimmed), value_set=pa.array(sorted(STOP_WORDS))))
    stop = (stop | _numpy(pc.equal(pc.utf8_length(trimmed), 0))).astype(bool)
    first_word = np.concatenate([[0], np.cumsum(n_words)[:-1]]).astype(np.int64)
    # every (title, start, length) with 1 <= length < n_words, length <= MAX_SPAN_WORDS
    spans_article, spans_start, spans_len = [], [], []
    for length in range(1, min(int(n_words.max(initial=0)), MAX_SPAN_WORDS + 1)):
        count = np.where(n_words > length, n_words - length + 1, 0)  # proper spans
        article = np.repeat(np.arange(len(n_words)), count)
        offset = np.arange(len(article)) - np.repeat(np.cumsum(count) - count, count)
        spans_article.append(article)
        spans_start.append(first_word[article] + offset)
        spans_len.append(np.full(len(article), length))
    if not spans_article:
        return _candidates(np.zeros(0, np.int64), pa.array([], pa.string()), np.zeros(0))
    article = np.concatenate(spans_article)
    start = np.concatenate(spans_start)
    length = np.concatenate(spans_len)
    end = start + length - 1
    good = ~stop[start] & ~stop[end]
    article, start, length = article[good], start[good], length[good]
    # the span's words, joined by the title's single spaces
    take = np.repeat(start - np.cumsum(length) + length, length) + np.arange(length.sum())
    offsets = np.concatenate([[0], np.cumsum(length)]).astype(np.int32)
    lists = pa.ListArray.from_arrays(pa.array(offsets), flat.take(pa.array(take, pa.int64())))
    text = pc.utf8_trim(pc.binary_join(lists, " "), characters=",.;:!?\"'")
    chars = _numpy(pc.utf8_length(text))
    order = np.lexsort((start, -chars, -length, article))
    article, text = article[order], text.take(pa.array(order, pa.int64()))
    rank = _group_rank(article)
    keep = rank < wanted[article] + 4 * SLACK  # the synonym filter may take some
    return _candidates(article[keep], text.filter(pa.array(keep)), rank[keep])


def cooccurrence(
    names: Names,
    links: pa.Table,
    wanted: np.ndarray,
    seed: int,
    source_cap: int = DEFAULT_SOURCE_CAP,
) -> pa.Table:
    """(article, link_text = another title, rank): the articles linked from the most source
    pages that also link to the article (`links`: triples with `article` and `source`;
    sources linking to more than `source_cap` corpus articles are left out)."""
    where = pc.index_in(links["article"], value_set=names.titles)
    hit = pc.fill_null(pc.is_valid(where), False)
    article = _numpy(where.filter(hit))
    source = _numpy(links["source"].filter(hit))
    if not len(article):
        return _candidates(np.zeros(0, np.int64), pa.array([], pa.string()), np.zeros(0))
    source_codes, source = np.unique(source, return_inverse=True)
    n_sources, n_articles = len(source_codes), len(names.titles)
    pair = np.unique(source.astype(np.int64) * n_articles + article)
    source, article = pair // n_articles, pair % n_articles
    degree = np.bincount(source, minlength=n_sources)
    keep = (degree[source] >= 2) & (degree[source] <= source_cap)
    source, article = source[keep], article[keep]
    got_article, col, rank = _ranked(
        names,
        _csr(article, source, n_articles),
        _csr(source, article, n_sources),
        names.title_key,
        wanted,
        seed,
        2,
    )
    return _candidates(got_article, names.titles.take(pa.array(col, pa.int64())), rank)


def _candidates(article: np.ndarray, text: pa.Array, rank: np.ndarray) -> pa.Table:
    return pa.table(
        {
            "article": pa.array(np.asarray(article, np.int64)),
            "link_text": text.cast(pa.string()),
            "rank": pa.array(np.asarray(rank, np.int64)),
        }
    )


def look_alikes(
    corpus: pa.Table,
    strategy: str,
    pages: pa.Table | None = None,
    links: pa.Table | None = None,
    seed: int = 0,
    per_article: int | None = None,
    df_cap: int = DEFAULT_DF_CAP,
    source_cap: int = DEFAULT_SOURCE_CAP,
) -> pa.Table:
    """One strategy's look-alikes of each article of a corpus, synonyms filtered out:
    (article, link_text, rank), best first; `per_article` candidates at most (default: its
    positives plus SLACK)."""
    (strategy,) = check_strategies([strategy])
    space = names(corpus, pages)
    wanted = _wanted(space, corpus, per_article)
    table = _strategy(space, strategy, wanted, pages, links, seed, df_cap, source_cap)
    table = _filtered(space, table)
    return pa.table(
        {
            "article": space.titles.take(table["article"]),
            "link_text": table["link_text"],
            "rank": table["rank"],
        }
    )


def _wanted(space: Names, corpus: pa.Table, per_article: int | None) -> np.ndarray:
    if per_article is not None:
        return np.full(len(space.titles), per_article, np.int64)
    article = _numpy(pc.index_in(corpus["article"], value_set=space.titles))
    return np.bincount(article, minlength=len(space.titles)).astype(np.int64) + SLACK


def _strategy(space, strategy, wanted, pages, links, seed, df_cap=None, source_cap=None):
    if strategy == "lexical":
        return lexical(space, wanted, seed, df_cap or DEFAULT_DF_CAP)
    if strategy == "substring":
        return substring(space, wanted)
    if links is None:
        raise ValueError("the cooccurrence strategy needs the link triples (with sources)")
    return cooccurrence(space, links, wanted, seed, source_cap or DEFAULT_SOURCE_CAP)


def _filtered(space: Names, table: pa.Table) -> pa.Table:
    """The shared synonym filter, then each article's candidates deduplicated (lower-cased)
    and re-ranked 0, 1, ... in their order."""
    article = _numpy(table["article"])
    table = table.filter(pa.array(drop_synonyms(space, article, table["link_text"])))
    article, rank = _numpy(table["article"]), _numpy(table["rank"])
    lower = pc.utf8_lower(table["link_text"])
    key = _numpy(pc.index_in(lower, value_set=pc.unique(lower)))
    order = np.lexsort((rank, key, article))
    first = np.ones(len(order), bool)
    first[1:] = (article[order][1:] != article[order][:-1]) | (key[order][1:] != key[order][:-1])
    kept = np.sort(order[first])
    table = table.take(pa.array(kept, pa.int64()))
    article, rank = _numpy(table["article"]), _numpy(table["rank"])
    order = np.lexsort((rank, article))
    table = table.take(pa.array(order, pa.int64()))
    return table.set_column(2, "rank", pa.array(_group_rank(_numpy(table["article"]))))


# ---------------------------------------------------------------- the hardpairs config


def hard_pairs(
    corpus: pa.Table,
    positives: pa.Table,
    randoms: pa.Table,
    strategies: Sequence[str],
    pages: pa.Table | None = None,
    links: pa.Table | None = None,
    seed: int = 0,
    df_cap: int = DEFAULT_DF_CAP,
    source_cap: int = DEFAULT_SOURCE_CAP,
) -> tuple[pa.Table, dict[str, int]]:
    """The hardpairs rows (HARD_PAIR_SCHEMA): the pairs config's `positives`, and per
    article as many negatives, taken in turn from each strategy's ranked look-alikes (rank
    0 of every strategy, then rank 1 ..., the strategies' order rotated per article with
    the seed), then from the article's `randoms` (the pairs
    config's negatives) where look-alikes run out. Also the number of negatives per kind
    and of those missing (`short`)."""
    strategies = check_strategies(strategies)
    space = names(corpus, pages)
    positive_article = _numpy(pc.index_in(positives["article"], value_set=space.titles))
    need = np.bincount(positive_article, minlength=len(space.titles)).astype(np.int64)
    parts = []
    for order, strategy in enumerate(strategies):
        table = _filtered(
            space, _strategy(space, strategy, need + SLACK, pages, links, seed, df_cap, source_cap)
        )
        parts.append(table.append_column("kind", pa.array(np.full(table.num_rows, order))))
    random_article = _numpy(pc.index_in(randoms["article"], value_set=space.titles))
    big = np.int64(1 << 40)
    order = np.argsort(random_article, kind="stable")
    random_rank = big + _group_rank(random_article[order])  # after every look-alike
    parts.append(
        pa.table(
            {
                "article": pa.array(random_article[order]),
                "link_text": randoms["link_text"].take(pa.array(order, pa.int64())),
                "rank": pa.array(random_rank),
                "kind": pa.array(np.full(len(order), len(strategies))),
            }
        )
    )
    every = pa.concat_tables(parts)
    every = every.filter(
        pa.array(drop_synonyms(space, _numpy(every["article"]), every["link_text"]))
    )
    article, rank, kind = (_numpy(every[c]) for c in ("article", "rank", "kind"))
    lower = pc.utf8_lower(every["link_text"])
    key = _numpy(pc.index_in(lower, value_set=pc.unique(lower)))
    # Strategies take turns in an order rotated per article (seeded), so that articles with
    # one positive spread over the strategies too; random negatives come last.
    n = len(strategies)
    offset = np.random.default_rng([seed, 7]).integers(0, n, len(space.titles))
    turn = np.where(kind < n, (kind + offset[article]) % n, n)
    # one row per (article, string): its best (rank, turn)
    order = np.lexsort((turn, rank, key, article))
    first = np.ones(len(order), bool)
    first[1:] = (article[order][1:] != article[order][:-1]) | (key[order][1:] != key[order][:-1])
    rows = order[first]
    rows = rows[np.lexsort((turn[rows], rank[rows], article[rows]))]
    taken = rows[_group_rank(article[rows]) < need[article[rows]]]
    names_of_kind = pa.array([*strategies, "random"])
    got = np.bincount(article[taken], minlength=len(need))
    negs = pa.table(
        {
            "article": space.titles.take(pa.array(article[taken])),
            "link_text": every["link_text"].take(pa.array(taken, pa.int64())),
            "is_same": pa.array(np.zeros(len(taken), np.int64)),
            "negative_kind": names_of_kind.take(pa.array(kind[taken])),
        },
        schema=HARD_PAIR_SCHEMA,
    )
    pos = pa.table(
        {
            "article": positives["article"],
            "link_text": positives["link_text"],
            "is_same": positives["is_same"],
            "negative_kind": pa.array(["positive"] * positives.num_rows, pa.string()),
        },
        schema=HARD_PAIR_SCHEMA,
    )
    counts = {
        name: int(n)
        for name, n in zip(
            names_of_kind.to_pylist(),
            np.bincount(kind[taken], minlength=len(strategies) + 1),
            strict=True,
        )
    }
    counts["short"] = int((need - got).sum())
    return pa.concat_tables([pos, negs]), counts


# ---------------------------------------------------------------- hardness


def zero_shot_auc(
    positives: pa.Table,
    negatives: dict[str, pa.Table],
    model=None,
    sample: int = AUC_SAMPLE,
    seed: int = 0,
) -> dict[str, dict]:
    """ROC-AUC of the zero-shot all-MiniLM-L6-v2 cosine of (article, link_text) separating
    `positives` from each table of `negatives`, on at most `sample` pairs of each (seeded).
    {name: {"negatives": rows scored, "auc": float or None where a side is empty}}."""
    from sklearn.metrics import roc_auc_score

    model = model if model is not None else zero_shot_model()
    rng = np.random.default_rng([seed, 6])

    def pick(table: pa.Table) -> pa.Table:
        if table.num_rows <= sample:
            return table
        return table.take(pa.array(np.sort(rng.choice(table.num_rows, sample, replace=False))))

    positives = pick(positives)
    chosen = {name: pick(table) for name, table in negatives.items()}
    strings = sorted(
        {
            s
            for table in [positives, *chosen.values()]
            for column in ("article", "link_text")
            for s in table[column].to_pylist()
        }
    )
    vectors = model.encode(strings, batch_size=256, normalize_embeddings=True)
    index = {s: i for i, s in enumerate(strings)}

    def cosines(table: pa.Table) -> np.ndarray:
        a = vectors[[index[s] for s in table["article"].to_pylist()]]
        b = vectors[[index[s] for s in table["link_text"].to_pylist()]]
        return (a * b).sum(axis=1)

    positive = cosines(positives) if positives.num_rows else np.zeros(0)
    out = {}
    for name, table in chosen.items():
        auc = None
        if positives.num_rows and table.num_rows:
            scores = np.concatenate([positive, cosines(table)])
            labels = np.concatenate([np.ones(len(positive)), np.zeros(table.num_rows)])
            auc = float(roc_auc_score(labels, scores))
        out[name] = {"negatives": table.num_rows, "positives": len(positive), "auc": auc}
    return out


def zero_shot_model():
    """all-MiniLM-L6-v2 from its installed package (no download)."""
    from sentence_transformers import SentenceTransformer

    from namesake.bundled_models import minilm_path

    return SentenceTransformer(minilm_path(), device="cpu")


def hardness(
    pairs_test: pa.Table, hard_test: pa.Table, strategies: Sequence[str], model=None, seed=0
) -> dict[str, dict]:
    """Zero-shot AUC on the test split: the positives against the pairs config's random
    negatives, and against each strategy's negatives of the hardpairs config."""
    positives = pairs_test.filter(pc.equal(pairs_test["is_same"], 1))
    negatives = {"random (pairs config)": pairs_test.filter(pc.equal(pairs_test["is_same"], 0))}
    for strategy in strategies:
        negatives[strategy] = hard_test.filter(pc.equal(hard_test["negative_kind"], strategy))
    negatives["all (hardpairs config)"] = hard_test.filter(pc.equal(hard_test["is_same"], 0))
    return zero_shot_auc(positives, negatives, model, seed=seed)


def hardness_table(results: dict[int, dict[str, dict]]) -> str:
    """Markdown: threshold | negatives | pairs scored | zero-shot AUC."""
    return markdown_table(
        ["Threshold", "Negatives", "Negatives scored (test)", "Zero-shot AUC"],
        (
            [
                str(threshold),
                name,
                f"{row['negatives']:,}",
                "n/a" if row["auc"] is None else f"{row['auc']:.3f}",
            ]
            for threshold, rows in sorted(results.items())
            for name, row in rows.items()
        ),
        "rlr",
    )


# ---------------------------------------------------------------- helpers


def _group_rank(group: np.ndarray) -> np.ndarray:
    """0, 1, 2 ... within runs of equal values of a sorted array."""
    if not len(group):
        return np.zeros(0, np.int64)
    starts = np.flatnonzero(np.concatenate([[True], group[1:] != group[:-1]]))
    sizes = np.diff(np.concatenate([starts, [len(group)]]))
    return np.arange(len(group)) - np.repeat(starts, sizes)


def _numpy(values) -> np.ndarray:
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    return values.to_numpy(zero_copy_only=False).astype(np.int64)


def _chunk(values) -> pa.Array:
    if isinstance(values, pa.ChunkedArray):
        return values.combine_chunks().cast(pa.string())
    return values.cast(pa.string())


def _sorted_unique(values) -> pa.Array:
    unique = pc.unique(values)
    if isinstance(unique, pa.ChunkedArray):
        unique = unique.combine_chunks()
    return unique.take(pc.array_sort_indices(unique))
