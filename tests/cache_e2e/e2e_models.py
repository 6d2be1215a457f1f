"""Small ONNX models of the end-to-end cache tests (seeded, byte-identical on every build)."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def small_conv(seed: int = 7, channels: int = 4) -> onnx.ModelProto:
    """Conv3x3-Relu-MaxPool-Conv1x1-Add-GlobalAveragePool-Flatten-Gemm on [1,3,8,8]: a handful
    of kernels (conv, activation, pooling, elementwise, matmul families), compiled in ~1 s.
    The Add broadcasts a per-channel constant, so it stays an elementwise kernel (an Add of
    two conv-shaped tensors would become the convolution's residual: ConvAddFusionPass)."""
    rng = np.random.default_rng(seed)
    c = channels

    def init(name, shape):
        return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)

    inits = [init("w1", (c, 3, 3, 3)), init("b1", (c,)), init("w2", (c, c, 1, 1)),
             init("b2", (c,)), init("wg", (5, c)), init("bg", (5,)), init("ba", (1, c, 1, 1))]
    nodes = [
        helper.make_node("Conv", ["input", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Conv", ["p1", "w2", "b2"], ["c2"], name="conv2"),
        helper.make_node("Add", ["c2", "ba"], ["a1"], name="add1"),
        helper.make_node("GlobalAveragePool", ["a1"], ["g1"], name="gap"),
        helper.make_node("Flatten", ["g1"], ["f1"], name="flatten"),
        helper.make_node("Gemm", ["f1", "wg", "bg"], ["output"], name="fc", transB=1),
    ]
    graph = helper.make_graph(
        nodes, f"small_conv{c}",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 5])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="pyatc-tests")
    onnx.checker.check_model(model)
    return model


def tiny(seed: int = 3) -> onnx.ModelProto:
    """Relu, Add and Sigmoid on [2,8]: three small elementwise kernels (crash-safety loops)."""
    rng = np.random.default_rng(seed)
    bias = numpy_helper.from_array(rng.standard_normal((2, 8)).astype(np.float32), "bias")
    nodes = [
        helper.make_node("Relu", ["input"], ["r"], name="relu"),
        helper.make_node("Add", ["r", "bias"], ["a"], name="add"),
        helper.make_node("Sigmoid", ["a"], ["output"], name="sigmoid"),
    ]
    graph = helper.make_graph(
        nodes, "tiny",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [2, 8])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [2, 8])], [bias])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="pyatc-tests")
    onnx.checker.check_model(model)
    return model
