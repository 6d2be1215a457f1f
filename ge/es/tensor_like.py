"""TensorLike conversion: Python scalars and nested lists become Const nodes (spec §5.3)."""
from __future__ import annotations

from ge.graph import DataType, Tensor

__all__ = ["convert_to_tensor_holder", "resolve_builder"]


def _shape_and_leaves(value, path="value"):
    if isinstance(value, (list, tuple)):
        if not value:
            return [0], []
        parts = [_shape_and_leaves(v) for v in value]
        first = parts[0][0]
        if any(p[0] != first for p in parts):
            raise ValueError(f"ragged nested list cannot become a tensor: {value!r}")
        return [len(value)] + first, [leaf for p in parts for leaf in p[1]]
    if isinstance(value, (bool, int, float)):
        return [], [value]
    raise TypeError(f"cannot convert {type(value).__name__} to a tensor")


def convert_to_tensor_holder(value, builder):
    """TensorHolder unchanged, None stays None, int/float/nested list -> Const."""
    from .tensor_holder import TensorHolder
    if value is None or isinstance(value, TensorHolder):
        return value
    shape, leaves = _shape_and_leaves(value)
    is_float = any(isinstance(v, float) for v in leaves)
    dtype = DataType.DT_FLOAT if is_float else DataType.DT_INT64
    values = [float(v) if is_float else int(v) for v in leaves]
    return builder._const_tensor(Tensor(values, data_type=dtype, shape=shape))


def resolve_builder(values, owner_builder=None):
    """The builder of the first TensorHolder in `values` (lists searched), else owner_builder."""
    from .tensor_holder import TensorHolder
    for v in values:
        items = v if isinstance(v, (list, tuple)) else [v]
        for item in items:
            if isinstance(item, TensorHolder):
                return item._builder
    if owner_builder is not None:
        return owner_builder
    raise ValueError("cannot find a GraphBuilder: pass at least one TensorHolder input")
