"""Emitting GE IR nodes from a framework layer or node, shared by the parsers (ONNX, Caffe):
registry port names (dynamic ports expanded `x0, x1, ...`), tensors from numpy, the converter
refusal (`refuse` -> `ConvertError`, reported as E11010 upstream) and the `Emitter` mixin a
parser's converter context builds on.  Knows no framework, so importing it imports none.
"""
from __future__ import annotations

import numpy as np

from ge.errors import GeError
from ge.graph import Format, Node, Tensor
from ge.graph.types import from_numpy_dtype
from ge.ops import registry

__all__ = ["ConvertError", "Emitter", "Edge", "make_tensor", "refuse", "port_names",
           "ir_not_registered", "add_node"]

Edge = tuple  # (Node, output index)


class ConvertError(Exception):
    """A converter cannot express the node; the builder reports it as E11010."""


def refuse(reason: str):
    raise ConvertError(reason)


def make_tensor(array: np.ndarray, data_type=None) -> Tensor:
    """Tensor.from_numpy, keeping 0-d arrays 0-d (from_numpy's ascontiguousarray makes them
    1-d; reported to the IR owner).  `data_type` names a type numpy lacks (DT_BF16: the array
    holds its uint16 bit patterns)."""
    array = np.asarray(array)
    if array.ndim == 0 and array.dtype.kind in "biuf" and array.dtype != np.float64:
        t = Tensor(array, data_type=from_numpy_dtype(array.dtype), shape=[])
    else:
        t = Tensor.from_numpy(array)
    if data_type is not None:
        t._dtype = data_type
    return t


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


def add_node(graph, op_type: str, name: str, n_in: int, n_out: int, origin: list) -> Node:
    """A node of the parser's own making (Data, NetOutput, ...): `name` made unique in `graph`,
    registry port names."""
    in_names, out_names = port_names(op_type, n_in, n_out, name)
    return graph.add_node(op_type, graph.unique_name(name), input_names=in_names,
                          output_names=out_names, origin=origin)


class Emitter:
    """IR node creation for a converter context with `graph`, `name` (the framework node the
    conversion stands for), `ins` (its input edges) and `emitted` (created (Node, suffix)
    pairs, in order); `origin`, when a context has it, is the model's own name of the node
    (recorded in place of a `name` made unique)."""

    def emit(self, ir_type: str, inputs: list, attrs: dict | None = None, suffix: str = "",
             num_outputs: int = 1, fmt: Format | None = None) -> Node:
        """Create one IR node; `inputs` are Edge | None per slot in the IR's port order."""
        in_names, out_names = port_names(ir_type, len(inputs), num_outputs, self.name)
        opdef = registry.get(ir_type)
        tmp = self.graph.unique_name(f"{self.name}_{suffix or ir_type}")
        node = self.graph.add_node(ir_type, tmp, input_names=in_names,
                                   output_names=out_names,
                                   origin=[getattr(self, "origin", "") or self.name])
        for slot, edge in enumerate(inputs):
            if edge is not None:
                self.graph.connect(edge[0], edge[1], node, slot)
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
        self.emitted.append((node, suffix or ir_type))
        return node

    def const_node(self, value, dtype=None, suffix: str = "const") -> Edge:
        """A Const holding `value` (numpy-convertible): an attribute or weight of the model."""
        array = np.asarray(value, dtype=dtype)
        node = self.emit("Const", [], {"value": make_tensor(array)}, suffix=suffix)
        return (node, 0)

    def one(self, ir_type: str, inputs: list | None = None, attrs: dict | None = None,
            num_outputs: int = 1, fmt: Format | None = None) -> list:
        """Emit a single node fed by `inputs` (default: the context's inputs); return its
        outputs."""
        node = self.emit(ir_type, self.ins if inputs is None else inputs, attrs,
                         num_outputs=num_outputs, fmt=fmt)
        return [(node, i) for i in range(node.num_outputs)]
