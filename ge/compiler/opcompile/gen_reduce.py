"""Reductions (ReduceSum/Mean/Max/Min over constant axes, GlobalAveragePool) and softmax /
log-softmax over one axis.  Accumulation is in double, in input order, for every output element.
"""
from __future__ import annotations

from .cgen import (KernelSource, Unsupported, io_decls, kernel_file, loop_nest, offset_expr,
                   require_dtypes, strides_of)

__all__ = ["REDUCE_OPS", "SOFTMAX_OPS", "VERSION", "render_reduce", "render_softmax"]

VERSION = 1
F = ("DT_FLOAT",)

# op -> (initial accumulator, update statement over `acc` and `v`, finalisation over acc and n)
REDUCE_OPS = {
    "ReduceSum": ("0.0", "acc += v;", "acc"),
    "ReduceMean": ("0.0", "acc += v;", "acc / {n}.0"),
    "ReduceMax": ("-INFINITY", "if (v > acc || v != v) acc = v;", "acc"),
    "ReduceMin": ("INFINITY", "if (v < acc || v != v) acc = v;", "acc"),
    "GlobalAveragePool": ("0.0", "acc += v;", "acc / {n}.0"),
}
SOFTMAX_OPS = ("SoftmaxV2", "LogSoftmaxV2")


def _reduce_axes(sig) -> list:
    rank = len(sig.inputs[0].shape)
    if sig.op_type == "GlobalAveragePool":
        return list(range(2, rank))
    axes = sig.const(1)
    if axes is None:
        if len(sig.inputs) > 1 and sig.inputs[1] is not None:
            raise Unsupported("reduction axes are not a constant input")
        axes = ()
    if not axes:
        return [] if sig.attr("noop_with_empty_axes", True) else list(range(rank))
    out = sorted({int(a) % rank if rank else 0 for a in axes})
    return out


def render_reduce(sig) -> KernelSource:
    require_dtypes(sig, {0: F}, {0: F})
    shape = list(sig.inputs[0].shape)
    if any(d <= 0 for d in shape):
        raise Unsupported("empty or unknown input shape")
    axes = _reduce_axes(sig)
    init, update, final = REDUCE_OPS[sig.op_type]
    strides = strides_of(shape)
    kept = [d for d in range(len(shape)) if d not in axes]
    count = 1
    for a in axes:
        count *= shape[a]
    kept_dims = [shape[d] for d in kept] or [1]
    kept_strides = [strides[d] for d in kept] or [0]
    red_dims = [shape[d] for d in axes] or [1]
    red_strides = [strides[d] for d in axes] or [0]
    inner = loop_nest(red_dims, [f"double v = x0[base + {offset_expr(red_strides, 'r')}];",
                                 update], var="r", indent=0)
    body = ["int64_t o = 0;"]
    body += loop_nest(kept_dims, [f"int64_t base = {offset_expr(kept_strides)};",
                                  f"double acc = {init};"] + inner
                      + [f"y0[o++] = (float)({final.format(n=count)});"], indent=0)
    return KernelSource(kernel_file(sig, "reduce", VERSION, io_decls(sig),
                                    ["    " + b for b in body]))


def render_softmax(sig) -> KernelSource:
    require_dtypes(sig, {0: F}, {0: F})
    shape = list(sig.inputs[0].shape)
    if any(d <= 0 for d in shape) or not shape:
        raise Unsupported("empty, scalar or unknown input shape")
    axes = sig.attr("axes", [-1])
    if len(axes) != 1:
        raise Unsupported("softmax over more than one axis")
    axis = int(axes[0]) % len(shape)
    outer = 1
    for d in shape[:axis]:
        outer *= d
    n = shape[axis]
    inner = 1
    for d in shape[axis + 1:]:
        inner *= d
    log = sig.op_type == "LogSoftmaxV2"
    write = ("y0[p + k * inner] = (float)((double)x0[p + k * inner] - m - log(s));" if log else
             "y0[p + k * inner] = (float)(exp((double)x0[p + k * inner] - m) / s);")
    body = [
        f"    const int64_t inner = {inner};",
        f"    for (int64_t o = 0; o < {outer}; ++o) {{",
        "        for (int64_t j = 0; j < inner; ++j) {",
        f"            const int64_t p = o * {n} * inner + j;",
        "            double m = -INFINITY, s = 0.0;",
        f"            for (int64_t k = 0; k < {n}; ++k) if (x0[p + k * inner] > m) "
        "m = x0[p + k * inner];",
        f"            for (int64_t k = 0; k < {n}; ++k) s += exp((double)x0[p + k * inner] - m);",
        f"            for (int64_t k = 0; k < {n}; ++k) {write}",
        "        }",
        "    }",
    ]
    return KernelSource(kernel_file(sig, "softmax", VERSION, io_decls(sig), body))
