"""The converter every parser builds for a custom operator package's mapping (ge.ops.custom,
docs/custom-ops.md): one IR node of the mapping's op type, the context's inputs in order, the
framework attributes converted by the mapping.  Each parser says how to read its node's
attributes and how many outputs the node has."""
from __future__ import annotations

from typing import Callable

from ge.ops import custom

from ._emit import refuse

__all__ = ["converted_attrs", "custom_converter"]


def converted_attrs(mapping, framework_attrs: dict) -> dict:
    """The mapping's attribute conversion; a conversion that raises is the node's conversion
    error (refuse: the parser's code naming the node), not an internal error."""
    try:
        return custom.convert_attrs(mapping, framework_attrs)
    except Exception as exc:  # user code of a package
        refuse(f"the attribute conversion of its custom operator package raised "
               f"{type(exc).__name__}: {exc}")


def custom_converter(mapping, framework_attrs: Callable, num_outputs: Callable) -> Callable:
    """A row converter: `framework_attrs(ctx)` -> {name: value}, `num_outputs(ctx)` -> int."""
    def convert(ctx) -> list:
        attrs = converted_attrs(mapping, framework_attrs(ctx))
        return ctx.one(mapping.op_type, list(ctx.ins), attrs, num_outputs=num_outputs(ctx))
    convert.__name__ = f"custom_{mapping.op_type}"
    return convert
