"""OpenBLAS set-up for the compiled matmul / convolution kernels: one thread, the right core.

The BLAS kernels of docs/kernel-abi.md link the system `libopenblas.so.0`.  Two of its
defaults are wrong for this runtime, and both must be fixed before the first kernel is
`dlopen`ed, because the library reads them once when it initialises:

* **Core type.**  A DYNAMIC_ARCH OpenBLAS picks its sgemm kernels from the CPU model number.
  A CPU newer than the library (OpenBLAS 0.3.21 on Sapphire/Emerald Rapids, or any model a
  hypervisor reports oddly) falls back to `Prescott` (SSE3): 5-10x slower than the AVX2 or
  AVX-512 kernels the CPU can run.  Unless the user set `OPENBLAS_CORETYPE` (it is OpenBLAS's
  own read point and wins), we set it to the newest core type whose instruction set the CPU
  flags show (`/proc/cpuinfo`), so the choice never needs an instruction the CPU lacks.
* **Threads.**  OpenBLAS starts one thread per core; a model run is one thread
  (docs/runtime.md), so `openblas_set_num_threads(1)` is called once the library is loaded.

Nothing here knows an op or a model; `configure()` is idempotent and cheap after its first call.
"""
from __future__ import annotations

import logging
import os
import platform

__all__ = ["configure", "core_type_for_flags", "BLAS_SONAME"]

log = logging.getLogger(__name__)

BLAS_SONAME = "libopenblas.so.0"
CORETYPE_VAR = "OPENBLAS_CORETYPE"

# Newest first: (OpenBLAS core type name, CPU flags it needs).  Each name is one OpenBLAS
# 0.3.x knows on x86-64; its kernels use only the listed instruction sets.
_X86_CORES = (
    ("Cooperlake", frozenset({"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl",
                              "avx512_bf16"})),
    ("SkylakeX", frozenset({"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"})),
    ("Haswell", frozenset({"avx2", "fma"})),
)

_state: dict = {}


def core_type_for_flags(flags) -> str:
    """The OpenBLAS core type for a set of x86 CPU flags ("" = let OpenBLAS decide)."""
    flags = set(flags)
    for name, needs in _X86_CORES:
        if needs <= flags:
            return name
    return ""


def _cpu_flags() -> frozenset:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


def configure(ffi) -> str:
    """Choose the core type (unless set), load OpenBLAS, force one thread; returns its core
    name ("" when OpenBLAS is not installed).  Call before the first kernel is loaded."""
    if "core" in _state:
        return _state["core"]
    if CORETYPE_VAR not in os.environ and platform.machine() in ("x86_64", "AMD64"):
        chosen = core_type_for_flags(_cpu_flags())
        if chosen:
            os.environ[CORETYPE_VAR] = chosen
    blas_ffi = ffi.__class__()
    blas_ffi.cdef("void openblas_set_num_threads(int); char *openblas_get_corename(void);")
    try:
        lib = blas_ffi.dlopen(BLAS_SONAME, blas_ffi.RTLD_NOW | blas_ffi.RTLD_LOCAL)
        lib.openblas_set_num_threads(1)
        core = blas_ffi.string(lib.openblas_get_corename()).decode("ascii", "replace")
    except (OSError, AttributeError) as e:
        log.debug("OpenBLAS not configured: %s", e)
        core = ""
    else:
        _state["lib"] = (blas_ffi, lib)   # keep the library mapped for the process
        log.debug("OpenBLAS core %s, one thread", core)
    _state["core"] = core
    return core
