"""Built-in fusions go through the passes' splice: a product whose two inputs are one tensor
fuses too (one replacement input per producer), the fused node keeps its name, the absorbed
constants go and the numbers hold."""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

from ge.compiler.api import build_graph
from ge.ops.interpreter import run_graph
from ge.parser.onnx import parse_onnx

OPTIONS = {"ge.socVersion": "Ascend310P3", "ge.exec.exclude_engines": "AiCore|AiVec", "ge.exec.precision_mode": "must_keep_origin_dtype",
           "ge.op_compiler_cache_mode": "disable"}
RNG = np.random.default_rng(3)


def square_plus_bias_model(bias):
    nodes = [helper.make_node("MatMul", ["x", "x"], ["p"], name="mm"),
             helper.make_node("Add", ["p", "b"], ["y"], name="add")]
    g = helper.make_graph(nodes, "sq", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                      [4, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          [numpy_helper.from_array(bias, "b")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def test_matmul_of_one_tensor_with_itself_takes_the_bias():
    bias = RNG.standard_normal(4).astype(np.float32)
    compiled = build_graph(parse_onnx(square_plus_bias_model(bias), {}), OPTIONS)
    types = [n.type for n in compiled.graph.topo_order()]
    assert "Add" not in types
    mm = next(n for n in compiled.graph.nodes if n.type.endswith("MatMulV2"))
    assert mm.name == "mm"                                  # the fused node keeps its name
    assert mm.input(0) == mm.input(1)                       # still one producer for both
    assert set(mm.origin) >= {"mm", "add"}
    assert types.count("Const") == 1                        # the new bias; the old one is gone
    x = RNG.standard_normal((4, 4)).astype(np.float32)
    np.testing.assert_allclose(run_graph(compiled.graph, [x])[0], x @ x + bias, rtol=1e-5,
                               atol=1e-6)
