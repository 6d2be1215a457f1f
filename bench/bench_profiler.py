"""The runner's --profiler against onnxruntime's own profiler on the same model and inputs.

    python3 bench/bench_profiler.py [--model resnet50] [--size ci|full] [--sets 100] [--warmup 10]

Writes --sets input files, runs `python3 -m ge.runtime --input DIR --warmup_count W --profiler
--summary ...` as a user does (a child process), and onnxruntime (one thread, enable_profiling)
over the same files after the same warm-up.  The comparison is with onnxruntime's basic
optimizations (constant folding, Conv+BatchNorm folded as our ConvBatchNormFusionPass does);
its full optimizations (FusedConv = Conv+Add+Relu, NCHWc layout with ReorderOutput nodes) are
printed for reference.  Our ops are folded back onto ONNX op types
through `_datadump_original_op_names` (an op counts for the ONNX type of the first node it
stands for), so both top-5 tables are in ONNX op types.  Prints both tables, whether the top-5
sets agree, and the mean latency ratio ours / onnxruntime (a baseline measured in the same run).
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

import numpy as np  # noqa: E402

from bench.models import MODELS  # noqa: E402


def _top(table: dict, n: int = 5) -> list:
    total = sum(table.values()) or 1.0
    return [(t, ms, ms / total) for t, ms in sorted(table.items(), key=lambda kv: -kv[1])[:n]]


def _ours(om: str, onnx_model, dirs: list, warmup: int, tmp: str) -> tuple:
    import ge.runtime
    summary = os.path.join(tmp, "summary.json")
    env = dict(os.environ, PYTHONPATH=REPO)
    subprocess.run([sys.executable, "-m", "ge.runtime", "--model", om, "--input", ",".join(dirs),
                    "--warmup_count", str(warmup), "--profiler", "--summary", summary],
                   check=True, env=env, stdout=subprocess.DEVNULL)
    doc = json.load(open(summary))
    onnx_type = {n.name: n.op_type for n in onnx_model.graph.node}
    origin = {s.name: s.origin for s in ge.runtime.load(om)._plan.root.steps}
    table: dict = {}
    for op in doc["profile"]["ops"]:
        names = [n for n in origin.get(op["name"], []) if n in onnx_type]
        key = onnx_type[names[0]] if names else f"({op['type']})"
        table[key] = table.get(key, 0.0) + op["ms"]
    return table, doc["latency_ms"]["mean"]


def _session(onnx_model, profile_prefix: str = "", level: str = "ORT_ENABLE_ALL"):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    so.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
    if profile_prefix:
        so.enable_profiling = True
        so.profile_file_prefix = profile_prefix
    return ort.InferenceSession(onnx_model.SerializeToString(), so,
                                providers=["CPUExecutionProvider"])


def _run_all(sess, feeds_list: list, warmup: int) -> list:
    for _ in range(warmup):
        sess.run(None, feeds_list[0])
    times = []
    for feeds in feeds_list:
        start = time.perf_counter()
        sess.run(None, feeds)
        times.append((time.perf_counter() - start) * 1000)
    return times


def _onnxruntime_profile(onnx_model, feeds_list: list, warmup: int, prefix: str,
                         level: str) -> dict:
    """Mean ms per inference and ONNX op type from onnxruntime's profiler trace (a fused node
    counts for the type onnxruntime reports, e.g. FusedConv)."""
    sess = _session(onnx_model, prefix, level)
    _run_all(sess, feeds_list, warmup)
    trace = json.load(open(sess.end_profiling()))
    node_type = {n.name: n.op_type for n in onnx_model.graph.node}
    table: dict = {}
    runs = len(feeds_list) + warmup
    for event in trace:
        if event.get("cat") != "Node" or not event["name"].endswith("_kernel_time"):
            continue
        op_type = event.get("args", {}).get("op_name") or node_type.get(
            event["name"][:-len("_kernel_time")], "?")
        table[op_type] = table.get(op_type, 0.0) + event["dur"] / 1000.0 / runs
    return table


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="resnet50", choices=sorted(MODELS))
    ap.add_argument("--size", default="ci", choices=("ci", "full"))
    ap.add_argument("--sets", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=10)
    args = ap.parse_args()
    import ge.runtime
    from ge.compiler.api import build_graph, save_om
    from ge.parser.onnx import parse_onnx
    from ge.runtime.compare import random_inputs
    model = MODELS[args.model](size=args.size)
    options = {"ge.socVersion": "Ascend310P3", "ge.exec.precision_mode": "must_keep_origin_dtype"}
    with tempfile.TemporaryDirectory(prefix="bench_profiler_") as tmp:
        om = os.path.join(tmp, "m.om")
        save_om(om, build_graph(parse_onnx(model, dict(options)), dict(options)), "bench")
        specs = ge.runtime.load(om).inputs
        dirs, feeds_list = [], [{} for _ in range(args.sets)]
        for spec in specs:
            d = os.path.join(tmp, spec.name.replace("/", "_"))
            os.mkdir(d)
            dirs.append(d)
        for i in range(args.sets):
            for spec, d, value in zip(specs, dirs, random_inputs(specs, seed=i)):
                np.save(os.path.join(d, f"{i:04d}.npy"), value)
                feeds_list[i][spec.name] = value
        ours, ours_ms = _ours(om, model, dirs, args.warmup, tmp)
        ref = _onnxruntime_profile(model, feeds_list, args.warmup, os.path.join(tmp, "basic"),
                                   "ORT_ENABLE_BASIC")
        fused = _onnxruntime_profile(model, feeds_list, args.warmup, os.path.join(tmp, "all"),
                                     "ORT_ENABLE_ALL")
        ort_ms = float(np.mean(_run_all(_session(model), feeds_list, args.warmup)))
    print(f"{args.model} ({args.size}), {args.sets} input sets, {args.warmup} warm-up runs")
    for title, table in (("ours (--profiler)", ours),
                         ("onnxruntime (enable_profiling, ORT_ENABLE_BASIC)", ref),
                         ("onnxruntime (enable_profiling, ORT_ENABLE_ALL)", fused)):
        print(f"top 5 op types, {title}:")
        for op_type, ms, share in _top(table):
            print(f"  {op_type:<24}{ms:>10.3f} ms{share:>8.1%}")
    same = {t for t, *_ in _top(ours)} == {t for t, *_ in _top(ref)}
    print(f"same op types in the top 5 (ours / onnxruntime ORT_ENABLE_BASIC): "
          f"{'yes' if same else 'no'}")
    print(f"mean latency: ours {ours_ms:.3f} ms, onnxruntime {ort_ms:.3f} ms, "
          f"ratio {ours_ms / ort_ms:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
