"""Call one kernel .so with numpy buffers: what the opcompile tests run every kernel through.

Loading is the one verified loader of ge.kernel_abi (sha256 before the bytes are mapped, ABI
version after); this module only marshals numpy arrays into the ABI's pointer arrays.
"""
from __future__ import annotations

import numpy as np

from ge.kernel_abi import KERNEL_SYMBOL, SIGNATURE_SYMBOL, KernelLoader

__all__ = ["HostKernel", "load_kernel"]


class HostKernel:
    """A loaded kernel: call(inputs, output_arrays, workspace_bytes) -> int status."""

    def __init__(self, loader: KernelLoader, lib):
        self._loader, self._lib = loader, lib

    @property
    def signature(self) -> str:
        return self._loader.ffi.string(getattr(self._lib, SIGNATURE_SYMBOL)).decode()

    def __call__(self, inputs, outputs, workspace_bytes: int = 0) -> int:
        ffi = self._loader.ffi
        keep = [None if a is None else np.ascontiguousarray(a) for a in inputs]
        ins = [ffi.NULL if a is None else ffi.from_buffer(a) for a in keep]
        outs = [ffi.from_buffer(o) for o in outputs]
        ws = np.zeros(max(workspace_bytes, 1), dtype=np.uint8)
        in_arr = ffi.new("void *[]", [ffi.cast("void *", p) for p in ins] or [ffi.NULL])
        out_arr = ffi.new("void *[]", [ffi.cast("void *", p) for p in outs] or [ffi.NULL])
        return getattr(self._lib, KERNEL_SYMBOL)(in_arr, out_arr, ffi.from_buffer(ws))


def load_kernel(so_bytes: bytes, expected_sha256: str, name: str = "kernel") -> HostKernel:
    """Verify then load: a kernel whose bytes do not hash to `expected_sha256` is refused."""
    loader = KernelLoader()
    return HostKernel(loader, loader.load(name, so_bytes, expected_sha256))
