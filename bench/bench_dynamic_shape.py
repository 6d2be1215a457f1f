"""Unknown-shape models (docs/dynamic-shapes.md "Unknown dimensions and ranges").

    python3 bench/bench_dynamic_shape.py [--size full|ci] [--runs 10] [--corpus WHEEL_DIR]

1. ResNet-50 (bench/models) compiled static at batch 1 and as an unknown-shape model with
   `--input_shape=input:1~4,3,224,224` (compiled at the upper bound, batch 4), both in-process
   with one kernel cache.  The dynamic OM is run at batch 1: the first run specialises it (the
   compiler builds the source graph at that shape; reported separately, once with the kernels
   the static compile left in the cache and once with an empty cache), later runs use the
   specialisation.  Prints the steady-state run time of the dynamic OM over the static OM's at
   the same shape (target <= 1.3x) and the max abs difference of their outputs.
2. With --corpus DIR (a directory holding `rapidocr_onnxruntime-1.4.4-py3-none-any.whl`, e.g.
   from `pip download --no-deps rapidocr-onnxruntime==1.4.4`): the PP-OCRv4 text detector
   compiled with `--input_shape=x:1,3,-1,-1` (its symbolic dims; hint 1,3,320,320) and run at
   three image sizes against onnxruntime.

One thread on both sides, as bench/bench_runtime.py; medians of --runs runs after a warm-up.
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
import zipfile  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

from bench.models import MODELS  # noqa: E402

TARGET_RATIO = 1.3
SOC = "Ascend310P3"
OCR_WHEEL = "rapidocr_onnxruntime-1.4.4-py3-none-any.whl"
OCR_MEMBER = "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx"
OCR_SIZES = [(1, 3, 320, 320), (1, 3, 256, 384), (1, 3, 480, 640)]


def _median_ms(fn, runs: int) -> float:
    fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def _compile(model, om_path: str, cache: str, shape: str = "", hint: str = "") -> float:
    from ge.compiler.api import build_graph, save_om
    from ge.parser.onnx import parse_onnx
    options = {"ge.socVersion": SOC, "ge.op_compiler_cache_dir": cache,
               "ge.exec.precision_mode": "must_keep_origin_dtype"}
    if shape:
        options["input_shape"] = shape
    if hint:
        options["ge.inputHintShape"] = hint
    start = time.perf_counter()
    save_om(om_path, build_graph(parse_onnx(model, dict(options)), dict(options)), "bench")
    return time.perf_counter() - start


def _first_run_s(om_path: str, x) -> float:
    import ge.runtime
    with ge.runtime.load(om_path) as model:
        start = time.perf_counter()
        model.run([x])
        return time.perf_counter() - start


def bench_resnet(size: str, runs: int) -> dict:
    import ge.runtime
    model = MODELS["resnet50"](size=size)
    side = 224 if size == "full" else 32
    x = np.random.default_rng(0).standard_normal((1, 3, side, side)).astype(np.float32)
    with tempfile.TemporaryDirectory(prefix="bench_dynshape_") as tmp:
        cache, cold = os.path.join(tmp, "cache"), os.path.join(tmp, "cold")
        static_om, dynamic_om = os.path.join(tmp, "static.om"), os.path.join(tmp, "dyn.om")
        static_s = _compile(model, static_om, cache)
        dynamic_s = _compile(model, dynamic_om, cache, f"input:1~4,3,{side},{side}")
        # the first run at batch 1 specialises: kernels from the static compile are cached
        warm_first = _first_run_s(dynamic_om, x)
        # the same with an empty kernel cache (the specialisation compiles every kernel)
        cold_om = os.path.join(tmp, "dyn_cold.om")
        _compile(model, cold_om, cold, f"input:1~4,3,{side},{side}")
        import shutil
        shutil.rmtree(cold)
        cold_first = _first_run_s(cold_om, x)
        static, dynamic = ge.runtime.load(static_om), ge.runtime.load(dynamic_om)
        try:
            diff = float(np.abs(static.run([x])[0] - dynamic.run([x])[0]).max())
            static_ms = _median_ms(lambda: static.run([x]), runs)
            dynamic_ms = _median_ms(lambda: dynamic.run([x]), runs)
        finally:
            static.close()
            dynamic.close()
        sizes = (os.path.getsize(static_om), os.path.getsize(dynamic_om))
    return {"static_compile_s": static_s, "dynamic_compile_s": dynamic_s,
            "first_run_warm_cache_s": warm_first, "first_run_cold_cache_s": cold_first,
            "static_ms": static_ms, "dynamic_ms": dynamic_ms,
            "ratio": dynamic_ms / static_ms, "max_abs_diff": diff, "om_bytes": sizes}


def bench_corpus(wheel_dir: str) -> list:
    import onnxruntime as ort
    import ge.runtime
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_dynshape_ocr_") as tmp:
        with zipfile.ZipFile(os.path.join(wheel_dir, OCR_WHEEL)) as wheel:
            data = wheel.read(OCR_MEMBER)
        onnx_path = os.path.join(tmp, "det.onnx")
        with open(onnx_path, "wb") as f:
            f.write(data)
        om = os.path.join(tmp, "det.om")
        compile_s = _compile(onnx_path, om, os.path.join(tmp, "cache"), "x:1,3,-1,-1",
                             "0:[1,3,320,320]")
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        sess = ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])
        rng = np.random.default_rng(0)
        with ge.runtime.load(om) as model:
            for shape in OCR_SIZES:
                x = rng.random(shape, dtype=np.float32)
                start = time.perf_counter()
                (got,) = model.run([x])
                first = time.perf_counter() - start
                (want,) = sess.run(None, {"x": x})
                rows.append({"shape": shape, "compile_s": compile_s, "first_run_s": first,
                             "max_abs_error": float(np.abs(got - want).max()),
                             "out_shape": got.shape})
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=("full", "ci"), default="full")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--corpus", default="", help="directory holding " + OCR_WHEEL)
    args = parser.parse_args()
    r = bench_resnet(args.size, args.runs)
    print(f"ResNet-50 ({args.size}) batch 1: static OM {r['static_ms']:.1f} ms, unknown-shape "
          f"OM (1~4) {r['dynamic_ms']:.1f} ms -> {r['ratio']:.2f}x (target <= {TARGET_RATIO}), "
          f"max |diff| {r['max_abs_diff']:.2e}")
    print(f"  compile: static {r['static_compile_s']:.2f} s, unknown-shape "
          f"{r['dynamic_compile_s']:.2f} s; first run (specialisation): warm kernel cache "
          f"{r['first_run_warm_cache_s']:.2f} s, empty cache {r['first_run_cold_cache_s']:.2f} s;"
          f" OM bytes static {r['om_bytes'][0]}, unknown-shape {r['om_bytes'][1]}")
    if args.corpus:
        for row in bench_corpus(args.corpus):
            print(f"PP-OCRv4 det x:1,3,-1,-1 at {list(row['shape'])}: out {list(row['out_shape'])}"
                  f", max abs error vs onnxruntime {row['max_abs_error']:.2e}, first run "
                  f"{row['first_run_s']:.2f} s (compile {row['compile_s']:.2f} s)")
    return 0 if r["ratio"] <= TARGET_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
