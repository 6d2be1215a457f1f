"""Test-only fault injection for crash-safety tests.

`GE_CACHE_FAULT=<step>` makes the process SIGKILL itself when it reaches that publish step
(PUBLISH_STEPS below), so tests can check that an interrupted publish never leaves a usable
corrupt entry or a partial file under a final name.  Unset in production; reading it costs one
dict lookup per step.
"""
from __future__ import annotations

import os
import signal

__all__ = ["PUBLISH_STEPS", "fault_point", "ENV"]

ENV = "GE_CACHE_FAULT"
PUBLISH_STEPS = (
    "tmpdir_created",     # temp entry directory exists, empty
    "binary_partial",     # half of the binary written to the temp directory
    "binary_written",     # binary complete, JSON not yet written
    "json_partial",       # half of the JSON written
    "before_commit",      # both files complete in the temp directory, not yet renamed
    "old_moved_aside",    # force: the previous entry renamed away, new one not yet in place
    "after_commit",       # entry renamed into place, temp leftovers not yet removed
)


def fault_point(step: str) -> None:
    if os.environ.get(ENV) == step:
        os.kill(os.getpid(), signal.SIGKILL)
