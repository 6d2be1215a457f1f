"""Every validation rule of a package is a coded error naming the package, the file and the
op; nothing is written; the built-in ops and the other packages stay registered."""
from __future__ import annotations

import pytest

from .conftest import ARGS
from ._packages import GOOD, relu_model, write_package

BAD_KERNEL = "int ge_kernel(void *const *inputs, void *const *outputs, void *ws)\n{ oops; }\n"
GOOD_KERNEL = ("int ge_kernel(void *const *inputs, void *const *outputs, void *ws)\n"
               "{ (void)inputs; (void)outputs; (void)ws; return 0; }\n")

# rule -> (__init__ body, extra files, code, expected message part, op named)
CASES = {
    "no shape inference": ("""
        GE_OP_PACKAGE = CustomPackage("{name}", "1", ops=(CustomOp(OpDef(
            "Tripler", inputs=(Port("x"),), outputs=(Port("y"),), kernel=double)),))
        """, {}, "EP0901", "is invalid: it has no shape inference (OpDef.infer)", "Tripler"),
    "no reference": ("""
        GE_OP_PACKAGE = CustomPackage("{name}", "1", ops=(CustomOp(OpDef(
            "Tripler", inputs=(Port("x"),), outputs=(Port("y"),), infer=same)),))
        """, {}, "EP0901", "it has no numpy reference implementation (OpDef.kernel)",
        "Tripler"),
    "no version": ("""
        GE_OP_PACKAGE = CustomPackage("{name}", "", ops=())
        """, {}, "EP0901", "the package needs a name and a version", "-"),
    "clash with a built-in op": ("""
        GE_OP_PACKAGE = CustomPackage("{name}", "1", ops=(CustomOp(OpDef(
            "Relu", inputs=(Port("x"),), outputs=(Port("y"),), infer=same, kernel=double)),))
        """, {}, "EP0902", "is already defined by the built-in ops", "Relu"),
    "clash with another package": (GOOD, {}, "EP0902",
                                   "is already defined by package good_pkg", "Doubler"),
    "kernel that does not compile": ("""
        GE_OP_PACKAGE = CustomPackage("{name}", "1", ops=(CustomOp(OpDef(
            "Tripler", inputs=(Port("x"),), outputs=(Port("y"),), infer=same, kernel=double),
            c_kernel=CKernel("tripler.c")),))
        """, {"tripler.c": BAD_KERNEL}, "EP0903", "does not compile: ", "Tripler"),
    "mapping to an op that does not exist": ("""
        GE_OP_PACKAGE = CustomPackage("{name}", "1", mappings=(
            FrameworkMapping("onnx", "com.test::Nothing", "NoSuchOp"),))
        """, {}, "EP0904", "Mapping onnx com.test::Nothing of custom operator package", "NoSuchOp"),
    "bad opset range": ("""
        GE_OP_PACKAGE = CustomPackage("{name}", "1", mappings=(
            FrameworkMapping("onnx", "com.test::Relu2", "Relu", opsets=(0, "x")),))
        """, {}, "EP0901", "opsets must be (first, last)", "Relu"),
    "raises on import": ("""
        raise RuntimeError("broken on purpose")
        """, {}, "EP0900", "Reason: RuntimeError: broken on purpose.", ""),
    "no package declaration": ("""
        VALUE = 1
        """, {}, "EP0900", "it defines no GE_OP_PACKAGE = ge.ops.CustomPackage(...)", ""),
}


@pytest.mark.parametrize("rule", list(CASES))
def test_bad_package_is_refused_alone(rule, atc_main, tmp_path, monkeypatch):
    from ge import ops
    from ge.ops.custom import custom_op, loaded_packages
    body, files, code, part, op = CASES[rule]
    good = write_package(tmp_path, "good_pkg", GOOD)
    bad = write_package(tmp_path, "bad_pkg", body, files=files)
    source = relu_model(tmp_path / "relu.onnx")
    path = f"{good}:{bad}"
    run = atc_main("--framework=5", f"--model={source}", "--output=relu", *ARGS, cwd=tmp_path,
                   env={"ASCEND_CUSTOM_OPP_PATH": path})
    assert run.rc == 255 and "Traceback" not in run.text
    (headline,) = [line for line in run.stdout.splitlines() if f"({code}):" in line]
    assert part in headline and "bad_pkg" in headline
    assert str(bad) in headline                  # the file: the package's module or directory
    if op not in ("", "-"):
        assert f"op {op}" in headline or f"Op {op} " in headline
    assert not (tmp_path / "relu.om").exists()
    # what stays: every built-in op and the good package, never a part of the bad one
    assert ops.get("Relu") is not None and ops.get("Tripler") is None
    assert custom_op("Doubler").package == "good_pkg" and "bad_pkg" not in loaded_packages()
    # the same compile without the bad package succeeds
    run = atc_main("--framework=5", f"--model={source}", "--output=relu", *ARGS, cwd=tmp_path,
                   env={"ASCEND_CUSTOM_OPP_PATH": str(good)})
    assert run.rc == 0, run.text
    assert (tmp_path / "relu.om").exists()


def test_first_package_of_a_name_wins(tmp_path, monkeypatch):
    """The same package twice (a development copy before an installed one): the first in
    ASCEND_CUSTOM_OPP_PATH order is loaded, the later one is left out with WP0900."""
    from ge.errors import take_warnings
    from ge.ops.custom import custom_op, ensure_loaded
    first = write_package(tmp_path / "a", "pkg", GOOD)
    second = write_package(tmp_path / "b", "pkg", GOOD)
    monkeypatch.setenv("ASCEND_CUSTOM_OPP_PATH", f"{first}:{second}")
    take_warnings()
    assert ensure_loaded() == {"pkg": "0.1"}
    assert custom_op("Doubler").file == str(first / "__init__.py")
    (warning,) = take_warnings()
    assert warning.code == "WP0900" and str(second) in str(warning)


def test_a_good_kernel_compiles_at_load(tmp_path, monkeypatch):
    from ge.compiler.api import load_custom_ops
    pkg = write_package(tmp_path, "ok_pkg", """
        GE_OP_PACKAGE = CustomPackage("{name}", "1", ops=(CustomOp(OpDef(
            "Tripler", inputs=(Port("x"),), outputs=(Port("y"),), infer=same, kernel=double),
            c_kernel=CKernel("tripler.c")),))
        """, files={"tripler.c": GOOD_KERNEL})
    monkeypatch.setenv("ASCEND_CUSTOM_OPP_PATH", str(pkg))
    assert load_custom_ops() == {"ok_pkg": "1"}


def test_attribute_conversion_that_raises_names_the_node(atc_main, tmp_path):
    """A mapping onto a built-in op whose attribute conversion raises: the parser's coded
    error for that node, not an internal error."""
    import onnx
    from onnx import TensorProto, helper
    pkg = write_package(tmp_path, "boom_pkg", """
        GE_OP_PACKAGE = CustomPackage("{name}", "1", mappings=(
            FrameworkMapping("onnx", "com.test::Boom", "Relu", attrs=lambda a: 1 / 0),))
        """)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])
    graph = helper.make_graph([helper.make_node("Boom", ["x"], ["y"], name="boom",
                                                domain="com.test")], "g", [x], [y])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                      helper.make_opsetid("com.test", 1)]),
              tmp_path / "boom.onnx")
    run = atc_main("--framework=5", f"--model={tmp_path / 'boom.onnx'}", "--output=boom", *ARGS,
                   cwd=tmp_path, env={"ASCEND_CUSTOM_OPP_PATH": str(pkg)})
    assert run.rc == 255 and "E19999" not in run.text and "Traceback" not in run.text
    assert ("the attribute conversion of its custom operator package raised "
            "ZeroDivisionError: division by zero") in run.stdout
    assert "boom" in run.stdout and not (tmp_path / "boom.om").exists()
