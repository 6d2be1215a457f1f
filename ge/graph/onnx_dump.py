"""The ONNX-shaped graph dump (DumpFormat.kOnnx, GE's `ge_onnx_*.pbtxt`) that Netron opens.

Owns only the rendering of an IR graph as an onnx.ModelProto for viewing: node op types are
the IR op types (domain "ge"), attributes are converted where ONNX has a matching kind and
rendered as text otherwise, every output gets a value_info with its dtype and shape, port
descriptors are attached as `input_desc:<i>` / `output_desc:<i>` string attributes, and each
subgraph becomes a GRAPH attribute named after its IR name.  Not meant to be executed.
"""
from __future__ import annotations

import onnx
from onnx import helper, numpy_helper

from .types import AttrValueType as VT, DataType

__all__ = ["graph_to_onnx"]

_ONNX_TYPE = {
    DataType.DT_FLOAT: onnx.TensorProto.FLOAT, DataType.DT_FLOAT16: onnx.TensorProto.FLOAT16,
    DataType.DT_DOUBLE: onnx.TensorProto.DOUBLE, DataType.DT_BF16: onnx.TensorProto.BFLOAT16,
    DataType.DT_INT8: onnx.TensorProto.INT8, DataType.DT_INT16: onnx.TensorProto.INT16,
    DataType.DT_INT32: onnx.TensorProto.INT32, DataType.DT_INT64: onnx.TensorProto.INT64,
    DataType.DT_UINT8: onnx.TensorProto.UINT8, DataType.DT_UINT16: onnx.TensorProto.UINT16,
    DataType.DT_UINT32: onnx.TensorProto.UINT32, DataType.DT_UINT64: onnx.TensorProto.UINT64,
    DataType.DT_BOOL: onnx.TensorProto.BOOL, DataType.DT_STRING: onnx.TensorProto.STRING,
    DataType.DT_COMPLEX64: onnx.TensorProto.COMPLEX64,
    DataType.DT_COMPLEX128: onnx.TensorProto.COMPLEX128,
}


def _desc_text(desc) -> str:
    return (f"{desc.data_type.name} {list(desc.shape)} {desc.format.name[len('FORMAT_'):]}"
            f" origin={list(desc.origin_shape)}")


def _attribute(name: str, kind: VT, value, root):
    """An onnx AttributeProto for one IR attribute (text when ONNX has no such kind)."""
    if kind in (VT.VT_INT, VT.VT_BOOL, VT.VT_DATA_TYPE):
        return helper.make_attribute(name, int(value))
    if kind == VT.VT_FLOAT:
        return helper.make_attribute(name, float(value))
    if kind == VT.VT_STRING:
        return helper.make_attribute(name, value)
    if kind in (VT.VT_LIST_INT, VT.VT_LIST_BOOL, VT.VT_LIST_DATA_TYPE):
        attr = helper.make_attribute(name, [int(v) for v in value],
                                     attr_type=onnx.AttributeProto.INTS)
        return attr
    if kind == VT.VT_LIST_FLOAT:
        return helper.make_attribute(name, [float(v) for v in value],
                                     attr_type=onnx.AttributeProto.FLOATS)
    if kind == VT.VT_LIST_STRING:
        return helper.make_attribute(name, list(value), attr_type=onnx.AttributeProto.STRINGS)
    if kind == VT.VT_TENSOR and value.data_type != DataType.DT_STRING:
        try:
            return helper.make_attribute(name, numpy_helper.from_array(value.numpy(), name))
        except (TypeError, ValueError):
            pass
    if kind == VT.VT_GRAPH:
        return helper.make_attribute(name, _graph_proto(value, root))
    if kind == VT.VT_TENSOR_DESC:
        return helper.make_attribute(name, _desc_text(value))
    return helper.make_attribute(name, repr(value) if kind != VT.VT_BYTES else value.hex())


def _value_info(node, i):
    desc = node.out_desc(i)
    elem = _ONNX_TYPE.get(desc.data_type, onnx.TensorProto.UNDEFINED)
    shape = None if list(desc.shape) == [-2] else [d if d >= 0 else None for d in desc.shape]
    return helper.make_tensor_value_info(f"{node.name}:{i}", elem, shape)


def _graph_proto(graph, root) -> onnx.GraphProto:
    nodes, value_infos = [], []
    for node in graph.nodes:
        inputs = ["" if e is None else f"{e[0].name}:{e[1]}" for e in node.inputs()]
        inputs += [f"{c.name}:-1" for c in node.get_in_control_nodes()]
        outputs = [f"{node.name}:{i}" for i in range(node.num_outputs)]
        attrs = [_attribute(k, kind, v, root) for k, kind, v in node.attr_items()]
        attrs += [helper.make_attribute(f"input_desc:{i}", _desc_text(node.in_desc(i)))
                  for i in range(node.num_inputs)]
        attrs += [helper.make_attribute(f"output_desc:{i}", _desc_text(node.out_desc(i)))
                  for i in range(node.num_outputs)]
        for ir_name, instance in node.subgraphs.items():
            sub = root.get_subgraph(instance)
            if sub is not None:
                attrs.append(helper.make_attribute(ir_name, _graph_proto(sub, root)))
        onnx_node = helper.make_node(node.type, inputs, outputs, name=node.name, domain="ge")
        onnx_node.attribute.extend(attrs)
        nodes.append(onnx_node)
        value_infos += [_value_info(node, i) for i in range(node.num_outputs)]
    data = graph.data_nodes()
    net_output = graph.output_node()
    inputs = [_value_info(n, 0) for n in data if n.num_outputs]
    outputs = []
    if net_output is not None:
        outputs = [_value_info(e[0], e[1]) for e in net_output.inputs() if e is not None]
    return helper.make_graph(nodes, graph.name, inputs, outputs, value_info=value_infos)


def graph_to_onnx(graph) -> onnx.ModelProto:
    """The dump model of `graph` (root graph; its subgraphs nested as GRAPH attributes)."""
    model = helper.make_model(_graph_proto(graph, graph.root()), producer_name="pyatc",
                              opset_imports=[helper.make_opsetid("ge", 1)])
    return model
