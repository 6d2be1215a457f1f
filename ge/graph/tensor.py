"""TensorDesc, Shape and Tensor of the CANN `ge.graph` surface (value semantics)."""
from __future__ import annotations

import numpy as np

from .types import DataType, Format, Placement, from_numpy_dtype, to_numpy_dtype


class Shape(list):
    """A list of dims; -1 is an unknown dim, [-2] an unknown rank."""

    def get_shape_size(self) -> int:
        if len(self) == 0:
            return 0
        if any(d < 0 for d in self):
            return -1
        size = 1
        for d in self:
            size *= d
        return size

    def is_unknown_shape(self) -> bool:
        return any(d < 0 for d in self)


def _check_enum(value, enum, what):
    if not isinstance(value, enum):
        raise TypeError(f"{what} must be a {enum.__name__}, got {type(value).__name__}")
    return value


class TensorDesc:
    """Shape, format and data type of one tensor; positional order is shape, format, dtype."""

    __slots__ = ("_shape", "_origin_shape", "_format", "_origin_format", "_dtype", "name")

    def __init__(self, shape=None, format: Format = Format.FORMAT_ND,
                 data_type: DataType = DataType.DT_FLOAT):
        self._shape = Shape(int(d) for d in (shape or []))
        self._origin_shape = Shape(self._shape)
        self._format = _check_enum(format, Format, "format")
        self._origin_format = self._format
        self._dtype = _check_enum(data_type, DataType, "data_type")
        self.name = ""

    def clone(self) -> "TensorDesc":
        d = TensorDesc.__new__(TensorDesc)
        d._shape, d._origin_shape = Shape(self._shape), Shape(self._origin_shape)
        d._format, d._origin_format, d._dtype = self._format, self._origin_format, self._dtype
        d.name = self.name
        return d

    def __copy__(self):
        raise RuntimeError("TensorDesc cannot be copied")

    __deepcopy__ = lambda self, memo: self.__copy__()  # noqa: E731

    shape = property(lambda self: Shape(self._shape))
    origin_shape = property(lambda self: Shape(self._origin_shape))
    format = property(lambda self: self._format)
    origin_format = property(lambda self: self._origin_format)
    data_type = property(lambda self: self._dtype)

    def get_shape(self):
        return self.shape

    def get_origin_shape(self):
        return self.origin_shape

    def get_format(self):
        return self._format

    def get_origin_format(self):
        return self._origin_format

    def get_data_type(self):
        return self._dtype

    def set_shape(self, shape) -> "TensorDesc":
        self._shape = Shape(int(d) for d in (shape or []))
        return self

    def set_origin_shape(self, shape) -> "TensorDesc":
        self._origin_shape = Shape(int(d) for d in (shape or []))
        return self

    def set_format(self, fmt) -> "TensorDesc":
        self._format = _check_enum(fmt, Format, "format")
        return self

    def set_origin_format(self, fmt) -> "TensorDesc":
        self._origin_format = _check_enum(fmt, Format, "format")
        return self

    def set_data_type(self, dt) -> "TensorDesc":
        self._dtype = _check_enum(dt, DataType, "data_type")
        return self

    def __eq__(self, other):
        return (isinstance(other, TensorDesc) and self._shape == other._shape
                and self._format == other._format and self._dtype == other._dtype)

    def __repr__(self):
        return f"TensorDesc({list(self._shape)}, {self._format.name}, {self._dtype.name})"


def _to_py(array: np.ndarray):
    if array.ndim == 0:
        return array.item()
    return array.tolist()


class Tensor:
    """A host tensor; the bytes are a numpy array (`numpy()` is our internal accessor)."""

    __slots__ = ("_array", "_dtype", "_format", "_placement")

    def __init__(self, data=None, file_path=None, data_type: DataType = DataType.DT_FLOAT,
                 format: Format = Format.FORMAT_ND, shape=None,
                 placement: Placement = Placement.PLACEMENT_HOST):
        _check_enum(data_type, DataType, "data_type")
        _check_enum(format, Format, "format")
        if data_type == DataType.DT_DOUBLE and (data is not None or file_path is not None):
            raise TypeError("DT_DOUBLE tensors cannot be created from Python")
        np_dtype = to_numpy_dtype(data_type)
        if file_path is not None:
            from ge.fsutil import check_regular
            check_regular(file_path)    # np.fromfile would wait on a FIFO, or read a device
            array = np.fromfile(file_path, dtype=np_dtype)
        elif data is None:
            array = np.zeros((0,), dtype=np_dtype)
        else:
            array = np.asarray(data, dtype=np_dtype)
        if shape is not None:
            array = array.reshape([int(d) for d in shape])
        self._array, self._dtype, self._format, self._placement = array, data_type, format, placement

    @classmethod
    def from_numpy(cls, array, format: Format = Format.FORMAT_ND) -> "Tensor":
        t = cls.__new__(cls)
        t._array = np.require(np.asarray(array), requirements='C')  # keeps 0-d arrays 0-d
        t._dtype = from_numpy_dtype(t._array.dtype)
        t._format, t._placement = format, Placement.PLACEMENT_HOST
        return t

    @classmethod
    def from_derived(cls, derived, format: Format = Format.FORMAT_ND) -> "Tensor":
        """A tensor whose values are computed when first asked for (ge.graph.derived)."""
        t = cls.__new__(cls)
        t._array, t._dtype = derived, from_numpy_dtype(derived.dtype)
        t._format, t._placement = format, Placement.PLACEMENT_HOST
        return t

    @classmethod
    def from_bytes(cls, raw: bytes, data_type: DataType, shape, format=Format.FORMAT_ND):
        arr = np.frombuffer(raw, dtype=to_numpy_dtype(data_type)).reshape(list(shape))
        t = cls.from_numpy(arr.copy(), format)
        t._dtype = data_type
        return t

    def numpy(self) -> np.ndarray:
        if not isinstance(self._array, np.ndarray):
            self._array = self._array.materialize()     # a derived constant, computed once
        return self._array

    def stored(self):
        """The values to store: the array, or a derived constant not computed yet, which the
        OM writer streams (ge.graph.derived)."""
        return self._array

    data = property(lambda self: _to_py(self.numpy()))
    data_type = property(lambda self: self._dtype)
    format = property(lambda self: self._format)
    shape = property(lambda self: Shape(self._array.shape))
    placement = property(lambda self: self._placement)

    def get_data(self):
        return self.data

    def get_tensor_desc(self) -> TensorDesc:
        return TensorDesc(list(self._array.shape), self._format, self._dtype)

    def set_format(self, fmt):
        self._format = _check_enum(fmt, Format, "format")
        return self

    def set_data_type(self, dt):
        _check_enum(dt, DataType, "data_type")
        self._array = self.numpy().astype(to_numpy_dtype(dt))
        self._dtype = dt
        return self

    def to_host(self):
        self._placement = Placement.PLACEMENT_HOST
        return self

    def to_device(self):
        self._placement = Placement.PLACEMENT_DEVICE
        return self

    def __repr__(self):
        return f"Tensor({self._dtype.name}, shape={list(self._array.shape)})"
