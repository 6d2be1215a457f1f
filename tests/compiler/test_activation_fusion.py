"""GeluErfFusionPass, ConvActivationFusionPass, MatMulActivationFusionPass: structure after,
refusals, switches, and the numbers against onnxruntime both on the reference kernels (AiCpu)
and on the compiled kernels through the host runtime."""
import math

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from ge.compiler.api import save_om
from ge.ops.defs._common import FUSED_ACTIVATION
from ge.ops.interpreter import run_graph

from ._fusion_checks import compile_types as _compile, fusion_effects as _effects

REFERENCE = {"ge.socVersion": "Ascend310P3", "ge.exec.exclude_engines": "AiCore|AiVec",
             "ge.op_compiler_cache_mode": "disable",
             "ge.exec.precision_mode": "must_keep_origin_dtype"}
COMPILED = {"ge.socVersion": "Ascend310P3", "ge.exec.precision_mode": "must_keep_origin_dtype"}
RNG = np.random.default_rng(11)


def _init(name, shape, scale=0.5):
    return numpy_helper.from_array((RNG.standard_normal(shape) * scale).astype(np.float32), name)


def _scalar(name, value):
    return numpy_helper.from_array(np.array(value, np.float32), name)


def _model(nodes, x_shape, inits):
    g = helper.make_graph(nodes, "m", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                     list(x_shape))],
                          [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def conv_relu_model(extra_reader=False, groups=1):
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1],
                              group=groups),
             helper.make_node("Relu", ["c"], ["r"], name="relu")]
    nodes.append(helper.make_node("Add", ["r", "c"], ["z"], name="reuse") if extra_reader
                 else helper.make_node("Identity", ["r"], ["z"], name="out"))
    return _model(nodes, (1, 4, 9, 9), [_init("w", (8, 4 // groups, 3, 3)), _init("b", (8,))])


GELU_ORDERS = {   # how exporters write x * 0.5 * (1 + erf(x / sqrt 2)), after MatMul + bias
    "x_times_1pe_then_half": lambda: [helper.make_node("Mul", ["h", "one_pe"], ["m"]),
                                      helper.make_node("Mul", ["m", "half"], ["z"])],
    "half_x_times_1pe": lambda: [helper.make_node("Mul", ["h", "half"], ["hx"]),
                                 helper.make_node("Mul", ["hx", "one_pe"], ["z"])],
    "x_times_half_1pe": lambda: [helper.make_node("Mul", ["one_pe", "half"], ["hp"]),
                                 helper.make_node("Mul", ["h", "hp"], ["z"])],
}


def matmul_gelu_model(order):
    nodes = [helper.make_node("MatMul", ["x", "w"], ["p"]),
             helper.make_node("Add", ["p", "b"], ["h"]),
             helper.make_node("Div", ["h", "sqrt2"], ["d"]),
             helper.make_node("Erf", ["d"], ["e"]),
             helper.make_node("Add", ["e", "one"], ["one_pe"])] + GELU_ORDERS[order]()
    inits = [_init("w", (16, 24)), _init("b", (24,)), _scalar("sqrt2", math.sqrt(2.0)),
             _scalar("one", 1.0), _scalar("half", 0.5)]
    return _model(nodes, (2, 5, 16), inits)


def _ort(model, x):
    return ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]


def _check_reference(model, compiled, x):
    np.testing.assert_allclose(run_graph(compiled.graph, [x])[0], _ort(model, x),
                               rtol=1e-4, atol=1e-5)


def _check_runtime(model, tmp_path, x, pass_name):
    import ge.runtime
    compiled, _ = _compile(model, COMPILED)
    assert _effects(compiled, pass_name) == 1
    path = str(tmp_path / "m.om")
    save_om(path, compiled, "test")
    with ge.runtime.load(path, threads=1) as om:
        assert "AiCore" in om.engines.values()
        np.testing.assert_allclose(om.run([x])[0], _ort(model, x), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("groups", [1, 4])
def test_conv_relu_fused(groups, tmp_path):
    model = conv_relu_model(groups=groups)
    compiled, types = _compile(model, REFERENCE)
    assert "Relu" not in types
    conv = next(n for n in compiled.graph.nodes if n.type == "Conv2D")
    assert conv.attr(FUSED_ACTIVATION) == "Relu" and {"conv", "relu"} <= set(conv.origin)
    assert _effects(compiled, "ConvActivationFusionPass") == 1
    x = RNG.standard_normal((1, 4, 9, 9)).astype(np.float32)
    _check_reference(model, compiled, x)
    _check_runtime(model, tmp_path, x, "ConvActivationFusionPass")


def test_conv_read_by_another_op_keeps_its_relu():
    model = conv_relu_model(extra_reader=True)
    compiled, types = _compile(model, REFERENCE)
    assert "Relu" in types and _effects(compiled, "ConvActivationFusionPass") == 0
    _check_reference(model, compiled, RNG.standard_normal((1, 4, 9, 9)).astype(np.float32))


def test_switched_off_keeps_the_relu():
    compiled, types = _compile(conv_relu_model(), REFERENCE,
                               **{"ge.optimizationSwitch": "ConvActivationFusionPass:off"})
    assert "Relu" in types and _effects(compiled, "ConvActivationFusionPass") == 0


@pytest.mark.parametrize("order", sorted(GELU_ORDERS))
def test_matmul_bias_gelu_fused(order, tmp_path):
    model = matmul_gelu_model(order)
    compiled, types = _compile(model, REFERENCE)
    assert types.count("BatchMatMulV2") == 1 and not {"Erf", "Mul", "Muls", "Adds",
                                                        "GeluV2"} & set(types)
    mm = next(n for n in compiled.graph.nodes if n.type == "BatchMatMulV2")
    assert mm.attr(FUSED_ACTIVATION) == "GeluV2" and mm.input(2) is not None
    assert _effects(compiled, "GeluErfFusionPass") == 1
    x = RNG.standard_normal((2, 5, 16)).astype(np.float32)
    _check_reference(model, compiled, x)
    _check_runtime(model, tmp_path, x, "MatMulActivationFusionPass")


def test_erf_with_another_scale_is_not_gelu():
    model = matmul_gelu_model("x_times_1pe_then_half")
    model.graph.initializer[2].CopyFrom(_scalar("sqrt2", 1.5))
    compiled, types = _compile(model, REFERENCE)
    assert "Erf" in types and _effects(compiled, "GeluErfFusionPass") == 0
    _check_reference(model, compiled, RNG.standard_normal((2, 5, 16)).astype(np.float32))


def test_gelu_switched_off_keeps_erf_and_the_matmul_unfused():
    compiled, types = _compile(matmul_gelu_model("half_x_times_1pe"), REFERENCE,
                               **{"ge.optimizationSwitch": "GeluErfFusionPass:off"})
    assert "Erf" in types
    mm = next(n for n in compiled.graph.nodes if n.type == "BatchMatMulV2")
    assert not mm.attr(FUSED_ACTIVATION)
