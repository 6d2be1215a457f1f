"""Ctrl-C and SIGTERM during an ATC run (issue #10 §2): both end the run as the coded failure
EP0004, through the same unwinding as any error, so every `publish` removes its temporary and
the operator compiler waits for its running builds; then the failure line, status 255.

While `signals_raise()` is active, SIGINT and SIGTERM raise `Interrupted` (a KeyboardInterrupt,
so code that cleans up on KeyboardInterrupt does so for SIGTERM too) in the main thread.  The
previous handlers come back at exit.  Off the main thread (a test calling main_impl from a
worker) Python cannot install handlers, and nothing is changed.
"""
from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

__all__ = ["Interrupted", "signals_raise", "signal_name", "HANDLED"]

HANDLED = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def signal_name(exc: KeyboardInterrupt) -> str:
    """SIGINT for a plain KeyboardInterrupt (Python's own Ctrl-C handler)."""
    return signal.Signals(getattr(exc, "signum", signal.SIGINT)).name


def _raise(signum: int, _frame) -> None:
    raise Interrupted(signum)


@contextlib.contextmanager
def signals_raise() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, _raise) for signum in HANDLED}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            # None: a handler installed outside Python, which Python cannot put back
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)
