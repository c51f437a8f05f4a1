"""The tiny hand-made WES data the tests of the two WES training scripts
(train_wes_cross_encoder.py, train_wes_bi_encoder.py) train on: well-known synonyms (article,
link text) as positives, each with one negative, written as a Hub-style dataset folder with a
*pairs and a *hardpairs config. With the arguments of a tiny run on it, the fixtures both test
modules build, and the checks of what both scripts report alike."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pytest
import yaml
from tiny_models import save_tiny_bert
from training_runs import read_metrics, script_fixture

CONFIG = "2018thresh5pairs"
#: the same rows with an extra `negative_kind` column, which the scripts must ignore
HARD_CONFIG = "2018thresh5hardpairs"

SYNONYMS = [
    ("New York City", "NYC"),
    ("New York City", "New York"),
    ("United States", "USA"),
    ("United States", "America"),
    ("United Kingdom", "UK"),
    ("United Kingdom", "Britain"),
    ("John F. Kennedy", "JFK"),
    ("John F. Kennedy", "Kennedy"),
    ("The Beatles", "Beatles"),
    ("The Beatles", "the Fab Four"),
    ("Albert Einstein", "Einstein"),
    ("Los Angeles", "LA"),
    ("Los Angeles", "L.A."),
    ("World War II", "WWII"),
    ("World War II", "Second World War"),
    ("European Union", "EU"),
    ("Federal Bureau of Investigation", "FBI"),
    ("Massachusetts Institute of Technology", "MIT"),
    ("William Shakespeare", "Shakespeare"),
    ("Apple Inc.", "Apple"),
    ("International Business Machines", "IBM"),
    ("Barack Obama", "Obama"),
    ("National Aeronautics and Space Administration", "NASA"),
    ("Leonardo da Vinci", "da Vinci"),
]
#: 14 training pairs, 5 validation and 5 test pairs, each with its negative: 28, 10 and 10 rows
SPLITS = {"train": SYNONYMS[:14], "validation": SYNONYMS[14:19], "test": SYNONYMS[19:]}


def wes_rows(pairs):
    """Positives plus one negative per positive: the link text of the next article."""
    rows = [{"article": a, "link_text": t, "is_same": 1} for a, t in pairs]
    articles = list(dict.fromkeys(a for a, _ in pairs))
    for a, _ in pairs:
        other = articles[(articles.index(a) + 1) % len(articles)]
        text = next(t for b, t in pairs if b == other)
        rows.append({"article": a, "link_text": text, "is_same": 0})
    return rows


def make_wes_folder(root: Path) -> Path:
    """A Hub-style dataset folder: <config>/<split>-*.parquet for CONFIG and HARD_CONFIG,
    the configs listed in the card's header."""
    configs = []
    for config in (CONFIG, HARD_CONFIG):
        for split, pairs in SPLITS.items():
            rows = wes_rows(pairs)
            if config == HARD_CONFIG:
                rows = [r | {"negative_kind": "" if r["is_same"] else "random"} for r in rows]
            path = root / config / f"{split}-00000-of-00001.parquet"
            path.parent.mkdir(parents=True, exist_ok=True)
            datasets.Dataset.from_list(rows).to_parquet(str(path))
        configs.append(
            {
                "config_name": config,
                "data_files": [{"split": s, "path": f"{config}/{s}-*.parquet"} for s in SPLITS],
            }
        )
    header = yaml.safe_dump({"configs": configs})
    (root / "README.md").write_text("---\n" + header + "---\n# tiny WES\n")
    return root


def train_args(tiny, out, *extra, config=CONFIG, model=None) -> list[str]:
    """A tiny run's arguments: `tiny` is (WES folder, tiny BERT), `model` another start; 2
    epochs of 4 steps (28 training rows, batch 8)."""
    data, tiny_model = tiny
    return [
        "--dataset", str(data),
        "--config", config,
        "--model_name_or_path", str(model or tiny_model),
        "--output_dir", str(out),
        "--num_train_epochs", "2",
        "--per_device_train_batch_size", "8",
        "--learning_rate", "1e-3",
        "--max_length", "24",
        "--seed", "0",
        *extra,
    ]  # fmt: skip


def wes_fixtures(script_name: str, config: str = CONFIG):
    """The module-scoped fixtures of a WES training script's tests, made once per test module
    (``script, tiny, trained = wes_fixtures("train_wes_bi_encoder")`` at its top level):
    ``script``, the script as a module; ``tiny``, the tiny WES folder and a tiny BERT (a bare
    encoder); ``trained``, one tiny run on `config` checkpointed every 2 steps, as (output
    folder, returned metrics), the folder named after the script (``wes-bi-encoder``)."""
    script = script_fixture(script_name)

    @pytest.fixture(scope="module", name="tiny")
    def tiny(tmp_path_factory):
        tmp = tmp_path_factory.mktemp("wes")
        return make_wes_folder(tmp / "wes"), save_tiny_bert(tmp / "tiny-bert")

    @pytest.fixture(scope="module", name="trained")
    def trained(tiny, tmp_path_factory, script):
        name = script_name.removeprefix("train_").replace("_", "-")
        out = tmp_path_factory.mktemp("wes_out") / "out" / name
        return out, script.main(train_args(tiny, out, "--checkpointing_steps", "2", config=config))

    return script, tiny, trained


def checked_test_metrics(output_dir: Path, returned: dict) -> dict:
    """The metrics.json of a WES scorer's run, checked to hold what its main() returned and,
    for every scorer of the test split, accuracy, F1 and ROC-AUC in [0, 1] and its threshold."""
    metrics = read_metrics(output_dir)
    assert metrics["test"] == json.loads(json.dumps(returned["test"]))
    for scorer, m in metrics["test"].items():
        assert set(m) == {"accuracy", "f1", "roc_auc", "threshold"}, scorer
        assert 0 <= m["accuracy"] <= 1 and 0 <= m["f1"] <= 1 and 0 <= m["roc_auc"] <= 1
    return metrics


def assert_local_scorer_card_header(header: dict) -> None:
    """A WES scorer's card header, trained from a local model on a local dataset: a
    sentence-transformers model judged by accuracy, F1 and ROC-AUC, claiming no Hub id."""
    assert header["library_name"] == "sentence-transformers"
    assert header["license"] == "apache-2.0"
    assert header["metrics"] == ["accuracy", "f1", "roc_auc"]
    assert "base_model" not in header and "datasets" not in header
