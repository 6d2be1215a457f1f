"""TensorFlow ops mapped by custom operator packages (ge.ops.custom, docs/custom-ops.md).

`row_for(op)` is the parser's one lookup: the built-in table (_mappings.ROWS) first, then the
packages' `tensorflow` mappings by NodeDef op.  A mapped node becomes one IR node of the
mapping's op type, inputs in order, one output per output port of that op; the attribute
conversion sees the NodeDef `attr` map as plain values.
"""
from __future__ import annotations

from typing import Optional

from ge.ops import custom, registry

from ..onnx._custom import converted_attrs
from ._mappings import ROWS, TfOp

__all__ = ["row_for"]


def _converter(mapping, num_outputs: int):
    def convert(ctx) -> list:
        attrs = converted_attrs(mapping, {name: ctx.attr(name) for name in ctx.node.attr})
        return ctx.one(mapping.op_type, list(ctx.ins), attrs, num_outputs=num_outputs)
    convert.__name__ = f"custom_{mapping.op_type}"
    return convert


def row_for(op: str) -> Optional[TfOp]:
    row = ROWS.get(op)
    if row is not None:
        return row
    mapping = custom.find_mapping("tensorflow", op)
    if mapping is None:
        return None
    opdef = registry.get(mapping.op_type)
    outputs = tuple(p.name for p in opdef.outputs) if opdef is not None else ("output",)
    return TfOp(op, (mapping.op_type,), _converter(mapping, len(outputs)), outputs)
