"""Precision modes on the host (issue 16): latency under force_fp16 over the float32 build, and
compile time under allow_mix_precision over the float32 compile.

    python3 bench/bench_precision.py [--size ci|full] [--runs 20] [--models resnet50,bert]

Per model: compiled in process (parse_onnx -> build_graph -> save_om) with
--precision_mode=must_keep_origin_dtype (the float32 build), force_fp16 and allow_mix_precision,
each into a fresh kernel cache (cold: every kernel compiled) and again into the warm cache
(the steady state of a user who recompiles; best of 3, wall and CPU time of the process); latency is the median of --runs runs of each OM
after one warm-up, one thread; the error of each build against onnxruntime (max abs, and the
dtype tolerance of docs/runtime.md) is printed alongside.
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.bench_runtime import _median_ms  # noqa: E402  (one timing rule for the benches)

MODES = ("must_keep_origin_dtype", "force_fp16", "allow_mix_precision")


def _compile(model, path: str, mode: str, cache: str) -> tuple:
    """(wall s, CPU s of this process) of one parse + compile + save."""
    from ge.compiler.api import build_graph, save_om
    from ge.parser.onnx import parse_onnx
    options = {"ge.socVersion": "Ascend310P3", "ge.exec.precision_mode": mode,
               "ge.op_compiler_cache_dir": cache}
    start, cpu = time.perf_counter(), time.process_time()
    graph = parse_onnx(model, dict(options))
    save_om(path, build_graph(graph, dict(options)), "bench")
    return time.perf_counter() - start, time.process_time() - cpu


def bench(name: str, size: str, runs: int, work: str) -> dict:
    import ge.runtime
    from bench.models import MODELS
    from ge.runtime.compare import compare_model, random_inputs
    model = MODELS[name](size=size)
    out = {}
    for mode in MODES:
        cache = os.path.join(work, f"cache_{name}_{mode}")
        om = os.path.join(work, f"{name}_{mode}.om")
        cold = _compile(model, om, mode, cache)[0]
        # warm: the best of 3 (wall and CPU); CPU time is what load on a shared machine
        # disturbs least (a warm compile runs no compiler subprocess)
        warm_runs = [_compile(model, om, mode, cache) for _ in range(3)]
        warm, warm_cpu = min(w for w, _ in warm_runs), min(c for _, c in warm_runs)
        loaded = ge.runtime.load(om)
        inputs = random_inputs(loaded.inputs, seed=0)
        latency = _median_ms(lambda: loaded.run(inputs), runs)
        result = compare_model(model, loaded, inputs)
        out[mode] = dict(cold=cold, warm=warm, warm_cpu=warm_cpu, ms=latency, ok=result.ok,
                         err=max(d.max_abs for d in result.outputs),
                         dtype=result.outputs[0].dtype)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="ci", choices=("ci", "full"))
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--models", default="resnet50,bert")
    args = parser.parse_args(argv)
    print(f"size {args.size}, {args.runs} runs, one thread")
    print(f"{'model':<10} {'mode':<24} {'compile cold s':>14} {'warm s':>8} {'warm CPU s':>10} "
          f"{'latency ms':>11} {'max abs err':>12}  dtype/ok")
    with tempfile.TemporaryDirectory(prefix="bench_precision_") as work:
        for name in args.models.split(","):
            rows = bench(name, args.size, args.runs, work)
            base = rows["must_keep_origin_dtype"]
            for mode, r in rows.items():
                print(f"{name:<10} {mode:<24} {r['cold']:>14.2f} {r['warm']:>8.2f} "
                      f"{r['warm_cpu']:>10.2f} {r['ms']:>11.3f} {r['err']:>12.3g}  {r['dtype']}/"
                      f"{'ok' if r['ok'] else 'FAIL'}")
            fp16, mix = rows["force_fp16"], rows["allow_mix_precision"]
            print(f"{name:<10} force_fp16 latency / fp32: {fp16['ms'] / base['ms']:.2f}x; "
                  f"allow_mix_precision compile / fp32: cold {mix['cold'] / base['cold']:.2f}x, "
                  f"warm {mix['warm'] / base['warm']:.2f}x, "
                  f"warm CPU {mix['warm_cpu'] / base['warm_cpu']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
