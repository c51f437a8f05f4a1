"""What built a saved retriever index, and the check that a reopening command agrees with it.

Every saved index records in its ``retriever.json``, besides its settings (similarity,
passage settings, tokeniser), a ``provenance`` block::

    {"namesake_version": "0.1.0",
     "corpus": {"name", "path", "bytes", "first_mib_sha256", "last_mib_sha256", "pages"},
     "models": {"model": {...}, "query_model": {...}}}       # dense, dpr and link only

The corpus identity is cheap on a 35 GB KILT file: its size and the SHA-256 of its first
and last MiB (the page count is recorded from the build, not recounted on reopening). A
model's identity is its name (Hub id or folder), the resolved revision of a Hub id when the
Hugging Face cache holds it (read offline), and a fingerprint of its weight files (their
sizes and first and last MiB), so that a model copied elsewhere is the same model and one
retrained in place is not. The bundled all-MiniLM-L6-v2 is one model wherever installed; a
bundled ONNX model (``bundled:bge-small``) is named so, with the fingerprint of its folder,
whose weights are its ``model.onnx`` (as those of any folder with ONNX weights alone).

A reopening command (``namesake retrieve --index``, ``amber compare --index-dir``) that
names a corpus or model other than the recorded one is refused, naming the index's settings
file, the field, the recorded and the requested value (:func:`check_reopening`). One that
names nothing uses what is recorded and says so on stderr. Indexes written before
provenance was recorded still open, with a warning that it cannot be checked.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

from namesake import __version__
from namesake.bundled_models import MINILM_HUB_ID, minilm_path
from namesake.errors import BadInputError
from namesake.retrieval.onnx_encoder import BUNDLED_PREFIX, bundled_folder
from namesake.retrieval.storage import SETTINGS_FILE
from namesake.work_folder import input_identity

MIB = 1 << 20
#: the corpus identity's fields that say what it holds (its name and path do not)
CORPUS_CONTENT = ("bytes", "first_mib_sha256", "last_mib_sha256")
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".h5", ".msgpack")
#: training state saved beside the weights of a checkpoint: not part of the model
_NOT_WEIGHTS = ("training_args.bin", "optimizer.pt", "scheduler.pt", "scaler.pt", "rng_state")
_SKIPPED_FOLDERS = ("onnx", "openvino")


# --- identities ---------------------------------------------------------------------------


def corpus_identity(path: str | os.PathLike, pages: int | None = None) -> dict:
    """What says a corpus file is the same one: its name and path (shown, not compared),
    size, the SHA-256 of its first and of its last MiB, and its page count when known."""
    path = Path(path)
    record = input_identity(path)
    with path.open("rb") as f:
        f.seek(max(0, record["bytes"] - MIB))
        record["last_mib_sha256"] = hashlib.sha256(f.read(MIB)).hexdigest()
    record["path"] = str(path.resolve())
    if pages is not None:
        record["pages"] = pages
    return record


def _weight_files(folder: Path) -> list[Path]:
    """A model folder's weight files: per folder its safetensors if it has any, else its
    other weight formats; checkpoints, hidden folders, ONNX/OpenVINO exports and training
    state are left out. A folder with no such weights is an ONNX model: its ``.onnx`` files
    are its weights."""
    found = []
    for root, folders, files in os.walk(folder, followlinks=True):
        folders[:] = sorted(
            name
            for name in folders
            if not name.startswith((".", "checkpoint-")) and name not in _SKIPPED_FOLDERS
        )
        weights = [
            name
            for name in files
            if name.endswith(_WEIGHT_SUFFIXES) and not name.startswith(_NOT_WEIGHTS)
        ]
        safetensors = [name for name in weights if name.endswith(".safetensors")]
        found += [Path(root, name) for name in sorted(safetensors or weights)]
    if not found:
        found = sorted(path for path in folder.glob("*.onnx") if path.is_file())
    return found


def weights_fingerprint(folder: str | os.PathLike) -> str | None:
    """SHA-256 over a model folder's weight files (relative name, size, first and last
    MiB): a few MiB read whatever the model's size. None when it has no weight file."""
    folder = Path(folder)
    files = _weight_files(folder)
    if not files:
        return None
    digest = hashlib.sha256()
    for file in files:
        size = file.stat().st_size
        digest.update(f"{file.relative_to(folder).as_posix()}\t{size}\n".encode())
        with file.open("rb") as f:
            digest.update(f.read(MIB))
            if size > MIB:
                f.seek(max(MIB, size - MIB))
                digest.update(f.read(MIB))
    return digest.hexdigest()


def _cached_snapshot(repo_id: str) -> tuple[str | None, Path | None]:
    """The revision of a Hub model in the local Hugging Face cache (offline) and its
    snapshot folder; (None, None) when it is not cached."""
    try:
        from huggingface_hub.constants import HF_HUB_CACHE
    except ImportError:  # pragma: no cover - installed with sentence-transformers
        return None, None
    candidates = [repo_id] if "/" in repo_id else [repo_id, f"sentence-transformers/{repo_id}"]
    for candidate in candidates:
        repo = Path(HF_HUB_CACHE) / ("models--" + candidate.replace("/", "--"))
        ref = repo / "refs" / "main"
        if ref.is_file():
            revision = ref.read_text(encoding="utf-8").strip()
            snapshot = repo / "snapshots" / revision
            return revision, snapshot if snapshot.is_dir() else None
    return None, None


def _is_bundled(name: str) -> bool:
    if name == MINILM_HUB_ID:
        return True
    path = Path(name)
    return path.is_dir() and path.resolve() == Path(minilm_path()).resolve()


def model_identity(name: str | os.PathLike | None) -> dict | None:
    """What says a model is the same one (see the module docstring); None for no model."""
    if name is None:
        return None
    name = str(name)
    if _is_bundled(name):
        return {"name": MINILM_HUB_ID, "bundled": True}
    if name.startswith(BUNDLED_PREFIX):  # a bundled ONNX model: its installed folder
        folder = bundled_folder(name)
        return {"name": name, "path": str(folder), "weights": weights_fingerprint(folder)}
    path = Path(name)
    if path.is_dir():
        return {"name": name, "path": str(path.resolve()), "weights": weights_fingerprint(path)}
    revision, snapshot = _cached_snapshot(name)
    record = {"name": name, "revision": revision}
    if snapshot is not None:
        record["weights"] = weights_fingerprint(snapshot)
    return record


def new_provenance(**models: str | os.PathLike | None) -> dict:
    """The provenance of an index being built with these models (by recorded field, e.g.
    ``model=..., query_model=...``); the corpus is added by whoever read it
    (`namesake.amber.evaluation.retrieve.open_retriever`)."""
    record: dict = {"namesake_version": __version__}
    if models:
        record["models"] = {field: model_identity(name) for field, name in models.items()}
    return record


# --- comparing ------------------------------------------------------------------------------


def _short(digest: str | None) -> str:
    return (digest or "?")[:12]


def corpus_fingerprint(identity: dict) -> str:
    """One short digest of a corpus identity's content fields (for messages)."""
    content = "\t".join(str(identity.get(key)) for key in CORPUS_CONTENT)
    return hashlib.sha256(content.encode()).hexdigest()[:12]


def describe_corpus(identity: dict) -> str:
    parts = [f"{identity.get('bytes', '?'):,} bytes" if "bytes" in identity else "size unknown"]
    if "pages" in identity:
        parts.insert(0, f"{identity['pages']:,} pages")
    if "first_mib_sha256" in identity:
        parts.append(f"fingerprint {corpus_fingerprint(identity)}")
    return f"{identity.get('path') or identity.get('name')} ({', '.join(parts)})"


def describe_model(identity: dict) -> str:
    if identity.get("bundled"):
        return f"{identity['name']} (the bundled copy)"
    details = []
    if identity.get("revision"):
        details.append(f"revision {_short(identity['revision'])}")
    if identity.get("weights"):
        details.append(f"weights {_short(identity['weights'])}")
    return identity["name"] + (f" ({', '.join(details)})" if details else "")


def same_corpus(recorded: dict, requested: dict) -> bool | None:
    """Whether two corpus identities hold the same content; None when they share no field
    to compare."""
    shared = [key for key in CORPUS_CONTENT if key in recorded and key in requested]
    if not shared:
        return None
    return all(recorded[key] == requested[key] for key in shared)


def _where(identity: dict) -> str:
    return identity.get("path") or identity["name"]


def same_model(recorded: dict, requested: dict) -> bool:
    """Whether two model identities are the same model: the bundled MiniLM is itself
    anywhere; weights fingerprints decide when both have one; else the names (folders
    resolved) and, when both are known, the revisions."""
    if recorded.get("bundled") or requested.get("bundled"):
        return bool(recorded.get("bundled") and requested.get("bundled"))
    if recorded.get("weights") and requested.get("weights"):
        return recorded["weights"] == requested["weights"]
    if _where(recorded) != _where(requested):
        return False
    revisions = recorded.get("revision"), requested.get("revision")
    return None in revisions or revisions[0] == revisions[1]


def recorded_model(settings: dict, field: str) -> dict | None:
    """The identity of the model a saved index records in `field`: its provenance's, else
    (an index written before provenance) what its settings name."""
    models = (settings.get("provenance") or {}).get("models") or {}
    if field in models:
        return models[field]
    name = settings.get(field)
    if name is None:
        return None
    if settings.get(f"{field}_is_default") or _is_bundled(str(name)):
        return {"name": MINILM_HUB_ID, "bundled": True}
    path = Path(name)
    return {"name": str(name), **({"path": str(path.resolve())} if path.is_dir() else {})}


# --- reopening ------------------------------------------------------------------------------


def _refusal(settings_file: Path, kind: str, what: str, field: str, recorded: str, requested: str):
    return BadInputError(
        settings_file,
        None,
        f"this {kind} index was built with another {what} (field {field!r}): recorded "
        f"{recorded}, requested {requested}. Leave it out to use the recorded one, or build "
        "a new index in another folder",
    )


def tell(lines: list[str]) -> None:
    """Writes :func:`check_reopening`'s lines to stderr (once the index has loaded)."""
    for line in lines:
        print(f"namesake: {line}", file=sys.stderr, flush=True)


def check_reopening(
    folder: str | os.PathLike,
    settings: dict,
    corpus: str | os.PathLike | None = None,
    models: dict[str, tuple[str, str | os.PathLike]] | None = None,
    index_type: str | None = None,
) -> list[str]:
    """Refuses to reopen the saved index at `folder` (whose ``retriever.json`` holds
    `settings`) for a `corpus` or `models` other than those it was built from.

    `models`: per recorded field (``model``, ``query_model``), what the command names there
    and what it is (e.g. ``("DPR context encoder", path)``); fields it does not name are
    left out; `index_type`: the FAISS index type named (``flat``, ``hnsw``...), if any.
    What is named is checked; the rest is taken from the record. Returns the
    lines for stderr (:func:`tell`): which index, models and corpus are used, after a
    warning when the index records too little to check what was named.
    """
    folder = Path(folder)
    settings_file = folder / SETTINGS_FILE
    kind = settings.get("kind", "retriever")
    provenance = settings.get("provenance")
    same = None
    if corpus is not None:
        requested = corpus_identity(corpus)
        recorded = (provenance or {}).get("corpus")
        same = same_corpus(recorded, requested) if recorded else None
        if same is False:
            raise _refusal(
                settings_file,
                kind,
                "corpus",
                "corpus",
                describe_corpus(recorded),
                describe_corpus(requested),
            )
    for field, (what, name) in (models or {}).items():
        recorded = recorded_model(settings, field)
        requested = model_identity(name)
        if recorded is None or not same_model(recorded, requested):
            raise _refusal(
                settings_file,
                kind,
                what,
                field,
                describe_model(recorded) if recorded else "none",
                describe_model(requested),
            )
    if index_type is not None and settings.get("index", index_type) != index_type:
        raise _refusal(settings_file, kind, "index type", "index", settings["index"], index_type)
    lines = []
    if provenance is None:
        lines.append(
            f"warning: {settings_file} records no provenance (written before namesake "
            "recorded what built an index): its corpus cannot be checked against the one "
            "named, nor its models' weights; rebuild the index to have them recorded"
        )
    elif corpus is not None and same is None:
        lines.append(
            f"warning: {settings_file} records no fingerprint of its corpus (built from "
            f"documents rather than a corpus file): cannot check that it holds {corpus}"
        )
    checked = (["corpus"] if same else []) + [what for what, _ in (models or {}).values()]
    agree = f" (the {' and '.join(checked)} named agree with it)" if checked else ""
    lines.append(
        f"{folder}: using the saved {kind} index as recorded in {settings_file}{agree}: "
        + describe_index(settings)
    )
    return lines


def describe_index(settings: dict) -> str:
    """What a saved index was built from, in one line: models, similarity, passage
    settings, corpus and namesake version, as far as it records them."""
    parts = []
    for field, label in (("model", "model"), ("query_model", "query model")):
        identity = recorded_model(settings, field)
        if identity is not None:
            parts.append(f"{label} {describe_model(identity)}")
    if settings.get("similarity"):
        parts.append(f"{settings['similarity']} similarity")
    if settings.get("passage_words"):
        parts.append(f"{settings['passage_words']}-word passages")
    provenance = settings.get("provenance") or {}
    corpus = provenance.get("corpus")
    parts.append(f"corpus {describe_corpus(corpus)}" if corpus else "corpus not recorded")
    version = provenance.get("namesake_version")
    parts.append(f"built by namesake {version}" if version else "namesake version not recorded")
    return "; ".join(parts)
