"""The ``dpr`` retriever kind: a :class:`namesake.retrieval.dense.DenseRetriever` built from
a DPR question and a context encoder (Hub ids or local folders; by default Facebook's
multiset pair, loaded by `namesake.retrieval.encoders`), which loads DPR indexes only.
"""

from __future__ import annotations

import os
from pathlib import Path

from namesake.errors import BadInputError
from namesake.retrieval.dense import DenseRetriever
from namesake.retrieval.encoders import DEFAULT_CONTEXT_ENCODER, DEFAULT_QUESTION_ENCODER, DPR
from namesake.retrieval.storage import SETTINGS_FILE


class DPRRetriever(DenseRetriever):
    """Dense retrieval with a DPR question encoder and context encoder (inner product by
    default); see the module docstring and :class:`DenseRetriever`."""

    NAMED_MODELS = {
        "context_encoder": ("model", "DPR context encoder"),
        "question_encoder": ("query_model", "DPR question encoder"),
    }

    @classmethod
    def build(
        cls,
        documents,
        question_encoder: str = DEFAULT_QUESTION_ENCODER,
        context_encoder: str = DEFAULT_CONTEXT_ENCODER,
        index: str = "flat",
        batch_size: int = 64,
        *,
        similarity: str | None = None,
        **options,
    ) -> DPRRetriever:
        """Encodes `documents`' passages with `context_encoder`; queries will go through
        `question_encoder`. Other options as :meth:`DenseRetriever.build`."""
        return super().build(
            documents,
            model=context_encoder,
            index=index,
            batch_size=batch_size,
            query_model=question_encoder,
            similarity=similarity,
            encoder_type=DPR,
            **options,
        )

    @classmethod
    def load(
        cls,
        path: str | os.PathLike,
        device: str | None = None,
        mmap: bool = False,
        similarity: str | None = None,
    ) -> DPRRetriever:
        """Reads a DPR index (refusing one of another dense model, which would be searched
        with that model, not DPR)."""
        retriever = super().load(path, device=device, mmap=mmap, similarity=similarity)
        if retriever.settings.get("encoder") != DPR:
            raise BadInputError(
                Path(path) / SETTINGS_FILE,
                None,
                f"an index of the sentence-transformers model {retriever.model}, not of DPR "
                "encoders: search it with --retriever dense",
            )
        return retriever
