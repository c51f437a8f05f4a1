"""What a saved index's ``retriever.json`` may hold, as msgspec Structs: the fields every
kind records, its provenance (`namesake.retrieval.provenance`), and each kind's settings.

`namesake.retrieval.storage.read_settings` checks the whole file against its kind's schema
once, when the index is opened, so that a field of the wrong type (a provenance that is a
string, a size that is a string, a corpus that is a list) is named in one line with the
advice to rebuild the index, instead of failing later wherever the value is first used. The
file is still read as a plain dict: the schema only checks it.

A field that a kind always writes but that indexes of earlier releases may lack is optional
(``UNSET``: it may be missing, but never ``null``); one that loading or searching reads is
required. Fields the schema does not name (a newer release's) are let through.
"""

from __future__ import annotations

from typing import Annotated

from msgspec import UNSET, Meta, Struct, UnsetType

#: a count or size: an integer, never negative
Count = Annotated[int, Meta(ge=0)]
#: a batch size, a list count, a search depth: at least one
Positive = Annotated[int, Meta(ge=1)]


# --- provenance ---------------------------------------------------------------------------


class CorpusIdentity(Struct):
    """`provenance.corpus_identity`: name and path are shown, the rest compared."""

    name: str
    path: str | UnsetType = UNSET
    bytes: Count | UnsetType = UNSET
    first_mib_sha256: str | UnsetType = UNSET
    last_mib_sha256: str | UnsetType = UNSET
    pages: Count | UnsetType = UNSET


class ModelIdentity(Struct):
    """`provenance.model_identity`: the bundled MiniLM, a local folder or a Hub id."""

    name: str
    bundled: bool = False
    path: str | UnsetType = UNSET
    revision: str | None = None
    weights: str | None = None


class Provenance(Struct):
    """What built the index; ``embeddings``: the `namesake encode` folder it was indexed from."""

    namesake_version: str | UnsetType = UNSET
    corpus: CorpusIdentity | UnsetType = UNSET
    models: dict[str, ModelIdentity | None] = {}
    embeddings: str | UnsetType = UNSET


# --- the kinds ----------------------------------------------------------------------------


class IndexSettings(Struct, kw_only=True):
    """The fields of every kind (`storage.write_index_files`)."""

    kind: str
    format_version: int
    num_documents: Count | UnsetType = UNSET
    provenance: Provenance | None = None


class Bm25Settings(IndexSettings, kw_only=True):
    stemmer: str | None = None
    stopwords: str | None = None
    bm25s_version: str | UnsetType = UNSET


class TfidfSettings(IndexSettings, kw_only=True):
    shard_sizes: list[Count]
    n_features: Positive | UnsetType = UNSET
    ngram_range: list[Positive] | UnsetType = UNSET
    stop_words: str | None = None
    formula: str | UnsetType = UNSET
    sklearn_version: str | UnsetType = UNSET


class PassageSettings(IndexSettings, kw_only=True):
    """What the kinds that encode 100-word passages with a model (dense, DPR, SPLADE)
    record alike."""

    model: str
    dimension: Positive
    similarity: str | UnsetType = UNSET
    passage_words: Positive | UnsetType = UNSET
    title_separator: str | None = None
    num_passages: Count | UnsetType = UNSET
    batch_size: Positive | UnsetType = UNSET


class DenseSettings(PassageSettings, kw_only=True):
    """`dense._index_settings`, of an index built from documents or from the folder of
    `namesake encode` (DPR's too: its kind is ``dense``)."""

    model_is_default: bool = False
    query_model: str | None
    query_model_is_default: bool = False
    encoder: str | UnsetType = UNSET
    index: str
    normalized: bool | UnsetType = UNSET
    factory: str | UnsetType = UNSET
    nlist: Positive | UnsetType = UNSET
    nprobe: Positive | UnsetType = UNSET
    ef_search: Positive | UnsetType = UNSET
    shards: Positive | UnsetType = UNSET
    shard_offsets: list[Count] | UnsetType = UNSET
    embeddings: str | UnsetType = UNSET
    rerank_candidates: Count | UnsetType = UNSET
    faiss_version: str | UnsetType = UNSET


class SpladeSettings(PassageSettings, kw_only=True):
    num_passages: Count  # its load checks the passage map against it
    num_postings: Count
    max_active_dims: Positive | None = None
    sentence_transformers_version: str | UnsetType = UNSET


class LinkSettings(IndexSettings, kw_only=True):
    """The entity linker's (`namesake.linking.linker`): its encoder and mention pipeline."""

    model: str
    model_is_default: bool = False
    spacy_model: str
    batch_size: Positive | UnsetType = UNSET
    device: str | None = None
    context_words: Count
    page_words: Count | UnsetType = UNSET
    dimension: Positive | UnsetType = UNSET
    title_separator: str | None = None
    faiss_version: str | UnsetType = UNSET


#: the schema of each kind's retriever.json, by the kind it records
SCHEMAS: dict[str, type[IndexSettings]] = {
    "bm25": Bm25Settings,
    "tfidf": TfidfSettings,
    "dense": DenseSettings,
    "splade": SpladeSettings,
    "link": LinkSettings,
}
