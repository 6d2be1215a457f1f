"""Helpers shared by the op definition modules: errors, constant inputs, broadcasting, dtype
promotion and the common inference functions that entries name (`infer_same`, ...).

Shapes are tuples of ints; -1 is an unknown dim and None an unknown rank.  Everything here is
a plain function over InferCtx / numpy arrays; nothing knows a particular op.
"""
from __future__ import annotations

import numpy as np

from ge.errors import GeError
from ge.graph.types import AttrValueType as VT, DataType, from_numpy_dtype, to_numpy_dtype
from ge.ops.registry import AttrSpec, InferCtx, OpDef, Port, Role, get, register

__all__ = [
    "FUSED_ACTIVATION", "apply_fused_activation",
    "VT", "DT", "AttrSpec", "OpDef", "Port", "Role", "register",
    "fail", "const_input", "const_ints",
    "shape_of", "dtype_of", "broadcast_shapes", "promote", "np_dtype", "infer_same",
    "infer_broadcast", "norm_axis", "numel", "known", "out_like", "FLOAT_TYPES",
]

DT = DataType
FLOAT_TYPES = (DT.DT_FLOAT, DT.DT_FLOAT16, DT.DT_DOUBLE, DT.DT_BF16)


def fail(ctx: InferCtx, reason: str):
    """Raise the coded inference error naming the node (and its type)."""
    what = f"{ctx.op_name} ({ctx.op_type})" if ctx.op_type else ctx.op_name
    raise GeError("EZ9999", {"what": f"op {what}", "reason": f"shape inference failed: {reason}"})


def shape_of(ctx: InferCtx, i: int):
    info = ctx.ins[i] if i < len(ctx.ins) else None
    return None if info is None or info.shape is None else tuple(info.shape)


def dtype_of(ctx: InferCtx, i: int) -> DataType:
    info = ctx.ins[i] if i < len(ctx.ins) else None
    if info is None:
        fail(ctx, f"input {i} is required but not connected")
    return info.dtype


def const_input(ctx: InferCtx, i: int, what: str):
    """The constant value of input i; raises naming `what` when it is absent or not constant."""
    info = ctx.ins[i] if i < len(ctx.ins) else None
    if info is None:
        fail(ctx, f"input {what} (slot {i}) is not connected")
    if info.value is None:
        raise GeError("EP0150", {"opname": ctx.op_name, "optype": ctx.op_type,
                                 "input": f"{what} (slot {i})",
                                 "source": info.source or "an unconnected slot"})
    return np.asarray(info.value)


def const_ints(ctx: InferCtx, i: int, what: str) -> list:
    return [int(v) for v in const_input(ctx, i, what).reshape(-1)]


def known(shape) -> bool:
    return shape is not None and all(d >= 0 for d in shape)


def numel(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def norm_axis(ctx: InferCtx, axis: int, rank: int, what: str = "axis") -> int:
    if not -rank <= axis < max(rank, 1):
        fail(ctx, f"{what} {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def broadcast_shapes(ctx: InferCtx, *shapes):
    """Numpy (multidirectional) broadcasting with unknown dims; error names the node."""
    if any(s is None for s in shapes):
        return None
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for k in range(rank):
        dims = [s[len(s) - rank + k] for s in shapes if len(s) - rank + k >= 0]
        fixed = {d for d in dims if d not in (1, -1)}
        if len(fixed) > 1:
            fail(ctx, "input shapes " + ", ".join(str(list(s)) for s in shapes)
                 + " cannot be broadcast")
        if fixed:
            out.append(fixed.pop())
        elif -1 in dims:
            out.append(-1)
        else:
            out.append(1)
    return tuple(out)


def _rank_of(dt: DataType):
    """(kind, size): kind 0 bool, 1 int, 2 float, 3 complex."""
    if dt == DT.DT_BOOL:
        return 0, 1
    if dt == DT.DT_BF16:
        return 2, 2
    npd = to_numpy_dtype(dt)
    kind = {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}.get(npd.kind, 4)
    return kind, npd.itemsize


def promote(a: DataType, b: DataType) -> DataType:
    """Result dtype of a binary op: equal types stay; a float wins over an int or bool;
    otherwise numpy's promotion (int32 + int64 -> int64)."""
    if a == b:
        return a
    try:
        ka, kb = _rank_of(a), _rank_of(b)
    except TypeError:
        return a
    if ka[0] != kb[0]:
        return a if ka[0] > kb[0] else b
    if ka[0] == 2:
        return a if ka[1] >= kb[1] else b
    return from_numpy_dtype(np.result_type(to_numpy_dtype(a), to_numpy_dtype(b)))


def np_dtype(dt: DataType) -> np.dtype:
    return to_numpy_dtype(dt)


def out_like(x: np.ndarray, value) -> np.ndarray:
    """`value` as an array of x's dtype (kernels keep their input's dtype)."""
    return np.asarray(value).astype(x.dtype, copy=False)


# ---- inference functions named by entries -------------------------------------------------

def infer_same(ctx: InferCtx):
    """One output with the shape and dtype of input 0."""
    return [(shape_of(ctx, 0), dtype_of(ctx, 0))]


def infer_broadcast(ctx: InferCtx):
    """One output: broadcast of every connected input, dtype promoted over them."""
    present = [i for i, t in enumerate(ctx.ins) if t is not None]
    shape = broadcast_shapes(ctx, *[shape_of(ctx, i) for i in present])
    dt = dtype_of(ctx, present[0])
    for i in present[1:]:
        dt = promote(dt, dtype_of(ctx, i))
    return [(shape, dt)]


# A built-in fusion pass (ge/compiler/fusion: ConvActivationFusionPass, MatMulActivationFusionPass)
# folds the activation that alone reads a Conv2D / matmul output into the op: the op type of
# that activation, run with its default attributes on the op's result.
FUSED_ACTIVATION = "fused_activation"


def apply_fused_activation(y, attrs: dict):
    """y after the op's `fused_activation` (none: y unchanged)."""
    name = attrs.get(FUSED_ACTIVATION) or ""
    if not name:
        return y
    opdef = get(name)
    defaults = {s.name: s.default for s in opdef.attrs if not s.required}
    return opdef.kernel([y], defaults)[0]
