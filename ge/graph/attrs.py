"""Attribute values: the kind of each Python value, following the CANN set_attr rules.

An attribute is stored as (AttrValueType, value).  The kind matters for serialization (AttrDef
oneof field) and for empty lists, whose element type Python cannot tell.
"""
from __future__ import annotations

from .tensor import Tensor, TensorDesc
from .types import AttrValueType as VT, DataType

_SCALAR_CHECKS = (  # order matters: bool and DataType are ints too
    (str, VT.VT_STRING), (float, VT.VT_FLOAT), (bool, VT.VT_BOOL), (DataType, VT.VT_DATA_TYPE),
    (Tensor, VT.VT_TENSOR), (int, VT.VT_INT), (TensorDesc, VT.VT_TENSOR_DESC),
    (bytes, VT.VT_BYTES),
)
# Lists: all-float (also the empty list), then bool, int (a DataType list is stored as ints, a
# CANN quirk kept on purpose), DataType, str.
_LIST_CHECKS = (
    (float, VT.VT_LIST_FLOAT), (bool, VT.VT_LIST_BOOL), (int, VT.VT_LIST_INT),
    (DataType, VT.VT_LIST_DATA_TYPE), (str, VT.VT_LIST_STRING), (Tensor, VT.VT_LIST_TENSOR),
)


def kind_of(value) -> VT:
    """The kind set_attr gives `value`; ValueError for unsupported Python types."""
    if isinstance(value, (list, tuple)):
        if value and all(isinstance(v, (list, tuple)) for v in value):
            flat = [x for v in value for x in v]
            if all(isinstance(x, int) and not isinstance(x, bool) for x in flat):
                return VT.VT_LIST_LIST_INT
            return VT.VT_LIST_LIST_FLOAT
        for py_type, kind in _LIST_CHECKS:
            if all(isinstance(v, py_type) and not (py_type is int and isinstance(v, bool))
                   for v in value):
                return kind
        raise ValueError(f"unsupported attribute list value {value!r}")
    if isinstance(value, bool):
        return VT.VT_BOOL
    for py_type, kind in _SCALAR_CHECKS:
        if isinstance(value, py_type):
            return kind
    raise ValueError(f"unsupported attribute value of type {type(value).__name__}")


def normalize(kind: VT, value):
    """Copy a value into its stored form for `kind`."""
    if kind == VT.VT_LIST_INT:
        return [int(v) for v in value]
    if kind == VT.VT_LIST_FLOAT:
        return [float(v) for v in value]
    if kind == VT.VT_LIST_BOOL:
        return [bool(v) for v in value]
    if kind == VT.VT_LIST_STRING:
        return [str(v) for v in value]
    if kind == VT.VT_LIST_DATA_TYPE:
        return [DataType(v) for v in value]
    if kind == VT.VT_LIST_LIST_INT:
        return [[int(x) for x in v] for v in value]
    if kind == VT.VT_LIST_LIST_FLOAT:
        return [[float(x) for x in v] for v in value]
    if kind == VT.VT_LIST_TENSOR:
        return list(value)
    if kind == VT.VT_INT:
        return int(value)
    if kind == VT.VT_FLOAT:
        return float(value)
    if kind == VT.VT_BOOL:
        return bool(value)
    if kind == VT.VT_DATA_TYPE:
        return DataType(value)
    if kind == VT.VT_TENSOR_DESC:
        return value.clone()
    return value
