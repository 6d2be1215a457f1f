"""Frozen GraphDef bytes → `domi.tensorflow.GraphDef`, and TensorFlow values → numpy.

Owns: reading a `.pb` (binary) or `.pbtxt` (text form) safely, telling a GraphDef from what
users pass by mistake (a SavedModel's saved_model.pb, a checkpoint, any other protobuf), the
TensorFlow → GE dtype table and TensorProto decoding.  Builds no IR.
"""
from __future__ import annotations

import math

import numpy as np
from google.protobuf import text_format
from google.protobuf.message import DecodeError

from ge.errors import GeError
from ge.fsutil import MODEL_LIMIT, check_regular, os_reason, read_regular
from ge.graph import DataType
from ge.graph.filebacked import map_file
from ge.graph.types import to_numpy_dtype
from ge.proto.tensorflow import GraphDef, TF_DTYPE_NUMBERS

from .._wire import strip_tensor_content

__all__ = ["load_graph_bytes", "load_graph_file", "read_model_file", "ge_dtype", "np_dtype",
           "tensor_to_array", "invalid_model", "TF_DTYPE_NAME"]

DT = DataType
TF_DTYPE_NAME = {number: name for name, number in TF_DTYPE_NUMBERS}
# TensorFlow DataType number → GE DataType (its host form: ge.graph.types.to_numpy_dtype)
_DTYPES = {
    1: DT.DT_FLOAT, 2: DT.DT_DOUBLE, 3: DT.DT_INT32, 4: DT.DT_UINT8, 5: DT.DT_INT16,
    6: DT.DT_INT8, 7: DT.DT_STRING, 8: DT.DT_COMPLEX64, 9: DT.DT_INT64, 10: DT.DT_BOOL,
    14: DT.DT_BF16, 17: DT.DT_UINT16, 18: DT.DT_COMPLEX128, 19: DT.DT_FLOAT16,
    22: DT.DT_UINT32, 23: DT.DT_UINT64,
}
# where TensorProto keeps typed values of each dtype when tensor_content is empty
_TYPED_FIELD = {1: "float_val", 2: "double_val", 3: "int_val", 4: "int_val", 5: "int_val",
                6: "int_val", 7: "string_val", 8: "scomplex_val", 9: "int64_val",
                10: "bool_val", 17: "int_val", 18: "dcomplex_val", 19: "half_val",
                22: "uint32_val", 23: "uint64_val"}


def invalid_model(reason: str) -> GeError:
    """EP0501: the file is a GraphDef but its content cannot be compiled as it stands."""
    return GeError("EP0501", {"reason": reason})


def _load_failed(label: str, reason: str) -> GeError:
    return GeError("E10041", {"file": label, "reason": reason})


def read_model_file(path: str) -> bytes:
    try:
        return read_regular(path, MODEL_LIMIT)
    except OSError as exc:
        raise _load_failed(path, os_reason(exc)) from None


_NOT_FROZEN_HINT = ("a SavedModel (saved_model.pb) or a checkpoint must first be frozen into a "
                    "GraphDef (convert_variables_to_constants_v2)")


def load_graph_bytes(data: bytes, label: str = "<memory>", text: bool = False) -> GraphDef:
    """Decode a GraphDef from its binary or text form; E10041 for anything else."""
    if not data:
        raise _load_failed(label, "the file is empty")
    graph = GraphDef()
    try:
        if text:
            text_format.Parse(data.decode("utf-8"), graph, allow_unknown_field=True)
        else:
            graph.ParseFromString(data)
    except (DecodeError, ValueError, RuntimeError, text_format.ParseError,
            UnicodeDecodeError) as exc:
        raise _load_failed(label, f"it is not a TensorFlow GraphDef ({exc}); "
                           + _NOT_FROZEN_HINT) from None
    if not graph.node:
        raise _load_failed(label, "it is not a TensorFlow GraphDef (no nodes); "
                           + _NOT_FROZEN_HINT)
    return graph


def load_graph_file(path: str) -> tuple[GraphDef, dict]:
    """`load_graph_bytes` of a binary GraphDef file, with the large tensor_content of the main
    graph's Const nodes left in the mapped file (ge.parser._wire): (GraphDef, {node name:
    uint8 view of its bytes}) for `tensor_to_array` (docs/om.md "Lazy weights")."""
    try:
        check_regular(path, MODEL_LIMIT)
        mapped = map_file(path)
    except OSError as exc:
        raise _load_failed(path, os_reason(exc)) from None
    stripped = strip_tensor_content(mapped) if mapped.size else None
    if stripped is None:
        return load_graph_bytes(read_model_file(path), path), {}
    data, ranges = stripped
    graph = load_graph_bytes(data, path)
    return graph, {name: mapped[offset:offset + length]
                   for name, (offset, length) in ranges.items()}


def ge_dtype(tf_type: int, where: str) -> DataType:
    dtype = _DTYPES.get(int(tf_type))
    if dtype is None:
        raise invalid_model(f"{where} has data type {TF_DTYPE_NAME.get(int(tf_type), tf_type)}, "
                            "which has no GE counterpart")
    return dtype


def np_dtype(tf_type: int, where: str) -> np.dtype:
    try:
        return to_numpy_dtype(ge_dtype(tf_type, where))
    except TypeError:  # no host form (bfloat16)
        raise GeError("EP0002", {"feature": f"constant {where} of data type "
                                            f"{TF_DTYPE_NAME[int(tf_type)]}",
                                 "reason": "this data type has no host representation"}) \
            from None


def shape_dims(shape_proto) -> list | None:
    """A TensorShapeProto as a list (-1 = unknown dim); None = unknown rank."""
    if shape_proto.unknown_rank:
        return None
    return [int(d.size) for d in shape_proto.dim]


def tensor_to_array(t, where: str, content=None) -> np.ndarray:
    """The value of a TensorProto (a Const's `value` attr) as a numpy array; `content` is its
    tensor_content when that was left in the model file (a uint8 view: the result views it)."""
    dtype = np_dtype(t.dtype, where)
    shape = shape_dims(t.tensor_shape) or []
    if any(d < 0 for d in shape):
        raise invalid_model(f"constant {where} has dims {shape} with a negative value")
    count = math.prod(shape)
    content = t.tensor_content if content is None else content
    if len(content):
        need = count * dtype.itemsize
        if dtype == np.object_ or len(content) != need:
            raise invalid_model(f"constant {where} holds {len(content)} bytes but "
                                f"dims {shape} of {dtype.name} need {need}")
        if isinstance(content, np.ndarray):
            return content.view(dtype.newbyteorder("<")).astype(dtype, copy=False) \
                .reshape(shape)
        return np.frombuffer(content, dtype=dtype.newbyteorder("<")).astype(
            dtype, copy=False).reshape(shape)
    typed = getattr(t, _TYPED_FIELD[int(t.dtype)])
    if int(t.dtype) == 19:
        values = np.array(typed, dtype=np.uint16).view(np.float16)
    elif int(t.dtype) == 7:
        values = np.array([bytes(s).decode("utf-8", "replace") for s in typed], dtype=object)
    elif int(t.dtype) in (8, 18):
        pairs = np.array(typed, dtype=np.float64).reshape(-1, 2)
        values = (pairs[:, 0] + 1j * pairs[:, 1]).astype(dtype)
    else:
        values = np.array(typed).astype(dtype)
    if values.size == count:
        return values.reshape(shape)
    if values.size >= 1 and values.size < count:   # TF repeats the last value to fill
        return np.concatenate([values, np.full(count - values.size, values[-1],
                                               dtype=dtype)]).reshape(shape)
    if values.size == 0:
        return np.zeros(shape, dtype=dtype)
    raise invalid_model(f"constant {where} holds {values.size} values but its dims {shape} "
                        f"need {count}")
