"""The DPR bi-encoder: question and passage encoders, the in-batch-negative loss, and the
export to a sentence-transformers folder the dense retriever loads.

- :func:`dpr_loss`: negative log-likelihood of the positive passage over dot-product scores,
  with in-batch negatives and ``h`` hard negatives per question (Karpukhin et al. 2020).
- :func:`gather_with_grad`: every process's embeddings, for a loss over the global batch
  (variable row counts allowed), this process's rows keeping their gradient.
- :class:`BiEncoder`: question and passage ``AutoModel`` encoders (shared or separate), the
  embedding is the last layer's ``[CLS]`` vector (DPR's pooling).
- :func:`export_sentence_transformers`: a sentence-transformers folder (Transformer + CLS
  Pooling) that ``DenseRetriever.build(..., model=passage_dir, query_model=question_dir)``
  and ``namesake retrieve --model/--query-model`` load; it declares the dot product as its
  similarity, the one DPR is trained with.
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


def gather_with_grad(tensor: torch.Tensor) -> torch.Tensor:
    """All processes' rows, in rank order; this process's rows keep their gradient (DPR).

    The other processes' rows are constants: each process back-propagates through its own
    embeddings only, and DDP averages the gradients, so a loss over the gathered global batch
    must be multiplied by the process count before ``backward``. Processes may hold different
    numbers of rows (the last batch of an epoch): they are padded for ``all_gather`` and the
    padding dropped again. Without ``torch.distributed`` (one process) ``tensor`` is returned.
    """
    import torch.distributed as dist

    if not dist.is_available() or not dist.is_initialized() or dist.get_world_size() == 1:
        return tensor
    world = dist.get_world_size()
    size = torch.tensor([tensor.shape[0]], device=tensor.device)
    sizes = [torch.zeros_like(size) for _ in range(world)]
    dist.all_gather(sizes, size)
    sizes = [int(s.item()) for s in sizes]
    longest = max(sizes)
    padded = tensor.detach()
    if padded.shape[0] < longest:
        pad = padded.new_zeros((longest - padded.shape[0], *padded.shape[1:]))
        padded = torch.cat([padded, pad])
    parts = [torch.empty_like(padded) for _ in sizes]
    dist.all_gather(parts, padded.contiguous())
    parts = [part[:n] for part, n in zip(parts, sizes, strict=True)]
    parts[dist.get_rank()] = tensor
    return torch.cat(parts)


# --- the bi-encoder ---------------------------------------------------------------------


#: how a text's token vectors become its embedding: DPR's ``[CLS]`` vector, or the mean over
#: its tokens (what sentence-transformers models such as all-MiniLM-L6-v2 were trained with:
#: starting one of them on CLS pooling throws its training away)
POOLINGS = ("cls", "mean")


class BiEncoder(nn.Module):
    """DPR's bi-encoder: ``AutoModel`` question and passage encoders, ``[CLS]`` pooling (or
    ``pooling="mean"``).

    ``shared=True`` (or ``passage_model=None``) uses one encoder for both.
    """

    def __init__(
        self,
        question_model: str,
        passage_model: str | None = None,
        shared: bool = False,
        pooling: str = "cls",
    ):
        super().__init__()
        if pooling not in POOLINGS:
            raise ValueError(f"pooling must be one of {POOLINGS}, not {pooling!r}")
        self.pooling = pooling
        self.question_encoder = load_encoder(question_model)
        self.shared = shared or passage_model is None
        self.passage_encoder = self.question_encoder if self.shared else load_encoder(passage_model)

    def _pool(self, encoder: nn.Module, inputs: Mapping) -> torch.Tensor:
        hidden = encoder(**inputs).last_hidden_state
        if self.pooling == "cls":
            return hidden[:, 0]
        mask = inputs["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        return (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)

    def encode_questions(self, inputs: Mapping) -> torch.Tensor:
        return self._pool(self.question_encoder, inputs)

    def encode_passages(self, inputs: Mapping) -> torch.Tensor:
        return self._pool(self.passage_encoder, inputs)

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
    encoder_dir: str | os.PathLike,
    out_dir: str | os.PathLike,
    max_seq_length: int = 256,
    pooling: str = "cls",
) -> Path:
    """Writes a sentence-transformers folder (Transformer + Pooling, CLS or mean as trained)
    for `encoder_dir`.

    The folder loads with ``SentenceTransformer(out_dir)`` and so as ``model`` (passage
    encoder) or ``query_model`` (question encoder) of ``DenseRetriever.build``. It declares
    ``similarity_fn_name="dot"`` (DPR's training similarity), so ``model.similarity`` ranks
    as training did; no normalisation layer, which would turn the dot product into cosine.
    """
    from sentence_transformers import SentenceTransformer

    try:  # sentence-transformers >= 6 moved the modules
        from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    except ImportError:  # pragma: no cover - older versions
        from sentence_transformers.models import Pooling, Transformer

    transformer = Transformer(str(encoder_dir), max_seq_length=max_seq_length)
    get = getattr(transformer, "get_embedding_dimension", None)
    dimension = (get or transformer.get_word_embedding_dimension)()
    model = SentenceTransformer(
        modules=[transformer, Pooling(dimension, pooling_mode=pooling)],
        device="cpu",
        similarity_fn_name="dot",
    )
    out_dir = Path(out_dir)
    model.save(str(out_dir))
    return out_dir
