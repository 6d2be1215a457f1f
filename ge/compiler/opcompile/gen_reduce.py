"""Reductions (ReduceSum/Mean/Max/Min over constant axes, GlobalAveragePool), softmax /
log-softmax over one axis and LayerNorm (softmax and LayerNorm in blocks of rows over the model's
threads when large: jobs.py).  Accumulation is in double, in input order, for every
output element (but the high-performance softmax's sum and LayerNorm's one-pass sums: four
interleaved partial sums).  Variants by the node's implementation mode (docs/precision.md, "Kernel
variants"): sums are plain (high performance) or compensated (Neumaier, high precision); softmax
takes exp in float with the fastmath polynomial or in double; LayerNorm's variance is one pass
over the row (E[x^2] - m^2) or two (the mean first).
"""
from __future__ import annotations

from .fastmath import FAST_MATH
from .jobs import over_rows
from .cgen import (KernelSource, Unsupported, broadcast_strides, high_precision, io_decls,
                   kernel_file, loop_nest, numel, offset_expr, require_dtypes, strides_of)

__all__ = ["REDUCE_OPS", "SOFTMAX_OPS", "NORM_OPS", "VERSION", "render_reduce", "render_softmax",
           "render_layer_norm"]

VERSION = 5
F = ("DT_FLOAT",)

# op -> (initial accumulator, update statement over `acc` and `v`, finalisation over acc and n)
REDUCE_OPS = {
    "ReduceSum": ("0.0", "acc += v;", "acc"),
    "ReduceMean": ("0.0", "acc += v;", "acc / {n}.0"),
    "ReduceMax": ("-INFINITY", "if (v > acc || v != v) acc = v;", "acc"),
    "ReduceMin": ("INFINITY", "if (v < acc || v != v) acc = v;", "acc"),
    "GlobalAveragePool": ("0.0", "acc += v;", "acc / {n}.0"),
}
# the sums that have a compensated (high-precision) variant: acc + c is the sum
COMPENSATED = {"ReduceSum", "ReduceMean", "GlobalAveragePool"}
NEUMAIER = ("{ const double t = acc + v; "
            "c += fabs(acc) >= fabs(v) ? (acc - t) + v : (v - t) + acc; acc = t; }")
SOFTMAX_OPS = ("SoftmaxV2", "LogSoftmaxV2")
NORM_OPS = ("LayerNorm",)


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
    start = [f"double acc = {init};"]
    if sig.op_type in COMPENSATED and high_precision(sig):
        update, start = NEUMAIER, start + ["double c = 0.0;"]
        final = final.replace("acc", "(isfinite(acc) ? acc + c : acc)")   # inf - inf in c
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
    body += loop_nest(kept_dims, [f"int64_t base = {offset_expr(kept_strides)};"] + start + inner
                      + [f"y0[o++] = (float)({final.format(n=count)});"], indent=0)
    return KernelSource(kernel_file(sig, "reduce", VERSION, io_decls(sig),
                                    ["    " + b for b in body]))


def render_softmax(sig) -> KernelSource:
    """One row at a time: max (in float: exact), then exp once per element (kept in y) with the
    sum in double, then one scaling pass; like the reference, a non-finite row max counts as 0."""
    require_dtypes(sig, {0: F}, {0: F})
    shape = list(sig.inputs[0].shape)
    if any(d <= 0 for d in shape) or not shape:
        raise Unsupported("empty, scalar or unknown input shape")
    axes = sig.attr("axes", [-1])
    if len(axes) != 1:
        raise Unsupported("softmax over more than one axis")
    axis = int(axes[0]) % len(shape)
    # need_fusion=1 (ONNX < 13): the input is coerced to 2-D at the axis
    last = len(shape) if int(sig.attr("need_fusion", 0) or 0) == 1 else axis + 1
    outer, n, inner = numel(shape[:axis]), numel(shape[axis:last]), numel(shape[last:])
    log = sig.op_type == "LogSoftmaxV2"
    at = "[k]" if inner == 1 else f"[k * {inner}]"
    if log:             # one variant: exp and log in double already
        rest = [f"        for (int64_t k = 0; k < {n}; ++k) s += exp((double)xr{at} - m);",
                "        const double ls = log(s);",
                f"        for (int64_t k = 0; k < {n}; ++k) "
                f"yr{at} = (float)(((double)xr{at} - m) - ls);"]
    elif high_precision(sig):   # exp in double twice (no float rounding before the division)
        rest = [f"        for (int64_t k = 0; k < {n}; ++k) s += exp((double)xr{at} - m);",
                f"        for (int64_t k = 0; k < {n}; ++k) "
                f"yr{at} = (float)(exp((double)xr{at} - m) / s);"]
    else:   # exp in float without libm (vectorised), the sum in double, one scaling pass
        rest = [f"        for (int64_t k = 0; k < {n}; ++k) yr{at} = ge_exp_ieee(xr{at} - m);"]
        item = "(double)yr[{k}]" if inner == 1 else f"(double)yr[({{k}}) * {inner}]"
        rest += ["        " + line for line in _partial_sums(n, {"s": item})]
        rest += ["        const float inv = (float)(1.0 / s);",
                 f"        for (int64_t k = 0; k < {n}; ++k) yr{at} = yr{at} * inv;"]
    row = [
        f"        const int64_t p = (r / {inner}) * {n * inner} + r % {inner};",
        "        const float *xr = x0 + p;",
        "        float *yr = y0 + p;",
        "        float m = -INFINITY;",        # a float max: exact, whatever the order
        "        double s = 0.0;",
    ]
    if log:     # the first of two equal maxima (-0 and +0) decides the sign of a 0 result
        row += [f"        for (int64_t k = 0; k < {n}; ++k) m = xr{at} > m ? xr{at} : m;"]
    else:       # exp(x - m) is the same for either zero: MAX_LANES maxima (they vectorise)
        item = "xr[{k}]" if inner == 1 else f"xr[({{k}}) * {inner}]"
        row += ["        " + line for line in _partial_max(n, item)]
    row += ["        if (!isfinite(m)) m = 0.0f;"] + rest
    fast = [] if log or high_precision(sig) else [FAST_MATH]
    helpers, body, threaded = over_rows(outer * inner, n, io_decls(sig), row, wide=bool(fast))
    return KernelSource(kernel_file(sig, "softmax", VERSION, [], body, blas=threaded,
                                    helpers=fast + helpers),
                        needs_blas=threaded)


LANES = 4       # interleaved partial sums: they pipeline, where one running sum waits on each add
MAX_LANES = 8   # interleaved maxima: one running maximum waits on each compare-and-select
                # (BERT-base's softmax rows 13% faster with 8)


def _partial_max(n: int, item: str) -> list:
    """m = the largest item (a C expression, a template over {k}; NaNs ignored as `a > m ? a
    : m` ignores them) of k < n, as MAX_LANES interleaved maxima in one loop, then pairwise."""
    full = n - n % MAX_LANES
    names = [f"m{i}" for i in range(MAX_LANES)]
    steps = " ".join(f"{v} = {a} > {v} ? {a} : {v};"
                     for v, a in ((v, item.format(k=f"k + {i}")) for i, v in enumerate(names)))
    tail = item.format(k="k")
    lines = [f"float {', '.join(f'{v} = -INFINITY' for v in names)};",
             f"for (int64_t k = 0; k < {full}; k += {MAX_LANES}) {{ {steps} }}",
             f"for (int64_t k = {full}; k < {n}; ++k) m0 = {tail} > m0 ? {tail} : m0;"]
    while len(names) > 1:
        half = len(names) // 2
        lines += [" ".join(f"{a} = {b} > {a} ? {b} : {a};"
                           for a, b in zip(names[:half], names[half:]))]
        names = names[:half]
    return lines + [f"m = {names[0]};"]


def _partial_sums(n: int, sums: dict) -> list:
    """For each name -> item (a C expression in double, a template over {k}): name = the sum
    of item over k < n, as LANES interleaved partial sums in one loop, added pairwise."""
    full = n - n % LANES
    lines = [f"double {', '.join(f'{v}{i} = 0.0' for i in range(LANES))};" for v in sums]
    adds = " ".join(f"{v}{i} += {item.format(k=f'k + {i}')};"
                    for i in range(LANES) for v, item in sums.items())
    tail = " ".join(f"{v}0 += {item.format(k='k')};" for v, item in sums.items())
    lines += [f"for (int64_t k = 0; k < {full}; k += {LANES}) {{ {adds} }}",
              f"for (int64_t k = {full}; k < {n}; ++k) {{ {tail} }}"]
    return lines + [f"{v} = {_pairwise([f'{v}{i}' for i in range(LANES)])};" for v in sums]


def _pairwise(terms: list) -> str:
    """(a + b) + (c + d) for [a, b, c, d]: the partial sums added as a balanced tree."""
    if len(terms) == 1:
        return terms[0]
    half = len(terms) // 2
    return f"({_pairwise(terms[:half])} + {_pairwise(terms[half:])})"


def render_layer_norm(sig) -> KernelSource:
    """Mean and variance of each row (dims >= begin_norm_axis) in double, then
    y = (x - mean) / sqrt(var + eps) * gamma + beta; gamma/beta broadcast to x.  The variance
    takes one pass (sum and sum of squares, high performance) or two (high precision: no
    cancellation when the mean is large against the spread)."""
    require_dtypes(sig, {0: F, 1: F, 2: F}, {0: F, 1: F, 2: F})
    shape = list(sig.inputs[0].shape)
    if not shape or any(d <= 0 for d in shape) or len(sig.outputs) != 3:
        raise Unsupported("empty, scalar or unknown input shape")
    axis = int(sig.attr("begin_norm_axis", 0))
    if not -len(shape) <= axis < len(shape):
        raise Unsupported(f"begin_norm_axis {axis} out of range")
    axis %= len(shape)
    n = numel(shape[axis:])
    params = []
    for slot in (1, 2):
        st = broadcast_strides(sig.inputs[slot].shape, shape)
        inner = st[axis:]
        if inner == strides_of(shape[axis:]):
            step = 1
        elif not any(inner):
            step = 0
        else:
            raise Unsupported("gamma/beta are not contiguous over the normalised dims")
        params.append((offset_expr(st[:axis]) if axis else "0", step))
    (g_off, g_step), (b_off, b_step) = params
    g_at = "[k]" if g_step else "[0]"
    b_at = "[k]" if b_step else "[0]"
    eps = float(sig.attr("epsilon", 1e-7))
    dims = shape[:axis] or [1]
    index = [f"const int64_t i{d} = r / {numel(dims[d + 1:])} % {dim}; (void)i{d};"
             for d, dim in enumerate(dims)]     # the indices of row r (gamma/beta offsets)
    row = index + [
        f"const int64_t p = r * {n};",
        "const float *xr = x0 + p;",
        f"const float *g = x1 + {g_off};",
        f"const float *b = x2 + {b_off};",
        "double m = 0.0, v = 0.0;",
    ] + (_two_pass(n) if high_precision(sig) else _one_pass(n)) + [
        f"const double sd = sqrt(v + {eps.hex()});",
        f"for (int64_t k = 0; k < {n}; ++k)",
        f"    y0[p + k] = (float)((xr[k] - m) / sd * g{g_at} + b{b_at});",
        "y1[r] = (float)m;",
        "y2[r] = (float)v;",
    ]
    helpers, body, threaded = over_rows(numel(dims), n, io_decls(sig),
                                        ["        " + line for line in row])
    return KernelSource(kernel_file(sig, "norm", VERSION, [], body, blas=threaded,
                                    helpers=helpers),
                        needs_blas=threaded)


def _two_pass(n: int) -> list:
    return [f"for (int64_t k = 0; k < {n}; ++k) m += xr[k];",
            f"m /= {n}.0;",
            f"for (int64_t k = 0; k < {n}; ++k) {{ const double d = xr[k] - m; v += d * d; }}",
            f"v /= {n}.0;"]


def _one_pass(n: int) -> list:
    """Sum and sum of squares in one pass (E[x^2] - m^2)."""
    return _partial_sums(n, {"m": "(double)xr[{k}]",
                             "v": "(double)xr[{k}] * (double)xr[{k}]"}) + [
        f"m /= {n}.0;",
        f"v = v / {n}.0 - m * m;",
        "if (v < 0.0) v = 0.0;"]
