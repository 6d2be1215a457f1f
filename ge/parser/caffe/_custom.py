"""Caffe layers mapped by custom operator packages (ge.ops.custom, docs/custom-ops.md).

`row_for(kind)` is the parser's one lookup: the built-in table (_mappings.BY_TYPE) first, then
the packages' `caffe` mappings by layer type.  A mapped layer becomes one IR node of the
mapping's op type, bottoms in order, one output per top; the attribute conversion sees every
field set in the layer's `*_param` messages as plain values.
"""
from __future__ import annotations

from typing import Optional

from ge.ops import custom
from ge.proto.schema import is_repeated

from .._custom import custom_converter
from ._mappings import BY_TYPE, CaffeLayer

__all__ = ["row_for", "layer_attrs"]


def layer_attrs(layer) -> dict:
    """{field: value} of every field set in the layer's parameter messages."""
    out = {}
    for field, value in layer.ListFields():
        if not field.name.endswith("_param") or not hasattr(value, "ListFields"):
            continue
        for inner, item in value.ListFields():
            out[inner.name] = list(item) if is_repeated(inner) else item
    return out


def row_for(kind: str) -> Optional[CaffeLayer]:
    row = BY_TYPE.get(kind)
    if row is not None:
        return row
    mapping = custom.find_mapping("caffe", kind)
    if mapping is None:
        return None
    return CaffeLayer(kind, (mapping.op_type,), custom_converter(
        mapping, lambda ctx: layer_attrs(ctx.layer), lambda ctx: max(1, len(ctx.layer.top))),
        ours=True)
