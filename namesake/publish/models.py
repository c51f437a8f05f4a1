"""Publishing a trained model folder (what a script of ``training/`` writes: config.json,
weights, tokenizer, metrics.json and the README.md model card of ``model_cards/``), for
``namesake publish model`` and the scripts' ``--push_to_hub`` alike."""

from __future__ import annotations

import json
import os
from pathlib import Path

from namesake.errors import BadInputError
from namesake.publish.staging import copy_publishable, publishable_files, stage_folder
from namesake.publish.upload import stage_and_upload

WRITER = "publish model"
#: the files that hold a transformers model's weights, whole or as the index of its shards
WEIGHT_FILES = (
    "model.safetensors",
    "model.safetensors.index.json",
    "pytorch_model.bin",
    "pytorch_model.bin.index.json",
)
#: the model card's YAML fields a model repo needs: its license, and what it is (at least
#: one of its base model and its tags)
CARD_LICENSE = "license"
CARD_DESCRIPTION = ("base_model", "tags")


def check_model_folder(folder: str | os.PathLike) -> None:
    """Refuses, naming what is missing, a folder that is not a trained model: none of its
    folders (itself, or ``question_encoder/`` for DPR) holds a config.json beside weights
    (`WEIGHT_FILES`), a config.json that is not JSON, or a card (`check_model_card`)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise BadInputError(folder, None, "no such folder")
    files = (folder / name for name in publishable_files(folder))
    configs = [path for path in files if path.name == "config.json"]
    for config in configs:
        try:
            json.loads(config.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError) as exc:
            raise BadInputError(config, None, f"not JSON ({exc})") from None
    if not any((config.parent / name).is_file() for config in configs for name in WEIGHT_FILES):
        raise BadInputError(
            folder,
            None,
            "no config.json beside model weights (model.safetensors or pytorch_model.bin): not a "
            "trained model folder (a training script's --output_dir)",
        )
    check_model_card(folder / "README.md")


def check_model_card(card_path: Path) -> None:
    """The model card parses with ``huggingface_hub.ModelCard`` and its YAML header has a
    license and a base model or tags."""
    from huggingface_hub import ModelCard

    if not card_path.is_file():
        raise BadInputError(card_path, None, "no model card (README.md)")
    data = ModelCard.load(card_path).data
    if not data.get(CARD_LICENSE):
        raise BadInputError(card_path, None, "the model card's YAML has no license")
    if not any(data.get(field) for field in CARD_DESCRIPTION):
        raise BadInputError(card_path, None, "the model card's YAML has no base_model or tags")


def stage_model(folder: str | os.PathLike, out: str | os.PathLike) -> Path:
    """Checks the model folder, then writes its publishable files to `out` and checks the
    copy: the folder a model upload sends."""
    check_model_folder(folder)
    return stage_folder(
        out, WRITER, lambda staging: copy_publishable(folder, staging), check_model_folder
    )


def publish_model(
    folder: str | os.PathLike,
    repo_id: str,
    token: str | None = None,
    private: bool = False,
) -> str:
    """Stages, checks and uploads a trained model folder to the model repo `repo_id` (the
    training scripts' ``--push_to_hub``); returns the commit URL."""
    published = stage_and_upload(
        lambda out: stage_model(folder, out), "model", repo_id, token=token, private=private
    )
    return str(published.commit_url)
