"""Pattern-pass scaling: one pattern pass over generated graphs of 10k and 100k nodes.

Each graph is a chain of blocks x -> Identity -> Relu -> Mul(., x) feeding the next block;
the pass replaces every Relu(Identity(x)) by Relu(x).  Prints the time of each size and the
100k/10k ratio (target: <= 12, i.e. close to linear).

    python3 bench/bench_pass_scaling.py [small=10000] [large=100000]
"""
from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from ge.es import GraphBuilder  # noqa: E402
from ge.es.all import Identity, Mul, Relu  # noqa: E402
from ge.passes import (PassStage, PatternFusionPass, pattern,  # noqa: E402
                       register_fusion_pass)
from ge.passes.report import FusionReport  # noqa: E402
from ge.passes.runner import run_stage  # noqa: E402


@register_fusion_pass(name="BenchDropIdentityBeforeRelu", stage=PassStage.BEFORE_INFER_SHAPE)
class BenchDropIdentityBeforeRelu(PatternFusionPass):
    @pattern
    def relu_identity(self, inputs):
        return Relu(Identity(inputs[0]))

    def replacement(self, inputs):
        return Relu(inputs[0])


def make_graph(nodes: int):
    """A chain of 3-node blocks with about `nodes` nodes in total."""
    builder = GraphBuilder(f"chain_{nodes}")
    x = builder.create_input(0, shape=[4])
    for _ in range(max(1, nodes // 3)):
        x = Mul(Relu(Identity(x)), x)
    return builder.build_and_reset([x])


def time_pass(nodes: int) -> tuple[float, int]:
    graph = make_graph(nodes)
    report = FusionReport()
    start = time.perf_counter()
    run_stage(graph, PassStage.BEFORE_INFER_SHAPE, {}, report)
    elapsed = time.perf_counter() - start
    stats = report.graphs[graph.name]["BenchDropIdentityBeforeRelu"]
    return elapsed, stats.effect_times


def main(argv: list[str]) -> int:
    small = int(argv[1]) if len(argv) > 1 else 10_000
    large = int(argv[2]) if len(argv) > 2 else 100_000
    t_small, n_small = time_pass(small)
    t_large, n_large = time_pass(large)
    ratio = t_large / t_small
    print(f"{small} nodes: {t_small:.3f} s ({n_small} rewrites)")
    print(f"{large} nodes: {t_large:.3f} s ({n_large} rewrites)")
    print(f"ratio {large // 1000}k/{small // 1000}k: {ratio:.2f} (target <= 12)")
    return 0 if ratio <= 12 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
