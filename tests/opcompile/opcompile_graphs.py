"""Small shape-inferred graphs for placement and compile_ops tests."""
import numpy as np

from ge.compiler import prepare
from ge.graph import Graph
from ge.graph.tensor import Tensor, TensorDesc
from ge.graph.types import DataType, Format


def conv_relu_graph(dtype=DataType.DT_FLOAT, relus: int = 1) -> Graph:
    """x -> Conv2D(w) -> Relu (xN, equal shapes: one shared kernel) -> NetOutput."""
    g = Graph("net")
    x = g.add_node("Data", "x", attrs={"index": 0}, input_names=["x"], output_names=["y"])
    d = TensorDesc([1, 3, 8, 8], Format.FORMAT_NCHW, dtype)
    x.update_input_desc(0, d)
    x.update_output_desc(0, d)
    npdt = {DataType.DT_FLOAT16: np.float16, DataType.DT_INT32: np.int32}.get(dtype, np.float32)
    w = g.add_node("Const", "w", attrs={"value": Tensor.from_numpy(np.ones((4, 3, 3, 3), npdt))},
                   output_names=["y"])
    prev = g.add_node("Conv2D", "conv", inputs=[(x, 0), (w, 0)], input_names=["x", "filter"],
                      output_names=["y"], attrs={"strides": [1, 1, 1, 1], "pads": [1, 1, 1, 1],
                                                 "data_format": "NCHW"})
    for k in range(relus):
        prev = g.add_node("Relu", f"relu{k}", inputs=[(prev, 0)], input_names=["x"],
                          output_names=["y"])
    g.add_node("NetOutput", "out", inputs=[(prev, 0)], input_names=["x0"], output_names=[])
    prepare.infer_shapes(g)
    return g
