"""Files namesake ships as package data, found the same way in a checkout and when installed.

In the repository ``metrics`` and ``amber_sample`` are links to their one source,
``metrics/`` (the evaluate modules, each a folder with its script, card and requirements) and
``dataset_scripts/amber/sample/`` (the hand-made AmbER dumps); building the wheel copies
their files in, so ``pip install .`` and the Space's wheel find them here too.
"""

from __future__ import annotations

from pathlib import Path

from namesake.errors import NamesakeError

DATA_DIR = Path(__file__).resolve().parent
METRICS_DIR = DATA_DIR / "metrics"
AMBER_SAMPLE_DIR = DATA_DIR / "amber_sample"

AMBER_SAMPLE_FILES = {
    "wikidata": "wikidata-sample-all.json.bz2",
    "pageviews": "pagecounts-sample-views-ge-5-totals.bz2",
    "pageviews_complete": "pageviews-sample-user.gz",
    "kilt": "kilt_knowledgesource-sample.json",
}


def amber_sample(kind: str) -> Path:
    """The bundled sample dump ``kind``: one of ``AMBER_SAMPLE_FILES``."""
    if kind not in AMBER_SAMPLE_FILES:
        raise NamesakeError(f"no sample {kind!r}: one of {', '.join(AMBER_SAMPLE_FILES)}")
    path = AMBER_SAMPLE_DIR / AMBER_SAMPLE_FILES[kind]
    if not path.is_file():
        raise NamesakeError(f"{path}: the AmbER sample is missing from this installation")
    return path
