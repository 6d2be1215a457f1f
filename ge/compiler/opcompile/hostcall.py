"""Load and call a kernel .so (the reference loader of docs/kernel-abi.md), through cffi in ABI
mode.  The runtime may use it as is; the opcompile tests do.

The loader verifies the sha256 recorded for the kernel before the bytes are ever mapped, writes
them to a private temporary file (0700 directory), dlopens that file with RTLD_NOW, checks the
ABI version symbol and calls `ge_kernel` with numpy buffers.
"""
from __future__ import annotations

import hashlib
import os
import tempfile

import numpy as np

from ge.errors import GeError
from ge.runtime import blas
from .cgen import ABI_VERSION, KERNEL_SYMBOL

__all__ = ["HostKernel", "load_kernel"]

_CDEF = f"""
int {KERNEL_SYMBOL}(void *const *inputs, void *const *outputs, void *workspace);
extern unsigned int ge_kernel_abi_version;   /* const in the kernel; cffi reads it */
extern char ge_kernel_signature[];
"""


class HostKernel:
    """A loaded kernel: call(inputs, output_arrays, workspace_bytes) -> int status."""

    def __init__(self, ffi, lib, path: str, tmpdir):
        self._ffi, self._lib, self.path, self._tmpdir = ffi, lib, path, tmpdir

    @property
    def signature(self) -> str:
        return self._ffi.string(self._lib.ge_kernel_signature).decode()

    def __call__(self, inputs, outputs, workspace_bytes: int = 0) -> int:
        ffi = self._ffi
        ins = [ffi.NULL if a is None else ffi.from_buffer(np.ascontiguousarray(a))
               for a in inputs]
        keep = list(inputs)  # keep the buffers alive through the call
        outs = [ffi.from_buffer(o) for o in outputs]
        ws = np.zeros(max(workspace_bytes, 1), dtype=np.uint8)
        in_arr = ffi.new("void *[]", [ffi.cast("void *", p) for p in ins] or [ffi.NULL])
        out_arr = ffi.new("void *[]", [ffi.cast("void *", p) for p in outs] or [ffi.NULL])
        rc = getattr(self._lib, KERNEL_SYMBOL)(in_arr, out_arr, ffi.from_buffer(ws))
        del keep
        return rc


def load_kernel(so_bytes: bytes, expected_sha256: str) -> HostKernel:
    """Verify then load: a kernel whose bytes do not hash to `expected_sha256` is refused."""
    import cffi
    actual = hashlib.sha256(so_bytes).hexdigest()
    if actual != expected_sha256:
        raise GeError("EP0112", {"expected": expected_sha256, "actual": actual},
                      f"Kernel binary integrity check failed: sha256 {actual} != recorded "
                      f"{expected_sha256}; refusing to load it.")
    tmpdir = tempfile.TemporaryDirectory(prefix="ge_hostkernel_")
    os.chmod(tmpdir.name, 0o700)
    path = os.path.join(tmpdir.name, "kernel.so")
    with open(path, "wb") as f:
        f.write(so_bytes)
    ffi = cffi.FFI()
    ffi.cdef(_CDEF)
    blas.configure(ffi)      # one thread and the CPU's core type, before libopenblas loads
    lib = ffi.dlopen(path, ffi.RTLD_NOW | ffi.RTLD_LOCAL)
    if lib.ge_kernel_abi_version != ABI_VERSION:
        raise GeError("EP0112", {"abi": int(lib.ge_kernel_abi_version)},
                      f"Kernel ABI version {int(lib.ge_kernel_abi_version)} is not {ABI_VERSION}.")
    return HostKernel(ffi, lib, path, tmpdir)
