"""Layout transfer: an op whose `data_format` differs from the layout of the tensors it is
wired to gets TransposeD ops around it (CANN inserts TransData for the same reason).

A pass may switch a Conv2D to NHWC (the CANN sample graph_base_pass/3 does) while its input
tensor is still NCHW; the op then reads its input through a transpose to its own layout and
gives its output back in the tensor's layout, so the numbers do not change.  Constant inputs
(the filter) are folded later.
"""
from __future__ import annotations

from ge import ops
from ge.graph import Format, Graph, Node

# op types whose `data_format` fixes the layout of their `x`, `filter` and `y` ports
LAYOUT_OPS = ("Conv2D",)
# (tensor layout, op layout) -> (perm of x, perm of the filter, perm back for y, attr perm)
_TRANSFERS = {
    (Format.FORMAT_NCHW, "NHWC"): ([0, 2, 3, 1], [2, 3, 1, 0], [0, 3, 1, 2]),
    (Format.FORMAT_NHWC, "NCHW"): ([0, 3, 1, 2], [3, 2, 0, 1], [0, 2, 3, 1]),
}
_LAYOUT_FORMAT = {"NCHW": Format.FORMAT_NCHW, "NHWC": Format.FORMAT_NHWC}
_FILTER_FORMAT = {"NCHW": Format.FORMAT_NCHW, "NHWC": Format.FORMAT_HWCN}


def _transpose(graph: Graph, name: str, edge, perm: list, node: Node) -> Node:
    return graph.add_node("TransposeD", graph.unique_name(name), inputs=[edge],
                          input_names=["x"], output_names=["y"], attrs={"perm": perm},
                          origin=node.origin)


def insert_layout_transposes(graph: Graph) -> int:
    """Returns the number of ops given transposes."""
    changed = 0
    for node in graph.topo_order():
        if node.type not in LAYOUT_OPS:
            continue
        opdef = ops.get(node.type)
        x_slot, w_slot, y_slot = opdef.input_index("x"), opdef.input_index("filter"), 0
        layout = str(node.attr("data_format", "")).upper()
        transfer = _TRANSFERS.get((node.in_desc(x_slot).format, layout))
        if transfer is None or node.input(x_slot) is None:
            continue
        x_perm, w_perm, y_perm = transfer
        consumers = node.consumers(y_slot)
        x_t = _transpose(graph, f"{node.name}_x_to_{layout}", node.input(x_slot), x_perm, node)
        graph.connect(x_t, 0, node, x_slot)
        if node.input(w_slot) is not None:
            w_t = _transpose(graph, f"{node.name}_filter_to_{layout}", node.input(w_slot),
                             w_perm, node)
            graph.connect(w_t, 0, node, w_slot)
            node.in_desc(w_slot).set_format(_FILTER_FORMAT[layout])
        y_t = _transpose(graph, f"{node.name}_y_back", (node, y_slot), y_perm, node)
        for dst, i in consumers:
            graph.connect(y_t, 0, dst, i)
        # strides/dilations are given per dim of data_format: reorder them with the data
        for key in ("strides", "dilations"):
            values = node.attr(key)
            if isinstance(values, list) and len(values) == len(x_perm):
                node.set_attr(key, [values[p] for p in x_perm])
        node.in_desc(x_slot).set_format(_LAYOUT_FORMAT[layout])
        node.out_desc(y_slot).set_format(_LAYOUT_FORMAT[layout])
        changed += 1
    if changed:
        graph.sort()
    return changed
