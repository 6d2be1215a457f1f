"""Control flow made static once its inputs are known (part of graph preparation, between
folding rounds): small constants are pushed into the subgraphs that read them, so that shape
arithmetic inside a branch folds like any other; an If whose condition became a constant is
replaced by the branch it would run (what GE's CondRemovePass does)."""
from __future__ import annotations

from ge import ops
from ge.graph import Graph, Node
from ge.graph.attr_names import ATTR_PARENT_INDEX
from ge.ops import Role

from .graph_utils import const_value, input_const, make_const, remove_subgraphs_of

__all__ = ["push_constants", "inline_constant_ifs", "subgraphs_of"]

# Constants copied into a subgraph stay this small (shape arithmetic, pads, axes): a weight
# stays a parent input and is read through the branch's Data node.
PUSH_LIMIT_ELEMENTS = 1024
# The branch's own inputs and output: not copied when it is inlined.
_BOUNDARY_ROLES = (Role.DATA, Role.OUTPUT)


def subgraphs_of(graph: Graph, node: Node) -> list[Graph]:
    return [graph.get_subgraph(name) for name in node.subgraphs.values()
            if graph.get_subgraph(name) is not None]


def push_constants(graph: Graph) -> int:
    """Feed the readers of a subgraph Data node from a copy of the parent's Const input (the
    Data node stays: the subgraph's inputs do not change).  Returns the Data nodes replaced."""
    pushed = 0
    for node in graph.topo_order():
        for sub in subgraphs_of(graph, node):
            for data in sub.data_nodes():
                index = data.attr(ATTR_PARENT_INDEX)
                if index is None or index >= node.num_inputs or not data.consumers(0):
                    continue
                edge = node.input(index)
                value = None if edge is None else const_value(edge[0])
                if value is None or value.size > PUSH_LIMIT_ELEMENTS:
                    continue
                const = make_const(sub, f"{data.name}_const", value, origin=edge[0].origin)
                sub.replace_uses((data, 0), (const, 0))
                pushed += 1
    return pushed


def inline_constant_ifs(graph: Graph) -> int:
    """Replace every If whose condition is a constant by a copy of the chosen branch.
    Returns the number of Ifs replaced."""
    inlined = 0
    for node in graph.topo_order():
        if node.type != "If" or node.graph is not graph:
            continue
        cond = input_const(node, 0)
        if cond is None or cond.size != 1:
            continue
        chosen = graph.get_subgraph(node.subgraphs.get(
            "then_branch" if bool(cond.reshape(-1)[0]) else "else_branch", ""))
        if chosen is None or chosen.output_node() is None:
            continue
        _inline(graph, node, chosen)
        inlined += 1
    return inlined


def _inline(graph: Graph, node: Node, branch: Graph) -> None:
    mapped: dict[int, tuple] = {}   # id(branch node) -> parent node (or parent edge for Data)
    for inner in branch.topo_order():
        if inner.type == "Data":
            mapped[id(inner)] = node.input(inner.attr(ATTR_PARENT_INDEX))
        elif ops.role_of(inner.type) not in _BOUNDARY_ROLES:
            mapped[id(inner)] = _copy_node(graph, inner)

    def edge_of(edge):
        src, idx = edge
        return mapped[id(src)] if src.type == "Data" else (mapped[id(src)], idx)

    for inner in branch.topo_order():
        copy = mapped.get(id(inner))
        if ops.role_of(inner.type) in _BOUNDARY_ROLES:
            continue
        for i, edge in enumerate(inner.inputs()):
            if edge is not None:
                src = edge_of(edge)
                graph.connect(src[0], src[1], copy, i)
        for ctrl in inner.get_out_control_nodes():
            if ops.role_of(ctrl.type) not in _BOUNDARY_ROLES:
                graph.add_control_edge(copy, mapped[id(ctrl)])
    for j, edge in enumerate(branch.output_node().inputs()):
        if edge is not None:
            graph.replace_uses((node, j), edge_of(edge))
    remove_subgraphs_of(graph, node, keep=branch)   # the branch not taken, nested ones too
    graph.erase_node(node)
    graph.remove_subgraph(branch.name)   # its nested subgraphs now belong to the copies


def _copy_node(graph: Graph, inner: Node) -> Node:
    copy = graph.copy_node(inner, graph.unique_name(inner.name))
    copy.subgraphs = dict(inner.subgraphs)
    for sub in subgraphs_of(graph, inner):   # a nested If now belongs to the parent graph
        sub.parent_graph, sub.parent_node = graph, copy
    return copy
