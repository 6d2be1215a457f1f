"""ONNX nodes mapped by custom operator packages (ge.ops.custom, docs/custom-ops.md).

The built-in table (_mappings.MAPPINGS) is consulted first; a node it does not know is looked
up as `domain::OpType` among the packages' ONNX mappings, for the model's opset of that domain.
The node becomes one IR node of the mapping's op type, inputs positional, attributes converted
by the mapping.
"""
from __future__ import annotations

from typing import Optional

from ge.ops import custom

from ._context import NodeCtx, refuse

__all__ = ["custom_row", "converted_attrs"]


def converted_attrs(mapping, framework_attrs: dict) -> dict:
    """The mapping's attribute conversion; a conversion that raises is the node's conversion
    error (refuse: the parser's code naming the node), not an internal error."""
    try:
        return custom.convert_attrs(mapping, framework_attrs)
    except Exception as exc:  # user code of a package
        refuse(f"the attribute conversion of its custom operator package raised "
               f"{type(exc).__name__}: {exc}")


def _converter(mapping):
    def convert(ctx: NodeCtx) -> list:
        attrs = {a.name: ctx.attr(a.name) for a in ctx.proto.attribute}
        return ctx.one(mapping.op_type, ctx.ins, converted_attrs(mapping, attrs),
                       num_outputs=max(1, len(ctx.proto.output)))
    convert.__name__ = f"custom_{mapping.op_type}"
    return convert


def custom_row(domain: str, opset: int, op_type: str) -> Optional[object]:
    """An OnnxOp row for a package's mapping of this node, or None."""
    from ._mappings import OnnxOp
    mapping = custom.find_mapping("onnx", f"{domain}::{op_type}", opset)
    if mapping is None:
        return None
    return OnnxOp(op_type, (opset,), (mapping.op_type,), _converter(mapping), domain=domain,
                  ours=True)
