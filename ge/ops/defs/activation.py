"""Activations (spec/ir-ops.md §3.4, §3.8): Relu ... Softsign as a table, plus PRelu,
SoftmaxV2 and LogSoftmaxV2.

Activations compute in float64 for float32/float16 inputs where the formula has several
roundings (Gelu, Mish, Sigmoid, ...) and cast back; see docs/ops-registry.md for tolerances.
"""
from __future__ import annotations

import math

import numpy as np

from ._common import (DT, VT, AttrSpec, OpDef, Port, dtype_of, fail, infer_same, norm_axis,
                      register, shape_of)
from .elementwise import erf, unary_infer, unary_kernel

FAMILY = "activation"

_SELU_ALPHA = 1.67326319217681884765625
_SELU_GAMMA = 1.05070102214813232421875
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def _f64(fn):
    """Run fn on a float64 copy (the table kernel casts back to x's dtype)."""
    def call(x, a):
        with np.errstate(over="ignore", invalid="ignore"):
            return fn(x.astype(np.float64), a)
    return call


def sigmoid(x):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def softplus(x):
    return np.logaddexp(0.0, x)


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x ** 3)))


def gelu_erf(x):
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def _gelu_v2(x, a):
    if a["approximate"] == "tanh":
        return gelu_tanh(x)
    if a["approximate"] == "none":
        return gelu_erf(x)
    raise ValueError(f"GeluV2 approximate must be 'none' or 'tanh', got {a['approximate']!r}")


def _elu(x, a):
    neg = a["scale"] * a["alpha"] * (np.exp(a["input_scale"] * np.minimum(x, 0.0)) - 1.0)
    return np.where(x > 0, a["scale"] * x, neg)


def _selu(x, a):
    return _SELU_GAMMA * np.where(x > 0, x, _SELU_ALPHA * (np.exp(np.minimum(x, 0.0)) - 1.0))


# name, function (x, attrs), attributes.  All keep x's dtype.
ACTIVATIONS = (
    ("Relu", lambda x, a: np.maximum(x, np.zeros((), x.dtype)), ()),
    ("LeakyRelu", lambda x, a: np.where(x >= 0, x, x * a["negative_slope"]),
     (AttrSpec("negative_slope", VT.VT_FLOAT, 0.0),)),
    ("Sigmoid", _f64(lambda x, a: sigmoid(x)), ()),
    ("HardSwish", _f64(lambda x, a: x * np.clip(x + 3.0, 0.0, 6.0) / 6.0), ()),
    ("Mish", _f64(lambda x, a: x * np.tanh(softplus(x))), ()),
    ("Gelu", _f64(lambda x, a: gelu_tanh(x)), ()),
    ("GeluV2", _f64(_gelu_v2), (AttrSpec("approximate", VT.VT_STRING, "none"),)),
    ("FastGelu", _f64(lambda x, a: x * sigmoid(1.702 * x)), ()),
    ("Elu", _f64(_elu), (AttrSpec("alpha", VT.VT_FLOAT, 1.0), AttrSpec("scale", VT.VT_FLOAT, 1.0),
                         AttrSpec("input_scale", VT.VT_FLOAT, 1.0))),
    ("Selu", _f64(_selu), ()),
    ("Softplus", _f64(lambda x, a: softplus(x)), ()),
    ("Softsign", _f64(lambda x, a: x / (1.0 + np.abs(x))), ()),
)

# Activations the C elementwise generator compiles (OpDef.kernel_gen).
C_KERNELS = frozenset({"Relu", "LeakyRelu", "Sigmoid", "HardSwish", "Softplus", "Softsign",
                       "Mish", "Elu", "Selu", "GeluV2"})

for _name, _fn, _attrs in ACTIVATIONS:
    register(OpDef(_name, inputs=(Port("x"),), outputs=(Port("y"),), attrs=_attrs,
                   kernel_gen="elementwise" if _name in C_KERNELS else "",
                   infer=unary_infer("same"), kernel=unary_kernel(_fn, "same"),
                   family=FAMILY, doc=f"activation {_name}"))

# HardSigmoid keeps the CANN port names input_x / output_y.
register(OpDef("HardSigmoid", kernel_gen="elementwise",
               inputs=(Port("input_x"),), outputs=(Port("output_y"),),
               attrs=(AttrSpec("alpha", VT.VT_FLOAT, 0.16666666),
                      AttrSpec("beta", VT.VT_FLOAT, 0.5)),
               infer=unary_infer("same"),
               kernel=unary_kernel(_f64(lambda x, a: np.clip(a["alpha"] * x + a["beta"], 0, 1)),
                                   "same"),
               family=FAMILY, doc="max(0, min(1, alpha*x + beta))"))


# ---- PRelu ----------------------------------------------------------------------------------

def _prelu_weight(x_shape, w_shape):
    """ONNX unidirectional broadcast of the slope; a 1-D slope of size C that does not
    broadcast numpy-style is taken per channel (axis 1), as CANN PRelu does."""
    try:
        np.broadcast_shapes(tuple(x_shape), tuple(w_shape))
        return tuple(w_shape)
    except ValueError:
        pass
    if len(w_shape) == 1 and len(x_shape) >= 2 and w_shape[0] == x_shape[1]:
        return (w_shape[0],) + (1,) * (len(x_shape) - 2)
    return None


def infer_prelu(ctx):
    xs, ws = shape_of(ctx, 0), shape_of(ctx, 1)
    if xs is not None and ws is not None and -1 not in xs and -1 not in ws:
        if _prelu_weight(xs, ws) is None:
            fail(ctx, f"weight shape {list(ws)} does not broadcast to x shape {list(xs)}")
    return infer_same(ctx)


def kernel_prelu(ins, attrs):
    x, w = ins
    w = w.astype(x.dtype).reshape(_prelu_weight(x.shape, w.shape))
    return [np.where(x >= 0, x, x * w).astype(x.dtype)]


register(OpDef("PRelu", inputs=(Port("x"), Port("weight")), outputs=(Port("y"),),
               infer=infer_prelu, kernel=kernel_prelu, family=FAMILY,
               doc="x if x >= 0 else weight*x (weight broadcast or per channel)"))


# ---- Softmax family -------------------------------------------------------------------------

def _softmax_axes(x, attrs):
    """Axes to normalise over.  Extra attr need_fusion=1 marks ONNX<13 Softmax: the input is
    coerced to 2-D at axes[0], i.e. softmax over every dim from that axis on."""
    rank = x.ndim
    axes = [a + rank if a < 0 else a for a in attrs["axes"]]
    if int(attrs.get("need_fusion", 0) or 0) == 1:
        return tuple(range(axes[0], rank))
    return tuple(axes)


def _log_softmax64(x, axes):
    x64 = x.astype(np.float64)
    m = np.max(x64, axis=axes, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    s = x64 - m
    return s - np.log(np.sum(np.exp(s), axis=axes, keepdims=True))


def kernel_softmax(ins, attrs):
    x = ins[0]
    y = np.exp(_log_softmax64(x, _softmax_axes(x, attrs)))
    out = np.float32 if attrs.get("half_to_float") and x.dtype == np.float16 else x.dtype
    return [y.astype(out)]


def kernel_log_softmax(ins, attrs):
    x = ins[0]
    return [_log_softmax64(x, _softmax_axes(x, attrs)).astype(x.dtype)]


def infer_softmax(ctx):
    shape, dt = shape_of(ctx, 0), dtype_of(ctx, 0)
    if shape is not None:
        for a in ctx.attrs["axes"]:
            norm_axis(ctx, a, len(shape), "axes entry")
    if ctx.attrs.get("half_to_float") and dt == DT.DT_FLOAT16:
        dt = DT.DT_FLOAT
    return [(shape, dt)]


register(OpDef("SoftmaxV2", kernel_gen="softmax", inputs=(Port("x"),), outputs=(Port("y"),),
               attrs=(AttrSpec("axes", VT.VT_LIST_INT, [-1]),
                      AttrSpec("half_to_float", VT.VT_BOOL, False)),
               infer=infer_softmax, kernel=kernel_softmax, family=FAMILY,
               doc="softmax over `axes` (extra attr need_fusion=1: ONNX<13 2-D coercion)"))
register(OpDef("LogSoftmaxV2", kernel_gen="softmax",
               inputs=(Port("logits"),), outputs=(Port("logsoftmax"),),
               attrs=(AttrSpec("axes", VT.VT_LIST_INT, [-1]),),
               infer=infer_softmax, kernel=kernel_log_softmax, family=FAMILY,
               doc="log-softmax over `axes`"))
