"""What every parser's converters share: refusing a node (ConvertError, E11010 upstream), IR
port names from the op registry, constants as ge.graph Tensors, and emitting one IR node.

Framework-neutral: imports no framework package, so each parser loads only its own.
"""
from __future__ import annotations

import numpy as np

from ge.errors import GeError
from ge.graph import Format, Graph, Node, Tensor
from ge.graph.types import from_numpy_dtype
from ge.ops import registry

__all__ = ["ConvertError", "refuse", "make_tensor", "ir_not_registered", "port_names",
           "emit_node"]

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
