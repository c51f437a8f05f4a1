"""What the Space computes for each tab, without any UI: ambiguous search with a verdict per
hit, the AmbER set browser with each retriever's rank of the gold page, the passage
encoder's attention, answer scoring, and the leaderboard of the demo's systems.

Bad input raises :class:`SpaceInputError`; its message is what the page shows.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache

import pyarrow.compute as pc

from namesake.ecqg.attention import PassageAttention, passage_stats
from namesake.ecqg.entities import Entity, find_entities, load_ner
from namesake.errors import NamesakeError
from namesake.metrics import load_metric
from namesake.retrieval.corpus import split_passages
from namesake.space.artifacts import LEADERBOARD_DIR, Artifacts

MAX_QUERY_CHARS = 1_000
MAX_PASSAGE_CHARS = 5_000
MAX_K = 20
RANK_DEPTH = 100  # the set browser ranks the gold page within this many documents


class SpaceInputError(NamesakeError):
    """Input the page answers with a message: an empty query, an unknown set name, ..."""


@dataclass(frozen=True)
class Member:
    """One entity of an AmbER set (a row of the ``<collection>_entities`` config)."""

    collection: str
    name: str
    qid: str
    label: str
    is_head: bool
    popularity: float
    entity_types: tuple[str, ...]
    wikipedia_ids: tuple[str, ...]
    wikipedia_titles: tuple[str, ...]


@dataclass(frozen=True)
class Hit:
    """A retrieved page; `member` is the set entity it belongs to, if any."""

    rank: int
    wikipedia_id: str
    title: str
    text: str
    score: float
    member: Member | None


def verdict(hit: Hit, gold_qid: str | None) -> str:
    """'gold', 'confused' (another entity of the same name), 'same_name' (a set member while
    the intended entity is unknown) or 'unrelated'."""
    if hit.member is None:
        return "unrelated"
    if gold_qid is None:
        return "same_name"
    return "gold" if hit.member.qid == gold_qid else "confused"


@dataclass(frozen=True)
class SearchResult:
    query: str
    set_name: str | None  # the AmbER set whose name the query mentions
    members: tuple[Member, ...]
    gold_qid: str | None  # the entity the query is about, when known
    hits: dict[str, list[Hit]]  # retriever kind -> hits, best first


@dataclass(frozen=True)
class SetQuery:
    """A query of an AmbER set and the rank of its gold page per retriever (None: not in
    the top :data:`RANK_DEPTH`)."""

    task: str
    input: str
    qid: str
    is_head: bool
    answer: tuple[str, ...]
    ranks: dict[str, int | None]


@dataclass(frozen=True)
class AttentionView:
    """CLS attention over a passage's text tokens and its entities, least attended first."""

    text: str
    tokens: list[tuple[int, int, float]]  # character span and attention of each text token
    entities: list[Entity]
    entity_attention: list[float | None]  # None: the entity was truncated away
    ranked: list[int]
    truncated: bool


def gold_rank(ranking: list[str], gold_ids: list[str]) -> int | None:
    """1-based rank of the first gold page in `ranking`, None when absent."""
    gold = set(gold_ids)
    return next((rank for rank, page in enumerate(ranking, 1) if page in gold), None)


def whole_words(names: Iterable[str]) -> str:
    """Regex source for any of `names` as whole words, longest first (names are literal)."""
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return rf"(?<!\w)(?:{alternatives})(?!\w)"


def head_or_tail(is_head: bool) -> str:
    return "head" if is_head else "tail"


class Explorer:
    """The Space's computations over loaded :class:`Artifacts`."""

    def __init__(self, artifacts: Artifacts):
        self.artifacts = artifacts
        self.sets: dict[str, list[Member]] = defaultdict(list)
        for row in artifacts.entities.to_pylist():
            self.sets[row["name"]].append(
                Member(
                    collection=row["collection"],
                    name=row["name"],
                    qid=row["qid"],
                    label=row["label"],
                    is_head=row["is_head"],
                    popularity=row["popularity"],
                    entity_types=tuple(row["entity_types"]),
                    wikipedia_ids=tuple(row["wikipedia_ids"]),
                    wikipedia_titles=tuple(row["wikipedia_titles"]),
                )
            )
        self._by_lower = {name.lower(): name for name in self.sets}
        # In a lookahead, so that finditer also finds names overlapping an earlier match.
        self._names = re.compile(rf"(?=({whole_words(self.sets)}))")
        self._names_any_case = re.compile(self._names.pattern, re.IGNORECASE)
        queries = artifacts.queries
        self._subjects: dict[str, set[str]] = defaultdict(set)  # query text -> entities asked
        for text, qid in zip(queries["input"].to_pylist(), queries["qid"].to_pylist(), strict=True):
            self._subjects[text].add(qid)

    # --- ambiguous search ---------------------------------------------------------------

    def examples(self, limit: int = 100) -> list[str]:
        """QA queries to try: per set its tail entity's, then its head entity's."""
        queries = self.artifacts.queries
        qa = queries.filter(pc.equal(queries["task"], "qa"))
        chosen: dict[tuple[str, bool], str] = {}
        for name, is_head, text in zip(
            qa["name"].to_pylist(), qa["is_head"].to_pylist(), qa["input"].to_pylist(), strict=True
        ):
            chosen.setdefault((name, is_head), text)
        ordered = sorted(chosen.items(), key=lambda item: item[0][1])  # tails first
        return [text for _, text in ordered][:limit]

    def find_set(self, query: str) -> str | None:
        """The longest set name the query mentions as whole words (exact case preferred)."""
        for pattern in (self._names, self._names_any_case):
            found = [match.group(1) for match in pattern.finditer(query)]
            if found:
                return self._by_lower[max(found, key=len).lower()]
        return None

    def search(self, query: str, k: int = 5) -> SearchResult:
        """Each retriever's top `k` for `query`, with the set it names and its gold entity."""
        query = _check_text(query, "query", MAX_QUERY_CHARS, "Type a query, or pick an example.")
        k = max(1, min(int(k), MAX_K))
        set_name = self.find_set(query)
        members = tuple(self.sets.get(set_name, ()))
        owners = {page: m for m in members for page in m.wikipedia_ids}
        subjects = self._subjects.get(query, set()) & {m.qid for m in members}
        gold_qid = next(iter(subjects)) if len(subjects) == 1 else None
        hits = {}
        for kind, retriever in self.artifacts.retrievers.items():
            ranking = retriever.search([query], k)[0]
            pages = self.artifacts.documents.get([page for page, _ in ranking])
            hits[kind] = [
                Hit(
                    rank=rank,
                    wikipedia_id=page,
                    title=pages[page].title if page in pages else page,
                    text=pages[page].text if page in pages else "",
                    score=score,
                    member=owners.get(page),
                )
                for rank, (page, score) in enumerate(ranking, 1)
            ]
        return SearchResult(query, set_name, members, gold_qid, hits)

    def with_gold(self, result: SearchResult, qid: str | None) -> SearchResult:
        """`result` judged against entity `qid` (one of its set's members, or None)."""
        if qid is not None and qid not in {m.qid for m in result.members}:
            raise SpaceInputError(f"{qid} is not an entity of the set {result.set_name!r}.")
        return replace(result, gold_qid=qid)

    # --- AmbER set browser --------------------------------------------------------------

    def set_names(self) -> list[str]:
        return sorted(self.sets, key=str.lower)

    def matching_sets(self, text: str, limit: int = 20) -> list[str]:
        """Set names containing `text` (any case), shortest first."""
        needle = text.strip().lower()
        found = [name for name in self.sets if needle in name.lower()]
        return sorted(found, key=lambda name: (len(name), name.lower()))[:limit]

    def open_set(self, name: str) -> tuple[str, list[Member], list[SetQuery]]:
        """A set's name, members and queries with gold ranks; unknown names are an error."""
        name = _check_text(name, "set name", MAX_QUERY_CHARS, "Type a set name, e.g. a person's.")
        canonical = self._by_lower.get(name.lower())
        if canonical is None:
            close = self.matching_sets(name, limit=5)
            hint = f" Did you mean: {', '.join(close)}?" if close else ""
            raise SpaceInputError(f"No AmbER set is named {name!r}.{hint}")
        return canonical, self.sets[canonical], list(self._set_queries(canonical))

    @lru_cache(maxsize=256)  # noqa: B019 - one Explorer per process; sets are few and small
    def _set_queries(self, name: str) -> tuple[SetQuery, ...]:
        queries = self.artifacts.queries
        rows = queries.filter(pc.equal(queries["name"], name)).to_pylist()
        texts = [row["input"] for row in rows]
        rankings = {
            kind: retriever.search(texts, RANK_DEPTH) if texts else []
            for kind, retriever in self.artifacts.retrievers.items()
        }
        return tuple(
            SetQuery(
                task=row["task"],
                input=row["input"],
                qid=row["qid"],
                is_head=row["is_head"],
                answer=tuple(row["answer"]),
                ranks={
                    kind: gold_rank([page for page, _ in ranked[i]], row["gold_wikipedia_ids"])
                    for kind, ranked in rankings.items()
                },
            )
            for i, row in enumerate(rows)
        )

    # --- where the encoder looks --------------------------------------------------------

    def passage_choices(self, limit: int = 500) -> list[tuple[str, str]]:
        """(title, id) of pages whose first passage the attention tab offers."""
        return self.artifacts.documents.titles(limit)

    def first_passage(self, wikipedia_id: str) -> tuple[str, str]:
        """A page's title and first 100-word passage."""
        page = self.artifacts.documents.get([wikipedia_id]).get(wikipedia_id)
        if page is None:
            raise SpaceInputError(f"No page with id {wikipedia_id!r} in the corpus.")
        return page.title, next(split_passages([page])).text

    @cached_property
    def _attention(self) -> PassageAttention:
        return PassageAttention(self.artifacts.passage_encoder)

    @cached_property
    def _ner(self):
        return load_ner()

    def attention(self, title: str, text: str) -> AttentionView:
        """Where the passage encoder's CLS looks in ``title [SEP] text`` (last layer)."""
        text = _check_text(text, "passage", MAX_PASSAGE_CHARS, "Paste a passage, or pick a page.")
        title = (title or "").strip()[:MAX_QUERY_CHARS]
        attention, offsets, segments = self._attention.cls_attention([title], [text])[0]
        entities = find_entities([text], self._ner)[0]
        stats = passage_stats(attention, offsets, segments, text, entities)
        tokens = [
            (start, end, weight)
            for weight, (start, end), segment in zip(attention, offsets, segments, strict=True)
            if segment == 1 and end > start
        ]
        last_end = tokens[-1][1] if tokens else 0
        return AttentionView(
            text=text,
            tokens=tokens,
            entities=entities,
            entity_attention=stats.entity_attention,
            ranked=stats.ranked,
            truncated=bool(text[last_end:].strip()),
        )

    # --- is this answer right? ----------------------------------------------------------

    @cached_property
    def _wes_metric(self):
        return load_metric("wes_similarity")

    def score_answer(self, references: str, candidate: str, question: str | None = None) -> dict:
        """The WES metric's result for one candidate against newline-separated references,
        with its question when one is given (an empty question is none)."""
        candidate = _check_text(candidate, "answer", MAX_QUERY_CHARS, "Type a candidate answer.")
        references = _check_text(
            references, "references", MAX_QUERY_CHARS * 10, "Type at least one reference answer."
        )
        question = (question or "").strip()
        if len(question) > MAX_QUERY_CHARS:
            raise SpaceInputError(
                f"That question is {len(question):,} characters long; the limit is "
                f"{MAX_QUERY_CHARS:,}."
            )
        refs = [line.strip() for line in references.splitlines() if line.strip()]
        return self._wes_metric.compute(
            predictions=[candidate],
            references=[refs],
            questions=[question] if question else None,
            model_name_or_path=self.artifacts.wes_model,
        )

    # --- the leaderboard --------------------------------------------------------------------

    def leaderboard(self) -> tuple[str, str]:
        """The leaderboard tab's content: leaderboard.md's text and the curve's PNG path, as
        ``namesake leaderboard`` wrote them (the Space computes nothing here: the table is the
        command's, intervals and tests included). Without them, why, and the command that makes
        them."""
        folder = self.artifacts.leaderboard
        if folder is None:
            expected = self.artifacts.folder / LEADERBOARD_DIR
            raise SpaceInputError(
                f"No leaderboard in {expected}: `make demo` writes one (`namesake leaderboard "
                f"RUN... --dataset ... --config human_qa --out {expected}`)."
            )
        board = (folder / "leaderboard.md").read_text(encoding="utf-8")
        return board, str(folder / "popularity_curve.png")


def _check_text(text: str | None, what: str, limit: int, if_empty: str) -> str:
    """`text` stripped; empty or over `limit` characters is a :class:`SpaceInputError`."""
    text = (text or "").strip()
    if not text:
        raise SpaceInputError(if_empty)
    if len(text) > limit:
        raise SpaceInputError(
            f"That {what} is {len(text):,} characters long; the limit is {limit:,}."
        )
    return text
