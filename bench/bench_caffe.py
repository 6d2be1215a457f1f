"""Compile time of a Caffe ResNet-50 (prototxt + caffemodel, BatchNorm + Scale) against the same
architecture from ONNX (bench/models/resnet50.py: torchvision v1.5, so the Caffe net puts the
stride on the 3x3 too), full size, in one run: an ATC compile of each to .om with a warm kernel
cache (each model compiled once untimed first), whole processes.

    python3 bench/bench_caffe.py [-n 1] [--keep DIR]

Target: Caffe / ONNX <= 1.2.
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from bench.bench_compile import CPU_TIMES, SOC, environment, wall_time  # noqa: E402
from bench.models import caffe_nets, resnet50, save  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=1, help="timed compiles of each model")
    parser.add_argument("--keep", help="directory for the models and OMs (default: temporary)")
    args = parser.parse_args()
    work = Path(args.keep or tempfile.mkdtemp(prefix="bench_caffe_"))
    work.mkdir(parents=True, exist_ok=True)
    save(resnet50.build(size="full"), work / "resnet50.onnx")
    prototxt, weight = caffe_nets.resnet50(stride_on_3x3=True).save(work)
    env = environment(None, work / "pycache")
    cache = work / "kernel_cache"
    common = [f"--soc_version={SOC}", f"--op_compiler_cache_dir={cache}", "--precision_mode=must_keep_origin_dtype"]
    runs = {
        "onnx": [sys.executable, "-m", "ge.atc", "--framework=5",
                 f"--model={work / 'resnet50.onnx'}", "--output=onnx", *common],
        "caffe": [sys.executable, "-m", "ge.atc", "--framework=0", f"--model={prototxt}",
                  f"--weight={weight}", "--output=caffe", *common],
    }
    env["PYTHONPATH"] = str(REPO_ROOT)
    for argv in runs.values():                                   # warm the kernel cache
        wall_time(argv, env, str(work))
    times = {name: statistics.median(wall_time(argv, env, str(work), name)
                                     for _ in range(args.n)) for name, argv in runs.items()}
    for name in runs:
        cpu = statistics.median(CPU_TIMES[name])
        print(f"{name:<6} ResNet-50 compile (warm cache): {times[name]:7.2f} s wall, "
              f"{cpu:7.2f} s CPU")
    ratio = times["caffe"] / times["onnx"]
    cpu_ratio = statistics.median(CPU_TIMES["caffe"]) / statistics.median(CPU_TIMES["onnx"])
    print(f"caffe / onnx: {ratio:.2f}x wall, {cpu_ratio:.2f}x CPU (target <= 1.2)")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
