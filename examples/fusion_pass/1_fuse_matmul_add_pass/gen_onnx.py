"""Input model of the MatMul + Add samples (1 and 2): y = matmul(x, w) + z.

    python3 gen_onnx.py [model.onnx] [float32|float16]
"""
import sys

from onnx import TensorProto, helper

_DTYPES = {"float32": TensorProto.FLOAT, "float16": TensorProto.FLOAT16}


def make_model(dtype: str = "float32"):
    elem = _DTYPES[dtype]
    nodes = [helper.make_node("MatMul", ["x", "y"], ["mm"], name="matmul"),
             helper.make_node("Add", ["mm", "z"], ["out"], name="add")]
    graph = helper.make_graph(
        nodes, "matmul_add",
        [helper.make_tensor_value_info("x", elem, [2, 3]),
         helper.make_tensor_value_info("y", elem, [3, 2]),
         helper.make_tensor_value_info("z", elem, [2, 2])],
        [helper.make_tensor_value_info("out", elem, [2, 2])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


if __name__ == "__main__":
    import onnx
    onnx.save(make_model(sys.argv[2] if len(sys.argv) > 2 else "float32"),
              sys.argv[1] if len(sys.argv) > 1 else "matmul_add.onnx")
