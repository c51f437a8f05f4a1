"""The HTML the Space shows. Every string that comes from a user, the corpus or the dataset
goes through :func:`html.escape` here, so a query holding markup is shown, never run.

Colours are inline styles (the page's stylesheet only adds layout), so a result reads the
same wherever the HTML is pasted.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from html import escape

from namesake.amber.build.reference import COLLECTION_NAMES
from namesake.amber.evaluation.paper import paper_figure, system_for
from namesake.papers import paper
from namesake.space.explorer import (
    RANK_DEPTH,
    AttentionView,
    Hit,
    Member,
    SearchResult,
    SetQuery,
    head_or_tail,
    verdict,
    whole_words,
)

#: verdict -> (badge text, text colour, background)
BADGES = {
    "gold": ("gold entity", "#116329", "#dafbe1"),
    "confused": ("confused", "#a40e26", "#ffebe9"),
    "same_name": ("same name", "#7d4e00", "#fff8c5"),
    "unrelated": ("unrelated", "#424a53", "#eaeef2"),
}
RETRIEVER_NAMES = {"bm25": "BM25", "dense": "Dense (MiniLM)"}
SNIPPET_WORDS = 40


def message(text: str, kind: str = "info") -> str:
    """A notice for the page: 'info' or 'error'."""
    return f'<div class="ns-message ns-{kind}" role="status">{escape(text)}</div>'


def badge(kind: str) -> str:
    """The coloured badge of a verdict (see :func:`namesake.space.explorer.verdict`)."""
    text, colour, background = BADGES[kind]
    return (
        f'<span class="ns-badge ns-badge-{kind}" style="color:{colour};background:{background};'
        f'border:1px solid {colour};border-radius:1em;padding:0 .6em;font-size:.85em">'
        f"{text}</span>"
    )


def _name_regex(name: str) -> re.Pattern:
    return re.compile(whole_words([name]), re.IGNORECASE)


def highlight(text: str, name: str | None) -> str:
    """`text` escaped, with every whole-word occurrence of `name` (any case) in ``<mark>``."""
    if not name:
        return escape(text)
    pieces, last = [], 0
    for match in _name_regex(name).finditer(text):
        pieces.append(escape(text[last : match.start()]))
        pieces.append(f'<mark class="ns-name">{escape(match.group(0))}</mark>')
        last = match.end()
    pieces.append(escape(text[last:]))
    return "".join(pieces)


def snippet(text: str, name: str | None, words: int = SNIPPET_WORDS) -> str:
    """About `words` words of `text` around the first mention of `name` (else its start),
    with an ellipsis where text was cut. Plain text: escape or :func:`highlight` it."""
    tokens = text.split()
    match = _name_regex(name).search(text) if name else None
    first = len(text[: match.start()].split()) if match else 0
    start = max(0, min(first - words // 3, len(tokens) - words))
    window = " ".join(tokens[start : start + words])
    return ("… " if start > 0 else "") + window + (" …" if start + words < len(tokens) else "")


def _member_line(member: Member) -> str:
    role = head_or_tail(member.is_head)
    return f"{member.label} ({member.qid}) · {role} · popularity {member.popularity:.2f}"


def hit_card(hit: Hit, kind: str, name: str | None) -> str:
    """One result: rank, highlighted title and snippet, the verdict's badge, its entity."""
    entity = ""
    if hit.member:
        entity = f'<div class="ns-entity">{escape(_member_line(hit.member))}</div>'
    return (
        f'<div class="ns-hit" data-verdict="{kind}" data-page="{escape(hit.wikipedia_id)}">'
        f'<div class="ns-hit-head"><span class="ns-rank">{hit.rank}.</span> '
        f'<span class="ns-title">{highlight(hit.title, name)}</span> {badge(kind)}</div>'
        f"{entity}"
        f'<div class="ns-snippet">{highlight(snippet(hit.text, name), name)}</div>'
        f'<div class="ns-score">score {hit.score:.3f}</div></div>'
    )


def results_column(result: SearchResult, retriever: str) -> str:
    """One retriever's hits for a search, judged against the result's gold entity, under
    the AmbER paper's figure for the same kind of retriever (`paper_note`)."""
    hits = result.hits[retriever]
    title = f"<h3>{escape(RETRIEVER_NAMES.get(retriever, retriever))}</h3>"
    title += paper_note(retriever, result.members[0].collection if result.members else None)
    if not hits:
        return title + message("No document shares a word with this query.")
    return title + "".join(
        hit_card(hit, verdict(hit, result.gold_qid), result.set_name) for hit in hits
    )


# The paper's retriever nearest to each of the Space's, which it did not evaluate: TF-IDF is
# lexical like BM25, DPR a dense bi-encoder like MiniLM. Shown as the paper's, never as ours.
NEAREST_PAPER_KIND = {"bm25": "tfidf", "dense": "dpr"}
PAPER_PARTS = ("", "_head", "_tail")  # all, head and tail queries


def paper_note(retriever: str, collection: str | None) -> str:
    """The AmbER paper's top-1 accuracy on QA queries (Table 5) for the retriever's kind,
    or for the nearest kind it evaluated, labelled as such; the collection's where the query
    names a set, else AmbER-H's and AmbER-N's."""
    kind = retriever if system_for(retriever) else NEAREST_PAPER_KIND.get(retriever)
    if kind is None:
        return '<p class="ns-paper">Not in the AmbER paper.</p>'
    system = system_for(kind)
    page = paper("amber").table(5).page
    figures = []
    for name in [collection] if collection else list(COLLECTION_NAMES):
        values = [paper_figure(kind, name, "qa", f"accuracy@1{part}") for part in PAPER_PARTS]
        figures.append(
            f"{COLLECTION_NAMES[name]} {values[0]:.1f}% (head {values[1]:.1f}, tail "
            f"{values[2]:.1f})"
        )
    which = (
        f"its {system}"
        if kind == retriever
        else f"it did not evaluate {RETRIEVER_NAMES.get(retriever, retriever)}; its {system}, "
        "the nearest kind,"
    )
    return (
        f'<p class="ns-paper">AmbER paper (Chen et al., 2021, Table 5, p. {page}): {which} '
        f"ranked the gold page first for {'; '.join(figures)} of QA queries.</p>"
    )


def search_summary(result: SearchResult) -> str:
    """The query as read (escaped), the set it names and how the badges are judged."""
    query = f'<p class="ns-query">Results for <q>{escape(result.query)}</q></p>'
    if result.set_name is None:
        return query + message(
            "This query names no AmbER set, so no hit is judged: every badge is 'unrelated'."
        )
    gold = next((m for m in result.members if m.qid == result.gold_qid), None)
    about = (
        f"about {escape(gold.label)} ({escape(gold.qid)})"
        if gold
        else "about an entity not chosen yet: pick one below to judge the hits"
    )
    return query + (
        f"<p>It names the AmbER set <b>{escape(result.set_name)}</b> "
        f"({len(result.members)} entities) and is {about}.</p>"
    )


def members_table(members: Sequence[Member], gold_qid: str | None = None) -> str:
    """The entities of a set: label, QID, head/tail, popularity, types and pages."""
    rows = []
    for m in sorted(members, key=lambda m: -m.popularity):
        mark = " ns-gold-row" if m.qid == gold_qid else ""
        rows.append(
            f'<tr class="ns-member{mark}" data-qid="{escape(m.qid)}">'
            f"<td>{escape(m.label)}{' ✔' if mark else ''}</td><td>{escape(m.qid)}</td>"
            f"<td>{head_or_tail(m.is_head)}</td><td>{m.popularity:.2f}</td>"
            f"<td>{escape(', '.join(m.entity_types))}</td>"
            f"<td>{escape('; '.join(m.wikipedia_titles))}</td></tr>"
        )
    return (
        '<div class="ns-scroll"><table class="ns-table ns-members"><thead><tr><th>Entity</th>'
        "<th>QID</th><th>Head/tail</th><th>Popularity</th><th>Types</th><th>Pages</th></tr>"
        f"</thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def rank_cell(rank: int | None) -> str:
    """A gold-page rank, green at 1, red when missing from the top :data:`RANK_DEPTH`."""
    if rank is None:
        return f'<td class="ns-rank-miss" style="color:#a40e26">&gt;{RANK_DEPTH}</td>'
    colour = "#116329" if rank == 1 else "#424a53"
    return f'<td class="ns-rank-cell" style="color:{colour}">{rank}</td>'


def set_view(name: str, members: Sequence[Member], queries: Sequence[SetQuery]) -> str:
    """A set: its entities, then every query with each retriever's rank of the gold page."""
    collections = sorted({COLLECTION_NAMES.get(m.collection, m.collection) for m in members})
    labels = {m.qid: m.label for m in members}
    kinds = list(queries[0].ranks) if queries else []
    head = "".join(f"<th>{escape(RETRIEVER_NAMES.get(k, k))} rank</th>" for k in kinds)
    rows = "".join(
        f'<tr class="ns-set-query"><td>{q.task.upper()}</td>'
        f"<td>{escape(labels.get(q.qid, q.qid))} ({head_or_tail(q.is_head)})</td>"
        f"<td>{highlight(q.input, name)}</td><td>{escape(' / '.join(q.answer))}</td>"
        + "".join(rank_cell(q.ranks[k]) for k in kinds)
        + "</tr>"
        for q in queries
    )
    return (
        f'<h3 class="ns-set-name">{escape(name)}</h3>'
        f"<p>{escape(', '.join(collections))} · {len(members)} entities · "
        f"{len(queries)} queries</p>"
        + members_table(members)
        + '<table class="ns-table ns-set-queries"><thead><tr><th>Task</th><th>Entity</th>'
        f"<th>Query</th><th>Answer</th>{head}</tr></thead><tbody>{rows}</tbody></table>"
    )


def heatmap(view: AttentionView) -> str:
    """The passage with each token shaded by its attention (darkest = most) and entity
    mentions underlined; hovering a token shows its attention."""
    text = view.text
    peak = max((weight for _, _, weight in view.tokens), default=0.0) or 1.0
    spans = [(e.start, e.end) for e in view.entities]
    cuts = {0, len(text)}
    for start, end, _ in view.tokens:
        cuts.update((start, end))
    for start, end in spans:
        cuts.update((start, end))
    cuts = sorted(c for c in cuts if 0 <= c <= len(text))
    tokens = iter(view.tokens)
    token = next(tokens, None)
    pieces = []
    for start, end in zip(cuts, cuts[1:], strict=False):
        while token is not None and token[1] <= start:
            token = next(tokens, None)
        piece = escape(text[start:end])
        if token is not None and token[0] <= start and end <= token[1]:
            alpha = 0.08 + 0.8 * token[2] / peak
            piece = (
                f'<span class="ns-token" title="{token[2]:.4f}" '
                f'style="background:rgba(207,34,46,{alpha:.2f})">{piece}</span>'
            )
        if any(s <= start and end <= e for s, e in spans):
            piece = f'<u class="ns-mention">{piece}</u>'
        pieces.append(piece)
    note = (
        message("The passage was cut at the encoder's input limit: the rest is not shaded.")
        if view.truncated
        else ""
    )
    return f'<div class="ns-heatmap">{"".join(pieces)}</div>{note}'


def entity_ranking(view: AttentionView) -> str:
    """The passage's entities, least attended first (the ones a retriever under-uses)."""
    if not view.entities:
        return message("spaCy found no named entity in this passage.")
    rows = []
    for place, index in enumerate(view.ranked, 1):
        entity, weight = view.entities[index], view.entity_attention[index]
        shown = "truncated away" if weight is None else f"{weight:.4f}"
        rows.append(
            f'<tr class="ns-entity-row"><td>{place}</td><td>{escape(entity.text)}</td>'
            f"<td>{escape(entity.label)}</td><td>{shown}</td></tr>"
        )
    return (
        '<table class="ns-table ns-entities"><thead><tr><th>Rank</th><th>Entity</th>'
        "<th>Type</th><th>Mean CLS attention</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def answer_verdict(result: dict) -> str:
    """The WES score of one answer next to exact match and token F1."""
    score = result["scores"][0]
    same = score >= result["threshold"]
    scorer = {
        "hybrid": "hybrid WES scorer",
        "cross-encoder": "WES cross-encoder",
    }.get(result["scorer"], "bi-encoder cosine")
    return (
        f'<div class="ns-answer" data-same="{str(same).lower()}">'
        f'<p class="ns-wes-score"><b>WES score {score:.3f}</b> '
        f'<span style="color:{"#116329" if same else "#a40e26"}">'
        f"{'judged right' if same else 'judged wrong'}</span> "
        f"(threshold {result['threshold']:.2f})</p>"
        f'<p class="ns-lexical">Exact match {result["exact_match"]:.0f} · '
        f"token F1 {result['f1']:.1f} (AmbER-normalised, 0-100)</p>"
        f'<p class="ns-scorer">Scored by the {scorer}: {escape(str(result["model"]))}</p>'
        f'<p class="ns-regime">{escape(str(result.get("regime", "")).capitalize())}: '
        f"{escape(str(result.get('regime_reason', '')))}</p></div>"
    )
