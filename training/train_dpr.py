"""Train a DPR bi-encoder (question and passage encoders) with Accelerate.

A linear script in the style of transformers' ``examples/pytorch/*_no_trainer.py``; the plumbing
it shares with the other training scripts (arguments, schedule, checkpoints, card, saving,
push) is in ``namesake.training``, the model in ``namesake.ecqg.dpr.modeling``. Question and
passage encoders (``AutoModel``, shared with ``--shared`` or separate), ``[CLS]`` pooling
(``--pooling mean`` for a sentence-transformers starting point); the
loss is DPR's NLL over dot-product scores with in-batch negatives plus ``--hard_negatives``
hard negatives per question (``dpr_loss``). A question's hard negatives are the first ones of
its ``hard_negative_ctxs``; an item with too few gets the positives of other items instead
(counted and reported).

With several processes (``accelerate launch --num_processes N``) every process gathers the
question and passage embeddings of all processes (``gather_with_grad``), as DPR does, so each
question is scored against the passages of the global batch; the loss is multiplied by N
before ``backward`` so that DDP's gradient average gives the gradient of the global-batch loss.

Passages are encoded as ``"{title} [SEP] {text}"``, the string the dense retriever encodes.

Outputs, in ``--output_dir`` (written to a temporary sibling, then renamed):

- ``question_encoder/`` and ``passage_encoder/``: ``save_pretrained`` of each encoder and the
  tokenizer (``AutoModel``-loadable; for ``--shared`` both hold the same weights);
- ``st_question_encoder/`` and ``st_passage_encoder/``: sentence-transformers exports (the
  training's pooling, dot-product similarity) for ``namesake retrieve --model OUT/st_passage_encoder
  --query-model OUT/st_question_encoder`` and ``DenseRetriever.build``;
- ``metrics.json`` (settings, the training files with their item counts, loss and learning
  rate per step, validation top-k accuracy) and ``README.md``, the model card from
  ``model_cards/dpr.md`` (``model-index`` results, split ``--validation_split_name``, when
  ``--validation_file`` is given).

``--train_file`` takes several files (gold and synthetic questions for Mixed-DPR), whose items
are trained on together. A file without a usable item stops the run, naming it: Mixed-DPR
trained on the gold file alone would pass for what it is not. With ``--if_empty explain`` the
run instead leaves ``--output_dir`` holding only ``not_trained.json`` (its reason, see
``namesake.ecqg.dpr.not_trained``), which every table listing encoders prints in place of
figures, and exits 0 without training: the demo's tiny generator can leave the synthetic set
empty.

Checkpoints (every ``--checkpointing_steps`` optimizer steps) go to ``CHECKPOINT_DIR/step_N``
(default ``OUTPUT_DIR-checkpoints``); ``--resume_from_checkpoint PATH|latest`` continues from
one, step count and data order included.

    accelerate launch training/train_dpr.py --train_file train.json [synthetic.json ...] \\
        --output_dir dpr [--if_empty error|explain] [--validation_file held-out.json] \\
        [--validation_split_name "held-out passages"] \\
        [--validation_passages passages.parquet [--embeddings_cache DIR]] \\
        [--model_name_or_path PATH_OR_HUB_ID] \\
        [--question_model Q] [--passage_model P] [--shared] [--learning_rate 1e-5] \\
        [--num_train_epochs 10] [--per_device_train_batch_size 16] \\
        [--gradient_accumulation_steps 1] [--hard_negatives 1] [--max_length 256] [--seed 0] \\
        [--checkpointing_steps N] [--resume_from_checkpoint PATH|latest] [--max_train_steps N] \\
        [--max_grad_norm 2.0] [--mixed_precision no|fp16|bf16|auto] \\
        [--push_to_hub --hub_model_id USER/NAME]

Paper settings: pre-training lr 1e-5, 10 epochs, batch 1024 (128 × accumulation 8), max length
256; fine-tuning lr 2e-5, 40 epochs, batch 128. DPR's own recipe (facebookresearch/DPR) clips
gradients at norm 2.0: ``--max_grad_norm 2.0`` (the shared default is no clipping).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch
from torch.utils.data import DataLoader
from transformers import AutoTokenizer

from namesake import training
from namesake.bundled_models import MINILM_HUB_ID, minilm_path
from namesake.ecqg.dpr.data import DPRFileError, passage_string, read_dpr_file
from namesake.ecqg.dpr.evaluation import DEFAULT_KS, top_k_accuracy
from namesake.ecqg.dpr.modeling import (
    POOLINGS,
    BiEncoder,
    dpr_loss,
    export_sentence_transformers,
    gather_with_grad,
)
from namesake.ecqg.dpr.not_trained import write_not_trained
from namesake.outputs import add_input, atomic_directory, overwriting

CARD_TEMPLATE = Path(__file__).resolve().parent.parent / "model_cards" / "dpr.md"
logger = training.setup_logging(__name__)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="Train a DPR bi-encoder with Accelerate.")
    training.add_training_arguments(
        parser,
        model_help="start of both encoders, path or Hub id (default: the bundled "
        "all-MiniLM-L6-v2); --question_model/--passage_model override it per encoder",
        per_device_train_batch_size=16,
        per_device_eval_batch_size=64,
        validation_help="DPR-format JSON whose top-k accuracy is reported after training",
        num_train_epochs=10,
        learning_rate=1e-5,
        num_warmup_steps=100,
    )
    add_input(
        parser,
        "--train_file",
        required=True,
        nargs="+",
        help="DPR-format JSON training file(s), trained on together (gold and synthetic)",
    )
    parser.add_argument(
        "--if_empty",
        choices=("error", "explain"),
        default="error",
        help="a --train_file without a usable item: stop with an error (default), or "
        "'explain': write OUTPUT_DIR/not_trained.json with the reason and exit 0 untrained",
    )
    add_input(
        parser,
        "--validation_passages",
        help="passages Parquet or KILT knowledge source that --validation_file's questions "
        "rank (default: the validation items' own passages); the card then reports that "
        "retrieval, measured as `namesake ecqg evaluate-dpr` measures the saved encoders",
    )
    parser.add_argument(
        "--embeddings_cache",
        metavar="DIR",
        help="with --validation_passages: the folder of passage embeddings that `namesake ecqg "
        "evaluate-dpr --embeddings-cache` and `build-synthetic-set --embeddings-cache` share; "
        "the validation's encoding of the passages is stored there, so those steps do not "
        "encode them again with this model (keyed by the model's files and the passages)",
    )
    parser.add_argument(
        "--validation_split_name",
        default="validation",
        help="what --validation_file is, as the model card's model-index names its split "
        "(default: validation; 'held-out passages' for a `namesake ecqg split-gold` file)",
    )
    add_input(
        parser,
        "--question_model",
        default=None,
        help="start of the question encoder, instead of --model_name_or_path",
    )
    add_input(
        parser,
        "--passage_model",
        default=None,
        help="start of the passage encoder, instead of --model_name_or_path",
    )
    parser.add_argument(
        "--shared", action="store_true", help="one encoder for questions and passages"
    )
    parser.add_argument(
        "--pooling",
        choices=POOLINGS,
        default="cls",
        help="cls: DPR's [CLS] vector (default); mean: the token mean, for starting points "
        "trained with it (sentence-transformers models such as all-MiniLM-L6-v2)",
    )
    parser.add_argument(
        "--hard_negatives", type=int, default=1, help="hard negative passages per question"
    )
    parser.add_argument(
        "--max_length", type=int, default=256, help="tokens kept per question and passage"
    )
    args = parser.parse_args(argv)
    training.check_training_arguments(parser, args, "max_length")
    if args.shared and args.passage_model:
        parser.error("--shared uses one encoder: give --model_name_or_path or --question_model")
    if args.hard_negatives < 0:
        parser.error("--hard_negatives must be at least 0")
    return args


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


def validation_passages(items, separator: str) -> tuple[list[str], list[str]]:
    """The passages validation questions are ranked against without --validation_passages
    (with it, :func:`evaluate_exports`), as encoder inputs and as raw texts: the pool of the
    validation items' own positives and hard negatives, deduplicated."""
    pool: dict[str, str] = {}
    for item in items:
        for ctx in item["positive_ctxs"] + item["hard_negative_ctxs"]:
            pool.setdefault(passage_string(ctx, separator), ctx["text"])
    return list(pool), list(pool.values())


def evaluate_exports(folder: Path, args, device) -> dict:
    """--validation_passages: top-k accuracy of the saved sentence-transformers exports in
    `folder` on --validation_file, ranking --validation_passages: `namesake ecqg evaluate-dpr`'s
    own evaluation (same passages, inputs and similarity), its passage embeddings shared
    through --embeddings_cache when given."""
    from namesake.ecqg.dpr.evaluation import evaluate_retrieval, model_dir_encoders

    passage, question = model_dir_encoders(folder)
    result = evaluate_retrieval(
        args.validation_passages,
        args.validation_file,
        passage,
        question,
        cutoffs=DEFAULT_KS,
        batch_size=args.per_device_eval_batch_size,
        device=str(device),
        embeddings_cache=args.embeddings_cache,
    )
    return {**result["metrics"], "questions": result["questions"], "passages": result["passages"]}


def evaluate_validation(model, tokenizer, items, args, device) -> dict:
    """Top-k accuracy on the validation items without --validation_passages: every validation
    question ranks the pool of their own passages (:func:`validation_passages`) by dot
    product."""
    texts, raw_texts = validation_passages(items, tokenizer.sep_token or ".")
    model.eval()
    p = encode_texts(
        model.encode_passages,
        tokenizer,
        texts,
        args.per_device_eval_batch_size,
        args.max_length,
        device,
    )
    q = encode_texts(
        model.encode_questions,
        tokenizer,
        [item["question"] for item in items],
        args.per_device_eval_batch_size,
        args.max_length,
        device,
    )
    model.train()
    ks = list(DEFAULT_KS)
    order = torch.argsort(q @ p.T, dim=1, descending=True)[:, : max(ks)].tolist()
    metrics = top_k_accuracy(order, [item["answers"] for item in items], raw_texts, ks)
    metrics.update(questions=len(items), passages=len(texts))
    return metrics


def log_validation(validation: dict) -> None:
    logger.info(
        "validation: "
        + ", ".join(f"{k} {v:.3f}" for k, v in validation.items() if k.startswith("top"))
    )


def render_model_card(args, metrics: dict, base: dict, run) -> str:
    from huggingface_hub import EvalResult

    model_id = run.card_values()["model_id"]
    validation = metrics.get("validation")
    eval_results = None
    results = "No validation file was given: no evaluation results."
    if validation:
        eval_results = [
            EvalResult(
                task_type="text-retrieval",
                task_name="Passage retrieval",
                dataset_type="dpr-dev",
                dataset_name=Path(args.validation_file).name,
                dataset_split=args.validation_split_name,
                metric_type=f"top_{k}_accuracy",
                metric_name=f"Top-{k} accuracy",
                metric_value=round(validation[f"top_{k}"], 4),
            )
            for k in DEFAULT_KS
        ]
        rows = ["| k | top-k accuracy |", "|---:|---:|"]
        rows += [f"| {k} | {validation[f'top_{k}']:.3f} |" for k in DEFAULT_KS]
        pool = (
            f"the {validation['passages']:,} passages of `{Path(args.validation_passages).name}`"
            if args.validation_passages
            else f"the pool of its {validation['passages']} passages"
        )
        results = (
            f"On `{Path(args.validation_file).name}` ({args.validation_split_name}: "
            f"{validation['questions']} questions ranking {pool} by dot product):\n\n"
            + "\n".join(rows)
        )
    hub_bases = [b for b in dict.fromkeys(map(training.hub_id, base.values())) if b]
    return training.render_card(
        CARD_TEMPLATE,
        {
            "language": "en",
            "license": args.license,
            "library_name": "sentence-transformers",
            "pipeline_tag": "sentence-similarity",
            "tags": ["dpr", "dense-retrieval", "bi-encoder", "feature-extraction"],
            "base_model": hub_bases or None,
            "model_name": model_id,
            "eval_results": eval_results,
        },
        question_base=base["question"],
        passage_base=base["passage"],
        shared="yes" if args.shared else "no",
        pooling={"cls": "`[CLS]`", "mean": "mean"}[args.pooling],
        train_files=", ".join(
            f"`{Path(f['path']).name}` ({f['items']} items)" for f in metrics["train_files"]
        ),
        n_train=metrics["num_train"],
        results=results,
        hard_negatives=args.hard_negatives,
        max_length=args.max_length,
        mixed_precision=metrics["settings"]["mixed_precision"],
        **run.card_values(),
    )


def read_train_files(paths) -> tuple[list[dict], list[dict]]:
    """The items of every training file, concatenated, and per file its ``path``, usable
    ``items`` and ``skipped`` (malformed) ones, for ``metrics.json`` and the card."""
    items, files = [], []
    for path in paths:
        report: dict = {}
        file_items = read_dpr_file(path, report=report)
        items += file_items
        files.append({"path": str(path), "items": len(file_items), "skipped": report["skipped"]})
    return items, files


def explain_not_trained(accelerator, args, reason: str) -> None:
    """``--if_empty explain``: `--output_dir` replaced by a folder holding only
    ``not_trained.json`` (no model from an earlier run left beside it to pass for this one)."""
    logger.warning(
        f"\n{'!' * 78}\nNOT TRAINED: {reason}.\n{args.output_dir} holds not_trained.json "
        f"instead of a model; the tables that list it print this reason.\n{'!' * 78}"
    )
    if accelerator.is_main_process:
        with (
            overwriting(args.overwrite_output_dir),
            atomic_directory(Path(args.output_dir).resolve(), writer=args.output_writer) as staging,
        ):
            write_not_trained(staging, reason)
    accelerator.wait_for_everyone()
    accelerator.end_training()


def main(argv=None):
    args = parse_args(argv)
    accelerator = training.make_accelerator(args)
    started = time.time()

    question_name = args.question_model or args.model_name_or_path
    passage_name = (
        question_name if args.shared else (args.passage_model or args.model_name_or_path)
    ) or question_name
    question_path = question_name or minilm_path()
    passage_path = None if args.shared else (passage_name or question_path)
    base = {
        "question": question_name or MINILM_HUB_ID,
        "passage": passage_name or MINILM_HUB_ID,
    }

    # --- data ---
    try:
        items, train_files = read_train_files(args.train_file)
        validation_items = read_dpr_file(args.validation_file) if args.validation_file else None
    except DPRFileError as error:
        sys.exit(str(error))
    empty = [f for f in train_files if not f["items"]]
    if empty:
        reason = "; ".join(
            f"{f['path']} holds no training item ({f['skipped']} malformed skipped)" for f in empty
        )
        if args.if_empty == "error":
            sys.exit(f"{reason}: nothing trained (--if_empty explain records this and exits 0)")
        explain_not_trained(accelerator, args, reason)
        return None
    skipped = sum(f["skipped"] for f in train_files)
    logger.info(
        f"distributed: {accelerator.distributed_type.value}, "
        f"{accelerator.num_processes} process(es), mixed precision "
        f"{accelerator.mixed_precision}; train items: "
        + ", ".join(f"{f['items']} from {f['path']}" for f in train_files)
        + f", {skipped} skipped"
        + (f"; validation items: {len(validation_items)}" if validation_items is not None else "")
    )

    tokenizer = AutoTokenizer.from_pretrained(question_path)
    passage_tokenizer = AutoTokenizer.from_pretrained(passage_path or question_path)
    separator = passage_tokenizer.sep_token or "."
    model = BiEncoder(question_path, passage_path, shared=args.shared, pooling=args.pooling)

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
        logger.info(f"{filled} hard negatives missing: filled with other questions' positives")

    def tokenize(tok, texts):
        return tok(
            texts, truncation=True, max_length=args.max_length, padding=True, return_tensors="pt"
        )

    def collate(indices):
        questions = [items[i]["question"] for i in indices]
        passages = []
        for i in indices:
            for ctx in [items[i]["positive_ctxs"][0], *negatives_per_item[i]]:
                passages.append(passage_string(ctx, separator))
        return {
            "questions": dict(tokenize(tokenizer, questions)),
            "passages": dict(tokenize(passage_tokenizer, passages)),
        }

    train_loader = DataLoader(
        list(range(len(items))),
        batch_size=args.per_device_train_batch_size,
        shuffle=True,
        collate_fn=collate,
    )
    optimizer = training.create_optimizer(model, args)
    model, optimizer, train_loader = accelerator.prepare(model, optimizer, train_loader)
    run = training.TrainingRun(accelerator, args, logger, optimizer, train_loader, "train_dpr")

    # --- training ---
    model.train()
    epoch_losses: list[float] = []
    for epoch in run.epochs():
        running, count = 0.0, 0
        for batch in run.batches(epoch):
            with accelerator.accumulate(model):
                q, p = model(batch["questions"], batch["passages"])
                loss = dpr_loss(gather_with_grad(q), gather_with_grad(p))
                run.backward_and_step(loss * accelerator.num_processes, model)
            running, count = running + loss.item(), count + 1
            if run.after_batch(loss, epoch):
                break
        if count:
            epoch_losses.append(running / count)
            logger.info(f"epoch {epoch + 1}: mean loss {epoch_losses[-1]:.4f}")

    # --- validation (main process) and save ---
    accelerator.wait_for_everyone()
    unwrapped = accelerator.unwrap_model(model)
    validation = None
    if validation_items and accelerator.is_main_process and not args.validation_passages:
        validation = evaluate_validation(
            unwrapped, tokenizer, validation_items, args, accelerator.device
        )
        validation["split"] = args.validation_split_name
        log_validation(validation)
    metrics = {
        "base_models": base,
        "train_files": train_files,
        "num_train": len(items),
        "skipped_train_items": skipped,
        "filled_hard_negatives": filled,
        "num_processes": accelerator.num_processes,
        **run.report(
            "validation_split_name",
            "validation_passages",
            "shared",
            "pooling",
            "hard_negatives",
            "max_length",
        ),
        "epoch_losses": epoch_losses,
        "validation": validation,
        "train_seconds": round(time.time() - started, 1),
    }

    def write(folder: Path):
        for name, encoder, tok in (
            ("question", unwrapped.question_encoder, tokenizer),
            ("passage", unwrapped.passage_encoder, passage_tokenizer),
        ):
            encoder.save_pretrained(folder / f"{name}_encoder", save_function=accelerator.save)
            tok.save_pretrained(folder / f"{name}_encoder")
            export_sentence_transformers(
                folder / f"{name}_encoder",
                folder / f"st_{name}_encoder",
                args.max_length,
                pooling=args.pooling,
            )
        if validation_items and args.validation_passages:
            metrics["validation"] = evaluate_exports(folder, args, accelerator.device)
            metrics["validation"]["split"] = args.validation_split_name
            log_validation(metrics["validation"])

    def card() -> str:
        return render_model_card(args, metrics, base, run)

    return training.finish(accelerator, args, logger, metrics, write, card)


if __name__ == "__main__":
    main()
