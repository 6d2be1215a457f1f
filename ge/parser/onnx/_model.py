"""Reading an ONNX model safely: bytes → ModelProto, tensor decoding, external data.

Owns the checks that happen before any graph is built (empty / truncated / non-ONNX input,
missing graph) and the ONNX → GE data type table (spec/ir-ops.md §1.10).  External tensor data
is read only from files inside the model's directory.  Builds no IR.
"""
from __future__ import annotations

import math
import os
import secrets
import weakref

import numpy as np
from google.protobuf.message import DecodeError

from ge.errors import GeError
from ge.fsutil import MODEL_LIMIT, check_regular, open_regular, os_reason, read_regular
from ge.graph import DataType
from ge.graph.filebacked import file_view, map_file
from ge.proto.schema import is_repeated

from .._wire import strip_raw_data
from . import _proto as onnx
from ._proto import TensorProto

__all__ = ["ONNX_TO_GE_DTYPE", "ge_dtype", "load_model_bytes", "load_model_file",
           "read_model_file", "tensor_to_array", "const_type"]

DT = DataType
# spec/ir-ops.md §1.10: ONNX elem_type → GE DataType.  Anything else is rejected.
ONNX_TO_GE_DTYPE: dict[int, DataType] = {
    TensorProto.FLOAT: DT.DT_FLOAT, TensorProto.UINT8: DT.DT_UINT8,
    TensorProto.INT8: DT.DT_INT8, TensorProto.UINT16: DT.DT_UINT16,
    TensorProto.INT16: DT.DT_INT16, TensorProto.INT32: DT.DT_INT32,
    TensorProto.INT64: DT.DT_INT64, TensorProto.STRING: DT.DT_STRING,
    TensorProto.BOOL: DT.DT_BOOL, TensorProto.FLOAT16: DT.DT_FLOAT16,
    TensorProto.DOUBLE: DT.DT_DOUBLE, TensorProto.UINT32: DT.DT_UINT32,
    TensorProto.UINT64: DT.DT_UINT64, TensorProto.COMPLEX64: DT.DT_COMPLEX64,
    TensorProto.COMPLEX128: DT.DT_COMPLEX128, TensorProto.BFLOAT16: DT.DT_BF16,
    TensorProto.FLOAT8E4M3FN: DT.DT_FLOAT8_E4M3FN, TensorProto.FLOAT8E5M2: DT.DT_FLOAT8_E5M2,
    TensorProto.INT4: DT.DT_INT4,
}
# Element types a constant can hold here (numpy-representable; bfloat16 as its uint16 bit
# patterns, ge.graph.lowprec); the 8-bit float types are valid for graph inputs only (spec §1.10:
# "Data only; Const parser rejects").
_NP_OF_ONNX: dict[int, type] = {
    TensorProto.FLOAT: np.float32, TensorProto.UINT8: np.uint8, TensorProto.INT8: np.int8,
    TensorProto.UINT16: np.uint16, TensorProto.INT16: np.int16, TensorProto.INT32: np.int32,
    TensorProto.INT64: np.int64, TensorProto.BOOL: np.bool_, TensorProto.FLOAT16: np.float16,
    TensorProto.DOUBLE: np.float64, TensorProto.UINT32: np.uint32,
    TensorProto.UINT64: np.uint64, TensorProto.COMPLEX64: np.complex64,
    TensorProto.COMPLEX128: np.complex128, TensorProto.STRING: np.object_,
    TensorProto.BFLOAT16: np.uint16,
}


def invalid_model(what: str, reason: str) -> GeError:
    """EP0101: the model parsed as ONNX but its content is inconsistent."""
    return GeError("EP0101", {"model": what, "reason": reason})


def ge_dtype(elem_type: int, where: str) -> DataType:
    dt = ONNX_TO_GE_DTYPE.get(int(elem_type))
    if dt is None:
        name = TensorProto.DataType.Name(elem_type) if elem_type in \
            TensorProto.DataType.values() else str(elem_type)
        raise invalid_model(where, f"data type {name} is not supported (supported: "
                            + ", ".join(TensorProto.DataType.Name(k)
                                        for k in ONNX_TO_GE_DTYPE) + ")")
    return dt


def _load_failed(path: str, reason: str) -> GeError:
    return GeError("E10041", {"file": path, "reason": reason})


def load_model_bytes(data: bytes, label: str = "<memory>") -> onnx.ModelProto:
    """Decode a serialized ModelProto; E10041 for anything that is not an ONNX model."""
    if not data:
        raise _load_failed(label, "the file is empty")
    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except (DecodeError, ValueError, RuntimeError) as exc:  # truncated or not protobuf
        raise _load_failed(label, f"it is not a valid ONNX protobuf ({exc})") from None
    if not model.opset_import and not model.ir_version:
        raise _load_failed(label, "it is not an ONNX model (no ir_version, no opset_import)")
    if not model.HasField("graph"):
        raise GeError("E16004", {})
    bad = _undecodable_text(model)
    if bad is not None:
        raise invalid_model(label, f"the text {bad[1]!r} in {bad[0]} is not valid UTF-8")
    return model


def _undecodable_text(message, path: str = "model"):
    """(field path, bytes) of the first string field that is not UTF-8 (protobuf hands such
    proto2 strings over as bytes): a name nothing downstream could write or print; or None."""
    for field, value in message.ListFields():
        repeated = is_repeated(field)
        items = value if repeated else [value]
        if field.type == field.TYPE_STRING:
            bad = next((text for text in items if isinstance(text, bytes)), None)
            if bad is not None:
                return f"{path}.{field.name}", bad
        elif field.type == field.TYPE_MESSAGE:
            for i, item in enumerate(items):
                found = _undecodable_text(item, f"{path}.{field.name}" + (f"[{i}]" if repeated
                                                                            else ""))
                if found is not None:
                    return found
    return None


def load_model_file(path: str) -> onnx.ModelProto:
    """`load_model_bytes` of the file at `path`, with the large raw_data of the main graph's
    initializers left in the file: each such initializer is turned into external data that
    points at the model file itself (ge.parser.onnx._wire), so the weights are read lazily,
    like those of a model with external data."""
    try:
        check_regular(path, MODEL_LIMIT)
        mapped = _mapped(path)
    except OSError as exc:
        raise _load_failed(path, os_reason(exc)) from None
    stripped = strip_raw_data(mapped) if mapped.size else None
    if stripped is None:
        return load_model_bytes(read_model_file(path), path)
    data, ranges = stripped
    model = load_model_bytes(data, path)
    # the model file itself, by its real path (it may be a symlink into another directory),
    # under a key no model file can name (external_location)
    location = os.path.realpath(path)
    for t, found in zip(model.graph.initializer, ranges):
        if found is None or t.data_location == TensorProto.EXTERNAL:
            continue
        t.data_location = TensorProto.EXTERNAL
        for key, value in ((_IN_FILE_KEY, location), ("offset", found[0]),
                           ("length", found[1])):
            entry = t.external_data.add()
            entry.key, entry.value = key, str(value)
    return model


def read_model_file(path: str) -> bytes:
    try:
        return read_regular(path, MODEL_LIMIT)
    except OSError as exc:
        raise _load_failed(path, os_reason(exc)) from None


# -- tensors ------------------------------------------------------------------------------------

_TYPED_FIELD = {  # where TensorProto keeps typed values of each element type
    TensorProto.FLOAT: "float_data", TensorProto.COMPLEX64: "float_data",
    TensorProto.DOUBLE: "double_data", TensorProto.COMPLEX128: "double_data",
    TensorProto.INT64: "int64_data", TensorProto.UINT32: "uint64_data",
    TensorProto.UINT64: "uint64_data", TensorProto.STRING: "string_data",
}


def const_type(t: TensorProto):
    """The GE type of a constant whose array does not say it (bfloat16: uint16 bits), else
    None."""
    return DT.DT_BF16 if t.data_type == TensorProto.BFLOAT16 else None


def tensor_to_array(t: TensorProto, model_dir: str | None, what: str) -> np.ndarray:
    """The value of an initializer / Constant tensor as a numpy array (shape = dims)."""
    np_type = _NP_OF_ONNX.get(t.data_type)
    if np_type is None:
        ge_dtype(t.data_type, what)  # unknown types: the generic message
        raise GeError("EP0002", {"feature": f"Constant {what} of data type "
                                            f"{TensorProto.DataType.Name(t.data_type)}",
                                 "reason": "only graph inputs may use this type"})
    if any(d < 0 for d in t.dims):
        raise invalid_model(what, f"tensor dims {list(t.dims)} contain a negative value")
    shape = [int(d) for d in t.dims]
    count = math.prod(shape)            # exact: an int64 product could wrap
    dtype = np.dtype(np_type)
    if t.data_location == TensorProto.EXTERNAL:      # a view of the file: any size will do
        raw = read_external(t, model_dir, what, count * dtype.itemsize)
        return _from_raw(raw, dtype, shape, count, what)
    _check_fits(count * dtype.itemsize, shape, dtype, what)
    if t.data_type == TensorProto.STRING:
        values = [bytes(s).decode("utf-8", "replace") for s in t.string_data]
        return _fit(np.array(values, dtype=object), shape, count, what)
    if t.HasField("raw_data"):
        return _from_raw(t.raw_data, dtype, shape, count, what)
    field = _TYPED_FIELD.get(t.data_type, "int32_data")
    typed = getattr(t, field)
    if t.data_type in (TensorProto.FLOAT16,):
        values = np.array(typed, dtype=np.uint16).view(np.float16)
    elif t.data_type in (TensorProto.COMPLEX64, TensorProto.COMPLEX128):
        pairs = np.array(typed, dtype=np.float64).reshape(-1, 2)
        values = (pairs[:, 0] + 1j * pairs[:, 1]).astype(dtype)
    elif t.data_type == TensorProto.BOOL:
        values = np.array(typed, dtype=np.int64) != 0
    else:
        values = np.array(typed).astype(dtype)
    return _fit(values.astype(dtype), shape, count, what)


def _check_fits(need: int, shape: list, dtype: np.dtype, what: str) -> None:
    """A constant is built in memory: one larger than this host's memory is refused before the
    allocation (a one-value splat, an external file) instead of dying in it."""
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    if need > memory:
        raise invalid_model(what, f"tensor dims {shape} of {dtype.name} need {need} bytes, more "
                            f"than the {memory} bytes of this host's memory")


def _fit(values: np.ndarray, shape: list, count: int, what: str) -> np.ndarray:
    if values.size == count:
        return values.reshape(shape)
    if values.size == 1:  # a single typed value is splatted (spec §1.5)
        return np.full(shape, values.reshape(-1)[0], dtype=values.dtype)
    if values.size == 0 and count == 0:
        return values.reshape(shape)
    raise invalid_model(what, f"tensor holds {values.size} values but its dims {shape} "
                        f"need {count}")


def _from_raw(raw, dtype: np.dtype, shape: list, count: int, what: str) -> np.ndarray:
    need = count * dtype.itemsize
    if isinstance(raw, np.ndarray):        # a view of a mapped file: stays a view
        return raw.view(dtype.newbyteorder("<")).astype(dtype, copy=False).reshape(shape)
    if len(raw) != need:
        raise invalid_model(what, f"tensor raw data has {len(raw)} bytes but dims {shape} "
                            f"of {dtype.name} need {need}")
    # no copy on little-endian hosts: the bytes object stays alive behind the read-only array
    return np.frombuffer(raw, dtype=dtype.newbyteorder("<")).astype(dtype, copy=False).reshape(shape)


# -- external data ------------------------------------------------------------------------------

# marks an initializer whose raw_data load_model_file left in the model file; random per process,
# so that no model can forge it to escape the model directory
_IN_FILE_KEY = "pyatc_in_model_file_" + secrets.token_hex(8)


def _bad_path(path: str, reason: str) -> GeError:
    return GeError("E13026", {"path": path, "reason": reason})


def external_location(t: TensorProto, model_dir: str | None, what: str) -> tuple[str, int, int]:
    """Resolve (path, offset, length) of an external tensor, confined to the model directory.

    A location must be relative, must not leave the directory (`..`), and its real path
    (symlinks resolved) must stay inside the real model directory.  length = -1 if absent.
    """
    info = {e.key: e.value for e in t.external_data}
    if _IN_FILE_KEY in info:            # raw_data left in the model file by load_model_file
        return info[_IN_FILE_KEY], int(info["offset"]), int(info["length"])
    location = info.get("location", "")
    if not location:
        raise invalid_model(what, "external data has no location")
    if model_dir is None:
        raise _bad_path(location, f"tensor {what} uses external data, which needs the model "
                        "to be read from a file")
    if "\0" in location:
        raise _bad_path(location.replace("\0", "\\0"), f"the external data location of "
                        f"tensor {what} contains a NUL character")
    if os.path.isabs(location) or location.startswith(("/", "\\")) or ":" in location[:3]:
        raise _bad_path(location, f"external data of tensor {what} must be a path relative "
                        "to the model directory")
    base = os.path.realpath(model_dir)
    joined = os.path.normpath(os.path.join(base, location))
    real = os.path.realpath(joined)
    for p in (joined, real):
        if os.path.commonpath([base, p]) != base:
            raise _bad_path(location, f"external data of tensor {what} lies outside the model "
                            f"directory")
    numbers = {}
    for key in ("offset", "length"):
        text = info.get(key)
        if text is None:
            continue
        try:
            numbers[key] = int(text)
        except ValueError:
            raise GeError("E10001", {"value": text, "parameter": f"external_data.{key} of "
                                                                 f"tensor {what}",
                                     "reason": "The value must be an integer"}) from None
        if numbers[key] < 0:
            raise invalid_model(what, f"external data {key} {text} is negative")
    return real, numbers.get("offset", 0), numbers.get("length", -1)


# one read-only map per file while any constant still views it
_MAPS: "weakref.WeakValueDictionary[tuple, np.ndarray]" = weakref.WeakValueDictionary()


def _mapped(path: str) -> np.ndarray:
    st = os.stat(path)
    key = (os.path.realpath(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    mapped = _MAPS.get(key)
    if mapped is None:
        mapped = map_file(path)
        if mapped.size:
            _MAPS[key] = mapped
    return mapped


def read_external(t: TensorProto, model_dir: str | None, what: str, need: int) -> np.ndarray:
    """The `need` bytes of an external tensor as a view of the mapped file (nothing is read
    here); sizes are checked first."""
    path, offset, length = external_location(t, model_dir, what)
    try:
        with open_regular(path) as f:
            have = max(os.fstat(f.fileno()).st_size - offset, 0)
        if 0 <= length and have < length:
            raise invalid_model(what, f"external data file ends after {have} of {length} "
                                "bytes")
        span = have if length < 0 else length
        if span != need:
            raise invalid_model(what, f"tensor external data has {span} bytes but its "
                                f"dims need {need}")
        if span == 0:
            return np.zeros(0, np.uint8)
        return file_view(_mapped(path), offset, span, np.uint8, [span])
    except OSError as exc:
        raise GeError("E13001", {"file": path, "reason": os_reason(exc)}) from None
