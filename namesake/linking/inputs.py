"""What the linker's encoder reads: a mention marked in its context, and a page as its title plus
opening words (BLINK, Wu et al. 2020), with the settings a trained encoder is saved with.

Mention markers: BLINK marks the mention with BERT's reserved vocabulary entries ``[unused0]``
and ``[unused1]``. They are used here too, registered as special tokens of the tokenizer: each is
then one token id that is never split, lower-cased or stripped, and since every BERT-uncased
vocabulary (all-MiniLM-L6-v2's, the tiny test models') already holds them, no embedding row is
added; fine-tuning gives them their meaning. Written as plain text (``[START]``), a marker would
cost three word pieces ("[", "start", "]") that also occur in ordinary text. A tokenizer without
the reserved entries gets the plain-text markers ``[START]`` / ``[END]``: still a marked span,
with no new embedding to train.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from namesake.errors import BadInputError
from namesake.retrieval.dense import passage_input
from namesake.retrieval.encoders import title_separator

RESERVED_MARKERS = ("[unused0]", "[unused1]")
TEXT_MARKERS = ("[START]", "[END]")
#: words of context kept on each side of a mention (BLINK keeps the mention centred too)
CONTEXT_WORDS = 24
#: opening words of a page after its title (BLINK: the first ~ 128 tokens of the description)
PAGE_WORDS = 48
SETTINGS_FILE = "linker.json"


def mention_markers(tokenizer) -> tuple[str, str]:
    """The (start, end) mention markers for `tokenizer`, registered as special tokens when
    they are reserved entries of its vocabulary (see the module docstring)."""
    if all(marker in tokenizer.get_vocab() for marker in RESERVED_MARKERS):
        tokenizer.add_tokens(list(RESERVED_MARKERS), special_tokens=True)
        return RESERVED_MARKERS
    return TEXT_MARKERS


def mark_mention(
    text: str, start: int, end: int, markers: tuple[str, str], context_words: int = CONTEXT_WORDS
) -> str:
    """``left [start] mention [end] right``: the characters ``[start, end)`` of `text` marked,
    with at most `context_words` words of context on each side (so truncation to the encoder's
    length never cuts the mention off)."""
    if not 0 <= start < end <= len(text):
        raise ValueError(f"mention span [{start}, {end}) outside a text of {len(text)} characters")
    left = text[:start].split()[-context_words:] if context_words else []
    right = text[end:].split()[:context_words]
    mention = " ".join(text[start:end].split())
    return " ".join([*left, markers[0], mention, markers[1], *right])


def page_input(title: str, text: str, separator: str, page_words: int = PAGE_WORDS) -> str:
    """A page as the encoder reads it: title, separator token, its first `page_words` words (the
    dense retriever's title-and-passage input, so a title-only page is just its title)."""
    return passage_input(title, " ".join(text.split()[:page_words]), separator)


def page_separator(encoder) -> str:
    """The separator between a page's title and its words: the tokenizer's own (``[SEP]``)."""
    return title_separator(encoder)


def write_linker_settings(folder: str | os.PathLike, settings: dict) -> None:
    """Saves the input settings a trained encoder was trained with beside it."""
    path = Path(folder) / SETTINGS_FILE
    path.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")


def read_linker_settings(model: str | os.PathLike) -> dict:
    """``context_words`` and ``page_words`` of a trained linker folder (its ``linker.json``);
    the defaults for any other model (a Hub id, a plain sentence-transformers folder)."""
    settings = {"context_words": CONTEXT_WORDS, "page_words": PAGE_WORDS}
    path = Path(model) / SETTINGS_FILE
    if not path.is_file():
        return settings
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise BadInputError(path, error.lineno, f"not JSON: {error.msg}") from None
    for name in settings:
        value = saved.get(name, settings[name])
        if not isinstance(value, int) or value < 0:
            raise BadInputError(path, None, f"{name} must be a non-negative integer, not {value!r}")
        settings[name] = value
    return settings
