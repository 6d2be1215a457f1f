"""Input graph of the move-relu sample (as CANN's cpp/data/es_gen_air.py):
inputs [8,64,128], [2,64,128], [6,64,128] -> ConcatV2(list, 0, N=3) -> Relu.

    python3 es_gen_air.py [graph.air] [consumer op type, default Relu]
"""
import sys

from ge.es import GraphBuilder
from ge.es.all import ConcatV2, Relu, Sigmoid

_CONSUMERS = {"Relu": Relu, "Sigmoid": Sigmoid}


def make_graph(consumer: str = "Relu"):
    builder = GraphBuilder("concat_relu")
    xs = [builder.create_input(i, shape=[n, 64, 128]) for i, n in enumerate((8, 2, 6))]
    concat = ConcatV2(xs, 0, N=3)
    return builder.build_and_reset([_CONSUMERS[consumer](concat)])


if __name__ == "__main__":
    make_graph(sys.argv[2] if len(sys.argv) > 2 else "Relu").save_to_air(
        sys.argv[1] if len(sys.argv) > 1 else "graph.air")
