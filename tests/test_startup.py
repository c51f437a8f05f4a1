"""The AmbER build starts without paying for inflect 6+'s typeguard instrumentation.

inflect 7 spent ~2 s of every `namesake amber build` start-up instrumenting its own
functions with typeguard; inflect 5.x (the line the published pipeline used) has the same
`number_to_words` output and imports in milliseconds. Timings live in
benchmarks/bench_startup.py; this test checks the cause, which holds on any machine.
"""

import os
import subprocess
import sys
from pathlib import Path


def test_build_import_does_not_load_typeguard():
    code = "import sys, namesake.amber.build.pipeline; print('typeguard' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_number_words_of_the_published_inflect_line():
    from namesake.amber.build.names import _quantity_names

    assert _quantity_names("+1999")["additional_aliases"] == [
        "one thousand, nine hundred and ninety-nine"
    ]
    assert _quantity_names("+1000000000000000")["additional_aliases"] == ["one quadrillion"]
    assert _quantity_names("-3.25")["additional_aliases"] == ["three point two five"]


# --- JAX stays off (issue 33, item 4) ----------------------------------------------------------
#
# bm25s imports JAX for its top-k backend, and where JAX's CUDA build is installed JAX then
# reserves 75% of the GPU, memory torch needs. JAX is not installed here, so "'jax' not in
# sys.modules" would pass whatever namesake does: each check instead runs in a fresh
# interpreter with a sentinel package named `jax` first on the path, which looks installed
# (it has a dist-info, as a real install does) and writes down who imported it, then fails
# the import the way a missing JAX would. Any `import jax`, by namesake or by a library it
# loads, is caught.

ROOT = Path(__file__).resolve().parent.parent
TRAINING_SCRIPTS = sorted((ROOT / "training").glob("train_*.py"))
JAX_SENTINEL = """\
import os, traceback
with open(os.environ["NAMESAKE_JAX_IMPORTS"], "a") as log:
    log.write("".join(traceback.format_stack()) + "\\n")
raise ImportError("namesake's test sentinel: JAX must not be imported")
"""


def run_with_jax_sentinel(tmp_path: Path, code: str) -> list[str]:
    """Runs `code` in a fresh interpreter with the sentinel `jax`; the stack of each import
    of jax it made (empty: none)."""
    sentinel = tmp_path / "sentinel"
    (sentinel / "jax").mkdir(parents=True)
    (sentinel / "jax" / "__init__.py").write_text(JAX_SENTINEL)
    (sentinel / "jax-0.4.30.dist-info").mkdir()
    (sentinel / "jax-0.4.30.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: jax\nVersion: 0.4.30\n"
    )
    log = tmp_path / "jax-imports.txt"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(sentinel), str(ROOT)]),
        "NAMESAKE_JAX_IMPORTS": str(log),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
    }
    env.pop("JAX_PLATFORMS", None)
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return log.read_text().split("\n\n")[:-1] if log.exists() else []


def test_the_sentinel_catches_an_import_of_jax(tmp_path):
    """The check can fail: a plain `import jax` (bm25s does one) is written down."""
    code = """if True:
        import importlib.util
        assert importlib.util.find_spec("jax")  # looks installed
        try:
            import jax
        except ImportError:
            pass
    """
    assert len(run_with_jax_sentinel(tmp_path, code)) == 1


def test_importing_retrieval_and_amber_does_not_import_jax(tmp_path):
    """Every module of namesake.retrieval and namesake.amber, bm25 (hence bm25s) included."""
    code = """if True:
        import importlib, pkgutil, sys
        import namesake.amber, namesake.retrieval
        for package in (namesake.retrieval, namesake.amber):
            for module in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
                importlib.import_module(module.name)
        assert "namesake.retrieval.bm25" in sys.modules and "bm25s" in sys.modules
        import bm25s.selection
        assert not bm25s.selection.JAX_IS_AVAILABLE  # bm25s settled on numpy
    """
    assert run_with_jax_sentinel(tmp_path, code) == []


def test_the_training_scripts_do_not_import_jax(tmp_path):
    """Each script loaded up to its definitions (as a module, so `main` does not run)."""
    code = f"""if True:
        import runpy
        for path in {[str(p) for p in TRAINING_SCRIPTS]!r}:
            assert "main" in runpy.run_path(path, run_name="training_script")
    """
    assert len(TRAINING_SCRIPTS) == 5
    assert run_with_jax_sentinel(tmp_path, code) == []


def test_bm25_build_save_load_and_search_do_not_import_jax(tmp_path):
    code = """if True:
        from namesake.retrieval import BM25Retriever, Document
        pages = [
            ("Mercury (planet)", "Mercury is the smallest planet of the Solar System."),
            ("Mercury (element)", "Mercury is a chemical element, a liquid metal."),
            ("Venus", "Venus is the second planet from the Sun."),
        ]
        documents = [Document(str(i), title, text) for i, (title, text) in enumerate(pages)]
        built = BM25Retriever.build(documents, show_progress=False)
        built.save("index")
        for r in (built, BM25Retriever.load("index"), BM25Retriever.load("index", mmap=True)):
            assert r.search(["smallest planet"], k=2)[0][0][0] == "0"
            assert [d for d, _ in r.rank_candidates(["liquid metal"], [["1", "2"]])[0]] == ["1"]
            found, _ = r.model.retrieve([r._query_tokens(["planet"])[0]], k=2)
            assert sorted(found[0].tolist()) == [0, 2]  # bm25s' own top-k, on numpy
    """
    assert run_with_jax_sentinel(tmp_path, code) == []


def test_build_import_leaves_the_heavy_libraries_for_later():
    """`import namesake.amber.build.pipeline` (every `namesake amber` start-up) loads neither the
    retrievers nor what only some stages use; benchmarks/bench_startup.py has the timings."""
    lazy = [
        "namesake.retrieval",
        "bm25s",
        "numba",
        "sklearn",
        "torch",
        "pyarrow.compute",
        "pyarrow.parquet",
        "yaml",
        "inflect",
        "tqdm",
        "multiprocessing",
    ]
    loaded = f"[m for m in {lazy!r} if m in sys.modules]"
    code = f"import sys, namesake.amber.build.pipeline; print({loaded})"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
