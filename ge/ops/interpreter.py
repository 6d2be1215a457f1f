"""A small reference interpreter: runs a ge.graph.Graph node by node with the numpy kernels of
the registry, in topological order.

    outs = run_graph(graph, {"x": x})                  # feeds by Data name
    outs = run_graph(graph, [x])                       # or by Data `index`
    outs, seen = run_graph(graph, [x], capture=True)   # seen[(node name, out index)] = array

Data nodes take their feed; NetOutput inputs are the results, in order (a graph without a
NetOutput returns the unconsumed outputs of its nodes, in topological order).  If and
PartitionedCall run their subgraphs: a subgraph Data node with `_parent_node_index` p takes the
parent's input slot p (If: slot 0 is `cond`, so branch input i has p = i + 1, spec/ir-ops.md
§1.9; PartitionedCall: p = i).  Without the attribute, the Data `index` is used the same way.
Subgraph NetOutput input k becomes parent output k.

float16 and bfloat16 tensors (bfloat16 as uint16 bit patterns) are computed in float32 and
rounded to their type, as the compiled kernels do (ge.graph.lowprec).
"""
from __future__ import annotations

from typing import Callable, Union

import numpy as np

from ge.graph.attr_names import ATTR_PARENT_INDEX
from ge.errors import GeError
from ge.graph.lowprec import call_lowprec

from . import Role, lookup, resolved_attrs, role_of

__all__ = ["run_graph", "run_node"]



def _error(node, reason: str) -> GeError:
    return GeError("EZ9999", {"what": f"op {node.name} ({node.type})",
                              "reason": f"reference execution failed: {reason}"})


def _feed_for(feeds, node):
    if isinstance(feeds, dict):
        if node.name in feeds:
            return feeds[node.name]
        if node.attr("index", 0) in feeds:
            return feeds[node.attr("index", 0)]
        raise _error(node, "no feed given for this graph input")
    index = int(node.attr("index", 0))
    if not 0 <= index < len(feeds):
        raise _error(node, f"feed index {index} is out of range ({len(feeds)} feeds)")
    return feeds[index]


def run_node(node, inputs: list) -> list:
    """Run one compute node's kernel (inputs: arrays per slot, None for absent)."""
    opdef = lookup(node.type)
    if opdef.kernel is None:
        raise _error(node, "the op has no reference kernel")
    attrs = resolved_attrs(opdef, node)
    try:
        outs = call_lowprec(opdef.kernel, inputs, attrs,
                            [node.in_desc(i).data_type for i in range(node.num_inputs)],
                            [node.out_desc(i).data_type for i in range(node.num_outputs)])
    except GeError:
        raise
    except (ValueError, TypeError, IndexError, KeyError, OverflowError) as e:
        raise _error(node, f"{type(e).__name__}: {e}") from e
    return [np.asarray(o) for o in outs]


def _run_subgraph(parent, ir_name: str, inputs: list, store: dict, offset: int) -> list:
    name = parent.subgraphs.get(ir_name)
    sub = parent.graph.get_subgraph(name) if name else None
    if sub is None:
        raise _error(parent, f"subgraph {ir_name} is not attached")

    def feed(data):
        p = data.attr(ATTR_PARENT_INDEX)
        p = int(data.attr("index", 0)) + offset if p is None else int(p)
        if not 0 <= p < len(inputs) or inputs[p] is None:
            raise _error(parent, f"subgraph {sub.name} input {data.name} maps to parent "
                                 f"input {p}, which is not available")
        return inputs[p]
    return _execute(sub, feed, store)


def _run_if(node, inputs, store):
    cond = bool(np.asarray(inputs[0]).reshape(-1)[0])
    return _run_subgraph(node, "then_branch" if cond else "else_branch", inputs, store, 1)


def _run_partitioned_call(node, inputs, store):
    return _run_subgraph(node, "f", inputs, store, 0)


# Ops the interpreter runs itself because they own subgraphs.
_SUBGRAPH_RUNNERS: dict[str, Callable] = {
    "If": _run_if,
    "PartitionedCall": _run_partitioned_call,
}


def _execute(graph, feed: Callable, store: dict) -> list:
    results = None
    for node in graph.topo_order():
        inputs = [None if e is None else store[(e[0].name, e[1])] for e in node.inputs()]
        if role_of(node.type) == Role.DATA:
            outs = [np.asarray(feed(node))]
        elif node.type == "NetOutput":
            results = inputs
            continue
        elif node.type in _SUBGRAPH_RUNNERS:
            outs = _SUBGRAPH_RUNNERS[node.type](node, inputs, store)
        else:
            outs = run_node(node, inputs)
        if len(outs) < node.num_outputs:
            raise _error(node, f"kernel produced {len(outs)} outputs, node has "
                               f"{node.num_outputs}")
        for i in range(node.num_outputs):
            store[(node.name, i)] = outs[i]
    if results is None:
        results = [store[(n.name, i)] for n in graph.topo_order() if n.type != "NetOutput"
                   for i in range(n.num_outputs) if not n.consumers(i)]
    return results


def run_graph(graph, feeds: Union[dict, list, tuple], *, capture: bool = False):
    """Outputs in NetOutput order; with capture=True also {(node, out index): array}."""
    store: dict = {}
    outs = _execute(graph, lambda node: _feed_for(feeds, node), store)
    return (outs, store) if capture else outs
