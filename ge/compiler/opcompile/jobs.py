"""Kernels that split their work over the model's threads themselves (docs/kernel-abi.md,
"Threads in kernels").

A kernel file defines `static void ge_job(void *const *inputs, void *const *outputs, int64_t
job)` and calls `ge_run_jobs(inputs, outputs, jobs)`, `jobs` a constant or sized at run time
by the model's thread count (`THREADS`).  With one thread that runs jobs -1 .. -serial
in order (a kernel's one-thread split, which may be coarser: a whole sgemm, not column blocks);
with N threads the calling thread and N-1 workers take jobs 0 .. jobs-1 in turn from a shared
ticket (generation << 32 | next job), and the caller waits until every job is done, not for
the workers: a worker the machine does not schedule leaves its jobs to the others (OpenBLAS's
own threads wait for each other inside every sgemm, and on a busy machine one descheduled
thread stalled the whole product).

The pool is in the support object (support.py), linked into every such kernel: each kernel
exports its pool (`ge_jobs_run`), and the loader (ge.kernel_abi) points the later kernels of a
model at the first one's (`ge_jobs_delegate`), so a model has N-1 workers, whatever its number
of threaded kernels.  The workers are started by the pool's first call, sleep on a condition
variable between calls and are joined by the library's destructor (dlclose, exit); a forked
child starts new ones; a second caller that finds the pool busy runs its jobs alone.  Against a
thread started per call this saved BERT-base about 4% with 2 threads (CPU time 5%); workers that
spin between kernels instead of sleeping gained nothing measurable here and cost CPU time.

N is the model's count (docs/runtime.md, "Threads"), the one the runtime gives OpenBLAS at the
start of each run, so these kernels link the BLAS to read it.  While the jobs run OpenBLAS is
set to one thread (each job's sgemm is one thread's work), and back to N after.
"""
from __future__ import annotations

from ge import blas

from .fastmath import WIDE
from .support import RUNNER_DECLS

__all__ = ["runner", "job_head", "over_rows", "THREADS"]

THREADS = f"{blas.symbol('openblas_get_num_threads')}()"  # C: the model's thread count (the
                                                         # BLAS prelude declares it)


def runner(serial: int = 1) -> list:
    """The C helpers of a kernel that splits its work: `ge_run_jobs(inputs, outputs, jobs)`
    (one thread: jobs -1 .. -serial in order); it still defines ge_job."""
    return [RUNNER_DECLS, JOB_SIGNATURE + ";",
            "static void ge_run_jobs(void *const *inputs, void *const *outputs, int64_t jobs)",
            f"{{ ge_support_run_jobs(ge_job, inputs, outputs, jobs, {serial}); }}"]


JOB_SIGNATURE = "static void ge_job(void *const *inputs, void *const *outputs, int64_t job)"


def job_head(decls: list, wide: bool = False) -> list:
    """The opening lines of a kernel's ge_job, with its pointer declarations `decls`; `wide`:
    also compiled for AVX2 (fastmath.WIDE, for the loops of the fast-math helpers)."""
    return [f"{WIDE} {JOB_SIGNATURE}" if wide else JOB_SIGNATURE, "{"] + [
        "    " + d for d in decls]


MIN_THREADED_ELEMENTS = 1 << 16     # below this a row kernel does not pay for starting threads
ROW_JOBS = 8                        # blocks of rows: a thread that starts late still gets work


def over_rows(rows: int, row_elements: int, decls: list, row_body: list,
              wide: bool = False) -> tuple:
    """(helpers, body, threaded) of a kernel running `row_body` (C lines over `r`, indented
    8 spaces) for r < rows, in blocks of rows when it is large enough to thread."""
    jobs = min(rows, ROW_JOBS) if rows * row_elements >= MIN_THREADED_ELEMENTS else 1
    job = job_head(decls, wide)
    job += ["    (void)inputs; (void)outputs;",
            f"    const int64_t lo = job < 0 ? 0 : job * {rows} / {jobs};",
            f"    const int64_t hi = job < 0 ? {rows} : (job + 1) * {rows} / {jobs};",
            "    for (int64_t r = lo; r < hi; ++r) {"] + row_body + ["    }", "}", ""]
    if jobs == 1:
        return job, ["    ge_job(inputs, outputs, -1);"], False
    return runner() + job, [f"    ge_run_jobs(inputs, outputs, {jobs});"], True
