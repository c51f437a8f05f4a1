"""Wikitext to plain text, with simple regular expressions (no full parser): what passages
(`namesake.ecqg.passages`) and the linker's mention spans (`namesake.linking.wiki_mentions`)
read of a page."""

from __future__ import annotations

import html
import re

_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.S)
_REF_SELF = re.compile(r"<ref\b[^>]*/>", re.I)
_REF = re.compile(r"<ref\b[^>]*>.*?(?:</ref\s*>|$)", re.I | re.S)
_DROP_TAGS = re.compile(
    r"<(math|gallery|timeline|syntaxhighlight|source|score|templatedata|nowiki|pre|imagemap)\b"
    r"[^>]*>.*?(?:</\1\s*>|$)",
    re.I | re.S,
)
_TAG = re.compile(r"</?[a-zA-Z][^>]*/?>")
_TEMPLATE = re.compile(r"\{\{(?:(?!\{\{|\}\}).)*\}\}", re.S)
_TABLE = re.compile(r"\{\|(?:(?!\{\||\|\}).)*\|\}", re.S)
_FILE_LINK = re.compile(
    r"\[\[\s*(?:file|image|category|media)\s*:(?:(?!\[\[|\]\]).)*\]\]", re.I | re.S
)
_LINK = re.compile(r"\[\[([^\[\]|]*)(?:\|([^\[\]]*))?\]\]")
_EXTERNAL = re.compile(r"\[(?:https?:|ftp:)?//[^\s\]]*\s*([^\]]*)\]")
_HEADING = re.compile(r"^\s*(=+)\s*(.*?)\s*\1\s*$", re.M)
_QUOTES = re.compile(r"'{2,}")
_LIST_MARK = re.compile(r"^[*#:;]+\s*", re.M)
_RULE = re.compile(r"^-{4,}\s*$", re.M)
_BEHAVIOUR = re.compile(r"__[A-Z]+__")


def _remove_nested(pattern: re.Pattern, text: str) -> str:
    """Removes innermost matches repeatedly, so nested templates/tables/files go too."""
    while True:
        text, n = pattern.subn("", text)
        if not n:
            return text


def clean_wikitext(wikitext: str) -> str:
    """Turns wikitext into plain text with simple regular expressions (no full parser).

    Drops comments, references, templates (nested), tables, file/image/category links,
    math and similar tags, and remaining HTML tags; keeps the visible text of internal links
    (``[[a|b]]`` → ``b``, ``[[a]]`` → ``a``) and external links' labels; strips bold/italic
    quotes, heading marks (keeping the heading text) and list marks. Whitespace is collapsed
    to single spaces. Unbalanced leftovers of ``[[``, ``]]``, ``{{`` and ``}}`` are removed.
    """
    text = _COMMENT.sub("", wikitext)
    text = _REF_SELF.sub("", text)
    text = _REF.sub("", text)
    text = _DROP_TAGS.sub("", text)
    text = _remove_nested(_TEMPLATE, text)
    text = _remove_nested(_TABLE, text)
    # file links may hold links in their captions: resolve inner links first, then drop files
    while True:
        text, n = _FILE_LINK.subn("", text)
        text, m = _LINK.subn(lambda mt: _link_text(mt), text)
        if not n and not m:
            break
    text = _EXTERNAL.sub(r"\1", text)
    text = _TAG.sub("", text)
    text = _HEADING.sub(r"\2", text)
    text = _QUOTES.sub("", text)
    text = _LIST_MARK.sub("", text)
    text = _RULE.sub("", text)
    text = _BEHAVIOUR.sub("", text)
    text = html.unescape(text).replace("\xa0", " ")
    for leftover in ("[[", "]]", "{{", "}}", "{|", "|}"):
        text = text.replace(leftover, " ")
    return " ".join(text.split())


def _link_text(match: re.Match) -> str:
    target, label = match.group(1), match.group(2)
    if label is not None:
        return label
    return target.lstrip(":").split("#")[0] if not target.startswith("#") else target[1:]
