"""Generates ge/pyatc/_wrapper_ffi.py, cffi's out-of-line ABI-mode module for the one C entry.

    python -m ge.pyatc._ffi_build

The generated module needs no C parser at run time (pycparser costs ~25 ms of every pyatc
start). It is checked in; tests/install/test_install_pyatc_errors.py checks it is current.
"""
from __future__ import annotations

import os
import sys

CDEF = "int GeApiWrapper_Atc_Main(int argc, const char *const *argv);"
MODULE = "ge.pyatc._wrapper_ffi"
TARGET = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_wrapper_ffi.py")


def render() -> str:
    import tempfile

    import cffi

    builder = cffi.FFI()
    builder.cdef(CDEF)
    builder.set_source(MODULE, None)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "out.py")
        builder.emit_python_code(path)
        with open(path) as f:
            return f.read()


if __name__ == "__main__":
    with open(TARGET, "w") as f:
        f.write(render())
    sys.stdout.write(f"wrote {TARGET}\n")
