"""TensorFlow ops mapped by custom operator packages (ge.ops.custom, docs/custom-ops.md).

`row_for(op)` is the parser's one lookup: the built-in table (_mappings.ROWS) first, then the
packages' `tensorflow` mappings by NodeDef op.  A mapped node becomes one IR node of the
mapping's op type, inputs in order, one output per output port of that op; the attribute
conversion sees the NodeDef `attr` map as plain values.
"""
from __future__ import annotations

from typing import Optional

from ge.ops import custom, registry

from .._custom import custom_converter
from ._mappings import ROWS, TfOp

__all__ = ["row_for"]


def row_for(op: str) -> Optional[TfOp]:
    row = ROWS.get(op)
    if row is not None:
        return row
    mapping = custom.find_mapping("tensorflow", op)
    if mapping is None:
        return None
    opdef = registry.get(mapping.op_type)
    outputs = tuple(p.name for p in opdef.outputs) if opdef is not None else ("output",)
    return TfOp(op, (mapping.op_type,), custom_converter(
        mapping, lambda ctx: {name: ctx.attr(name) for name in ctx.node.attr},
        lambda ctx: len(outputs)), outputs)
