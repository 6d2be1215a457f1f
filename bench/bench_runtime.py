"""Host latency of our runtime against onnxruntime: ResNet-50 and a BERT-base encoder.

    python3 bench/bench_runtime.py [--models resnet50,bert] [--size full|ci] [--runs 10] [--light]

Batch 1, one thread on both sides (OMP_NUM_THREADS / OPENBLAS_NUM_THREADS = 1 set before numpy
loads, onnxruntime intra_op_num_threads = 1).  Each model is built by bench/models, compiled
in-process (parse_onnx -> build_graph -> save_om, warm kernel cache on later runs), loaded with
ge.runtime, checked against onnxruntime (max abs error printed) and timed: median of --runs
runs after one warm-up.  Prints ours / onnxruntime per model; the target is <= 3x.
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

from bench.models import MODELS  # noqa: E402

TARGET_RATIO = 3.0


def _median_ms(fn, runs: int) -> float:
    fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def bench_model(name: str, size: str, runs: int) -> dict:
    import onnxruntime as ort
    import ge.runtime
    from ge.compiler.api import build_graph, save_om
    from ge.parser.onnx import parse_onnx
    from ge.runtime.compare import random_inputs

    model = MODELS[name](size=size)
    options = {"ge.socVersion": "Ascend310P3", "ge.exec.precision_mode": "must_keep_origin_dtype"}
    with tempfile.TemporaryDirectory(prefix="bench_runtime_") as tmp:
        start = time.perf_counter()
        om_path = os.path.join(tmp, f"{name}.om")
        save_om(om_path, build_graph(parse_onnx(model, dict(options)), dict(options)), "bench")
        compile_s = time.perf_counter() - start
        ours = ge.runtime.load(om_path)
    inputs = random_inputs(ours.inputs, seed=0)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), so,
                                providers=["CPUExecutionProvider"])
    feeds = {s.name: v for s, v in zip(ours.inputs, inputs)}
    ref = sess.run(None, feeds)[0]
    got = ours.run(inputs)[0]
    ours_ms = _median_ms(lambda: ours.run(inputs), runs)
    ort_ms = _median_ms(lambda: sess.run(None, feeds), runs)
    engines = list(ours.engines.values())
    return {"model": name, "size": size, "compile_s": compile_s, "ours_ms": ours_ms,
            "ort_ms": ort_ms, "ratio": ours_ms / ort_ms,
            "max_abs": float(np.abs(got - ref).max()), "ref_scale": float(np.abs(ref).max()),
            "aicore": engines.count("AiCore"), "aicpu": engines.count("AiCpu")}


def bench_light(runs: int) -> None:
    """Every onnx "light" model-zoo graph: compile, run, compare with the shipped output."""
    import onnx
    from onnx import numpy_helper
    import ge.runtime
    from bench.models import light
    from ge.compiler.api import build_graph, save_om
    from ge.parser.onnx import parse_onnx
    options = {"ge.socVersion": "Ascend310P3", "ge.exec.precision_mode": "must_keep_origin_dtype"}
    print(f"{'light model':<14} {'compile s':>9} {'ours ms':>9} {'max abs err':>11} {'ok':>3}")
    for lm in light.light_models():
        with tempfile.TemporaryDirectory(prefix="bench_light_") as tmp:
            start = time.perf_counter()
            path = os.path.join(tmp, "m.om")
            save_om(path, build_graph(parse_onnx(lm.path, dict(options)), dict(options)), "")
            compile_s = time.perf_counter() - start
            model = ge.runtime.load(path)
        x = [light.reference_input(lm.inputs[0][1])]
        got = model.run(x)[0]
        ref = numpy_helper.to_array(onnx.load_tensor(lm.reference_output))
        ms = _median_ms(lambda: model.run(x), runs)
        ok = np.allclose(got, ref, rtol=1e-4, atol=1e-6)
        print(f"{lm.name:<14} {compile_s:>9.1f} {ms:>9.1f} {float(np.abs(got - ref).max()):>11.3g} "
              f"{'yes' if ok else 'NO':>3}", flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="resnet50,bert")
    ap.add_argument("--size", default="full", choices=("full", "ci"))
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--light", action="store_true",
                    help="also run the nine onnx light models against their shipped outputs")
    args = ap.parse_args(argv)
    if args.light:
        bench_light(max(1, args.runs // 5))
    print(f"{'model':<10} {'size':<5} {'compile s':>9} {'ours ms':>9} {'ort ms':>9} "
          f"{'ratio':>6} {'max abs err':>11} {'|ref|max':>8} {'ops AiCore/AiCpu':>17}")
    worst = 0.0
    for name in [m for m in args.models.split(",") if m]:
        r = bench_model(name, args.size, args.runs)
        worst = max(worst, r["ratio"])
        print(f"{r['model']:<10} {r['size']:<5} {r['compile_s']:>9.1f} {r['ours_ms']:>9.2f} "
              f"{r['ort_ms']:>9.2f} {r['ratio']:>5.2f}x {r['max_abs']:>11.3g} "
              f"{r['ref_scale']:>8.3g} {r['aicore']:>10}/{r['aicpu']}", flush=True)
    print(f"worst ratio {worst:.2f}x (target <= {TARGET_RATIO:.0f}x): "
          f"{'ok' if worst <= TARGET_RATIO else 'over target'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
