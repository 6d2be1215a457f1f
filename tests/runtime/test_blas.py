"""ge.runtime.blas: OpenBLAS core type from the CPU flags, one thread once loaded."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ge.runtime import blas

AVX2 = {"sse2", "avx", "avx2", "fma"}
AVX512 = AVX2 | {"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"}
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.parametrize("flags, core", [
    (AVX512 | {"avx512_bf16"}, "Cooperlake"),
    (AVX512, "SkylakeX"),
    (AVX2, "Haswell"),
    (AVX512 - {"avx512vl"}, "Haswell"),     # incomplete AVX-512: never a kernel it lacks
    ({"sse2", "sse3", "avx"}, ""),           # older: OpenBLAS decides
    (set(), ""),
])
def test_core_type_needs_every_flag(flags, core):
    assert blas.core_type_for_flags(flags) == core


_PROBE = """
import cffi
from ge.runtime import blas
core = blas.configure(cffi.FFI())
if not core:
    raise SystemExit("no OpenBLAS")
ffi, lib = blas._state["lib"]
ffi.cdef("int openblas_get_num_threads(void);")
print(core, lib.openblas_get_num_threads(), blas.configure(cffi.FFI()))
"""


def test_configure_in_a_fresh_process_runs_the_chosen_core_on_one_thread():
    pytest.importorskip("cffi")
    env = {k: v for k, v in os.environ.items() if k != blas.CORETYPE_VAR}
    env.update(PYTHONPATH=ROOT, OPENBLAS_NUM_THREADS="4")
    out = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True,
                         text=True, check=False)
    if out.returncode != 0 and "no OpenBLAS" in out.stderr:
        pytest.skip("OpenBLAS not installed")
    core, threads, again = out.stdout.split()
    assert threads == "1" and again == core
    with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
        flags = next((ln.split(":", 1)[1].split() for ln in f if ln.startswith("flags")), [])
    expected = blas.core_type_for_flags(flags)
    if expected:
        assert core.lower() == expected.lower()
