"""namesake.ecqg.dpr, training/train_dpr.py and `namesake ecqg evaluate-dpr` on tiny inputs."""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml
from conftest import load_script
from tiny_models import accelerate_launch, assert_linear_schedule, save_tiny_bert

from namesake.ecqg.dpr.data import DPRFileError, read_dpr_file, read_qa_file
from namesake.ecqg.dpr.evaluation import has_answer, top_k_accuracy
from namesake.ecqg.dpr.modeling import dpr_loss
from namesake.outputs import MARKER, atomic_directory

ROOT = Path(__file__).parent.parent

FACTS = [
    ("Paris", "France", "Paris is the capital and largest city of France."),
    ("Berlin", "Germany", "Berlin is the capital of Germany and its largest city."),
    ("Madrid", "Spain", "Madrid is the capital of Spain, on the river Manzanares."),
    ("Rome", "Italy", "Rome is the capital city of Italy, founded on seven hills."),
    ("Lisbon", "Portugal", "Lisbon is the capital of Portugal, on the Atlantic coast."),
    ("Vienna", "Austria", "Vienna is the capital of Austria, on the Danube."),
    ("Oslo", "Norway", "Oslo is the capital of Norway, at the head of a fjord."),
    ("Dublin", "Ireland", "Dublin is the capital of Ireland, on the river Liffey."),
    ("Warsaw", "Poland", "Warsaw is the capital of Poland, on the Vistula."),
    ("Athens", "Greece", "Athens is the capital of Greece and an ancient city."),
    ("Cairo", "Egypt", "Cairo is the capital of Egypt, near the Nile delta."),
    ("Tokyo", "Japan", "Tokyo is the capital of Japan, on Honshu island."),
    ("Ottawa", "Canada", "Ottawa is the capital of Canada, in Ontario."),
    ("Canberra", "Australia", "Canberra is the capital of Australia, a planned city."),
    ("Nairobi", "Kenya", "Nairobi is the capital of Kenya, in the highlands."),
    ("Lima", "Peru", "Lima is the capital of Peru, on the Pacific coast."),
]


def dpr_items():
    items = []
    for i, (city, country, text) in enumerate(FACTS):
        other = FACTS[(i + 1) % len(FACTS)]
        items.append(
            {
                "question": f"what is the capital of {country}?",
                "answers": [city],
                "positive_ctxs": [{"title": city, "text": text}],
                "hard_negative_ctxs": [{"title": other[0], "text": other[2]}],
            }
        )
    return items


# --- loss -------------------------------------------------------------------------------


def test_dpr_loss_matches_hand_computed_nll():
    # 2 questions, 1 hard negative each: passages [pos0, neg0, pos1, neg1].
    q = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    p = torch.tensor([[2.0, 0.0], [1.0, 0.0], [0.0, 3.0], [0.0, 0.0]])
    # scores q0: [2, 1, 0, 0] target 0; q1: [0, 0, 3, 0] target 2
    nll0 = -2 + math.log(math.exp(2) + math.exp(1) + 1 + 1)
    nll1 = -3 + math.log(1 + 1 + math.exp(3) + 1)
    assert dpr_loss(q, p).item() == pytest.approx((nll0 + nll1) / 2, rel=1e-6)


def test_dpr_loss_in_batch_only_and_layout():
    q = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    p = torch.tensor([[1.0, 0.0], [0.0, 1.0]])  # h = 0: positives at i
    expected = -1 + math.log(math.e + 1)
    assert dpr_loss(q, p).item() == pytest.approx(expected, rel=1e-6)
    # Positives are at i * (1 + h): swapping pos and neg of question 1 raises the loss.
    q = torch.eye(3)[:2] * 5
    good = torch.stack([q[0], -q[0], q[1], -q[1]])
    bad = torch.stack([q[0], -q[0], -q[1], q[1]])
    assert dpr_loss(q, good) < dpr_loss(q, bad)
    with pytest.raises(ValueError):
        dpr_loss(q, good[:3])


def test_dpr_loss_has_gradients():
    q = torch.randn(3, 4, requires_grad=True)
    p = torch.randn(6, 4, requires_grad=True)
    dpr_loss(q, p).backward()
    assert q.grad is not None and p.grad is not None


# --- has_answer / accuracy ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "answers", "expected"),
    [
        ("Paris is the capital of France.", ["paris"], True),
        ("PARIS, France", ["Paris"], True),
        ("He lived in the U.S. for years", ["U.S."], True),
        ("A great party", ["art"], False),  # whole tokens only
        ("Beatles songs", ["the Beatles"], False),  # articles are not removed (as DPR)
        ("Café de Flore", ["cafe"], False),  # NFD keeps the accent as a mark token
        ("Café de Flore", ["Café"], True),
        ("New York City", ["York City", "nothing"], True),
        ("anything", [""], False),
        ("1,000 people", ["1,000"], True),
    ],
)
def test_has_answer(text, answers, expected):
    assert has_answer(text, answers) is expected


def test_top_k_accuracy():
    texts = {"a": "Paris is in France", "b": "Berlin", "c": "Rome"}
    rankings = [["a", "b"], ["b", "c", "a"], ["c"]]
    answers = [["Paris"], ["Paris"], ["Oslo"]]
    metrics = top_k_accuracy(rankings, answers, texts, ks=(1, 2, 3))
    assert metrics == {"top_1": 1 / 3, "top_2": 1 / 3, "top_3": 2 / 3}


# --- files --------------------------------------------------------------------------------


def test_read_dpr_file_counts_and_skips_bad_items(tmp_path, caplog):
    items = dpr_items()[:3]
    del items[1]["positive_ctxs"]
    items.append({"question": "no hard negatives", "answers": ["x"], "positive_ctxs": ["x y"]})
    path = tmp_path / "train.json"
    path.write_text(json.dumps(items))
    report = {}
    kept = read_dpr_file(path, report=report)
    assert [k["question"] for k in kept] == [
        items[0]["question"],
        items[2]["question"],
        "no hard negatives",
    ]
    assert kept[2]["hard_negative_ctxs"] == []
    assert kept[2]["positive_ctxs"] == [{"title": "", "text": "x y"}]
    assert report["skipped"] == 1 and report["items"] == 4
    assert "item 1" in report["problems"][0] and "positive_ctxs" in report["problems"][0]
    assert "item 1" in caplog.text
    with pytest.raises(DPRFileError, match="item 1"):
        read_dpr_file(path, strict=True)


def test_read_qa_file_tsv_and_json(tmp_path):
    tsv = tmp_path / "test.tsv"
    tsv.write_text(
        "who wrote hamlet\t['William Shakespeare', 'Shakespeare']\n"
        'capital of france\t["Paris"]\n'
        "broken line without tab\n"
    )
    report = {}
    rows = read_qa_file(tsv, report=report)
    assert rows == [
        {
            "question": "who wrote hamlet",
            "answers": ["William Shakespeare", "Shakespeare"],
            "index": 0,
        },
        {"question": "capital of france", "answers": ["Paris"], "index": 1},
    ]
    assert report["skipped"] == 1
    js = tmp_path / "test.json"
    js.write_text(json.dumps(dpr_items()[:2] + [{"answers": ["x"]}]))
    assert len(read_qa_file(js)) == 2


# --- training -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("dpr")
    model = save_tiny_bert(tmp / "tiny-bert")
    items = dpr_items()
    train = tmp / "train.json"
    train.write_text(json.dumps(items + [{"question": "bad item"}]))
    dev = tmp / "dev.json"
    dev.write_text(json.dumps(items[:8]))
    return tmp, model, train, dev


def write_fact_passages(path: Path) -> Path:
    """FACTS' passages as a passages Parquet file (`namesake ecqg passages`' columns)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [
        {"id": f"p{i}", "wikipedia_id": str(i), "title": city, "text": text}
        for i, (city, _, text) in enumerate(FACTS)
    ]
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def train_args(tiny, out, *extra):
    tmp, model, train, dev = tiny
    return [
        "--train_file",
        str(train),
        "--validation_file",
        str(dev),
        "--model_name_or_path",
        str(model),
        "--output_dir",
        str(out),
        "--per_device_train_batch_size",
        "8",
        "--learning_rate",
        "1e-3",
        "--num_warmup_steps",
        "0",
        "--max_length",
        "32",
        "--per_device_eval_batch_size",
        "8",
        "--max_grad_norm",
        "2.0",
        *extra,
    ]


@pytest.fixture(scope="module")
def trained(tiny):
    out = tiny[0] / "out" / "dpr"
    metrics = load_script("train_dpr").main(
        train_args(tiny, out, "--num_train_epochs", "4", "--checkpointing_steps", "4")
    )
    return out, metrics


def test_training_loss_decreases(trained):
    _, metrics = trained
    assert metrics["steps"] == 8  # 16 items, batch 8, 4 epochs
    assert metrics["skipped_train_items"] == 1
    assert len(metrics["losses"]) == 8
    assert metrics["epoch_losses"][-1] < metrics["epoch_losses"][0]


def test_encoders_reload(trained):
    from transformers import AutoModel, AutoTokenizer

    out, _ = trained
    for name in ("question_encoder", "passage_encoder"):
        model = AutoModel.from_pretrained(out / name)
        tokenizer = AutoTokenizer.from_pretrained(out / name)
        hidden = model(**tokenizer(["hello"], return_tensors="pt")).last_hidden_state
        assert hidden.shape[-1] == 32
    assert not any(p.name.startswith(".") for p in out.parent.iterdir())


def test_exports_load_in_dense_retriever(trained):
    from namesake.retrieval import DenseRetriever, Document

    out, _ = trained
    documents = [Document(str(i), city, text) for i, (city, _, text) in enumerate(FACTS)]
    retriever = DenseRetriever.build(
        documents,
        model=str(out / "st_passage_encoder"),
        query_model=str(out / "st_question_encoder"),
        show_progress=False,
    )
    results = retriever.search(["what is the capital of France?"], k=3)
    assert len(results[0]) == 3
    assert retriever.settings["dimension"] == 32


def test_model_card_has_eval_results(trained):
    out, metrics = trained
    card = (out / "README.md").read_text()
    assert "{{" not in card
    header = yaml.safe_load(card.split("---")[1])
    results = header["model-index"][0]["results"][0]
    types = {m["type"]: m["value"] for m in results["metrics"]}
    assert set(types) == {f"top_{k}_accuracy" for k in (1, 5, 20, 100)}
    assert results["dataset"]["split"] == "validation"  # --validation_split_name's default
    assert types["top_1_accuracy"] == pytest.approx(metrics["validation"]["top_1"], abs=1e-4)
    assert "| 1 |" in card
    assert header["library_name"] == "sentence-transformers"


def test_resume_continues_step_count(tiny, trained):
    out, _ = trained
    checkpoints = Path(f"{out}-checkpoints")
    assert (checkpoints / "step_4").is_dir() and (checkpoints / "step_8").is_dir()
    resumed = load_script("train_dpr").main(
        train_args(
            tiny,
            tiny[0] / "resumed" / "dpr",
            "--num_train_epochs",
            "4",
            "--checkpoint_dir",
            str(checkpoints),
            "--resume_from_checkpoint",
            str(checkpoints / "step_4"),
        )
    )
    assert resumed["steps"] == 8
    assert len(resumed["losses"]) == 8  # 4 restored + 4 new
    assert resumed["losses"][:4] == pytest.approx(trained[1]["losses"][:4])


def test_push_to_hub_is_mocked(tiny, monkeypatch):
    """The Hub is replaced (no network): the trained folder is staged and checked as
    `namesake publish model` does, and the staged copy's files are uploaded."""
    from huggingface_hub import HfApi

    from namesake.publish.staging import publishable_files

    calls = []
    monkeypatch.setenv("HF_TOKEN", "hf_test_token")
    monkeypatch.setattr(HfApi, "create_repo", lambda self, *a, **k: calls.append(("create", a, k)))
    monkeypatch.setattr(
        HfApi,
        "upload_folder",
        lambda self, **k: calls.append(("upload", publishable_files(k["folder_path"]), k)),
    )
    out = tiny[0] / "pushed" / "dpr"
    load_script("train_dpr").main(
        train_args(
            tiny, out, "--max_train_steps", "1", "--push_to_hub", "--hub_model_id", "me/tiny-dpr"
        )
    )
    assert [c[0] for c in calls] == ["create", "upload"]
    assert calls[1][2]["repo_id"] == "me/tiny-dpr"
    assert calls[1][1] == calls[1][2]["allow_patterns"] == publishable_files(out)
    assert "question_encoder/config.json" in calls[1][1]


def test_evaluate_dpr(tiny, trained, tmp_path, capsys):
    from namesake.cli import main

    out, _ = trained
    passages = write_fact_passages(tmp_path / "passages.parquet")
    test = tmp_path / "test.tsv"
    test.write_text("".join(f"capital of {c}\t['{city}']\n" for city, c, _ in FACTS[:6]))
    common = ["ecqg", "evaluate-dpr", "--model-dir", str(out), "--passages", str(passages)]
    common += ["--test-file", str(test)]
    main([*common, "--cutoffs", "1", "5", "20", "--out", str(tmp_path / "m.json")])
    result = json.loads((tmp_path / "m.json").read_text())
    metrics = result["metrics"]
    assert set(metrics) == {"top_1", "top_5", "top_20"}
    assert metrics["top_20"] == 1.0  # 16 passages: every answer is within the first 20
    assert metrics["top_1"] <= metrics["top_5"] <= metrics["top_20"]
    assert result["questions"] == 6
    assert result["similarity"] == "dot"  # the exports declare it: searched as trained
    assert capsys.readouterr().out.split()[:2] == ["top_1", f"{metrics['top_1']:.4f}"]
    for similarity in ("dot", "cosine"):
        forced = tmp_path / f"{similarity}.json"
        main([*common, "--cutoffs", "1", "20", "--similarity", similarity, "--out", str(forced)])
        forced = json.loads(forced.read_text())
        assert forced["metrics"]["top_20"] == 1.0 and forced["similarity"] == similarity
        if similarity == "dot":
            assert forced["metrics"] == {k: metrics[k] for k in ("top_1", "top_20")}


def test_exports_declare_dot_product(trained):
    from sentence_transformers import SentenceTransformer

    out, _ = trained
    for name in ("st_question_encoder", "st_passage_encoder"):
        config = json.loads((out / name / "config_sentence_transformers.json").read_text())
        assert config["similarity_fn_name"] == "dot"
    model = SentenceTransformer(str(out / "st_passage_encoder"), device="cpu")
    a, b = model.encode(["Paris is in France", "Berlin"], convert_to_tensor=True)
    assert model.similarity(a[None], b[None]).item() == pytest.approx((a @ b).item(), rel=1e-5)


def test_gather_with_grad_is_identity_in_one_process():
    from namesake.ecqg.dpr.modeling import gather_with_grad

    x = torch.randn(3, 2, requires_grad=True)
    assert gather_with_grad(x) is x


def test_two_processes_schedule_and_steps_match_one(tiny, tmp_path):
    """2 processes × batch 2 and 1 process × batch 4: the same global batch, so the same
    optimizer steps and the same learning rate at each; warm-up, peak, 0 at the last step."""
    epochs = ["--num_train_epochs", "2", "--num_warmup_steps", "2", "--logging_steps", "1"]
    out = tmp_path / "dpr2"
    accelerate_launch(
        ROOT / "training" / "train_dpr.py",
        train_args(tiny, out, "--per_device_train_batch_size", "2", *epochs),
    )
    two = json.loads((out / "metrics.json").read_text())
    one = load_script("train_dpr").main(
        train_args(tiny, tmp_path / "dpr1", "--per_device_train_batch_size", "4", *epochs)
    )
    assert two["num_processes"] == 2 and one["num_processes"] == 1
    assert two["steps"] == one["steps"] == 8  # 16 items / global batch 4 × 2 epochs
    assert_linear_schedule(two["learning_rates"], 1e-3, warmup=2, steps=8)
    assert two["learning_rates"] == pytest.approx(one["learning_rates"])
    assert (out / "st_question_encoder" / "modules.json").is_file()


# --- several training files, an empty one, the held-out split's name -----------------------


def test_two_train_files_counted_and_trained_together(tiny, tmp_path):
    items = dpr_items()
    gold, synthetic = tmp_path / "gold.json", tmp_path / "synthetic.json"
    gold.write_text(json.dumps(items[:10]))
    synthetic.write_text(json.dumps(items[10:] + [{"question": "no answers"}]))
    out = tmp_path / "mixed"
    args = train_args(tiny, out, "--num_train_epochs", "2", "--per_device_train_batch_size", "4")
    args[1:2] = [str(gold), str(synthetic)]  # replaces the fixture's single --train_file
    # A process of its own: Accelerate keeps one mixed precision per process, and the other
    # tests' runs in this one use none.
    done = subprocess.run(
        [sys.executable, str(ROOT / "training" / "train_dpr.py"), *args,
         "--validation_split_name", "held-out passages", "--mixed_precision", "bf16"],
        env=dict(os.environ, CUDA_VISIBLE_DEVICES="", PYTHONPATH=str(ROOT)),
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["train_files"] == [
        {"path": str(gold), "items": 10, "skipped": 0},
        {"path": str(synthetic), "items": 6, "skipped": 1},
    ]
    assert metrics["num_train"] == 16 and metrics["skipped_train_items"] == 1
    assert metrics["steps"] == len(metrics["losses"]) == 8  # 16 items / batch 4 × 2 epochs
    assert metrics["settings"]["mixed_precision"] == "bf16"
    assert metrics["validation"]["split"] == "held-out passages"
    card = (out / "README.md").read_text()
    assert "16 DPR-format items: `gold.json` (10 items), `synthetic.json` (6 items)" in card
    header = yaml.safe_load(card.split("---")[1])
    results = header["model-index"][0]["results"]
    assert {r["dataset"]["split"] for r in results} == {"held-out passages"}
    assert {r["dataset"]["name"] for r in results} == {"dev.json"}
    metric_types = {m["type"] for r in results for m in r["metrics"]}
    assert metric_types == {f"top_{k}_accuracy" for k in (1, 5, 20, 100)}


@pytest.mark.parametrize("pooling", ["cls", "mean"])
def test_validation_passages_make_the_card_report_what_evaluate_dpr_measures(
    tiny, tmp_path, pooling
):
    """--validation_passages: the validation questions rank a whole passages file, and the
    figures are the ones `namesake ecqg evaluate-dpr` gives the saved encoders on the same
    file (so the exports pool as training did, CLS or mean)."""
    from namesake.ecqg.dpr.evaluation import DEFAULT_KS, evaluate_retrieval, model_dir_encoders

    passages = write_fact_passages(tmp_path / "passages.parquet")
    out = tmp_path / "dpr"
    args = train_args(tiny, out, "--max_train_steps", "2", "--validation_passages", str(passages))
    metrics = load_script("train_dpr").main([*args, "--pooling", pooling])
    assert metrics["settings"]["pooling"] == pooling
    config = json.loads((out / "st_passage_encoder" / "1_Pooling" / "config.json").read_text())
    assert config["pooling_mode"] == pooling
    validation = metrics["validation"]
    assert validation["passages"] == len(FACTS) and validation["questions"] == 8
    passage, question = model_dir_encoders(out)
    measured = evaluate_retrieval(passages, tiny[3], passage, question)
    assert measured["similarity"] == "dot"
    for k in DEFAULT_KS:
        assert validation[f"top_{k}"] == pytest.approx(measured["metrics"][f"top_{k}"])
    assert (
        f"ranking the {len(FACTS)} passages of `passages.parquet`"
        in (out / "README.md").read_text()
    )


def test_embeddings_cache_shares_the_validation_encoding_with_evaluate_dpr(tiny, tmp_path, capsys):
    """--embeddings_cache: the validation's passage embeddings of the saved passage encoder
    are stored; `evaluate-dpr --embeddings-cache` reads them (no second encoding) and gives
    the card's figures, which are also those of an evaluation without the cache."""
    from namesake.cli import main
    from namesake.ecqg.dpr.embedding_cache import EmbeddingCache
    from namesake.ecqg.dpr.evaluation import evaluate_retrieval, model_dir_encoders

    passages = write_fact_passages(tmp_path / "passages.parquet")
    out, cache = tmp_path / "dpr", tmp_path / "embeddings"
    args = train_args(tiny, out, "--max_train_steps", "2", "--validation_passages", str(passages))
    metrics = load_script("train_dpr").main([*args, "--embeddings_cache", str(cache)])
    (entry,) = cache.glob("*.npy")
    validation = {k: v for k, v in metrics["validation"].items() if k.startswith("top_")}
    passage, question = model_dir_encoders(out)
    reader = EmbeddingCache(cache)
    cached = evaluate_retrieval(passages, tiny[3], passage, question, embeddings_cache=reader)
    assert reader.lookups == ["hit"]
    assert cached["metrics"] == validation
    encoded = evaluate_retrieval(passages, tiny[3], passage, question)
    for k, value in encoded["metrics"].items():
        assert cached["metrics"][k] == pytest.approx(value)
    main(["ecqg", "evaluate-dpr", "--run", f"DPR={out}", "--passages", str(passages),
          "--test-file", str(tiny[3]), "--embeddings-cache", str(cache),
          "--out", str(tmp_path / "runs.json")])  # fmt: skip
    assert "passage embeddings from" in capsys.readouterr().err
    assert list(cache.glob("*.npy")) == [entry]
    (row,) = json.loads((tmp_path / "runs.json").read_text())["runs"]
    assert row["metrics"] == validation


def test_empty_train_file_is_an_error_naming_it(tiny, tmp_path):
    empty = tmp_path / "synthetic.json"
    empty.write_text("[]")
    out = tmp_path / "mixed"
    args = train_args(tiny, out)
    args[1:2] = [args[1], str(empty)]
    with pytest.raises(SystemExit, match=f"{empty} holds no training item"):
        load_script("train_dpr").main(args)
    assert not out.exists()


def test_empty_train_file_explained_not_trained(tiny, tmp_path):
    from namesake.ecqg.dpr.not_trained import not_trained_reason

    empty = tmp_path / "synthetic.json"
    empty.write_text(json.dumps([{"question": "malformed: no answers"}]))
    out = tmp_path / "mixed"
    # an earlier run's model, written by the script: it must not remain
    with atomic_directory(out, writer="training/train_dpr.py") as staging:
        (staging / "question_encoder").mkdir()
        (staging / "question_encoder" / "model.safetensors").write_bytes(b"weights")
    args = train_args(tiny, out, "--if_empty", "explain")
    args[1:2] = [args[1], str(empty)]
    assert load_script("train_dpr").main(args) is None
    assert sorted(p.name for p in out.iterdir()) == [MARKER, "not_trained.json"]
    reason = not_trained_reason(out)
    assert reason == f"{empty} holds no training item (1 malformed skipped)"
    assert not not_trained_reason(tmp_path)  # only the output folder says so
