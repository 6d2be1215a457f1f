"""compile_ops over a placed graph: kernels deduplicated, attrs recorded, workspace reported,
output independent of the number of parallel jobs and of the cache state."""
import hashlib

import numpy as np

from ge.compiler.engines import place_engines
from ge.compiler.opcompile import compile_ops
from ge.compiler.opcompile.conv_product import SLACK
from ge.compiler.opcompile.gen_conv import SLOTS
from ge.compiler.opcompile.hostcall import load_kernel
from opcompile_graphs import conv_relu_graph


def _compile(tmp_path, monkeypatch, jobs, mode="enable", name="c"):
    monkeypatch.setenv("TE_PARALLEL_COMPILER", str(jobs))
    g = conv_relu_graph(relus=2)
    place_engines(g, {})
    opts = {"ge.op_compiler_cache_dir": str(tmp_path / name), "ge.socVersion": "Ascend310",
            "ge.op_compiler_cache_mode": mode}
    return g, compile_ops(g, opts)


def test_kernels_named_recorded_and_shared(tmp_path, monkeypatch):
    g, ck = _compile(tmp_path, monkeypatch, 2)
    names = [n for n, _ in ck.kernels]
    assert len(names) == 2 and names[0].startswith("te_conv2d_") and names[1].startswith("te_relu_")
    assert g.node("relu0").attr("_kernelname") == g.node("relu1").attr("_kernelname") == names[1]
    conv_ref = ck.node_kernels["conv"]
    assert conv_ref.sha256 == hashlib.sha256(ck.binary(conv_ref.name)).hexdigest()
    assert g.node("conv").attr("_kernel_sha256") == conv_ref.sha256
    # per thread, for up to gen_conv.SLOTS threads: one im2col block (27 x 64 floats) and the
    # prepared product's packed columns (27 x 72: the block's 64 in panels of 24, and the
    # slack its 8-float copies may write past them)
    assert ck.workspace_bytes["conv"] == [SLOTS * (27 * 64 + 27 * 72 + SLACK) * 4]
    assert ck.workspace_bytes["relu0"] == []
    assert ck.stats["compiles"] == 2 and ck.stats["misses"] == 2


def test_same_bytes_whatever_jobs_and_cache_state(tmp_path, monkeypatch):
    _, one = _compile(tmp_path, monkeypatch, 1, mode="disable")
    _, two = _compile(tmp_path, monkeypatch, 2, name="d")
    _, warm = _compile(tmp_path, monkeypatch, 2, name="d")
    assert one.kernels == two.kernels == warm.kernels
    assert warm.stats["hits"] == 2 and warm.stats["compiles"] == 0


def test_compiled_conv_kernel_runs(tmp_path, monkeypatch):
    _, ck = _compile(tmp_path, monkeypatch, 2)
    ref = ck.node_kernels["conv"]
    k = load_kernel(ck.binary(ref.name), ref.sha256)
    x = np.ones((1, 3, 8, 8), np.float32)
    y = np.zeros((1, 4, 8, 8), np.float32)
    assert k([x, np.ones((4, 3, 3, 3), np.float32), None], [y], ref.workspace_bytes) == 0
    assert y[0, 0, 4, 4] == 27.0 and y[0, 0, 0, 0] == 12.0
    assert '"op_type":"Conv2D"' in k.signature


def test_debug_compile_keeps_the_support_source_its_kernels_link(tmp_path):
    """A convolution links the support object (docs/kernel-abi.md): its debug dump holds
    ge_support.c beside the kernel's source, and the two compile into one shared object."""
    import subprocess
    from ge.compiler.opcompile.build import compile_flags, toolchain
    g = conv_relu_graph(relus=1)
    place_engines(g, {})
    ck = compile_ops(g, {"ge.socVersion": "Ascend310P3", "ge.opDebugLevel": "1",
                         "ge.debugDir": str(tmp_path),
                         "ge.op_compiler_cache_dir": str(tmp_path / "c")})
    meta = tmp_path / "kernel_meta"
    conv = ck.node_kernels["conv"].name
    relu = ck.node_kernels["relu0"].name
    assert {p.name for p in meta.iterdir()} == {"ge_support.c", f"{conv}.c", f"{conv}.so",
                                                f"{relu}.c", f"{relu}.so"}
    done = subprocess.run([toolchain().cc_path, *compile_flags(), "-o", str(tmp_path / "again.so"),
                           str(meta / f"{conv}.c"), str(meta / "ge_support.c")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "again.so").stat().st_size > 0
