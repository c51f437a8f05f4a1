"""Entity-linking training data from Wikipedia's own links: each link text in its sentence,
with the page it links to, read from a pages-articles dump.

Pages come from ``namesake.wikipedia.dump.iter_pages`` and link syntax follows
``namesake.wikipedia.links`` (innermost ``[[Target|text]]`` links; targets through
``normalize_title``). Each link is replaced by a placeholder around its text before the
wikitext is cleaned to plain text by ``namesake.wikipedia.wikitext.clean_wikitext``, so the
link's span is found in the clean text: links inside templates, references, comments and
file captions disappear with them, as they are not in the text a reader sees. Links to other
namespaces (a ':' in the target: files, categories, interwiki) and to a section of the same
page are not mentions; a section link
``[[A#B|c]]`` links page A. Targets are resolved through the dump's redirects.

A mention's context is its sentence, split at '.', '!' or '?' followed by a space and a capital
or digit (no model: fast on a whole dump; abbreviations like "St. Louis" may cut a sentence
short, and the sentence is then widened to cover the whole link). Pages are every link target;
a target's text is the opening words of its article when the article is in the dump, else
empty: such a page is known by its title only (in an excerpt of the dump, most targets).
"""

from __future__ import annotations

import bisect
import html
import os
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from tqdm.auto import tqdm

from namesake.linking.inputs import PAGE_WORDS
from namesake.wikipedia.dump import iter_pages
from namesake.wikipedia.links import LINK, normalize_title
from namesake.wikipedia.wikitext import clean_wikitext

_OPEN, _MIDDLE, _CLOSE = "\x01", "\x02", "\x03"  # cannot occur in XML text
_PLACEHOLDER = re.compile(r"\x01(\d+)\x02([^\x01\x02\x03]*)\x03")
_STRAY = re.compile(r"[\x01\x02\x03]")
_SENTENCE_START = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
MAX_REDIRECT_HOPS = 5


@dataclass(frozen=True)
class LinkMention:
    """A link of article `source`: its text at ``context[start:end]``, linking page `target`."""

    source: str
    context: str
    start: int
    end: int
    target: str

    @property
    def text(self) -> str:
        return self.context[self.start : self.end]


@dataclass
class LinkData:
    """The mentions of a dump, and its pages: every link target's title and opening words
    (empty for a target whose article is not in the dump)."""

    mentions: list[LinkMention] = field(default_factory=list)
    pages: dict[str, str] = field(default_factory=dict)


def _target(raw: str) -> str | None:
    """The page a link target names, or None when it names no article."""
    title = normalize_title(raw.partition("#")[0])
    if not title or ":" in title:
        return None
    return title


def _with_placeholders(wikitext: str) -> tuple[str, list[str]]:
    """`wikitext` with each article link replaced by ``\\x01N\\x02text\\x03`` (N: the index of
    its target in the returned list); other links are left for the cleaner."""
    targets: list[str] = []

    def replace(match: re.Match) -> str:
        raw, pipe, label = match.group(1).partition("|")
        if not pipe:
            label = raw
        target = _target(raw)
        label = " ".join(html.unescape(label).split())
        if target is None or not label:
            return match.group(0)
        targets.append(target)
        return f"{_OPEN}{len(targets) - 1}{_MIDDLE}{label}{_CLOSE}"

    return LINK.sub(replace, wikitext), targets


def page_mentions(title: str, wikitext: str) -> tuple[str, list[LinkMention]]:
    """The clean text of an article and the mentions of its links (targets not yet resolved
    through redirects), in text order."""
    marked, targets = _with_placeholders(wikitext)
    clean = clean_wikitext(marked)
    pieces: list[str] = []
    spans: list[tuple[int, int, str]] = []
    length = 0
    position = 0
    for match in _PLACEHOLDER.finditer(clean):
        before = _STRAY.sub("", clean[position : match.start()])
        pieces.append(before)
        length += len(before)
        label = match.group(2).strip()
        if label:
            spans.append((length, length + len(label), targets[int(match.group(1))]))
        pieces.append(label)
        length += len(label)
        position = match.end()
    pieces.append(_STRAY.sub("", clean[position:]))
    text = "".join(pieces)
    starts = [0] + [m.end() for m in _SENTENCE_START.finditer(text)]
    mentions = []
    for start, end, target in spans:
        first = starts[bisect.bisect_right(starts, start) - 1]
        after = bisect.bisect_left(starts, end)
        last = starts[after] if after < len(starts) else len(text)
        sentence = text[first:last]
        stripped = len(sentence) - len(sentence.lstrip())
        context = sentence.strip()
        offset = first + stripped
        mentions.append(LinkMention(title, context, start - offset, end - offset, target))
    return text, mentions


def _resolve(title: str, redirects: dict[str, str]) -> str:
    """`title` followed through redirects (a few hops; a loop stops where it closes)."""
    seen = {title}
    for _ in range(MAX_REDIRECT_HOPS):
        title = redirects.get(title, title)
        if title in seen:
            break
        seen.add(title)
    return title


def read_link_data(
    path: str | os.PathLike, page_words: int = PAGE_WORDS, show_progress: bool = True
) -> LinkData:
    """The link mentions and pages of the main-namespace articles of a dump (streamed once;
    per article only its mentions and opening words are kept)."""
    mentions: list[LinkMention] = []
    openings: dict[str, str] = {}
    redirects: dict[str, str] = {}
    pages = tqdm(iter_pages(path), desc="Reading links", unit="page", disable=not show_progress)
    for page in pages:
        if page.redirect is not None:
            target = _target(page.redirect)
            if target is not None:
                redirects[page.title] = target
            continue
        text, found = page_mentions(page.title, page.text)
        openings[page.title] = " ".join(text.split()[:page_words])
        mentions.extend(found)
    resolved = [
        LinkMention(m.source, m.context, m.start, m.end, _resolve(m.target, redirects))
        for m in mentions
    ]
    targets = dict.fromkeys(m.target for m in resolved)
    return LinkData(resolved, {title: openings.get(title, "") for title in targets})


def split_by_source(
    mentions: list[LinkMention], held_out_share: float, seed: int = 0
) -> tuple[list[LinkMention], list[LinkMention]]:
    """``(train, held_out)``: the mentions of a seeded random `held_out_share` of the source
    articles are held out whole, so no held-out article's link is ever trained on."""
    if not 0 < held_out_share < 1:
        raise ValueError(f"held_out_share must be between 0 and 1, not {held_out_share}")
    sources = sorted({m.source for m in mentions})
    if len(sources) < 2:
        raise ValueError(f"{len(sources)} source article(s): cannot hold any out and train")
    random.Random(seed).shuffle(sources)
    count = min(len(sources) - 1, max(1, round(held_out_share * len(sources))))
    held = set(sources[:count])
    return (
        [m for m in mentions if m.source not in held],
        [m for m in mentions if m.source in held],
    )


def iter_sources(mentions: list[LinkMention]) -> Iterator[str]:
    """The source articles of `mentions`, each once, in order."""
    yield from dict.fromkeys(m.source for m in mentions)
