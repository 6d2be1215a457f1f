"""Enums of the CANN `ge.graph` surface (values match the C++ in-memory enums) and dtype tables."""
from __future__ import annotations

from enum import IntEnum

import numpy as np


class DataType(IntEnum):
    DT_FLOAT = 0
    DT_FLOAT16 = 1
    DT_INT8 = 2
    DT_INT32 = 3
    DT_UINT8 = 4
    DT_INT16 = 6
    DT_UINT16 = 7
    DT_UINT32 = 8
    DT_INT64 = 9
    DT_UINT64 = 10
    DT_DOUBLE = 11
    DT_BOOL = 12
    DT_STRING = 13
    DT_DUAL_SUB_INT8 = 14
    DT_DUAL_SUB_UINT8 = 15
    DT_COMPLEX64 = 16
    DT_COMPLEX128 = 17
    DT_QINT8 = 18
    DT_QINT16 = 19
    DT_QINT32 = 20
    DT_QUINT8 = 21
    DT_QUINT16 = 22
    DT_RESOURCE = 23
    DT_STRING_REF = 24
    DT_DUAL = 25
    DT_VARIANT = 26
    DT_BF16 = 27
    DT_UNDEFINED = 28
    DT_INT4 = 29
    DT_UINT1 = 30
    DT_INT2 = 31
    DT_UINT2 = 32
    DT_COMPLEX32 = 33
    DT_HIFLOAT8 = 34
    DT_FLOAT8_E5M2 = 35
    DT_FLOAT8_E4M3FN = 36
    DT_FLOAT8_E8M0 = 37
    DT_FLOAT6_E3M2 = 38
    DT_FLOAT6_E2M3 = 39
    DT_FLOAT4_E2M1 = 40
    DT_FLOAT4_E1M2 = 41
    DT_HIFLOAT4 = 42
    DT_MAX = 43


_FORMAT_NAMES = (
    "NCHW NHWC ND NC1HWC0 FRACTAL_Z NC1C0HWPAD NHWC1C0 FSR_NCHW FRACTAL_DECONV C1HWNC0 "
    "FRACTAL_DECONV_TRANSPOSE FRACTAL_DECONV_SP_STRIDE_TRANS NC1HWC0_C04 FRACTAL_Z_C04 CHWN "
    "FRACTAL_DECONV_SP_STRIDE8_TRANS HWCN NC1KHKWHWC0 BN_WEIGHT FILTER_HWCK "
    "HASHTABLE_LOOKUP_LOOKUPS HASHTABLE_LOOKUP_KEYS HASHTABLE_LOOKUP_VALUE "
    "HASHTABLE_LOOKUP_OUTPUT HASHTABLE_LOOKUP_HITS C1HWNCoC0 MD NDHWC FRACTAL_ZZ FRACTAL_NZ "
    "NCDHW DHWCN NDC1HWC0 FRACTAL_Z_3D CN NC DHWNC FRACTAL_Z_3D_TRANSPOSE FRACTAL_ZN_LSTM "
    "FRACTAL_Z_G RESERVED ALL NULL ND_RNN_BIAS FRACTAL_ZN_RNN NYUV NYUV_A NCL FRACTAL_Z_WINO "
    "C1HWC0 FRACTAL_NZ_C0_16 FRACTAL_NZ_C0_32 END MAX"
).split()

Format = IntEnum("Format", [("FORMAT_" + n, i) for i, n in enumerate(_FORMAT_NAMES)])
Format.__module__ = __name__
Format.__doc__ = "Tensor layouts; values match the C++ ge::Format enum."


def format_name(fmt: Format) -> str:
    """The layout string used in TensorDescriptor.layout, e.g. "NCHW"."""
    return Format(fmt).name[len("FORMAT_"):]


def format_from_name(name: str) -> Format:
    return Format["FORMAT_" + name]


class Placement(IntEnum):
    PLACEMENT_HOST = 0
    PLACEMENT_DEVICE = 1


class DumpFormat(IntEnum):
    kOnnx = 0
    kTxt = 1
    kReadable = 2


class AttrValueType(IntEnum):
    """Kinds of attribute values (our numbering; the CANN enum values are not observable)."""
    VT_NONE = 0
    VT_STRING = 1
    VT_FLOAT = 2
    VT_BOOL = 3
    VT_INT = 4
    VT_TENSOR_DESC = 5
    VT_TENSOR = 6
    VT_BYTES = 7
    VT_GRAPH = 8
    VT_NAMED_ATTRS = 9
    VT_LIST_LIST_INT = 10
    VT_DATA_TYPE = 11
    VT_LIST_LIST_FLOAT = 12
    VT_LIST_STRING = 1001
    VT_LIST_FLOAT = 1002
    VT_LIST_BOOL = 1003
    VT_LIST_INT = 1004
    VT_LIST_TENSOR_DESC = 1005
    VT_LIST_TENSOR = 1006
    VT_LIST_BYTES = 1007
    VT_LIST_GRAPH = 1008
    VT_LIST_NAMED_ATTRS = 1009
    VT_LIST_DATA_TYPE = 1011


# DataType <-> numpy.  bfloat16 and the narrow float types have no numpy dtype.
_NP = {
    DataType.DT_FLOAT: np.float32, DataType.DT_FLOAT16: np.float16,
    DataType.DT_DOUBLE: np.float64, DataType.DT_INT8: np.int8, DataType.DT_INT16: np.int16,
    DataType.DT_INT32: np.int32, DataType.DT_INT64: np.int64, DataType.DT_UINT8: np.uint8,
    DataType.DT_UINT16: np.uint16, DataType.DT_UINT32: np.uint32,
    DataType.DT_UINT64: np.uint64, DataType.DT_BOOL: np.bool_,
    DataType.DT_COMPLEX64: np.complex64, DataType.DT_COMPLEX128: np.complex128,
    DataType.DT_STRING: np.object_,
}
_FROM_NP = {np.dtype(v): k for k, v in _NP.items()}


def to_numpy_dtype(dt: DataType) -> np.dtype:
    try:
        return np.dtype(_NP[DataType(dt)])
    except KeyError:
        raise TypeError(f"data type {DataType(dt).name} has no numpy equivalent") from None


def from_numpy_dtype(dtype) -> DataType:
    try:
        return _FROM_NP[np.dtype(dtype)]
    except KeyError:
        if np.dtype(dtype).kind in "US":
            return DataType.DT_STRING
        raise TypeError(f"numpy dtype {dtype} has no GE data type") from None


def dtype_size(dt: DataType) -> int:
    """Bytes per element (0 for strings)."""
    dt = DataType(dt)
    if dt == DataType.DT_STRING:
        return 0
    if dt == DataType.DT_BF16:
        return 2
    return to_numpy_dtype(dt).itemsize
