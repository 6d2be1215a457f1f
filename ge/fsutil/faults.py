"""Test-only fault points: named moments of a run at which a test stops the process.

Disarmed unless the process starts with `GE_TEST_FAULT=<point>:<action>` (read once, at
import); a disarmed `fault_point()` is one comparison.  Actions:

  kill   the process SIGKILLs itself there: what a crash or power cut leaves on disk.
  wait   the process announces `<point> <pid>\\n` on the FIFO named by `GE_TEST_FAULT_FIFO`
         (the test created it and holds it open for reading), then waits for a signal; the
         signal's handler ends the run from exactly that moment (terminal tests: Ctrl-C or
         SIGTERM while the operator compiler runs, while the OM is written, ...).

A `wait` point refuses to run without that FIFO and off the main thread (Python delivers
signals to the main thread only), and gives up after WAIT_SECONDS, so a test that never sends
its signal fails instead of hanging.  POINTS is the one list of points; each is reached at one
place, named in its description.
"""
from __future__ import annotations

import os
import select
import signal
import stat
import threading
import time
from typing import Optional

__all__ = ["POINTS", "CACHE_PUBLISH_POINTS", "ENV", "FIFO_ENV", "ACTIONS", "WAIT_SECONDS",
           "FaultPointError", "fault_point", "armed"]

ENV = "GE_TEST_FAULT"
FIFO_ENV = "GE_TEST_FAULT_FIFO"
ACTIONS = ("kill", "wait")
WAIT_SECONDS = 60.0

POINTS = {
    # ge.atc main flow
    "atc.compile_start": "options checked, the compile of the model is about to start",
    # ge.compiler.opcompile.compile_ops (main thread, other cc jobs still running)
    "kernels.half": "half of the kernels to build are compiled",
    # ge.compiler.cache.store.publish, in order
    "cache.tmpdir_created": "temp entry directory exists, empty",
    "cache.binary_partial": "half of the binary written to the temp directory",
    "cache.binary_written": "binary complete, JSON not yet written",
    "cache.json_partial": "half of the JSON written",
    "cache.before_commit": "both files complete in the temp directory, not yet renamed",
    "cache.old_moved_aside": "force: the previous entry renamed away, new one not yet in place",
    "cache.after_commit": "entry renamed into place, temp leftovers not yet removed",
    # ge.om.writer.write_om (through ge.fsutil.publish)
    "om.partial": "half of the OM written to its temporary file",
    "om.written": "the OM complete in its temporary file, not yet renamed",
}
CACHE_PUBLISH_POINTS = tuple(p for p in POINTS if p.startswith("cache."))


class FaultPointError(RuntimeError):
    """A fault point armed in a way it cannot work (a test bug, never a user error)."""


def _plan(environ) -> Optional[tuple]:
    """(point, action), or None: an unknown point or action arms nothing (the tests that arm a
    point check that it was reached: a SIGKILL status, an announcement on the FIFO)."""
    point, _, action = environ.get(ENV, "").partition(":")
    return (point, action) if point in POINTS and action in ACTIONS else None


_PLAN = _plan(os.environ)


def armed(point: str) -> bool:
    return _PLAN is not None and _PLAN[0] == point


def fault_point(point: str) -> None:
    """Test-only: act as GE_TEST_FAULT says when the run reaches `point`; else nothing."""
    if _PLAN is None or _PLAN[0] != point:
        return
    if _PLAN[1] == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    _announce_and_wait(point)


def _announce_and_wait(point: str) -> None:
    if threading.current_thread() is not threading.main_thread():
        raise FaultPointError(f"wait point {point} reached off the main thread")
    fifo = os.environ.get(FIFO_ENV, "")
    try:
        is_fifo = stat.S_ISFIFO(os.stat(fifo).st_mode)
    except OSError:
        is_fifo = False
    if not is_fifo:
        raise FaultPointError(f"wait point {point}: {FIFO_ENV}={fifo!r} is not a FIFO")
    # The kernel may hand the signal to any thread (a cc job's, say); the wakeup fd is written
    # whichever it is, and each pass of the loop lets the handler run here, in the main thread.
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    previous = signal.set_wakeup_fd(wake_w)
    try:
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)   # ENXIO if the test is not listening
        try:
            os.write(fd, f"{point} {os.getpid()}\n".encode())
        finally:
            os.close(fd)
        deadline = time.monotonic() + WAIT_SECONDS
        while time.monotonic() < deadline:              # a handler that raises ends the wait
            ready, _, _ = select.select([wake_r], [], [], max(0.0, deadline - time.monotonic()))
            if ready:
                os.read(wake_r, 512)
    finally:
        signal.set_wakeup_fd(previous)
        os.close(wake_r)
        os.close(wake_w)
    raise FaultPointError(f"wait point {point}: no signal within {WAIT_SECONDS:.0f} s")
