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
from .jobs import THREADS, job_head, runner

__all__ = ["MATMUL_OPS", "VERSION", "render_matmul", "render_gemm", "render_conv2d"]

VERSION = 6
SGEMM = blas.symbol("cblas_sgemm")
SGEMV = blas.symbol("cblas_sgemv")
F = ("DT_FLOAT",)
MATMUL_OPS = {  # op -> (transpose attr of x1, of x2, batched)
    "MatMul": ("transpose_x1", "transpose_x2", False),
    "MatMulV2": ("transpose_x1", "transpose_x2", False),
    "BatchMatMul": ("adj_x1", "adj_x2", True),
    "BatchMatMulV2": ("adj_x1", "adj_x2", True),
}
_MAX_BATCH_TABLE = 4096


# Threaded (jobs.py): a job is one batch x one block of output columns, a one-thread sgemm then
# the bias and activation of its own block; one thread runs each batch whole, as one sgemm.
# The blocks per batch are chosen at run time: enough for the model's threads to have a job
# each (one block per thread: each block's sgemm packs all of A, and with 2 threads 4 blocks
# made BERT-base 3.5% slower than 2)
MIN_JOB_COLUMNS = 128       # narrower blocks lose more in sgemm than the balance gains
MIN_THREADED_MACS = 1 << 20  # below this a product does not pay for starting threads


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
    threaded = m * n * k * nb >= MIN_THREADED_MACS
    lda = m if ta else k
    ldb = k if tb else n
    # a job >= 0 is (batch, block of `width` columns); -1 - bi is all of batch bi (one thread)
    job = job_head(io_decls(sig), wide=bool(epilogue_helpers(sig)))
    job += ["    (void)inputs;",
            "    const int64_t blocks = (int64_t)(size_t)outputs[1];",
            f"    const int64_t width = ({n} + blocks - 1) / blocks;",
            "    const int64_t bi = job < 0 ? -1 - job : job / blocks;",
            "    const int64_t j0 = job < 0 ? 0 : job % blocks * width;",
            f"    const int64_t w = job < 0 ? {n} : ({n} - j0 < width ? {n} - j0 : width);",
            "    if (w <= 0) return;",
            f"    float *c = y0 + bi * {m * n} + j0;"]
    if has_bias:    # pre-fill C with the bias row; sgemm then accumulates with beta = 1
        job += [f"    for (int64_t r = 0; r < {m}; ++r) "
                f"memcpy(c + r * {n}, x2 + j0, w * sizeof(float));"]
    beta = "1.0f" if has_bias else "0.0f"
    if m == 1:      # a row times a matrix: sgemv reads B once, sgemm would pack it first
        job += [f"    {SGEMV}(CblasRowMajor, {'CblasNoTrans' if tb else 'CblasTrans'}, "
                f"{'w' if tb else k}, {k if tb else 'w'}, 1.0f, "
                f"x1 + off_b[bi] + j0{f' * {ldb}' if tb else ''}, {ldb}, x0 + off_a[bi], 1, "
                f"{beta}, c, 1);"]
    else:
        job += [f"    {SGEMM}(CblasRowMajor, {'CblasTrans' if ta else 'CblasNoTrans'}, "
                f"{'CblasTrans' if tb else 'CblasNoTrans'}, {m}, w, {k}, 1.0f, "
                f"x0 + off_a[bi], {lda}, x1 + off_b[bi] + j0{f' * {ldb}' if tb else ''}, "
                f"{ldb}, {beta}, c, {n});"]
    act = epilogue(sig, "row", "w", "        ")
    if act:
        job += [f"    for (int64_t r = 0; r < {m}; ++r) {{",
                f"        float *row = c + r * {n};"] + act + ["    }"]
    job += ["}", ""]
    helpers = [f"static const int64_t off_a[{nb}] = {{{', '.join(map(str, offs_a))}}};",
               f"static const int64_t off_b[{nb}] = {{{', '.join(map(str, offs_b))}}};",
               ] + runner(nb)
    helpers += epilogue_helpers(sig) + job
    most = max(1, n // MIN_JOB_COLUMNS)     # column blocks per batch
    body = [f"    const int64_t threads = {THREADS};",
            f"    int64_t blocks = {nb} >= threads ? 1 : (threads + {nb - 1}) / {nb};",
            f"    if (blocks > {most}) blocks = {most};",
            "    void *outs[2] = {outputs[0], (void *)(size_t)blocks};",
            f"    ge_run_jobs(inputs, outs, {nb} * blocks);"] if threaded else [
            "    void *outs[2] = {outputs[0], (void *)(size_t)1};",     # batch by batch
            "    ge_run_jobs(inputs, outs, 1);"]
    return KernelSource(kernel_file(sig, "matmul", VERSION, [], body, blas=True,
                                    helpers=helpers), needs_blas=True)


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
