"""Built-in fusion passes: structure after, refusal, numbers, switches and the report."""
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from ge.compiler.api import build_graph
from ge.ops.interpreter import run_graph
from ge.parser.onnx import parse_onnx

# Keep the kernels out of these tests: everything on AiCpu, no C compile.
BASE = {"ge.socVersion": "Ascend310P3", "ge.exec.exclude_engines": "AiCore|AiVec", "ge.exec.precision_mode": "must_keep_origin_dtype",
        "ge.op_compiler_cache_mode": "disable"}
RNG = np.random.default_rng(7)


def _init(name, shape, scale=0.5, positive=False):
    a = RNG.standard_normal(shape).astype(np.float32) * scale
    return numpy_helper.from_array(np.abs(a) + 0.5 if positive else a, name)


def conv_bn_model():
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c", "s", "o", "m", "v"], ["y"], name="bn",
                              epsilon=1e-3),
             helper.make_node("Relu", ["y"], ["z"], name="relu")]
    inits = [_init("w", (4, 3, 3, 3)), _init("b", (4,)), _init("s", (4,), positive=True),
             _init("o", (4,)), _init("m", (4,)), _init("v", (4,), positive=True)]
    g = helper.make_graph(nodes, "cb", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                      [1, 3, 8, 8])],
                          [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def matmul_add_model(bias_shape=(5,)):
    nodes = [helper.make_node("MatMul", ["x", "w"], ["p"], name="mm"),
             helper.make_node("Add", ["p", "b"], ["y"], name="add"),
             helper.make_node("Div", ["y", "d"], ["z"], name="div")]
    inits = [_init("w", (4, 5)), _init("b", bias_shape),
             numpy_helper.from_array(np.array(4.0, np.float32), "d")]
    g = helper.make_graph(nodes, "mm", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                      [2, 3, 4])],
                          [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def compile_model(model, **extra):
    compiled = build_graph(parse_onnx(model, {}), dict(BASE, **extra))
    return compiled, [n.type for n in compiled.graph.nodes]


def effects(compiled, name):
    records = compiled.context.report.to_records()
    return sum(int(r["graph_fusion"].get(name, {}).get("effect_times", 0)) for r in records)


def check_numbers(model, compiled, feeds):
    want = ort.InferenceSession(model.SerializeToString()).run(None, feeds)
    got = run_graph(compiled.graph, list(feeds.values()))
    for w, g in zip(want, got):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


def test_conv_batchnorm_folded_and_numbers_hold():
    model = conv_bn_model()
    compiled, types = compile_model(model)
    assert "BatchNorm" not in types and types.count("Conv2D") == 1
    conv = next(n for n in compiled.graph.nodes if n.type == "Conv2D")
    assert set(conv.origin) >= {"conv", "bn"}         # names survive the rewrite
    assert effects(compiled, "ConvBatchNormFusionPass") == 1
    check_numbers(model, compiled, {"x": RNG.standard_normal((1, 3, 8, 8)).astype(np.float32)})


def test_conv_batchnorm_switched_off_keeps_graph():
    compiled, types = compile_model(conv_bn_model(),
                                    **{"ge.optimizationSwitch": "ConvBatchNormFusionPass:off"})
    assert "BatchNorm" in types
    assert effects(compiled, "ConvBatchNormFusionPass") == 0


def test_matmul_bias_and_scalar_division_fused():
    model = matmul_add_model()
    compiled, types = compile_model(model)
    assert "Add" not in types and "RealDiv" not in types and "Muls" in types
    mm = next(n for n in compiled.graph.nodes if n.type == "BatchMatMulV2")
    assert mm.input(2) is not None                     # the bias input is connected
    assert effects(compiled, "MatMulBiasAddFusionPass") == 1
    assert effects(compiled, "ScalarElementwiseFoldingPass") == 1
    check_numbers(model, compiled, {"x": RNG.standard_normal((2, 3, 4)).astype(np.float32)})


def test_broadcasting_add_is_not_a_bias():
    model = matmul_add_model(bias_shape=(3, 1))        # broadcasts over rows, not a bias
    compiled, types = compile_model(model)
    assert "Add" in types
    assert effects(compiled, "MatMulBiasAddFusionPass") == 0
    check_numbers(model, compiled, {"x": RNG.standard_normal((2, 3, 4)).astype(np.float32)})


@pytest.mark.parametrize("switch", ["MatMulBiasAddFusionPass:off;ScalarElementwiseFoldingPass:off"])
def test_switches_leave_graph_unchanged(switch):
    _, types = compile_model(matmul_add_model(), **{"ge.optimizationSwitch": switch})
    assert "Add" in types and "RealDiv" in types and "Muls" not in types


def test_shape_of_a_static_tensor_folds_to_a_constant():
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Shape", ["r"], ["s"], name="shape"),
             helper.make_node("Cast", ["s"], ["f"], name="cast", to=TensorProto.FLOAT)]
    g = helper.make_graph(nodes, "sh", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                      [2, 5, 7])],
                          [helper.make_tensor_value_info("f", TensorProto.FLOAT, None)])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    compiled, types = compile_model(model)
    assert "Shape" not in types and "Cast" not in types and "Relu" not in types
    check_numbers(model, compiled, {"x": RNG.standard_normal((2, 5, 7)).astype(np.float32)})


def shape_model():
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Shape", ["r"], ["s"], name="shape"),
             helper.make_node("Cast", ["s"], ["f"], name="cast", to=TensorProto.FLOAT),
             helper.make_node("Sigmoid", ["x"], ["unused"], name="dead")]
    g = helper.make_graph(nodes, "sh", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                      [2, 5, 7])],
                          [helper.make_tensor_value_info("f", TensorProto.FLOAT, None)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def test_oo_switches_turn_folding_and_dead_code_elimination_off():
    model = shape_model()
    _, types = compile_model(model)
    assert "Shape" not in types and "Sigmoid" not in types
    compiled, types = compile_model(model, **{"ge.oo.constantFolding": "false"})
    assert "Shape" in types and "Sigmoid" not in types
    check_numbers(model, compiled, {"x": RNG.standard_normal((2, 5, 7)).astype(np.float32)})
    _, types = compile_model(model, **{"ge.oo.deadCodeElimination": "false"})
    assert "Shape" not in types and "Sigmoid" in types


def test_conv_switched_to_nhwc_gets_layout_transposes_and_keeps_numbers():
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["y"], name="conv", strides=[2, 1],
                              dilations=[1, 2], pads=[1, 2, 1, 2])]
    g = helper.make_graph(nodes, "nhwc", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                        [1, 3, 9, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          [_init("w", (4, 3, 3, 3)), _init("b", (4,))])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    graph = parse_onnx(model, {})
    graph.find_node_by_name("conv").set_attr("data_format", "NHWC")  # as a user pass would
    compiled = build_graph(graph, dict(BASE))
    types = [n.type for n in compiled.graph.nodes]
    assert types.count("TransposeD") == 2        # x in, y out (the filter's one is folded)
    conv = next(n for n in compiled.graph.nodes if n.type == "Conv2D")
    assert conv.attr("data_format") == "NHWC" and conv.attr("strides") == [1, 2, 1, 1]
    check_numbers(model, compiled, {"x": RNG.standard_normal((1, 3, 9, 8)).astype(np.float32)})


X_LN = (2, 64, 256)     # broadcasts of more than 64 KB are not folded (prepare.py)


def layer_norm_model(axis=-1, scale_shape=(256,)):
    nodes = [helper.make_node("LayerNormalization", ["x", "s", "b"], ["y"], name="ln",
                              axis=axis, epsilon=1e-5)]
    inits = [_init("s", scale_shape, positive=True), _init("b", scale_shape)]
    g = helper.make_graph(nodes, "ln", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                      list(X_LN))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_layer_norm_reads_its_parameters_without_broadcast_copies():
    """ONNX LayerNormalization maps (as CANN maps it) to LayerNorm of parameters broadcast to
    x's shape; LayerNormBroadcastFoldingPass feeds the parameter rows themselves."""
    model = layer_norm_model()
    feeds = {"x": RNG.standard_normal(X_LN).astype(np.float32)}
    compiled, types = compile_model(model)
    assert "BroadcastTo" not in types and types.count("LayerNorm") == 1
    ln = next(n for n in compiled.graph.nodes if n.type == "LayerNorm")
    assert [list(ln.in_desc(i).shape) for i in (1, 2)] == [[256], [256]]
    assert ln.attr("begin_params_axis") == 2
    assert effects(compiled, "LayerNormBroadcastFoldingPass") == 1
    check_numbers(model, compiled, feeds)
    off, types = compile_model(model, **{"ge.optimizationSwitch":
                                         "LayerNormBroadcastFoldingPass:off"})
    assert types.count("BroadcastTo") == 2 and effects(off, "LayerNormBroadcastFoldingPass") == 0
    check_numbers(model, off, feeds)
    # parameters that still broadcast (one row for the last two dims) keep the copies
    model = layer_norm_model(axis=-2, scale_shape=(1, 256))
    compiled, types = compile_model(model)
    assert types.count("BroadcastTo") == 2
    check_numbers(model, compiled, feeds)
