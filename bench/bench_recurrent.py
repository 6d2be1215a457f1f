"""Host latency of the recurrent kernels against onnxruntime, at speech sizes.

    python3 bench/bench_recurrent.py [--runs 10] [--frames 200] [--hidden 256]

One stack per op: input [T, 1, 80] → two bidirectional layers of hidden size H (LSTM, GRU,
RNN), batch 1, one thread on both sides.  Each stack is compiled in process (parse_onnx →
build_graph → save_om), run by ge.runtime on the compiled kernels (gen_recurrent), checked
against onnxruntime (max abs error) and timed: median of --runs runs after one warm-up.
Prints ours / onnxruntime per stack.
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

from bench.bench_runtime import _median_ms  # noqa: E402  (one timing rule for the benches)

GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
FEATURES = 80


def stack(op: str, frames: int, hidden: int):
    """Two bidirectional layers: Y [T, 2, 1, H] → Transpose/Reshape [T, 1, 2H] between them."""
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(0)
    g = GATES[op]
    nodes, inits, x, width = [], [], "x", FEATURES
    inits.append(numpy_helper.from_array(np.array([frames, 1, 2 * hidden], np.int64), "shape"))
    for k in range(2):
        for part, shape in (("W", (2, g * hidden, width)), ("R", (2, g * hidden, hidden)),
                            ("B", (2, 2 * g * hidden))):
            value = (rng.standard_normal(shape) / np.sqrt(hidden)).astype(np.float32)
            inits.append(numpy_helper.from_array(value, f"l{k}_{part}"))
        nodes += [helper.make_node(op, [x, f"l{k}_W", f"l{k}_R", f"l{k}_B"], [f"l{k}_y"],
                                   name=f"l{k}", hidden_size=hidden, direction="bidirectional"),
                  helper.make_node("Transpose", [f"l{k}_y"], [f"l{k}_t"], perm=[0, 2, 1, 3]),
                  helper.make_node("Reshape", [f"l{k}_t", "shape"], [f"l{k}_out"])]
        x, width = f"l{k}_out", 2 * hidden
    graph = helper.make_graph(
        nodes, op.lower(), [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                          [frames, 1, FEATURES])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])


def bench(op: str, frames: int, hidden: int, runs: int) -> dict:
    import onnxruntime as ort
    import ge.runtime
    from ge.compiler.api import build_graph, save_om
    from ge.parser.onnx import parse_onnx

    model = stack(op, frames, hidden)
    options = {"ge.socVersion": "Ascend310P3", "ge.exec.precision_mode": "must_keep_origin_dtype"}
    with tempfile.TemporaryDirectory(prefix="bench_recurrent_") as tmp:
        om_path = os.path.join(tmp, f"{op}.om")
        save_om(om_path, build_graph(parse_onnx(model, dict(options)), dict(options)), "bench")
        ours = ge.runtime.load(om_path)
    x = np.random.default_rng(1).standard_normal((frames, 1, FEATURES)).astype(np.float32)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), so,
                                   providers=["CPUExecutionProvider"])
    want = session.run(None, {"x": x})[0]
    got = ours.run([x])[0]
    engines = sorted(set(ours.engines.values()))
    ours_ms = _median_ms(lambda: ours.run([x]), runs)
    ort_ms = _median_ms(lambda: session.run(None, {"x": x}), runs)
    ours.close()
    return {"op": op, "ours": ours_ms, "ort": ort_ms, "err": float(np.abs(got - want).max()),
            "engines": engines}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--frames", type=int, default=200)
    ap.add_argument("--hidden", type=int, default=256)
    args = ap.parse_args(argv)
    print(f"2 bidirectional layers, T={args.frames}, batch 1, {FEATURES} features, "
          f"H={args.hidden}, 1 thread, median of {args.runs}")
    print(f"{'stack':<6} {'ours ms':>9} {'ort ms':>9} {'ratio':>6} {'max abs err':>12}  engines")
    for op in GATES:
        r = bench(op, args.frames, args.hidden, args.runs)
        print(f"{op:<6} {r['ours']:>9.2f} {r['ort']:>9.2f} {r['ours'] / r['ort']:>6.2f} "
              f"{r['err']:>12.2e}  {','.join(r['engines'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
