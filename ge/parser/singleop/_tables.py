"""The names an op-list file may use (CANN's single-op JSON reader: lower-cased before lookup):
tensor data types, tensor formats, attribute types.  Values are our IR enums, which carry the
CANN enum numbers (the generated file names print those numbers)."""
from __future__ import annotations

from ge.graph import DataType, Format
from ge.graph.types import AttrValueType as VT

DT = DataType
DATA_TYPES = {
    "bool": DT.DT_BOOL, "int8": DT.DT_INT8, "uint8": DT.DT_UINT8, "int16": DT.DT_INT16,
    "uint16": DT.DT_UINT16, "int32": DT.DT_INT32, "uint32": DT.DT_UINT32,
    "int64": DT.DT_INT64, "uint64": DT.DT_UINT64, "float16": DT.DT_FLOAT16,
    "half": DT.DT_FLOAT16, "fp16": DT.DT_FLOAT16, "float": DT.DT_FLOAT,
    "float32": DT.DT_FLOAT, "double": DT.DT_DOUBLE, "complex32": DT.DT_COMPLEX32,
    "complex64": DT.DT_COMPLEX64, "complex128": DT.DT_COMPLEX128, "uint1": DT.DT_UINT1,
    "bfloat16": DT.DT_BF16, "int4": DT.DT_INT4, "hifloat8": DT.DT_HIFLOAT8,
    "hifloat4": DT.DT_HIFLOAT4, "float8_e5m2": DT.DT_FLOAT8_E5M2,
    "float8_e4m3fn": DT.DT_FLOAT8_E4M3FN,
}

# file spelling -> Format member name (FORMAT_ prefix dropped) where the two differ
_FORMAT_SPELLINGS = {
    "deconv_sp_stride8_trans": "FRACTAL_DECONV_SP_STRIDE8_TRANS",
    "lookup_lookups": "HASHTABLE_LOOKUP_LOOKUPS", "lookup_keys": "HASHTABLE_LOOKUP_KEYS",
    "lookup_value": "HASHTABLE_LOOKUP_VALUE", "lookup_output": "HASHTABLE_LOOKUP_OUTPUT",
    "lookup_hits": "HASHTABLE_LOOKUP_HITS", "c1hwncoc0": "C1HWNCoC0",
}
_FORMAT_NAMES = (
    "nchw nhwc nd nc1hwc0 fractal_z nc1c0hwpad nhwc1c0 fsr_nchw fractal_deconv c1hwnc0 "
    "fractal_deconv_transpose fractal_deconv_sp_stride_trans nc1hwc0_c04 fractal_z_c04 chwn "
    "deconv_sp_stride8_trans nc1khkwhwc0 bn_weight filter_hwck hwcn lookup_lookups lookup_keys "
    "lookup_value lookup_output lookup_hits md c1hwncoc0 fractal_nz ndhwc ncdhw dhwcn dhwnc "
    "ndc1hwc0 fractal_z_3d fractal_z_3d_transpose cn nc fractal_zn_lstm fractal_z_g"
).split()
FORMATS = {name: Format["FORMAT_" + _FORMAT_SPELLINGS.get(name, name.upper())]
           for name in _FORMAT_NAMES}

# Formats whose shape is the memory layout itself: the host kernels read these.  The others
# (5-D NC1HWC0, the fractal families) are device storage layouts with padding and blocking.
PLAIN_FORMATS = frozenset(FORMATS[n] for n in (
    "nchw", "nhwc", "nd", "chwn", "hwcn", "ndhwc", "ncdhw", "dhwcn", "dhwnc", "cn", "nc"))

ATTR_TYPES = {
    "bool": VT.VT_BOOL, "int": VT.VT_INT, "float": VT.VT_FLOAT, "string": VT.VT_STRING,
    "list_bool": VT.VT_LIST_BOOL, "list_int": VT.VT_LIST_INT, "list_float": VT.VT_LIST_FLOAT,
    "list_string": VT.VT_LIST_STRING, "list_list_int": VT.VT_LIST_LIST_INT,
    "data_type": VT.VT_DATA_TYPE,
}

UNKNOWN_DIM, UNKNOWN_RANK_DIM = -1, -2
MAX_FILE_NAME = 128
