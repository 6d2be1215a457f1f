"""Elementwise math (spec/ir-ops.md §3.4 and the trig ops of §3.8): binary broadcast ops,
comparisons, logical ops, unary math, Cast, SelectV2, AccumulateNV2, ClipByValue, Muls, Adds.

Each family is a table with one line per op (name, numpy function, dtype rule, attributes);
the loops at the bottom turn the lines into OpDefs.  Binary ops first cast both inputs to the
promoted dtype (`promote`: a float wins over an int, int32+int64 -> int64) and compute there.
"""
from __future__ import annotations

import math

import numpy as np

from ._common import (DT, VT, AttrSpec, OpDef, Port, Role,
                      broadcast_shapes, dtype_of, infer_broadcast,
                      np_dtype, promote, register, shape_of)
from ge.graph.lowprec import f32_to_bf16
from ge.graph.types import from_numpy_dtype

FAMILY = "elementwise"

_ERF = []


def _erf_function():
    """scipy's erf when installed (imported on first use: importing scipy.special costs ~0.5 s
    of every compile otherwise), else math.erf elementwise (exact but slower)."""
    if not _ERF:
        try:
            from scipy.special import erf as function
        except ImportError:  # pragma: no cover
            function = np.frompyfunc(math.erf, 1, 1)
        _ERF.append(function)
    return _ERF[0]


def erf(x: np.ndarray) -> np.ndarray:
    return np.asarray(_erf_function()(x.astype(np.float64)), dtype=np.float64).astype(x.dtype)


def _true_div(a, b):
    """RealDiv: true division for floats, truncation toward zero for integers (ONNX Div)."""
    if a.dtype.kind in "iu":
        with np.errstate(divide="ignore", invalid="ignore"):
            q = np.floor_divide(a, b)
            fix = (np.remainder(a, b) != 0) & ((a < 0) != (b < 0))
        return q + fix.astype(q.dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.true_divide(a, b)


def _pow(a, b):
    if a.dtype.kind in "iu" or a.dtype != b.dtype:
        with np.errstate(all="ignore"):
            return np.power(a.astype(np.float64), b.astype(np.float64))
    return np.power(a, b)


# name, numpy function (a, b), result dtype rule: "promote" (both inputs cast to the promoted
# dtype first), "bool", or "first" (computed on the inputs as given, result in x1's dtype:
# ONNX Pow, whose result type is the base's whatever the exponent's type)
BINARY = (
    ("Add", np.add, "promote"),
    ("Sub", np.subtract, "promote"),
    ("Mul", np.multiply, "promote"),
    ("RealDiv", _true_div, "promote"),
    ("Pow", _pow, "first"),
    ("Maximum", np.maximum, "promote"),
    ("Minimum", np.minimum, "promote"),
    ("Equal", np.equal, "bool"),
    ("Less", np.less, "bool"),
    ("Greater", np.greater, "bool"),
    ("LessEqual", np.less_equal, "bool"),
    ("GreaterEqual", np.greater_equal, "bool"),
    ("LogicalAnd", np.logical_and, "bool"),
    ("LogicalOr", np.logical_or, "bool"),
)


def _exp(x, a):
    y = a["scale"] * x + a["shift"] if (a["scale"] != 1.0 or a["shift"] != 0.0) else x
    if a["base"] == -1.0:
        return np.exp(y)
    return np.exp(y * math.log(a["base"]))


def _log(x, a):
    y = a["scale"] * x + a["shift"] if (a["scale"] != 1.0 or a["shift"] != 0.0) else x
    with np.errstate(divide="ignore", invalid="ignore"):
        if a["base"] == -1.0:
            return np.log(y)
        return np.log(y) / math.log(a["base"])


def _rsqrt(x, a):
    with np.errstate(divide="ignore", invalid="ignore"):
        return 1.0 / np.sqrt(x)


def _reciprocal(x, a):
    with np.errstate(divide="ignore"):
        return np.reciprocal(x) if x.dtype.kind == "f" else 1.0 / x


def _np(fn):
    """A numpy ufunc as a table function (attrs unused); domain errors give NaN quietly."""
    def call(x, a):
        with np.errstate(divide="ignore", invalid="ignore"):
            return fn(x)
    call.__name__ = fn.__name__
    return call


_BASE_ATTRS = (AttrSpec("base", VT.VT_FLOAT, -1.0), AttrSpec("scale", VT.VT_FLOAT, 1.0),
               AttrSpec("shift", VT.VT_FLOAT, 0.0))

# name, function (x, attrs), output dtype rule ("same" | "bool"), attributes
UNARY = (
    ("Sqrt", _np(np.sqrt), "same", ()),
    ("Rsqrt", _rsqrt, "same", ()),
    ("Reciprocal", _reciprocal, "same", ()),
    ("Exp", _exp, "same", _BASE_ATTRS),
    ("Log", _log, "same", _BASE_ATTRS),
    ("Erf", lambda x, a: erf(x), "same", ()),
    ("Abs", _np(np.abs), "same", ()),
    ("Neg", _np(np.negative), "same", ()),
    ("Sign", _np(np.sign), "same", ()),
    ("Floor", _np(np.floor), "same", ()),
    ("Ceil", _np(np.ceil), "same", ()),
    ("Round", lambda x, a: np.round(x, a["decimals"]), "same",
     (AttrSpec("decimals", VT.VT_INT, 0),)),
    ("Sin", _np(np.sin), "same", ()),
    ("Cos", _np(np.cos), "same", ()),
    ("Tan", _np(np.tan), "same", ()),
    ("Asin", _np(np.arcsin), "same", ()),
    ("Acos", _np(np.arccos), "same", ()),
    ("Atan", _np(np.arctan), "same", ()),
    ("Sinh", _np(np.sinh), "same", ()),
    ("Cosh", _np(np.cosh), "same", ()),
    ("Asinh", _np(np.arcsinh), "same", ()),
    ("Acosh", _np(np.arccosh), "same", ()),
    ("Atanh", _np(np.arctanh), "same", ()),
    ("Tanh", _np(np.tanh), "same", ()),
    ("IsNan", _np(np.isnan), "bool", ()),
    ("LogicalNot", _np(np.logical_not), "bool", ()),
    ("Muls", lambda x, a: x * a["value"], "same", (AttrSpec("value", VT.VT_FLOAT),)),
    ("Adds", lambda x, a: x + a["value"], "same", (AttrSpec("value", VT.VT_FLOAT),)),
    ("TensorMove", lambda x, a: x.copy(), "same", ()),
)


def unary_kernel(fn, rule):
    """Kernel of a table line: apply fn, then keep x's dtype (or bool)."""
    def kernel(ins, attrs):
        x = ins[0]
        y = np.asarray(fn(x, attrs))
        return [y.astype(np.bool_) if rule == "bool" else y.astype(x.dtype, copy=False)]
    return kernel


def unary_infer(rule):
    def infer(ctx):
        dt = DT.DT_BOOL if rule == "bool" else dtype_of(ctx, 0)
        return [(shape_of(ctx, 0), dt)]
    return infer


def _promoted(arrays):
    dt = from_numpy_dtype(arrays[0].dtype)
    for a in arrays[1:]:
        dt = promote(dt, from_numpy_dtype(a.dtype))
    return np_dtype(dt)


def binary_kernel(fn, rule):
    def kernel(ins, attrs):
        a, b = ins[0], ins[1]
        if rule == "first":
            return [np.asarray(fn(a, b)).astype(a.dtype, copy=False)]
        dt = _promoted([a, b])
        y = np.asarray(fn(a.astype(dt, copy=False), b.astype(dt, copy=False)))
        return [y.astype(np.bool_ if rule == "bool" else dt, copy=False)]
    return kernel


def binary_infer(rule):
    def infer(ctx):
        shape, dt = infer_broadcast(ctx)[0]
        if rule == "first":
            dt = dtype_of(ctx, 0)
        return [(shape, DT.DT_BOOL if rule == "bool" else dt)]
    return infer


# ---- ops that do not fit a table line ------------------------------------------------------

def infer_cast(ctx):
    return [(shape_of(ctx, 0), DT(ctx.attrs["dst_type"]))]


def kernel_cast(ins, attrs):
    """Run through ge.graph.lowprec.call_lowprec, a bfloat16 input arrives as float32; a
    bfloat16 output is returned as its bit patterns (rounded to nearest even)."""
    dst = DT(attrs["dst_type"])
    if dst == DT.DT_BF16:
        return [f32_to_bf16(np.asarray(ins[0]).astype(np.float32))]
    return [ins[0].astype(np_dtype(dst))]


def infer_select(ctx):
    shape = broadcast_shapes(ctx, shape_of(ctx, 0), shape_of(ctx, 1), shape_of(ctx, 2))
    return [(shape, promote(dtype_of(ctx, 1), dtype_of(ctx, 2)))]


def kernel_select(ins, attrs):
    dt = _promoted([ins[1], ins[2]])
    return [np.where(ins[0].astype(np.bool_), ins[1], ins[2]).astype(dt, copy=False)]


def kernel_accumulate(ins, attrs):
    dt = _promoted(ins)
    out = ins[0].astype(dt)
    for x in ins[1:]:
        out = out + x.astype(dt, copy=False)
    return [out]


def infer_clip(ctx):
    shape = broadcast_shapes(ctx, *[shape_of(ctx, i) for i in range(3)])
    return [(shape, dtype_of(ctx, 0))]


def kernel_clip(ins, attrs):
    x, lo, hi = ins
    return [np.minimum(np.maximum(x, lo.astype(x.dtype)), hi.astype(x.dtype)).astype(x.dtype)]


# Ops of the two tables that the C elementwise generator compiles (OpDef.kernel_gen); the
# others run on AiCpu with their numpy kernel.
C_KERNELS = frozenset({
    "Add", "Sub", "Mul", "RealDiv", "Maximum", "Minimum", "Pow", "Equal", "Less", "Greater",
    "LessEqual", "GreaterEqual", "Muls", "Adds", "Abs", "Neg", "Sqrt", "Rsqrt", "Reciprocal",
    "Exp", "Log", "Erf", "Sign", "Floor", "Ceil", "Sin", "Cos", "Tanh",
})

for _name, _fn, _rule in BINARY:
    register(OpDef(_name, inputs=(Port("x1"), Port("x2")), outputs=(Port("y"),),
                   kernel_gen="elementwise" if _name in C_KERNELS else "",
                   infer=binary_infer(_rule), kernel=binary_kernel(_fn, _rule),
                   family=FAMILY, doc=f"broadcast {_name}"))

BYPASS = ("TensorMove",)  # a copy: removed when the graph is prepared

for _name, _fn, _rule, _attrs in UNARY:
    register(OpDef(_name, inputs=(Port("x"),), outputs=(Port("y"),), attrs=_attrs,
                   role=Role.BYPASS if _name in BYPASS else Role.COMPUTE,
                   kernel_gen="elementwise" if _name in C_KERNELS else "",
                   infer=unary_infer(_rule), kernel=unary_kernel(_fn, _rule),
                   family=FAMILY, doc=f"elementwise {_name}"))

register(OpDef("Cast", inputs=(Port("x"),), outputs=(Port("y"),), kernel_gen="cast",
               attrs=(AttrSpec("dst_type", VT.VT_INT),), infer=infer_cast, kernel=kernel_cast,
               family=FAMILY, doc="dtype conversion; dst_type is a GE DataType enum value"))
register(OpDef("SelectV2", kernel_gen="elementwise",
               inputs=(Port("condition"), Port("then"), Port("else")),
               outputs=(Port("result"),), infer=infer_select, kernel=kernel_select,
               family=FAMILY, doc="broadcast select (ONNX Where)"))
register(OpDef("AccumulateNV2", kernel_gen="elementwise",
               inputs=(Port("x", "dynamic"),), outputs=(Port("y"),),
               attrs=(AttrSpec("N", VT.VT_INT),), infer=infer_broadcast,
               kernel=kernel_accumulate, family=FAMILY, doc="sum of N tensors"))
register(OpDef("ClipByValue", kernel_gen="elementwise", inputs=(Port("x"), Port("clip_value_min"),
                                      Port("clip_value_max")),
               outputs=(Port("y"),), infer=infer_clip, kernel=kernel_clip, family=FAMILY,
               doc="clamp x to [min, max]"))
