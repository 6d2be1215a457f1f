"""C source -> shared object with the system C compiler, and the toolchain identity that goes
into every cache key (compiler path + version, flags, OpenBLAS library path + sha256 + version).

`build()` runs an argv list (no shell) in a private temporary directory with fixed file names
(`kernel.c` -> `kernel.so`) and `-ffile-prefix-map`, so the same source gives the same bytes in
any directory and any process.  The directory is named `.ge_kernel.tmp-<host>-<pid>-<rand>` under
the temp root, and the compiler's own temporaries go inside it (TMPDIR), so a killed compile
leaves one recognisable directory, which the next compile_ops removes (clean_stale_build_dirs).
It knows nothing about ops or the cache.
"""
from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass

from ge.errors import GeError
from ge.fsutil import sweep, temp_dir

__all__ = ["Toolchain", "toolchain", "build", "compile_flags", "KernelBuildError",
           "clean_stale_build_dirs"]

CC = "cc"
# -O3 vectorises the elementwise loops (portable x86-64 / aarch64 baseline: no -march, so an OM
# runs on any CPU of its host target); -fno-math-errno lets sqrtf & co. be inlined and
# vectorised (results are unchanged: only errno would have been set).
BASE_FLAGS = ("-std=c99", "-O3", "-fno-math-errno", "-fPIC", "-shared", "-fno-ident")
BUILD_NAME = "ge_kernel"      # work directories get ge.fsutil temporary names of it
BLAS_HEADER_DIRS = ("/usr/include/x86_64-linux-gnu", "/usr/include/aarch64-linux-gnu",
                    "/usr/include/openblas", "/usr/include")


class KernelBuildError(GeError):
    """The C compiler rejected a generated kernel (a generator bug): carries its stderr."""


@dataclass(frozen=True)
class Toolchain:
    cc_path: str
    cc_version: str
    blas_lib: str          # realpath of libopenblas.so, "" when absent
    blas_sha256: str
    blas_version: str

    def identity(self, needs_blas: bool) -> dict:
        ident = {"cc": self.cc_path, "cc_version": self.cc_version}
        if needs_blas:
            ident.update(blas=self.blas_lib, blas_sha256=self.blas_sha256,
                         blas_version=self.blas_version)
        return ident


def _sha256_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _find_blas() -> tuple:
    out = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True, check=False)
    lib = ""
    for line in out.stdout.splitlines():
        if "libopenblas.so" in line and "=>" in line:
            lib = os.path.realpath(line.split("=>", 1)[1].strip())
            break
    if not lib:
        for cand in ("/usr/lib/x86_64-linux-gnu/libopenblas.so",
                     "/usr/lib/aarch64-linux-gnu/libopenblas.so", "/usr/lib/libopenblas.so"):
            if os.path.exists(cand):
                lib = os.path.realpath(cand)
                break
    if not lib:
        return "", "", ""
    version = ""
    for d in BLAS_HEADER_DIRS:
        cfg = os.path.join(d, "openblas_config.h")
        if os.path.exists(cfg):
            with open(cfg, encoding="utf-8", errors="replace") as f:
                m = re.search(r'#define\s+OPENBLAS_VERSION\s+"([^"]*)"', f.read())
            version = m.group(1).strip() if m else ""
            break
    return lib, _sha256_file(lib), version


@functools.lru_cache(maxsize=1)
def toolchain() -> Toolchain:
    cc = shutil.which(CC)
    if cc is None:
        raise GeError("EP0110", {"reason": "no C compiler (cc) on PATH"},
                      "Kernel compilation needs the system C compiler 'cc', which is not on PATH.")
    ver = subprocess.run([cc, "--version"], capture_output=True, text=True, check=False)
    first = (ver.stdout.splitlines() or [""])[0].strip()
    lib, sha, version = _find_blas()
    return Toolchain(os.path.realpath(cc), first, lib, sha, version)


def compile_flags(needs_blas: bool, debug_flags: tuple = ()) -> list:
    """Compiler flags (without file names); `debug_flags` come from op debug options."""
    flags = list(BASE_FLAGS)
    if debug_flags:
        flags = [f for f in flags if not f.startswith("-O")] + list(debug_flags)
    return flags


def link_libs(needs_blas: bool) -> list:
    return (["-lopenblas"] if needs_blas else []) + ["-lm"]


def clean_stale_build_dirs(temp_root: str = "") -> list:
    """Remove the build directories of dead processes of this host (ge.fsutil.sweep)."""
    return sweep(temp_root or tempfile.gettempdir(), BUILD_NAME)


def build(source: str, needs_blas: bool, debug_flags: tuple = (), what: str = "") -> bytes:
    """Compile one translation unit into a shared object and return its bytes."""
    tc = toolchain()
    if needs_blas and not tc.blas_lib:
        raise KernelBuildError("EP0110", {"reason": "OpenBLAS not installed"},
                               f"Kernel {what} needs OpenBLAS (libopenblas-dev), not installed.")
    with temp_dir(os.path.join(tempfile.gettempdir(), BUILD_NAME)) as work:
        with open(os.path.join(work, "kernel.c"), "w", encoding="utf-8") as f:
            f.write(source)
        argv = ([tc.cc_path] + compile_flags(needs_blas, debug_flags)
                + [f"-ffile-prefix-map={work}=.", "-o", "kernel.so", "kernel.c"]
                + link_libs(needs_blas))
        proc = subprocess.run(argv, cwd=work, capture_output=True, text=True, check=False,
                              env=dict(os.environ, TMPDIR=work))
        if proc.returncode != 0:
            raise KernelBuildError(
                "EP0110", {"kernel": what, "reason": proc.stderr[-2000:]},
                f"Failed to compile kernel {what} with {tc.cc_path}: {proc.stderr[-2000:]}")
        with open(os.path.join(work, "kernel.so"), "rb") as f:
            return f.read()
