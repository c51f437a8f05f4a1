"""The evaluation commands' outputs on the bundled sample, checked against copies committed in
``tests/data/golden/``: `evaluate` per retriever, `amber compare --rerank --fuse rrf` (the
demo's mitigations table), `compare-runs`, `fuse` and `amber export --format beir`.

A refactoring of the evaluation side must not change a byte of what a user reads. Paths (the
test's temporary folder) and timings are replaced by placeholders before the comparison, and
the one allowance is for floating point: a number with a decimal point may differ from the
committed one by one part in 10^6, since the dense encoder's int8 arithmetic and BLAS sums
can round differently on another CPU. Everything else (every word, every integer, the order
of every ranking and line) must be the same. popularity_gap.png and the popularity curve's
PNG and SVG are not compared (matplotlib's rendering is not part of namesake's output); their
presence is, and the curve's CSV is compared.

Where an output changes on purpose, regenerate the copies with
``NAMESAKE_UPDATE_GOLDEN=1 pytest tests/test_golden_outputs.py`` and say why in the commit.
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

from conftest import SAMPLE_KILT

from namesake.cli import main

GOLDEN = Path(__file__).parent / "data" / "golden"
UPDATE = os.environ.get("NAMESAKE_UPDATE_GOLDEN") == "1"
#: a decimal number as the outputs write it (1.5, -0.25, 1e-05, 3.2e+01); integers are words
_DECIMAL = re.compile(r"-?\d+\.\d+(?:[eE][+-]?\d+)?|-?\d+[eE][+-]?\d+")
RELATIVE = 1e-6


def _normalise(text: str, places: dict[str, str]) -> str:
    for path, placeholder in places.items():
        text = text.replace(path, placeholder)
    return text


def _numbers_match(got: str, want: str) -> bool:
    """Equal but for decimal numbers within RELATIVE of each other."""
    if _DECIMAL.split(got) != _DECIMAL.split(want):
        return False
    for a, b in zip(_DECIMAL.findall(got), _DECIMAL.findall(want), strict=True):
        x, y = float(a), float(b)
        if not (math.isclose(x, y, rel_tol=RELATIVE, abs_tol=1e-9) or (x != x and y != y)):
            return False
    return True


def _check(name: str, text: str, places: dict[str, str]) -> None:
    text = _normalise(text, places)
    path = GOLDEN / name
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    want = path.read_text(encoding="utf-8")
    if text == want:
        return
    assert _numbers_match(text, want), (
        f"{name} differs from tests/data/golden/{name} beyond floating point: "
        + next(
            f"line {i}: {g!r} != {w!r}"
            for i, (g, w) in enumerate(
                zip(text.splitlines() + [""], want.splitlines() + [""], strict=False), 1
            )
            if not _numbers_match(g, w)
        )
    )


def _run(argv: list[str], capsys) -> str:
    main(argv)
    return capsys.readouterr().out


def _files(folder: Path) -> dict[str, str]:
    """Every output file as text: a Parquet file as the CSV of its rows (its bytes hold the
    writer's version)."""
    import pyarrow.parquet as pq

    return {
        str(path.relative_to(folder)) + (".csv" if path.suffix == ".parquet" else ""): (
            pq.read_table(path).to_pandas().to_csv(index=False)
            if path.suffix == ".parquet"
            else path.read_text(encoding="utf-8")
        )
        for path in sorted(folder.rglob("*"))
        if path.is_file()
        and path.suffix not in (".png", ".svg")
        and not path.name.startswith(".namesake")
    }


def test_golden_outputs(sample_build, tmp_path, capsys):
    out, _ = sample_build
    dataset = str(out / "dataset")
    work = tmp_path
    texts: dict[str, str] = {}
    texts["compare/stdout.txt"] = _run(
        ["amber", "compare", "--corpus", str(SAMPLE_KILT), "--dataset", dataset]
        + ["--out", str(work / "mitigations"), "--index-dir", str(work / "indexes")]
        + ["--collections", "human", "--tasks", "qa", "--retriever", "bm25"]
        + ["--dense-run", "bge-small=bundled:bge-small", "--rerank", "--rerank-depth", "10"]
        + ["--fuse", "rrf"],
        capsys,
    )
    for name, text in _files(work / "mitigations").items():
        texts[f"compare/{name}"] = text
    drawn = ("popularity_gap.png", "popularity_curve.png", "popularity_curve.svg")
    for name in drawn:
        assert (work / "mitigations" / "reports" / "bm25-human_qa" / name).is_file()
    predictions = work / "mitigations" / "predictions"
    for stem, kind in (
        ("bm25-human_qa", "bm25"),
        ("dense-bge-small-human_qa", "dense"),
        ("fused-rrf-human_qa", None),
        ("bm25+rerank-human_qa", None),
    ):
        argv = ["evaluate", "--dataset", dataset, "--config", "human_qa"]
        argv += ["--predictions", str(predictions / f"{stem}.jsonl")]
        argv += ["--out", str(work / "evaluate" / stem)]
        texts[f"evaluate/{stem}/stdout.txt"] = _run(
            argv + (["--retriever", kind] if kind else []), capsys
        )
        for name, text in _files(work / "evaluate" / stem).items():
            texts[f"evaluate/{stem}/{name}"] = text
    texts["compare_runs/stdout.txt"] = _run(
        ["compare-runs", str(predictions / "bm25-human_qa.jsonl")]
        + [str(predictions / "dense-bge-small-human_qa.jsonl"), "--names", "BM25", "dense"]
        + ["--dataset", dataset, "--config", "human_qa", "--out", str(work / "compare_runs")],
        capsys,
    )
    for name, text in _files(work / "compare_runs").items():
        texts[f"compare_runs/{name}"] = text
    texts["fuse/stdout.txt"] = _run(
        ["fuse", str(predictions / "bm25-human_qa.jsonl")]
        + [str(predictions / "dense-bge-small-human_qa.jsonl"), "--out", str(work / "rrf.trec")],
        capsys,
    )
    texts["fuse/rrf.trec"] = (work / "rrf.trec").read_text(encoding="utf-8")
    texts["fuse/combsum_stdout.txt"] = _run(
        ["fuse", str(predictions / "bm25-human_qa.jsonl")]
        + [str(predictions / "dense-bge-small-human_qa.jsonl"), "--method", "combsum"]
        + ["--format", "kilt", "--top-k", "20", "--out", str(work / "combsum.jsonl")],
        capsys,
    )
    texts["fuse/combsum.jsonl"] = (work / "combsum.jsonl").read_text(encoding="utf-8")
    for pages in ("all", "set"):
        folder = work / f"beir-{pages}"
        argv = ["amber", "export", "--format", "beir", "--dataset", dataset]
        argv += ["--config", "human_qa", "--corpus", str(SAMPLE_KILT), "--out", str(folder)]
        argv += ["--pages", pages] + (["--distractors", "3"] if pages == "set" else [])
        texts[f"export_{pages}/stdout.txt"] = _run(argv, capsys)
        for name, text in _files(folder).items():
            texts[f"export_{pages}/{name}"] = text
    if not UPDATE:
        committed = {str(path.relative_to(GOLDEN)) for path in GOLDEN.rglob("*") if path.is_file()}
        assert sorted(texts) == sorted(committed), "the commands wrote other files"
    places = {dataset: "<dataset>", str(work): "<work>", str(SAMPLE_KILT): "<kilt>"}
    for name, text in texts.items():
        _check(name, text, places)
