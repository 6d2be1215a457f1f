"""Input graphs of the matcher-config sample, built with ge.es (as CANN's es_forward_*.py):

    variant "match"       MatMul(in1, in2, None, transpose_x1=False) + Const [[0.1,0.1],[0.1,0.1]]
    variant "transpose"   transpose_x1=True          -> no match (IR attribute differs)
    variant "const"       constant [[0.1,0.1],[0.2,0.2]] -> no match (constant value differs)

    python3 es_gen_air.py [graph.air] [variant]
"""
import sys

from ge.es import GraphBuilder
from ge.es.all import Add, Const, MatMul
from ge.graph import DataType, Tensor

_VARIANTS = {"match": (False, [[0.1, 0.1], [0.1, 0.1]]),
             "transpose": (True, [[0.1, 0.1], [0.1, 0.1]]),
             "const": (False, [[0.1, 0.1], [0.2, 0.2]])}


def make_graph(variant: str = "match"):
    transpose_x1, bias = _VARIANTS[variant]
    builder = GraphBuilder("matmul_add")
    shape1 = [3, 2] if transpose_x1 else [2, 3]
    in1 = builder.create_input(0, shape=shape1)
    in2 = builder.create_input(1, shape=[3, 2])
    matmul = MatMul(in1, in2, None, transpose_x1=transpose_x1, transpose_x2=False)
    const = Const(builder, value=Tensor(bias, data_type=DataType.DT_FLOAT, shape=[2, 2]))
    return builder.build_and_reset([Add(matmul, const)])


if __name__ == "__main__":
    make_graph(sys.argv[2] if len(sys.argv) > 2 else "match").save_to_air(
        sys.argv[1] if len(sys.argv) > 1 else "graph.air")
