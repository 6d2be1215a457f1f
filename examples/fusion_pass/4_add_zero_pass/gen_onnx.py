"""Input model of the add-zero samples: out = (x + 0.0) + y, x and y float32 [2, 2].

    python3 gen_onnx.py [model.onnx] [zero value]
"""
import sys

from onnx import TensorProto, helper


def make_model(zero: float = 0.0):
    nodes = [helper.make_node("Add", ["x", "zero"], ["x0"], name="add_zero"),
             helper.make_node("Add", ["x0", "y"], ["out"], name="add")]
    graph = helper.make_graph(
        nodes, "add_zero",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [2, 2])],
        initializer=[helper.make_tensor("zero", TensorProto.FLOAT, [], [zero])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


if __name__ == "__main__":
    import onnx
    onnx.save(make_model(float(sys.argv[2]) if len(sys.argv) > 2 else 0.0),
              sys.argv[1] if len(sys.argv) > 1 else "add_zero.onnx")
