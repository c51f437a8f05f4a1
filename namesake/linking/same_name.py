"""Same-name hard negatives: the other pages whose title shares a mention's name.

AmbER is about entities that share a name ("Lincoln": the president, the city in Nebraska, the
car maker, the film), so the negatives that teach a linker what AmbER measures are those
namesakes rather than random pages. A page is a namesake of a mention when the mention's name
is a contiguous span of the page title's words: "Lincoln" finds "Lincoln, Nebraska",
"Abraham Lincoln" and "Lincoln (2012 film)". Names and titles are compared after AmbER's answer
normalisation (``namesake.text.normalize_answer``: lower case, no punctuation or articles). A
name made only of stopwords ("of", "in the") names nothing and finds no namesake.

The namesakes of a mention are ranked by how often pages are linked (most linked first; then
shorter titles, the closer names; then by title): the popular namesake that overshadows a rarer
one is the confusion AmbER measures.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping

from spacy.lang.en.stop_words import STOP_WORDS

from namesake.text import normalize_answer

#: words of a title indexed (longer titles: their first words), bounding spans per title
MAX_TITLE_WORDS = 8


def name_key(text: str) -> str:
    """The normalised name a mention or title is compared under."""
    return normalize_answer(text)


def _spans(words: list[str]) -> set[str]:
    return {" ".join(words[i:j]) for i in range(len(words)) for j in range(i + 1, len(words) + 1)}


class SameNameIndex:
    """Every page title indexed by each contiguous span of its normalised words."""

    def __init__(self, titles: Iterable[str], link_counts: Mapping[str, int] | None = None):
        counts = link_counts or {}
        by_span: dict[str, list[str]] = defaultdict(list)
        for title in dict.fromkeys(titles):
            for span in _spans(name_key(title).split()[:MAX_TITLE_WORDS]):
                by_span[span].append(title)
        self._by_span = {
            span: sorted(found, key=lambda t: (-counts.get(t, 0), len(t.split()), t))
            for span, found in by_span.items()
        }

    def namesakes(self, name: str, exclude: str | None = None, limit: int | None = None):
        """Titles whose words contain `name`'s as a span, in namesake order, without
        `exclude` (the gold page); at most `limit` of them."""
        key = name_key(name)
        if not key or all(word in STOP_WORDS for word in key.split()):
            return []
        found = [title for title in self._by_span.get(key, ()) if title != exclude]
        return found if limit is None else found[:limit]
