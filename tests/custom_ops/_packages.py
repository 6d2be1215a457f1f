"""Custom operator packages written by the tests, and the models that use them."""
from __future__ import annotations

import textwrap
from pathlib import Path

import onnx
from onnx import TensorProto, helper

REPO = Path(__file__).resolve().parents[2]
SWISH_PACKAGE = REPO / "examples" / "custom_ops" / "swish"
SWISH_DIR = SWISH_PACKAGE / "ge_custom_swish"

HEADER = """\
import numpy as np
from ge.graph.types import AttrValueType as VT
from ge.ops import AttrSpec, CKernel, CustomOp, CustomPackage, FrameworkMapping, OpDef, Port


def same(ctx):
    return [(ctx.ins[0].shape, ctx.ins[0].dtype)]


def double(inputs, attrs):
    return [inputs[0] * 2]
"""

# the body of a package's __init__.py after HEADER; {name} is the package name
GOOD = """
GE_OP_PACKAGE = CustomPackage("{name}", "0.1", ops=(CustomOp(OpDef(
    "{op}", inputs=(Port("x"),), outputs=(Port("y"),), infer=same, kernel=double)),),
    mappings=(FrameworkMapping("onnx", "com.test::{op}", "{op}"),))
"""


def write_package(root: Path, name: str, body: str, op: str = "Doubler", files=None) -> Path:
    """root/name/__init__.py = HEADER + body (formatted with name and op); extra files."""
    directory = root / name
    directory.mkdir(parents=True)
    (directory / "__init__.py").write_text(HEADER + textwrap.dedent(body).format(name=name,
                                                                                 op=op))
    for filename, text in (files or {}).items():
        (directory / filename).write_text(text)
    return directory


def swish_model(path: Path, dtype=TensorProto.FLOAT, alpha: float = 1.5) -> Path:
    """x -> Relu -> com.example::Swish(alpha) -> Add(x) -> y, [2, 8]."""
    x = helper.make_tensor_value_info("x", dtype, [2, 8])
    y = helper.make_tensor_value_info("y", dtype, [2, 8])
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Swish", ["r"], ["s"], name="swish", domain="com.example",
                              alpha=alpha),
             helper.make_node("Add", ["s", "x"], ["y"], name="add")]
    graph = helper.make_graph(nodes, "swish_net", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                    helper.make_opsetid("com.example", 1)])
    onnx.save(model, path)
    return path


def relu_model(path: Path) -> Path:
    """A model of built-in ops only."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "relu_net",
                              [x], [y])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path
