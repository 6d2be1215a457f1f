"""The coded errors of the host runtime (docs/runtime.md, "Error codes").

Every failure a user can cause (a bad file, a bad input, an OM for another host, an op the
runtime cannot execute) is a `ge.errors.GeError` with one of these codes and the parameters of
its template in ge/atc/codes.py; the command lines render it and exit with 255.
"""
from __future__ import annotations

__all__ = ["INVALID_OM", "FILE_OPEN", "TARGET_MISMATCH", "KERNEL_LOAD", "UNSUPPORTED_OP",
           "BAD_INPUT", "BAD_PLAN", "EXEC_FAILED", "KERNEL_MISMATCH"]

INVALID_OM = "E10041"        # the OM file is not valid (ge.om reader's code)
FILE_OPEN = "E13001"         # an input/model file cannot be opened or read
KERNEL_LOAD = "EP0112"       # kernel integrity (sha256) or ABI check failed
TARGET_MISMATCH = "EP0401"   # the OM was built for another host OS/CPU (or for no host)
UNSUPPORTED_OP = "EP0402"    # an op the runtime cannot execute (no kernel, no reference)
BAD_INPUT = "EP0403"         # wrong input count, shape, dtype or size
BAD_PLAN = "EP0404"          # memory plan inconsistent: address outside its space, too large
EXEC_FAILED = "EP0405"       # a kernel returned an error status or a reference kernel failed
KERNEL_MISMATCH = "EP0406"   # an op's plan differs from its kernel's signature or workspace
