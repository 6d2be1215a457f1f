"""Matrix products and 2-D convolution on OpenBLAS (`cblas_sgemm` of the scipy-openblas32 wheel,
whose symbols carry a prefix: ge.blas).

MatMul/MatMulV2 (2-D, optional bias), BatchMatMul/BatchMatMulV2 (batch broadcasting, optional
bias), GEMM (constant alpha/beta inputs); Conv2D is in gen_conv.py (re-exported here).
"""
from __future__ import annotations

from ge import blas

from .cgen import (KernelSource, Unsupported, broadcast_strides, flit, io_decls, kernel_file,
                   numel, require_dtypes)
from .gen_conv import epilogue, epilogue_helpers, render_conv2d

__all__ = ["MATMUL_OPS", "VERSION", "render_matmul", "render_gemm", "render_conv2d"]

VERSION = 3
SGEMM = blas.symbol("cblas_sgemm")
F = ("DT_FLOAT",)
MATMUL_OPS = {  # op -> (transpose attr of x1, of x2, batched)
    "MatMul": ("transpose_x1", "transpose_x2", False),
    "MatMulV2": ("transpose_x1", "transpose_x2", False),
    "BatchMatMul": ("adj_x1", "adj_x2", True),
    "BatchMatMulV2": ("adj_x1", "adj_x2", True),
}
_MAX_BATCH_TABLE = 4096


def _bias_fill(bias_slot: int, rows: str, n: int) -> list:
    """Pre-fill C (rows x n at `c`) with the bias row; sgemm then accumulates with beta = 1."""
    return [f"        for (int64_t r = 0; r < {rows}; ++r) "
            f"memcpy(c + r * {n}, x{bias_slot}, {n} * sizeof(float));"]


def _check_no_offset(sig, slot: int) -> None:
    if len(sig.inputs) > slot and sig.inputs[slot] is not None:
        raise Unsupported("quantised offset_w input")


def render_matmul(sig) -> KernelSource:
    require_dtypes(sig, {0: F, 1: F, 2: F}, {0: F})
    _check_no_offset(sig, 3)
    ta_name, tb_name, batched = MATMUL_OPS[sig.op_type]
    ta, tb = bool(sig.attr(ta_name, False)), bool(sig.attr(tb_name, False))
    a, b, y = sig.inputs[0].shape, sig.inputs[1].shape, sig.outputs[0].shape
    if len(a) < 2 or len(b) < 2 or (not batched and (len(a) != 2 or len(b) != 2)):
        raise Unsupported(f"operand ranks {len(a)} and {len(b)}")
    m, k = (a[-1], a[-2]) if ta else (a[-2], a[-1])
    k2, n = (b[-1], b[-2]) if tb else (b[-2], b[-1])
    if k != k2 or tuple(y[-2:]) != (m, n) or min(m, n, k) <= 0:
        raise Unsupported(f"inconsistent matmul shapes {a} x {b} -> {y}")
    has_bias = len(sig.inputs) > 2 and sig.inputs[2] is not None
    if has_bias and numel(sig.inputs[2].shape) != n:
        raise Unsupported("bias is not one row of N values")
    batch = list(y[:-2])
    nb = numel(batch)
    if nb > _MAX_BATCH_TABLE:
        raise Unsupported("batch too large for an offset table")
    sa = broadcast_strides(list(a[:-2]), batch) if batch else []
    sb = broadcast_strides(list(b[:-2]), batch) if batch else []
    offs_a, offs_b = [], []
    for idx in range(nb):
        rem, oa, ob = idx, 0, 0
        for d, dim in reversed(list(enumerate(batch))):
            i = rem % dim
            rem //= dim
            oa += i * sa[d]
            ob += i * sb[d]
        offs_a.append(oa * m * k)
        offs_b.append(ob * k * n)
    helpers = [f"static const int64_t off_a[{nb}] = {{{', '.join(map(str, offs_a))}}};",
               f"static const int64_t off_b[{nb}] = {{{', '.join(map(str, offs_b))}}};", ""]
    lda = m if ta else k
    ldb = k if tb else n
    body = [f"    for (int64_t bi = 0; bi < {nb}; ++bi) {{",
            f"        float *c = y0 + bi * {m * n};"]
    body += _bias_fill(2, str(m), n) if has_bias else []
    body += [f"        {SGEMM}(CblasRowMajor, {'CblasTrans' if ta else 'CblasNoTrans'}, "
             f"{'CblasTrans' if tb else 'CblasNoTrans'}, {m}, {n}, {k}, 1.0f, "
             f"x0 + off_a[bi], {lda}, x1 + off_b[bi], {ldb}, {'1.0f' if has_bias else '0.0f'}, "
             f"c, {n});"]
    body += epilogue(sig, "c", str(m * n), "        ") + ["    }"]
    return KernelSource(kernel_file(sig, "matmul", VERSION, io_decls(sig), body, blas=True,
                                    helpers=helpers + epilogue_helpers(sig)), needs_blas=True)


def render_gemm(sig) -> KernelSource:
    require_dtypes(sig, {0: F, 1: F, 2: F}, {0: F})
    alpha, beta = sig.const(3), sig.const(4)
    if alpha is None or beta is None or len(alpha) != 1 or len(beta) != 1:
        raise Unsupported("GEMM alpha/beta are not scalar constants")
    ta, tb = bool(sig.attr("transpose_a", False)), bool(sig.attr("transpose_b", False))
    a, b, y = sig.inputs[0].shape, sig.inputs[1].shape, sig.outputs[0].shape
    if len(a) != 2 or len(b) != 2:
        raise Unsupported("GEMM operands must be 2-D")
    m, k = (a[1], a[0]) if ta else (a[0], a[1])
    n = b[0] if tb else b[1]
    if tuple(y) != (m, n):
        raise Unsupported("inconsistent GEMM shapes")
    has_c = sig.inputs[2] is not None
    body = []
    if has_c:
        cs = broadcast_strides(sig.inputs[2].shape, [m, n])
        body += [f"    for (int64_t i = 0; i < {m}; ++i) for (int64_t j = 0; j < {n}; ++j)",
                 f"        y0[i * {n} + j] = {flit(beta[0])} * x2[i * {cs[0]} + j * {cs[1]}];"]
    body += [f"    {SGEMM}(CblasRowMajor, {'CblasTrans' if ta else 'CblasNoTrans'}, "
             f"{'CblasTrans' if tb else 'CblasNoTrans'}, {m}, {n}, {k}, {flit(alpha[0])}, "
             f"x0, {m if ta else k}, x1, {k if tb else n}, {'1.0f' if has_c else '0.0f'}, "
             f"y0, {n});"]
    return KernelSource(kernel_file(sig, "matmul", VERSION, io_decls(sig), body, blas=True),
                        needs_blas=True)
