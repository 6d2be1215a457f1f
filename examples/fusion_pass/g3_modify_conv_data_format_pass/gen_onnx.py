"""Input model of the conv data-format sample:
Conv(6->6, k3, s3) -> Transpose(0,2,3,1) -> Add 1.0 -> Transpose(0,3,1,2).

    python3 gen_onnx.py [model.onnx] [second perm, e.g. 0,3,1,2]
"""
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper


def make_model(second_perm=(0, 3, 1, 2), seed: int = 0):
    rng = np.random.default_rng(seed)
    weight = rng.standard_normal((6, 6, 3, 3)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", kernel_shape=[3, 3],
                              strides=[3, 3], pads=[0, 0, 0, 0]),
             helper.make_node("Transpose", ["c"], ["t1"], name="to_nhwc", perm=[0, 2, 3, 1]),
             helper.make_node("Add", ["t1", "one"], ["a"], name="add_one"),
             helper.make_node("Transpose", ["a"], ["out"], name="to_nchw",
                              perm=list(second_perm))]
    graph = helper.make_graph(
        nodes, "conv_transpose",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 6, 9, 9])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)],
        initializer=[numpy_helper.from_array(weight, "w"),
                     helper.make_tensor("one", TensorProto.FLOAT, [], [1.0])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


if __name__ == "__main__":
    import onnx
    perm = tuple(int(v) for v in sys.argv[2].split(",")) if len(sys.argv) > 2 else (0, 3, 1, 2)
    onnx.save(make_model(perm), sys.argv[1] if len(sys.argv) > 1 else "conv_transpose.onnx")
