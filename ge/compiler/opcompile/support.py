"""The support object: C code that many kernels share, compiled once per compile process and
linked into each kernel that calls it (docs/kernel-abi.md, "The support object").

It holds the job pool of the kernels that split their work (jobs.py: matmuls, convolutions,
large softmaxes and layer norms), the convolutions' own product on a filter packed once
(`_PREPARED_C`, docs/kernel-abi.md "Prepared constants") and the whole blocked convolution
(gen_conv.py): its loops ran
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
from ge.ops.defs.conv import RESIDUAL_SLOT

from .cgen import prelude

__all__ = ["SOURCE", "SOURCE_SHA256", "MARKER", "CONV_DECLS", "CONV_PLAN", "CONV_MODES",
           "CONV_SHARE", "RUNNER_DECLS", "PREPARED_K_BLOCK", "PREPARED_PANEL", "PREPARED_COLUMNS",
           "uses_support"]

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
             "mode", "shares", "most", "col_floats", "pack_floats", "direct", "bias", "residual",
             "relu", "geo")         # geo: the 12 values of ge_im2col's geometry, last
CONV_MODES = ("rows", "channels", "columns")    # GE_CV_<MODE>, the plan's mode values
CONV_SHARE = {"channels": 16, "columns": 64}    # a share is this many channels / columns
CONV_DECLS = """\
typedef void (*ge_conv_epilogue)(float *, const float *, int64_t, int64_t, int64_t);
void ge_support_conv(const int64_t *, void *const *, void *const *, void *, ge_conv_epilogue,
                     const void *);
uint64_t ge_support_conv_state_bytes(const int64_t *);
void ge_support_conv_prepare(const int64_t *, void *const *, void *);"""
# the prepared product (_PREPARED_C): blocks of k, and of columns packed per job
PREPARED_K_BLOCK = 512
PREPARED_PANEL = 24                 # a packed panel's columns: its widest tile's 3 x 8
PREPARED_COLUMNS = 192              # a multiple of PREPARED_PANEL
PREPARED_CHANNELS = 4               # a panel of the packed filter: thread shares are multiples
assert CONV_SHARE["channels"] % PREPARED_CHANNELS == 0

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

_PREPARED_C = r"""
/* Prepared convolutions (docs/kernel-abi.md, "Prepared constants").  On x86-64 CPUs with AVX2
   and FMA, ge_support_conv_prepare packs a kernel's filter once — the runtime calls it at load
   when the filter is a constant — and the product runs on that copy instead of an sgemm that
   packs the filter again on every call (10 % of ResNet-50's time) and, with threads, in every
   job.  Filter layout: per group, per block of k (at most GE_PK_KC, their count fixed by k),
   panels of 4 output channels, each k's 4 values together, zero rows past the last channel.
   y = bias + filter x b, then + residual, relu, applied as each tile of y is stored: tiles of
   4 channels x 24 pixels in 12 registers, b packed 24 columns at a time in blocks of GE_PK_NC
   (the job's pack area of the workspace); a last panel of 1-4 columns is computed for several
   channel panels at once (independent sums).  Every value is its products summed in k order
   with FMA, block by block, so its bits do not depend on how rows and columns are split
   between threads or calls.  Other CPUs and compilers keep the sgemm path. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define GE_PREPARED 1
typedef float ge_v8 __attribute__((vector_size(32)));
typedef float ge_v4 __attribute__((vector_size(16)));
typedef int32_t ge_v8i __attribute__((vector_size(32)));
/* the same, loaded from any float's address (the workspace's and state's alignment is not
   the ABI's concern) */
typedef float ge_v8u __attribute__((vector_size(32), aligned(4)));
typedef float ge_v4u __attribute__((vector_size(16), aligned(4)));
enum { GE_PK_NR = @PK_NR@, GE_PK_KC = @PK_KC@, GE_PK_NC = @PK_NC@ };

struct ge_pk_out {
    float *y;
    int64_t ldy;
    const float *bias, *res;    /* per row / laid out like y; NULL: none */
    int first, last, relu;      /* the first / last block of k */
};

/* 8 columns of a row of y from their sums s (bias b, residual row rr or NULL) */
__attribute__((always_inline))
static inline void ge_pk_put8(ge_v8 s, float *y, const float *rr, float b,
                              const struct ge_pk_out *o)
{
    ge_v8 v = s;
    if (!o->first) {
        memcpy(&v, y, sizeof v);
        v += s;
    } else if (o->bias)
        v = s + (ge_v8){b, b, b, b, b, b, b, b};
    if (o->last) {
        if (rr) {
            ge_v8 r;
            memcpy(&r, rr, sizeof r);
            v += r;
        }
        if (o->relu)            /* v > 0 ? v : 0, a NaN too gives 0 (ge_finish_rows) */
            v = (ge_v8)((ge_v8i)v & (ge_v8i)(v > (ge_v8){0}));
    }
    memcpy(y, &v, sizeof v);
}

/* rows r0 .. r0+mr-1, columns j0 .. j0+nr-1 of y from a part tile's sums t */
__attribute__((always_inline))
static inline void ge_pk_part(float t[4][GE_PK_NR], int64_t r0, int64_t mr, int64_t j0,
                              int64_t nr, const struct ge_pk_out *o)
{
    for (int64_t r = 0; r < mr; ++r) {
        float *y = o->y + (r0 + r) * o->ldy + j0;
        const float *rr = o->res ? o->res + (r0 + r) * o->ldy + j0 : 0;
        const float b = o->bias ? o->bias[r0 + r] : 0.0f;
        for (int64_t j = 0; j < nr; ++j) {
            float v = t[r][j];
            if (!o->first) v += y[j];
            else if (o->bias) v += b;
            if (o->last && rr) v += rr[j];
            if (o->last && o->relu) v = v > 0.0f ? v : 0.0f;
            y[j] = v;
        }
    }
}

typedef void (*ge_pk_tile_fn)(int64_t, const float *, int64_t, int64_t, const float *,
                              int64_t, int64_t, const struct ge_pk_out *);

/* a tile of 4 channels (filter panel a) x NV*8 columns (b panel bp) */
#define GE_PK_TILE(NAME, NV) \
__attribute__((target("avx2,fma"))) \
static void NAME(int64_t kc, const float *a, int64_t r0, int64_t mr, const float *bp, \
                 int64_t j0, int64_t nr, const struct ge_pk_out *o) \
{ \
    ge_v8 acc[4][NV]; \
    for (int r = 0; r < 4; ++r) \
        for (int v = 0; v < NV; ++v) acc[r][v] = (ge_v8){0}; \
    for (int64_t k = 0; k < kc; ++k) { \
        ge_v8 b[NV]; \
        for (int v = 0; v < NV; ++v) b[v] = *(const ge_v8u *)(bp + GE_PK_NR * k + 8 * v); \
        for (int r = 0; r < 4; ++r) { \
            const float s = a[4 * k + r]; \
            const ge_v8 w = {s, s, s, s, s, s, s, s}; \
            for (int v = 0; v < NV; ++v) \
                acc[r][v] = __builtin_ia32_vfmaddps256(w, b[v], acc[r][v]); \
        } \
    } \
    if (mr == 4 && nr == 8 * NV) { \
        for (int r = 0; r < 4; ++r) { \
            float *y = o->y + (r0 + r) * o->ldy + j0; \
            const float *rr = o->res ? o->res + (r0 + r) * o->ldy + j0 : 0; \
            const float b = o->bias ? o->bias[r0 + r] : 0.0f; \
            for (int v = 0; v < NV; ++v) \
                ge_pk_put8(acc[r][v], y + 8 * v, rr ? rr + 8 * v : 0, b, o); \
        } \
        return; \
    } \
    float t[4][GE_PK_NR]; \
    for (int r = 0; r < 4; ++r) memcpy(t[r], acc[r], sizeof acc[r]); \
    ge_pk_part(t, r0, mr, j0, nr, o); \
}
GE_PK_TILE(ge_pk_tile24, 3)
GE_PK_TILE(ge_pk_tile16, 2)
GE_PK_TILE(ge_pk_tile8, 1)

/* NC (1, 2 or 4) last columns for NP filter panels (4*NP rows) at once: each panel's 4 rows
   one 4-lane vector, NP*NC independent sums */
#define GE_PK_COLUMNS(NAME, NC, NP) \
__attribute__((target("avx2,fma"))) \
static void NAME(int64_t kc, const float *a, int64_t r0, int64_t mr, const float *bp, \
                 int64_t j0, int64_t nr, const struct ge_pk_out *o) \
{ \
    ge_v4 acc[NP][NC]; \
    for (int q = 0; q < NP; ++q) \
        for (int j = 0; j < NC; ++j) acc[q][j] = (ge_v4){0}; \
    for (int64_t k = 0; k < kc; ++k) \
        for (int j = 0; j < NC; ++j) { \
            const float s = bp[GE_PK_NR * k + j]; \
            const ge_v4 b = {s, s, s, s}; \
            for (int q = 0; q < NP; ++q) \
                acc[q][j] = __builtin_ia32_vfmaddps(*(const ge_v4u *)(a + 4 * (q * kc + k)), \
                                                    b, acc[q][j]); \
        } \
    for (int q = 0; q < NP; ++q) { \
        float t[4][GE_PK_NR]; \
        for (int r = 0; r < 4; ++r) \
            for (int j = 0; j < NC; ++j) t[r][j] = acc[q][j][r]; \
        ge_pk_part(t, r0 + 4 * q, mr - 4 * q < 4 ? mr - 4 * q : 4, j0, nr, o); \
    } \
}
GE_PK_COLUMNS(ge_pk_cols1, 1, 1)
GE_PK_COLUMNS(ge_pk_cols2, 2, 1)
GE_PK_COLUMNS(ge_pk_cols4, 4, 1)
GE_PK_COLUMNS(ge_pk_strip1, 1, 4)
GE_PK_COLUMNS(ge_pk_strip2, 2, 4)
GE_PK_COLUMNS(ge_pk_strip4, 4, 2)

static ge_pk_tile_fn ge_pk_tile_for(int64_t nr)
{
    return nr > 16 ? ge_pk_tile24 : nr > 8 ? ge_pk_tile16 : nr > 4 ? ge_pk_tile8
           : nr > 2 ? ge_pk_cols4 : nr > 1 ? ge_pk_cols2 : ge_pk_cols1;
}

/* rows 0 .. kc-1, columns 0 .. nr-1 of b (ldb apart) -> bp[kc][24], zeros past nr */
__attribute__((target("avx2,fma")))
static void ge_pk_pack_b(const float *b, int64_t ldb, int64_t kc, int64_t nr,
                         float *restrict bp)
{
    for (int64_t k = 0; k < kc; ++k) {
        const float *row = b + k * ldb;
        float *out = bp + GE_PK_NR * k;
        int64_t j = 0;
        if (nr == GE_PK_NR) {
            memcpy(out, row, GE_PK_NR * sizeof(float));
            continue;
        }
        for (; j < nr; ++j) out[j] = row[j];
        for (; j < GE_PK_NR; ++j) out[j] = 0.0f;
    }
}

/* the blocks of k: their size (the same for every split of the work) */
static int64_t ge_pk_step(int64_t k)
{
    const int64_t blocks = (k + GE_PK_KC - 1) / GE_PK_KC;
    return (k + blocks - 1) / blocks;
}

/* y[m][n] (ldy) = bias + filter x b[k][n] (ldb), + res, relu.  filter: one group's packed
   filter (`panels` panels), its rows from panel q0; bb: the job's pack area */
__attribute__((target("avx2,fma")))
static void ge_pk_product(int64_t m, int64_t n, int64_t k, const float *filter,
                          int64_t panels, int64_t q0, const float *b, int64_t ldb, float *y,
                          int64_t ldy, const float *bias, const float *res, int relu,
                          float *bb)
{
    const int64_t step = ge_pk_step(k);
    for (int64_t p0 = 0; p0 < k; p0 += step) {
        const int64_t kc = k - p0 < step ? k - p0 : step;
        const struct ge_pk_out o = {y, ldy, bias, res, p0 == 0, p0 + kc >= k, relu};
        const float *block = filter + 4 * p0 * panels;
        for (int64_t c0 = 0; c0 < n; c0 += GE_PK_NC) {
            const int64_t nc = n - c0 < GE_PK_NC ? n - c0 : GE_PK_NC;
            for (int64_t j0 = 0; j0 < nc; j0 += GE_PK_NR)
                ge_pk_pack_b(b + p0 * ldb + c0 + j0, ldb, kc,
                             nc - j0 < GE_PK_NR ? nc - j0 : GE_PK_NR, bb + j0 * kc);
            /* the last panel of 1-4 columns: 4 filter panels (2 for 3-4 columns) at a time,
               right after their other panels (their filter rows still in the cache) */
            const int64_t tail = nc % GE_PK_NR <= 4 ? nc % GE_PK_NR : 0;
            const int64_t rows = tail <= 2 ? 16 : 8, strip = tail ? m / rows * rows : 0;
            const ge_pk_tile_fn strip_fn = tail == 1 ? ge_pk_strip1
                                           : tail == 2 ? ge_pk_strip2 : ge_pk_strip4;
            for (int64_t i = 0; i < m; i += 4) {
                const float *a = block + 4 * (q0 + i / 4) * kc;
                const int64_t mr = m - i < 4 ? m - i : 4, end = i < strip ? nc - tail : nc;
                for (int64_t j0 = 0; j0 < end; j0 += GE_PK_NR) {
                    const int64_t nr = end - j0 < GE_PK_NR ? end - j0 : GE_PK_NR;
                    ge_pk_tile_for(nr)(kc, a, i, mr, bb + j0 * kc, c0 + j0, nr, &o);
                }
                if (i < strip && (i + 4) % rows == 0)
                    strip_fn(kc, a - 4 * (rows / 4 - 1) * kc, i + 4 - rows, rows,
                             bb + (nc - tail) * kc, c0 + nc - tail, tail, &o);
            }
        }
    }
}

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
    const float *x = (const float *)inputs[0], *w = (const float *)inputs[1];
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
            if (!p[GE_CV_DIRECT])
                ge_im2col(xg, col, p + GE_CV_GEO, r0, rn);
            float *yb = y + (n * p[GE_CV_CO] + g * cog + o0) * ohw + r0 * unit + c0;
            const float *rb = res ? res + (yb - y) : 0;
#if GE_PREPARED
            if (packed) {
                const int64_t panels = (cog + 3) / 4;
                ge_pk_product(on, cn, ck, packed + g * panels * 4 * ck, panels, o0 / 4,
                              p[GE_CV_DIRECT] ? xg + r0 + c0 : col + c0,
                              p[GE_CV_DIRECT] ? ohw : pn, yb, ohw,
                              bias ? bias + g * cog + o0 : 0, epilogue ? 0 : rb,
                              !epilogue && p[GE_CV_RELU], col + p[GE_CV_COL_FLOATS]);
                if (epilogue)
                    epilogue(yb, rb, on, cn, ohw);
                continue;
            }
#endif
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
   prepared filter or none */
__attribute__((visibility("hidden")))
void ge_support_conv(const int64_t *p, void *const *inputs, void *const *outputs,
                     void *workspace, ge_conv_epilogue epilogue, const void *state)
{
    const int64_t threads = @GET@();
    const int64_t jobs = threads < p[GE_CV_MOST] ? threads : p[GE_CV_MOST];
    void *outs[6] = {outputs[0], workspace, (void *)(size_t)jobs, (void *)p,
                     (void *)(size_t)epilogue, (void *)state};
    ge_support_run_jobs(ge_conv_job, inputs, outs, jobs, 1);
}

/* The bytes of a convolution's prepared state, its packed filter (_PREPARED_C); 0 where the
   product is the sgemm's */
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

/* inputs[1], the filter [groups * cog][ck], -> the packed filter at state */
__attribute__((visibility("hidden")))
void ge_support_conv_prepare(const int64_t *p, void *const *inputs, void *state)
{
#if GE_PREPARED
    const float *w = (const float *)inputs[1];
    const int64_t cog = p[GE_CV_COG], ck = p[GE_CV_CK], panels = (cog + 3) / 4;
    const int64_t step = ge_pk_step(ck);
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


# the @NAME@ placeholders of the C text above (C's braces rule out str.format)
_VALUES = {"GET": _GET, "SET": _SET, "WORKERS": 63, "NAME": "ge-jobs",
           "PK_KC": PREPARED_K_BLOCK, "PK_NC": PREPARED_COLUMNS, "PK_NR": PREPARED_PANEL,
           "SGEMM": blas.symbol("cblas_sgemm"), "RESIDUAL": RESIDUAL_SLOT,
           "CHANNELS": CONV_SHARE["channels"], "COLUMNS": CONV_SHARE["columns"]}


def _filled(text: str) -> str:
    for name, value in _VALUES.items():
        text = text.replace(f"@{name}@", str(value))
    return text


SOURCE = "\n".join(
    ["/* ge kernel support object (ge/compiler/opcompile/support.py). Generated; do not edit. */"]
    + prelude(blas=True)    # with the BLAS's sgemm and thread-count declarations
    + [_filled(_POOL_C), _CONV_C, _filled(_PREPARED_C), CONV_DECLS] + _conv_enums() + [_filled(_DRIVER_C)])
SOURCE_SHA256 = hashlib.sha256(SOURCE.encode("utf-8")).hexdigest()


def uses_support(c_source: str) -> bool:
    return MARKER in c_source
