"""The AmbER paper's end-to-end half (Table 7): readers answer each query from documents.

Three readers, one per task, each a Hugging Face checkpoint with the head its task needs:

- **fc** (fact checking): a sequence classifier trained on FEVER, whose labels map to
  SUPPORTS / REFUTES (and optionally NOT ENOUGH INFO); scored by accuracy against the
  query's SUPPORTS/REFUTES answer, so NOT ENOUGH INFO is always wrong.
- **sf** (slot filling): a seq2seq model (BART trained on T-REx) that generates the value;
  scored by token F1, the best over the query's accepted answers.
- **qa** (question answering): an extractive reader with a no-answer head (SQuAD 2.0
  style); scored by token F1 like slot filling (no answer scores 0).

Every reader reads (query, document) pairs: the query first, then the document's title and
text. A document longer than ``max_length`` tokens is cut into overlapping windows
(``stride`` tokens shared by consecutive windows) by one function for all tasks,
:func:`window_batches`, so every token of every document is read. How the answer is chosen
across the windows of all documents read for a query:

- **fc**: each window votes its most probable label. The answer is the SUPPORTS/REFUTES
  vote of highest probability (the most confident piece of evidence); when no window votes
  SUPPORTS or REFUTES the answer is NOT ENOUGH INFO.
- **sf**: each window generates a value (greedy decoding); its score is the mean
  log-probability of its tokens (end-of-sequence included). The best-scoring value wins; a
  tie goes to the earlier document (retrieval rank), then the earlier window.
- **qa**: each window proposes its best span (start logit + end logit, the span inside the
  document, at most ``MAX_ANSWER_TOKENS`` tokens) and a no-answer score (the logits at the
  first, [CLS]-like, token). The best span over all windows is the answer unless the
  smallest no-answer score over all windows beats it (SQuAD 2.0 post-processing, extended
  from one document's windows to all documents read); then the answer is "".

Each query's output line keeps the choice's ``reader_score``: fc the winning vote's
probability, sf the winning value's mean log-probability, qa the best span's score minus the
smallest no-answer score (negative: no answer); null when no window was read or voted.

Settings: **oracle** reads the query's gold pages; **retrieved** reads the top ``k`` pages of
a retrieval run (the predictions format `namesake retrieve` writes). Head/tail comes from the
dataset rows as the retrieval evaluation defines it
(`namesake.amber.evaluation.queries.AmberQueries.is_head`).
"""

from __future__ import annotations

import inspect
import json
import math
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from namesake.amber.build.reference import COLLECTION_NAMES
from namesake.amber.evaluation.paper import TASK_NAMES
from namesake.errors import NamesakeError
from namesake.markdown import markdown_table
from namesake.outputs import atomic_file
from namesake.papers import NOT_IN_PAPER, paper
from namesake.retrieval.corpus import chunks
from namesake.text import token_f1

if TYPE_CHECKING:
    from namesake.amber.evaluation.queries import AmberQueries

SETTINGS = ("oracle", "retrieved")
READER_TASKS = ("fc", "sf", "qa")
SUPPORTS, REFUTES, NOT_ENOUGH_INFO = "SUPPORTS", "REFUTES", "NOT ENOUGH INFO"
MAX_ANSWER_TOKENS = 30  # longest span (qa) and generation (sf), in tokens
METRIC_NAMES = {"fc": "accuracy", "sf": "token_f1", "qa": "token_f1"}

# FEVER labels under the names checkpoints give them: FEVER's own, and NLI's, since several
# public FEVER classifiers are NLI models (entailment = supports, contradiction = refutes).
_LABEL_SYNONYMS = {
    "SUPPORTS": SUPPORTS,
    "SUPPORT": SUPPORTS,
    "SUPPORTED": SUPPORTS,
    "ENTAILMENT": SUPPORTS,
    "REFUTES": REFUTES,
    "REFUTE": REFUTES,
    "REFUTED": REFUTES,
    "CONTRADICTION": REFUTES,
    "NOT ENOUGH INFO": NOT_ENOUGH_INFO,
    "NOT ENOUGH INFORMATION": NOT_ENOUGH_INFO,
    "NEI": NOT_ENOUGH_INFO,
    "NEUTRAL": NOT_ENOUGH_INFO,
}
# The head each task needs: the architecture name's ending and what to call it in errors.
_HEADS = {
    "fc": ("ForSequenceClassification", "a sequence classifier trained on FEVER"),
    "sf": ("ForConditionalGeneration", "a seq2seq (encoder-decoder) generator such as BART"),
    "qa": ("ForQuestionAnswering", "an extractive question-answering model"),
}


# --- loading and checking a reader ----------------------------------------------------------


@dataclass
class Reader:
    """A loaded reader: its tokenizer, model, and the model's inputs and window limit."""

    name: str
    task: str
    tokenizer: object
    model: object
    input_names: tuple[str, ...]
    max_length: int
    labels: dict[int, str] | None = None  # fc: class index -> SUPPORTS/REFUTES/NEI


def fever_labels(reader: str, id2label: dict) -> dict[int, str]:
    """Class index -> FEVER label; refuses a classifier without both SUPPORTS and REFUTES."""
    mapped = {
        int(index): _LABEL_SYNONYMS.get(" ".join(str(label).upper().replace("_", " ").split()))
        for index, label in id2label.items()
    }
    unknown = [str(id2label[i]) for i, label in mapped.items() if label is None]
    found = set(mapped.values())
    if unknown or SUPPORTS not in found or REFUTES not in found:
        raise NamesakeError(
            f"--reader {reader}: its labels {sorted(map(str, id2label.values()))} do not map to "
            f"FEVER's {SUPPORTS}/{REFUTES}(/{NOT_ENOUGH_INFO}), so it cannot read for --task fc"
        )
    return mapped


def check_reader_config(
    reader: str, task: str, config, labels: list[str] | None = None
) -> dict[int, str] | None:
    """Refuses a checkpoint whose head does not fit ``task``; returns fc's label map, from
    ``labels`` (the class names in index order) when given, else from the config."""
    ending, wanted = _HEADS[task]
    architectures = list(getattr(config, "architectures", None) or [])
    fits = any(name.endswith(ending) for name in architectures)
    if task == "sf":
        fits = fits and bool(getattr(config, "is_encoder_decoder", False))
    if not fits:
        found = ", ".join(architectures) or "no architecture in its config"
        raise NamesakeError(
            f"--reader {reader} ({found}) cannot read for --task {task}: it needs {wanted}"
        )
    if task != "fc":
        return None
    if labels is not None and len(labels) != config.num_labels:
        raise NamesakeError(
            f"--labels names {len(labels)} classes; --reader {reader} has {config.num_labels}"
        )
    return fever_labels(reader, dict(enumerate(labels)) if labels else config.id2label)


def load_reader(
    reader: str,
    task: str,
    max_length: int,
    labels: list[str] | None = None,
    device: str | None = None,
) -> Reader:
    """Loads and checks ``reader`` for ``task``; ``max_length`` must fit its positions.
    ``labels``: fc's class names in index order, for a config that names them LABEL_0..."""
    import torch
    from transformers import (
        AutoConfig,
        AutoModelForQuestionAnswering,
        AutoModelForSeq2SeqLM,
        AutoModelForSequenceClassification,
        AutoTokenizer,
    )

    config = AutoConfig.from_pretrained(reader)
    fc_labels = check_reader_config(reader, task, config, labels)
    tokenizer = AutoTokenizer.from_pretrained(reader)
    if not tokenizer.is_fast:
        raise NamesakeError(f"--reader {reader}: windows need a fast tokenizer (offsets)")
    limit = min(
        tokenizer.model_max_length,
        getattr(config, "max_position_embeddings", None) or tokenizer.model_max_length,
    )
    if max_length > limit:
        raise NamesakeError(f"--max-length {max_length}: --reader {reader} reads {limit} at most")
    auto = {
        "fc": AutoModelForSequenceClassification,
        "sf": AutoModelForSeq2SeqLM,
        "qa": AutoModelForQuestionAnswering,
    }[task]
    model = auto.from_pretrained(reader)
    model.to(device or ("cuda" if torch.cuda.is_available() else "cpu")).eval()
    accepted = inspect.signature(model.forward).parameters
    input_names = tuple(name for name in tokenizer.model_input_names if name in accepted)
    return Reader(reader, task, tokenizer, model, input_names, max_length, fc_labels)


# --- windows: the one windowing and batching function of all tasks --------------------------


@dataclass
class Window:
    """One window of one (query, document) pair: the model inputs and, for the document's
    tokens, their character spans in the document text (None for query/special tokens)."""

    pair: int
    features: dict[str, list[int]]
    offsets: list[tuple[int, int] | None]


def window_batches(
    tokenizer,
    pairs: Iterable[tuple[str, str]],
    max_length: int,
    stride: int,
    batch_size: int,
) -> Iterator[tuple[list[Window], dict]]:
    """(windows, padded PyTorch inputs) batches over the windows of every (query, document).

    The query is cut to half of ``max_length`` tokens; the document fills the rest of each
    window, consecutive windows sharing ``stride`` tokens, so every document token is in a
    window. Pairs are tokenized ``batch_size`` at a time, so any number of pairs streams.
    """
    specials = tokenizer.num_special_tokens_to_add(pair=True)
    query_room = max_length // 2
    document_room = max_length - query_room - specials
    if document_room <= stride or stride < 0:
        raise NamesakeError(
            f"--stride {stride} must be at least 0 and below the {document_room} document "
            f"tokens a window of --max-length {max_length} holds beside a query"
        )
    pending: list[Window] = []
    for chunk in chunks(enumerate(pairs), batch_size):
        queries = [_cut(tokenizer, query, query_room) for _, (query, _) in chunk]
        encoded = tokenizer(
            queries,
            [document for _, (_, document) in chunk],
            truncation="only_second",
            max_length=max_length,
            stride=stride,
            return_overflowing_tokens=True,
            return_offsets_mapping=True,
        )
        names = [n for n in encoded if n not in ("offset_mapping", "overflow_to_sample_mapping")]
        for row, sample in enumerate(encoded["overflow_to_sample_mapping"]):
            offsets = [
                tuple(span) if sequence == 1 else None
                for span, sequence in zip(
                    encoded["offset_mapping"][row], encoded.sequence_ids(row), strict=True
                )
            ]
            features = {name: encoded[name][row] for name in names}
            pending.append(Window(chunk[sample][0], features, offsets))
        while len(pending) >= batch_size:
            batch, pending = pending[:batch_size], pending[batch_size:]
            yield batch, _pad(tokenizer, batch)
    if pending:
        yield pending, _pad(tokenizer, pending)


def _cut(tokenizer, text: str, tokens: int) -> str:
    """``text`` cut after its first ``tokens`` tokens (at a character boundary)."""
    encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    offsets = encoded["offset_mapping"]
    return text[: offsets[tokens - 1][1]] if len(offsets) > tokens else text


def _pad(tokenizer, windows: list[Window]) -> dict:
    """Pads on the right whatever the tokenizer's habit: a window's token i stays at i, so
    its offsets line up with the model's outputs, and qa's no-answer token stays first."""
    features = [w.features for w in windows]
    return tokenizer.pad(features, padding=True, padding_side="right", return_tensors="pt")


# --- per-window results and the choice across windows ---------------------------------------


@dataclass
class WindowResult:
    """What one window says: fc a label and its probability, sf a value and its mean
    log-probability, qa the best span and its score plus the no-answer score."""

    text: str
    score: float
    null_score: float = math.nan
    span: tuple[int, int] | None = None  # qa: the answer's characters in the document


def _fc_results(reader: Reader, windows: list[Window], inputs: dict) -> list[WindowResult]:
    probabilities = reader.model(**inputs).logits.float().softmax(-1).cpu()
    best = probabilities.max(-1)
    return [
        WindowResult(reader.labels[int(index)], float(value))
        for value, index in zip(best.values, best.indices, strict=True)
    ]


def _sf_results(reader: Reader, windows: list[Window], inputs: dict) -> list[WindowResult]:
    import torch

    model, tokenizer = reader.model, reader.tokenizer
    generated = model.generate(
        **inputs,
        max_new_tokens=MAX_ANSWER_TOKENS,
        num_beams=1,
        do_sample=False,
        output_scores=True,
        return_dict_in_generate=True,
    )
    log_probs = model.compute_transition_scores(
        generated.sequences, generated.scores, normalize_logits=True
    ).float()
    tokens = generated.sequences[:, -log_probs.shape[1] :]
    eos = model.generation_config.eos_token_id
    eos = torch.tensor([eos] if isinstance(eos, int) else list(eos), device=tokens.device)
    ended = torch.isin(tokens, eos).int()
    # a token counts up to and including the first end-of-sequence; padding after it does not
    counted = (ended.cumsum(-1) - ended) == 0
    scores = (log_probs.masked_fill(~counted, 0).sum(-1) / counted.sum(-1).clamp(min=1)).cpu()
    texts = tokenizer.batch_decode(tokens, skip_special_tokens=True)
    return [WindowResult(" ".join(t.split()), float(s)) for t, s in zip(texts, scores, strict=True)]


def _qa_results(reader: Reader, windows: list[Window], inputs: dict) -> list[WindowResult]:
    import torch

    output = reader.model(**inputs)
    starts, ends = output.start_logits.float().cpu(), output.end_logits.float().cpu()
    length = starts.shape[1]
    band = torch.ones(length, length, dtype=torch.bool).triu()
    band &= ~torch.ones(length, length, dtype=torch.bool).triu(MAX_ANSWER_TOKENS)
    results = []
    for row, window in enumerate(windows):
        in_document = torch.zeros(length, dtype=torch.bool)
        in_document[: len(window.offsets)] = torch.tensor([s is not None for s in window.offsets])
        null_score = float(starts[row, 0] + ends[row, 0])
        scores = starts[row][:, None] + ends[row][None, :]
        scores = scores.masked_fill(
            ~(band & in_document[:, None] & in_document[None, :]), -math.inf
        )
        i, j = divmod(int(scores.argmax()), length)
        if not math.isfinite(float(scores[i, j])):
            results.append(WindowResult("", -math.inf, null_score))
            continue
        span = (window.offsets[i][0], window.offsets[j][1])
        results.append(WindowResult("", float(scores[i, j]), null_score, span))
    return results


_WINDOW_RESULTS: dict[str, Callable] = {"fc": _fc_results, "sf": _sf_results, "qa": _qa_results}


@dataclass
class Choice:
    """The answer to one query and where it came from (None when no window gave it)."""

    prediction: str
    reader_score: float
    evidence: str | None


def choose_answer(task: str, results: list[tuple[str, WindowResult]]) -> Choice:
    """The answer over all (document id, window result) of one query, in reading order; see
    the module docstring for each task's rule."""
    if task == "fc":
        votes = [(doc, r) for doc, r in results if r.text in (SUPPORTS, REFUTES)]
        if not votes:
            return Choice(NOT_ENOUGH_INFO, math.nan, None)
        best = max(range(len(votes)), key=lambda i: (votes[i][1].score, -i))
        doc, vote = votes[best]
        return Choice(vote.text, vote.score, doc)
    if not results:
        return Choice("", math.nan, None)
    best = max(range(len(results)), key=lambda i: (results[i][1].score, -i))
    doc, result = results[best]
    if task == "qa":
        margin = result.score - min(r.null_score for _, r in results)
        return Choice(result.text, margin, doc) if margin >= 0 else Choice("", margin, None)
    return Choice(result.text, result.score, doc)


# --- scoring --------------------------------------------------------------------------------


def score_query(task: str, prediction: str, answers: list[str]) -> float:
    """fc: 1.0 for the gold label, else 0.0; sf/qa: the best token F1 over the answers."""
    if task == "fc":
        return float(prediction in answers)
    return max((token_f1(prediction, answer) for answer in answers), default=0.0)


def summarize(records: list[dict]) -> dict:
    """All/head/tail means (in %) of the per-query ``score``, and the query counts; a part
    without queries is None."""

    def mean(part: list[float]) -> float | None:
        return 100 * sum(part) / len(part) if part else None

    head = [r["score"] for r in records if r["is_head"]]
    tail = [r["score"] for r in records if not r["is_head"]]
    return {
        "all": mean(head + tail),
        "head": mean(head),
        "tail": mean(tail),
        "queries": {"all": len(records), "head": len(head), "tail": len(tail)},
    }


# --- a reading run --------------------------------------------------------------------------


def documents_to_read(
    queries: AmberQueries, setting: str, predictions: str | os.PathLike | None, k: int
) -> list[list[str]]:
    """Per query, in dataset order, the wikipedia ids it reads: its gold pages, or the top
    ``k`` of the run ``predictions``, which must answer every query of the config."""
    if setting == "oracle":
        return [list(ids) for ids in queries.gold_pages]
    from namesake.amber.evaluation.scoring import check_coverage, run_coverage
    from namesake.runs import Run

    run = Run.read(predictions)
    check_coverage(run_coverage(queries, run), queries.config, source=predictions)
    return [ranking[:k] for ranking in run.select(queries.ids).top(k).ranked_ids()]


def document_texts(corpus: str | os.PathLike, wanted: set[str]) -> dict[str, str]:
    """wikipedia id -> "title. text" of every wanted page; a missing page is an error."""
    from namesake.retrieval.corpus import read_kilt_documents

    texts = {
        doc.wikipedia_id: f"{doc.title}. {doc.text}"
        for doc in read_kilt_documents(corpus)
        if doc.wikipedia_id in wanted
    }
    missing = sorted(wanted - texts.keys())
    if missing:
        raise NamesakeError(
            f"{corpus}: {len(missing)} page(s) to read are not in the corpus "
            f"(e.g. wikipedia_id {', '.join(missing[:3])})"
        )
    return texts


def read_queries(
    reader: Reader,
    inputs: list[str],
    documents: list[list[str]],
    texts: dict[str, str],
    stride: int,
    batch_size: int,
) -> list[tuple[Choice, int]]:
    """Per query, the chosen answer and the number of windows read."""
    import torch
    from tqdm.auto import tqdm

    pairs = [(q, doc) for q, docs in enumerate(documents) for doc in docs]
    results: list[list[tuple[str, WindowResult]]] = [[] for _ in inputs]
    window_results = _WINDOW_RESULTS[reader.task]
    progress = tqdm(pairs, desc=f"reading ({reader.task})", unit="document")
    texts_of_pairs = ((inputs[q], texts[doc]) for q, doc in progress)
    device = reader.model.device
    with torch.inference_mode():
        for windows, padded in window_batches(
            reader.tokenizer, texts_of_pairs, reader.max_length, stride, batch_size
        ):
            model_inputs = {name: padded[name].to(device) for name in reader.input_names}
            for window, result in zip(
                windows, window_results(reader, windows, model_inputs), strict=True
            ):
                query, doc = pairs[window.pair]
                if result.span is not None:
                    result.text = texts[doc][slice(*result.span)]
                results[query].append((doc, result))
    progress.close()
    return [(choose_answer(reader.task, found), len(found)) for found in results]


def read_amber(
    reader_name: str,
    task: str,
    dataset: str,
    collection: str,
    corpus: str | os.PathLike,
    setting: str,
    out: str | os.PathLike,
    predictions: str | os.PathLike | None = None,
    k: int = 20,
    batch_size: int = 16,
    max_length: int = 384,
    stride: int = 128,
    labels: list[str] | None = None,
) -> tuple[dict, Path]:
    """Reads every query of ``<collection>_<task>``; writes the per-query JSON lines, merges
    this run into ``out/metrics.json`` and ``out/readers.md``; returns (run, per-query file)."""
    from namesake.amber.evaluation.queries import AmberQueries

    if setting == "oracle" and predictions is not None:
        raise NamesakeError("--predictions is read only with --setting retrieved")
    if setting == "retrieved" and predictions is None:
        raise NamesakeError("--setting retrieved needs --predictions (from `namesake retrieve`)")
    if labels is not None and task != "fc":
        raise NamesakeError("--labels names fact-checking classes: only with --task fc")
    reader = load_reader(reader_name, task, max_length, labels)
    config = f"{collection}_{task}"
    queries = AmberQueries.load(dataset, config)
    documents = documents_to_read(queries, setting, predictions, k)
    texts = document_texts(corpus, {doc for docs in documents for doc in docs})
    chosen = read_queries(reader, queries.inputs, documents, texts, stride, batch_size)
    records = [
        {
            "id": query_id,
            "input": text,
            "is_head": head,
            "answers": list(answers),
            "prediction": choice.prediction,
            "score": score_query(task, choice.prediction, list(answers)),
            "reader_score": None if math.isnan(choice.reader_score) else choice.reader_score,
            "evidence": choice.evidence,
            "documents": docs,
            "windows": windows,
        }
        for query_id, text, head, answers, docs, (choice, windows) in zip(
            queries.ids,
            queries.inputs,
            queries.is_head.tolist(),
            queries.rows["answer"].to_pylist(),
            documents,
            chosen,
            strict=True,
        )
    ]
    out = Path(out)
    per_query = out / f"{config}-{setting}.jsonl"
    with atomic_file(per_query) as f:
        for record in records:
            f.write(json.dumps(record, ensure_ascii=False).encode("utf-8") + b"\n")
    run = {
        "collection": collection,
        "task": task,
        "setting": setting,
        "reader": reader_name,
        "metric": METRIC_NAMES[task],
        **({"predictions": str(predictions), "top_k": k} if setting == "retrieved" else {}),
        **({"labels": labels} if labels else {}),
        "max_length": max_length,
        "stride": stride,
        **summarize(records),
    }
    record_run(out, run)
    return run, per_query


def record_run(out: Path, run: dict) -> list[dict]:
    """Merges ``run`` into ``out/metrics.json`` (replacing an earlier run of the same
    collection, task and setting) and rewrites ``out/readers.md``; returns every run."""
    path = out / "metrics.json"
    runs = json.loads(path.read_text(encoding="utf-8"))["runs"] if path.exists() else []
    key = (run["collection"], run["task"], run["setting"])
    runs = [r for r in runs if (r["collection"], r["task"], r["setting"]) != key] + [run]
    runs.sort(
        key=lambda r: (
            list(COLLECTION_NAMES).index(r["collection"]),
            READER_TASKS.index(r["task"]),
            SETTINGS.index(r["setting"]),
        )
    )
    with atomic_file(path, "w") as f:
        f.write(json.dumps({"runs": runs}, indent=2) + "\n")
    with atomic_file(out / "readers.md", "w") as f:
        f.write(readers_table(runs) + "\n")
    return runs


def paper_reader_row(collection: str, task: str, setting: str) -> tuple[str, ...] | None:
    """The row of the paper's Table 7 for the same collection, task and setting: its oracle
    reader, or its reader on 20 documents of its retriever (BLINK on AmbER-H, DPR on
    AmbER-N), whatever retrieval run ours read."""
    table7 = paper("amber").table(7)
    wanted = (COLLECTION_NAMES[collection], TASK_NAMES[task], setting == "oracle")
    for row in table7.rows:
        if (*row[:2], row[2].endswith("(Oracle)")) == wanted:
            return row
    return None


def readers_table(runs: list[dict]) -> str:
    """The paper's Table 7 layout: one row per collection, task and setting; All/Head/Tail,
    each beside the paper's figure for the same collection, task and setting."""
    table7 = paper("amber").table(7)

    def cell(value: float | None) -> str:
        return "–" if value is None else f"{value:.1f}"

    header = [
        "Collection",
        "Task",
        "Setting",
        "Metric",
        "All",
        "paper",
        "Head",
        "paper",
        "Tail",
        "paper",
        "Queries",
        "paper system",
    ]
    lines = []  # one list of cells per run
    for r in runs:
        row = paper_reader_row(r["collection"], r["task"], r["setting"])
        fields = dict(zip(table7.row_fields, row, strict=True)) if row else None
        theirs = {
            part: table7.printed(**fields, measure=part) if fields else NOT_IN_PAPER
            for part in ("all", "head", "tail")
        }
        lines.append(
            [
                COLLECTION_NAMES[r["collection"]],
                TASK_NAMES[r["task"]],
                r["setting"],
                r["metric"],
                cell(r["all"]),
                theirs["all"],
                cell(r["head"]),
                theirs["head"],
                cell(r["tail"]),
                theirs["tail"],
                str(r["queries"]["all"]),
                f"{row[2]} (paper, Table 7 p. {table7.page})" if row else NOT_IN_PAPER,
            ]
        )
    return markdown_table(header, lines, "llll" + "r" * 7 + "l")
