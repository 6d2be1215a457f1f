"""Compiled kernels of an OM (TBE_KERNELS partition) loaded into this process.

Each item is loaded once, on first use, through the one verified loader of ge.kernel_abi: the
sha256 the op records (`_kernel_sha256`) is checked before the bytes touch the disk, the ABI
version after `dlopen`; what each kernel declares (signature, workspace) is kept for the plan
check (ge.runtime._validate).  Nothing here knows an op.
"""
from __future__ import annotations

from ge.kernel_abi import KERNEL_SYMBOL, KernelLoader

from ge.errors import GeError

from ._errors import KERNEL_LOAD

__all__ = ["KernelLibrary"]


class KernelLibrary:
    """The kernels one model uses: name -> cffi function, loaded once each."""

    def __init__(self, items: list):
        self._loader = KernelLoader()
        self.ffi = self._loader.ffi
        self._items = {}
        for name, data in items:
            self._items.setdefault(name, data)
        self._loaded: dict = {}
        self._declared: dict = {}
        self._preparations: dict = {}

    def has(self, name: str) -> bool:
        return name in self._items

    def function(self, name: str, sha256: str, op_name: str):
        """The entry point of kernel `name`, verified against `sha256` (hex)."""
        if name in self._loaded:
            fn, digest = self._loaded[name]
            if digest != sha256:
                raise GeError(KERNEL_LOAD, {"kernel": name, "opname": op_name, "reason":
                              f"it records sha256 {sha256}, another op records {digest}"})
            return fn
        data = self._items.get(name)
        if data is None:
            raise GeError(KERNEL_LOAD, {"kernel": name, "opname": op_name,
                                        "reason": "it is not in the TBE_KERNELS partition"})
        lib = self._loader.load(name, data, sha256, op_name)
        fn = getattr(lib, KERNEL_SYMBOL)
        self._loaded[name] = (fn, sha256)
        self._declared[name] = self._loader.declared(lib)
        self._preparations[name] = self._loader.preparation(lib)
        return fn

    def preparation(self, name: str):
        """Loaded kernel `name`'s prepared-constants entries (ge.kernel_abi.Preparation),
        or None."""
        return self._preparations[name]

    @property
    def uses_blas(self) -> bool:
        """Any kernel loaded (the loader opened OpenBLAS before the first one)."""
        return bool(self._loaded)

    def declared(self, name: str) -> tuple[str, int]:
        """(signature JSON, workspace bytes) that loaded kernel `name` declares."""
        return self._declared[name]

    def close(self) -> None:
        self._loaded.clear()
        self._declared.clear()
        self._preparations.clear()
        self._loader.close()
