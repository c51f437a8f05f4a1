"""`namesake amber export --format beir` (issue 34, section 4): the folder that `beir` loads,
its corpus (all of KILT, or the AmbER set pages plus seeded distractors), a set page the KILT
file lacks reported, and a run scored by BEIR's `EvaluateRetrieval` with the same figures as
`namesake evaluate`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from beir.datasets.data_loader import GenericDataLoader
from conftest import SAMPLE_KILT
from folders import folder_files
from run_files import ranked_ids
from test_bad_inputs import NAMESAKE, cli, error_line

from namesake.amber.build.released import import_released
from namesake.amber.evaluation.beir_export import export_beir
from namesake.amber.evaluation.queries import AmberQueries
from namesake.cli import main
from namesake.retrieval.corpus import read_kilt_documents

CONFIG = "human_qa"


@pytest.fixture(scope="module")
def dataset(sample_build) -> str:
    return str(sample_build[0] / "dataset")


def export(dataset: str, out: Path, *options) -> Path:
    args = ["amber", "export", "--format", "beir", "--dataset", dataset, "--config", CONFIG]
    main([*args, "--corpus", str(SAMPLE_KILT), "--out", str(out), *map(str, options)])
    return out


def load(folder: Path):
    """(corpus, queries, qrels) as beir reads them."""
    return GenericDataLoader(str(folder)).load(split="test")


def expected_set_pages(dataset: str) -> set[str]:
    """Every page of every member of the AmbER sets that the config's queries ask about,
    from the ``human_entities`` config directly (not through `AmberQueries.confusers`)."""
    amber = AmberQueries.load(dataset, CONFIG)
    queries, entities = amber.rows.to_pydict(), amber.members.to_pydict()
    names = set(queries["name"])
    return {
        str(page)
        for name, pages in zip(entities["name"], entities["wikipedia_ids"], strict=True)
        if name in names
        for page in pages
    }


KILT_IDS = [document.wikipedia_id for document in read_kilt_documents(SAMPLE_KILT)]


def test_folder_loads_with_beir_and_matches_the_config(dataset, tmp_path, capsys):
    folder = export(dataset, tmp_path / "beir", "--pages", "set", "--distractors", 20)
    printed = capsys.readouterr().out
    corpus, queries, qrels = load(folder)

    amber_queries = AmberQueries.load(dataset, CONFIG).rows.to_pydict()
    assert queries == dict(zip(amber_queries["id"], amber_queries["input"], strict=True))
    assert qrels == {
        query_id: dict.fromkeys(map(str, gold), 1)
        for query_id, gold in zip(
            amber_queries["id"], amber_queries["gold_wikipedia_ids"], strict=True
        )
    }
    judged = sum(map(len, qrels.values()))
    assert judged == sum(map(len, amber_queries["gold_wikipedia_ids"]))

    set_pages = expected_set_pages(dataset)
    assert set_pages <= set(corpus), "every set page, gold and confuser, is in the corpus"
    assert len(corpus) == len(set_pages) + 20
    assert set(corpus) <= set(KILT_IDS)
    lincoln = corpus["307"]
    assert lincoln["title"] == "Abraham Lincoln"
    assert lincoln["text"].startswith("Abraham Lincoln (February 12, 1809")  # title line dropped
    assert (
        f"{len(amber_queries['id'])} queries, {judged} relevance judgments, {len(set_pages) + 20} "
        f"documents ({len(set_pages)} set pages + 20 distractors, seed 0)"
    ) in printed
    record = json.loads((folder / "export.json").read_text())
    assert record["missing"] == [] and record["distractors"] == 20


def test_distractors_are_reproducible_for_a_seed_and_differ_for_another(dataset, tmp_path):
    first = export(dataset, tmp_path / "a", "--pages", "set", "--distractors", 20, "--seed", 7)
    again = export(dataset, tmp_path / "b", "--pages", "set", "--distractors", 20, "--seed", 7)
    other = export(dataset, tmp_path / "c", "--pages", "set", "--distractors", 20, "--seed", 8)
    assert (first / "corpus.jsonl").read_bytes() == (again / "corpus.jsonl").read_bytes()
    set_pages = expected_set_pages(dataset)
    drawn = [set(load(folder)[0]) - set_pages for folder in (first, other)]
    assert len(drawn[0]) == len(drawn[1]) == 20
    assert drawn[0] != drawn[1]


def test_distractors_are_drawn_from_the_whole_file(dataset, tmp_path):
    """Reservoir sampling, not the first pages: over a few seeds every page outside the
    sets is drawn at least once (29 of them in the sample, 20 drawn each time)."""
    set_pages = expected_set_pages(dataset)
    others = set(KILT_IDS) - set_pages
    drawn = set()
    for seed in range(8):
        export_beir(dataset, CONFIG, SAMPLE_KILT, tmp_path / "x", "set", 20, seed)
        drawn |= set(load(tmp_path / "x")[0]) - set_pages
    assert drawn == others


def test_more_distractors_than_pages_takes_them_all_and_says_so(dataset, tmp_path, capsys):
    folder = export(dataset, tmp_path / "beir", "--pages", "set", "--distractors", 1000)
    assert sorted(load(folder)[0]) == sorted(KILT_IDS)
    others = len(set(KILT_IDS) - expected_set_pages(dataset))
    assert f"only {others} of the 1000 distractors asked for" in capsys.readouterr().out


def test_pages_all_is_every_kilt_page(dataset, tmp_path):
    folder = export(dataset, tmp_path / "beir")
    corpus, queries, qrels = load(folder)
    assert list(corpus) == KILT_IDS
    assert len(queries) == len(qrels) == len(AmberQueries.load(dataset, CONFIG))


def test_a_set_page_missing_from_kilt_is_reported(dataset, tmp_path, capsys):
    """A confuser page the KILT file lacks: counted and named, on stdout and in export.json;
    the qrels keep every gold page (a missing gold page would still count as a miss)."""
    dropped = "11840221"  # a set page of human_qa (checked below)
    assert dropped in expected_set_pages(dataset)
    kilt = tmp_path / "kilt.json"
    lines = SAMPLE_KILT.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [line for line in lines if json.loads(line)["wikipedia_id"] != dropped]
    assert len(kept) == len(lines) - 1
    kilt.write_text("".join(kept), encoding="utf-8")

    folder = tmp_path / "beir"
    args = ["amber", "export", "--dataset", dataset, "--config", CONFIG, "--corpus", kilt]
    main([str(arg) for arg in [*args, "--out", folder, "--pages", "set", "--distractors", 3]])
    printed = capsys.readouterr().out
    assert (
        f"1 set pages are not in the KILT source, so not in the corpus (e.g. wikipedia_id "
        f"{dropped})"
    ) in printed
    assert json.loads((folder / "export.json").read_text())["missing"] == [dropped]
    corpus = load(folder)[0]
    assert dropped not in corpus
    assert len(corpus) == len(expected_set_pages(dataset)) - 1 + 3


IMPOSTOR = "Quokkas Zanzibar wombats"  # words no page of the sample has


def kilt_with_repeated_ids(folder: Path) -> Path:
    """The sample KILT file with two pages appended that repeat an earlier page's id: the
    gold page of Abraham Lincoln (307) with another text, and a page outside the sets."""
    kilt = folder / "kilt-repeated.json"
    lines = SAMPLE_KILT.read_text(encoding="utf-8").splitlines(keepends=True)
    impostor = {"wikipedia_id": "307", "wikipedia_title": "Abraham Lincoln", "text": [IMPOSTOR]}
    paris = {**json.loads(lines[0]), "wikipedia_id": "22989", "text": ["Paris, again."]}
    kilt.write_text("".join(lines) + json.dumps(impostor) + "\n" + json.dumps(paris) + "\n")
    return kilt


REPEATED_LINE = (
    "2 page(s) repeat the wikipedia_id of an earlier page: the first page of each id is "
    "kept, the others skipped (e.g. wikipedia_id 307, 22989)"
)


@pytest.mark.parametrize("pages", ["set", "all"])
def test_a_page_id_repeated_in_kilt_is_exported_once_the_first_copy_kept(dataset, tmp_path, pages):
    """beir's loader keeps the last line of an id: a second page 307 would replace the
    gold page's text. The export keeps the first, as every index does (the one KILT reader
    decides it), and says so in one line naming the ids, and in export.json."""
    kilt = kilt_with_repeated_ids(tmp_path)
    kilt_before = kilt.read_bytes()
    folder = tmp_path / "beir"
    args = ["amber", "export", "--dataset", dataset, "--config", CONFIG, "--corpus", kilt]
    done = subprocess.run(
        [str(NAMESAKE), *map(str, [*args, "--out", folder, "--pages", pages])],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"the KILT source: {REPEATED_LINE}" in done.stdout.splitlines()
    assert "Traceback" not in done.stderr
    assert json.loads((folder / "export.json").read_text())["repeated"] == ["307", "22989"]
    ids = [json.loads(line)["_id"] for line in (folder / "corpus.jsonl").open()]
    assert len(ids) == len(set(ids)), "each page once"
    corpus = load(folder)[0]
    assert corpus["307"]["text"].startswith("Abraham Lincoln (February 12, 1809")
    assert IMPOSTOR not in (folder / "corpus.jsonl").read_text()
    if pages == "all":
        assert list(corpus) == KILT_IDS
    assert kilt.read_bytes() == kilt_before


def test_the_retrievers_keep_the_same_copy_of_a_repeated_page(tmp_path, capsys):
    """The reader behind every index keeps the first page of an id and says so once on
    stderr, naming the file, the count and the ids: BM25 built on the file holds each id
    once, and the second page's words find nothing."""
    from namesake.retrieval import BM25Retriever

    kilt = kilt_with_repeated_ids(tmp_path)
    retriever = BM25Retriever.build(read_kilt_documents(kilt), show_progress=False)
    assert capsys.readouterr().err == f"{kilt}: {REPEATED_LINE}\n"
    assert retriever.document_ids == KILT_IDS
    ((best, _), *_) = retriever.search(["Abraham Lincoln president"], 5)[0]
    assert best == "307"
    assert retriever.search([IMPOSTOR], 5) == [[]], "the second page 307 is not indexed"


def test_ids_are_repeated_only_when_spelt_alike(tmp_path, capsys):
    """What counts as a repeat: the same id string (an integer id reads as its digits), not
    the same number ("007" is not "7"), whether the id is a small number, a huge one or a
    name."""
    ids = ["7", "007", 7, "4294967296", "Seven", "4294967296", "Seven", "0", "0"]
    kilt = tmp_path / "kilt.json"
    pages = [
        {"wikipedia_id": page, "wikipedia_title": f"T{n}", "text": []} for n, page in enumerate(ids)
    ]
    kilt.write_text("".join(json.dumps(page) + "\n" for page in pages))
    repeated: list[str] = []
    documents = list(read_kilt_documents(kilt, repeated))
    assert [(d.wikipedia_id, d.title) for d in documents] == [
        ("7", "T0"),
        ("007", "T1"),
        ("4294967296", "T3"),
        ("Seven", "T4"),
        ("0", "T7"),
    ]
    assert repeated == ["7", "4294967296", "Seven", "0"]
    assert capsys.readouterr().err == "", "a caller that takes the ids reports them itself"


def test_a_run_scored_by_beir_equals_namesake_evaluate(dataset, tmp_path):
    """A BM25 run over the sample KILT file, scored twice against the exported qrels: by
    BEIR's `EvaluateRetrieval` (pytrec_eval, results as rank-derived scores 1/(rank+1), so no
    ties) and by `namesake evaluate` (ir-measures). BEIR rounds its figures to 5 decimals, so
    they agree to 5e-6 (namesake reports percentages)."""
    from beir.retrieval.evaluation import EvaluateRetrieval

    run = tmp_path / "run.jsonl"
    main(
        [
            *("retrieve", "--retriever", "bm25", "--corpus", str(SAMPLE_KILT)),
            *("--dataset", dataset, "--config", CONFIG, "--out", str(run)),
        ]
    )
    rankings = ranked_ids(run)
    results = {
        query_id: {doc: 1 / (rank + 1) for rank, doc in enumerate(ranking)}
        for query_id, ranking in rankings.items()
    }
    _, _, qrels = load(export(dataset, tmp_path / "beir"))
    assert set(results) == set(qrels)
    ndcg, _, recall, _ = EvaluateRetrieval.evaluate(qrels, results, [10, 20, 100])
    mrr = EvaluateRetrieval.evaluate_custom(qrels, results, [10], metric="mrr")
    assert 0 < ndcg["NDCG@10"] < 1, "a run that is neither perfect nor empty"

    report = tmp_path / "report"
    main(
        [
            *("evaluate", "--dataset", dataset, "--config", CONFIG),
            *("--predictions", str(run), "--out", str(report)),
        ]
    )
    metrics = json.loads((report / "metrics.json").read_text())["metrics"]
    beir = {
        "ndcg@10": ndcg["NDCG@10"],
        "mrr@10": mrr["MRR@10"],
        "recall@20": recall["Recall@20"],
        "recall@100": recall["Recall@100"],
    }
    assert {name: metrics[name] / 100 for name in beir} == pytest.approx(beir, abs=5e-6)


@pytest.mark.parametrize(
    "change, named",
    [
        ({"--dataset": "{tmp}/no-such-dataset"}, "{tmp}/no-such-dataset: no such dataset folder"),
        ({"--config": "human_entities"}, "{dataset}: human_entities holds the members"),
        ({"--config": "human_xx"}, "{dataset}: no config 'human_xx'"),
        ({"--corpus": "{tmp}/missing.json"}, "{tmp}/missing.json"),
        ({"--corpus": "{tmp}/bad.json"}, "{tmp}/bad.json:2: "),
    ],
    ids=["no dataset", "members config", "unknown config", "no corpus", "bad corpus line"],
)
def test_bad_inputs_are_one_line_naming_the_file(dataset, tmp_path, capsys, change, named):
    good = SAMPLE_KILT.read_text(encoding="utf-8").splitlines(keepends=True)[0]
    (tmp_path / "bad.json").write_text(good + '{"wikipedia_id": "1", "text": "x"}\n')
    options = {"--dataset": dataset, "--config": CONFIG, "--corpus": str(SAMPLE_KILT)}
    for option, value in change.items():
        options[option] = value.format(tmp=tmp_path)
    out = tmp_path / "beir"
    args = ["amber", "export", *(x for pair in options.items() for x in pair), "--out", out]
    status, _, err = cli([*args, "--pages", "set"], capsys)
    assert status == 1
    assert named.format(tmp=tmp_path, dataset=dataset) in error_line(err)
    assert not out.exists(), "nothing written"


def test_distractors_need_pages_set(dataset, tmp_path, capsys):
    args = ["amber", "export", "--dataset", dataset, "--config", CONFIG, "--corpus", SAMPLE_KILT]
    status, _, err = cli([*args, "--out", tmp_path / "beir", "--distractors", 5], capsys)
    assert status == 1
    assert error_line(err) == "namesake: error: --distractors goes with --pages set"
    assert not (tmp_path / "beir").exists()


@pytest.mark.parametrize("separator", ["\t", "\n"], ids=["tab", "newline"])
def test_a_query_id_that_splits_a_qrels_row_is_refused(sample_build, tmp_path, separator):
    """A dataset (imported from a release) whose first human_qa query id holds a tab or a
    newline: `amber export` through the installed command refuses it in one line naming the
    id and qrels/test.tsv, the check `amber qrels` applies (`namesake.trec.check_token`),
    instead of a file beir's loader fails on (IndexError); an earlier export and the inputs
    stay byte for byte."""
    release = Path(shutil.copytree(sample_build[0] / "jsonl", tmp_path / "release"))
    sets = release / "human" / "qa" / "amber_sets.jsonl"
    lines = sets.read_text(encoding="utf-8").splitlines(keepends=True)
    record = json.loads(lines[0])
    query = next(q for entity in record["qids"].values() for q in entity["queries"])
    bad = query["id"] = f"{query['id'][:8]}{separator}{query['id'][8:]}"
    lines[0] = json.dumps(record) + "\n"
    sets.write_text("".join(lines), encoding="utf-8")
    import_released(release, tmp_path / "dataset")
    out = export(str(sample_build[0] / "dataset"), tmp_path / "beir")
    before = {folder: folder_files(folder) for folder in (out, tmp_path / "dataset")}
    kilt = SAMPLE_KILT.read_bytes()
    done = subprocess.run(
        [str(NAMESAKE), "amber", "export", "--format", "beir", "--dataset"]
        + [str(tmp_path / "dataset"), "--config", CONFIG, "--corpus", str(SAMPLE_KILT)]
        + ["--out", str(out)],
        capture_output=True,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"},
        timeout=600,
    )
    assert done.returncode == 1
    assert error_line(done.stderr) == (
        f"namesake: error: query id {bad!r} cannot be written to {out / 'qrels/test.tsv'}: it "
        "is empty or holds white space"
    )
    assert {folder: folder_files(folder) for folder in before} == before
    assert SAMPLE_KILT.read_bytes() == kilt
    assert not [path for path in tmp_path.iterdir() if ".partial-" in path.name]
