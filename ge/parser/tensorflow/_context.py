"""What a mapping's converter sees of one TensorFlow node, and how it emits IR nodes.

A converter is a plain function `(TfCtx) -> list[Edge | None]`: one edge per TensorFlow output
(positional).  It reads attributes (`attr`, decoded from AttrValue) and its input edges, asks
for parse-time values (`const`: Const inputs and small values computable from them) and static
shapes (`shape`, from the inference the builder runs on every emitted node), and creates IR
nodes with `emit` / `one` / `const_node` (ge.parser._emit.Emitter).  It refuses what it cannot express with `refuse`
(E11010 upstream).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from ge.graph import DataType, Format, Graph
from ge.parser._emit import ConvertError, Emitter, refuse

from ._model import ge_dtype, shape_dims, tensor_to_array

__all__ = ["TfCtx", "ConvertError", "refuse", "decode_attr", "FORMATS"]

Edge = tuple  # (Node, output index)
FORMATS = {"NHWC": Format.FORMAT_NHWC, "NCHW": Format.FORMAT_NCHW, "ND": Format.FORMAT_ND,
           "NDHWC": Format.FORMAT_NDHWC, "NCDHW": Format.FORMAT_NCDHW}


def decode_attr(value, where: str):
    """An AttrValue as a plain value: str, int, float, bool, TF dtype number, shape list,
    numpy array (tensor), function name, or a list of those."""
    kind = value.WhichOneof("value")
    if kind == "s":
        return value.s.decode("utf-8", "replace")
    if kind in ("i", "f", "b", "type", "placeholder"):
        return getattr(value, kind)
    if kind == "shape":
        return shape_dims(value.shape)
    if kind == "tensor":
        return tensor_to_array(value.tensor, where)
    if kind == "func":
        return value.func.name
    if kind == "list":
        lv = value.list
        for name in ("s", "i", "f", "b", "type", "shape", "tensor", "func"):
            items = getattr(lv, name)
            if len(items):
                if name == "s":
                    return [s.decode("utf-8", "replace") for s in items]
                if name == "shape":
                    return [shape_dims(s) for s in items]
                if name == "func":
                    return [f.name for f in items]
                return list(items)
        return []
    return None


@dataclass
class TfCtx(Emitter):
    graph: Graph
    node: object                     # domi.tensorflow.NodeDef
    name: str                        # the TensorFlow node name this conversion stands for
    ins: list                        # Edge per data input
    value_of: Callable               # Edge -> np.ndarray | None (parse-time value)
    call: Optional[Callable] = None  # (function name, [Edge]) -> [Edge]: inline a function
    branch: Optional[Callable] = None  # (If Node, attr name, index, function) -> subgraph
    emitted: list = field(default_factory=list)

    @property
    def op_type(self) -> str:
        return self.node.op

    def attr(self, name: str, default=None):
        if name not in self.node.attr:
            return default
        value = decode_attr(self.node.attr[name], f"{self.name}.{name}")
        return default if value is None else value

    def dtype_attr(self, name: str, default: DataType = DataType.DT_FLOAT) -> DataType:
        if name not in self.node.attr:
            return default
        return ge_dtype(self.node.attr[name].type, f"attribute {name} of {self.name}")

    def data_format(self, default: str = "NHWC") -> str:
        return str(self.attr("data_format", default)).upper()

    def const(self, i: int) -> Optional[np.ndarray]:
        return self.value_of(self.ins[i]) if i < len(self.ins) else None

    def const_ints(self, i: int, what: str) -> list:
        value = self.const(i)
        if value is None:
            refuse(f"input {i} ({what}) must be known when the model is compiled")
        return [int(v) for v in np.asarray(value).reshape(-1)]

    def shape(self, i: int) -> Optional[list]:
        """The static shape of input i (dims may be -1); None when the rank is unknown."""
        edge = self.ins[i]
        dims = list(edge[0].out_desc(edge[1]).shape)
        return None if dims == [-2] else dims

    def rank(self, i: int) -> Optional[int]:
        shape = self.shape(i)
        return None if shape is None else len(shape)

    def dtype(self, i: int) -> DataType:
        edge = self.ins[i]
        return edge[0].out_desc(edge[1]).data_type
