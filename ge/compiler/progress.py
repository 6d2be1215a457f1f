"""Progress of long compile work, for whoever shows it (ge.atc: a `kernels 12/47` line on a
terminal).  The compiler never prints: it calls `report(what, done, total)`, which does nothing
unless an entry point installed a listener around the run with `listening(fn)`.

The listener is a ContextVar, so two compiles in one process (threads of a user program calling
ge.offline_compile) do not see each other's progress; reports come from the thread that runs the
compile (workers hand their results back to it first).
"""
from __future__ import annotations

import contextlib
from contextvars import ContextVar
from typing import Callable, Iterator, Optional

__all__ = ["Listener", "report", "listening"]

Listener = Callable[[str, int, int], None]          # (what, done, total)
_listener: ContextVar[Optional[Listener]] = ContextVar("ge_compile_progress", default=None)


def report(what: str, done: int, total: int) -> None:
    listener = _listener.get()
    if listener is not None:
        listener(what, done, total)


@contextlib.contextmanager
def listening(listener: Listener) -> Iterator[None]:
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)
