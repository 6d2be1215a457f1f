"""A graph with n distinct compiled kernels: n independent Data -> Relu chains of distinct
shapes, shapes inferred and engines placed (what the cache and operator-compiler tests compile)."""
from __future__ import annotations


def relu_chains(n: int, prefix: str = "r"):
    from ge.compiler import prepare
    from ge.compiler.engines import place_engines
    from ge.graph import Graph
    from ge.graph.tensor import TensorDesc
    from ge.graph.types import DataType, Format
    g = Graph("chains")
    relus = []
    for k in range(n):
        x = g.add_node("Data", f"x{k}", attrs={"index": k}, input_names=["x"],
                       output_names=["y"])
        desc = TensorDesc([2, k + 3], Format.FORMAT_ND, DataType.DT_FLOAT)
        x.update_input_desc(0, desc)
        x.update_output_desc(0, desc)
        relus.append(g.add_node("Relu", f"{prefix}{k}", inputs=[(x, 0)], input_names=["x"],
                                output_names=["y"]))
    g.add_node("NetOutput", "o", inputs=[(r, 0) for r in relus],
               input_names=[f"x{k}" for k in range(n)], output_names=[])
    prepare.infer_shapes(g)
    place_engines(g, {})
    return g
