"""Input graph of the capture-tensor sample built with ge.es, as CANN's torchair run builds it:
every node carries its tensor descs from the start, so `meet_requirements` sees the real Add
input dtypes already at BeforeInferShape (an ONNX model's interior descs are only filled by
shape inference, after that stage).  y = MatMul(x, w) + z, x [2,3], w [3,2], z [2,2].

    python3 es_gen_air.py [graph.air] [float32|float16]     (float16: refused by the pass)
"""
import sys

from ge.es import GraphBuilder
from ge.es.all import Add, MatMul
from ge.graph import DataType

_DTYPES = {"float32": DataType.DT_FLOAT, "float16": DataType.DT_FLOAT16}


def make_graph(dtype: str = "float32"):
    builder = GraphBuilder("matmul_add")
    x, w, z = (builder.create_input(i, shape=shape, data_type=_DTYPES[dtype])
               for i, shape in enumerate(([2, 3], [3, 2], [2, 2])))
    return builder.build_and_reset([Add(MatMul(x, w), z)])


if __name__ == "__main__":
    make_graph(sys.argv[2] if len(sys.argv) > 2 else "float32").save_to_air(
        sys.argv[1] if len(sys.argv) > 1 else "graph.air")
