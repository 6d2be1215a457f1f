"""A time limit for each pass: a pass that sleeps or loops forever fails the compile naming it.

The limit is the GE option `ge.py_pass_timeout`, else the environment variable
`ASCEND_GE_PY_PASS_TIMEOUT`, in seconds (default 600; 0 = no limit).  It is enforced with
SIGALRM, so it holds in the thread that owns signals (the main thread: every command-line
compile); a compile that `ge.offline_compile` runs in another thread has no limit.  A pass stuck
inside one C call (a huge numpy operation) is stopped when that call returns.
"""
from __future__ import annotations

import contextlib
import math
import os
import signal
import threading
from collections.abc import Iterator, Mapping

from ge.errors import warn

__all__ = ["TIMEOUT_ENV", "TIMEOUT_OPTION", "DEFAULT_SECONDS", "PassTimeout", "pass_timeout",
           "deadline"]

TIMEOUT_ENV = "ASCEND_GE_PY_PASS_TIMEOUT"
TIMEOUT_OPTION = "ge.py_pass_timeout"
DEFAULT_SECONDS = 600.0


class PassTimeout(BaseException):
    """Raised in the pass when its time is up (a BaseException: a pass's `except Exception`
    does not swallow it)."""


def _parse(raw: str):
    try:
        value = float(raw)
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None


def pass_timeout(options: Mapping[str, str], environ: Mapping[str, str] = None) -> float:
    """Seconds each pass may take (0 = unlimited); an invalid setting warns (WP0111)."""
    environ = os.environ if environ is None else environ
    for source, raw in ((TIMEOUT_OPTION, options.get(TIMEOUT_OPTION)),
                        (TIMEOUT_ENV, environ.get(TIMEOUT_ENV))):
        if raw is None or str(raw).strip() == "":
            continue
        value = _parse(str(raw).strip())
        if value is not None:
            return value
        warn("WP0111", {"source": source, "value": raw, "allowed": "seconds, 0 or more",
                        "fallback": f"the default {DEFAULT_SECONDS:g} s is used"})
        break
    return DEFAULT_SECONDS


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Raise PassTimeout in this thread once `seconds` have passed inside the block."""
    if seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum, frame):
        raise PassTimeout(f"the pass did not finish within {seconds:g} s ({TIMEOUT_ENV})")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
