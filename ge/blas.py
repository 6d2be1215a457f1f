"""The BLAS behind the compiled matmul / convolution kernels: OpenBLAS from the `scipy-openblas32`
wheel (docs/kernel-abi.md, "BLAS").

The wheel is a Python dependency of pyatc, so a `pip install` that succeeds can compile: no system
OpenBLAS is looked for.  It carries the headers and `libscipy_openblas.so`, whose symbols all carry
the `scipy_` prefix (so it never clashes with another OpenBLAS in the process, numpy's included).

* **Compile** (ge.compiler.opcompile.build): `-I<include>` and `-L<lib> -lscipy_openblas`.  The
  kernel records the library by its soname only (`NEEDED libscipy_openblas.so`, no rpath), and
  neither search path enters the kernel bytes or the cache key: the key has the wheel's version
  and a digest of its headers, so one kernel is the same bytes on every machine with that wheel.
* **Run** (ge.runtime and the reference loader): `load()` opens the wheel's library first with
  RTLD_GLOBAL, so a kernel's `NEEDED libscipy_openblas.so` is satisfied by the library already
  in the process.  Before the library initialises it gets the right core type (unless the user set
  `OPENBLAS_CORETYPE`, OpenBLAS's own switch, which wins) and afterwards one thread, until
  `set_threads` (the runtime's --threads, docs/runtime.md) asks for more.

A leaf module: the compiler and the runtime both import it, it imports neither.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.util
import logging
import os
import platform
from dataclasses import dataclass

from ge.errors import GeError

__all__ = ["set_threads",
           "PACKAGE", "DISTRIBUTION", "SONAME", "LINK_NAME", "SYMBOL_PREFIX", "CORETYPE_VAR",
           "BlasBuild", "locate", "symbol", "core_type_for_flags", "load"]

log = logging.getLogger(__name__)

PACKAGE = "scipy_openblas32"            # the import name of the wheel
DISTRIBUTION = "scipy-openblas32"       # its name on PyPI (what to pip install)
SONAME = "libscipy_openblas.so"
LINK_NAME = "scipy_openblas"            # -l<LINK_NAME>
SYMBOL_PREFIX = "scipy_"
CORETYPE_VAR = "OPENBLAS_CORETYPE"
_HEADERS = ("cblas.h", "openblas_config.h")     # what a kernel's compile reads from the wheel

# Newest first: (OpenBLAS core type name, CPU flags it needs).  Each name is one OpenBLAS
# 0.3.x knows on x86-64; its kernels use only the listed instruction sets.  Older OpenBLAS builds
# fall back to SSE3 kernels on CPUs newer than themselves: this picks what the flags allow.
_X86_CORES = (
    ("Cooperlake", frozenset({"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl",
                              "avx512_bf16"})),
    ("SkylakeX", frozenset({"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"})),
    ("Haswell", frozenset({"avx2", "fma"})),
)

_loaded: dict = {}


@dataclass(frozen=True)
class BlasBuild:
    """Where the wheel is on this machine (paths: never in a key or a kernel) and what it is."""
    include_dir: str
    lib_dir: str
    version: str
    header_sha256: str

    @property
    def library(self) -> str:
        return os.path.join(self.lib_dir, SONAME)

    def identity(self) -> dict:
        """What a kernel's bytes depend on: the same on every machine with the same wheel."""
        return {"blas": DISTRIBUTION, "blas_version": self.version,
                "blas_headers_sha256": self.header_sha256}


def symbol(name: str) -> str:
    """The library's name for a BLAS function: `cblas_sgemm` -> `scipy_cblas_sgemm`."""
    return SYMBOL_PREFIX + name


def _missing(reason: str) -> GeError:
    return GeError("EP0113", {"package": DISTRIBUTION, "reason": reason})


@functools.lru_cache(maxsize=1)
def locate() -> BlasBuild:
    """The installed wheel; EP0113 naming what to install when it is absent or broken."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise _missing("it is not installed in this Python")
    root = list(spec.submodule_search_locations)[0]
    include_dir, lib_dir = os.path.join(root, "include"), os.path.join(root, "lib")
    digest = hashlib.sha256()
    try:
        for name in _HEADERS:
            with open(os.path.join(include_dir, name), "rb") as f:
                digest.update(name.encode() + b"\0" + f.read())
    except OSError as exc:
        raise _missing(f"its header {exc.filename} cannot be read") from None
    if not os.path.exists(os.path.join(lib_dir, SONAME)):
        raise _missing(f"{os.path.join(lib_dir, SONAME)} is missing")
    from ge.distributions import version_beside
    ver = version_beside(root, DISTRIBUTION) or "unknown"
    return BlasBuild(include_dir, lib_dir, ver, digest.hexdigest())


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


def load() -> str:
    """Load the wheel's OpenBLAS into the process (RTLD_GLOBAL), on the CPU's core type and one
    thread; returns the core name.  Idempotent; call before the first kernel is dlopened."""
    if "core" in _loaded:
        return _loaded["core"]
    import cffi
    build = locate()
    if CORETYPE_VAR not in os.environ and platform.machine() in ("x86_64", "AMD64"):
        chosen = core_type_for_flags(_cpu_flags())
        if chosen:
            os.environ[CORETYPE_VAR] = chosen
    ffi = cffi.FFI()
    ffi.cdef(f"void {symbol('openblas_set_num_threads')}(int);"
             f"char *{symbol('openblas_get_corename')}(void);"
             f"int {symbol('openblas_get_num_threads')}(void);")
    try:
        lib = ffi.dlopen(build.library, ffi.RTLD_NOW | ffi.RTLD_GLOBAL)
    except OSError as exc:
        raise _missing(f"{build.library} cannot be loaded: {exc}") from None
    getattr(lib, symbol("openblas_set_num_threads"))(1)
    core = ffi.string(getattr(lib, symbol("openblas_get_corename"))()).decode("ascii", "replace")
    _loaded.update(core=core, lib=(ffi, lib), threads=1)   # keep the library mapped
    log.debug("OpenBLAS %s (%s), core %s, one thread", build.version, build.library, core)
    return core


def set_threads(count: int) -> None:
    """The number of threads OpenBLAS splits each sgemm over (process-wide; loads the library
    first).  Its level-3 routines split the output matrix, never the sum over k, so a product
    is the same bits whatever the count."""
    load()
    if _loaded.get("threads") != count:
        _, lib = _loaded["lib"]
        getattr(lib, symbol("openblas_set_num_threads"))(int(count))
        _loaded["threads"] = count
