"""Matmul family (spec/ir-ops.md §3.2): MatMul, MatMulV2, BatchMatMul, BatchMatMulV2, GEMM.

Shapes follow numpy matmul (1-D operands promoted and the added dim removed, batch dims
broadcast); transposes swap the last two dims of operands of rank >= 2.  float16 products are
accumulated in float32; int8/uint8 products in int32 (the output is then int32).  The int8
weight offset (`offset_w`, `offset_x`) is not applied by the reference kernels.
"""
from __future__ import annotations

import numpy as np

from ._common import (DT, VT, AttrSpec, OpDef, Port, apply_fused_activation, broadcast_shapes,
                      dtype_of, fail, promote, register, shape_of)

FAMILY = "matmul"


def matmul_shape(ctx, s1, s2, t1: bool, t2: bool):
    if s1 is None or s2 is None:
        return None
    if len(s1) == 0 or len(s2) == 0:
        fail(ctx, "matmul operands must have rank >= 1")
    drop_m, drop_n = len(s1) == 1, len(s2) == 1
    s1 = (1,) + tuple(s1) if drop_m else tuple(s1)
    s2 = tuple(s2) + (1,) if drop_n else tuple(s2)
    if t1 and not drop_m:
        s1 = s1[:-2] + (s1[-1], s1[-2])
    if t2 and not drop_n:
        s2 = s2[:-2] + (s2[-1], s2[-2])
    k1, k2 = s1[-1], s2[-2]
    if k1 >= 0 and k2 >= 0 and k1 != k2:
        fail(ctx, f"inner dimensions differ: {k1} (x1) vs {k2} (x2)")
    batch = broadcast_shapes(ctx, s1[:-2], s2[:-2])
    tail = (() if drop_m else (s1[-2],)) + (() if drop_n else (s2[-1],))
    return tuple(batch) + tail


def _out_dtype(a: DT, b: DT) -> DT:
    dt = promote(a, b)
    return DT.DT_INT32 if dt in (DT.DT_INT8, DT.DT_UINT8) else dt


def matmul(a, b, ta=False, tb=False):
    out = np.result_type(a.dtype, b.dtype)
    if out == np.float16:
        a, b = a.astype(np.float32), b.astype(np.float32)
    elif out in (np.int8, np.uint8, np.int16):
        out = np.dtype(np.int32)
        a, b = a.astype(np.int32), b.astype(np.int32)
    if ta and a.ndim >= 2:
        a = np.swapaxes(a, -1, -2)
    if tb and b.ndim >= 2:
        b = np.swapaxes(b, -1, -2)
    return np.matmul(a, b), out


def _infer(t1_attr, t2_attr, max_rank=None):
    def infer(ctx):
        s1, s2 = shape_of(ctx, 0), shape_of(ctx, 1)
        if max_rank is not None:
            for s, n in ((s1, "x1"), (s2, "x2")):
                if s is not None and len(s) > max_rank:
                    fail(ctx, f"{n} must have rank <= {max_rank}, got {list(s)}")
        shape = matmul_shape(ctx, s1, s2, ctx.attrs[t1_attr], ctx.attrs[t2_attr])
        if len(ctx.ins) > 2 and ctx.ins[2] is not None and shape is not None:
            shape = broadcast_shapes(ctx, shape, shape_of(ctx, 2))
        return [(shape, _out_dtype(dtype_of(ctx, 0), dtype_of(ctx, 1)))]
    return infer


def _kernel(t1_attr, t2_attr):
    def kernel(ins, attrs):
        y, out = matmul(ins[0], ins[1], attrs[t1_attr], attrs[t2_attr])
        if len(ins) > 2 and ins[2] is not None:
            y = y + ins[2].astype(y.dtype)
        return [apply_fused_activation(y, attrs).astype(out)]
    return kernel


def infer_gemm(ctx):
    shape = matmul_shape(ctx, shape_of(ctx, 0), shape_of(ctx, 1), ctx.attrs["transpose_a"],
                         ctx.attrs["transpose_b"])
    if shape is not None and shape_of(ctx, 2) is not None:
        full = broadcast_shapes(ctx, shape, shape_of(ctx, 2))
        if full is not None and len(full) == len(shape) and any(
                a >= 0 and b >= 0 and a != b for a, b in zip(full, shape)):
            fail(ctx, f"c shape {list(shape_of(ctx, 2))} does not broadcast to {list(shape)}")
    return [(shape, _out_dtype(dtype_of(ctx, 0), dtype_of(ctx, 1)))]


def kernel_gemm(ins, attrs):
    a, b, c, alpha, beta = ins
    y, out = matmul(a, b, attrs["transpose_a"], attrs["transpose_b"])
    alpha = alpha.astype(y.dtype).reshape(-1)[0]
    beta = beta.astype(y.dtype).reshape(-1)[0]
    return [(alpha * y + beta * c.astype(y.dtype)).astype(out)]


_T = (AttrSpec("transpose_x1", VT.VT_BOOL, False), AttrSpec("transpose_x2", VT.VT_BOOL, False))
_ADJ = (AttrSpec("adj_x1", VT.VT_BOOL, False), AttrSpec("adj_x2", VT.VT_BOOL, False))
_OFFSET_X = AttrSpec("offset_x", VT.VT_INT, 0)

register(OpDef("MatMul", kernel_gen="matmul",
               inputs=(Port("x1"), Port("x2"), Port("bias", "optional")),
               outputs=(Port("y"),), attrs=_T,
               infer=_infer("transpose_x1", "transpose_x2", 2),
               kernel=_kernel("transpose_x1", "transpose_x2"), family=FAMILY,
               doc="2-D matrix product (+bias)"))
register(OpDef("MatMulV2", kernel_gen="matmul",
               inputs=(Port("x1"), Port("x2"), Port("bias", "optional"),
                                   Port("offset_w", "optional")),
               outputs=(Port("y"),), attrs=_T + (_OFFSET_X,),
               infer=_infer("transpose_x1", "transpose_x2", 2),
               kernel=_kernel("transpose_x1", "transpose_x2"), family=FAMILY,
               doc="2-D matmul with optional bias (ONNX Gemm target)"))
register(OpDef("BatchMatMul", kernel_gen="matmul",
               inputs=(Port("x1"), Port("x2")), outputs=(Port("y"),),
               attrs=_ADJ, infer=_infer("adj_x1", "adj_x2"), kernel=_kernel("adj_x1", "adj_x2"),
               family=FAMILY, doc="batched matmul"))
register(OpDef("BatchMatMulV2", kernel_gen="matmul",
               inputs=(Port("x1"), Port("x2"), Port("bias", "optional"),
                                        Port("offset_w", "optional")),
               outputs=(Port("y"),), attrs=_ADJ + (_OFFSET_X,),
               infer=_infer("adj_x1", "adj_x2"), kernel=_kernel("adj_x1", "adj_x2"),
               family=FAMILY, doc="batched matmul with broadcasting (+bias); ONNX MatMul"))
register(OpDef("GEMM", kernel_gen="gemm", kernel_consts=(3, 4),
               inputs=(Port("a"), Port("b"), Port("c"), Port("alpha"), Port("beta")),
               outputs=(Port("y"),),
               attrs=(AttrSpec("transpose_a", VT.VT_BOOL, False),
                      AttrSpec("transpose_b", VT.VT_BOOL, False)),
               infer=infer_gemm, kernel=kernel_gemm, family=FAMILY,
               doc="alpha*op(a)*op(b) + beta*c"))
