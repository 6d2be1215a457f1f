"""Compiled kernels of an OM (TBE_KERNELS partition) loaded into this process.

Per docs/kernel-abi.md: each item is a host shared object exporting
`int ge_kernel(void *const *inputs, void *const *outputs, void *workspace)` and
`ge_kernel_abi_version`.  The bytes are hashed and compared with the op's `_kernel_sha256`
attribute *before* they touch the disk; they are then written to a private (0700) temporary
directory owned by the loaded model, opened with cffi in ABI mode (RTLD_NOW | RTLD_LOCAL) and
the ABI version is checked.  Nothing here knows an op.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import tempfile

from . import blas
from ._errors import KERNEL_LOAD, error

__all__ = ["ABI_VERSION", "KERNEL_SYMBOL", "KernelLibrary"]

ABI_VERSION = 1
KERNEL_SYMBOL = "ge_kernel"
_CDEF = f"""
int {KERNEL_SYMBOL}(void *const *inputs, void *const *outputs, void *workspace);
extern unsigned int ge_kernel_abi_version;   /* const in C; cffi reads it as a variable */
"""


class KernelLibrary:
    """The kernels one model uses: name -> cffi function, loaded once each."""

    def __init__(self, items: list):
        import cffi
        self.ffi = cffi.FFI()
        self.ffi.cdef(_CDEF)
        self._items = {}
        for name, data in items:
            self._items.setdefault(name, data)
        self._loaded: dict = {}
        self._libs: list = []
        self._tmpdir = None

    def has(self, name: str) -> bool:
        return name in self._items

    def function(self, name: str, sha256: str, op_name: str):
        """The entry point of kernel `name`, verified against `sha256` (hex)."""
        if name in self._loaded:
            fn, digest = self._loaded[name]
            if digest != sha256:
                raise error(KERNEL_LOAD, f"Op {op_name} records sha256 {sha256} for kernel "
                                         f"{name}, but another op records {digest}.",
                            kernel=name, opname=op_name)
            return fn
        data = self._items.get(name)
        if data is None:
            raise error(KERNEL_LOAD, f"Kernel {name} of op {op_name} is not in the "
                                     f"TBE_KERNELS partition.", kernel=name, opname=op_name)
        actual = hashlib.sha256(data).hexdigest()
        if not sha256 or actual != sha256.lower():
            raise error(KERNEL_LOAD, f"Kernel {name} of op {op_name} failed its integrity "
                                     f"check: sha256 {actual} != recorded {sha256 or '(none)'}; "
                                     f"refusing to load it.", kernel=name, opname=op_name)
        lib = self._open(name, data, op_name)
        fn = getattr(lib, KERNEL_SYMBOL)
        self._loaded[name] = (fn, sha256)
        return fn

    def _open(self, name: str, data: bytes, op_name: str):
        if self._tmpdir is None:
            blas.configure(self.ffi)    # before any kernel pulls in libopenblas
            self._tmpdir = tempfile.mkdtemp(prefix="ge_runtime_")
            os.chmod(self._tmpdir, 0o700)
        path = os.path.join(self._tmpdir, f"k{len(self._libs)}.so")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        try:
            lib = self.ffi.dlopen(path, self.ffi.RTLD_NOW | self.ffi.RTLD_LOCAL)
        except OSError as e:
            raise error(KERNEL_LOAD, f"Kernel {name} of op {op_name} cannot be loaded on this "
                                     f"host: {e}", kernel=name, opname=op_name) from None
        finally:
            os.unlink(path)  # the mapping stays valid; nothing is left on disk
        try:
            version = int(lib.ge_kernel_abi_version)
            getattr(lib, KERNEL_SYMBOL)
        except (AttributeError, OSError, NotImplementedError) as e:
            raise error(KERNEL_LOAD, f"Kernel {name} of op {op_name} does not export the "
                                     f"kernel ABI symbols: {e}", kernel=name,
                        opname=op_name) from None
        if version != ABI_VERSION:
            raise error(KERNEL_LOAD, f"Kernel {name} of op {op_name} has ABI version {version}; "
                                     f"this runtime executes version {ABI_VERSION}.",
                        kernel=name, opname=op_name)
        self._libs.append(lib)
        return lib

    def close(self) -> None:
        self._loaded.clear()
        if self._tmpdir is not None:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None
