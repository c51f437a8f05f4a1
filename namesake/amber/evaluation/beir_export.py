"""An AmbER config as a BEIR folder: ``corpus.jsonl``, ``queries.jsonl`` and
``qrels/test.tsv``, which `beir`'s ``GenericDataLoader`` and the MTEB task of
`namesake.mteb` read.

The corpus is the whole KILT knowledge source (``pages="all"``), streamed page by page, or
(``pages="set"``) the pages of the AmbER sets that the config's queries ask about (gold pages
and their namesakes' pages, `AmberQueries.set_pages`) plus ``distractors`` other KILT pages drawn
uniformly by seeded reservoir sampling in the same single pass: a small corpus that runs on
a CPU, like MTEB's "Nano" tasks. Document ids are KILT Wikipedia ids and query ids the
dataset's ``id`` column, so a run on the folder is a run on AmbER. The qrels are
`AmberQueries.qrels`, the judgments `amber qrels` writes and the IR measures score against.

A set page (or, with ``pages="all"``, a gold page) that the KILT file lacks is counted and
named in the summary (`BeirExport.lines`) and in ``export.json``, never dropped silently. An
id of the qrels that holds white space (a tab or a newline splits beir's rows) is refused as
`amber qrels` refuses it (`namesake.trec.check_token`), before the corpus is read.
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from namesake.amber.build.instances import TASKS
from namesake.amber.build.reference import COLLECTIONS
from namesake.errors import JSON_LINE_ERRORS, BadInputError, describe_json_error
from namesake.trec import check_token

if TYPE_CHECKING:
    from namesake.retrieval.corpus import Document

#: what a BEIR export's corpus holds: the whole KILT source, or the AmbER set pages
PAGES = ("all", "set")
#: the BEIR files of an export, and the record of how it was made
CORPUS, QUERIES, QRELS, RECORD = "corpus.jsonl", "queries.jsonl", "qrels/test.tsv", "export.json"
SPLIT = "test"
#: the query configs of an AmbER dataset (`namesake.amber.build.dataset.config_tables`): a
#: collection's queries of every task, and of each task
QUERY_CONFIGS = tuple(
    config
    for collection in COLLECTIONS
    for config in (collection, *(f"{collection}_{task}" for task in TASKS))
)


@dataclass
class BeirExport:
    """What an export wrote: counts, the pages it was asked for that KILT lacks, and the
    ids of the pages it skipped since an earlier page of the KILT file has their id."""

    dataset: str
    config: str
    pages: str
    queries: int
    judgments: int
    documents: int
    set_pages: int | None = None
    distractors: int | None = None
    distractors_asked: int | None = None
    seed: int | None = None
    missing: list[str] = field(default_factory=list)
    #: the ids of the KILT pages skipped for repeating an earlier page's id
    repeated: list[str] = field(default_factory=list)

    EXAMPLES = 5

    def record(self) -> dict:
        """For ``export.json``: every field, the missing pages all listed."""
        return asdict(self)

    def lines(self) -> list[str]:
        """What `amber export` prints."""
        corpus = f"{self.documents} documents"
        if self.pages == "set":
            corpus += f" ({self.set_pages - len(self.missing)} set pages + {self.distractors} "
            corpus += f"distractors, seed {self.seed})"
        lines = [
            f"{self.config}: {self.queries} queries, {self.judgments} relevance judgments, {corpus}"
        ]
        if self.pages == "set" and self.distractors < self.distractors_asked:
            lines.append(
                f"only {self.distractors} of the {self.distractors_asked} distractors asked for: "
                "the KILT source holds no more pages outside the AmbER sets"
            )
        if self.missing:
            what = "set pages" if self.pages == "set" else "gold pages"
            lines.append(
                f"{len(self.missing)} {what} are not in the KILT source, so not in the corpus "
                f"(e.g. wikipedia_id {', '.join(self.missing[: self.EXAMPLES])})"
            )
        if self.repeated:
            from namesake.retrieval.corpus import repeated_pages_line

            lines.append(f"the KILT source: {repeated_pages_line(self.repeated)}")
        return lines


_QUERY_COLUMNS = ("id", "input", "gold_wikipedia_ids")


def _load(dataset: str, config: str, pages: str):
    """The queries of ``config`` and the pages its corpus must hold (the gold pages, or
    with ``pages="set"`` the pages of the queries' AmbER sets), in dataset order."""
    from namesake.amber.evaluation.queries import AmberQueries

    queries = AmberQueries.load(dataset, config, members=pages == "set")
    missing = [column for column in _QUERY_COLUMNS if column not in queries.rows.column_names]
    if missing:
        raise BadInputError(
            dataset, None, f"config {config} has no column {', '.join(missing)}: not AmbER?"
        )
    pages_of = queries.set_pages() if pages == "set" else queries.gold_pages
    wanted = [page for query_pages in pages_of for page in query_pages]
    return queries, list(dict.fromkeys(map(str, wanted)))


def _line(document: Document) -> bytes:
    """A BEIR corpus line: the KILT id, the title, the text without its title paragraph."""
    record = {"_id": document.wikipedia_id, "title": document.title, "text": document.text}
    return msgspec.json.encode(record) + b"\n"


def export_beir(
    dataset: str,
    config: str,
    corpus: str | os.PathLike,
    out: str | os.PathLike,
    pages: str = "all",
    distractors: int = 0,
    seed: int = 0,
) -> BeirExport:
    """Writes the BEIR folder of ``config`` of ``dataset`` (a folder or Hub id) at ``out``,
    whole or not at all, its corpus read from the KILT knowledge source ``corpus``.

    ``pages``: "all" (every KILT page) or "set" (the queries' AmbER set pages plus
    ``distractors`` pages drawn from the rest with ``random.Random(seed)``; the same seed and
    KILT file give the same corpus). Returns what was written (`BeirExport`).
    """
    from tqdm.auto import tqdm

    from namesake.outputs import atomic_directory
    from namesake.retrieval.corpus import read_kilt_documents

    if pages not in PAGES:
        raise ValueError(f"pages must be one of {PAGES}, not {pages!r}")
    if distractors < 0:
        raise ValueError(f"distractors must be at least 0, not {distractors}")
    if distractors and pages != "set":
        raise ValueError("distractors are drawn only for pages='set'")
    queries, wanted = _load(dataset, config, pages)
    qrels = queries.qrels()
    found: set[str] = set()
    wanted_set = set(wanted)
    reservoir: list[tuple[int, Document]] = []  # (position among the other pages, page)
    rng = random.Random(seed)
    others = 0
    repeated: list[str] = []  # the KILT reader skips a page whose id it has read, keeps the first
    with atomic_directory(out, writer="amber export") as staging:
        with open(staging / QUERIES, "wb") as f:
            for query_id, text in zip(queries.ids, queries.inputs, strict=True):
                f.write(msgspec.json.encode({"_id": query_id, "text": text}) + b"\n")
        (staging / QRELS).parent.mkdir()
        with open(staging / QRELS, "w", encoding="utf-8") as f:
            f.write("query-id\tcorpus-id\tscore\n")
            named = Path(out) / QRELS  # in a refusal: the file as the user will look for it
            for query_id, judged in qrels.items():
                check_token(query_id, "query id", named)  # a tab or newline splits beir's rows
                for doc, score in judged.items():
                    f.write(f"{query_id}\t{check_token(doc, 'document id', named)}\t{score}\n")
        documents = 0
        with open(staging / CORPUS, "wb") as f:
            progress = tqdm(
                read_kilt_documents(corpus, repeated), desc="Exporting pages", unit="page"
            )
            for document in progress:
                if document.wikipedia_id in wanted_set:
                    found.add(document.wikipedia_id)
                elif pages == "set":  # Algorithm R: each page kept with chance k / (seen)
                    if others < distractors:
                        reservoir.append((others, document))
                    else:
                        slot = rng.randrange(others + 1)
                        if slot < distractors:
                            reservoir[slot] = (others, document)
                    others += 1
                    continue
                f.write(_line(document))
                documents += 1
            progress.close()
            for _, document in sorted(reservoir, key=lambda kept: kept[0]):  # in KILT order
                f.write(_line(document))
        summary = BeirExport(
            dataset=str(dataset),
            config=config,
            pages=pages,
            queries=len(queries),
            judgments=sum(map(len, qrels.values())),
            documents=documents + len(reservoir),
            missing=[page for page in wanted if page not in found],
            repeated=repeated,
        )
        if pages == "set":
            summary.set_pages = len(wanted)
            summary.distractors = len(reservoir)
            summary.distractors_asked = distractors
            summary.seed = seed
        (staging / RECORD).write_text(json.dumps(summary.record(), indent=2) + "\n")
    return summary


def not_a_query_config(config: str) -> str | None:
    """Why ``config`` is not one of `QUERY_CONFIGS`; None when it is one."""
    if config in QUERY_CONFIGS:
        return None
    return f"config {config!r} is not an AmbER query config (one of {', '.join(QUERY_CONFIGS)})"


def read_export(folder: str | os.PathLike) -> BeirExport:
    """The ``export.json`` record of a folder `export_beir` wrote, checked, since the MTEB
    task's name is made of it and mteb writes its results under that name
    (`namesake.mteb.task_name`): every field of the type `BeirExport` gives it, ``config``
    one of `QUERY_CONFIGS`, ``pages`` one of `PAGES`, and with "set" pages a count of
    distractors (at least 0) and a seed. A folder without one, or a field that fails, is a
    BadInputError naming the file and the field."""
    path = Path(folder) / RECORD
    try:
        record = msgspec.json.decode(path.read_bytes(), type=BeirExport)
    except FileNotFoundError:
        raise BadInputError(
            folder, None, f"no {RECORD}: not a BEIR folder written by `namesake amber export`"
        ) from None
    except (msgspec.DecodeError, *JSON_LINE_ERRORS) as exc:
        kind, detail = describe_json_error(exc)
        raise BadInputError(path, None, f"{kind}: {detail}" if detail else kind) from None
    problem = not_a_query_config(record.config)
    if problem:
        raise BadInputError(path, None, problem)
    if record.pages not in PAGES:
        raise BadInputError(path, None, f"pages {record.pages!r} is not one of {', '.join(PAGES)}")
    if record.pages == "set":
        if record.distractors is None or record.seed is None:
            raise BadInputError(path, None, "pages is 'set', but distractors or seed is missing")
        if record.distractors < 0:
            raise BadInputError(path, None, f"distractors is {record.distractors}, not at least 0")
    return record
