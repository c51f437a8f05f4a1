"""Loading the encoders of dense retrieval: sentence-transformers models, and DPR's question
and context checkpoints (Hugging Face ``DPRQuestionEncoder`` / ``DPRContextEncoder``).

Both the dense retriever (`namesake.retrieval.dense`) and the ``dpr`` retriever kind
(`namesake.retrieval.dpr`) load through here, so neither imports the other for it.

:class:`DPREncoder` gives a DPR encoder the few ``SentenceTransformer`` methods that the
dense retriever and the sharded ``namesake encode`` call (``encode_query``,
``encode_document``, ``preprocess`` and the forward pass, ``similarity_fn_name``), so DPR
runs through their one code path. As in DPR:

- the embedding is the pooler output, i.e. the last layer's ``[CLS]`` vector (projected
  when the checkpoint has a ``projection_dim``);
- a passage is the (title, text) pair given to the tokenizer, ``[CLS] title [SEP] text
  [SEP]`` (:func:`title_separator` is None for these encoders, so the passage input is
  that pair);
- the similarity is the inner product (``similarity="cos"`` normalises both sides instead).

A folder that is not the encoder asked for (no DPR config, or the other encoder) is refused
by name before any weights are read: transformers would otherwise start the missing encoder
from random weights.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from namesake.errors import BadInputError, NamesakeError

SENTENCE_TRANSFORMERS = "sentence-transformers"
DPR = "dpr"
ENCODER_TYPES = (SENTENCE_TRANSFORMERS, DPR)
DEFAULT_QUESTION_ENCODER = "facebook/dpr-question_encoder-multiset-base"
DEFAULT_CONTEXT_ENCODER = "facebook/dpr-ctx_encoder-multiset-base"
#: per role: the transformers model class name and the command-line option that names it
ROLES = {
    "question": ("DPRQuestionEncoder", "--dpr-question-encoder"),
    "context": ("DPRContextEncoder", "--dpr-context-encoder"),
}

#: an encoder input: a question, or a passage's (title, text) pair
EncoderInput = str | tuple[str, str]


class DPREncoder:
    """A DPR question or context encoder and its tokenizer, with the interface of a
    ``SentenceTransformer`` that the dense retriever uses."""

    similarity_fn_name = "dot"
    #: passages go to the tokenizer as (title, text) pairs, not joined by a separator
    takes_pairs = True

    def __init__(self, model, tokenizer, device: str | None = None):
        self.model = model.to(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.model.eval()
        self.tokenizer = tokenizer
        config = model.config
        self.max_length = min(tokenizer.model_max_length, config.max_position_embeddings)

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def get_embedding_dimension(self) -> int:
        config = self.model.config
        return config.projection_dim or config.hidden_size

    def eval(self) -> DPREncoder:
        self.model.eval()
        return self

    def preprocess(self, inputs: Sequence[EncoderInput], prompt=None, task=None) -> dict:
        """Token ids of questions, or of (title, text) passage pairs (``[CLS] title [SEP]
        text [SEP]``), padded and truncated to the model's length. DPR has no prompts."""
        options = {
            "padding": True,
            "truncation": True,
            "max_length": self.max_length,
            "return_tensors": "pt",
        }
        if inputs and isinstance(inputs[0], tuple):
            titles, texts = zip(*inputs, strict=True)
            return dict(self.tokenizer(list(titles), list(texts), **options))
        return dict(self.tokenizer(list(inputs), **options))

    def __call__(self, features: dict, task=None) -> dict:
        return {"sentence_embedding": self.model(**features).pooler_output}

    def encode(
        self,
        inputs: Sequence[EncoderInput],
        batch_size: int = 32,
        normalize_embeddings: bool = False,
        convert_to_numpy: bool = True,
        show_progress_bar: bool = False,
    ) -> np.ndarray:
        """float32 embeddings, one row per input, in input order (batched longest first)."""
        order = sorted(range(len(inputs)), key=lambda i: -input_length(inputs[i]))
        out = np.zeros((len(inputs), self.get_embedding_dimension()), dtype=np.float32)
        with torch.inference_mode():
            for start in range(0, len(order), batch_size):
                rows = order[start : start + batch_size]
                features = self.preprocess([inputs[i] for i in rows])
                features = {name: value.to(self.device) for name, value in features.items()}
                vectors = self(features)["sentence_embedding"].float()
                if normalize_embeddings:
                    vectors = torch.nn.functional.normalize(vectors, p=2, dim=1)
                out[rows] = vectors.cpu().numpy()
        return out

    encode_query = encode
    encode_document = encode


def _checked_config(name: str, role: str):
    """The DPR config of encoder `name`, after checking it is the `role` encoder."""
    from transformers import AutoConfig

    architecture, option = ROLES[role]
    folder = Path(name)
    if folder.is_dir() and not (folder / "config.json").is_file():
        raise BadInputError(folder, None, f"no config.json: not a DPR {role} encoder ({option})")
    try:
        config = AutoConfig.from_pretrained(name)
    except (OSError, ValueError) as error:
        raise NamesakeError(f"{option} {name}: cannot load its config ({error})") from None
    where = folder / "config.json" if folder.is_dir() else name
    if config.model_type != "dpr":
        raise BadInputError(
            where, None, f"a {config.model_type!r} model, not a DPR {role} encoder ({option})"
        )
    declared = config.architectures or []
    if declared and architecture not in declared:
        raise BadInputError(
            where,
            None,
            f"a {', '.join(declared)} checkpoint, not the {architecture} that {option} needs",
        )
    return config


def load_dpr_encoder(name: str, role: str, device: str | None = None) -> DPREncoder:
    """The DPR `role` ("question" or "context") encoder at `name` (Hub id or folder)."""
    import transformers

    config = _checked_config(name, role)
    architecture, option = ROLES[role]
    model_class = getattr(transformers, architecture)
    tokenizer_class = getattr(transformers, f"{architecture}Tokenizer")
    model, loading = model_class.from_pretrained(name, config=config, output_loading_info=True)
    if loading["missing_keys"]:
        raise BadInputError(
            name,
            None,
            f"{len(loading['missing_keys'])} {architecture} weights missing (e.g. "
            f"{sorted(loading['missing_keys'])[0]}): not the {role} encoder {option} needs",
        )
    return DPREncoder(model, tokenizer_class.from_pretrained(name), device)


def input_length(item: str | tuple[str, str]) -> int:
    """Characters in an encoder input (both parts of a pair), to batch similar lengths."""
    return len(item) if isinstance(item, str) else sum(map(len, item))


def load_encoder(
    name: str, device: str | None, encoder_type: str = SENTENCE_TRANSFORMERS, role: str = "context"
):
    """A sentence-transformers model (or an ONNX one: a bundled model such as
    ``bundled:bge-small``, or a local ONNX folder, `namesake.retrieval.onnx_encoder`), or a
    DPR `role` ("question" or "context") encoder."""
    if encoder_type == SENTENCE_TRANSFORMERS:
        from namesake.retrieval.onnx_encoder import is_onnx_model, load_onnx_encoder

        if is_onnx_model(name):
            return load_onnx_encoder(name)
        from sentence_transformers import SentenceTransformer

        return SentenceTransformer(name, device=device)
    if encoder_type == DPR:
        return load_dpr_encoder(name, role, device)
    raise ValueError(
        f"encoder type must be one of {', '.join(ENCODER_TYPES)}, not {encoder_type!r}"
    )


def title_separator(encoder) -> str | None:
    """The token between title and text; None for an encoder given (title, text) pairs."""
    if getattr(encoder, "takes_pairs", False):
        return None
    tokenizer = getattr(encoder, "tokenizer", None)
    return getattr(tokenizer, "sep_token", None) or "."


def embedding_dimension(encoder) -> int:
    # sentence-transformers 5.2 renamed get_sentence_embedding_dimension
    get = getattr(encoder, "get_embedding_dimension", None)
    return (get or encoder.get_sentence_embedding_dimension)()
