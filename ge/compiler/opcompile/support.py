"""The support object: C code that many kernels share, compiled once per compile process and
linked into each kernel that calls it (docs/kernel-abi.md, "The support object").

It holds the job pool of the kernels that split their work (jobs.py: matmuls, convolutions,
large softmaxes and layer norms) and the whole blocked convolution (gen_conv.py), which runs
on a filter packed once when the kernel hands it the product of conv_product.py
(docs/kernel-abi.md, "Prepared constants"): its loops ran
as fast compiled per shape, so a convolution kernel is now its plan (CONV_PLAN, a table of
int64) and one call, `ge_support_conv`, which the C compiler builds in half the time (24 ms
vs 44 ms here; ResNet-50's cold compile: 0.54 s less CPU).
Compiled into every such kernel, the pool cost about 50 ms of C compiler time per kernel
(measured: a MatMul kernel 70 ms with it); linked as an object it costs the link of a few KB,
and build.py compiles the object once per compile process that builds a kernel.  A kernel
stays one self-contained shared object with the same ABI: a loader cannot tell the
difference.  This module is the object's text and what kernels declare of it.

The object is built from this fixed source with the kernels' own flags (and `-fPIC -c`), from
the fixed file name `support.c`, so its bytes are the same wherever the same compiler builds it;
a kernel's cache key carries the sha256 of the source (SOURCE_SHA256), beside the compiler
identity that is already in it.  Only its entry points for kernels (`ge_support_*`) are hidden;
the pool's `ge_jobs_run` / `ge_jobs_delegate` are each kernel's exports, as before.
"""
from __future__ import annotations

import hashlib

from ge import blas
from ge.ops.defs.conv import FILTER_SLOT, RESIDUAL_SLOT

from . import conv_product
from .cgen import fill, prelude

__all__ = ["SOURCE", "SOURCE_SHA256", "MARKER", "CONV_DECLS", "CONV_PLAN", "CONV_MODES",
           "CONV_SHARE", "RUNNER_DECLS", "uses_support"]

MARKER = "ge_support_"  # a kernel whose source calls a function of this prefix links the object
_GET = blas.symbol("openblas_get_num_threads")
_SET = blas.symbol("openblas_set_num_threads")

_POOL_C = """\
typedef unsigned long ge_thread_t;
typedef union { char bytes[128]; long double align; } ge_sync_t;  /* zeroed = initialised */
typedef void (*ge_job_fn)(void *const *, void *const *, int64_t);
typedef void (*ge_jobs_fn)(ge_job_fn, void *const *, void *const *, int64_t);
extern int pthread_create(ge_thread_t *, const void *, void *(*)(void *), void *);
extern int pthread_join(ge_thread_t, void **);
extern int pthread_setname_np(ge_thread_t, const char *);
extern int pthread_mutex_lock(ge_sync_t *);
extern int pthread_mutex_unlock(ge_sync_t *);
extern int pthread_cond_wait(ge_sync_t *, ge_sync_t *);
extern int pthread_cond_broadcast(ge_sync_t *);
extern int sched_yield(void);
extern int getpid(void);
ge_jobs_fn ge_jobs_delegate = 0;    /* the loader's choice: the pool of another kernel */
static struct {
    uint64_t ticket;            /* generation << 32 | next job of that generation */
    int64_t done;               /* jobs of the current generation finished */
    int64_t jobs;
    ge_job_fn job;
    void *const *inputs;
    void *const *outputs;
    uint64_t base;
    int busy, pid, workers, active, stop;
    ge_sync_t lock, wake;
    ge_thread_t threads[@WORKERS@];
} ge_pool;

static void ge_take_jobs(uint64_t generation)
{
    uint64_t t = __atomic_load_n(&ge_pool.ticket, __ATOMIC_ACQUIRE);
    while ((t >> 32) == generation && (int64_t)(t & 0xffffffffu) < ge_pool.jobs) {
        if (__atomic_compare_exchange_n(&ge_pool.ticket, &t, t + 1, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE)) {
            ge_pool.job(ge_pool.inputs, ge_pool.outputs, (int64_t)(t & 0xffffffffu));
            __atomic_fetch_add(&ge_pool.done, 1, __ATOMIC_RELEASE);
            t = __atomic_load_n(&ge_pool.ticket, __ATOMIC_ACQUIRE);
        }
    }
}

static int ge_no_news(uint64_t seen)
{
    return __atomic_load_n(&ge_pool.ticket, __ATOMIC_ACQUIRE) >> 32 == seen
           && !__atomic_load_n(&ge_pool.stop, __ATOMIC_ACQUIRE);
}

/* A worker polls for the next kernel's jobs a little (GE_SPIN pauses, about 0.5 ms here)
   before it sleeps: a model's kernels follow each other closely, and waking a sleeping
   worker for each one cost ResNet-50 about 10% with 2 threads. */
#define GE_SPIN 20000
#if defined(__x86_64__) || defined(__i386__)
#define GE_PAUSE() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define GE_PAUSE() __asm__ __volatile__("yield")
#else
#define GE_PAUSE() ((void)0)
#endif
static void *ge_worker(void *arg)
{
    const int index = (int)(long)arg;
    uint64_t seen = ge_pool.base;   /* the generation before the one that started it */
    for (;;) {
        for (int spin = 0; spin < GE_SPIN && ge_no_news(seen); ++spin)
            GE_PAUSE();
        pthread_mutex_lock(&ge_pool.lock);
        while (ge_no_news(seen))
            pthread_cond_wait(&ge_pool.wake, &ge_pool.lock);
        pthread_mutex_unlock(&ge_pool.lock);
        if (__atomic_load_n(&ge_pool.stop, __ATOMIC_ACQUIRE))
            return (void *)0;
        seen = __atomic_load_n(&ge_pool.ticket, __ATOMIC_ACQUIRE) >> 32;
        if (index < __atomic_load_n(&ge_pool.active, __ATOMIC_ACQUIRE))
            ge_take_jobs(seen);
    }
}

__attribute__((destructor)) static void ge_stop_workers(void)
{
    if (ge_pool.workers == 0 || ge_pool.pid != getpid())
        return;
    pthread_mutex_lock(&ge_pool.lock);
    __atomic_store_n(&ge_pool.stop, 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&ge_pool.wake);
    pthread_mutex_unlock(&ge_pool.lock);
    for (int w = 0; w < ge_pool.workers; ++w)
        pthread_join(ge_pool.threads[w], (void **)0);
    ge_pool.workers = 0;
}

/* Jobs 0 .. jobs-1 of `job` on this library's pool and the calling thread. */
void ge_jobs_run(ge_job_fn job, void *const *inputs, void *const *outputs, int64_t jobs)
{
    const int threads = @GET@();
    int helpers = threads - 1;
    if (helpers > jobs - 1) helpers = (int)(jobs - 1);
    if (helpers > @WORKERS@) helpers = @WORKERS@;
    if (helpers <= 0 || __atomic_exchange_n(&ge_pool.busy, 1, __ATOMIC_ACQUIRE)) {
        for (int64_t j = 0; j < jobs; ++j)      /* one thread, or a second caller */
            job(inputs, outputs, j);
        return;
    }
    if (ge_pool.pid != getpid()) {      /* first call, or a forked child: no workers yet */
        ge_pool.workers = 0;
        ge_pool.pid = getpid();
        ge_pool.lock = (ge_sync_t){{0}};
        ge_pool.wake = (ge_sync_t){{0}};
    }
    ge_pool.base = __atomic_load_n(&ge_pool.ticket, __ATOMIC_RELAXED) >> 32;
    while (ge_pool.workers < helpers
           && pthread_create(&ge_pool.threads[ge_pool.workers], (void *)0, ge_worker,
                             (void *)(long)ge_pool.workers) == 0)
        pthread_setname_np(ge_pool.threads[ge_pool.workers++], "@NAME@");
    @SET@(1);
    ge_pool.job = job;
    ge_pool.jobs = jobs;
    ge_pool.inputs = inputs;
    ge_pool.outputs = outputs;
    __atomic_store_n(&ge_pool.done, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&ge_pool.active, helpers, __ATOMIC_RELAXED);
    const uint64_t generation = (__atomic_load_n(&ge_pool.ticket, __ATOMIC_RELAXED) >> 32) + 1;
    pthread_mutex_lock(&ge_pool.lock);
    __atomic_store_n(&ge_pool.ticket, generation << 32, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&ge_pool.wake);
    pthread_mutex_unlock(&ge_pool.lock);
    ge_take_jobs(generation);
    while (__atomic_load_n(&ge_pool.done, __ATOMIC_ACQUIRE) < jobs)
        sched_yield();
    @SET@(threads);
    __atomic_store_n(&ge_pool.busy, 0, __ATOMIC_RELEASE);
}

/* A kernel's jobs: one thread runs the `serial` one-thread jobs -1 .. -serial in order.  The
   BLAS runs on one thread in either case, so a kernel's sgemm calls (and bits) are the same
   whatever the model's thread count (OpenBLAS's own threads change the order of the sums on
   some cores: docs/runtime.md). */
__attribute__((visibility("hidden")))
void ge_support_run_jobs(ge_job_fn job, void *const *inputs, void *const *outputs, int64_t jobs,
                         int64_t serial)
{
    const int threads = @GET@();
    if (jobs <= 1 || threads <= 1) {
        if (threads > 1) @SET@(1);
        for (int64_t j = 0; j < serial; ++j)
            job(inputs, outputs, -1 - j);
        if (threads > 1) @SET@(threads);
        return;
    }
    (ge_jobs_delegate ? ge_jobs_delegate : ge_jobs_run)(job, inputs, outputs, jobs);
}
"""

RUNNER_DECLS = """\
typedef void (*ge_job_fn)(void *const *, void *const *, int64_t);
void ge_support_run_jobs(ge_job_fn, void *const *, void *const *, int64_t, int64_t);"""

# The blocked convolution's plan (gen_conv.py): the int64 table a kernel passes to
# ge_support_conv, in this order (the C names are GE_CV_<FIELD>)
CONV_PLAN = ("n", "c", "hw", "groups", "cg", "co", "cog", "ck", "ohw", "unit", "units", "per",
             "mode", "shares", "most", "col_floats", "pack_floats", "direct", "padded", "bias",
             "residual", "relu", "geo")     # geo: the 12 values of ge_im2col's geometry, last
CONV_MODES = ("rows", "channels", "columns")    # GE_CV_<MODE>, the plan's mode values
# a share is this many channels / columns: the prepared product's panels of columns, so a
# split puts its part panels where one thread does (the last), and balances small images
# (14x14: 4 + 4 panels where shares of 64 gave 64 + 132 columns)
CONV_SHARE = {"channels": 16, "columns": conv_product.PANEL}
CONV_DECLS = """\
typedef void (*ge_conv_epilogue)(float *, const float *, int64_t, int64_t, int64_t);
/* the prepared product's b: a matrix b[k][n] (ldb apart), or (b NULL) a padded image block
   (ge_pad): planes of hwp floats, an output row `row` floats after the one before and a
   pixel `step` (the strides), the first column's pixel q0 (of rows of ow pixels), row k's
   channel k / taps and tap k % taps, at tap[k % taps] in its plane */
struct ge_conv_b {
    const float *b;
    int64_t ldb;
    const float *xp;
    int64_t hwp, row, step, ow, q0, taps;
    const int64_t *tap;
};
/* the prepared product (conv_product.py): m, n, k, packed filter, its panels, first panel,
   b, y, ldy, bias, residual, relu, pack area */
typedef void (*ge_conv_product)(int64_t, int64_t, int64_t, const float *, int64_t, int64_t,
                                const struct ge_conv_b *, float *, int64_t, const float *,
                                const float *, int, float *);
void ge_support_conv(const int64_t *, void *const *, void *const *, void *, ge_conv_epilogue,
                     const void *, ge_conv_product);
uint64_t ge_support_conv_state_bytes(const int64_t *);
void ge_support_conv_prepare(const int64_t *, void *const *, void *);"""
assert CONV_SHARE["channels"] % conv_product.CHANNELS == 0     # shares of whole panels

_CONV_C = r"""
/* The blocked convolution's loops (gen_conv.py), the same for every shape: im2col of output
   rows r0 .. r0+rn-1 of one image into col[ck][rn*ow]; geo = {cg, h, w, kh, kw, sh, sw, dh,
   dw, pt, pl, ow}.  Copies and zeroing are plain loops, not memcpy / memset calls: a call per
   row and tap for a few floats costs more than the floats.  Stride 1 with ow == w (a "same"
   convolution): the rows a tap reads are one run of the input, copied at once, then its pad
   columns zeroed (ResNet-50's im2col alone: 4.1 -> 3.2 ms here). */
__attribute__((optimize("no-tree-loop-distribute-patterns")))
static void ge_im2col(const float *restrict x, float *restrict col, const int64_t *geo,
                      int64_t r0, int64_t rn)
{
    const int64_t cg = geo[0], h = geo[1], w = geo[2], kh = geo[3], kw = geo[4], sh = geo[5];
    const int64_t sw = geo[6], dh = geo[7], dw = geo[8], pt = geo[9], pl = geo[10], ow = geo[11];
    const int64_t pn = rn * ow;
    const int same = sh == 1 && sw == 1 && ow == w;
    for (int64_t ci = 0; ci < cg; ++ci)
    for (int64_t ki = 0; ki < kh; ++ki)
    for (int64_t kj = 0; kj < kw; ++kj) {
        float *row = col + ((ci * kh + ki) * kw + kj) * pn;
        /* jlo .. jhi: the output columns whose tap kj reads inside the input row */
        const int64_t wofs = kj * dw - pl;
        int64_t jlo = wofs >= 0 ? 0 : (-wofs + sw - 1) / sw;
        int64_t jhi = wofs >= w ? 0 : (w - 1 - wofs) / sw + 1;
        if (jlo > ow) jlo = ow;
        if (jhi > ow) jhi = ow;
        if (jhi < jlo) jhi = jlo;
        /* ilo .. ihi: the output rows (of r0 .. r0+rn-1) whose tap ki reads inside the image */
        const int64_t hofs = ki * dh - pt;
        int64_t ilo = hofs >= 0 ? 0 : (-hofs + sh - 1) / sh;
        int64_t ihi = hofs >= h ? 0 : (h - 1 - hofs) / sh + 1;
        ilo = ilo < r0 ? r0 : (ilo > r0 + rn ? r0 + rn : ilo);
        ihi = ihi > r0 + rn ? r0 + rn : ihi;
        if (ihi < ilo) ihi = ilo;
        for (int64_t e = 0; e < (ilo - r0) * ow; ++e) row[e] = 0.0f;
        for (int64_t e = (ihi - r0) * ow; e < pn; ++e) row[e] = 0.0f;
        if (same && jlo < jhi) {
            /* from the first valid column of the first row to the last of the last row: the
               reads stay inside the image, the pad columns between are overwritten below */
            float *r = row + (ilo - r0) * ow;
            const float *xr = x + (ci * h + ilo + hofs) * w + wofs;
            const int64_t end = (ihi - ilo) * ow - (ow - jhi);
            for (int64_t e = jlo; e < end; ++e) r[e] = xr[e];
            if (jlo > 0 || jhi < ow)
                for (int64_t oi = 0; oi < ihi - ilo; ++oi) {
                    float *ro = r + oi * ow;
                    for (int64_t oj = 0; oj < jlo; ++oj) ro[oj] = 0.0f;
                    for (int64_t oj = jhi; oj < ow; ++oj) ro[oj] = 0.0f;
                }
            continue;
        }
        for (int64_t oi = ilo; oi < ihi; ++oi) {
            float *r = row + (oi - r0) * ow;
            const float *xr = x + (ci * h + oi * sh + hofs) * w + wofs;
            for (int64_t oj = 0; oj < jlo; ++oj) r[oj] = 0.0f;     /* a pad's few columns */
            if (sw == 1)
                for (int64_t oj = jlo; oj < jhi; ++oj) r[oj] = xr[oj];
            else if (sw == 2)       /* a constant stride: the gather vectorises */
                for (int64_t oj = jlo; oj < jhi; ++oj) r[oj] = xr[2 * oj];
            else
                for (int64_t oj = jlo; oj < jhi; ++oj) r[oj] = xr[oj * sw];
            for (int64_t oj = jhi; oj < ow; ++oj) r[oj] = 0.0f;
        }
    }
}

/* The padded input block of output rows r0 .. r0+rn-1 (ge_pad): its rows and their floats
   (gen_conv._split sizes the workspace by the same rule) */
static int64_t ge_pad_rows(const int64_t *geo, int64_t rn)
{
    return (rn - 1) * geo[5] + (geo[3] - 1) * geo[7] + 1;
}

static int64_t ge_pad_width(const int64_t *geo)
{
    return (geo[11] - 1) * geo[6] + (geo[4] - 1) * geo[8] + 1;
}

/* The input that output rows r0 .. r0+rn-1 read, padded: per channel a plane of
   ge_pad_rows x ge_pad_width floats, zeros where the taps read outside the image, so that
   the prepared product packs each tap's run of pixels from it with no test (ge_pk_pack).
   About 1/(kh*kw) of im2col's bytes at stride 1, 4/(kh*kw) at stride 2. */
__attribute__((optimize("no-tree-loop-distribute-patterns")))
static void ge_pad(const float *restrict x, float *restrict xp, const int64_t *geo,
                   int64_t r0, int64_t rn)
{
    const int64_t cg = geo[0], h = geo[1], w = geo[2], sh = geo[5], pt = geo[9], pl = geo[10];
    const int64_t rows = ge_pad_rows(geo, rn), wp = ge_pad_width(geo);
    /* the padded columns pl .. pl+w-1 hold the input's, as far as wp reaches */
    const int64_t lo = pl < wp ? pl : wp, hi = pl + w < wp ? pl + w : wp;
    for (int64_t ci = 0; ci < cg; ++ci)
    for (int64_t i = 0; i < rows; ++i) {
        float *out = xp + (ci * rows + i) * wp;
        const int64_t hi_row = r0 * sh - pt + i;
        if (hi_row < 0 || hi_row >= h) {
            for (int64_t e = 0; e < wp; ++e) out[e] = 0.0f;
            continue;
        }
        const float *in = x + (ci * h + hi_row) * w - pl;
        for (int64_t e = 0; e < lo; ++e) out[e] = 0.0f;
        for (int64_t e = lo; e < hi; ++e) out[e] = in[e];
        for (int64_t e = hi; e < wp; ++e) out[e] = 0.0f;
    }
}

/* rows x cols of y (row stride ld): each row its bias value (before an sgemm with beta 1) */
static void ge_fill_rows(float *restrict y, const float *restrict bias, int64_t rows,
                         int64_t cols, int64_t ld)
{
    for (int64_t o = 0; o < rows; ++o) {
        const float b = bias[o];
        float *yo = y + o * ld;
        for (int64_t p = 0; p < cols; ++p) yo[p] = b;
    }
}

/* rows x cols of y (row stride ld): plus the residual (same layout; NULL: none), then relu
   when asked, in one pass */
static void ge_finish_rows(float *restrict y, const float *restrict res, int64_t rows,
                           int64_t cols, int64_t ld, int relu)
{
    for (int64_t o = 0; o < rows; ++o) {
        float *yo = y + o * ld;
        if (res) {
            const float *ro = res + o * ld;
            if (relu)
                for (int64_t e = 0; e < cols; ++e) {
                    const float v = yo[e] + ro[e];
                    yo[e] = v > 0.0f ? v : 0.0f;
                }
            else
                for (int64_t e = 0; e < cols; ++e) yo[e] += ro[e];
        } else if (relu) {
            for (int64_t e = 0; e < cols; ++e) yo[e] = yo[e] > 0.0f ? yo[e] : 0.0f;
        }
    }
}
"""

_DRIVER_C = r"""
/* The blocked convolution (gen_conv.py) from its plan p: job j of the model's threads (at most
   p[MOST], each its own im2col buffer of p[COL_FLOATS]) takes shares s0 .. s1-1 of the work:
   output rows (in blocks of p[PER], each block one im2col and one sgemm), or of a single
   block THREAD_CHANNELS channel groups or THREAD_COLUMNS columns (each job im2cols the whole
   block: sharing one im2col, made by all the jobs first, measured 2-5% slower with 2 threads,
   half of it being in the other core's cache).  Job -1 (one thread) is the whole, block by
   block, the same sgemm calls (and bits) as ever.  Bias before the product
   (beta 1), residual and relu after it while the block is in the cache, or the kernel's own
   epilogue (other fused activations) over the same rows. */
static void ge_conv_job(void *const *inputs, void *const *outputs, int64_t job)
{
    const int64_t *p = (const int64_t *)outputs[3];
    const ge_conv_epilogue epilogue = (ge_conv_epilogue)(size_t)outputs[4];
    const float *x = (const float *)inputs[0], *w = (const float *)inputs[@FILTER@];
    const float *bias = p[GE_CV_BIAS] ? (const float *)inputs[2] : 0;
    const float *res = p[GE_CV_RESIDUAL] ? (const float *)inputs[@RESIDUAL@] : 0;
    float *y = (float *)outputs[0];
    const int64_t jobs = (int64_t)(size_t)outputs[2], j = job < 0 ? 0 : job;
    const int64_t shares = p[GE_CV_SHARES], cog = p[GE_CV_COG], ck = p[GE_CV_CK];
    const int64_t ohw = p[GE_CV_OHW], unit = p[GE_CV_UNIT], per = p[GE_CV_PER];
    const int64_t s0 = job < 0 ? 0 : j * shares / jobs;
    const int64_t s1 = job < 0 ? shares : (j + 1) * shares / jobs;
    float *col = (float *)outputs[1] + j * (p[GE_CV_COL_FLOATS] + p[GE_CV_PACK_FLOATS]);
    const float *packed = (const float *)outputs[5];    /* the prepared filter, or NULL */
    const ge_conv_product product = (ge_conv_product)(size_t)outputs[6];
    /* a padded image's tap offsets in its plane (ge_pad) */
    const int64_t *geo = p + GE_CV_GEO, wp = ge_pad_width(geo);
    int64_t taps[@MOST_TAPS@];
    if (packed && p[GE_CV_PADDED])
        for (int64_t ki = 0; ki < geo[3]; ++ki)
            for (int64_t kj = 0; kj < geo[4]; ++kj)
                taps[ki * geo[4] + kj] = ki * geo[7] * wp + kj * geo[8];
    for (int64_t n = 0; n < p[GE_CV_N]; ++n)
    for (int64_t g = 0; g < p[GE_CV_GROUPS]; ++g) {
        const float *xg = x + (n * p[GE_CV_C] + g * p[GE_CV_CG]) * p[GE_CV_HW];
        int64_t r0 = 0, rn = p[GE_CV_UNITS], o0 = 0, on = cog, c0 = 0, cn = rn * unit;
        const int64_t last = p[GE_CV_MODE] == GE_CV_ROWS ? s1 : s0 + 1;
        for (int64_t s = s0; s < last; s += per) {
            if (p[GE_CV_MODE] == GE_CV_ROWS) {              /* rows s .. s+rn-1 */
                r0 = s;
                rn = s1 - s < per ? s1 - s : per;
                cn = rn * unit;
            } else if (p[GE_CV_MODE] == GE_CV_CHANNELS) {
                o0 = s0 * @CHANNELS@;
                on = (s1 == shares ? cog : s1 * @CHANNELS@) - o0;
            } else {
                c0 = s0 * @COLUMNS@;
                cn = (s1 == shares ? rn * unit : s1 * @COLUMNS@) - c0;
            }
            const int64_t pn = rn * unit;
            const int pad = packed && p[GE_CV_PADDED];
            if (pad)
                ge_pad(xg, col, geo, r0, rn);
            else if (!p[GE_CV_DIRECT])
                ge_im2col(xg, col, geo, r0, rn);
            float *yb = y + (n * p[GE_CV_CO] + g * cog + o0) * ohw + r0 * unit + c0;
            const float *rb = res ? res + (yb - y) : 0;
            if (packed) {
                const int64_t panels = (cog + 3) / 4;
                const struct ge_conv_b src = pad
                    ? (struct ge_conv_b){.xp = col, .hwp = ge_pad_rows(geo, rn) * wp,
                                         .row = geo[5] * wp, .step = geo[6], .ow = geo[11],
                                         .q0 = c0, .taps = geo[3] * geo[4], .tap = taps}
                    : (struct ge_conv_b){.b = p[GE_CV_DIRECT] ? xg + r0 + c0 : col + c0,
                                         .ldb = p[GE_CV_DIRECT] ? ohw : pn};
                product(on, cn, ck, packed + g * panels * 4 * ck, panels, o0 / 4, &src,
                        yb, ohw, bias ? bias + g * cog + o0 : 0, epilogue ? 0 : rb,
                        !epilogue && p[GE_CV_RELU], col + p[GE_CV_COL_FLOATS]);
                if (epilogue)
                    epilogue(yb, rb, on, cn, ohw);
                continue;
            }
            if (bias)
                ge_fill_rows(yb, bias + g * cog + o0, on, cn, ohw);
            @SGEMM@(CblasRowMajor, CblasNoTrans, CblasNoTrans, on, cn, ck, 1.0f,
                    w + (g * cog + o0) * ck, ck,
                    p[GE_CV_DIRECT] ? xg + r0 + c0 : col + c0, p[GE_CV_DIRECT] ? ohw : pn,
                    bias ? 1.0f : 0.0f, yb, ohw);
            if (epilogue)
                epilogue(yb, rb, on, cn, ohw);
            else if (rb || p[GE_CV_RELU])
                ge_finish_rows(yb, rb, on, cn, ohw, (int)p[GE_CV_RELU]);
        }
    }
}

/* A convolution kernel's whole body: its plan, its pointers, its own epilogue or none, its
   prepared filter and the product on it, or none */
__attribute__((visibility("hidden")))
void ge_support_conv(const int64_t *p, void *const *inputs, void *const *outputs,
                     void *workspace, ge_conv_epilogue epilogue, const void *state,
                     ge_conv_product product)
{
    const int64_t threads = @GET@();
    const int64_t jobs = threads < p[GE_CV_MOST] ? threads : p[GE_CV_MOST];
    void *outs[7] = {outputs[0], workspace, (void *)(size_t)jobs, (void *)p,
                     (void *)(size_t)epilogue, (void *)(product ? state : 0),
                     (void *)(size_t)product};
    ge_support_run_jobs(ge_conv_job, inputs, outs, jobs, 1);
}

#if @CONDITION@
#define GE_PREPARED 1
@STEP@

/* AVX2 and FMA, which the prepared product needs (conv_product.py), checked once */
static int ge_pk_usable(void)
{
    static int usable = -1;     /* -1: not checked yet (every thread finds the same answer) */
    int u = __atomic_load_n(&usable, __ATOMIC_RELAXED);
    if (u < 0) {
        __builtin_cpu_init();
        u = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
        __atomic_store_n(&usable, u, __ATOMIC_RELAXED);
    }
    return u;
}
#else
#define GE_PREPARED 0
#endif

/* The bytes of a convolution's prepared state, its packed filter; 0 where the product is the
   sgemm's (no AVX2 and FMA here, or no prepared product on this target) */
__attribute__((visibility("hidden")))
uint64_t ge_support_conv_state_bytes(const int64_t *p)
{
#if GE_PREPARED
    if (ge_pk_usable() && p[GE_CV_PACK_FLOATS])
        return (uint64_t)(p[GE_CV_GROUPS] * ((p[GE_CV_COG] + 3) / 4) * 4 * p[GE_CV_CK])
               * sizeof(float);
#endif
    (void)p;
    return 0;
}

/* the filter [groups * cog][ck] -> the packed filter at state.  Once per op, at
   load: not worth the vectoriser's 0.2 s of C compiler in every cold compile */
__attribute__((visibility("hidden"), optimize("no-tree-loop-vectorize")))
void ge_support_conv_prepare(const int64_t *p, void *const *inputs, void *state)
{
#if GE_PREPARED
    const float *w = (const float *)inputs[@FILTER@];
    const int64_t cog = p[GE_CV_COG], ck = p[GE_CV_CK], panels = (cog + 3) / 4;
    const int64_t step = ge_pk_step(ck, @PK_KC@);
    for (int64_t g = 0; g < p[GE_CV_GROUPS]; ++g)
    for (int64_t p0 = 0; p0 < ck; p0 += step) {
        const int64_t kc = ck - p0 < step ? ck - p0 : step;
        float *block = (float *)state + g * panels * 4 * ck + 4 * p0 * panels;
        for (int64_t q = 0; q < panels; ++q)
        for (int64_t k = 0; k < kc; ++k)
        for (int64_t r = 0; r < 4; ++r)
            block[(q * kc + k) * 4 + r] =
                q * 4 + r < cog ? w[(g * cog + q * 4 + r) * ck + p0 + k] : 0.0f;
    }
#else
    (void)p; (void)inputs; (void)state;
#endif
}
"""


def _conv_enums() -> list:
    fields = ", ".join(f"GE_CV_{f.upper()}" for f in CONV_PLAN)
    modes = ", ".join(f"GE_CV_{m.upper()}" for m in CONV_MODES)
    return [f"enum {{{fields}}};", f"enum {{{modes}}};"]


# the @NAME@ placeholders of the C text above (cgen.fill)
_VALUES = {"GET": _GET, "SET": _SET, "WORKERS": 63, "NAME": "ge-jobs",
           "SGEMM": blas.symbol("cblas_sgemm"), "RESIDUAL": RESIDUAL_SLOT, "FILTER": FILTER_SLOT,
           "CHANNELS": CONV_SHARE["channels"], "COLUMNS": CONV_SHARE["columns"],
           "CONDITION": conv_product.CONDITION, "STEP": conv_product.STEP_C,
           "PK_KC": conv_product.K_BLOCK, "MOST_TAPS": conv_product.MOST_TAPS}



# The object at -O2 (the kernels' -O3 stays in the keyed flags): ResNet-50 runs as fast with
# it (ABBA 0.99x / 1.01x, one / two threads: its loops move data, the product is the
# kernel's), and its compile, the longest of a cold compile, takes 0.37 s instead of 0.64.
SOURCE = "\n".join(
    ["/* ge kernel support object (ge/compiler/opcompile/support.py). Generated; do not edit. */",
     '#pragma GCC optimize ("O2")']
    + prelude(blas=True)    # with the BLAS's sgemm and thread-count declarations
    + [fill(_POOL_C, _VALUES), _CONV_C, CONV_DECLS] + _conv_enums()
    + [fill(_DRIVER_C, _VALUES)])
SOURCE_SHA256 = hashlib.sha256(SOURCE.encode("utf-8")).hexdigest()


def uses_support(c_source: str) -> bool:
    return MARKER in c_source
