"""Reserved attribute names: the one place each name the compiler, the OM and the runtime share
is spelled.  CANN's names where CANN has one; `_pyatc_*` for ours.  Import the constant, never
re-type the string (tests/test_attr_names.py checks that no other module spells these)."""
from __future__ import annotations

__all__ = ["ATTR_ORIGIN", "ATTR_PARENT_INDEX", "ATTR_SUBGRAPH_IR_NAMES", "ATTR_ENGINE",
           "ATTR_KERNEL_LIB", "ATTR_OP_KERNEL_LIB", "ATTR_KERNEL_NAME", "ATTR_KERNEL_SHA256",
           "ATTR_KERNEL_NAME_FOR_LOAD", "ATTR_PASS_NAME", "ATTR_TARGET", "ATTR_CUSTOM_PACKAGE",
           "ATTR_CUSTOM_PACKAGES", "ATTR_DYNAMIC_SHAPE_PARTITIONED", "ATTR_IS_UNKNOWN_SHAPE",
           "TENSOR_SHAPE_RANGE", "ATTR_DYNAMIC_RANGES", "ATTR_DYNAMIC_SOURCE",
           "ATTR_DYNAMIC_OPTIONS", "ATTR_PRECISION", "ATTR_PRECISION_MODE_ENUM",
           "ATTR_KEEP_DTYPE", "ATTR_IMPL_MODE", "ATTR_MODEL_PRECISION", "ATTR_MODEL_DTYPE_COUNTS",
           "RESERVED"]

ATTR_ORIGIN = "_datadump_original_op_names"        # framework op names a node stands for
ATTR_PARENT_INDEX = "_parent_node_index"          # subgraph Data -> input index of its parent
ATTR_SUBGRAPH_IR_NAMES = "_subgraph_ir_names"     # a node's subgraph names, in port order
ATTR_ENGINE = "_lxfusion_engine_name"             # engine placement
ATTR_KERNEL_LIB = "_lxfusion_op_kernel_lib_name"
ATTR_OP_KERNEL_LIB = "_ge_attr_op_kernel_lib_name"
ATTR_KERNEL_NAME = "_kernelname"                  # TBE_KERNELS item of a compiled op
ATTR_KERNEL_SHA256 = "_kernel_sha256"             # sha256 of that item's bytes (ours)
ATTR_KERNEL_NAME_FOR_LOAD = "_tbe_kernel_name_for_load"   # om-format §5.1: looked up first
ATTR_PASS_NAME = "_fusion_pass_name"              # passes that created a node, oldest first
ATTR_TARGET = "_pyatc_target"                     # model attribute: the OM runs on the host
ATTR_CUSTOM_PACKAGE = "_custom_op_package"        # "<package> <version>" of a custom op
ATTR_CUSTOM_PACKAGES = "_custom_op_packages"      # model attribute: every package used
# dynamic-shape models (docs/dynamic-shapes.md "Unknown dimensions and ranges")
ATTR_DYNAMIC_SHAPE_PARTITIONED = "_dynamic_shape_partitioned"   # root graph: unknown-shape model
ATTR_IS_UNKNOWN_SHAPE = "_is_unknown_shape"       # op whose shapes are known at run time only
# tensor desc: [[lo, hi], ...], hi -1 unbounded (not RESERVED: also a --singleop JSON key)
TENSOR_SHAPE_RANGE = "shape_range"
ATTR_DYNAMIC_RANGES = "_pyatc_input_shape_range"  # model: the ranges, --input_shape_range text
ATTR_DYNAMIC_SOURCE = "_pyatc_dynamic_source_graph"   # model: parsed graph (ModelDef bytes)
ATTR_DYNAMIC_OPTIONS = "_pyatc_dynamic_options"   # model: compile options (JSON) to specialise

ATTR_PRECISION = "_pyatc_precision"               # dtype-assignment decision of a float op
ATTR_PRECISION_MODE_ENUM = "_precision_mode_enum"  # CANN FE's PrecisionMode value of the op
ATTR_KEEP_DTYPE = "_keep_dtype"                   # --keep_dtype pinned the op (CANN: 1)
ATTR_IMPL_MODE = "_op_impl_mode_enum"             # implementation variant (CANN's bit values)
ATTR_MODEL_PRECISION = "_pyatc_precision_mode"    # model attribute: the precision mode
ATTR_MODEL_DTYPE_COUNTS = "_pyatc_precision_dtype_counts"  # model attribute: "dtype:count"

RESERVED = tuple(value for name, value in sorted(globals().items()) if name.startswith("ATTR_"))
