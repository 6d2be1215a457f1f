"""ge.blas: the wheel's OpenBLAS on the core type the CPU flags allow, one thread once loaded."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ge import blas

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
from ge import blas
core = blas.load()
ffi, lib = blas._loaded["lib"]
print(core, lib.scipy_openblas_get_num_threads(), blas.load())
"""


def test_load_in_a_fresh_process_runs_the_chosen_core_on_one_thread():
    env = {k: v for k, v in os.environ.items() if k != blas.CORETYPE_VAR}
    env.update(PYTHONPATH=ROOT, OPENBLAS_NUM_THREADS="4")
    out = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True,
                         text=True, check=True)
    core, threads, again = out.stdout.split()
    assert threads == "1" and again == core
    with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
        flags = next((ln.split(":", 1)[1].split() for ln in f if ln.startswith("flags")), [])
    expected = blas.core_type_for_flags(flags)
    if expected:
        # the core OpenBLAS runs when told `expected` itself (a wheel built without a core's
        # kernels, e.g. Cooperlake, maps it to the nearest one it has, e.g. SkylakeX)
        told = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                              env=dict(env, **{blas.CORETYPE_VAR: expected}), check=True)
        assert core == told.stdout.split()[0]


def test_the_users_core_type_wins():
    env = dict(os.environ, PYTHONPATH=ROOT, **{blas.CORETYPE_VAR: "Haswell"})
    out = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True,
                         text=True, check=True)
    assert out.stdout.split()[0] == "Haswell"


def test_a_missing_wheel_is_a_coded_error_naming_the_package(monkeypatch):
    from ge.errors import GeError
    monkeypatch.setattr(blas.importlib.util, "find_spec", lambda name: None)
    blas.locate.cache_clear()
    try:
        with pytest.raises(GeError) as info:
            blas.locate()
    finally:
        monkeypatch.undo()
        blas.locate.cache_clear()
    assert info.value.code == "EP0113"
    assert info.value.params["package"] == "scipy-openblas32"
