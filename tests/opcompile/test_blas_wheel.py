"""BLAS kernels link OpenBLAS from the scipy-openblas32 wheel, by soname, and nothing of this
machine's paths reaches their bytes or their cache key; a compile + run works where no system
OpenBLAS can be found (a mount namespace hides every system copy)."""
from __future__ import annotations

import glob
import hashlib
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from ge import blas
from ge.compiler.opcompile import build as kbuild
from ge.compiler.opcompile.compile import kernel_task
from ge.compiler.opcompile.generators import render
from ge.compiler.opcompile.hostcall import load_kernel
from kernel_check import full_attrs, make_sig

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _matmul_sig(m=5, k=7, n=3):
    a = np.zeros((m, k), np.float32)
    b = np.zeros((k, n), np.float32)
    return make_sig("MatMulV2", [a, b], [np.zeros((m, n), np.float32)],
                    full_attrs("MatMulV2", {}))


def _dynamic_section(path) -> str:
    return subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True,
                          check=True).stdout


def test_a_blas_kernel_needs_the_wheel_library_by_soname_and_nothing_else(tmp_path):
    src = render(_matmul_sig())
    assert src.needs_blas and blas.symbol("cblas_sgemm") in src.c_source
    so = tmp_path / "k.so"
    so.write_bytes(kbuild.build(src.c_source, True, what="MatMulV2"))
    dyn = _dynamic_section(so)
    needed = [line.split("[", 1)[1].rstrip("]") for line in dyn.splitlines() if "(NEEDED)" in line]
    assert blas.SONAME in needed
    assert not [n for n in needed if "openblas" in n and n != blas.SONAME], needed
    assert "RPATH" not in dyn and "RUNPATH" not in dyn
    where = blas.locate()
    data = so.read_bytes()
    for path in (where.include_dir, where.lib_dir, sys.prefix, str(tmp_path)):
        assert path.encode() not in data


def _wheel_copy_at(root) -> blas.BlasBuild:
    here = blas.locate()
    pkg = os.path.join(root, blas.PACKAGE)
    shutil.copytree(os.path.dirname(here.include_dir), pkg, symlinks=True)
    return blas.BlasBuild(os.path.join(pkg, "include"), os.path.join(pkg, "lib"), here.version,
                          here.header_sha256)


@pytest.mark.parametrize("debug_flags", [(), ("-O0", "-g")])
def test_same_kernel_bytes_and_key_wherever_the_wheel_is(tmp_path, monkeypatch, debug_flags):
    """Two machines with the same wheel at different venv paths: same key, same bytes (with
    debug information too, where include paths would otherwise be recorded)."""
    sig = _matmul_sig()
    src = render(sig)
    results = []
    for root in (tmp_path / "a", tmp_path / "venvs" / "another-much-longer-path"):
        os.makedirs(root)
        copy = _wheel_copy_at(str(root))
        monkeypatch.setattr(blas, "locate", lambda copy=copy: copy)
        key = kernel_task(sig, "Ascend310P3", debug_flags).meta["key"]
        data = kbuild.build(src.c_source, True, debug_flags, what="MatMulV2")
        assert str(root).encode() not in data
        results.append((key, hashlib.sha256(data).hexdigest()))
    assert results[0] == results[1]


def test_key_material_names_versions_not_paths():
    material = kernel_task(_matmul_sig(), "Ascend310P3").meta["key_material"]
    where = blas.locate()
    assert where.version in material and where.header_sha256 in material
    assert kbuild.toolchain().cc_version in material
    for path in (where.include_dir, where.lib_dir, kbuild.toolchain().cc_path, sys.prefix):
        assert path not in material


def test_a_kernel_runs_through_the_verified_loader():
    sig = _matmul_sig(4, 6, 2)
    src = render(sig)
    so = kbuild.build(src.c_source, True, what="MatMulV2")
    kernel = load_kernel(so, hashlib.sha256(so).hexdigest())
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 6)).astype(np.float32)
    b = rng.standard_normal((6, 2)).astype(np.float32)
    out = np.zeros((4, 2), np.float32)
    assert kernel([a, b], [out]) == 0
    np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-5)


_COMPILE_AND_RUN = textwrap.dedent("""
    import os, sys
    import numpy as np
    import onnx
    from onnx import TensorProto, helper
    from ge.atc.main import main_impl
    from ge import runtime
    rng = np.random.default_rng(1)
    w = rng.standard_normal((8, 4, 3, 3)).astype(np.float32)
    m = rng.standard_normal((8 * 6 * 6, 5)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["c"], pads=[0, 0, 0, 0]),
         helper.make_node("Flatten", ["c"], ["f"]),
         helper.make_node("MatMul", ["f", "m"], ["y"])],
        "blas", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5])],
        [onnx.numpy_helper.from_array(w, "w"), onnx.numpy_helper.from_array(m, "m")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), "m.onnx")
    rc = main_impl(["atc", "--framework=5", "--model=m.onnx", "--output=m",
                    "--soc_version=Ascend310P3", "--op_compiler_cache_dir=cache",
                    "--precision_mode=must_keep_origin_dtype"])
    assert rc == 0, rc
    model = runtime.load("m.om")
    x = rng.standard_normal((1, 4, 8, 8)).astype(np.float32)
    (y,) = model.run([x])
    cols = np.lib.stride_tricks.sliding_window_view(x[0], (3, 3), axis=(1, 2))
    conv = np.einsum("chwij,ocij->ohw", cols, w).reshape(1, -1)
    np.testing.assert_allclose(y, conv @ m, rtol=1e-4, atol=1e-4)
    with open("/proc/self/maps") as f:
        libs = sorted({line.split()[-1] for line in f if "blas" in line.lower()})
    print("\\n".join(libs))
""")


def _hide_system_blas_argv() -> tuple:
    """A mount namespace in which every system OpenBLAS file reads as empty, when we may make
    one (root); otherwise the machine itself must lack it."""
    patterns = [f"{d}/{sub}libopenblas*.so*"
                for d in ("/lib", "/usr/lib", "/lib64", "/usr/lib64", "/usr/local/lib")
                for sub in ("", "*/", "*/openblas*/")]     # Debian keeps it in <triplet>/...
    found = sorted({os.path.realpath(p) for pattern in patterns for p in glob.glob(pattern)})
    if not found:
        return [], found
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.fail(f"system OpenBLAS present ({found[0]}) and no way to hide it (need root "
                    "and unshare)")
    binds = " && ".join(f"mount --bind /dev/null '{p}'" for p in found)
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c",
            f'{binds} && exec "$0" "$@"'], found


def test_compile_and_run_with_no_system_openblas(tmp_path):
    prefix, hidden = _hide_system_blas_argv()
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.run(prefix + [sys.executable, "-c", _COMPILE_AND_RUN], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    mapped = proc.stdout.split()
    wheel_lib = os.path.realpath(blas.locate().library)
    assert any(os.path.realpath(p) == wheel_lib for p in mapped), mapped
    others = [p for p in mapped if "openblas" in os.path.basename(p).lower()
              and os.path.realpath(p) != wheel_lib and "openblas64" not in p]
    assert not others, f"a system OpenBLAS was loaded: {others} (hidden: {hidden})"
