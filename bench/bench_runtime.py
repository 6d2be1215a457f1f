"""Host latency of our runtime against onnxruntime: ResNet-50 and a BERT-base encoder.

    python3 bench/bench_runtime.py [--models resnet50,bert] [--size full|ci] [--runs 10]
                                   [--threads 1,N] [--keep-coretype] [--light]

Batch 1, float32 (--precision_mode=must_keep_origin_dtype), one thread against one thread and
N against N (N = the default of both runtimes here: the physical cores; ours `load(threads=)`,
onnxruntime `intra_op_num_threads`, inter-op 1).  Each model is built by bench/models, compiled
in-process (parse_onnx -> build_graph -> save_om, warm kernel cache on later runs), loaded with
ge.runtime, checked against onnxruntime (max abs error printed) and timed: median of --runs
runs after one warm-up, the two runtimes taking turns (an untimed settling run, then a timed
one) so that other jobs on the machine slow both alike.  Prints ours / onnxruntime per model
and thread count; the target is <= 1.2x.

An OPENBLAS_CORETYPE inherited from the environment is dropped (ge.blas then picks the newest
core type the CPU flags allow, as for a user who never set it) unless --keep-coretype; the core
in use is printed.
"""
from __future__ import annotations

import os
import sys

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # numpy's
    os.environ[_var] = "1"
if "--keep-coretype" not in sys.argv:
    os.environ.pop("OPENBLAS_CORETYPE", None)

import argparse  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

from bench.models import MODELS  # noqa: E402

TARGET_RATIO = 1.2
OPTIONS = {"ge.socVersion": "Ascend310P3", "ge.exec.precision_mode": "must_keep_origin_dtype"}


def _alternating_ms(fns: list, runs: int) -> list:
    """Median ms of each function, run alternately (one warm-up each first).  Each turn starts
    with an untimed settling run: the run right after the other runtime's measured up to 15%
    slower here (onnxruntime's workers spin on after its run returns, our pool's sleep), a
    cost of running two runtimes in turn in one process, which no deployment does."""
    for fn in fns:
        fn()
    times = [[] for _ in fns]
    for _ in range(runs):
        for fn, out in zip(fns, times):
            fn()
            start = time.perf_counter()
            fn()
            out.append(time.perf_counter() - start)
    return [statistics.median(t) * 1000 for t in times]


def _median_ms(fn, runs: int) -> float:
    return _alternating_ms([fn], runs)[0]


def bench_model(name: str, size: str, runs: int, thread_counts: list) -> list:
    import onnxruntime as ort
    import ge.runtime
    from ge.compiler.api import build_graph, save_om
    from ge.parser.onnx import parse_onnx
    from ge.runtime.compare import random_inputs

    model = MODELS[name](size=size)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_runtime_") as tmp:
        start = time.perf_counter()
        om_path = os.path.join(tmp, f"{name}.om")
        save_om(om_path, build_graph(parse_onnx(model, dict(OPTIONS)), dict(OPTIONS)), "bench")
        compile_s = time.perf_counter() - start
        for threads in thread_counts:
            ours = ge.runtime.load(om_path, threads=threads)
            inputs = random_inputs(ours.inputs, seed=0)
            so = ort.SessionOptions()
            so.intra_op_num_threads = threads
            so.inter_op_num_threads = 1
            sess = ort.InferenceSession(model.SerializeToString(), so,
                                        providers=["CPUExecutionProvider"])
            feeds = {s.name: v for s, v in zip(ours.inputs, inputs)}
            ref = sess.run(None, feeds)[0]
            got = ours.run(inputs)[0]
            ours_ms, ort_ms = _alternating_ms([lambda: ours.run(inputs),
                                               lambda: sess.run(None, feeds)], runs)
            engines = list(ours.engines.values())
            rows.append({"model": name, "size": size, "threads": threads,
                         "compile_s": compile_s, "ours_ms": ours_ms, "ort_ms": ort_ms,
                         "ratio": ours_ms / ort_ms, "max_abs": float(np.abs(got - ref).max()),
                         "ref_scale": float(np.abs(ref).max()),
                         "aicore": engines.count("AiCore"), "aicpu": engines.count("AiCpu")})
            ours.close()
    return rows


def bench_light(runs: int) -> None:
    """Every onnx "light" model-zoo graph: compile, run, compare with the shipped output."""
    import onnx
    from onnx import numpy_helper
    import ge.runtime
    from bench.models import light
    from ge.compiler.api import build_graph, save_om
    from ge.parser.onnx import parse_onnx
    options = dict(OPTIONS)
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
    from ge import blas
    from ge.runtime._threads import default_threads
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="resnet50,bert")
    ap.add_argument("--size", default="full", choices=("full", "ci"))
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--threads", default=f"1,{default_threads()}",
                    help="comma-separated thread counts (default: 1 and the physical cores)")
    ap.add_argument("--keep-coretype", action="store_true",
                    help="keep an OPENBLAS_CORETYPE set in the environment")
    ap.add_argument("--light", action="store_true",
                    help="also run the nine onnx light models against their shipped outputs")
    args = ap.parse_args(argv)
    counts = list(dict.fromkeys(int(t) for t in args.threads.split(",") if t))
    print(f"OpenBLAS core {blas.load()}; threads {counts}; precision must_keep_origin_dtype")
    if args.light:
        bench_light(max(1, args.runs // 5))
    print(f"{'model':<10} {'size':<5} {'thr':>3} {'compile s':>9} {'ours ms':>9} {'ort ms':>9} "
          f"{'ratio':>6} {'max abs err':>11} {'|ref|max':>8} {'ops AiCore/AiCpu':>17}")
    worst = 0.0
    for name in [m for m in args.models.split(",") if m]:
        for r in bench_model(name, args.size, args.runs, counts):
            worst = max(worst, r["ratio"])
            print(f"{r['model']:<10} {r['size']:<5} {r['threads']:>3} {r['compile_s']:>9.1f} "
                  f"{r['ours_ms']:>9.2f} {r['ort_ms']:>9.2f} {r['ratio']:>5.2f}x "
                  f"{r['max_abs']:>11.3g} {r['ref_scale']:>8.3g} "
                  f"{r['aicore']:>10}/{r['aicpu']}", flush=True)
    print(f"worst ratio {worst:.2f}x (target <= {TARGET_RATIO:.1f}x): "
          f"{'ok' if worst <= TARGET_RATIO else 'over target'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
