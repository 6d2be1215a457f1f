"""What a mapping's converter sees of one ONNX node, and how it emits IR nodes.

A converter is a plain function `(NodeCtx) -> list[Edge | None]`: it reads the node's attributes
and input edges through the context, creates IR nodes with `ctx.emit` / `ctx.const`, and returns
one edge per ONNX output (positional; `None` or a short list = output not produced).  Port names
come from the op registry (`ge.ops.registry`), dynamic ports expanded `x0, x1, ...`; emitting is
shared with the other parsers (ge.parser._emit).
Converters refuse a node they cannot express with `refuse(reason)` (E11010 upstream).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np
from ._proto import NodeProto, get_attribute_value

from ge.graph import Graph

from .._emit import ConvertError, Edge, Emitter, make_tensor, port_names, refuse

__all__ = ["ConvertError", "NodeCtx", "make_tensor", "refuse", "port_names"]

_KIND_NAMES = {int: ("an int", "ints"), float: ("a float", "floats"), str: ("a string", "strings")}


def _kind(value) -> str:
    """What an attribute value is, in words: "an int", "a list of floats", ..."""
    if isinstance(value, list):
        kinds = {type(v) for v in value}
        if len(kinds) != 1:
            return "an empty list" if not value else "a list"
        return f"a list of {_KIND_NAMES.get(kinds.pop(), ('', 'values'))[1]}"
    return _KIND_NAMES.get(type(value), (type(value).__name__,))[0]


def _fits(value, default) -> bool:
    """Whether an attribute value has the kind its default stands for (a float takes ints)."""
    if isinstance(default, float):
        return isinstance(value, (int, float))
    if isinstance(default, (int, str, list)):
        return isinstance(value, type(default))
    return True


@dataclass
class NodeCtx(Emitter):
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
    origin: str = ""          # the model's own name of the node (repeated names: unique `name`)
    emitted: list = field(default_factory=list)  # (Node, name suffix) in creation order

    # -- reading ---------------------------------------------------------------------------
    @property
    def op_type(self) -> str:
        return self.proto.op_type

    def has_attr(self, name: str) -> bool:
        return any(a.name == name for a in self.proto.attribute)

    def attr(self, name: str, default=None):
        """The attribute's value, or `default` when absent; a value of another kind than the
        default (a list for an int, a float for an int, ...) is refused naming the attribute."""
        for a in self.proto.attribute:
            if a.name == name:
                value = get_attribute_value(a)
                if isinstance(value, bytes):
                    value = value.decode("utf-8")
                elif isinstance(value, list) and value and isinstance(value[0], bytes):
                    value = [v.decode("utf-8") for v in value]
                if not _fits(value, default):
                    refuse(f"attribute {name} is {_kind(value)}, {_kind(default)} expected")
                return value
        return default

    def ints(self, name: str, default=None) -> Optional[list]:
        value = self.attr(name, default)
        if value is not None and not (isinstance(value, list) and
                                      all(isinstance(v, int) for v in value)):
            refuse(f"attribute {name} is {_kind(value)}, a list of ints expected")
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
