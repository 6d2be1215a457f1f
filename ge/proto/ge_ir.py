"""The `ge.proto` (MODEL_DEF, AIR) and `domi` (TASK_INFO) protobuf schemas, built at import time.

Owns the wire schema of the IR on disk (AIR files, stage dumps) and of the two protobuf
partitions of an OM (spec/om-format.md §8, §9), and nothing else.  The schemas are compact
tables (message -> fields with their numbers) that ge.proto.schema turns into descriptors, so
there is no protoc step and no generated code that could drift from the installed protobuf.

Messages the spec names without listing their fields (AttrGroups internals, the many task
kinds of TaskDef) are declared as empty messages: their bytes survive a parse/serialize round
trip as unknown fields, which keeps a read -> write of a real OM lossless.
"""
from __future__ import annotations

from .schema import add_file, message_class

__all__ = ["ModelDef", "GraphDef", "OpDef", "AttrDef", "NamedAttrs", "ShapeDef",
           "TensorDescriptor", "TensorDef", "ModelTaskDef", "TaskDef", "KernelDef",
           "KernelContext", "PROTO_DTYPE_NAMES", "LIST_VALUE_TYPES"]

# DataType enum of ge.proto (proto numbering, §8.1): index == value.
PROTO_DTYPE_NAMES = (
    "DT_UNDEFINED DT_FLOAT DT_FLOAT16 DT_INT8 DT_UINT8 DT_INT16 DT_UINT16 DT_INT32 DT_INT64 "
    "DT_UINT32 DT_UINT64 DT_BOOL DT_DOUBLE DT_STRING DT_DUAL_SUB_INT8 DT_DUAL_SUB_UINT8 "
    "DT_COMPLEX64 DT_COMPLEX128 DT_QINT8 DT_QINT16 DT_QINT32 DT_QUINT8 DT_QUINT16 DT_RESOURCE "
    "DT_STRING_REF DT_DUAL DT_VARIANT DT_BF16 DT_INT4 DT_UINT1 DT_INT2 DT_UINT2 DT_COMPLEX32 "
    "DT_HIFLOAT8 DT_FLOAT8_E5M2 DT_FLOAT8_E4M3FN DT_FLOAT8_E8M0 DT_FLOAT6_E3M2 DT_FLOAT6_E2M3 "
    "DT_FLOAT4_E2M1 DT_FLOAT4_E1M2 DT_HIFLOAT4"
).split()

# AttrDef.ListValue.ListValueType (§8.2): index == value.
LIST_VALUE_TYPES = (
    "VT_LIST_NONE VT_LIST_STRING VT_LIST_INT VT_LIST_FLOAT VT_LIST_BOOL VT_LIST_BYTES "
    "VT_LIST_TENSOR_DESC VT_LIST_TENSOR VT_LIST_GRAPH VT_LIST_NAMED_ATTRS VT_LIST_DATA_TYPE"
).split()

# A field row: (name, number, type, label) where label is "" (singular), "*" (repeated) or
# "oneof:<name>"; a type that is not a scalar names a message or enum of the same file
# ("Outer.Inner" for nested ones); "map:<ValueType>" declares map<string, ValueType>.
_GE_IR = {
    "package": "ge.proto",
    "enums": {"DataType": PROTO_DTYPE_NAMES},
    "messages": {
        "AttrDef": [
            ("list", 1, "AttrDef.ListValue", "oneof:value"),
            ("s", 2, "bytes", "oneof:value"), ("i", 3, "int64", "oneof:value"),
            ("f", 4, "float", "oneof:value"), ("b", 5, "bool", "oneof:value"),
            ("bt", 7, "bytes", "oneof:value"), ("func", 10, "NamedAttrs", "oneof:value"),
            ("td", 11, "TensorDescriptor", "oneof:value"),
            ("t", 12, "TensorDef", "oneof:value"), ("g", 13, "GraphDef", "oneof:value"),
            ("list_list_int", 14, "AttrDef.ListListInt", "oneof:value"),
            ("dt", 15, "int64", "oneof:value"),
            ("list_list_float", 16, "AttrDef.ListListFloat", "oneof:value"),
            ("expression", 17, "bytes", "oneof:value"),
        ],
        "AttrDef.ListValue": [
            ("s", 2, "bytes", "*"), ("i", 3, "int64", "*"), ("f", 4, "float", "*"),
            ("b", 5, "bool", "*"), ("bt", 7, "bytes", "*"), ("td", 8, "TensorDescriptor", "*"),
            ("t", 9, "TensorDef", "*"), ("g", 10, "GraphDef", "*"), ("na", 11, "NamedAttrs", "*"),
            ("dt", 12, "int64", "*"), ("val_type", 20, "AttrDef.ListValue.ListValueType", ""),
        ],
        "AttrDef.ListListInt": [("list_list_i", 1, "AttrDef.ListListInt.ListInt", "*")],
        "AttrDef.ListListInt.ListInt": [("list_i", 1, "int64", "*")],
        "AttrDef.ListListFloat": [("list_list_f", 1, "AttrDef.ListListFloat.ListFloat", "*")],
        "AttrDef.ListListFloat.ListFloat": [("list_f", 1, "float", "*")],
        "NamedAttrs": [("name", 1, "string", ""), ("attr", 2, "map:AttrDef", "*")],
        "ShapeDef": [("dim", 1, "int64", "*")],
        "OtherGroupDef": [],
        "AttrGroupDef": [],
        "AttrGroups": [("other_group_def", 1, "OtherGroupDef", ""),
                       ("attr_group_def", 2, "AttrGroupDef", "*")],
        "TensorDescriptor": [
            ("name", 1, "string", ""), ("dtype", 2, "DataType", ""), ("shape", 3, "ShapeDef", ""),
            ("layout", 4, "string", ""), ("attr", 5, "map:AttrDef", "*"),
            ("attr_groups", 6, "AttrGroups", ""), ("has_out_attr", 9, "bool", ""),
            ("size", 10, "int64", ""), ("weight_size", 11, "int64", ""),
            ("reuse_input", 12, "bool", ""), ("output_tensor", 13, "bool", ""),
            ("device_type", 14, "string", ""), ("input_tensor", 15, "bool", ""),
            ("real_dim_cnt", 16, "int64", ""), ("reuse_input_index", 17, "int64", ""),
            ("data_offset", 18, "int64", ""), ("cmps_size", 19, "int64", ""),
            ("cmps_tab", 20, "string", ""), ("cmps_tab_offset", 21, "int64", ""),
        ],
        "TensorDef": [("desc", 1, "TensorDescriptor", ""), ("data", 2, "bytes", "")],
        "OpDef": [
            ("name", 1, "string", ""), ("type", 2, "string", ""), ("input", 5, "string", "*"),
            ("attr", 10, "map:AttrDef", "*"), ("attr_groups", 11, "AttrGroups", ""),
            ("has_out_attr", 20, "bool", ""), ("id", 21, "int64", ""),
            ("stream_id", 22, "int64", ""), ("input_name", 23, "string", "*"),
            ("src_name", 24, "string", "*"), ("src_index", 25, "int64", "*"),
            ("dst_name", 26, "string", "*"), ("dst_index", 27, "int64", "*"),
            ("input_i", 28, "int64", "*"), ("output_i", 29, "int64", "*"),
            ("workspace", 30, "int64", "*"), ("workspace_bytes", 31, "int64", "*"),
            ("is_input_const", 32, "bool", "*"), ("input_desc", 33, "TensorDescriptor", "*"),
            ("output_desc", 34, "TensorDescriptor", "*"), ("subgraph_name", 35, "string", "*"),
        ],
        "GraphDef": [
            ("name", 1, "string", ""), ("input", 4, "string", "*"), ("output", 5, "string", "*"),
            ("op", 6, "OpDef", "*"), ("attr", 11, "map:AttrDef", "*"),
            ("attr_groups", 12, "AttrGroups", ""),
        ],
        "ModelDef": [
            ("name", 1, "string", ""), ("version", 2, "uint32", ""),
            ("custom_version", 3, "string", ""), ("graph", 7, "GraphDef", "*"),
            ("attr", 11, "map:AttrDef", "*"), ("attr_groups", 12, "AttrGroups", ""),
        ],
    },
    "nested_enums": {"AttrDef.ListValue.ListValueType": LIST_VALUE_TYPES},
}

# Task kinds the spec names without fields: empty messages (bytes kept as unknown fields).
_OPAQUE_TASKS = (
    ("kernel_ex", 21), ("kernel_hccl", 25), ("event_ex", 26), ("log_timestamp", 28),
    ("memcpy_async", 31), ("stream_switch", 32), ("stream_active", 33),
    ("stream_switch_n", 36), ("label_set", 37), ("label_goto_ex", 38),
    ("label_switch_by_index", 39), ("kernel_with_handle", 40), ("ffts_task", 41),
    ("ffts_plus_task", 42), ("dsa_task", 43), ("cmo_task", 44), ("cmo_barrier_task", 45),
    ("npu_get_float_status", 46), ("npu_clear_float_status", 47), ("dvpp_task", 48),
    ("npu_get_float_debug_status", 49), ("npu_clear_float_debug_status", 50),
    ("cmo_addr_task", 51), ("update_pc_task", 52), ("fusion_task", 53),
)


def _opaque_name(field: str) -> str:
    return "".join(part.capitalize() for part in field.split("_")) + "Def"


_TASK = {
    "package": "domi",
    "enums": {},
    "nested_enums": {},
    "messages": {
        "ModelTaskDef": [
            ("version", 1, "string", ""), ("attr", 9, "map:string", "*"),
            ("task", 10, "TaskDef", "*"), ("memory_size", 11, "uint64", ""),
            ("stream_num", 12, "uint32", ""), ("event_num", 13, "uint32", ""),
            ("weight_size", 14, "uint64", ""), ("op", 15, "bytes", "*"),
            ("base_addr", 16, "uint64", ""), ("weight_addr", 17, "uint64", ""),
            ("batch_num", 18, "uint32", ""),
        ],
        "TaskDef": [
            ("id", 1, "uint32", ""), ("type", 2, "uint32", ""), ("stream_id", 10, "uint32", ""),
            ("event_id", 11, "uint32", ""), ("notify_id", 12, "uint32", ""),
            ("sqe_num", 13, "uint32", ""), ("kernel", 20, "KernelDef", ""),
            ("label_id", 30, "uint32", ""), ("private_def", 34, "bytes", ""),
            ("ops_kernel_store_ptr", 35, "uint64", ""),
        ] + [(name, num, _opaque_name(name), "") for name, num in _OPAQUE_TASKS],
        "KernelDef": [
            ("context", 1, "KernelContext", ""), ("is_block_task_prefetch", 2, "bool", ""),
            ("stub_func", 10, "string", ""), ("block_dim", 11, "uint32", ""),
            ("args_size", 12, "uint32", ""), ("args", 13, "bytes", ""),
            ("sm_desc", 14, "bytes", ""), ("flowtable", 15, "bytes", ""),
            ("so_name", 16, "string", ""), ("kernel_name", 17, "string", ""),
            ("kernel_ext_info", 18, "bytes", ""), ("kernel_ext_info_size", 19, "uint32", ""),
            ("args_info", 20, "ArgsInfo", "*"), ("schedule_mode", 21, "uint32", ""),
            ("block_dim_offset", 22, "uint32", ""),
        ],
        "KernelContext": [
            ("kernel_type", 1, "uint32", ""), ("op_id", 2, "uint32", ""),
            ("kernel_func_id", 3, "uint32", ""), ("op_index", 4, "uint32", ""),
            ("is_flowtable", 5, "bool", ""), ("args_offset", 6, "bytes", ""),
            ("args_count", 7, "uint32", ""), ("origin_op_index", 8, "uint32", "*"),
            ("args_format", 10, "string", ""),
        ],
        "ArgsInfo": [],
        **{_opaque_name(name): [] for name, _ in _OPAQUE_TASKS},
    },
}

add_file("pyatc/ge_ir.proto", _GE_IR)
add_file("pyatc/task.proto", _TASK)


ModelDef = message_class("ge.proto.ModelDef")
GraphDef = message_class("ge.proto.GraphDef")
OpDef = message_class("ge.proto.OpDef")
AttrDef = message_class("ge.proto.AttrDef")
NamedAttrs = message_class("ge.proto.NamedAttrs")
ShapeDef = message_class("ge.proto.ShapeDef")
TensorDescriptor = message_class("ge.proto.TensorDescriptor")
TensorDef = message_class("ge.proto.TensorDef")
ModelTaskDef = message_class("domi.ModelTaskDef")
TaskDef = message_class("domi.TaskDef")
KernelDef = message_class("domi.KernelDef")
KernelContext = message_class("domi.KernelContext")
