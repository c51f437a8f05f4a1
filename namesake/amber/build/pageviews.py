"""Monthly English Wikipedia page views, from either format Wikimedia has published.

- pagecounts-ez monthly totals (used by AmbER, 2019): ``en.z Page_Title 12345``. A title
  on several lines keeps its last count, as in the published pipeline (it assigned
  ``wiki_popularity[title] = math.log10(count)`` line by line), so popularity and head/tail
  match the released AmbER.
- pageviews-complete monthly (current): ``en.wikipedia Page_Title page_id access count hourly``,
  one line per access type; we sum the counts per title.

The format is detected from the first line that belongs to English Wikipedia. Lines of
other projects are ignored silently; malformed English lines are reported.
"""

from __future__ import annotations

import os

import pyarrow as pa

from namesake.dumps.reading import iter_line_blocks
from namesake.errors import BadInputError, InputProblems

PAGECOUNTS_EZ = "pagecounts-ez"
PAGEVIEWS_COMPLETE = "pageviews-complete"
_PREFIXES = {b"en.z ": PAGECOUNTS_EZ, b"en.wikipedia ": PAGEVIEWS_COMPLETE}
_FIELDS = {PAGECOUNTS_EZ: 3, PAGEVIEWS_COMPLETE: 6}
_COUNT_FIELD = {PAGECOUNTS_EZ: 2, PAGEVIEWS_COMPLETE: 4}
# How the counts of a title's lines combine: the published rule for pagecounts-ez, and
# the total over access types for pageviews-complete.
_COMBINE = {PAGECOUNTS_EZ: "last", PAGEVIEWS_COMPLETE: "sum"}


def read_pageviews(path: str | os.PathLike, problems: InputProblems, threads: int = 1) -> pa.Table:
    """Returns a table (title: string, views: int64) with one row per English page title.

    Titles are kept in Arrow arrays, block by block, and combined (last count or sum, by
    format) with one ordered hash aggregation at the end: tens of millions of titles fit
    in a few hundred MB.
    """
    fmt = prefix = None
    blocks: list[pa.RecordBatch] = []
    for first_line, block in iter_line_blocks(path, threads):
        titles: list[str] = []
        counts: list[int] = []
        for line_no, line in enumerate(block.splitlines(), first_line):
            if fmt is None:
                fmt = next((f for p, f in _PREFIXES.items() if line.startswith(p)), None)
                prefix = next((p for p, f in _PREFIXES.items() if f == fmt), None)
            if fmt is None or not line.startswith(prefix):
                continue
            fields = line.split(b" ")
            if len(fields) != _FIELDS[fmt]:
                problems.report(path, line_no, f"malformed {fmt} line", f"{len(fields)} fields")
                continue
            count = fields[_COUNT_FIELD[fmt]]
            # At most 15 digits: sums stay far inside int64 (no page has 10^15 views).
            if not count.isdigit() or len(count) > 15 or int(count) == 0:
                problems.report(path, line_no, f"malformed {fmt} line", f"bad count {count[:20]!r}")
                continue
            try:
                title = fields[1].decode("utf-8")
            except UnicodeDecodeError:
                problems.report(path, line_no, "page title is not UTF-8")
                continue
            if titles and titles[-1] == title:  # access types of a title are adjacent
                counts[-1] = int(count) + (counts[-1] if fmt == PAGEVIEWS_COMPLETE else 0)
            else:
                titles.append(title)
                counts.append(int(count))
        if titles:
            blocks.append(
                pa.record_batch(
                    [pa.array(titles, pa.string()), pa.array(counts, pa.int64())],
                    names=["title", "views"],
                )
            )
    if not blocks:
        raise BadInputError(
            path,
            None,
            "no English Wikipedia page views found: expected pagecounts-ez lines "
            "('en.z Title 123') or pageviews-complete lines "
            "('en.wikipedia Title page_id access count hourly')",
        )
    # use_threads=False keeps line order within a title, which "last" depends on.
    table = pa.Table.from_batches(blocks).group_by("title", use_threads=False)
    table = table.aggregate([("views", _COMBINE[fmt])])
    return table.rename_columns(["title", "views"])
