"""Models of the precision tests (CI sizes)."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HAZARD_OFFSET = 3000.0     # float16 spacing near 3000 is 2: the features' spread is lost


def hazard_model() -> onnx.ModelProto:
    """x[8,64] (raw features around HAZARD_OFFSET, spread ~1) -> LayerNormalization "ln" ->
    MatMul "proj" -> Softmax "probs".  In float16 the layer norm's input keeps only a few
    levels of the spread, so its output (and everything after it) is wrong; pinned to float32
    the layer norm sees the exact input and the float16 ops behind it are harmless."""
    rng = np.random.default_rng(3)
    gamma = np.ones(64, np.float32)
    beta = np.zeros(64, np.float32)
    w = (rng.standard_normal((64, 16)) * 0.2).astype(np.float32)
    nodes = [
        helper.make_node("LayerNormalization", ["x", "gamma", "beta"], ["n"], name="ln",
                         axis=-1, epsilon=1e-5),
        helper.make_node("MatMul", ["n", "w"], ["logits"], name="proj"),
        helper.make_node("Softmax", ["logits"], ["probs"], name="probs", axis=-1),
    ]
    graph = helper.make_graph(
        nodes, "hazard", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 64])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [8, 16])],
        [numpy_helper.from_array(gamma, "gamma"), numpy_helper.from_array(beta, "beta"),
         numpy_helper.from_array(w, "w")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def hazard_inputs() -> list:
    rng = np.random.default_rng(4)
    return [(HAZARD_OFFSET + rng.standard_normal((8, 64))).astype(np.float32)]
