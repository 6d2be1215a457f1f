"""The kernel ABI of the host target (docs/kernel-abi.md) and its one verified loader.

The operator compiler writes kernels to this ABI (ge.compiler.opcompile), the runtime and the
opcompile tests load them through `KernelLoader`; both import this leaf module, neither imports
the other.  Loading checks, in this order and before any byte is mapped: the sha256 the caller
recorded for the kernel, then (after `dlopen`) the ABI version symbol and the declarations
(`ge_kernel_signature`, `ge_kernel_workspace_bytes`) a caller checks its plan against; a kernel
that splits its work is pointed at the model's one pool of workers (`_share_jobs_pool`).  The
BLAS library is loaded first (ge.blas), so a kernel's `NEEDED libscipy_openblas.so` resolves to
it.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass
from typing import Optional

from ge import blas
from ge.errors import GeError
from ge.fsutil import sweep, temp_dir

__all__ = ["ABI_VERSION", "KERNEL_SYMBOL", "VERSION_SYMBOL", "SIGNATURE_SYMBOL",
           "WORKSPACE_SYMBOL", "JOBS_SYMBOL", "JOBS_DELEGATE_SYMBOL", "STATE_SYMBOL",
           "CONSTANT_INPUTS_SYMBOL", "PREPARE_SYMBOL", "PREPARED_SYMBOL", "CDEF", "Preparation",
           "KernelLoader"]

# 2: kernels declare their workspace size (a loader checks the memory plan against it)
ABI_VERSION = 2
KERNEL_SYMBOL = "ge_kernel"
VERSION_SYMBOL = "ge_kernel_abi_version"
SIGNATURE_SYMBOL = "ge_kernel_signature"
WORKSPACE_SYMBOL = "ge_kernel_workspace_bytes"
JOBS_SYMBOL = "ge_jobs_run"             # optional: a kernel that splits its work has a pool
JOBS_DELEGATE_SYMBOL = "ge_jobs_delegate"   # ... and runs on this pool instead, when set
# optional, all four or none ("Prepared constants"): a kernel that packs constant inputs once
STATE_SYMBOL = "ge_kernel_state_bytes"          # the state's size here (0: not prepared)
CONSTANT_INPUTS_SYMBOL = "ge_kernel_constant_inputs"   # bit k: input k must be a constant
PREPARE_SYMBOL = "ge_kernel_prepare"            # (inputs, state): fills the state, once
PREPARED_SYMBOL = "ge_kernel_prepared"          # ge_kernel's arguments and the state
CDEF = f"""
typedef void (*ge_job_fn)(void *const *, void *const *, int64_t);
void {JOBS_SYMBOL}(ge_job_fn, void *const *, void *const *, int64_t);
extern void (*{JOBS_DELEGATE_SYMBOL})(ge_job_fn, void *const *, void *const *, int64_t);
int {KERNEL_SYMBOL}(void *const *inputs, void *const *outputs, void *workspace);
extern unsigned int {VERSION_SYMBOL};   /* const in the kernel; cffi reads it as a variable */
extern char {SIGNATURE_SYMBOL}[];
extern unsigned long long {WORKSPACE_SYMBOL};
unsigned long long {STATE_SYMBOL}(void);
extern unsigned long long {CONSTANT_INPUTS_SYMBOL};
int {PREPARE_SYMBOL}(void *const *inputs, void *state);
int {PREPARED_SYMBOL}(void *const *inputs, void *const *outputs, void *workspace,
                      const void *state);
"""
LOAD_ERROR = "EP0112"
_WORK_BASE = "ge_kernels"     # work directories: .ge_kernels.tmp-<host>-<pid>-<rand>


@dataclass(frozen=True)
class Preparation:
    """A kernel's prepared-constants entries (docs/kernel-abi.md, "Prepared constants")."""
    state_bytes: int
    constant_inputs: int        # bit k set: input k must be a constant for prepare to run
    prepare: object             # cffi functions
    prepared: object


def _refuse(kernel: str, opname: str, reason: str) -> GeError:
    return GeError(LOAD_ERROR, {"kernel": kernel, "opname": opname or "-", "reason": reason})


class KernelLoader:
    """Loads verified kernel binaries into this process through one cffi FFI.

    Each binary is written into a private (0700) directory under ge.fsutil's temporary-name
    format, opened RTLD_NOW | RTLD_LOCAL, and the directory is removed at once (the mapping
    stays valid); a killed process leaves it to the next loader's sweep."""

    def __init__(self):
        import cffi
        self.ffi = cffi.FFI()
        self.ffi.cdef(CDEF)
        self._libs: list = []       # keep every library mapped while the loader lives
        self._jobs_pool = None      # the first threaded kernel's pool, shared by the others

    def load(self, name: str, data: bytes, sha256: str, opname: str = ""):
        """The opened library of kernel `name`, after its checks (EP0112 on any failure)."""
        actual = hashlib.sha256(data).hexdigest()
        if not sha256 or actual != sha256.lower():
            raise _refuse(name, opname, f"its sha256 {actual} is not the recorded "
                                        f"{sha256 or '(none)'}; it was not loaded")
        if not self._libs:
            blas.load()
            sweep(tempfile.gettempdir(), _WORK_BASE)
        with temp_dir(os.path.join(tempfile.gettempdir(), _WORK_BASE)) as work:
            path = os.path.join(work, "kernel.so")
            with open(path, "xb") as f:
                f.write(data)
            try:
                lib = self.ffi.dlopen(path, self.ffi.RTLD_NOW | self.ffi.RTLD_LOCAL)
            except OSError as exc:
                raise _refuse(name, opname, f"the host cannot load it: {exc}") from None
        try:
            version = int(getattr(lib, VERSION_SYMBOL))
            getattr(lib, KERNEL_SYMBOL)
        except (AttributeError, OSError, NotImplementedError) as exc:
            raise _refuse(name, opname, f"it does not export the kernel ABI: {exc}") from None
        if version != ABI_VERSION:
            raise _refuse(name, opname, f"its ABI version is {version}, this runtime runs "
                                        f"version {ABI_VERSION}")
        try:
            self.declared(lib)
        except (AttributeError, OSError, NotImplementedError, UnicodeDecodeError) as exc:
            raise _refuse(name, opname, f"it does not declare its signature and workspace: "
                                        f"{exc}") from None
        self._libs.append(lib)
        self._share_jobs_pool(lib)
        return lib

    def _share_jobs_pool(self, lib) -> None:
        """Kernels that split their work (opcompile/jobs.py) each carry a pool of workers; the
        first one loaded here keeps its pool and every later one is pointed at it, so a model
        has N-1 workers, not N-1 per kernel.  The first stays mapped as long as the others
        (self._libs keeps them all until close)."""
        try:
            run = getattr(lib, JOBS_SYMBOL)
        except (AttributeError, OSError, NotImplementedError):
            return                  # a kernel that does not split its work
        if self._jobs_pool is None:
            self._jobs_pool = run
        else:
            setattr(lib, JOBS_DELEGATE_SYMBOL, self._jobs_pool)

    def declared(self, lib) -> tuple[str, int]:
        """What a loaded kernel says it was built for: (canonical signature JSON, workspace
        bytes).  A caller checks its pointers against these before the first call."""
        signature = self.ffi.string(getattr(lib, SIGNATURE_SYMBOL)).decode("utf-8")
        return signature, int(getattr(lib, WORKSPACE_SYMBOL))

    def preparation(self, lib) -> Optional[Preparation]:
        """The kernel's prepared-constants entries, or None: it has none, or its state is
        empty on this CPU (it runs unprepared, through ge_kernel)."""
        try:
            entries = [getattr(lib, s) for s in (STATE_SYMBOL, PREPARE_SYMBOL,
                                                  PREPARED_SYMBOL)]
            constant = int(getattr(lib, CONSTANT_INPUTS_SYMBOL))
        except (AttributeError, OSError, NotImplementedError):
            return None
        size = int(entries[0]())
        return Preparation(size, constant, entries[1], entries[2]) if size else None

    def close(self) -> None:
        """Forget the libraries (they stay mapped while a caller holds one)."""
        self._jobs_pool = None
        self._libs.clear()
