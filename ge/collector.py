"""`paused()`: CPython's cyclic collector off for a block, restored after.

A compile (and each pass stage within it) allocates many small objects that live as long as
the graph; the collector would rescan that growing heap again and again (~130 times, 0.1-0.2 s
of a ResNet-50 compile; superlinear on big graphs) to find almost nothing.  The few cycles
dropped meanwhile are collected once the block ends.  Nesting is fine: only the outermost
block that found it enabled enables it again.
"""
from __future__ import annotations

import contextlib
import gc

__all__ = ["paused"]


@contextlib.contextmanager
def paused():
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
