"""Input model of the grouped-conv decomposition: Conv(6->6, k3, s3, groups) then MaxPool(3, 3).

    python3 gen_onnx.py [model.onnx] [groups]
"""
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper


def make_model(groups: int = 3, seed: int = 0):
    rng = np.random.default_rng(seed)
    weight = rng.standard_normal((6, 6 // groups, 3, 3)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", group=groups,
                              kernel_shape=[3, 3], strides=[3, 3], pads=[0, 0, 0, 0]),
             helper.make_node("MaxPool", ["c"], ["out"], name="pool", kernel_shape=[3, 3],
                              strides=[3, 3])]
    graph = helper.make_graph(
        nodes, "grouped_conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 6, 9, 9])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 6, 1, 1])],
        initializer=[numpy_helper.from_array(weight, "w")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


if __name__ == "__main__":
    import onnx
    onnx.save(make_model(int(sys.argv[2]) if len(sys.argv) > 2 else 3),
              sys.argv[1] if len(sys.argv) > 1 else "grouped_conv.onnx")
