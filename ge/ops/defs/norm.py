"""Normalization (spec/ir-ops.md §3.5): BatchNorm, LayerNorm, InstanceNorm, plus LRN (ONNX LRN;
attrs ours, see docs/ops-registry.md).

Statistics are computed in float64 and the outputs cast back to x's dtype.  The channel axis
is 1 for channels-first `data_format` (NCHW, NCDHW, ...) and the last axis otherwise.
"""
from __future__ import annotations

import numpy as np

from ._common import (VT, AttrSpec, OpDef, Port, dtype_of, fail, norm_axis, register, shape_of)

FAMILY = "norm"


def _channel_axis(fmt: str, rank: int) -> int:
    return rank - 1 if fmt.upper() in ("NHWC", "NDHWC", "NWC") else min(1, rank - 1)


def _per_channel(v, rank, axis):
    shape = [1] * rank
    shape[axis] = -1
    return v.astype(np.float64).reshape(shape)


# ---- BatchNorm ------------------------------------------------------------------------------

def infer_batch_norm(ctx):
    xs, dt = shape_of(ctx, 0), dtype_of(ctx, 0)
    c = -1
    if xs is not None:
        if len(xs) < 2:
            fail(ctx, f"x must have rank >= 2, got {list(xs)}")
        c = xs[_channel_axis(ctx.attrs["data_format"], len(xs))]
    ss = shape_of(ctx, 1)
    if ss is not None and len(ss) == 1 and c >= 0 and ss[0] >= 0 and ss[0] != c:
        fail(ctx, f"scale has {ss[0]} values but x has {c} channels")
    stat_dt = dtype_of(ctx, 1)
    return [(xs, dt)] + [((c,), stat_dt)] * 5


def _inference_batch_norm(x, scale, offset, mean, var, epsilon, axis):
    """float32 inference as onnxruntime rounds it: x * s + (offset - mean * s) with
    s = scale / sqrt(var + epsilon) taken as (1 / sqrt(...)) * scale, each step in float32.
    Bit-equal results matter where a quantize follows (a one-ulp change moves a value across a
    rounding boundary of the quantized tensor)."""
    f = np.float32
    s = (f(1) / np.sqrt(var.astype(f) + f(epsilon))) * scale.astype(f)
    bias = offset.astype(f) - mean.astype(f) * s
    shape = [1] * x.ndim
    shape[axis] = -1
    return x * s.reshape(shape) + bias.reshape(shape)


def kernel_batch_norm(ins, attrs):
    x, scale, offset = ins[0], ins[1], ins[2]
    mean = ins[3] if len(ins) > 3 else None
    var = ins[4] if len(ins) > 4 else None
    axis = _channel_axis(attrs["data_format"], x.ndim)
    if x.dtype == np.float32 and not attrs["is_training"] and mean is not None \
            and var is not None:
        return [_inference_batch_norm(x, scale, offset, mean, var, attrs["epsilon"], axis)] + \
            [t.astype(scale.dtype) for t in (mean, var, mean, var, var)]
    x64 = x.astype(np.float64)
    red = tuple(i for i in range(x.ndim) if i != axis)
    if attrs["is_training"] or mean is None or var is None:
        m = x64.mean(axis=red)
        v = x64.var(axis=red)
    else:
        m, v = mean.astype(np.float64), var.astype(np.float64)
    y = ((x64 - _per_channel(m, x.ndim, axis)) / np.sqrt(_per_channel(v, x.ndim, axis)
                                                         + attrs["epsilon"])
         * _per_channel(scale, x.ndim, axis) + _per_channel(offset, x.ndim, axis))
    sd = scale.dtype
    run_m, run_v = m, v
    if attrs["is_training"] and mean is not None and var is not None:
        # running statistics: factor * batch + (1 - factor) * input (biased variance, ONNX)
        f = float(attrs["exponential_avg_factor"])
        run_m = f * m + (1 - f) * mean.astype(np.float64)
        run_v = f * v + (1 - f) * var.astype(np.float64)
    stats = [run_m.astype(sd), run_v.astype(sd), m.astype(sd), v.astype(sd), v.astype(sd)]
    return [y.astype(x.dtype)] + stats


register(OpDef("BatchNorm",
               inputs=(Port("x"), Port("scale"), Port("offset"), Port("mean", "optional"),
                       Port("variance", "optional")),
               outputs=(Port("y"), Port("batch_mean"), Port("batch_variance"),
                        Port("reserve_space_1"), Port("reserve_space_2"),
                        Port("reserve_space_3")),
               attrs=(AttrSpec("epsilon", VT.VT_FLOAT, 1e-4),
                      AttrSpec("data_format", VT.VT_STRING, "NHWC"),
                      AttrSpec("is_training", VT.VT_BOOL, True),
                      AttrSpec("exponential_avg_factor", VT.VT_FLOAT, 1.0)),
               infer=infer_batch_norm, kernel=kernel_batch_norm, family=FAMILY,
               doc="batch normalization; is_training=false uses the mean/variance inputs"))


# ---- LayerNorm ------------------------------------------------------------------------------

def infer_layer_norm(ctx):
    xs, dt = shape_of(ctx, 0), dtype_of(ctx, 0)
    if xs is None:
        return [(None, dt)] * 3
    axis = norm_axis(ctx, int(ctx.attrs["begin_norm_axis"]), len(xs), "begin_norm_axis")
    stat = tuple(xs[:axis]) + (1,) * (len(xs) - axis)
    return [(xs, dt), (stat, dt), (stat, dt)]


def kernel_layer_norm(ins, attrs):
    x, gamma, beta = ins
    axis = int(attrs["begin_norm_axis"])
    axis = axis + x.ndim if axis < 0 else axis
    red = tuple(range(axis, x.ndim))
    x64 = x.astype(np.float64)
    m = x64.mean(axis=red, keepdims=True)
    v = ((x64 - m) ** 2).mean(axis=red, keepdims=True)
    y = (x64 - m) / np.sqrt(v + attrs["epsilon"]) * gamma.astype(np.float64) \
        + beta.astype(np.float64)
    return [y.astype(x.dtype), m.astype(x.dtype), v.astype(x.dtype)]


register(OpDef("LayerNorm", kernel_gen="layer_norm",
               inputs=(Port("x"), Port("gamma"), Port("beta")),
               outputs=(Port("y"), Port("mean"), Port("variance")),
               attrs=(AttrSpec("begin_norm_axis", VT.VT_INT, 0),
                      AttrSpec("begin_params_axis", VT.VT_INT, 0),
                      AttrSpec("epsilon", VT.VT_FLOAT, 1e-7)),
               infer=infer_layer_norm, kernel=kernel_layer_norm, family=FAMILY,
               doc="layer normalization over dims >= begin_norm_axis; mean/variance keep dims"))


# ---- InstanceNorm ---------------------------------------------------------------------------

def infer_instance_norm(ctx):
    xs, dt = shape_of(ctx, 0), dtype_of(ctx, 0)
    if xs is None:
        return [(None, dt)] * 3
    axis = _channel_axis(ctx.attrs["data_format"], len(xs))
    stat = tuple(d if i in (0, axis) else 1 for i, d in enumerate(xs))
    return [(xs, dt), (stat, dt), (stat, dt)]


def kernel_instance_norm(ins, attrs):
    x, gamma, beta = ins
    axis = _channel_axis(attrs["data_format"], x.ndim)
    red = tuple(i for i in range(1, x.ndim) if i != axis)
    x64 = x.astype(np.float64)
    m = x64.mean(axis=red, keepdims=True)
    v = ((x64 - m) ** 2).mean(axis=red, keepdims=True)
    g = gamma.astype(np.float64)
    b = beta.astype(np.float64)
    if g.ndim == 1:
        g, b = _per_channel(g, x.ndim, axis), _per_channel(b, x.ndim, axis)
    y = (x64 - m) / np.sqrt(v + attrs["epsilon"]) * g + b
    return [y.astype(x.dtype), m.astype(x.dtype), v.astype(x.dtype)]


register(OpDef("InstanceNorm", inputs=(Port("x"), Port("gamma"), Port("beta")),
               outputs=(Port("y"), Port("mean"), Port("variance")),
               attrs=(AttrSpec("data_format", VT.VT_STRING, "NDHWC"),
                      AttrSpec("epsilon", VT.VT_FLOAT, 1e-6)),
               infer=infer_instance_norm, kernel=kernel_instance_norm, family=FAMILY,
               doc="per-instance, per-channel normalization"))


# ---- LRN ------------------------------------------------------------------------------------

def _window_sum(v, r, axes):
    """Sum of v over a window of radius r along each of `axes`, zeros outside."""
    for axis in axes:
        pad = [(0, 0)] * v.ndim
        pad[axis] = (r, r)
        padded = np.pad(v, pad)
        n = v.shape[axis]
        v = sum(np.take(padded, range(k, k + n), axis=axis) for k in range(2 * r + 1))
    return v


def kernel_lrn(ins, attrs):
    """y = x / (bias + alpha * sum_{c-r..c+r} x^2) ^ beta over channels (axis 1, NCHW).

    ONNX LRN(size, alpha, beta, bias) maps to depth_radius = (size-1)//2, alpha = alpha/size
    (exact for odd size, which is what exporters emit).  norm_region WITHIN_CHANNEL (Caffe)
    sums over a (2r+1) x (2r+1) spatial window of each channel instead."""
    x = ins[0]
    r = int(attrs["depth_radius"])
    x64 = x.astype(np.float64)
    if attrs["norm_region"] == "WITHIN_CHANNEL":  # Caffe: a (2r+1)² window on each plane
        total = _window_sum(x64 ** 2, r, axes=tuple(range(2, x.ndim)))
    elif attrs["norm_region"] == "ACROSS_CHANNELS":
        total = _window_sum(x64 ** 2, r, axes=(1,))
    else:
        raise ValueError(f"LRN norm_region {attrs['norm_region']!r} is not supported")
    y = x64 / (attrs["bias"] + attrs["alpha"] * total) ** attrs["beta"]
    return [y.astype(x.dtype)]


def infer_lrn(ctx):
    xs = shape_of(ctx, 0)
    if xs is not None and len(xs) < 2:
        fail(ctx, f"x must have rank >= 2, got {list(xs)}")
    return [(xs, dtype_of(ctx, 0))]


register(OpDef("LRN", inputs=(Port("x"),), outputs=(Port("y"),),
               attrs=(AttrSpec("depth_radius", VT.VT_INT, 5), AttrSpec("bias", VT.VT_FLOAT, 1.0),
                      AttrSpec("alpha", VT.VT_FLOAT, 1.0), AttrSpec("beta", VT.VT_FLOAT, 0.5),
                      AttrSpec("norm_region", VT.VT_STRING, "ACROSS_CHANNELS")),
               infer=infer_lrn, kernel=kernel_lrn, family=FAMILY,
               doc="local response normalization across channels (axis 1) or within each "
                   "channel's spatial window (norm_region WITHIN_CHANNEL)"))
