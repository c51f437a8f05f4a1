"""The DPR bi-encoder: question and passage encoders, the in-batch-negative loss, and the
export to a sentence-transformers folder the dense retriever loads.

- :func:`dpr_loss`: negative log-likelihood of the positive passage over dot-product scores,
  with in-batch negatives and ``h`` hard negatives per question (Karpukhin et al. 2020).
- :class:`BiEncoder`: question and passage ``AutoModel`` encoders (shared or separate), the
  embedding is the last layer's ``[CLS]`` vector (DPR's pooling).
- :func:`export_sentence_transformers`: a sentence-transformers folder (Transformer + CLS
  Pooling) that ``DenseRetriever.build(..., model=passage_dir, query_model=question_dir)``
  and ``namesake retrieve --model/--query-model`` load.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn


def dpr_loss(q: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    """DPR's NLL loss: mean over questions of ``-log softmax(q_i · p)[i * (1 + h)]``.

    ``q`` is ``[B, d]``; ``p`` is ``[B * (1 + h), d]``, the passages of question ``i`` in rows
    ``i * (1 + h)`` (its positive) to ``i * (1 + h) + h`` (its ``h`` hard negatives). Every
    question scores every passage of the batch (dot product): the others' positives and hard
    negatives are its in-batch negatives.
    """
    if q.dim() != 2 or p.dim() != 2 or q.shape[1] != p.shape[1]:
        raise ValueError(
            f"expected q [B, d] and p [B*(1+h), d], got {tuple(q.shape)}, {tuple(p.shape)}"
        )
    batch = q.shape[0]
    if batch == 0 or p.shape[0] % batch:
        raise ValueError(f"{p.shape[0]} passages is not a multiple of {batch} questions")
    per_question = p.shape[0] // batch
    scores = q @ p.T
    targets = torch.arange(batch, device=q.device) * per_question
    return F.cross_entropy(scores.float(), targets)


# --- the bi-encoder ---------------------------------------------------------------------


class BiEncoder(nn.Module):
    """DPR's bi-encoder: ``AutoModel`` question and passage encoders, ``[CLS]`` pooling.

    ``shared=True`` (or ``passage_model=None``) uses one encoder for both.
    """

    def __init__(self, question_model: str, passage_model: str | None = None, shared: bool = False):
        super().__init__()
        self.question_encoder = load_encoder(question_model)
        self.shared = shared or passage_model is None
        self.passage_encoder = self.question_encoder if self.shared else load_encoder(passage_model)

    @staticmethod
    def _cls(encoder: nn.Module, inputs: Mapping) -> torch.Tensor:
        return encoder(**inputs).last_hidden_state[:, 0]

    def encode_questions(self, inputs: Mapping) -> torch.Tensor:
        return self._cls(self.question_encoder, inputs)

    def encode_passages(self, inputs: Mapping) -> torch.Tensor:
        return self._cls(self.passage_encoder, inputs)

    def forward(self, question_inputs: Mapping, passage_inputs: Mapping):
        return self.encode_questions(question_inputs), self.encode_passages(passage_inputs)


def load_encoder(name: str) -> nn.Module:
    """``AutoModel`` without its pooler where it has one (unused by CLS pooling; an unused
    parameter would break DistributedDataParallel)."""
    from transformers import AutoModel

    try:
        return AutoModel.from_pretrained(name, add_pooling_layer=False)
    except TypeError:
        return AutoModel.from_pretrained(name)


# --- export -----------------------------------------------------------------------------


def export_sentence_transformers(
    encoder_dir: str | os.PathLike, out_dir: str | os.PathLike, max_seq_length: int = 256
) -> Path:
    """Writes a sentence-transformers folder (Transformer + CLS Pooling) for `encoder_dir`.

    The folder loads with ``SentenceTransformer(out_dir)`` and so as ``model`` (passage
    encoder) or ``query_model`` (question encoder) of ``DenseRetriever.build``. No
    normalisation layer: the DenseRetriever normalises itself (see the module docstring).
    """
    from sentence_transformers import SentenceTransformer

    try:  # sentence-transformers >= 6 moved the modules
        from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    except ImportError:  # pragma: no cover - older versions
        from sentence_transformers.models import Pooling, Transformer

    transformer = Transformer(str(encoder_dir), max_seq_length=max_seq_length)
    get = getattr(transformer, "get_embedding_dimension", None)
    dimension = (get or transformer.get_word_embedding_dimension)()
    pooling = Pooling(dimension, pooling_mode="cls")
    model = SentenceTransformer(modules=[transformer, pooling], device="cpu")
    out_dir = Path(out_dir)
    model.save(str(out_dir))
    return out_dir
