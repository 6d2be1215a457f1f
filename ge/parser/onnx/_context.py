"""What a mapping's converter sees of one ONNX node, and how it emits IR nodes.

A converter is a plain function `(NodeCtx) -> list[Edge | None]`: it reads the node's attributes
and input edges through the context, creates IR nodes with `ctx.emit` / `ctx.const`, and returns
one edge per ONNX output (positional; `None` or a short list = output not produced).  Port names
come from the op registry (`ge.ops.registry`), dynamic ports expanded `x0, x1, ...`.
Converters refuse a node they cannot express with `refuse(reason)` (E11010 upstream).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np
from onnx import NodeProto, helper

from ge.errors import GeError
from ge.graph import Format, Graph, Node, Tensor
from ge.graph.types import from_numpy_dtype
from ge.ops import registry

__all__ = ["ConvertError", "NodeCtx", "emit_node", "make_tensor", "refuse", "port_names"]

Edge = tuple  # (Node, output index)


class ConvertError(Exception):
    """A converter cannot express the node; the builder reports it as E11010."""


def refuse(reason: str):
    raise ConvertError(reason)


def make_tensor(array: np.ndarray) -> Tensor:
    """Tensor.from_numpy, keeping 0-d arrays 0-d (from_numpy's ascontiguousarray makes them
    1-d; reported to the IR owner)."""
    array = np.asarray(array)
    if array.ndim == 0 and array.dtype.kind in "biuf" and array.dtype != np.float64:
        return Tensor(array, data_type=from_numpy_dtype(array.dtype), shape=[])
    return Tensor.from_numpy(array)


def ir_not_registered(op_name: str, ir_type: str) -> GeError:
    return GeError("E10501", {"opname": op_name, "optype": ir_type})


def _expand(ports: tuple, count: int, ir_type: str, what: str) -> list[str]:
    """Slot names of `ports` for `count` slots: a dynamic port takes what the fixed ones leave."""
    dynamic = [p for p in ports if p.kind == "dynamic"]
    if not dynamic:
        if count > len(ports):
            refuse(f"{count} {what}s cannot be mapped onto IR {ir_type}, which has "
                   f"{len(ports)} ({', '.join(p.name for p in ports) or 'none'})")
        return [p.name for p in ports]
    n_dyn = max(count - (len(ports) - len(dynamic)), 0)
    names: list[str] = []
    for p in ports:
        names += [f"{p.name}{i}" for i in range(n_dyn)] if p.kind == "dynamic" else [p.name]
    return names


def port_names(ir_type: str, n_in: int, n_out: int, op_name: str = "") -> tuple[list, list]:
    opdef = registry.get(ir_type)
    if opdef is None:
        raise ir_not_registered(op_name or ir_type, ir_type)
    return (_expand(opdef.inputs, n_in, ir_type, "input"),
            _expand(opdef.outputs, n_out, ir_type, "output"))


def emit_node(graph: Graph, name: str, emitted: list, ir_type: str, inputs: list,
              attrs: dict | None = None, suffix: str = "", num_outputs: int = 1,
              fmt: Format | None = None) -> Node:
    """One IR node standing for the framework node `name` (both parsers' `emit`): ports from
    the registry, `inputs` (Edge | None per slot) connected, attributes typed by the registry
    (extra ones kept as given), `fmt` on every port; appended to `emitted` with its suffix."""
    in_names, out_names = port_names(ir_type, len(inputs), num_outputs, name)
    opdef = registry.get(ir_type)
    tmp = graph.unique_name(f"{name}_{suffix or ir_type}")
    node = graph.add_node(ir_type, tmp, input_names=in_names, output_names=out_names,
                          origin=[name])
    for slot, edge in enumerate(inputs):
        if edge is not None:
            graph.connect(edge[0], edge[1], node, slot)
    for key, value in (attrs or {}).items():
        spec = opdef.attr_spec(key)
        if spec is not None:
            node.set_attr_kind(key, spec.kind, value)
        else:  # an extra attribute the plugin sets although the proto lacks it
            node.set_attr(key, value)
    if fmt is not None:
        for desc in [node.in_desc(i) for i in range(node.num_inputs)] + \
                    [node.out_desc(i) for i in range(node.num_outputs)]:
            desc.set_format(fmt).set_origin_format(fmt)
    emitted.append((node, suffix or ir_type))
    return node


@dataclass
class NodeCtx:
    graph: Graph
    proto: NodeProto
    name: str                 # the ONNX node name this conversion stands for
    opset: int                # model-level opset of the node's domain
    ins: list                 # Edge | None per ONNX input ("" = None)
    in_names: list            # ONNX tensor names of the inputs
    used: list                # per ONNX output: consumed in the model or a graph output
    const_of: dict            # tensor name -> numpy value, for constants known at parse time
    shape_of: dict            # tensor name -> static shape list from the model's value infos
    model_dir: Optional[str] = None   # where external tensor data may be read from
    build_branch: Optional[Callable] = None  # (If node, attr name, index) -> subgraph name
    emitted: list = field(default_factory=list)  # (Node, name suffix) in creation order

    # -- reading ---------------------------------------------------------------------------
    @property
    def op_type(self) -> str:
        return self.proto.op_type

    def has_attr(self, name: str) -> bool:
        return any(a.name == name for a in self.proto.attribute)

    def attr(self, name: str, default=None):
        for a in self.proto.attribute:
            if a.name == name:
                value = helper.get_attribute_value(a)
                if isinstance(value, bytes):
                    value = value.decode("utf-8")
                elif isinstance(value, list) and value and isinstance(value[0], bytes):
                    value = [v.decode("utf-8") for v in value]
                return value
        return default

    def ints(self, name: str, default=None) -> Optional[list]:
        value = self.attr(name, default)
        return None if value is None else [int(v) for v in value]

    def input(self, i: int) -> Optional[Edge]:
        return self.ins[i] if i < len(self.ins) else None

    def const(self, i: int) -> Optional[np.ndarray]:
        """The parse-time value of input i when it is an initializer or Constant output."""
        if i >= len(self.in_names) or not self.in_names[i]:
            return None
        return self.const_of.get(self.in_names[i])

    def input_shape(self, i: int) -> Optional[list]:
        value = self.const(i)
        if value is not None:
            return list(value.shape)
        if i >= len(self.in_names):
            return None
        return self.shape_of.get(self.in_names[i])

    def input_rank(self, i: int) -> Optional[int]:
        shape = self.input_shape(i)
        return None if shape is None else len(shape)

    # -- emitting --------------------------------------------------------------------------
    def emit(self, ir_type: str, inputs: list, attrs: dict | None = None, suffix: str = "",
             num_outputs: int = 1, fmt: Format | None = None) -> Node:
        """Create one IR node; `inputs` are Edge | None per slot in the IR's port order."""
        return emit_node(self.graph, self.name, self.emitted, ir_type, inputs, attrs, suffix,
                         num_outputs, fmt)

    def const_node(self, value, dtype=None, suffix: str = "const") -> Edge:
        """A Const holding `value` (numpy-convertible) created from an ONNX attribute."""
        array = np.asarray(value, dtype=dtype)
        node = self.emit("Const", [], {"value": make_tensor(array)}, suffix=suffix)
        return (node, 0)

    def one(self, ir_type: str, inputs: list | None = None, attrs: dict | None = None,
            num_outputs: int = 1, fmt: Format | None = None) -> list:
        """Emit a single node fed by `inputs` (default: the ONNX inputs); return its outputs."""
        node = self.emit(ir_type, self.ins if inputs is None else inputs, attrs,
                         num_outputs=num_outputs, fmt=fmt)
        return [(node, i) for i in range(node.num_outputs)]
