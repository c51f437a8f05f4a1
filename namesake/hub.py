"""Publishing folders to the Hugging Face Hub."""

from __future__ import annotations

import os
from pathlib import Path

from huggingface_hub import HfApi


def list_upload(folder: str | os.PathLike) -> list[str]:
    """The files an upload of ``folder`` sends, relative to it (hidden files excluded)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: not a directory")
    return sorted(
        str(path.relative_to(folder))
        for path in folder.rglob("*")
        if path.is_file()
        and not any(part.startswith(".") for part in path.relative_to(folder).parts)
    )


def push_folder(
    folder: str | os.PathLike,
    repo_id: str,
    repo_type: str = "dataset",
    private: bool = False,
    token: str | None = None,
    commit_message: str = "Upload with namesake",
) -> str:
    """Creates the repo if needed and uploads ``folder``; returns the commit URL."""
    api = HfApi(token=token)
    api.create_repo(repo_id, repo_type=repo_type, private=private, exist_ok=True)
    commit = api.upload_folder(
        folder_path=str(folder),
        repo_id=repo_id,
        repo_type=repo_type,
        commit_message=commit_message,
        allow_patterns=list_upload(folder),
    )
    return str(commit)
