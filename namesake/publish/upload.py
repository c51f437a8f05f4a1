"""Uploading a staged folder to the Hugging Face Hub: one code path for datasets, models and
Spaces, over `huggingface_hub.HfApi` (``create_repo``, then ``upload_folder`` of exactly the
staged folder's publishable files).

The upload is the network edge. Everything that can be checked on this machine comes first,
each problem one line: the repo id (OWNER/NAME), the token (``--token``, else ``HF_TOKEN``,
else the logged-in one), then the staged folder (`stage_and_upload`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from huggingface_hub import HfApi

from namesake.errors import NamesakeError
from namesake.publish.staging import publishable_files, staging_target

REPO_TYPES = ("dataset", "model", "space")
#: how a repo's page is addressed on the Hub, by repo type
_URL_PREFIX = {"dataset": "datasets/", "model": "", "space": "spaces/"}


def check_repo_id(repo_id: str | None, option: str = "--repo-id") -> str:
    """`repo_id` when it is OWNER/NAME as the Hub spells names, else a one-line error."""
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id

    try:
        validate_repo_id(repo_id)
    except HFValidationError:
        repo_id_ok = False
    else:
        repo_id_ok = isinstance(repo_id, str) and repo_id.count("/") == 1
    if not repo_id_ok:
        raise NamesakeError(f"{option} {repo_id!r}: not OWNER/NAME")
    return repo_id


def resolve_token(token: str | None) -> str:
    """The token an upload uses: `token` (``--token``), else ``HF_TOKEN``, else the one
    ``hf auth login`` saved; none is a one-line error, before any network call."""
    from huggingface_hub import get_token

    found = token or os.environ.get("HF_TOKEN") or get_token()
    if not found:
        raise NamesakeError(
            "no Hugging Face token: pass --token, set HF_TOKEN or run `hf auth login` "
            "(--stage-only DIR uploads nothing and needs none)"
        )
    return found


def upload_staged(
    staged: str | os.PathLike,
    repo_id: str,
    repo_type: str,
    token: str | None,
    private: bool,
    api: HfApi | None = None,
) -> str:
    """Creates the repo if needed and uploads the publishable files of `staged` (namesake's
    marker stays here); returns the commit URL. The repo's other files are deleted in the
    same commit, so that the repo holds what was staged and checked: a rebuild's shards,
    named by their digest, replace the old ones rather than sit beside them."""
    if repo_type not in REPO_TYPES:
        raise ValueError(f"repo_type must be one of {REPO_TYPES}, not {repo_type!r}")
    files = publishable_files(staged)
    api = api if api is not None else HfApi(token=token)
    sdk = {"space_sdk": _space_sdk(Path(staged))} if repo_type == "space" else {}
    api.create_repo(repo_id, repo_type=repo_type, private=private, exist_ok=True, **sdk)
    commit = api.upload_folder(
        folder_path=str(staged),
        repo_id=repo_id,
        repo_type=repo_type,
        commit_message="Upload with namesake publish",
        allow_patterns=files,
        delete_patterns=["*"],
    )
    return str(getattr(commit, "commit_url", commit))


def _space_sdk(staged: Path) -> str:
    """The ``sdk`` of a staged Space's card, which ``create_repo`` needs for a new Space."""
    from huggingface_hub import SpaceCard

    card = staged / "README.md"
    sdk = SpaceCard.load(card).data.get("sdk") if card.is_file() else None
    if not sdk:
        raise NamesakeError(f"{card}: a Space's card needs `sdk` in its YAML header")
    return sdk


@dataclass(frozen=True)
class Published:
    """What a `namesake publish` command did: the files it staged, where it kept them
    (``--stage-only``) and where it uploaded them."""

    files: list[str]
    repo_id: str | None
    repo_type: str
    staged: Path | None = None
    commit_url: str | None = None

    def lines(self) -> list[str]:
        """What the command prints."""
        if self.commit_url is None:
            return [
                f"Staged {len(self.files)} file(s) in {self.staged}; nothing uploaded",
                *(f"  {name}" for name in self.files),
            ]
        page = f"https://huggingface.co/{_URL_PREFIX[self.repo_type]}{self.repo_id}"
        return [f"Uploaded {len(self.files)} file(s) to {page}: {self.commit_url}"]


def stage_and_upload(
    stage: Callable[[Path], Path],
    repo_type: str,
    repo_id: str | None,
    stage_only: str | os.PathLike | None = None,
    token: str | None = None,
    private: bool = False,
) -> Published:
    """The one path of every kind: checks the repo id (when given) and, unless `stage_only`,
    the token; then ``stage(out)`` writes and checks the staged folder (into `stage_only`,
    else a temporary folder), which is uploaded as it is."""
    if repo_id is None and stage_only is None:
        raise NamesakeError(
            "--repo-id OWNER/NAME is needed to upload (--stage-only DIR uploads nothing)"
        )
    if repo_id is not None:
        repo_id = check_repo_id(repo_id)
    token = None if stage_only is not None else resolve_token(token)
    with staging_target(stage_only) as out:
        staged = stage(out)
        files = publishable_files(staged)
        if stage_only is not None:
            return Published(files, repo_id, repo_type, staged=staged)
        url = upload_staged(staged, repo_id, repo_type, token, private)
    return Published(files, repo_id, repo_type, commit_url=url)
