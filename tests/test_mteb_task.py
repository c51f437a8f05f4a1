"""`namesake.mteb` (issue 34, section 4): an AmbER config as an MTEB retrieval task, read
from a BEIR folder of `namesake amber export`, run by `mteb.evaluate` with the bundled MiniLM,
offline, and its nDCG@10 checked against `namesake evaluate` on the same run."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import SAMPLE_KILT
from folders import folder_files

from namesake.amber.evaluation.queries import AmberQueries
from namesake.cli import main
from namesake.errors import BadInputError, NamesakeError
from namesake.runs import Run

CONFIG = "human_qa"


@pytest.fixture(scope="module")
def exported(sample_build, tmp_path_factory):
    """(dataset, BEIR folder): the sample's set pages of human_qa and 20 distractors."""
    dataset = str(sample_build[0] / "dataset")
    folder = tmp_path_factory.mktemp("mteb") / "beir"
    main(
        [
            *("amber", "export", "--format", "beir", "--dataset", dataset, "--config", CONFIG),
            *("--corpus", str(SAMPLE_KILT), "--out", str(folder)),
            *("--pages", "set", "--distractors", "20"),
        ]
    )
    return dataset, folder


def test_the_task_is_named_after_the_config_and_the_corpus(exported, tmp_path):
    from namesake.mteb import amber_task

    _, folder = exported
    task = amber_task(folder)
    assert task.metadata.name == "AmbER-human_qa-set20-seed0"
    assert task.hf_subsets == [CONFIG]
    assert task.metadata.main_score == "ndcg_at_10"
    assert "chen-etal-2021-evaluating" in task.metadata.bibtex_citation
    task.load_data()
    split = task.dataset[CONFIG]["test"]
    assert len(split["corpus"]) == 38  # the 18 set pages of human_qa and 20 distractors
    assert len(split["queries"]) == len(split["relevant_docs"]) == 18
    with pytest.raises(BadInputError, match="a BEIR export of human_qa, not of human_sf"):
        amber_task(folder, config="human_sf")
    with pytest.raises(BadInputError, match=r"neither a BEIR export \(no corpus.jsonl\)"):
        amber_task(folder.parent, config=CONFIG)  # the wrong folder: not an export at all
    stray = tmp_path / "beir"
    stray.mkdir()
    (stray / "corpus.jsonl").write_bytes((folder / "corpus.jsonl").read_bytes())
    with pytest.raises(BadInputError, match="no export.json: not a BEIR folder written by"):
        amber_task(stray)


def test_mteb_ndcg_equals_namesake_evaluate_on_the_same_run(exported, tmp_path):
    """Two scorers, one run. `mteb.evaluate` runs the task with the bundled MiniLM (no Hub,
    no result cache) and saves its retrieval predictions (query -> {page: cosine score});
    those predictions, ranked by score, are written as a namesake predictions file and
    scored by `namesake evaluate` against the dataset itself. mteb's nDCG@10, MRR@10 and
    Recall@20 (its evaluator, on the export's qrels) must equal namesake's (ir-measures, on
    `AmberQueries.qrels`); mteb rounds its figures to 5 decimals, hence the tolerance of 5e-6."""
    import mteb
    from sentence_transformers import SentenceTransformer

    from namesake.bundled_models import minilm_path
    from namesake.mteb import amber_task

    dataset, folder = exported
    task = amber_task(folder)
    model = SentenceTransformer(str(minilm_path()), device="cpu")
    predictions = tmp_path / "mteb-predictions"
    result = mteb.evaluate(
        model,
        task,
        cache=None,
        prediction_folder=predictions,
        encode_kwargs={"batch_size": 64, "show_progress_bar": False},
        show_progress_bar=False,
    )
    (scores,) = result.task_results[0].scores["test"]
    assert scores["hf_subset"] == CONFIG
    assert 0 < scores["ndcg_at_10"] < 1, "a run that is neither perfect nor empty"

    saved = json.loads((predictions / f"{task.metadata.name}_predictions.json").read_text())
    found = saved[CONFIG]["test"]
    queries = AmberQueries.load(dataset, CONFIG, members=False).rows.to_pydict()
    assert set(found) == set(queries["id"])
    rankings = []
    for query_id, page_scores in found.items():
        ranked = sorted(page_scores.items(), key=lambda item: -item[1])
        assert len(ranked) == 38, "mteb ranked the whole corpus"
        top = [score for _, score in ranked[:11]]
        assert len(set(top)) == len(top), "no ties, so both scorers rank alike"
        rankings.append((query_id, ranked))
    run = tmp_path / "mteb-run.jsonl"
    Run.from_rankings(rankings).write(run)

    report = tmp_path / "report"
    main(
        [
            *("evaluate", "--dataset", dataset, "--config", CONFIG),
            *("--predictions", str(run), "--out", str(report)),
        ]
    )
    metrics = json.loads((report / "metrics.json").read_text())["metrics"]
    names = {"ndcg@10": "ndcg_at_10", "mrr@10": "mrr_at_10", "recall@20": "recall_at_20"}
    ours = {name: metrics[name] / 100 for name in names}
    assert ours == pytest.approx({name: scores[key] for name, key in names.items()}, abs=5e-6)


@pytest.mark.parametrize(
    "change, message",
    [
        ({"seed": "../../../../escaped"}, "wrong type: seed is a string, not an integer or null"),
        (
            {"distractors": "20/../../x"},
            "wrong type: distractors is a string, not an integer or null",
        ),
        (
            {"config": "../../escaped"},
            "config '../../escaped' is not an AmbER query config (one of human, human_qa, "
            "human_sf, human_fc, nonhuman, nonhuman_qa, nonhuman_sf, nonhuman_fc)",
        ),
        ({"pages": "../x"}, "pages '../x' is not one of all, set"),
        ({"seed": None}, "pages is 'set', but distractors or seed is missing"),
        ({"distractors": -1}, "distractors is -1, not at least 0"),
        ({"seed": True}, "wrong type: seed is true or false, not an integer or null"),
    ],
    ids=["seed path", "distractors path", "config path", "pages", "no seed", "negative", "bool"],
)
def test_an_export_record_naming_a_path_is_refused_before_mteb_writes(
    exported, tmp_path, change, message
):
    """The task's name is made of export.json's config, distractors and seed, and mteb
    writes its results under that name: a field that is not a known config or an integer
    (``"seed": "../../../../escaped"`` put the results outside the cache) is one error
    naming export.json and the field, raised before mteb runs; nothing is written."""
    import mteb
    from mteb.cache import ResultCache
    from sentence_transformers import SentenceTransformer

    from namesake.bundled_models import minilm_path
    from namesake.mteb import amber_task

    folder = tmp_path / "work" / "exports" / "beir"
    shutil.copytree(exported[1], folder)
    record = json.loads((folder / "export.json").read_text())
    (folder / "export.json").write_text(json.dumps({**record, **change}))
    model = SentenceTransformer(str(minilm_path()), device="cpu")
    before = folder_files(tmp_path)
    cache = tmp_path / "work" / "cache"
    with pytest.raises(BadInputError) as refused:
        mteb.evaluate(model, amber_task(folder), cache=ResultCache(cache), show_progress_bar=False)
    assert str(refused.value) == f"{folder / 'export.json'}: {message}"
    assert folder_files(tmp_path) == before, "nothing written, inside the cache or out"
    assert not cache.exists()


def test_the_results_of_an_export_stay_in_the_cache_under_the_task_name(exported, tmp_path):
    """The other side of the check above: a well-formed export evaluates, and mteb's result
    file is inside its cache folder, named after the task."""
    import mteb
    from mteb.cache import ResultCache
    from sentence_transformers import SentenceTransformer

    from namesake.bundled_models import minilm_path
    from namesake.mteb import amber_task

    cache = tmp_path / "cache"
    model = SentenceTransformer(str(minilm_path()), device="cpu")
    task = amber_task(exported[1])
    mteb.evaluate(model, task, cache=ResultCache(cache), show_progress_bar=False)
    written = [path.relative_to(tmp_path) for path in tmp_path.rglob("*") if path.is_file()]
    assert all(path.parts[0] == "cache" for path in written)
    results = [path for path in written if path.name == "AmbER-human_qa-set20-seed0.json"]
    assert len(results) == 1


def test_a_config_named_for_a_dataset_in_mteb_layout_must_be_an_amber_one(tmp_path):
    from namesake.mteb import amber_task

    (tmp_path / "README.md").write_text("---\nconfigs: []\n---\n")
    with pytest.raises(NamesakeError, match="config '../x' is not an AmbER query config"):
        amber_task(tmp_path, config="../x")


def test_a_dataset_in_mteb_layout_is_read_by_mteb_loader(exported, tmp_path):
    """Not a BEIR folder: the task hands the source to mteb's own loader, as for a Hub
    dataset (configs <config>-corpus, -queries, -qrels); here a local folder in that layout,
    made from the export, gives the same corpus, queries and qrels."""
    from beir.datasets.data_loader import GenericDataLoader
    from datasets import Dataset

    from namesake.mteb import amber_task

    _, folder = exported
    corpus, queries, qrels = GenericDataLoader(str(folder)).load(split="test")
    tables = {
        "corpus": [{"_id": doc, **fields} for doc, fields in corpus.items()],
        "queries": [{"_id": query, "text": text} for query, text in queries.items()],
        "qrels": [
            {"query-id": query, "corpus-id": doc, "score": score}
            for query, judged in qrels.items()
            for doc, score in judged.items()
        ],
    }
    card = ["---", "configs:"]
    for name, rows in tables.items():
        Dataset.from_list(rows).to_parquet(tmp_path / f"{name}.parquet")
        card += [f"- config_name: {CONFIG}-{name}", "  data_files:"]
        card += ["  - split: test", f"    path: {name}.parquet"]
    (tmp_path / "README.md").write_text("\n".join([*card, "---", ""]))

    with pytest.raises(BadInputError, match="needs its config named"):
        amber_task(tmp_path)
    task = amber_task(tmp_path, config=CONFIG)
    assert task.metadata.name == "AmbER-human_qa"
    task.load_data()
    split = task.dataset[CONFIG]["test"]
    assert dict(zip(split["corpus"]["id"], split["corpus"]["title"], strict=True)) == {
        doc: fields["title"] for doc, fields in corpus.items()
    }
    assert dict(zip(split["queries"]["id"], split["queries"]["text"], strict=True)) == queries
    assert split["relevant_docs"] == qrels
