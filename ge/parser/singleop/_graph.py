"""One `SingleOp` → the graph ATC compiles for it, and the OM file name ATC gives it
(spec/atc-cli.md §6.13; docs/atc.md "Single-operator compiles").

The graph is CANN's single-op graph: a Data per input (a Const for an `is_const` input), named
`<op>_in_<k>`, the op, and a NetOutput `<graph>_Node_Output` taking every output in order.
"""
from __future__ import annotations

import re

from ge import ops
from ge.graph import Graph, Tensor, TensorDesc
from ge.graph.types import AttrValueType as VT

from ._read import SingleOp, TensorSpec
from ._tables import MAX_FILE_NAME

__all__ = ["file_name", "op_graph", "ATTR_SINGLE_OP_SCENE", "ATTR_IS_SINGLE_OP"]

ATTR_SINGLE_OP_SCENE = "_single_op_scene"   # on the graph (and the model): built by --singleop
ATTR_IS_SINGLE_OP = "_is_single_op"         # on the Data and NetOutput nodes around the op
_VALID_NAME = re.compile(r"[a-zA-Z0-9._-]+")


def file_name(op: SingleOp) -> str:
    """`<name>.om` when the op's name is a valid file name (after cutting it to 128
    characters), else `<index>_<type>` and `_<dtype>_<format>_<dims...>` per input then per
    output, as enum numbers, cut to 128 characters."""
    name = op.name[:MAX_FILE_NAME]
    if _VALID_NAME.fullmatch(name) and name not in (".", ".."):
        return name + ".om"
    parts = [str(op.index), op.op_type]
    for t in op.inputs + op.outputs:
        parts += [str(int(t.data_type)), str(int(t.format))] + [str(d) for d in t.shape]
    return "_".join(parts)[:MAX_FILE_NAME] + ".om"


def _desc(t: TensorSpec) -> TensorDesc:
    desc = TensorDesc(list(t.shape), t.format, t.data_type)
    desc.set_origin_format(t.origin_format)
    desc.set_origin_shape(list(t.origin_shape))
    desc.name = t.name
    return desc


def _slots(op: SingleOp, slot_names: list[str]) -> list[int]:
    """Input k's slot: by tensor name when every input is named after a slot of the op,
    otherwise by position."""
    names = [t.name for t in op.inputs]
    if all(n in slot_names for n in names) and len(set(names)) == len(names):
        return [slot_names.index(n) for n in names]
    return list(range(len(op.inputs)))


def _input_node(graph: Graph, op: SingleOp, k: int, data_index: int):
    t = op.inputs[k]
    name = f"{op.node_name}_in_{k}"
    if t.const_value is not None:
        node = graph.add_node("Const", name, output_names=["y"], origin=[name])
        node.set_attr_kind("value", VT.VT_TENSOR,
                           Tensor(t.const_value, data_type=t.data_type, format=t.format,
                                  shape=list(t.shape)))
    else:
        node = graph.add_node("Data", name, input_names=["x"], output_names=["y"],
                              origin=[name])
        node.set_attr_kind("index", VT.VT_INT, data_index)
        node.update_input_desc(0, _desc(t))
    node.set_attr_kind(ATTR_IS_SINGLE_OP, VT.VT_BOOL, True)
    node.update_output_desc(0, _desc(t))
    return node


def op_graph(op: SingleOp, graph_name: str) -> Graph:
    opdef = ops.lookup(op.op_type)
    graph = Graph(graph_name)
    graph.set_attr_kind(ATTR_SINGLE_OP_SCENE, VT.VT_BOOL, True)
    slot_names = ops.slot_names(opdef, len(op.inputs))
    slots = _slots(op, slot_names)
    edges: list = [None] * len(slot_names)
    data_index = 0
    for k, t in enumerate(op.inputs):
        if t.absent:
            continue
        node = _input_node(graph, op, k, data_index)
        data_index += t.const_value is None
        edges[slots[k]] = (node, 0)
    node = graph.add_node(op.op_type, op.node_name, inputs=edges, input_names=slot_names,
                          output_names=ops.slot_names(opdef, len(op.outputs), outputs=True),
                          origin=[op.node_name])
    for a in op.attrs:
        node.set_attr_kind(a.name, a.kind, a.value)
    for k, t in enumerate(op.inputs):
        if not t.absent:
            node.update_input_desc(slots[k], _desc(t))
    for k, t in enumerate(op.outputs):
        node.update_output_desc(k, _desc(t))
    out = graph.add_node("NetOutput", f"{graph_name}_Node_Output",
                         inputs=[(node, k) for k in range(len(op.outputs))],
                         input_names=ops.slot_names(ops.lookup("NetOutput"), len(op.outputs)),
                         output_names=[])
    out.set_attr_kind(ATTR_IS_SINGLE_OP, VT.VT_BOOL, True)
    for k, t in enumerate(op.outputs):
        out.update_input_desc(k, _desc(t))
    return graph
