"""Train an entity linker (BLINK-style bi-encoder) on Wikipedia's own links.

A linear script in the style of transformers' ``examples/pytorch/*_no_trainer.py``, with
Accelerate and the plumbing of ``namesake.training``, the sibling of
``train_wes_bi_encoder.py``. Every link of the articles of a pages-articles dump
(``--wikipedia``; default the bundled excerpt ``tests/data/enwiki-sample-pages-articles.xml.bz2``,
the one the Makefile uses) is a training mention: its link text marked in its sentence
(``left [unused0] text [unused1] right``), to be matched with the page it links to, embedded as
its title and opening words (``namesake.linking``). The pages are every link target; a target
whose article is not in the dump is known by its title only. Source articles are split: the
links of ``--held_out_share`` of them are held out whole for evaluation, so no held-out
article's link is trained on. With ``--validation_file`` (another pages-articles dump) every
link of ``--wikipedia`` is trained on and the held-out mentions are the links of the
validation dump's articles instead, but for those of articles ``--wikipedia`` also has; the
pages are then the link targets of both.

The encoder is one sentence-transformers model for both sides (``--model_name_or_path``,
default the bundled all-MiniLM-L6-v2), its embeddings L2-normalised (cosine).

**Loss: cross-entropy over [gold, same-name negatives, in-batch pages].** Each mention's
candidates are its gold page, up to ``--same_name_negatives`` pages whose title shares its name
("Lincoln" -> "Lincoln, Nebraska", "Abraham Lincoln"; ``namesake.linking.same_name``, most linked
first), and every other page of the batch (the other mentions' golds and namesakes); a page
equal to the mention's gold elsewhere in the batch is masked out. Logits are ``--scale`` times
the cosine. Namesakes are the negatives AmbER is about: a linker trained on in-batch negatives
only learns to tell "Lincoln" from "Oxygen", not from "Lincoln, Nebraska". With several
processes every process gathers the global batch's embeddings (``gather_with_grad``), so the
loss is the single-process loss of the global batch; it is multiplied by the process count
before ``backward`` so that DDP's gradient average gives its gradient.

Evaluation: accuracy@1 and @10 of linking the held-out mentions against every page, for the
trained encoder and for the starting encoder (zero-shot), overall and by slice (mentions with
namesakes or without, mention text equal to the title or not, pages with opening words or
title only), and the mentions one gets right and the other wrong. Outputs, in
``--output_dir`` (written to a temporary sibling folder first, then renamed):

- a sentence-transformers folder (the mention markers are registered special tokens of its
  tokenizer) and ``linker.json`` (context and page lengths), which
  ``namesake retrieve --retriever link --model OUTPUT_DIR`` uses;
- ``metrics.json``: settings, loss and learning rate per optimizer step, both evaluations;
- ``README.md``: the model card from ``model_cards/entity_linker.md``, with a ``model-index``.

    accelerate launch training/train_entity_linker.py --output_dir entity-linker \\
        [--wikipedia DUMP.xml.bz2] [--model_name_or_path PATH_OR_HUB_ID] \\
        [--num_train_epochs 1] [--per_device_train_batch_size 32] [--learning_rate 2e-5] \\
        [--max_train_mentions N] [--max_eval_mentions N] [--same_name_negatives 3] \\
        [--held_out_share 0.1 | --validation_file HELD_OUT_DUMP.xml.bz2] [--max_length 64] \\
        [--scale 20] [--seed 0] [--checkpointing_steps N] [--resume_from_checkpoint latest] \\
        [--max_grad_norm 1.0] [--mixed_precision no|fp16|bf16|auto] \\
        [--push_to_hub --hub_model_id USER/NAME]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader
from tqdm.auto import tqdm

from namesake import training
from namesake.bundled_models import MINILM_HUB_ID, minilm_path
from namesake.ecqg.dpr.modeling import gather_with_grad
from namesake.linking.inputs import (
    CONTEXT_WORDS,
    PAGE_WORDS,
    mark_mention,
    mention_markers,
    page_input,
    page_separator,
    write_linker_settings,
)
from namesake.linking.same_name import SameNameIndex, name_key
from namesake.linking.wiki_mentions import read_link_data, split_by_source
from namesake.outputs import add_input

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_WIKIPEDIA = ROOT / "tests" / "data" / "enwiki-sample-pages-articles.xml.bz2"
CARD_TEMPLATE = ROOT / "model_cards" / "entity_linker.md"
TOP_K = (1, 10)
#: wrong links listed in metrics.json, per direction (trained loses / trained wins)
EXAMPLES = 20
logger = training.setup_logging(__name__)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="Train a BLINK-style entity linker.")
    add_input(
        parser,
        "--wikipedia",
        default=str(DEFAULT_WIKIPEDIA),
        help="pages-articles XML dump (bz2 or plain; default: the bundled excerpt)",
    )
    training.add_training_arguments(
        parser,
        model_help="sentence encoder to start from, path or Hub id (default: the bundled "
        "all-MiniLM-L6-v2)",
        validation_help="pages-articles dump whose links are the held-out mentions, instead of "
        "--held_out_share of --wikipedia's articles (its articles that --wikipedia also has "
        "are left out)",
        learning_rate=2e-5,
        **training.ENCODER_FINE_TUNING_DEFAULTS,
    )
    parser.add_argument(
        "--max_length", type=int, default=64, help="tokens kept per mention and per page input"
    )
    parser.add_argument(
        "--context_words",
        type=int,
        default=CONTEXT_WORDS,
        help="words of the sentence kept on each side of a mention",
    )
    parser.add_argument(
        "--page_words", type=int, default=PAGE_WORDS, help="opening words of a page after its title"
    )
    parser.add_argument(
        "--same_name_negatives",
        type=int,
        default=3,
        help="pages sharing the mention's name added as negatives per mention (0: in-batch only)",
    )
    parser.add_argument(
        "--scale", type=float, default=20.0, help="logit scale: cosines are multiplied by it"
    )
    parser.add_argument(
        "--held_out_share",
        type=float,
        default=0.1,
        help="share of source articles whose links are held out for evaluation (without "
        "--validation_file)",
    )
    parser.add_argument(
        "--max_train_mentions",
        type=int,
        default=None,
        help="train on a seeded random N of the training mentions",
    )
    parser.add_argument(
        "--max_eval_mentions",
        type=int,
        default=None,
        help="evaluate on a seeded random N of the held-out mentions",
    )
    args = parser.parse_args(argv)
    training.check_training_arguments(
        parser, args, "max_length", "page_words", "max_train_mentions", "max_eval_mentions"
    )
    if args.scale <= 0:
        parser.error("--scale must be positive")
    if args.context_words < 0 or args.same_name_negatives < 0:
        parser.error("--context_words and --same_name_negatives must be at least 0")
    if not 0 < args.held_out_share < 1:
        parser.error("--held_out_share must be between 0 and 1")
    for option, path in (
        ("--wikipedia", args.wikipedia),
        ("--validation_file", args.validation_file),
    ):
        if path is not None and not Path(path).is_file():
            parser.error(f"{option} {path}: no such file")
    return args


# --- model and loss ---


def load_encoder(name: str, max_length: int):
    """The sentence-transformers encoder, its transformer's unused pooler frozen
    (:func:`namesake.training.freeze_unused_pooler`)."""
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(name, device="cpu")
    model.max_seq_length = max_length
    training.freeze_unused_pooler(model[0].auto_model)
    return model


def embed(model, features) -> torch.Tensor:
    """L2-normalised sentence embeddings of tokenised texts."""
    return F.normalize(model(features)["sentence_embedding"].float(), dim=-1)


def linking_loss(mentions, golds, negatives, gold_ids, negative_ids, scale: float):
    """Cross-entropy of each mention over the batch's pages: ``golds`` [B, d] (row i: mention
    i's gold page, ids ``gold_ids``) then ``negatives`` [M, d] (ids ``negative_ids``, -1 for
    padding). A page that is mention i's gold, other than its own gold row, and padding are
    masked out; the label of mention i is column i."""
    pages = torch.cat([golds, negatives])
    page_ids = torch.cat([gold_ids, negative_ids])
    logits = scale * mentions @ pages.T
    rows = torch.arange(len(mentions), device=logits.device)
    duplicate = page_ids[None, :] == gold_ids[:, None]
    duplicate[rows, rows] = False
    mask = duplicate | (page_ids[None, :] < 0)
    logits = logits.masked_fill(mask, float("-inf"))
    return F.cross_entropy(logits, rows)


# --- evaluation ---


def ranks_of_gold(mentions: torch.Tensor, pages: torch.Tensor, golds: np.ndarray, top: int):
    """Per mention, the 1-based rank of its gold page among all pages by cosine, or 0 when it
    is not in the top `top` (ties: the lower page index first)."""
    ranks = np.zeros(len(golds), dtype=np.int64)
    for start in range(0, len(mentions), 256):
        scores = mentions[start : start + 256] @ pages.T
        best = torch.topk(scores, min(top, pages.shape[0]), dim=1).indices.numpy()
        for row, found in enumerate(best):
            hit = np.flatnonzero(found == golds[start + row])
            ranks[start + row] = hit[0] + 1 if len(hit) else 0
    return ranks


def accuracies(ranks: np.ndarray) -> dict:
    """accuracy@k for every k of TOP_K, and the count."""
    scores = {
        f"accuracy_at_{k}": float(np.mean((ranks >= 1) & (ranks <= k))) if len(ranks) else 0.0
        for k in TOP_K
    }
    return scores | {"mentions": int(len(ranks))}


def slices(mentions, pages: dict[str, str], namesakes: SameNameIndex) -> dict[str, np.ndarray]:
    """Boolean masks over the evaluation mentions: the slices the table reports."""
    ambiguous = np.array([bool(namesakes.namesakes(m.text, m.target, 1)) for m in mentions])
    equal = np.array([name_key(m.text) == name_key(m.target) for m in mentions])
    described = np.array([bool(pages[m.target]) for m in mentions])
    everything = np.ones(len(mentions), dtype=bool)
    return {
        "all": everything,
        "has namesakes": ambiguous,
        "no namesake": ~ambiguous,
        "mention = title": equal,
        "mention ≠ title": ~equal,
        "page with opening words": described,
        "title-only page": ~described,
    }


def evaluation(ranks: np.ndarray, masks: dict[str, np.ndarray]) -> dict:
    return {name: accuracies(ranks[mask]) for name, mask in masks.items()}


def results_table(trained: dict, zero_shot: dict) -> str:
    out = [
        "| held-out mentions | n | accuracy@1 trained | accuracy@1 zero-shot | "
        "accuracy@10 trained | accuracy@10 zero-shot |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, t in trained.items():
        z = zero_shot[name]
        cells = [t["accuracy_at_1"], z["accuracy_at_1"], t["accuracy_at_10"], z["accuracy_at_10"]]
        shown = [f"{c:.3f}" if t["mentions"] else "–" for c in cells]
        out.append(f"| {name} | {t['mentions']} | " + " | ".join(shown) + " |")
    return "\n".join(out)


def card_data(args, base_model: str, trained: dict, model_id: str = "") -> dict:
    """The card's YAML header, with a ``model-index`` of the held-out results."""
    from huggingface_hub import EvalResult

    eval_results = [
        EvalResult(
            task_type="entity-linking",
            task_name="Entity linking (Wikipedia link mentions)",
            dataset_type="wikipedia",
            dataset_name="Wikipedia links of held-out articles "
            f"({Path(args.validation_file or args.wikipedia).name})",
            dataset_split="held-out articles",
            metric_type=f"accuracy@{k}",
            metric_name=f"Accuracy@{k}",
            metric_value=round(trained["all"][f"accuracy_at_{k}"], 4),
        )
        for k in TOP_K
    ]
    return {
        "library_name": "sentence-transformers",
        "pipeline_tag": "sentence-similarity",
        "license": args.license,
        "base_model": training.hub_id(base_model),
        "language": ["en"],
        "metrics": ["accuracy"],
        "tags": ["sentence-transformers", "bi-encoder", "entity-linking", "blink", "amber"],
        "model_name": model_id or None,
        "eval_results": eval_results,
    }


def split_mentions(args, data, show_progress: bool):
    """``(training mentions, held-out mentions, pages)``. Without ``--validation_file``, the
    links of ``--held_out_share`` of ``--wikipedia``'s articles are held out. With it, every
    link of ``--wikipedia`` is trained on and the held-out mentions are the validation dump's,
    but for those of articles ``--wikipedia`` also has (trained on, so not held out); the pages
    are the link targets of both, with opening words from whichever dump has the article."""
    if args.validation_file is None:
        train, held_out = split_by_source(data.mentions, args.held_out_share, seed=args.seed)
        return train, held_out, data.pages
    validation = read_link_data(args.validation_file, args.page_words, show_progress)
    trained_sources = {m.source for m in data.mentions}
    held_out = [m for m in validation.mentions if m.source not in trained_sources]
    if not held_out:
        sys.exit(f"{args.validation_file}: no link in an article that --wikipedia lacks")
    titles = dict.fromkeys([*data.pages, *validation.pages])
    pages = {title: data.pages.get(title) or validation.pages.get(title, "") for title in titles}
    return list(data.mentions), held_out, pages


def main(argv=None):
    args = parse_args(argv)
    accelerator = training.make_accelerator(args)
    started = time.time()

    # --- data: link mentions, held out by source article; pages: every link target ---
    show_progress = accelerator.is_local_main_process
    data = read_link_data(args.wikipedia, args.page_words, show_progress=show_progress)
    train_mentions, eval_mentions, pages = split_mentions(args, data, show_progress)
    random.Random(args.seed).shuffle(train_mentions)
    random.Random(args.seed + 1).shuffle(eval_mentions)
    train_mentions = train_mentions[: args.max_train_mentions]
    eval_mentions = eval_mentions[: args.max_eval_mentions]
    titles = list(pages)
    page_numbers = {title: number for number, title in enumerate(titles)}
    namesakes = SameNameIndex(titles, Counter(m.target for m in train_mentions))
    logger.info(
        f"{len(data.mentions)} link mentions of {len({m.source for m in data.mentions})} "
        f"articles; training on {len(train_mentions)}, evaluating on {len(eval_mentions)} "
        f"(held-out articles); {len(titles)} pages, {sum(map(bool, pages.values()))} "
        "with opening words"
    )

    # --- model: one sentence-transformers encoder for mentions and pages ---
    model = load_encoder(args.model_name_or_path or minilm_path(), args.max_length)
    markers = mention_markers(model.tokenizer)
    preprocess = model.preprocess  # `model` becomes the prepared (wrapped) module below
    separator = page_separator(model)
    page_texts = [page_input(t, pages[t], separator, args.page_words) for t in titles]

    def mention_text(mention) -> str:
        return mark_mention(
            mention.context, mention.start, mention.end, markers, args.context_words
        )

    rows = []
    for mention in train_mentions:
        negatives = namesakes.namesakes(mention.text, mention.target, args.same_name_negatives)
        negative_ids = [page_numbers[t] for t in negatives]
        rows.append(
            {
                "mention": mention_text(mention),
                "gold": page_numbers[mention.target],
                "negatives": negative_ids + [-1] * (args.same_name_negatives - len(negatives)),
            }
        )
    logger.info(
        f"{sum(bool(r['negatives']) and r['negatives'][0] >= 0 for r in rows)} training mentions "
        f"have same-name negatives (up to {args.same_name_negatives} each)"
    )

    def collate(batch):
        golds = [r["gold"] for r in batch]
        negatives = [n for r in batch for n in r["negatives"]]
        # padding rows repeat their mention's gold text (masked out by their id -1)
        padded = [n if n >= 0 else r["gold"] for r in batch for n in r["negatives"]]
        texts = [r["mention"] for r in batch] + [page_texts[p] for p in golds + padded]
        return {
            # one forward pass for mentions and pages (DDP expects one forward per backward)
            "features": preprocess(texts),
            "gold_ids": torch.tensor(golds),
            "negative_ids": torch.tensor(negatives, dtype=torch.long),
        }

    def encode_texts(texts: list[str]):
        return DataLoader(
            texts,
            batch_size=args.per_device_eval_batch_size,
            collate_fn=lambda batch: preprocess(list(batch)),
        )

    train_loader = DataLoader(
        rows, batch_size=args.per_device_train_batch_size, shuffle=True, collate_fn=collate
    )
    page_loader = encode_texts(page_texts)
    mention_loader = encode_texts([mention_text(m) for m in eval_mentions])
    optimizer = training.create_optimizer(model, args)
    model, optimizer, train_loader, page_loader, mention_loader = accelerator.prepare(
        model, optimizer, train_loader, page_loader, mention_loader
    )
    eval_golds = np.array([page_numbers[m.target] for m in eval_mentions], dtype=np.int64)
    masks = slices(eval_mentions, pages, namesakes)

    def embeddings(loader, what: str) -> torch.Tensor:
        """Embeddings of a loader's texts, gathered from every process, in order."""
        out = []
        progress = tqdm(loader, desc=f"Encoding {what}", disable=not accelerator.is_main_process)
        with torch.no_grad():
            for features in progress:
                out.append(accelerator.gather_for_metrics(embed(model, features)).cpu())
        return torch.cat(out)

    def link_ranks() -> np.ndarray:
        model.eval()
        pages = embeddings(page_loader, "pages")
        mentions = embeddings(mention_loader, "held-out mentions")
        model.train()
        return ranks_of_gold(mentions, pages, eval_golds, max(TOP_K))

    # --- zero-shot: the starting encoder, before any resume restores trained weights ---
    with training.rng_untouched():
        zero_shot_ranks = link_ranks()
    zero_shot = evaluation(zero_shot_ranks, masks)
    logger.info(
        "zero-shot: accuracy@1 {accuracy_at_1:.4f}, accuracy@10 {accuracy_at_10:.4f}".format(
            **zero_shot["all"]
        )
    )

    run = training.TrainingRun(
        accelerator, args, logger, optimizer, train_loader, "train_entity_linker"
    )

    # --- training ---
    model.train()
    for epoch in run.epochs():
        for batch in run.batches(epoch):
            with accelerator.accumulate(model):
                size = len(batch["gold_ids"])
                vectors = embed(model, batch["features"])
                mentions, golds, negatives = vectors.split(
                    [size, size, vectors.shape[0] - 2 * size]
                )
                # the global batch's loss (every process's rows gathered), × processes for DDP
                inputs = (mentions, golds, negatives, batch["gold_ids"], batch["negative_ids"])
                loss = linking_loss(*map(gather_with_grad, inputs), args.scale)
                run.backward_and_step(loss * accelerator.num_processes, model)
            if run.after_batch(loss, epoch):
                break

    # --- evaluation of the trained encoder, beside the zero-shot one ---
    trained_ranks = link_ranks()
    trained = evaluation(trained_ranks, masks)
    trained_hits = trained_ranks == 1
    zero_shot_hits = zero_shot_ranks == 1

    def examples(which: np.ndarray) -> list[dict]:
        return [
            {"mention": eval_mentions[i].text, "context": eval_mentions[i].context,
             "target": eval_mentions[i].target}
            for i in np.flatnonzero(which)[:EXAMPLES]
        ]  # fmt: skip

    table = results_table(trained, zero_shot)
    logger.info(f"\nHeld-out link mentions ({len(eval_mentions)}):\n{table}\n")

    # --- save: sentence-transformers folder, linker.json, metrics.json, model card ---
    base_model = args.model_name_or_path or MINILM_HUB_ID
    metrics = {
        "base_model": base_model,
        "wikipedia": str(args.wikipedia),
        "loss": "cross-entropy over gold, same-name negatives and in-batch pages",
        "num_processes": accelerator.num_processes,
        "num_mentions": {
            "dump": len(data.mentions),
            "train": len(train_mentions),
            "held_out": len(eval_mentions),
        },
        "num_pages": len(titles),
        "num_pages_with_text": sum(map(bool, pages.values())),
        **run.report(
            "max_length",
            "context_words",
            "page_words",
            "same_name_negatives",
            "scale",
            "held_out_share",
            "max_train_mentions",
            "max_eval_mentions",
            mention_markers=list(markers),
        ),
        "held_out": {"trained": trained, "zero_shot": zero_shot},
        "trained_wins": int((trained_hits & ~zero_shot_hits).sum()),
        "trained_losses": int((~trained_hits & zero_shot_hits).sum()),
        "trained_loss_examples": examples(~trained_hits & zero_shot_hits),
        "train_seconds": round(time.time() - started, 1),
    }

    def write(folder: Path):
        accelerator.unwrap_model(model).save(str(folder))
        write_linker_settings(
            folder, {"context_words": args.context_words, "page_words": args.page_words}
        )

    def card() -> str:
        values = run.card_values()
        wikipedia = f"`{Path(args.wikipedia).name}`"
        if args.validation_file:
            held_out = (
                f"{len(eval_mentions):,} held-out mentions: the links of the articles of "
                f"`{Path(args.validation_file).name}` that {wikipedia} does not have"
            )
        else:
            held_out = (
                f"{len(eval_mentions):,} held-out mentions from a {args.held_out_share:g} share "
                "of the source articles, held out whole (no held-out article's link was "
                "trained on)"
            )
        return training.render_card(
            CARD_TEMPLATE,
            card_data(args, base_model, trained, values["model_id"]),
            base_model_text=f"`{base_model}`",
            wikipedia=wikipedia,
            results_table=table,
            n_train=f"{len(train_mentions):,}",
            held_out=held_out,
            n_pages=f"{len(titles):,}",
            n_pages_with_text=f"{metrics['num_pages_with_text']:,}",
            same_name_negatives=args.same_name_negatives,
            scale=f"{args.scale:g}",
            max_length=args.max_length,
            context_words=args.context_words,
            page_words=args.page_words,
            markers=" / ".join(f"`{m}`" for m in markers),
            trained_wins=metrics["trained_wins"],
            trained_losses=metrics["trained_losses"],
            **values,
        )

    return training.finish(accelerator, args, logger, metrics, write, card)


if __name__ == "__main__":
    main()
