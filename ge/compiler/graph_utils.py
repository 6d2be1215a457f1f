"""Small graph rewrites every model needs: constant lookup, bypass, dead-node removal."""
from __future__ import annotations

import contextlib
import contextvars
from typing import Optional

import numpy as np

from ge.graph import CONST_TYPES, Graph, Node, Tensor
from ge.ops import Role, role_of


def const_value(node: Node) -> Optional[np.ndarray]:
    """The numpy value of a Const/Constant node, else None."""
    if node.type in CONST_TYPES:
        value = node.attr("value")
        if isinstance(value, Tensor):
            return value.numpy()
    return None


def has_const_value(node: Node) -> bool:
    """Whether `const_value(node)` is an array, without computing a derived constant."""
    return node.type in CONST_TYPES and isinstance(node.attr("value"), Tensor)


def input_const(node: Node, i: int) -> Optional[np.ndarray]:
    edge = node.input(i)
    return None if edge is None else const_value(edge[0])


def make_const(graph: Graph, name: str, array: np.ndarray, origin=(), data_type=None) -> Node:
    """A Const holding `array`; `data_type` names a type numpy lacks (DT_BF16: uint16 bits)."""
    from ge.graph.types import from_numpy_dtype
    from ge.graph.tensor import TensorDesc
    const = graph.add_node("Const", graph.unique_name(name), output_names=["y"], origin=origin)
    value = Tensor.from_numpy(array) if isinstance(array, np.ndarray) \
        else Tensor.from_derived(array)             # computed when asked (ge.graph.derived)
    if data_type is not None:
        value._dtype = data_type
    const.set_attr("value", value)
    desc = TensorDesc(list(array.shape), data_type=data_type or from_numpy_dtype(array.dtype))
    const.update_output_desc(0, desc)
    return const


def bypass(graph: Graph, node: Node, in_idx: int = 0, out_idx: int = 0) -> None:
    """Route consumers of node:out_idx to the producer of its input in_idx, then erase node."""
    src = node.input(in_idx)
    if src is not None:
        graph.replace_uses((node, out_idx), src)
        for dst, _ in src[0].consumers(src[1]):
            if dst.type == "NetOutput":
                dst.merge_origin(node.origin)
    graph.erase_node(node)


def remove_subgraphs_of(graph: Graph, node: Node, keep: Optional[Graph] = None) -> None:
    """Unregister the subgraphs of a node that is being erased, nested ones included (all but
    `keep`, whose nodes the caller has taken over)."""
    for name in node.subgraphs.values():
        sub = graph.get_subgraph(name)
        if sub is None or sub is keep:
            continue
        for inner in sub.nodes:
            remove_subgraphs_of(graph, inner)
        graph.remove_subgraph(name)


def remove_dead_nodes(graph: Graph) -> int:
    """Erase nodes from which no NetOutput is reachable (Data nodes are kept: they are the
    model's inputs).  Returns the number removed."""
    out = graph.output_node()
    if out is None:
        return 0
    live = {id(out)}
    stack = [out]
    while stack:
        n = stack.pop()
        preds = [e[0] for e in n.inputs() if e is not None] + n.get_in_control_nodes()
        for p in preds:
            if id(p) not in live:
                live.add(id(p))
                stack.append(p)
    dead = [n for n in graph.topo_order() if id(n) not in live and role_of(n.type) != Role.DATA]
    for n in reversed(dead):
        remove_subgraphs_of(graph, n)
        graph.erase_node(n)
    return len(dead)


# Constants derived from other constants (conv + BatchNorm folding) by the passes of graphs that
# share their arrays (the gear copies of one model, ge.compiler.gears): computed once per
# `sharing_derived_constants` block instead of once per graph.
_DERIVED = contextvars.ContextVar("derived_constants", default=None)


@contextlib.contextmanager
def sharing_derived_constants():
    token = _DERIVED.set({})
    try:
        yield
    finally:
        _DERIVED.reset(token)


def derived_once(inputs: tuple, compute):
    """`compute()` once per sharing block for the same input objects (outside a block: every
    call).  The memo keeps the inputs alive, so their ids stay theirs."""
    memo = _DERIVED.get()
    if memo is None:
        return compute()
    key = tuple(("=", x) if isinstance(x, (int, float, str, type(None))) else id(x)
                for x in inputs)
    if key not in memo:
        memo[key] = (inputs, compute())
    return memo[key][1]
