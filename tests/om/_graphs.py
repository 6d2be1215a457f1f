"""Test graphs built with the ge.graph internal API, and a structural description to compare."""
from __future__ import annotations

import numpy as np

from ge.graph import DataType, Format, Graph, Tensor, TensorDesc
from ge.graph.types import AttrValueType as VT

F32, F16, I64 = DataType.DT_FLOAT, DataType.DT_FLOAT16, DataType.DT_INT64
NCHW, ND = Format.FORMAT_NCHW, Format.FORMAT_ND


def _desc(shape, dtype=F32, fmt=NCHW, origin_shape=None, origin_fmt=None):
    d = TensorDesc(shape, fmt, dtype)
    if origin_shape is not None:
        d.set_origin_shape(origin_shape)
    if origin_fmt is not None:
        d.set_origin_format(origin_fmt)
    return d


def _wire(node, in_descs, out_descs):
    for i, d in enumerate(in_descs):
        node.update_input_desc(i, d)
    for i, d in enumerate(out_descs):
        node.update_output_desc(i, d)


def conv_net(name: str = "net") -> Graph:
    """Data -> Conv2D(w, b) -> Relu -> Add(shared const) -> NetOutput, with a control edge."""
    g = Graph(name)
    x_desc = _desc([1, 3, 8, 8])
    y_desc = _desc([1, 4, 8, 8])
    x = g.add_node("Data", "x", attrs={"index": 0}, input_names=["x"], output_names=["y"],
                   origin=["x"])
    _wire(x, [x_desc], [x_desc])
    rng = np.random.default_rng(7)
    w_val = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    w = g.add_node("Const", "conv.weight", attrs={"value": Tensor.from_numpy(w_val, NCHW)},
                   output_names=["y"])
    _wire(w, [], [_desc([4, 3, 3, 3])])
    b = g.add_node("Const", "conv.bias", output_names=["y"],
                   attrs={"value": Tensor.from_numpy(np.arange(4, dtype=np.float32), ND)})
    _wire(b, [], [_desc([4], fmt=ND)])
    conv = g.add_node("Conv2D", "conv", inputs=[(x, 0), (w, 0), (b, 0), None],
                      input_names=["x", "filter", "bias", "offset_w"], output_names=["y"],
                      attrs={"strides": [1, 1, 1, 1], "pads": [1, 1, 1, 1],
                             "dilations": [1, 1, 1, 1], "groups": 1,
                             "data_format": "NCHW", "offset_x": 0},
                      origin=["/conv/Conv"])
    _wire(conv, [x_desc, _desc([4, 3, 3, 3]), _desc([4], fmt=ND), TensorDesc()], [y_desc])
    relu = g.add_node("Relu", "relu", inputs=[(conv, 0)], input_names=["x"],
                      output_names=["y"], origin=["/relu/Relu"])
    _wire(relu, [y_desc], [y_desc])
    # two byte-identical constants: the OM stores them once
    ones = np.ones((1, 4, 8, 8), dtype=np.float32)
    c1 = g.add_node("Const", "ones_a", attrs={"value": Tensor.from_numpy(ones, NCHW)},
                    output_names=["y"])
    c2 = g.add_node("Const", "ones_b", attrs={"value": Tensor.from_numpy(ones, NCHW)},
                    output_names=["y"])
    _wire(c1, [], [y_desc])
    _wire(c2, [], [y_desc])
    add = g.add_node("Add", "add", inputs=[(relu, 0), (c1, 0)], input_names=["x1", "x2"],
                     output_names=["y"])
    _wire(add, [y_desc, y_desc], [y_desc])
    mul = g.add_node("Mul", "mul", inputs=[(add, 0), (c2, 0)], input_names=["x1", "x2"],
                     output_names=["y"])
    _wire(mul, [y_desc, y_desc], [y_desc])
    out = g.add_node("NetOutput", "output", inputs=[(mul, 0), (relu, 0)],
                     input_names=["x0", "x1"], output_names=[])
    _wire(out, [y_desc, y_desc], [])
    g.add_control_edge(x, relu)
    g.set_attr("_graph_note", "conv test")
    return g


def every_attr_node(g: Graph):
    """A node carrying one attribute of every kind the serializer supports."""
    sub = Graph("attr_graph")
    d = sub.add_node("Data", "d", attrs={"index": 0}, output_names=["y"])
    _wire(d, [], [_desc([2], fmt=ND)])
    node = g.add_node("Custom", "all_attrs", output_names=["y"], num_outputs=1)
    node.set_attr("s", "text é")
    node.set_attr("i", -5)
    node.set_attr("f", 0.25)
    node.set_attr("b", True)
    node.set_attr("dt", DataType.DT_FLOAT16)
    node.set_attr("ls", ["a", "b"])
    node.set_attr("li", [1, -2, 3])
    node.set_attr("lf", [0.5, 1.5])
    node.set_attr("lb", [True, False])
    node.set_attr("lli", [[1, 2], [3]])
    node.set_attr("llf", [[0.5], [1.0, 2.0]])
    node.set_attr("t", Tensor.from_numpy(np.arange(6, dtype=np.int64).reshape(2, 3)))
    node.set_attr("lt", [Tensor.from_numpy(np.array([1.5], dtype=np.float16))])
    node.set_attr("td", _desc([1, 2], F16, NCHW, [2, 1], ND))
    node.set_attr("bt", b"\x00\x01\xff")
    node.set_attr_kind("ldt", VT.VT_LIST_DATA_TYPE, [DataType.DT_INT8, DataType.DT_BOOL])
    node.set_attr_kind("lbt", VT.VT_LIST_BYTES, [b"x", b""])
    node.set_attr_kind("ltd", VT.VT_LIST_TENSOR_DESC, [_desc([3], I64, ND)])
    node.set_attr_kind("g", VT.VT_GRAPH, sub)
    node.set_attr_kind("na", VT.VT_NAMED_ATTRS,
                       {"name": "fn", "attr": {"k": (VT.VT_INT, 3)}})
    node.set_attr_kind("none", VT.VT_NONE, None)
    node.set_attr("empty_list", [])
    node.update_output_desc(0, _desc([2, 2], F16, NCHW, [4], ND))
    node.set_output_attr("_port_note", 0, "out0")
    return node


def if_net() -> Graph:
    """A root graph whose If node owns two branch subgraphs; one branch nests a subgraph."""
    g = Graph("root")
    desc = _desc([2], fmt=ND)
    cond = g.add_node("Data", "cond", attrs={"index": 0}, output_names=["y"])
    _wire(cond, [], [_desc([], DataType.DT_BOOL, ND)])
    x = g.add_node("Data", "x", attrs={"index": 1}, output_names=["y"])
    _wire(x, [], [desc])
    node = g.add_node("If", "if", inputs=[(cond, 0), (x, 0)], input_names=["cond", "input0"],
                      output_names=["output0"])
    _wire(node, [_desc([], DataType.DT_BOOL, ND), desc], [desc])
    out = g.add_node("NetOutput", "out", inputs=[(node, 0)], output_names=[])
    _wire(out, [desc], [])
    for branch, op in (("then_g", "Neg"), ("else_g", "Abs")):
        sub = Graph(branch)
        d = sub.add_node("Data", "arg", attrs={"index": 0, "_parent_node_index": 1},
                         output_names=["y"])
        _wire(d, [], [desc])
        body = sub.add_node(op, "body", inputs=[(d, 0)], output_names=["y"])
        _wire(body, [desc], [desc])
        so = sub.add_node("NetOutput", "out", inputs=[(body, 0)], output_names=[])
        _wire(so, [desc], [])
        g.add_subgraph(sub, node)
        if branch == "then_g":
            inner = Graph("then_inner")
            inner.add_node("NoOp", "nop", output_names=[])
            body.subgraphs = {"f": "then_inner"}
            g.add_subgraph(inner, body)
    node.subgraphs = {"then_branch": "then_g", "else_branch": "else_g"}
    return g


def _value(kind, value):
    if isinstance(value, Tensor):
        return ("T", value.data_type, list(value.shape), value.numpy().tobytes())
    if isinstance(value, TensorDesc):
        return ("TD", list(value.shape), list(value.origin_shape), value.format,
                value.origin_format, value.data_type, value.name)
    if isinstance(value, Graph):
        return ("G", describe(value))
    if isinstance(value, float):
        return float(np.float32(value))
    if isinstance(value, list):
        return [_value(kind, v) for v in value]
    if isinstance(value, dict):
        return {k: _value(kind, v) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(_value(kind, v) for v in value)
    return value


def describe(graph: Graph) -> dict:
    """Everything the serializer must keep, as comparable plain data."""
    nodes = {}
    for n in graph.nodes:
        nodes[n.name] = {
            "type": n.type,
            "inputs": [None if e is None else (e[0].name, e[1]) for e in n.inputs()],
            "control": [c.name for c in n.get_in_control_nodes()],
            "attrs": {k: (kind, _value(kind, v)) for k, kind, v in n.attr_items()},
            "in_descs": [_value(None, n.in_desc(i)) for i in range(n.num_inputs)],
            "out_descs": [_value(None, n.out_desc(i)) for i in range(n.num_outputs)],
            "in_names": n.input_names, "out_names": n.output_names,
            "in_attrs": [_value(None, a) for a in n._in_attrs],
            "out_attrs": [_value(None, a) for a in n._out_attrs],
            "subgraphs": dict(n.subgraphs),
        }
    return {"name": graph.name, "nodes": nodes, "order": [n.name for n in graph.nodes],
            "attrs": {k: (kind, _value(kind, v)) for k, kind, v in graph.attr_items()}}


def describe_all(graph: Graph) -> dict:
    """describe() of the root and of every subgraph, with each subgraph's parent node."""
    subs = {s.name: (describe(s), s.parent_node.name if s.parent_node else None,
                     s.parent_graph.name if s.parent_graph else None)
            for s in graph.get_all_subgraphs()}
    return {"root": describe(graph), "subgraphs": subs,
            "sub_order": [s.name for s in graph.get_all_subgraphs()]}
