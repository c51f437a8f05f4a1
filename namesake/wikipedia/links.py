"""Internal links of a page's wikitext: (normalised target, link text), as WES mines them.

A linear-time scanner, never a recursive parser: C-level regexes find the candidates and
short Python loops keep track of what hides them. It must survive any input (half-typed
markup, gigantic pages) because a dump contains all of it.

Choices, where wikitext is ambiguous or rendering would be needed:

- Ignored regions: `<!-- comments -->` (an unclosed one runs to the end of the page, as in
  MediaWiki) and the bodies of `<ref>`, `<nowiki>`, `<math>`, `<chem>`, `<ce>`, `<pre>`,
  `<syntaxhighlight>`, `<source>` (self-closing `<ref name="x" />` is just dropped). An
  opening tag without its closing tag is plain text, as MediaWiki shows it.
- Templates `{{...}}`, nested to any depth, hide their links. An unclosed `{{` is plain
  text (its closed inner templates still hide theirs).
- Only innermost links count: `[[File:x.jpg|thumb|a [[b]] c]]` gives ("B", "b") and not
  the file link. MediaWiki shows a non-file link that contains another link as text, and a
  file/category link has ':' in its target, which the pair filter drops anyway.
- A link whose text holds a template, single brackets or braces (`[[X|{{lang|fr|y}}]]`)
  is dropped: its rendered text is unknown.
- `[[dog]]s` gives text "dog": MediaWiki shows "dogs", but the trailing letters are not a
  name for the article.
- `[[Target|text|more]]` gives text "text|more"; the pipe trick `[[Target|]]` has an empty
  text and is dropped. Section links keep their '#' (`[[A#B|c]]` -> "A#B") and namespaced
  targets their ':' for the later filter to drop.
"""

from __future__ import annotations

import functools
import html
import re

# Every pattern below is anchored on a literal opener and scans with negated classes, so a
# failed attempt stops at the next delimiter: linear time, no backtracking blow-up.
# An innermost link: no brackets, braces or removed templates (HIDDEN) inside.
HIDDEN = "\x00"  # stands for a removed template; cannot occur in XML text
LINK = re.compile(r"\[\[([^\[\]{}\x00]*)\]\]")
# An innermost template: single braces allowed, no "{{" or "}}" inside.
TEMPLATE = re.compile(r"\{\{[^{}]*(?:\{(?!\{)[^{}]*|\}(?!\})[^{}]*)*\}\}")
BRACES = re.compile(r"\{\{|\}\}")
TEMPLATE_PASSES = 4  # nesting removed by regex passes (most articles need 1-3); deeper: a stack
HIDING_TAGS = ("ref", "nowiki", "math", "chem", "ce", "pre", "syntaxhighlight", "source")
# A comment opener, or an opening hiding tag (attributes stop at the next '<' or '>').
HIDING_OPEN = re.compile(
    r"<!--|<(" + "|".join(HIDING_TAGS) + r")(?=[\s/>])[^<>]*?(/?)>", re.IGNORECASE
)
HIDING_CLOSE = {tag: re.compile(r"</" + tag + r"\s*>", re.IGNORECASE) for tag in HIDING_TAGS}
SPACES = re.compile(r"[\s_]+")  # \s takes in the no-break space of &nbsp;


@functools.lru_cache(maxsize=1 << 18)  # a dump links the same titles over and over
def normalize_title(target: str) -> str:
    """The page title MediaWiki resolves `target` to (default `$wgCapitalLinks`).

    HTML entities are unescaped, underscores and runs of white space become one space, the
    ends are trimmed, one leading ':' (the "link, don't categorise" prefix) is removed and
    the first character is upper-cased with `str.upper` ("ß" becomes "SS", as in MediaWiki).
    """
    title = SPACES.sub(" ", html.unescape(target)).strip()
    if title.startswith(":"):
        title = title[1:].lstrip()
    return title[:1].upper() + title[1:]


def extract_links(wikitext: str) -> list[tuple[str, str]]:
    """(normalised target, link text) of each `[[Target|text]]` / `[[Target]]`, in order.

    The text of an unpiped link is the target as written. Texts are HTML-unescaped, their
    white space (no-break spaces included) collapsed to single spaces as a browser shows
    them; links with an empty target or text are dropped. See the module docstring for
    what counts as a link.
    """
    links = []
    for inner in LINK.findall(_without_templates(_visible(wikitext))):
        target, pipe, label = inner.partition("|")
        if not pipe:
            label = target
        if "&" in label:
            label = html.unescape(label)
        label = " ".join(label.split())
        target = normalize_title(target)
        if label and target:
            links.append((target, label))
    return links


def _visible(wikitext: str) -> str:
    """`wikitext` without comments and the bodies of hiding tags (refs, nowiki, math...)."""
    if "<" not in wikitext:
        return wikitext
    pieces = []
    position = 0
    unclosed: set[str] = set()  # tags with no closing tag after some point: none further on
    for opener in HIDING_OPEN.finditer(wikitext):
        if opener.start() < position:  # inside a region already dropped
            continue
        tag, self_closing = opener.group(1), opener.group(2)
        if tag is None:  # a comment; unclosed, it runs to the end of the page
            close = wikitext.find("-->", opener.end())
            resume = len(wikitext) if close < 0 else close + 3
        elif self_closing:
            resume = opener.end()
        else:
            tag = tag.lower()
            if tag in unclosed:
                continue
            closer = HIDING_CLOSE[tag].search(wikitext, opener.end())
            if closer is None:
                unclosed.add(tag)
                continue
            resume = closer.end()
        pieces.append(wikitext[position : opener.start()])
        position = resume
    pieces.append(wikitext[position:])
    return "".join(pieces)


def _without_templates(text: str) -> str:
    """`text` with every closed template `{{...}}` replaced by HIDDEN.

    Each regex pass removes the innermost templates; an unclosed `{{` stays as plain
    text, as MediaWiki shows it. Past TEMPLATE_PASSES levels of nesting (rare in
    articles, easy to forge) a stack finishes the job in one linear pass.
    """
    for _ in range(TEMPLATE_PASSES):
        if "{{" not in text:
            return text
        text, found = TEMPLATE.subn(HIDDEN, text)
        if not found:
            return text
    return _without_deep_templates(text)


def _without_deep_templates(text: str) -> str:
    """What `_without_templates` computes, by pairing braces on a stack (any depth)."""
    hidden: list[tuple[int, int]] = []  # outermost closed templates, in order
    open_starts: list[int] = []
    for brace in BRACES.finditer(text):
        if brace.group() == "{{":
            open_starts.append(brace.start())
        elif open_starts:
            start = open_starts.pop()
            while hidden and hidden[-1][0] > start:  # inner templates: covered by this one
                hidden.pop()
            hidden.append((start, brace.end()))
    pieces = []
    position = 0
    for start, end in hidden:
        pieces.append(text[position:start])
        position = end
    pieces.append(text[position:])
    return HIDDEN.join(pieces)
