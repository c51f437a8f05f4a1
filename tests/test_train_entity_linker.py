"""training/train_entity_linker.py on a small hand-made dump of namesakes and a tiny BERT: the
loss, the outputs (sentence-transformers folder, linker.json, metrics, card), learning, the
retriever reading the trained folder, and two processes against one."""

import json
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
import training_runs as runs
from dumps import write_dump
from tiny_models import save_tiny_bert, without_dropout

from namesake.linking.linker import EntityLinkRetriever
from namesake.retrieval.corpus import Document
from namesake.training import OPTIMISATION_SETTINGS

# (link text, target): namesakes of Lincoln, Paris, Mercury and Jordan
LINKS = [
    ("Lincoln", "Lincoln, Nebraska"), ("Abraham Lincoln", "Abraham Lincoln"),
    ("Lincoln", "Lincoln (2012 film)"), ("Paris", "Paris"), ("Paris", "Paris, Texas"),
    ("Paris Hilton", "Paris Hilton"), ("Mercury", "Mercury (planet)"),
    ("Freddie Mercury", "Freddie Mercury"), ("mercury", "Mercury (element)"),
    ("Jordan", "Jordan"), ("Michael Jordan", "Michael Jordan"), ("the river", "Jordan River"),
]  # fmt: skip
SENTENCES = [
    "The report on [[{target}|{text}]] was written in {year}.",
    "Many visitors came to see [[{target}|{text}]] that summer.",
    "A long article about [[{target}|{text}]] appeared in the paper.",
    "Students of history still discuss [[{target}|{text}]] today.",
]


def make_dump(path: Path) -> Path:
    """12 articles of 4 linked sentences (48 mentions); 4 targets have their own article."""
    articles = {}
    for number in range(12):
        sentences = []
        for position, template in enumerate(SENTENCES):
            text, target = LINKS[(number + 5 * position) % len(LINKS)]
            sentences.append(template.format(target=target, text=text, year=1900 + number))
        articles[f"Essay {number}"] = " ".join(sentences)
    for target in ("Abraham Lincoln", "Paris", "Mercury (planet)", "Jordan"):
        articles[target] = f"'''{target}''' is a page about {target.split()[0]} and more."
    return write_dump(path, articles, {"Lincoln (film)": "Lincoln (2012 film)"})


script = runs.script_fixture("train_entity_linker")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("linker_train")
    return make_dump(tmp / "dump.xml"), save_tiny_bert(tmp / "tiny-bert")


def train_args(tiny, out, *extra, model=None):
    dump, tiny_model = tiny
    return [
        "--wikipedia", str(dump),
        "--model_name_or_path", str(model or tiny_model),
        "--output_dir", str(out),
        "--num_train_epochs", "2",
        "--per_device_train_batch_size", "8",
        "--learning_rate", "1e-3",
        "--max_length", "32",
        "--held_out_share", "0.25",
        "--same_name_negatives", "2",
        "--seed", "0",
        *extra,
    ]  # fmt: skip


@pytest.fixture(scope="module")
def trained(tiny, tmp_path_factory, script):
    """One run of 6 epochs, 6 words of context a side: (output folder, returned metrics)."""
    out = tmp_path_factory.mktemp("linker_out") / "entity-linker"
    metrics = script.main(train_args(tiny, out, "--num_train_epochs", "6", "--context_words", "6"))
    return out, metrics


# --- the loss ---


def test_loss_is_cross_entropy_over_gold_namesakes_and_batch_pages(script):
    torch.manual_seed(0)
    mentions = F.normalize(torch.randn(2, 4), dim=-1)
    golds = F.normalize(torch.randn(2, 4), dim=-1)
    negatives = F.normalize(torch.randn(3, 4), dim=-1)
    # both mentions link page 5; page 7 is a namesake; -1 pads; page 5 again as a negative
    gold_ids = torch.tensor([5, 5])
    negative_ids = torch.tensor([7, -1, 5])
    loss = script.linking_loss(mentions, golds, negatives, gold_ids, negative_ids, scale=10.0)
    expected = []
    for i in range(2):
        # candidates: own gold, then page 7; never the other gold row, padding or page 5 again
        logits = 10.0 * torch.stack([mentions[i] @ golds[i], mentions[i] @ negatives[0]])
        expected.append(-torch.log_softmax(logits, 0)[0])
    assert loss.item() == pytest.approx(torch.stack(expected).mean().item(), rel=1e-5)


# --- outputs ---


def test_outputs_metrics_and_card(trained):
    out, metrics = trained
    assert runs.read_metrics(out) == json.loads(json.dumps(metrics))
    assert metrics["num_mentions"] == {"dump": 48, "train": 36, "held_out": 12}
    assert metrics["num_pages"] == len(LINKS) and metrics["num_pages_with_text"] == 4
    held_out = metrics["held_out"]
    for model in ("trained", "zero_shot"):
        everything = held_out[model]["all"]
        assert everything["mentions"] == 12
        assert 0 <= everything["accuracy_at_1"] <= everything["accuracy_at_10"] <= 1
        assert held_out[model]["has namesakes"]["mentions"] > 0
    assert metrics["settings"]["mention_markers"] == ["[unused0]", "[unused1]"]
    settings = metrics["settings"]  # the shared optimisation settings, then the linker's own
    assert {*OPTIMISATION_SETTINGS, "num_warmup_steps", "context_words"} <= settings.keys()
    assert json.loads((out / "linker.json").read_text()) == {"context_words": 6, "page_words": 48}
    card = (out / "README.md").read_text()
    assert "model-index:" in card and "accuracy@1" in card
    assert "| held-out mentions | n | accuracy@1 trained | accuracy@1 zero-shot |" in card


def test_validation_file_holds_out_another_dumps_links(tiny, script, tmp_path):
    """--validation_file: every link of --wikipedia is trained on; the held-out mentions are
    the other dump's links, but for those of an article --wikipedia also has; its link targets
    join the pages, with the opening words of its articles."""
    held_out = write_dump(
        tmp_path / "held_out.xml",
        {
            "Essay 0": "A trained article again links [[Jordan]] here.",
            "Review 1": "The film [[Lincoln (2012 film)|Lincoln]] was shown. "
            "The story of [[Paris (mythology)|Paris]] is old.",
            "Review 2": "Fans of [[Freddie Mercury|Mercury]] gathered in [[Paris]].",
            "Paris (mythology)": "'''Paris''' is a prince of Troy.",
        },
    )
    out = tmp_path / "out"
    extra = ["--validation_file", str(held_out), "--num_train_epochs", "1"]
    metrics = script.main(train_args(tiny, out, *extra))
    assert metrics["num_mentions"] == {"dump": 48, "train": 48, "held_out": 4}
    assert metrics["num_pages"] == len(LINKS) + 1 and metrics["num_pages_with_text"] == 5
    assert metrics["settings"]["validation_file"] == str(held_out)
    assert "the links of the articles of `held_out.xml`" in (out / "README.md").read_text()


def test_the_saved_folder_keeps_the_markers_whole(trained):
    from sentence_transformers import SentenceTransformer

    out, _ = trained
    model = SentenceTransformer(str(out), device="cpu")
    tokens = model.tokenizer.tokenize("a [unused0] Lincoln [unused1] b")
    assert tokens == ["a", "[unused0]", "lincoln", "[unused1]", "b"]


def test_training_lowers_the_loss_and_links_better_than_zero_shot(trained):
    _, metrics = trained
    losses = metrics["losses"]
    steps_per_epoch = len(losses) // 6
    assert sum(losses[-steps_per_epoch:]) < sum(losses[:steps_per_epoch])
    trained_at_1 = metrics["held_out"]["trained"]["all"]["accuracy_at_1"]
    assert trained_at_1 > metrics["held_out"]["zero_shot"]["all"]["accuracy_at_1"]


def test_the_retriever_reads_the_trained_folder(trained):
    out, _ = trained
    documents = [Document(str(n), title, "") for n, (_, title) in enumerate(LINKS)]
    retriever = EntityLinkRetriever.build(documents, model=str(out), show_progress=False)
    assert retriever.settings["context_words"] == 6
    (marked,), _ = retriever.mention_inputs(["one two three four five six seven Lincoln eight"])
    assert marked == "two three four five six seven [unused0] Lincoln [unused1] eight"
    (ranking,) = retriever.search(["Who directed Lincoln?"], k=len(LINKS))
    assert len(ranking) == len(LINKS)


# --- processes ---


def test_two_processes_match_one(tiny, script, tmp_path):
    """2 processes × batch 4 against 1 process × batch 8, dropout off, 24 mentions (3 global
    batches an epoch): the same optimizer steps and learning rates, and since the loss is over
    the gathered global batch, the same losses, up to float noise."""
    model = without_dropout(tiny[1], tmp_path / "no-dropout")
    extra = ["--num_warmup_steps", "2", "--max_train_mentions", "24"]
    two, one = runs.two_processes_and_one(
        script, lambda out, *more: train_args(tiny, out, *extra, *more, model=model), tmp_path
    )
    runs.assert_same_training(two, one, steps=6, warmup=2, peak=1e-3)
    for model_name in ("trained", "zero_shot"):
        assert two["held_out"][model_name] == one["held_out"][model_name]


# --- arguments ---


def test_bad_arguments_are_refused(script, tiny, tmp_path, capsys):
    for extra, message in (
        (["--held_out_share", "1"], "--held_out_share"),
        (["--scale", "0"], "--scale"),
        (["--wikipedia", str(tmp_path / "missing.xml")], "no such file"),
    ):
        with pytest.raises(SystemExit):
            script.parse_args(train_args(tiny, tmp_path / "x", *extra))
        assert message in capsys.readouterr().err
