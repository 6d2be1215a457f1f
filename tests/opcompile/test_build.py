"""How a kernel is built (ge.compiler.opcompile.build): generated kernels include no header but
declare what they call (cgen.prelude), and those declarations are the system headers' own; the
linker command run directly gives the bytes the compiler driver gives; kernels are linked
without the C start files and libc, naming only the libraries they call; a call of something
undeclared is EP0110 naming the kernel."""
from __future__ import annotations

import subprocess

import numpy as np
import pytest

from ge import blas
from ge.compiler.opcompile import build as kbuild
from ge.compiler.opcompile import cgen, support
from ge.compiler.opcompile.generators import render
from kernel_check import full_attrs, make_sig

HEADERS = "#include <stddef.h>\n#include <stdint.h>\n#include <string.h>\n#include <math.h>\n"


def _syntax_check(tmp_path, text: str, *extra) -> subprocess.CompletedProcess:
    path = tmp_path / "check.c"
    path.write_text(text)
    # C11: an identical typedef may be repeated; a prototype or typedef that differs may not
    return subprocess.run([kbuild.toolchain().cc_path, "-std=c11", "-fsyntax-only", "-Werror",
                           *extra, str(path)], capture_output=True, text=True, check=False)


def test_the_prelude_declares_what_the_system_headers_declare(tmp_path):
    text = HEADERS + "\n".join(cgen.libc_decls()) + "\n"
    proc = _syntax_check(tmp_path, text)
    assert proc.returncode == 0, proc.stderr
    # the check can fail: a prototype that is not libm's is refused
    proc = _syntax_check(tmp_path, text + "double expf(double);\n")
    assert proc.returncode != 0 and "expf" in proc.stderr


def test_the_blas_declarations_are_those_of_the_wheel_header(tmp_path):
    asserts = [f'_Static_assert({name} == {value}, "{name}");'
               for values in cgen.BLAS_ENUMS.values() for name, value in values.items()]
    text = "#include <cblas.h>\n" + "\n".join(list(cgen.BLAS_DECLS) + asserts) + "\n"
    proc = _syntax_check(tmp_path, text, f"-I{blas.locate().include_dir}")
    assert proc.returncode == 0, proc.stderr


def _sigs():
    x = np.zeros((3, 5), np.float32)
    w = np.zeros((5, 4), np.float32)
    return [make_sig("Exp", [x], [x], full_attrs("Exp", {})),
            make_sig("MatMulV2", [x, w], [np.zeros((3, 4), np.float32)],
                     full_attrs("MatMulV2", {})),
            make_sig("Exp", [x.astype(np.float16)], [x.astype(np.float16)],
                     full_attrs("Exp", {}))]


@pytest.mark.parametrize("sig", _sigs(), ids=lambda s: s.op_type + s.inputs[0].dtype)
def test_direct_link_gives_the_bytes_of_the_driver(tmp_path, sig):
    src = render(sig)
    assert "#include" not in src.c_source
    built = kbuild.build(src.c_source, src.needs_blas, what=sig.op_type)
    (tmp_path / "kernel.c").write_text(src.c_source)
    sources = ["kernel.c"]
    if support.uses_support(src.c_source):      # the pool of a threaded kernel, linked in
        (tmp_path / "support.c").write_text(support.SOURCE)
        sources.append("support.c")
    libs = ([f"-L{blas.locate().lib_dir}"] if src.needs_blas else []) + kbuild.link_libs(
        src.needs_blas)
    build_id = kbuild.build_id(src.c_source, src.needs_blas)
    subprocess.run([kbuild.toolchain().cc_path, *kbuild.compile_flags(),
                    f"-ffile-prefix-map={tmp_path}=.", f"-Wl,--build-id=0x{build_id}", "-o",
                    "kernel.so", *sources, *libs], cwd=tmp_path, check=True)
    assert built == (tmp_path / "kernel.so").read_bytes()


def _conv_sig(x, w, stride, pad, act=""):
    n, c, h, wd = x
    o, _, kh, kw = w
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    attrs = {"strides": [1, 1, stride, stride], "pads": [pad] * 4, "data_format": "NCHW"}
    if act:
        attrs["fused_activation"] = act
    arrays = [np.zeros(x, np.float32), np.zeros(w, np.float32), np.zeros((o,), np.float32)]
    return make_sig("Conv2D", arrays, [np.zeros((n, o, oh, ow), np.float32)],
                    full_attrs("Conv2D", attrs))


def test_a_kernel_patched_from_its_template_is_the_kernel_compiled(tmp_path):
    """Convolution kernels are their plan, signature and workspace size in one code and data
    layout (cgen.DataTemplate): the template is compiled once per process and each kernel is a
    copy with its own values and build-id, byte for byte the kernel its own text compiles to
    (an im2col one, and a direct 1x1 one whose workspace is only the prepared product's packed
    columns)."""
    from ge.compiler.opcompile import elf
    kbuild._templates.clear()
    sigs = [_conv_sig((1, 8, 9, 9), (4, 8, 3, 3), 1, 1, "Relu"),
            _conv_sig((1, 16, 5, 5), (32, 16, 1, 1), 1, 0)]
    sources = [render(sig) for sig in sigs]
    assert all(src.template is not None for src in sources)
    assert sources[0].template.text == sources[1].template.text
    assert 0 < sources[1].workspace_bytes < sources[0].workspace_bytes
    patched = [kbuild.build(src.c_source, True, (), "conv", src.template) for src in sources]
    assert len(kbuild._templates) == 1
    compiled = [kbuild.build(src.c_source, True, (), "conv") for src in sources]
    assert patched == compiled and patched[0] != patched[1]
    offset, size = elf.build_id_range(patched[1])
    assert patched[1][offset:offset + size].hex() == kbuild.build_id(sources[1].c_source, True)
    # a fused activation of the kernel's own (GeluV2 calls its own epilogue): compiled alone
    assert render(_conv_sig((1, 8, 9, 9), (4, 8, 3, 3), 1, 1, "GeluV2")).template is None


def _needed(so: bytes, tmp_path) -> list:
    path = tmp_path / "needed.so"
    path.write_bytes(so)
    out = subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True,
                         check=True).stdout
    return [line.split("[", 1)[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line]


def test_kernels_name_only_the_libraries_they_call(tmp_path):
    """No libc, no start files (-nostartfiles -nodefaultlibs): a MatMul needs the BLAS, a Sin
    libm, a Relu nothing; each still loads and computes (kernel_check's reference checks)."""
    from ge.compiler.opcompile.build import build
    from kernel_check import check_op
    x = np.linspace(-3, 3, 15, dtype=np.float32).reshape(3, 5)
    w = np.ones((5, 4), np.float32)
    cases = {"MatMulV2": ([x, w], ["libscipy_openblas.so"]), "Sin": ([x], ["libm.so.6"]),
             "Relu": ([x], [])}
    for op, (inputs, needed) in cases.items():
        outs = [np.zeros((3, 4) if op == "MatMulV2" else x.shape, np.float32)]
        src = render(make_sig(op, inputs, outs, full_attrs(op, {})))
        so = build(src.c_source, src.needs_blas, what=op)
        assert _needed(so, tmp_path) == needed, op
        assert b"crtstuff" not in so and b"__dso_handle" not in so, op
        check_op(op, inputs)


def test_a_call_of_an_undeclared_function_is_ep0110_naming_the_kernel():
    source = "int ge_kernel(void) { return ge_not_declared(1); }\n"
    with pytest.raises(kbuild.KernelBuildError) as info:
        kbuild.build(source, False, what="te_bad_kernel")
    assert info.value.code == "EP0110"
    assert "te_bad_kernel" in str(info.value) and "ge_not_declared" in str(info.value)
