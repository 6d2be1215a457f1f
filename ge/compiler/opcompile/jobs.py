"""Kernels that split their work over the model's threads themselves (docs/kernel-abi.md,
"Threads in kernels").

A kernel file defines `static void ge_job(void *const *inputs, void *const *outputs, int64_t
job)` and calls `ge_run_jobs(inputs, outputs)`.  With one thread that runs jobs -1 .. -serial
in order (a kernel's one-thread split, which may be coarser: a whole sgemm, not column blocks);
with N threads the calling thread and N-1 pthreads take jobs 0 .. jobs-1 in turn from a shared
counter.  A thread the machine does not schedule leaves its jobs to the others: OpenBLAS's own
threads wait for each other inside every sgemm, and on a busy machine one descheduled thread
stalled the whole product.

N is the model's count (docs/runtime.md, "Threads"), the one the runtime gives OpenBLAS at the
start of each run, so these kernels link the BLAS to read it (its thread functions are declared
by cgen's BLAS prelude).  The runner declares pthread_create / pthread_join (glibc's
pthread_t), so a kernel needs no header for them.  While the jobs run OpenBLAS is
set to one thread (each job's sgemm is one thread's work), and back to N after.
"""
from __future__ import annotations

from ge import blas

__all__ = ["MAX_THREADS", "runner", "over_rows"]

MAX_THREADS = 64
_GET = blas.symbol("openblas_get_num_threads")
_SET = blas.symbol("openblas_set_num_threads")

_RUNNER = f"""\
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
    return (void *)0;
}}
static void ge_run_jobs(void *const *inputs, void *const *outputs)
{{
    const int threads = {_GET}();
    ge_jobs_t jobs = {{inputs, outputs, 0}};
    if (threads <= 1 || GE_JOBS <= 1) {{
        for (int64_t job = 0; job < GE_SERIAL_JOBS; ++job)
            ge_job(inputs, outputs, -1 - job);
        return;
    }}
    ge_thread_t pool[{MAX_THREADS}];
    int started = 0;
    {_SET}(1);
    for (int t = 1; t < threads && t < {MAX_THREADS} && t < GE_JOBS; ++t)
        if (pthread_create(&pool[started], (void *)0, ge_take_jobs, &jobs) == 0)
            ++started;
    ge_take_jobs(&jobs);
    for (int t = 0; t < started; ++t)
        pthread_join(pool[t], (void **)0);
    {_SET}(threads);
}}
"""


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
