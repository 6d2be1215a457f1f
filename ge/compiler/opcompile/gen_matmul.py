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

VERSION = 4
SGEMM = blas.symbol("cblas_sgemm")
F = ("DT_FLOAT",)
MATMUL_OPS = {  # op -> (transpose attr of x1, of x2, batched)
    "MatMul": ("transpose_x1", "transpose_x2", False),
    "MatMulV2": ("transpose_x1", "transpose_x2", False),
    "BatchMatMul": ("adj_x1", "adj_x2", True),
    "BatchMatMulV2": ("adj_x1", "adj_x2", True),
}
_MAX_BATCH_TABLE = 4096


# The kernel splits its products into jobs (one batch x one block of output columns) that
# `threads` threads take in turn, the calling thread among them, each running a one-thread
# sgemm and then the bias and activation of its own block.  A thread that the machine does
# not schedule leaves its jobs to the others: OpenBLAS's own threads wait for each other
# inside every sgemm, and on a busy machine one descheduled thread stalled the whole product.
# The count is the model's (docs/runtime.md, "Threads"): the one OpenBLAS holds when the
# kernel starts; the kernel sets OpenBLAS to one thread for its jobs and back after.
MIN_JOB_COLUMNS = 128       # narrower blocks lose more in sgemm than the balance gains
JOBS_PER_THREAD = 2         # blocks per thread: a thread that starts late still gets work
MIN_THREADED_MACS = 1 << 20  # below this a product does not pay for starting threads
THREADS = f"""\
typedef unsigned long ge_thread_t;
extern int pthread_create(ge_thread_t *, const void *, void *(*)(void *), void *);
extern int pthread_join(ge_thread_t, void **);
typedef struct {{ void *const *inputs; void *const *outputs; int64_t next; }} ge_jobs_t;
static void ge_job(void *const *inputs, void *const *outputs, int64_t job);
static void *ge_take_jobs(void *arg)
{{
    ge_jobs_t *jobs = (ge_jobs_t *)arg;
    int64_t job;
    while ((job = __atomic_fetch_add(&jobs->next, 1, __ATOMIC_RELAXED)) < GE_JOBS)
        ge_job(jobs->inputs, jobs->outputs, job);
    return NULL;
}}
static void ge_run_jobs(void *const *inputs, void *const *outputs)
{{
    const int threads = {blas.symbol("openblas_get_num_threads")}();
    ge_jobs_t jobs = {{inputs, outputs, 0}};
    if (threads <= 1 || GE_THREADED_JOBS <= 1) {{
        for (int64_t job = 0; job < GE_SERIAL_JOBS; ++job)
            ge_job(inputs, outputs, -1 - job);
        return;
    }}
    ge_thread_t pool[GE_MAX_THREADS];
    int started = 0;
    {blas.symbol("openblas_set_num_threads")}(1);
    for (int t = 1; t < threads && t < GE_MAX_THREADS && t < GE_JOBS; ++t)
        if (pthread_create(&pool[started], NULL, ge_take_jobs, &jobs) == 0)
            ++started;
    ge_take_jobs(&jobs);
    for (int t = 0; t < started; ++t)
        pthread_join(pool[t], NULL);
    {blas.symbol("openblas_set_num_threads")}(threads);
}}
"""
GE_MAX_THREADS = 64


def _column_blocks(n: int, nb: int, macs: int) -> int:
    """Column blocks per batch when threaded (1: the jobs are the batches)."""
    if macs < MIN_THREADED_MACS or nb >= 2 * JOBS_PER_THREAD:
        return 1
    return max(1, min(2 * JOBS_PER_THREAD, n // MIN_JOB_COLUMNS))


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
    blocks = _column_blocks(n, nb, m * n * k * nb)
    width = -(-n // blocks)
    lda = m if ta else k
    ldb = k if tb else n
    # a job >= 0 is (batch, block of `width` columns); -1 - bi is all of batch bi (one thread)
    job = ["static void ge_job(void *const *inputs, void *const *outputs, int64_t job)", "{"]
    job += ["    " + d for d in io_decls(sig)]
    job += ["    (void)inputs; (void)outputs;",
            f"    const int64_t bi = job < 0 ? -1 - job : job / {blocks};",
            f"    const int64_t j0 = job < 0 ? 0 : job % {blocks} * {width};",
            f"    const int64_t w = job < 0 ? {n} : ({n} - j0 < {width} ? {n} - j0 : {width});",
            f"    float *c = y0 + bi * {m * n} + j0;"]
    if has_bias:    # pre-fill C with the bias row; sgemm then accumulates with beta = 1
        job += [f"    for (int64_t r = 0; r < {m}; ++r) "
                f"memcpy(c + r * {n}, x2 + j0, w * sizeof(float));"]
    job += [f"    {SGEMM}(CblasRowMajor, {'CblasTrans' if ta else 'CblasNoTrans'}, "
            f"{'CblasTrans' if tb else 'CblasNoTrans'}, {m}, w, {k}, 1.0f, "
            f"x0 + off_a[bi], {lda}, x1 + off_b[bi] + j0{f' * {ldb}' if tb else ''}, {ldb}, "
            f"{'1.0f' if has_bias else '0.0f'}, c, {n});"]
    act = epilogue(sig, "row", "w", "        ")
    if act:
        job += [f"    for (int64_t r = 0; r < {m}; ++r) {{",
                f"        float *row = c + r * {n};"] + act + ["    }"]
    job += ["}", ""]
    helpers = [f"static const int64_t off_a[{nb}] = {{{', '.join(map(str, offs_a))}}};",
               f"static const int64_t off_b[{nb}] = {{{', '.join(map(str, offs_b))}}};",
               f"#define GE_SERIAL_JOBS {nb}",
               f"#define GE_JOBS {nb * blocks}",
               f"#define GE_THREADED_JOBS {nb * blocks if m * n * k * nb >= MIN_THREADED_MACS else 1}",
               f"#define GE_MAX_THREADS {GE_MAX_THREADS}",
               THREADS] + epilogue_helpers(sig) + job
    body = ["    ge_run_jobs(inputs, outputs);"]
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
