"""Kernel variants (issue 16, --op_select_implmode): time of each high-precision kernel over its
high-performance one, per op type of generators.VARIANT_OPS.

    python3 bench/bench_implmode.py [--rows 1024] [--cols 1024] [--runs 20]

Each op's float32 kernel of both variants is compiled for a rows x cols input (Pow: two such
inputs; reductions over the last axis; GlobalAveragePool as rows x 4 x cols/4 spatial) and
called --runs times after one warm-up, one thread; the median is printed.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from ge.compiler.opcompile.build import build  # noqa: E402
from ge.compiler.opcompile.cgen import HIGH_PRECISION  # noqa: E402
from ge.compiler.opcompile.generators import VARIANT_OPS, render  # noqa: E402
from ge.compiler.opcompile.hostcall import load_kernel  # noqa: E402
from ge.compiler.opcompile.signature import OpSignature, TensorSig  # noqa: E402
from ge.graph.attr_names import ATTR_IMPL_MODE  # noqa: E402
from ge.ops import registry  # noqa: E402

F = "DT_FLOAT"


def _case(op: str, rows: int, cols: int, rng):
    """(inputs, output shapes, attrs, consts) of the benchmark for `op`."""
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    if op in ("Log", "Rsqrt"):
        x = np.abs(x) + 0.1
    if op == "Pow":
        return [np.abs(x) + 0.1, x], [(rows, cols)], {}, {}
    if op in ("ReduceSum", "ReduceMean"):
        return [x, np.array([1], np.int32)], [(rows,)], {"keep_dims": False}, {1: [1]}
    if op == "GlobalAveragePool":
        return [x.reshape(rows, 1, 4, cols // 4)], [(rows, 1, 1, 1)], {}, {}
    if op == "LayerNorm":
        return ([x, np.ones(cols, np.float32), np.zeros(cols, np.float32)],
                [(rows, cols), (rows, 1), (rows, 1)],
                {"begin_norm_axis": 1, "begin_params_axis": 1}, {})
    if op == "SoftmaxV2":
        return [x], [(rows, cols)], {"axes": [-1]}, {}
    return [x], [(rows, cols)], {}, {}


def _time(op, inputs, outs, attrs, consts, mode, runs) -> float:
    opdef = registry.get(op)
    full = {s.name: s.default for s in opdef.attrs if not s.required}
    full.update(attrs)
    if mode:
        full[ATTR_IMPL_MODE] = mode
    tsig = [TensorSig(tuple(a.shape), "DT_INT32" if a.dtype == np.int32 else F)
            for a in inputs]
    sig = OpSignature.make(op, tsig, [TensorSig(s, F) for s in outs], full, consts)
    src = render(sig)
    so = build(src.c_source, src.needs_blas, what=op)
    kernel = load_kernel(so, hashlib.sha256(so).hexdigest())
    out = [np.zeros(s, np.float32) for s in outs]
    kernel(inputs, out, src.workspace_bytes)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        kernel(inputs, out, src.workspace_bytes)
        times.append(time.perf_counter() - start)
    return float(np.median(times)) * 1e3


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1024)
    ap.add_argument("--cols", type=int, default=1024)
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    print(f"{'op':18s} {'high_perf ms':>12s} {'high_prec ms':>12s} {'ratio':>6s}")
    for op in sorted(VARIANT_OPS):
        inputs, outs, attrs, consts = _case(op, args.rows, args.cols, rng)
        perf = _time(op, inputs, outs, attrs, consts, None, args.runs)
        prec = _time(op, inputs, outs, attrs, consts, HIGH_PRECISION, args.runs)
        print(f"{op:18s} {perf:12.3f} {prec:12.3f} {prec / perf:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
