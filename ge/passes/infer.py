"""Shape inference over replacement graphs: `infer_shape` (spec/python-passes.md §3.11).

Descs of replacement Data nodes come from the boundary producers; then every node is inferred
in topological order through `ge.ops.infer_node` (docs/ops-registry.md), with constant
inputs passed as values.  Nothing here knows an op.
"""
from __future__ import annotations

from typing import Optional

from ge import ops
from ge.graph import CONST_TYPES as _CONST_TYPES, Graph, Node
from ge.ops import Role

__all__ = ["infer_shape", "infer_nodes", "InferError", "boundary_producers_of_node"]

# Nodes that carry their own descs: graph inputs and outputs, constants.
_NOT_INFERRED = frozenset({Role.DATA, Role.OUTPUT, Role.CONST})


class InferError(Exception):
    pass


def boundary_producers_of_node(node: Node) -> list[tuple]:
    """One (producer, out index) per distinct producer output of the node's connected inputs."""
    seen: list[tuple] = []
    for edge in node.inputs():
        if edge is not None and edge not in seen:
            seen.append(edge)
    return seen


def _const_value(node: Node):
    if node.type in _CONST_TYPES and node.has_attr("value"):
        return node.get_attr("value").numpy()
    return None


def infer_nodes(nodes: list[Node], values: Optional[dict] = None) -> None:
    """Infer output descs of `nodes` (given in topological order) in place, through
    `ge.ops.infer_node`; `values` maps (producer name, output index) to constant arrays."""
    for node in nodes:
        if ops.role_of(node.type) in _NOT_INFERRED:
            continue
        ops.infer_node(node, values or {})


def _producers_of(source) -> tuple[list, str, str]:
    from ._native import MatchResult
    from .boundary import SubgraphBoundary
    if isinstance(source, MatchResult):
        match = source._check()
        return list(match.input_producers), "MatchResult", ""
    if isinstance(source, Node):
        return boundary_producers_of_node(source), "Node", source.name
    if isinstance(source, SubgraphBoundary):
        prods = []
        for anchors in source.input_anchors():
            node, idx = anchors[0]
            prods.append(node.input(idx))
        return prods, "SubgraphBoundary", ""
    raise TypeError("infer_shape source must be a MatchResult, a Node or a SubgraphBoundary, "
                    f"got {type(source).__name__}")


def infer_shape(replacement: Graph, source) -> None:
    """Copy boundary descs onto the replacement's Data nodes and infer every node."""
    if not isinstance(replacement, Graph):
        raise TypeError(f"infer_shape expects a ge.graph.Graph, got {type(replacement).__name__}")
    producers, source_type, source_name = _producers_of(source)
    if not replacement.nodes:
        raise RuntimeError(f"infer_shape failed, replacement_graph={replacement.name}, "
                           f"source_type={source_type}: replacement graph has no nodes")
    values: dict = {}
    try:
        for data in replacement.data_nodes():
            k = data.attr("index", 0)
            if not 0 <= k < len(producers) or producers[k] is None:
                raise InferError(f"Data {data.name} has index {k} but the source has "
                                 f"{len(producers)} inputs")
            src, idx = producers[k]
            desc = src.get_output_desc(idx)
            data.update_output_desc(0, desc)
            if data.num_inputs:
                data.update_input_desc(0, desc)
            for dst, j in data.consumers(0):
                dst.update_input_desc(j, desc)
            value = _const_value(src)
            if value is not None:
                values[(data.name, 0)] = value
        infer_nodes(replacement.topo_order(), values)
        net = replacement.output_node()
        if net is not None:
            for i, edge in enumerate(net.inputs()):
                if edge is not None:
                    net.update_input_desc(i, edge[0].out_desc(edge[1]))
    except Exception as exc:  # every failure is reported with the documented text
        name = f", source_name={source_name}" if source_name else ""
        raise RuntimeError(f"infer_shape failed, replacement_graph={replacement.name}, "
                           f"source_type={source_type}{name}: {exc}") from exc
