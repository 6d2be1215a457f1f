"""Kernels that split their work over the model's threads themselves (docs/kernel-abi.md,
"Threads in kernels").

A kernel file defines `static void ge_job(void *const *inputs, void *const *outputs, int64_t
job)` and calls `ge_run_jobs(inputs, outputs)`.  With one thread that runs jobs -1 .. -serial
in order (a kernel's one-thread split, which may be coarser: a whole sgemm, not column blocks);
with N threads the calling thread and N-1 workers take jobs 0 .. jobs-1 in turn from a shared
ticket (generation << 32 | next job), and the caller waits until every job is done, not for
the workers: a worker the machine does not schedule leaves its jobs to the others (OpenBLAS's
own threads wait for each other inside every sgemm, and on a busy machine one descheduled
thread stalled the whole product).

The jobs run on a pool: every such kernel carries one (`ge_jobs_run`), and the loader
(ge.kernel_abi) points the later kernels of a model at the first one's (`ge_jobs_delegate`), so
a model has N-1 workers, whatever its number of threaded kernels.  The workers are started by
the pool's first call, sleep on a condition variable between calls and are joined by the
library's destructor (dlclose, exit); a forked child starts new ones; a second caller that
finds the pool busy runs its jobs alone.  Against a thread started per call this saved BERT-base
about 4% with 2 threads (CPU time 5%); workers that spin between kernels instead of sleeping
gained nothing measurable here and cost CPU time.

N is the model's count (docs/runtime.md, "Threads"), the one the runtime gives OpenBLAS at the
start of each run, so these kernels link the BLAS to read it (its thread functions are declared
by cgen's BLAS prelude).  The runner declares what it uses of pthreads (glibc's pthread_t; a
zeroed mutex or condition variable is an initialised one), so a kernel needs no header.  While
the jobs run OpenBLAS is set to one thread (each job's sgemm is one thread's work), and back to
N after.
"""
from __future__ import annotations

from ge import blas

__all__ = ["MAX_THREADS", "runner", "over_rows"]

MAX_THREADS = 64
_GET = blas.symbol("openblas_get_num_threads")
_SET = blas.symbol("openblas_set_num_threads")
WORKER_NAME = "ge-jobs"     # what `top -H` and /proc/<pid>/task/*/comm show

_TEMPLATE_C = """\
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
static void ge_job(void *const *inputs, void *const *outputs, int64_t job);
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

static void *ge_worker(void *arg)
{
    const int index = (int)(long)arg;
    uint64_t seen = ge_pool.base;   /* the generation before the one that started it */
    for (;;) {
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

static void ge_run_jobs(void *const *inputs, void *const *outputs)
{
    if (GE_JOBS <= 1 || @GET@() <= 1) {
        for (int64_t job = 0; job < GE_SERIAL_JOBS; ++job)
            ge_job(inputs, outputs, -1 - job);
        return;
    }
    (ge_jobs_delegate ? ge_jobs_delegate : ge_jobs_run)(ge_job, inputs, outputs, GE_JOBS);
}
"""
_RUNNER = (_TEMPLATE_C.replace("@GET@", _GET).replace("@SET@", _SET)
           .replace("@WORKERS@", str(MAX_THREADS - 1)).replace("@NAME@", WORKER_NAME))


def runner(jobs: int, serial: int) -> list:
    """The C helpers of a kernel with `jobs` parallel jobs (1: never threaded) and `serial`
    one-thread jobs; it still defines ge_job."""
    return [f"#define GE_JOBS {jobs}", f"#define GE_SERIAL_JOBS {serial}", _RUNNER]


MIN_THREADED_ELEMENTS = 1 << 16     # below this a row kernel does not pay for starting threads
ROW_JOBS = 8                        # blocks of rows: a thread that starts late still gets work


def over_rows(rows: int, row_elements: int, decls: list, row_body: list) -> tuple:
    """(helpers, body, threaded) of a kernel running `row_body` (C lines over `r`, indented
    8 spaces) for r < rows, in blocks of rows when it is large enough to thread."""
    jobs = min(rows, ROW_JOBS) if rows * row_elements >= MIN_THREADED_ELEMENTS else 1
    job = ["static void ge_job(void *const *inputs, void *const *outputs, int64_t job)", "{"]
    job += ["    " + d for d in decls]
    job += ["    (void)inputs; (void)outputs;",
            f"    const int64_t lo = job < 0 ? 0 : job * {rows} / {jobs};",
            f"    const int64_t hi = job < 0 ? {rows} : (job + 1) * {rows} / {jobs};",
            "    for (int64_t r = lo; r < hi; ++r) {"] + row_body + ["    }", "}", ""]
    if jobs == 1:
        return job, ["    ge_job(inputs, outputs, -1);"], False
    return runner(jobs, 1) + job, ["    ge_run_jobs(inputs, outputs);"], True
