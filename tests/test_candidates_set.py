"""Ranking within each query's AmbER set (`--candidates set`, the paper's Table 8 setting):
every retriever kind ranks only its set's pages, with the scores its full search gives them."""

from __future__ import annotations

import json
import math
import re

import pytest
from conftest import SAMPLE_KILT
from run_files import ranked_ids

from namesake.amber.build.instances import TASKS
from namesake.amber.build.reference import COLLECTIONS
from namesake.amber.evaluation.paper import NOT_IN_PAPER
from namesake.amber.evaluation.retrieve import RETRIEVER_KINDS, open_retriever, set_queries
from namesake.cli import main
from namesake.errors import NamesakeError


@pytest.fixture(scope="module")
def tiny_dpr(tmp_path_factory):
    from tiny_models import save_tiny_dpr

    question, context = save_tiny_dpr(tmp_path_factory.mktemp("dpr"))
    return {"question_encoder": str(question), "context_encoder": str(context)}


@pytest.fixture(scope="module")
def retrievers(tiny_dpr, tmp_path_factory):
    """Every kind, built over the sample corpus, saved, and reloaded as `compare` opens it
    (memory-mapped); dense also as an IVF index, whose vectors need its direct map."""
    folder = tmp_path_factory.mktemp("indexes")
    options = {kind: {} for kind in RETRIEVER_KINDS}
    options["dpr"] = tiny_dpr
    from test_splade import save_tiny_splade

    options["splade"] = {"model": str(save_tiny_splade(tmp_path_factory.mktemp("splade")))}
    built = {}
    for kind in RETRIEVER_KINDS:
        open_retriever(kind, SAMPLE_KILT, folder / kind, **options[kind])
        built[kind] = open_retriever(kind, None, folder / kind)
    open_retriever("dense", SAMPLE_KILT, folder / "ivf", index="ivf")
    built["dense-ivf"] = open_retriever("dense", None, folder / "ivf")
    built["dense-ivf"].nprobe = 10_000  # every list: the full search is exact too
    return built


@pytest.fixture(scope="module")
def queries_and_sets(sample_build):
    out, _ = sample_build
    found = [set_queries(str(out / "dataset"), f"{c}_{t}") for c in COLLECTIONS for t in TASKS]
    queries = [query for part in found for query in part.inputs]
    pages = [query_pages for part in found for query_pages in part.set_pages()]
    return queries, pages


def test_set_pages_are_the_query_entitys_and_its_namesakes(sample_build, queries_and_sets):
    out, _ = sample_build
    queries = set_queries(str(out / "dataset"), "human_qa")
    pages = queries.set_pages()
    for gold, query_pages in zip(queries.gold_pages, pages, strict=True):
        assert set(gold) <= set(query_pages)
        assert len(query_pages) == len(set(query_pages))
    # a set has at least two entities with a page each
    assert min(len(query_pages) for query_pages in pages) >= 2


@pytest.mark.parametrize("kind", [*RETRIEVER_KINDS, "dense-ivf"])
def test_each_kind_ranks_only_the_set_with_its_full_search_scores(
    kind, retrievers, queries_and_sets
):
    retriever = retrievers[kind]
    queries, pages = queries_and_sets
    restricted = retriever.rank_candidates(queries, pages)
    full = retriever.search(queries, len(retriever))
    assert len(restricted) == len(queries)
    ranked_pages = 0
    for query_pages, ranking, everything in zip(pages, restricted, full, strict=True):
        ids = [page for page, _ in ranking]
        assert len(ids) <= len(query_pages) and set(ids) <= set(query_pages)
        assert len(ids) == len(set(ids))
        scores = [score for _, score in ranking]
        assert scores == sorted(scores, reverse=True)
        # the full ranking with every other page removed, score for score
        expected = [(page, score) for page, score in everything if page in set(query_pages)]
        assert [page for page, _ in expected] == ids or _tied(expected, ranking)
        for (_, got), (_, want) in zip(ranking, expected, strict=True):
            assert math.isclose(got, want, rel_tol=1e-4, abs_tol=1e-5)
        ranked_pages += len(ids)
    assert ranked_pages > len(queries)  # most queries rank more than their gold page


def _tied(expected, ranking) -> bool:
    """Same pages and scores, in an order that differs only among (near-)equal scores."""
    if sorted(page for page, _ in expected) != sorted(page for page, _ in ranking):
        return False
    return all(
        math.isclose(a, b, rel_tol=1e-4, abs_tol=1e-5)
        for (_, a), (_, b) in zip(expected, ranking, strict=True)
    )


def test_pages_outside_the_index_are_left_out(retrievers):
    retriever = retrievers["bm25"]
    query = ["Who is the spouse of Abe Lincoln?"]
    page = retriever.document_ids[0]
    (ranking,) = retriever.rank_candidates(query, [["not-a-page", page, page]])
    assert [found for found, _ in ranking] in ([page], [])
    assert "not-a-page" not in retriever.candidate_rows and page in retriever.candidate_rows


def _prediction_counts(path) -> dict[str, int]:
    return {query: len(pages) for query, pages in ranked_ids(path).items()}


def test_retrieve_with_candidates_set_writes_at_most_the_set_per_query(sample_build, tmp_path):
    out, _ = sample_build
    dataset = str(out / "dataset")
    queries = set_queries(dataset, "nonhuman_sf")
    pages = queries.set_pages()
    common = ["retrieve", "--corpus", str(SAMPLE_KILT), "--dataset", dataset]
    common += ["--config", "nonhuman_sf", "--retriever", "tfidf"]
    main([*common, "--candidates", "set", "--out", str(tmp_path / "set.jsonl")])
    main([*common, "--out", str(tmp_path / "all.jsonl"), "--top-k", "5"])
    restricted = _prediction_counts(tmp_path / "set.jsonl")
    everything = _prediction_counts(tmp_path / "all.jsonl")
    sizes = dict(zip(queries.ids, map(len, pages), strict=True))
    assert restricted.keys() == sizes.keys()
    assert all(restricted[query] <= sizes[query] for query in sizes)
    # the corpus holds more than a set: unrestricted rankings are longer somewhere
    assert any(everything[query] > sizes[query] for query in sizes)


def test_compare_with_candidates_set_says_the_paper_has_no_such_figure(
    sample_build, tmp_path, capsys
):
    out, _ = sample_build
    main(
        ["amber", "compare", "--corpus", str(SAMPLE_KILT), "--dataset", str(out / "dataset")]
        + ["--out", str(tmp_path), "--retriever", "tfidf", "bm25", "--candidates", "set"]
    )
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[1:]]
    assert len(rows) == 2 * 2 * 3
    for row in rows:  # tfidf has paper figures over all of Wikipedia, none within a set
        cells = [cell for name, cell in zip(header, row, strict=True) if name == "paper"]
        assert cells == [NOT_IN_PAPER] * len(cells) and cells, row
    results = (tmp_path / "results.md").read_text()
    assert "ranked within each query's AmbER set" in results
    record = json.loads((tmp_path / "reports" / "tfidf-human_fc" / "metrics.json").read_text())
    assert record["retriever"] == "tfidf" and record["candidates"] == "set"
    assert record["paper"]["system"] is None


def _write_folder(folder, configs: dict[str, dict]) -> None:
    """A dataset folder with one JSON lines file per config (one row each) and its card."""
    folder.mkdir()
    card = ["---", "configs:"]
    for config, row in configs.items():
        (folder / f"{config}.jsonl").write_text(json.dumps(row) + "\n")
        card += [f"- config_name: {config}", "  data_files:", "  - split: test"]
        card += [f"    path: {config}.jsonl"]
    (folder / "README.md").write_text("\n".join([*card, "---", ""]))


QUERY = {"id": "q1", "input": "Who is Abe Lincoln?", "output": [{"answer": "x"}]}
AMBER_QUERY = QUERY | {"name": "Abe Lincoln", "qid": "Q1", "is_head": True}


@pytest.mark.parametrize(
    ("configs", "said"),
    [
        ({"human_qa": QUERY}, "it has no such config"),  # KILT-format queries only
        (
            {"human_qa": AMBER_QUERY, "human_entities": {"name": "Abe Lincoln", "qid": "Q1"}},
            "columns missing: gold_wikipedia_ids, wikipedia_ids",
        ),
    ],
)
def test_candidates_set_on_a_dataset_without_set_ids_is_one_clear_error(tmp_path, configs, said):
    folder = tmp_path / "queries"
    _write_folder(folder, configs)
    pattern = rf"--candidates set .*{re.escape(str(folder))}.* 'human_entities' config; {said}"
    with pytest.raises(NamesakeError, match=pattern):
        set_queries(str(folder), "human_qa")
    with pytest.raises(SystemExit) as exited:
        main(
            ["retrieve", "--corpus", str(SAMPLE_KILT), "--dataset", str(folder)]
            + ["--config", "human_qa", "--retriever", "bm25", "--candidates", "set"]
            + ["--out", str(tmp_path / "out.jsonl")]
        )
    assert "--candidates set ranks the pages of each query's AmbER set" in str(exited.value.code)
    assert not (tmp_path / "out.jsonl").exists()
