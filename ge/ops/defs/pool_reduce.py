"""Pooling and reductions (spec/ir-ops.md §3.6): MaxPoolV3, MaxPool, MaxPool3D, AvgPoolV2,
AvgPool3D, GlobalAveragePool, ReduceMean/Sum/Max/Min, ArgMaxV2, ArgMin, TopK, Cumsum, Einsum.

Pool geometry follows ONNX/onnxruntime: CALCULATED uses the explicit pads, with ceil_mode the
last window must start inside the input or its begin padding; SAME pads like ONNX SAME_UPPER
(extra padding at the end; at the start with the extra attr auto_pad = SAME_LOWER); VALID uses
no padding.  Average pooling divides by the window taps inside the input (`exclusive`) or the
padded input (count_include_pad).  The extra attr `dilation` (one value per dim of the data
format, or per spatial dim) dilates MaxPoolV3 / AvgPoolV2 / AvgPool3D windows as MaxPool3D's
own attr does.  `resolve` turns SAME / VALID into CALCULATED with explicit pads once the input
shape is known.
"""
from __future__ import annotations

import itertools
import re

import numpy as np

from ._common import (DT, VT, AttrSpec, OpDef, Port, broadcast_shapes, const_ints, dtype_of,
                      fail, norm_axis, register, shape_of)
from .conv import spatial_values

FAMILY = "pool_reduce"


def _channels_last(fmt: str) -> bool:
    return fmt.upper() in ("NHWC", "NDHWC")


def pool_geometry(in_sp, ks, ss, ds, mode, pb, pe, ceil):
    """(output dims, pad begins, pad ends) of an N-D pool."""
    mode = mode.upper()
    outs, pb, pe = [], list(pb), list(pe)
    for i, n in enumerate(in_sp):
        eff_k = (ks[i] - 1) * ds[i] + 1
        if mode in ("SAME", "SAME_LOWER"):
            o = -(-n // ss[i])
            total = max((o - 1) * ss[i] + eff_k - n, 0)
            pb[i], pe[i] = total // 2, total - total // 2
            if mode == "SAME_LOWER":
                pb[i], pe[i] = pe[i], pb[i]
        elif mode == "VALID":
            pb[i] = pe[i] = 0
            o = (n - eff_k) // ss[i] + 1
        else:
            num = n + pb[i] + pe[i] - eff_k
            o = (-(-num // ss[i]) if ceil else num // ss[i]) + 1
            if ceil and (o - 1) * ss[i] >= n + pb[i]:
                o -= 1
        outs.append(o)
    return outs, pb, pe


def _pool_params(attrs, nsp):
    """Normalised parameters of the pool op `op` from its attributes."""
    fmt = attrs["data_format"]
    ks = spatial_values(None, attrs["ksize"], fmt, nsp, "ksize")
    ss = spatial_values(None, attrs["strides"], fmt, nsp, "strides")
    ds = spatial_values(None, attrs.get("dilation", [1] * nsp), fmt, nsp, "dilation")
    mode = attrs.get("padding_mode", attrs.get("padding", "CALCULATED"))
    if mode.upper() == "SAME" and str(attrs.get("auto_pad", "")).upper() == "SAME_LOWER":
        mode = "SAME_LOWER"
    pads = [int(p) for p in attrs.get("pads", [0] * 2 * nsp)] or [0] * 2 * nsp
    return dict(fmt=fmt, ks=ks, ss=ss, ds=ds, mode=mode, pb=pads[0::2], pe=pads[1::2],
                ceil=bool(attrs.get("ceil_mode", False)),
                include_pad=(not attrs["exclusive"]) if "exclusive" in attrs
                else bool(attrs.get("count_include_pad", False)),
                divisor=int(attrs.get("divisor_override", 0) or 0),
                global_pool=bool(attrs.get("global_pooling", False)))


def _window_counts(n, o_count, k, s, pb, pe, include_pad, d=1):
    """Taps of each window inside the input (exclusive) or the padded input (include_pad)."""
    taps = (np.arange(o_count) * s - pb)[:, None] + np.arange(k)[None, :] * d
    lo, hi = (-pb, n + pe) if include_pad else (0, n)
    return ((taps >= lo) & (taps < hi)).sum(axis=1)


def pool_nd(x, p, is_max):
    """Channels-first pooling of x ([N, C, *spatial]) with normalised params p."""
    nsp = x.ndim - 2
    in_sp = list(x.shape[2:])
    ks, ss, ds = p["ks"], p["ss"], p["ds"]
    if p["global_pool"]:
        ks, ss, ds = in_sp, [1] * nsp, [1] * nsp
        p = dict(p, mode="CALCULATED", pb=[0] * nsp, pe=[0] * nsp)
    outs, pb, pe = pool_geometry(in_sp, ks, ss, ds, p["mode"], p["pb"], p["pe"], p["ceil"])
    need = [(outs[i] - 1) * ss[i] + (ks[i] - 1) * ds[i] + 1 for i in range(nsp)]
    ends = [max(need[i] - in_sp[i] - pb[i], 0) for i in range(nsp)]
    if is_max:
        fill = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
        xp = np.pad(x, [(0, 0), (0, 0)] + list(zip(pb, ends)), constant_values=fill)
        acc = None
    else:
        xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + list(zip(pb, ends)))
        acc = np.zeros(list(x.shape[:2]) + outs)
    for offs in itertools.product(*[range(k) for k in ks]):
        idx = tuple(slice(o * d, o * d + s * (m - 1) + 1, s)
                    for o, d, s, m in zip(offs, ds, ss, outs))
        win = xp[(slice(None), slice(None)) + idx]
        acc = win.copy() if (is_max and acc is None) else (
            np.maximum(acc, win) if is_max else acc + win)
    if is_max:
        return acc.astype(x.dtype)
    if p["divisor"]:
        return (acc / p["divisor"]).astype(x.dtype)
    counts = np.ones([1] * 2 + [1] * nsp)
    for i in range(nsp):
        c = _window_counts(in_sp[i], outs[i], ks[i], ss[i], pb[i], pe[i], p["include_pad"],
                           ds[i])
        shape = [1] * (2 + nsp)
        shape[2 + i] = -1
        counts = counts * c.reshape(shape)
    return (acc / counts).astype(x.dtype)


def _pool_kernel(nsp, is_max):
    def kernel(ins, attrs):
        x = ins[0]
        p = _pool_params(attrs, nsp)
        xc = np.moveaxis(x, -1, 1) if _channels_last(p["fmt"]) else x
        y = pool_nd(xc, p, is_max)
        return [np.moveaxis(y, 1, -1) if _channels_last(p["fmt"]) else y]
    return kernel


def _pool_infer(nsp):
    def infer(ctx):
        xs, dt = shape_of(ctx, 0), dtype_of(ctx, 0)
        if xs is None:
            return [(None, dt)]
        if len(xs) != nsp + 2:
            fail(ctx, f"x must have rank {nsp + 2}, got {list(xs)}")
        try:
            p = _pool_params(ctx.attrs, nsp)
        except ValueError as e:
            fail(ctx, str(e))
        last = _channels_last(p["fmt"])
        sp = list(xs[1:-1]) if last else list(xs[2:])
        if p["global_pool"]:
            outs = [1] * nsp
        elif any(d < 0 for d in sp):
            outs = [-1] * nsp
        else:
            outs = pool_geometry(sp, p["ks"], p["ss"], p["ds"], p["mode"], p["pb"], p["pe"],
                                 p["ceil"])[0]
            if any(o <= 0 for o in outs):
                fail(ctx, f"window larger than the padded input {sp}")
        shape = (xs[0], *outs, xs[-1]) if last else (xs[0], xs[1], *outs)
        return [(shape, dt)]
    return infer


def _pool_resolve(nsp, mode_attr):
    """SAME / VALID (and the extra auto_pad SAME_LOWER) → CALCULATED with explicit pads once
    the input shape is static, so that kernel generators see one padding form."""
    def resolve(ctx):
        xs = shape_of(ctx, 0)
        mode = str(ctx.attrs.get(mode_attr, "CALCULATED")).upper()
        if xs is None or mode not in ("SAME", "VALID") or ctx.attrs.get("global_pooling"):
            return {}
        p = _pool_params(ctx.attrs, nsp)
        sp = list(xs[1:-1]) if _channels_last(p["fmt"]) else list(xs[2:])
        if len(sp) != nsp or any(d < 0 for d in sp):
            return {}
        _, pb, pe = pool_geometry(sp, p["ks"], p["ss"], p["ds"], p["mode"], p["pb"], p["pe"],
                                  False)
        out = {mode_attr: "CALCULATED", "pads": [v for pair in zip(pb, pe) for v in pair],
               "ceil_mode": 0 if isinstance(ctx.attrs.get("ceil_mode"), int) and
               not isinstance(ctx.attrs.get("ceil_mode"), bool) else False}
        if "auto_pad" in ctx.attrs:
            out["auto_pad"] = "NOTSET"
        return out
    return resolve


_V3_ATTRS = (AttrSpec("ksize", VT.VT_LIST_INT), AttrSpec("strides", VT.VT_LIST_INT),
             AttrSpec("padding_mode", VT.VT_STRING, "CALCULATED"),
             AttrSpec("pads", VT.VT_LIST_INT, [0, 0, 0, 0]),
             AttrSpec("data_format", VT.VT_STRING, "NCHW"),
             AttrSpec("global_pooling", VT.VT_BOOL, False),
             AttrSpec("ceil_mode", VT.VT_BOOL, False))

register(OpDef("MaxPoolV3", kernel_gen="pool",
               inputs=(Port("x"),), outputs=(Port("y"),), attrs=_V3_ATTRS,
               infer=_pool_infer(2), kernel=_pool_kernel(2, True), family=FAMILY,
               resolve=_pool_resolve(2, "padding_mode"),
               doc="2-D max pool, CALCULATED/SAME/VALID padding"))
register(OpDef("AvgPoolV2", kernel_gen="pool", inputs=(Port("x"),), outputs=(Port("y"),),
               attrs=_V3_ATTRS + (AttrSpec("exclusive", VT.VT_BOOL, True),
                                  AttrSpec("divisor_override", VT.VT_INT, 0)),
               infer=_pool_infer(2), kernel=_pool_kernel(2, False), family=FAMILY,
               resolve=_pool_resolve(2, "padding_mode"),
               doc="2-D average pool; exclusive = padding not counted"))
register(OpDef("MaxPool", inputs=(Port("x"),), outputs=(Port("y"),),
               attrs=(AttrSpec("ksize", VT.VT_LIST_INT), AttrSpec("strides", VT.VT_LIST_INT),
                      AttrSpec("padding", VT.VT_STRING),
                      AttrSpec("data_format", VT.VT_STRING, "NHWC")),
               infer=_pool_infer(2), kernel=_pool_kernel(2, True), family=FAMILY,
               doc="TF-style max pool (SAME/VALID)"))
register(OpDef("MaxPool3D", inputs=(Port("x"),), outputs=(Port("y"),),
               attrs=(AttrSpec("ksize", VT.VT_LIST_INT), AttrSpec("strides", VT.VT_LIST_INT),
                      AttrSpec("padding", VT.VT_STRING),
                      AttrSpec("pads", VT.VT_LIST_INT, [0, 0, 0, 0, 0, 0]),
                      AttrSpec("dilation", VT.VT_LIST_INT, [1, 1, 1, 1, 1]),
                      AttrSpec("ceil_mode", VT.VT_INT, 0),
                      AttrSpec("data_format", VT.VT_STRING, "NDHWC")),
               infer=_pool_infer(3), kernel=_pool_kernel(3, True), family=FAMILY,
               resolve=_pool_resolve(3, "padding"),
               doc="3-D max pool; pads are [begin, end] per spatial dim"))
register(OpDef("AvgPool3D", inputs=(Port("x"),), outputs=(Port("y"),),
               attrs=(AttrSpec("ksize", VT.VT_LIST_INT), AttrSpec("strides", VT.VT_LIST_INT),
                      AttrSpec("pads", VT.VT_LIST_INT), AttrSpec("ceil_mode", VT.VT_BOOL, False),
                      AttrSpec("count_include_pad", VT.VT_BOOL, True),
                      AttrSpec("divisor_override", VT.VT_INT, 0),
                      AttrSpec("data_format", VT.VT_STRING, "NDHWC")),
               infer=_pool_infer(3), kernel=_pool_kernel(3, False), family=FAMILY,
               resolve=_pool_resolve(3, "padding"),
               doc="3-D average pool (extra attr `padding` SAME / VALID as MaxPool3D's)"))


def infer_global_avg(ctx):
    xs = shape_of(ctx, 0)
    if xs is not None and len(xs) < 3:
        fail(ctx, f"x must have rank >= 3, got {list(xs)}")
    return [(None if xs is None else tuple(xs[:2]) + (1,) * (len(xs) - 2), dtype_of(ctx, 0))]


def kernel_global_avg(ins, attrs):
    x = ins[0]
    return [x.astype(np.float64).mean(axis=tuple(range(2, x.ndim)), keepdims=True)
            .astype(x.dtype)]


register(OpDef("GlobalAveragePool", kernel_gen="reduce", kernel_consts=(1,),
               inputs=(Port("x"),), outputs=(Port("y"),),
               infer=infer_global_avg, kernel=kernel_global_avg, family=FAMILY,
               doc="mean over all spatial dims, dims kept"))


# ---- reductions -----------------------------------------------------------------------------

def _reduce_axes(axes, rank, noop):
    """None = identity (empty axes with noop_with_empty_axes), else a tuple of axes."""
    if len(axes) == 0:
        return None if noop else tuple(range(rank))
    return tuple(sorted({a + rank if a < 0 else a for a in axes}))


def _mean(x, axis, keepdims):
    return x.astype(np.float64).mean(axis=axis, keepdims=keepdims)


def _extreme(fn, largest: bool):
    """Max / min whose reduction over an empty set gives the identity (ONNX): -inf / +inf
    for floats, the dtype's lowest / highest value for integers."""
    def reduce(x, axis, keepdims):
        if x.dtype.kind == "f":
            initial = -np.inf if largest else np.inf
        elif x.dtype.kind in "iu":
            info = np.iinfo(x.dtype)
            initial = info.min if largest else info.max
        else:
            initial = not largest if x.dtype.kind == "b" else None
        if initial is None or x.size:
            return fn(x, axis=axis, keepdims=keepdims)
        return fn(x, axis=axis, keepdims=keepdims, initial=initial)
    return reduce


# name, numpy reduction (x, axis, keepdims)
REDUCTIONS = (
    ("ReduceMean", _mean),
    ("ReduceSum", lambda x, axis, keepdims: np.sum(x, axis=axis, keepdims=keepdims)),
    ("ReduceMax", _extreme(np.max, True)),
    ("ReduceMin", _extreme(np.min, False)),
    ("ReduceProd", lambda x, axis, keepdims: np.prod(x, axis=axis, keepdims=keepdims)),
)


def infer_reduce(ctx):
    xs, dt = shape_of(ctx, 0), dtype_of(ctx, 0)
    axes = const_ints(ctx, 1, "axes") if len(ctx.ins) > 1 and ctx.ins[1] is not None else []
    if xs is None:
        return [(None, dt)]
    for a in axes:
        norm_axis(ctx, a, len(xs), "axes entry")
    red = _reduce_axes(axes, len(xs), ctx.attrs["noop_with_empty_axes"])
    if red is None:
        return [(xs, dt)]
    keep = ctx.attrs["keep_dims"]
    shape = tuple(1 if i in red else d for i, d in enumerate(xs) if keep or i not in red)
    return [(shape, dt)]


def reduce_kernel(fn):
    def kernel(ins, attrs):
        x = ins[0]
        axes = [] if len(ins) < 2 or ins[1] is None else ins[1].reshape(-1).tolist()
        red = _reduce_axes([int(a) for a in axes], x.ndim, attrs["noop_with_empty_axes"])
        if red is None:
            return [x.copy()]
        return [np.asarray(fn(x, red, attrs["keep_dims"])).astype(x.dtype)]
    return kernel


C_KERNELS = frozenset({"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin"})  # kernel_gen

for _name, _fn in REDUCTIONS:
    register(OpDef(_name, inputs=(Port("x"), Port("axes")), outputs=(Port("y"),),
                   kernel_gen="reduce" if _name in C_KERNELS else "",
                   kernel_consts=(1,) if _name in C_KERNELS else (),
                   attrs=(AttrSpec("keep_dims", VT.VT_BOOL, False),
                          AttrSpec("noop_with_empty_axes", VT.VT_BOOL, True)),
                   infer=infer_reduce, kernel=reduce_kernel(_fn), family=FAMILY,
                   doc=f"{_name} over the axes tensor"))


# ---- ArgMaxV2, ArgMin, TopK, Cumsum ---------------------------------------------------------

def infer_arg_extreme(ctx):
    """ArgMaxV2 / ArgMin: x's shape without `dimension`, of the index type `dtype`."""
    xs = shape_of(ctx, 0)
    dim = const_ints(ctx, 1, "dimension")
    out_dt = DT(ctx.attrs["dtype"])
    if xs is None:
        return [(None, out_dt)]
    axis = norm_axis(ctx, dim[0], len(xs), "dimension")
    return [(tuple(d for i, d in enumerate(xs) if i != axis), out_dt)]


def arg_kernel(find):
    """The reference kernel of an index-of-extreme op: `find` is np.argmax or np.argmin."""
    def kernel(ins, attrs):
        from ge.graph.types import to_numpy_dtype
        x, axis = ins[0], int(ins[1].reshape(-1)[0])
        if attrs.get("select_last_index"):  # extra attr (ONNX): the last one wins
            idx = x.shape[axis] - 1 - find(np.flip(x, axis), axis=axis)
        else:
            idx = find(x, axis=axis)
        return [idx.astype(to_numpy_dtype(DT(attrs["dtype"])))]
    return kernel


for _name, _find, _what in (("ArgMaxV2", np.argmax, "max"), ("ArgMin", np.argmin, "min")):
    register(OpDef(_name, inputs=(Port("x"), Port("dimension")), outputs=(Port("y"),),
                   attrs=(AttrSpec("dtype", VT.VT_DATA_TYPE, DT.DT_INT64),),
                   infer=infer_arg_extreme, kernel=arg_kernel(_find), family=FAMILY,
                   doc=f"index of the {_what} along dimension (dim removed, the first {_what} "
                       f"wins; the last with the extra attr select_last_index = 1)"))


def infer_topk(ctx):
    xs, dt = shape_of(ctx, 0), dtype_of(ctx, 0)
    k = const_ints(ctx, 1, "k")[0]
    if xs is None:
        return [(None, dt), (None, DT.DT_INT32)]
    axis = norm_axis(ctx, int(ctx.attrs["dim"]), len(xs), "dim")
    if xs[axis] >= 0 and not 0 <= k <= xs[axis]:
        fail(ctx, f"k = {k} is out of range for dim {axis} of size {xs[axis]}")
    shape = tuple(k if i == axis else d for i, d in enumerate(xs))
    return [(shape, dt), (shape, DT.DT_INT32)]


def kernel_topk(ins, attrs):
    x = ins[0]
    k = int(ins[1].reshape(-1)[0])
    axis = int(attrs["dim"])
    keys = x.astype(np.float64 if x.dtype.kind in "fc" else np.int64)
    if attrs["largest"]:
        keys = -keys
    idx = np.take(np.argsort(keys, axis=axis, kind="stable"), np.arange(k), axis=axis)
    return [np.take_along_axis(x, idx, axis=axis), idx.astype(np.int32)]


register(OpDef("TopK", inputs=(Port("x"), Port("k")),
               outputs=(Port("values"), Port("indices")),
               attrs=(AttrSpec("sorted", VT.VT_BOOL, True), AttrSpec("largest", VT.VT_BOOL, True),
                      AttrSpec("dim", VT.VT_INT, -1)),
               infer=infer_topk, kernel=kernel_topk, family=FAMILY,
               doc="top-k along dim; ties keep the lower index first; indices are int32"))


def infer_cumsum(ctx):
    return [(shape_of(ctx, 0), dtype_of(ctx, 0))]


def kernel_cumsum(ins, attrs):
    x = ins[0]
    axis = int(ins[1].reshape(-1)[0])
    y = np.flip(x, axis) if attrs["reverse"] else x
    y = np.cumsum(y, axis=axis, dtype=x.dtype)
    if attrs["exclusive"]:
        y = np.concatenate([np.zeros_like(np.take(y, [0], axis=axis)),
                            np.take(y, np.arange(y.shape[axis] - 1), axis=axis)], axis=axis)
    return [np.flip(y, axis) if attrs["reverse"] else y]


register(OpDef("Cumsum", inputs=(Port("x"), Port("axis")), outputs=(Port("y"),),
               attrs=(AttrSpec("exclusive", VT.VT_BOOL, False),
                      AttrSpec("reverse", VT.VT_BOOL, False)),
               infer=infer_cumsum, kernel=kernel_cumsum, family=FAMILY,
               doc="cumulative sum along the axis tensor"))


# ---- Einsum ---------------------------------------------------------------------------------

def einsum_shape(ctx, equation: str, shapes):
    eq = equation.replace(" ", "")
    lhs, _, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        fail(ctx, f"equation {equation!r} has {len(terms)} operands, node has {len(shapes)}")
    dims, ell = {}, []
    for term, shape in zip(terms, shapes):
        labels = term.replace("...", "")
        n_ell = len(shape) - len(labels)
        if n_ell < 0 or (n_ell > 0 and "..." not in term):
            fail(ctx, f"operand {term!r} does not match shape {list(shape)}")
        pos = 0
        for ch in re.findall(r"\.\.\.|.", term):
            if ch == "...":
                ell.append(tuple(shape[pos:pos + n_ell]))
                pos += n_ell
                continue
            d = shape[pos]
            pos += 1
            if dims.get(ch, 1) in (1, -1) or d in (1, -1) or dims[ch] == d:
                dims[ch] = d if dims.get(ch, 1) in (1, -1) else dims[ch]
            else:
                fail(ctx, f"label {ch} has sizes {dims[ch]} and {d}")
    ell_shape = broadcast_shapes(ctx, *ell) if ell else ()
    if not _:
        counts = {c: lhs.count(c) for c in dims}
        rhs = ("..." if ell else "") + "".join(sorted(c for c, n in counts.items() if n == 1))
    out = []
    for ch in re.findall(r"\.\.\.|.", rhs):
        out.extend(ell_shape if ch == "..." else [dims[ch]])
    return tuple(out)


def infer_einsum(ctx):
    shapes = [shape_of(ctx, i) for i in range(len(ctx.ins))]
    dt = dtype_of(ctx, 0)
    if any(s is None for s in shapes):
        return [(None, dt)]
    return [(einsum_shape(ctx, ctx.attrs["equation"], shapes), dt)]


def kernel_einsum(ins, attrs):
    dt = ins[0].dtype
    cd = np.float32 if dt == np.float16 else dt
    return [np.einsum(attrs["equation"], *[x.astype(cd) for x in ins]).astype(dt)]


register(OpDef("Einsum", inputs=(Port("x", "dynamic"),), outputs=(Port("y"),),
               attrs=(AttrSpec("equation", VT.VT_STRING), AttrSpec("N", VT.VT_INT)),
               infer=infer_einsum, kernel=kernel_einsum, family=FAMILY,
               doc="Einstein summation"))
