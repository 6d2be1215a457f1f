"""Quantized models (generated with onnxruntime's own tools) through the whole chain, against
onnxruntime: compile with the ATC main flow (what pyatc runs), run on the host runtime, compare.

    python3 bench/quant_models.py [--size ci|full] [--models resnet50,mobilenetv2,bert]
                                  [--out DIR]

For each model of bench/models: the float model, then onnxruntime.quantization's dynamic
(ConvInteger / MatMulInteger), static QDQ (per channel) and static QOperator (QLinearConv /
QLinearMatMul; Conv and MatMul only, the rest of QOperator is com.microsoft) quantizations,
calibrated on 4 seeded batches.  Prints one line per model: ops, compile seconds, max abs
and max relative error (|a - b| / max(|ref|, atol)) against onnxruntime, onnxruntime's own
spread (max abs between its optimised and unoptimised sessions: in a deep dynamically
quantized network a one-ulp difference of a float op before a DynamicQuantizeLinear moves a
value across a rounding boundary, and that quantum propagates), and the ratio of our latency
to onnxruntime's (one thread each, same run).
"""
from __future__ import annotations

import argparse
import contextlib
import io
import logging
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.models import MODELS, save  # noqa: E402

ATOL = 1e-4


def _quantize(float_path: str, out_dir: str, inputs: list) -> dict:
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_dynamic, quantize_static)

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.batches = iter([dict(b) for b in inputs])

        def get_next(self):
            return next(self.batches, None)

    out = {"float": float_path}
    plans = {
        "dynamic": lambda p: quantize_dynamic(float_path, p, weight_type=QuantType.QInt8),
        "static_qdq": lambda p: quantize_static(float_path, p, Reader(),
                                                quant_format=QuantFormat.QDQ,
                                                per_channel=True),
        "static_qop": lambda p: quantize_static(float_path, p, Reader(),
                                                quant_format=QuantFormat.QOperator,
                                                op_types_to_quantize=["Conv", "MatMul"]),
    }
    for name, fn in plans.items():
        path = os.path.join(out_dir, f"{os.path.basename(float_path)[:-5]}_{name}.onnx")
        fn(path)
        out[name] = path
    return out


def _compile(path: str, out_dir: str) -> tuple:
    from ge.atc import main_impl
    output = path[:-5]
    argv = ["pyatc", "--framework=5", f"--model={path}", f"--output={output}",
            "--soc_version=Ascend310P3", "--precision_mode=must_keep_origin_dtype"]
    start = time.perf_counter()
    text = io.StringIO()
    with contextlib.redirect_stdout(text), contextlib.redirect_stderr(text):
        rc = main_impl(argv)
    if rc != 0:
        raise RuntimeError(text.getvalue().strip().splitlines()[-2:])
    return output + ".om", time.perf_counter() - start


def _session(ort, path: str, level):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.graph_optimization_level = level
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def _latency(run, repeat: int = 5) -> float:
    run()
    start = time.perf_counter()
    for _ in range(repeat):
        run()
    return (time.perf_counter() - start) / repeat


def main(argv=None) -> int:
    import onnx
    import onnxruntime as ort

    import ge.runtime
    from ge.runtime.compare import compare_model, random_inputs
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="ci", choices=("ci", "full"))
    ap.add_argument("--models", default="resnet50,mobilenetv2,bert")
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)
    logging.getLogger().setLevel(logging.ERROR)   # onnxruntime.quantization's advice lines
    out_dir = args.out or tempfile.mkdtemp(prefix="quant_models_")
    print(f"{'model (generated)':<32} {'ops':>4} {'compile s':>9} {'max abs':>10} "
          f"{'max rel':>10} {'ort spread':>10} {'ours/ort':>8}  result")
    for name in args.models.split(","):
        float_path = os.path.join(out_dir, f"{name}_{args.size}.onnx")
        save(MODELS[name](size=args.size), float_path)
        model = onnx.load(float_path)
        loaded_specs = [(i.name, [d.dim_value for d in i.type.tensor_type.shape.dim],
                         onnx.helper.tensor_dtype_to_np_dtype(i.type.tensor_type.elem_type))
                        for i in model.graph.input]
        batches = []
        for seed in range(4):
            specs = [type("S", (), {"name": n, "shape": s, "dtype": d})
                     for n, s, d in loaded_specs]
            batches.append({s.name: v for s, v in zip(specs, random_inputs(specs, seed))})
        for kind, path in _quantize(float_path, out_dir, batches).items():
            label = f"{name}_{args.size} {kind}"
            proto = onnx.load(path)
            try:
                om, seconds = _compile(path, out_dir)
                result = compare_model(proto, om, rtol=1e-3, atol=ATOL, seed=0)
                ours = ge.runtime.load(om)
                feeds = [batches[0][spec.name] for spec in ours.inputs]
                sess = _session(ort, path, ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
                plain = _session(ort, path, ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
                ratio = _latency(lambda: ours.run(feeds)) / _latency(
                    lambda: sess.run(None, batches[0]))
                spread = max(float(np.max(np.abs(a.astype(np.float64) - b)))
                             for a, b in zip(sess.run(None, batches[0]),
                                             plain.run(None, batches[0])))
                worst_abs = max(d.max_abs for d in result.outputs)
                worst_rel = max(d.max_rel for d in result.outputs)
                verdict = ("pass" if result.ok else
                           "within ort's own spread" if worst_abs <= spread else "FAIL")
                print(f"{label:<32} {len({n.op_type for n in proto.graph.node}):>4} "
                      f"{seconds:>9.1f} {worst_abs:>10.3g} {worst_rel:>10.3g} {spread:>10.3g} "
                      f"{ratio:>8.2f}  {verdict}")
            except Exception as exc:  # a bench reports every model, whatever broke
                print(f"{label:<32} error: {exc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
