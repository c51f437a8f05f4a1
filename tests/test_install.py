"""namesake installed from its wheel, away from the checkout, as the Space and `pip install .`
have it.

`make space-bundle` builds the wheel in a copy of the tree as a fresh clone has it (the files
git tracks, and the new ones it does not ignore); a fresh virtualenv installs it through the
Space's own requirements line with `--no-index`. The fresh venv sees this venv's
site-packages through a `.pth` line (pip resolves namesake's dependencies against them,
offline); `.pth` files inside that folder are not run, so the checkout's editable install
stays out. Everything then runs from a folder outside the checkout.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

import namesake

REPO = Path(__file__).resolve().parents[1]
WHEEL = f"namesake-{namesake.__version__}-py3-none-any.whl"


def copy_as_cloned(destination: Path) -> None:
    """The working tree as a clone with its uncommitted changes: no ignored files, links kept."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if not os.path.lexists(source):  # deleted in the working tree
            continue
        target = destination / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target, follow_symlinks=False)


def run(command: list[str], cwd: Path, env: dict[str, str], timeout: int = 300):
    done = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, f"{command}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(the fresh venv's bin folder, a work folder outside the checkout, the environment)."""
    root = tmp_path_factory.mktemp("install")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        HF_HOME=str(root / "hf"),
        XDG_CACHE_HOME=str(root / "cache"),
        PIP_CONFIG_FILE=os.devnull,
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    clone = root / "clone"
    copy_as_cloned(clone)
    space = root / "space"
    space.mkdir()
    shutil.copy2(REPO / "space_app" / "requirements.txt", space / "requirements.txt")
    run(
        ["make", "-s", "space-bundle", f"VENV={sys.prefix}", f"SPACE_WHEELS={space / 'wheels'}"],
        clone,
        env,
    )
    assert [p.name for p in (space / "wheels").iterdir()] == [WHEEL]

    fresh = root / "fresh"
    run([sys.executable, "-m", "venv", "--without-pip", str(fresh)], root, env)
    bin_dir = fresh / "bin"
    fresh_site = run(
        [
            str(bin_dir / "python"),
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ],
        root,
        env,
    ).strip()
    (Path(fresh_site) / "namesake_test_parent_env.pth").write_text(
        sysconfig.get_paths()["purelib"] + "\n"
    )
    # The Space's line, as its builder runs it; pip resolves the `space` extra and every
    # dependency against what is installed, with no index.
    run(
        [str(bin_dir / "python"), "-m", "pip", "install", "--no-index", "-r", "requirements.txt"],
        space,
        env,
    )
    work = root / "work"
    work.mkdir()
    return bin_dir, work, env


def fresh_python(installed, code: str) -> dict:
    bin_dir, work, env = installed
    out = run([str(bin_dir / "python"), "-c", textwrap.dedent(code)], work, env)
    return json.loads(out.strip().splitlines()[-1])


def test_the_space_line_installs_this_project_with_its_data(installed):
    found = fresh_python(
        installed,
        """
        import json, sys
        import namesake
        from namesake.data import AMBER_SAMPLE_DIR, amber_sample
        from namesake.metrics import metric_path
        print(json.dumps({
            "prefix": sys.prefix,
            "namesake": namesake.__file__,
            "metrics": [str(metric_path(n)) for n in ("entity_confusion", "wes_similarity")],
            "sample": sorted(p.name for p in AMBER_SAMPLE_DIR.iterdir()),
            "kilt": str(amber_sample("kilt")),
        }))
        """,
    )
    prefix = Path(found["prefix"])
    assert prefix == installed[0].parent
    for path in (found["namesake"], *found["metrics"], found["kilt"]):
        assert Path(path).is_relative_to(prefix) and not Path(path).is_relative_to(REPO)
    assert not Path(found["metrics"][0]).is_symlink()
    assert {"entity_confusion.py", "README.md", "requirements.txt"} <= {
        p.name for p in Path(found["metrics"][0]).iterdir()
    }
    assert set(found["sample"]) >= {
        "kilt_knowledgesource-sample.json",
        "wikidata-sample-all.json.bz2",
        "pagecounts-sample-views-ge-5-totals.bz2",
        "pageviews-sample-user.gz",
        "README.md",
    }


def test_evaluate_loads_both_installed_metrics(installed):
    result = fresh_python(
        installed,
        """
        import json
        import evaluate
        from namesake.metrics import load_metric, metric_path

        confusion = evaluate.load(str(metric_path("entity_confusion"))).compute(
            predictions=[["307", "17039796"]],
            references=[{"gold_ids": ["17039796"], "confuser_ids": ["307"],
                         "is_head": False, "set_id": "Abe Lincoln"}],
            k_values=[1, 20],
        )
        wes = evaluate.load(str(metric_path("wes_similarity"))).compute(
            predictions=["NYC", "Paris"], references=[["New York City"], ["paris"]]
        )
        same = load_metric("entity_confusion").compute(
            predictions=[["17039796"]],
            references=[{"gold_ids": ["17039796"], "confuser_ids": ["307"],
                         "is_head": True, "set_id": "Abe Lincoln"}],
            k_values=[1],
        )
        print(json.dumps({"confusion": confusion, "wes": wes, "same": same}))
        """,
    )
    confusion = result["confusion"]
    assert confusion["accuracy@1"] == 0.0 and confusion["accuracy@20"] == 100.0
    assert confusion["entity_confusion"] == 100.0
    assert result["same"]["accuracy@1"] == 100.0
    wes = result["wes"]
    assert len(wes["scores"]) == 2 and wes["exact_match"] == 50.0


def test_installed_cli_compares_retrievers_on_the_bundled_sample(installed):
    bin_dir, work, env = installed
    sample = fresh_python(
        installed,
        """
        import json
        from namesake.data import amber_sample
        print(json.dumps({k: str(amber_sample(k)) for k in ("wikidata", "pageviews", "kilt")}))
        """,
    )
    namesake_cli = str(bin_dir / "namesake")
    run(
        [
            namesake_cli,
            "amber",
            "build",
            "--wikidata",
            sample["wikidata"],
            "--pageviews",
            sample["pageviews"],
            "--kilt",
            sample["kilt"],
            "--out",
            "amber",
        ],
        work,
        env,
    )
    table = run(
        [
            namesake_cli,
            "amber",
            "compare",
            "--corpus",
            sample["kilt"],
            "--dataset",
            "amber",
            "--out",
            "runs",
            "--index-dir",
            "indexes",
        ],
        work,
        env,
        timeout=600,
    )
    rows = [line for line in table.splitlines() if line.startswith("| ")][1:]
    assert {row.split("|")[1].strip() for row in rows} == {"bm25", "dense"}
    assert len(rows) == 2 * 2 * 3  # retriever x collection x task
    assert (work / "runs" / "results.md").is_file()
    # the papers' tables are package data too, and the stats print Table 4 beside ours
    stats = run([namesake_cli, "amber", "stats", "amber"], work, env)
    assert "| AmbER-H, paper (Table 4, p. 5) | 2,093 |" in stats
    table5 = run([namesake_cli, "paper", "amber", "--table", "5"], work, env)
    assert "| AmbER-H | TF-IDF | 17.3 | 28.5 | 8.2 | 0.0 |" in table5


def test_installed_cli_fits_and_judges_a_scorer_on_the_bundled_evouna(installed):
    """EVOUNA, the scorer card template and the metric's scoring code all come from the
    installed package: fit a hybrid scorer on a few questions, then judge with it."""
    bin_dir, work, env = installed
    namesake_cli = str(bin_dir / "namesake")
    fitted = run(
        [namesake_cli, "wes", "fit-scorer", "--out", "scorer", "--max-questions", "40"],
        work,
        env,
        timeout=600,
    )
    assert "hybrid scorer, threshold" in fitted
    assert "model-index" in (work / "scorer" / "README.md").read_text()
    judged = run(
        [
            namesake_cli,
            "wes",
            "judge",
            "--max-questions",
            "40",
            "--metrics",
            "token_f1",
            "lexical_sum",
            "--scorer",
            "scorer",
            "default",
        ],
        work,
        env,
        timeout=600,
    )
    for row in ("| scorer:scorer |", "| namesake-wes-scorer-v5 |", "| lexical_sum |"):
        assert row in judged
