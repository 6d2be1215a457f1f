"""ONNX nodes mapped by custom operator packages (ge.ops.custom, docs/custom-ops.md).

The built-in table (_mappings.MAPPINGS) is consulted first; a node it does not know is looked
up as `domain::OpType` among the packages' ONNX mappings, for the model's opset of that domain.
The node becomes one IR node of the mapping's op type, inputs positional, attributes converted
by the mapping.
"""
from __future__ import annotations

from typing import Optional

from ge.ops import custom

from .._custom import custom_converter

__all__ = ["custom_row"]


def custom_row(domain: str, opset: int, op_type: str) -> Optional[object]:
    """An OnnxOp row for a package's mapping of this node, or None."""
    from ._mappings import OnnxOp
    mapping = custom.find_mapping("onnx", f"{domain}::{op_type}", opset)
    if mapping is None:
        return None
    convert = custom_converter(
        mapping, lambda ctx: {a.name: ctx.attr(a.name) for a in ctx.proto.attribute},
        lambda ctx: max(1, len(ctx.proto.output)))
    return OnnxOp(op_type, (opset,), (mapping.op_type,), convert, domain=domain, ours=True)
