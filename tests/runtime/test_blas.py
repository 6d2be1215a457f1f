"""ge.runtime._blas: OpenBLAS core type from the CPU flags, one thread once loaded."""
from __future__ import annotations

import os

import pytest

from ge.runtime import _blas

AVX2 = {"sse2", "avx", "avx2", "fma"}
AVX512 = AVX2 | {"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"}


@pytest.mark.parametrize("flags, core", [
    (AVX512 | {"avx512_bf16"}, "Cooperlake"),
    (AVX512, "SkylakeX"),
    (AVX2, "Haswell"),
    (AVX512 - {"avx512vl"}, "Haswell"),     # incomplete AVX-512: never a kernel it lacks
    ({"sse2", "sse3", "avx"}, ""),           # older: OpenBLAS decides
    (set(), ""),
])
def test_core_type_needs_every_flag(flags, core):
    assert _blas.core_type_for_flags(flags) == core


def test_configure_loads_one_thread_openblas():
    cffi = pytest.importorskip("cffi")
    core = _blas.configure(cffi.FFI())
    if not core:
        pytest.skip("OpenBLAS not installed")
    ffi, lib = _blas._state["lib"]
    ffi.cdef("int openblas_get_num_threads(void);")
    assert lib.openblas_get_num_threads() == 1
    assert _blas.configure(cffi.FFI()) == core          # idempotent
    chosen = os.environ.get(_blas.CORETYPE_VAR, "")
    if chosen in dict(_blas._X86_CORES):     # a core type of our table is what OpenBLAS runs
        assert core.lower() == chosen.lower()
