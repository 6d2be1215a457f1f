"""TensorFlow's `GraphDef` schema (package `domi.tensorflow`, as CANN GE carries the TensorFlow
protos under graph_metadef/proto/tensorflow/), built from a table with ge.proto.schema.

Owns the wire and text form of frozen TensorFlow graphs: GraphDef, NodeDef, AttrValue,
TensorProto, TensorShapeProto, FunctionDefLibrary (FunctionDef, OpDef signatures).  TensorFlow
itself is never imported: field names and numbers are the published ones, so a `.pb` written by
TensorFlow parses here and a `.pbtxt` reads with google.protobuf.text_format.
"""
from __future__ import annotations

from .schema import add_file, message_class

__all__ = ["GraphDef", "NodeDef", "AttrValue", "TensorProto", "TensorShapeProto",
           "FunctionDefLibrary", "FunctionDef", "TF_DTYPE_NUMBERS"]

# types.proto DataType: value numbers have gaps (the _REF variants start at 101).
_BASE_DTYPES = (
    "DT_INVALID DT_FLOAT DT_DOUBLE DT_INT32 DT_UINT8 DT_INT16 DT_INT8 DT_STRING DT_COMPLEX64 "
    "DT_INT64 DT_BOOL DT_QINT8 DT_QUINT8 DT_QINT32 DT_BFLOAT16 DT_QINT16 DT_QUINT16 DT_UINT16 "
    "DT_COMPLEX128 DT_HALF DT_RESOURCE DT_VARIANT DT_UINT32 DT_UINT64 DT_COMPLEX32"
).split()
TF_DTYPE_NUMBERS = tuple((name, i) for i, name in enumerate(_BASE_DTYPES)) + tuple(
    (f"{name}_REF", 100 + i) for i, name in enumerate(_BASE_DTYPES) if i)

_TF = {
    "package": "domi.tensorflow",
    "enums": {"DataType": dict(TF_DTYPE_NUMBERS)},
    "nested_enums": {},
    "messages": {
        "TensorShapeProto": [("dim", 2, "TensorShapeProto.Dim", "*"),
                             ("unknown_rank", 3, "bool", "")],
        "TensorShapeProto.Dim": [("size", 1, "int64", ""), ("name", 2, "string", "")],
        "ResourceHandleProto": [
            ("device", 1, "string", ""), ("container", 2, "string", ""),
            ("name", 3, "string", ""), ("hash_code", 4, "uint64", ""),
            ("maybe_type_name", 5, "string", ""),
        ],
        "VariantTensorDataProto": [("type_name", 1, "string", ""), ("metadata", 2, "bytes", ""),
                                   ("tensors", 3, "TensorProto", "*")],
        "TensorProto": [
            ("dtype", 1, "DataType", ""), ("tensor_shape", 2, "TensorShapeProto", ""),
            ("version_number", 3, "int32", ""), ("tensor_content", 4, "bytes", ""),
            ("half_val", 13, "int32", "*"), ("float_val", 5, "float", "*"),
            ("double_val", 6, "double", "*"), ("int_val", 7, "int32", "*"),
            ("string_val", 8, "bytes", "*"), ("scomplex_val", 9, "float", "*"),
            ("int64_val", 10, "int64", "*"), ("bool_val", 11, "bool", "*"),
            ("dcomplex_val", 12, "double", "*"),
            ("resource_handle_val", 14, "ResourceHandleProto", "*"),
            ("variant_val", 15, "VariantTensorDataProto", "*"),
            ("uint32_val", 16, "uint32", "*"), ("uint64_val", 17, "uint64", "*"),
            ("icomplex_val", 18, "int32", "*"),
        ],
        "AttrValue": [
            ("list", 1, "AttrValue.ListValue", "oneof:value"), ("s", 2, "bytes", "oneof:value"),
            ("i", 3, "int64", "oneof:value"), ("f", 4, "float", "oneof:value"),
            ("b", 5, "bool", "oneof:value"), ("type", 6, "DataType", "oneof:value"),
            ("shape", 7, "TensorShapeProto", "oneof:value"),
            ("tensor", 8, "TensorProto", "oneof:value"),
            ("placeholder", 9, "string", "oneof:value"),
            ("func", 10, "NameAttrList", "oneof:value"),
        ],
        "AttrValue.ListValue": [
            ("s", 2, "bytes", "*"), ("i", 3, "int64", "*"), ("f", 4, "float", "*"),
            ("b", 5, "bool", "*"), ("type", 6, "DataType", "*"),
            ("shape", 7, "TensorShapeProto", "*"), ("tensor", 8, "TensorProto", "*"),
            ("func", 9, "NameAttrList", "*"),
        ],
        "NameAttrList": [("name", 1, "string", ""), ("attr", 2, "map:AttrValue", "*")],
        "NodeDef": [
            ("name", 1, "string", ""), ("op", 2, "string", ""), ("input", 3, "string", "*"),
            ("device", 4, "string", ""), ("attr", 5, "map:AttrValue", "*"),
        ],
        "OpDef": [
            ("name", 1, "string", ""), ("input_arg", 2, "OpDef.ArgDef", "*"),
            ("output_arg", 3, "OpDef.ArgDef", "*"), ("attr", 4, "OpDef.AttrDef", "*"),
            ("summary", 5, "string", ""), ("description", 6, "string", ""),
            ("deprecation", 8, "OpDeprecation", ""), ("is_aggregate", 16, "bool", ""),
            ("is_stateful", 17, "bool", ""), ("is_commutative", 18, "bool", ""),
            ("allows_uninitialized_input", 19, "bool", ""),
        ],
        "OpDef.ArgDef": [
            ("name", 1, "string", ""), ("description", 2, "string", ""),
            ("type", 3, "DataType", ""), ("type_attr", 4, "string", ""),
            ("number_attr", 5, "string", ""), ("type_list_attr", 6, "string", ""),
            ("is_ref", 16, "bool", ""),
        ],
        "OpDef.AttrDef": [
            ("name", 1, "string", ""), ("type", 2, "string", ""),
            ("default_value", 3, "AttrValue", ""), ("description", 4, "string", ""),
            ("has_minimum", 5, "bool", ""), ("minimum", 6, "int64", ""),
            ("allowed_values", 7, "AttrValue", ""),
        ],
        "OpDeprecation": [("version", 1, "int32", ""), ("explanation", 2, "string", "")],
        "FunctionDef": [
            ("signature", 1, "OpDef", ""), ("node_def", 3, "NodeDef", "*"),
            ("ret", 4, "map:string", "*"), ("attr", 5, "map:AttrValue", "*"),
        ],
        "GradientDef": [("function_name", 1, "string", ""), ("gradient_func", 2, "string", "")],
        "FunctionDefLibrary": [("function", 1, "FunctionDef", "*"),
                               ("gradient", 2, "GradientDef", "*")],
        "VersionDef": [("producer", 1, "int32", ""), ("min_consumer", 2, "int32", ""),
                       ("bad_consumers", 3, "int32", "*")],
        "GraphDef": [
            ("node", 1, "NodeDef", "*"), ("library", 2, "FunctionDefLibrary", ""),
            ("version", 3, "int32", ""), ("versions", 4, "VersionDef", ""),
        ],
    },
}

add_file("pyatc/tensorflow.proto", _TF)

GraphDef = message_class("domi.tensorflow.GraphDef")
NodeDef = message_class("domi.tensorflow.NodeDef")
AttrValue = message_class("domi.tensorflow.AttrValue")
TensorProto = message_class("domi.tensorflow.TensorProto")
TensorShapeProto = message_class("domi.tensorflow.TensorShapeProto")
FunctionDefLibrary = message_class("domi.tensorflow.FunctionDefLibrary")
FunctionDef = message_class("domi.tensorflow.FunctionDef")
