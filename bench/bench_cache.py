"""Kernel compile and cache benchmark on ResNet-50.

Builds the ResNet-50 ONNX model (bench/models/resnet50.py), parses it, infers shapes and places
engines, then times `compile_ops` for every kernel placed on the compiled engines:

  cold-1   empty cache, TE_PARALLEL_COMPILER=1
  cold-2   empty cache, TE_PARALLEL_COMPILER=2
  warm     the cache filled by cold-2 (every kernel a verified hit)

and prints the warm speed-up over cold and the 2-job speed-up over 1 job.  Cache roots are
private temporary directories, removed at the end.

    python3 bench/bench_cache.py [--size ci|full] [--repeat N]
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.models import resnet50  # noqa: E402
from ge.compiler import prepare  # noqa: E402
from ge.compiler.engines import ATTR_ENGINE, COMPILED_ENGINES, place_engines  # noqa: E402
from ge.compiler.opcompile import compile_ops  # noqa: E402
from ge.parser.onnx import parse_onnx  # noqa: E402


def placed_graph(size: str):
    graph = parse_onnx(resnet50.build(size, 1), {})
    prepare.infer_shapes(graph)
    place_engines(graph, {})
    return graph


def timed_compile(graph, root: str, jobs: int, mode: str = "enable"):
    os.environ["TE_PARALLEL_COMPILER"] = str(jobs)
    opts = {"ge.op_compiler_cache_dir": root, "ge.op_compiler_cache_mode": mode,
            "ge.socVersion": "Ascend310"}
    start = time.perf_counter()
    result = compile_ops(graph, opts)
    return time.perf_counter() - start, result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=("ci", "full"), default="full")
    parser.add_argument("--repeat", type=int, default=1, help="cold runs per job count (best)")
    args = parser.parse_args(argv)
    graph = placed_graph(args.size)
    compiled = [n for n in graph.get_all_nodes() if n.attr(ATTR_ENGINE) in COMPILED_ENGINES]
    print(f"ResNet-50 ({args.size}): {len(compiled)} nodes on compiled engines: "
          f"{dict(sorted(Counter(n.type for n in compiled).items()))}")
    work = tempfile.mkdtemp(prefix="bench_cache_")
    try:
        cold = {}
        for jobs in (1, 2):
            best = None
            for r in range(args.repeat):
                root = os.path.join(work, f"cold{jobs}_{r}")
                seconds, result = timed_compile(graph, root, jobs)
                best = seconds if best is None else min(best, seconds)
            cold[jobs] = best
            print(f"cold-{jobs}: {best:7.2f} s  ({result.stats['kernels']} kernels, "
                  f"{result.stats['compiles']} compiles)")
        warm_root = os.path.join(work, f"cold2_{args.repeat - 1}")
        seconds, result = timed_compile(graph, warm_root, 2)
        print(f"warm   : {seconds:7.2f} s  ({result.stats['hits']} hits, "
              f"{result.stats['compiles']} compiles)")
        print(f"speed-up warm over cold-2: {cold[2] / seconds:6.1f}x")
        print(f"speed-up cold 2 jobs over 1: {cold[1] / cold[2]:6.2f}x "
              f"(machine has {os.cpu_count()} CPUs)")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
