"""WES mining, stage 1: every main-namespace page of a dump to columnar link triples.

A pages-articles dump is read once. Each article page gives its internal links as rows of
`(article, link_text, source)`, where `source` is the linking page's id; the paper's target
filters are applied here, and each (article, link_text) pair is kept once per source page,
so the state is at most one row per distinct link of a page. Every main-namespace page also
gives a row of the page table (`title`, `page_id`, `redirect`), from which the later stages
learn which targets exist and where redirects point.

Everything is Arrow: a full English dump holds ~100M links, which as Python tuples would
not fit in memory, while three Arrow columns (two strings, one int64) do. Multistream dumps
(`*-multistream.xml.bz2`) are split into ranges of whole bz2 streams handed to worker
processes, like `namesake.dumps.reading.map_blocks`; other files are read by one process.
"""

from __future__ import annotations

import glob
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path

import pyarrow as pa
import pyarrow.feather as feather
from tqdm.auto import tqdm

from namesake.errors import BadInputError, InputProblems
from namesake.outputs import atomic_directory
from namesake.wikipedia.links import extract_links, normalize_title
from namesake.work_folder import input_identity, prepare_work_folder, read_json

# The paper's filters on link targets: sections ('#'), other namespaces (':') and
# parenthetical, disambiguated titles ('(').
FILTERED_TARGET_CHARACTERS = ("#", ":", "(")
# Whole bz2 streams (100 pages each in Wikimedia's multistream dumps) per worker task.
STREAMS_PER_TASK = 50

LINK_SCHEMA = pa.schema(
    [("article", pa.string()), ("link_text", pa.string()), ("source", pa.int64())]
)
PAGE_SCHEMA = pa.schema(
    [("title", pa.string()), ("page_id", pa.int64()), ("redirect", pa.string())]
)


def keep_target(target: str) -> bool:
    """False for the targets the paper drops: containing '#', ':' or '('."""
    return bool(target) and not any(c in target for c in FILTERED_TARGET_CHARACTERS)


def page_links(page) -> list[tuple[str, str]]:
    """The distinct (article, link_text) pairs a page contributes, in order of appearance.

    Redirect pages contribute none (their only link is the redirect itself); targets with
    '#', ':' or '(' are dropped; the pairs are deduplicated case-sensitively.
    """
    if page.redirect is not None:
        return []
    return list(dict.fromkeys(link for link in extract_links(page.text) if keep_target(link[0])))


@dataclass
class Mined:
    """What a dump (or part of one) gives: its page table and its link triples."""

    pages: pa.Table
    links: pa.Table
    problems: dict[tuple[str, str], int] = field(default_factory=dict)
    examples: dict[tuple[str, str], list] = field(default_factory=dict)
    #: ranges a resumed build read back from its work folder instead of mining them
    reused_ranges: int = 0

    @property
    def redirect_pages(self) -> int:
        return self.pages.num_rows - self.pages["redirect"].null_count


def mine_pages(pages: Iterable) -> Mined:
    """Page table and link triples of some pages (objects like `namesake.wikipedia.dump.Page`).

    Pages of another namespace than 0 are skipped, whatever the reader let through.
    """
    titles, ids, redirects = [], [], []
    articles, texts, sources = [], [], []
    for page in pages:
        if page.namespace != 0:
            continue
        titles.append(page.title)
        ids.append(page.page_id)
        redirect = None if page.redirect is None else normalize_title(page.redirect)
        redirects.append(redirect)
        for article, text in page_links(page):
            articles.append(article)
            texts.append(text)
            sources.append(page.page_id)
    return Mined(
        pages=pa.Table.from_arrays(
            [
                pa.array(titles, pa.string()),
                pa.array(ids, pa.int64()),
                pa.array(redirects, pa.string()),
            ],
            schema=PAGE_SCHEMA,
        ),
        links=pa.Table.from_arrays(
            [
                pa.array(articles, pa.string()),
                pa.array(texts, pa.string()),
                pa.array(sources, pa.int64()),
            ],
            schema=LINK_SCHEMA,
        ),
    )


def combine(parts: Sequence[Mined]) -> Mined:
    """One Mined from several (tables concatenated without copying, problems summed)."""
    problems: dict[tuple[str, str], int] = {}
    examples: dict[tuple[str, str], list] = {}
    for part in parts:
        for key, count in part.problems.items():
            problems[key] = problems.get(key, 0) + count
            examples.setdefault(key, []).extend(part.examples.get(key, []))
    return Mined(
        pages=pa.concat_tables([p.pages for p in parts]) if parts else PAGE_SCHEMA.empty_table(),
        links=pa.concat_tables([p.links for p in parts]) if parts else LINK_SCHEMA.empty_table(),
        problems=problems,
        examples=examples,
    )


def expand_dumps(patterns: str | os.PathLike | Sequence[str | os.PathLike]) -> list[Path]:
    """Dump files from paths or glob patterns (`enwiki-*-pages-articles*.xml.bz2`), sorted
    within each pattern; a pattern that matches nothing is an error naming it."""
    if isinstance(patterns, (str, os.PathLike)):
        patterns = [patterns]
    paths: list[Path] = []
    for pattern in patterns:
        pattern = str(pattern)
        if glob.has_magic(pattern):
            matches = sorted(glob.glob(pattern))
            if not matches:
                raise BadInputError(pattern, None, "no file matches this pattern")
            paths.extend(Path(m) for m in matches)
        else:
            if not Path(pattern).is_file():
                raise BadInputError(pattern, None, "no such file")
            paths.append(Path(pattern))
    return list(dict.fromkeys(paths))


def plan_tasks(
    paths: Sequence[Path],
    workers: int,
    streams_per_task: int = STREAMS_PER_TASK,
    split: bool = False,
) -> list[tuple[str, int | None, int | None]]:
    """(path, start, end) byte ranges of whole bz2 streams, one per worker task; (path,
    None, None) reads a whole file. Only multistream bz2 files are split, and only with
    more than one worker or when `split` (a resumable build: a range is what a rerun
    redoes at most)."""
    from namesake.wikipedia.dump import stream_offsets

    tasks: list[tuple[str, int | None, int | None]] = []
    for path in paths:
        offsets = stream_offsets(path) if workers > 1 or split else [0]
        if len(offsets) <= 1:
            tasks.append((str(path), None, None))
            continue
        bounds = [*offsets, os.path.getsize(path)]
        for i in range(0, len(offsets), streams_per_task):
            end = bounds[min(i + streams_per_task, len(offsets))]
            tasks.append((str(path), bounds[i], end))
    return tasks


_strict = False
_threads = 1


def _init_worker(strict: bool, threads: int = 1) -> None:
    global _strict, _threads
    _strict, _threads = strict, threads


def _mine_task(task: tuple[str, int | None, int | None]) -> Mined:
    from namesake.wikipedia.dump import iter_pages, iter_pages_between

    path, start, end = task
    problems = InputProblems(_strict)
    if start is None:
        pages: Iterator = iter_pages(path, problems=problems, threads=_threads)
    else:
        pages = iter_pages_between(path, start, end, problems=problems)
    mined = mine_pages(pages)
    mined.problems = dict(problems.counts)
    mined.examples = {key: list(lines) for key, lines in problems.examples.items()}
    return mined


def mine_dumps(
    paths: Sequence[str | os.PathLike],
    workers: int = 1,
    problems: InputProblems | None = None,
    streams_per_task: int | None = None,
    work_dir: str | os.PathLike | None = None,
) -> Mined:
    """Mines every page of the dump files, over `workers` processes where a file is a
    multistream dump. Bad input is tallied in `problems` (raised at once when strict).

    With `work_dir`, each mined range is kept there (`MinedRanges`) and a rerun mines only
    the ranges it lacks; `Mined.reused_ranges` says how many it found."""
    problems = problems or InputProblems()
    paths = [Path(p) for p in paths]
    streams_per_task = streams_per_task or STREAMS_PER_TASK
    tasks = plan_tasks(paths, workers, streams_per_task, split=work_dir is not None)
    store = None
    if work_dir is not None:
        store = MinedRanges(work_dir, paths, tasks, streams_per_task, problems.strict)
    parts: list[Mined | None] = [store.load(i) if store else None for i in range(len(tasks))]
    todo = [i for i, part in enumerate(parts) if part is None]
    progress = tqdm(
        total=len(tasks),
        initial=len(tasks) - len(todo),
        desc="Mining links",
        unit="range",
        disable=len(tasks) < 2,
    )

    def done(index: int, part: Mined) -> None:
        if store:
            store.save(index, part)
        parts[index] = part
        progress.update()

    with progress:
        if workers <= 1 or len(todo) <= 1:
            _init_worker(problems.strict, max(1, workers))  # one file: parallel bz2
            for index in todo:
                done(index, _mine_task(tasks[index]))
        else:
            context = get_context("fork")
            with context.Pool(min(workers, len(todo)), _init_worker, (problems.strict,)) as pool:
                ranges = pool.imap(_mine_task, [tasks[i] for i in todo])
                for index, part in zip(todo, ranges, strict=True):
                    done(index, part)
    mined = combine(parts)
    mined.reused_ranges = len(tasks) - len(todo)
    for (path, kind), count in mined.problems.items():
        problems.counts[(path, kind)] += count
        examples = problems.examples.setdefault((path, kind), [])
        room = InputProblems.MAX_EXAMPLES - len(examples)
        examples.extend(mined.examples.get((path, kind), [])[: max(room, 0)])
    return mined


#: what a mined range's files hold; a change here makes old work folders be refused
MINED_RANGE_FORMAT = 1
WORK_MANIFEST = "mining.json"
_WORK_KEYS = ("format_version", "inputs", "streams_per_task", "ranges", "strict")


class MinedRanges:
    """A resumable build's mined ranges in its work folder, one folder per range
    (``range-000042/``: pages.arrow, links.arrow, problems.json), each written atomically.
    The folder's manifest names the dumps and the range plan; another dump or plan is
    refused by name (`namesake.work_folder`)."""

    def __init__(self, folder, paths, tasks, streams_per_task: int, strict: bool):
        self.folder = Path(folder)
        record = {
            "format_version": MINED_RANGE_FORMAT,
            "inputs": [input_identity(path) for path in paths],
            "streams_per_task": streams_per_task,
            "ranges": [[Path(path).name, start, end] for path, start, end in tasks],
            "strict": strict,
        }
        prepare_work_folder(
            self.folder, WORK_MANIFEST, record, _WORK_KEYS, "mined links", "--work-dir"
        )

    def _path(self, index: int) -> Path:
        return self.folder / f"range-{index:06d}"

    def load(self, index: int) -> Mined | None:
        path = self._path(index)
        if not path.is_dir():
            return None
        record = read_json(path / "problems.json")
        return Mined(
            pages=feather.read_table(str(path / "pages.arrow")),
            links=feather.read_table(str(path / "links.arrow")),
            problems={tuple(key): count for key, count in record["problems"]},
            examples={tuple(key): lines for key, lines in record["examples"]},
        )

    def save(self, index: int, part: Mined) -> None:
        with atomic_directory(self._path(index), writer="wes build") as staging:
            feather.write_feather(part.pages, str(staging / "pages.arrow"))
            feather.write_feather(part.links, str(staging / "links.arrow"))
            record = {
                "problems": [[list(key), count] for key, count in part.problems.items()],
                "examples": [[list(key), lines] for key, lines in part.examples.items()],
            }
            (staging / "problems.json").write_text(json.dumps(record), encoding="utf-8")
