"""Graph / structural ops (spec/ir-ops.md §3.1): Data, Const, Constant, FileConstant, NetOutput,
PartitionedCall, If, Case, MapIndex, Identity, Dropout.

Data, NetOutput, If and PartitionedCall have no numpy kernel of their own: the reference
interpreter (ge.ops.interpreter) feeds Data nodes, collects NetOutput and runs subgraphs.
"""
from __future__ import annotations

import numpy as np

from ge.fsutil import check_regular
from ge.graph.types import from_numpy_dtype, to_numpy_dtype

from ._common import (DT, VT, AttrSpec, OpDef, Port, Role, dtype_of, fail, infer_same, numel,
                      register, shape_of)

FAMILY = "structural"


def _const_array(attrs) -> np.ndarray:
    value = attrs.get("value")
    if value is None:
        return np.zeros((0,), np.float32)
    return value.numpy() if hasattr(value, "numpy") else np.asarray(value)


def _const_dtype(attrs):
    value = attrs.get("value")
    if value is None:
        return DT.DT_FLOAT
    if hasattr(value, "data_type"):
        return value.data_type
    return from_numpy_dtype(np.asarray(value).dtype)


def infer_const(ctx):
    value = ctx.attrs.get("value")
    # a Tensor's shape, without computing a derived constant's values (ge.graph.derived)
    shape = value.shape if hasattr(value, "numpy") else _const_array(ctx.attrs).shape
    return [(tuple(shape), _const_dtype(ctx.attrs))]


def kernel_const(ins, attrs):
    return [_const_array(attrs)]


def infer_file_constant(ctx):
    return [(tuple(int(d) for d in ctx.attrs["shape"]), DT(ctx.attrs["dtype"]))]


def kernel_file_constant(ins, attrs):
    """Reads `shape`/`dtype` elements from `location` (ONNX parser) or `file_path`."""
    path = attrs.get("location") or attrs.get("file_path")
    if not path:
        raise ValueError("FileConstant has neither location nor file_path")
    shape = [int(d) for d in attrs["shape"]]
    dtype = to_numpy_dtype(DT(attrs["dtype"]))
    count = numel(shape)
    check_regular(path)                 # np.fromfile would wait on a FIFO
    data = np.fromfile(path, dtype=dtype, count=count, offset=int(attrs.get("offset", 0) or 0))
    if data.size != count:
        raise ValueError(f"FileConstant file {path} holds {data.size} of {count} elements")
    return [data.reshape(shape)]


def infer_data(ctx):
    """A graph input keeps the desc the parser (or --input_shape) wrote on its input slot."""
    if ctx.ins and ctx.ins[0] is not None:
        return [(shape_of(ctx, 0), dtype_of(ctx, 0))]
    fail(ctx, "Data node has no input description")


def infer_net_output(ctx):
    return []


def kernel_identity(ins, attrs):
    return [ins[0]]


def kernel_net_output(ins, attrs):
    return list(ins)


register(OpDef("Data", role=Role.DATA, inputs=(Port("x"),), outputs=(Port("y"),),
               attrs=(AttrSpec("index", VT.VT_INT, 0),), infer=infer_data,
               family=FAMILY, doc="Graph input placeholder; `index` = position among inputs."))
register(OpDef("Const", role=Role.CONST, outputs=(Port("y"),),
               attrs=(AttrSpec("value", VT.VT_TENSOR, None),),
               infer=infer_const, kernel=kernel_const, family=FAMILY,
               doc="Constant tensor held in attr `value` (None = empty float tensor)."))
register(OpDef("Constant", role=Role.CONST, outputs=(Port("y"),),
               attrs=(AttrSpec("value", VT.VT_TENSOR, None),),
               infer=infer_const, kernel=kernel_const, family=FAMILY,
               doc="Constant (training-style variant of Const)."))
register(OpDef("FileConstant", role=Role.CONST, outputs=(Port("y"),),
               attrs=(AttrSpec("file_path", VT.VT_STRING, ""),
                      AttrSpec("file_id", VT.VT_STRING, ""),
                      AttrSpec("shape", VT.VT_LIST_INT), AttrSpec("dtype", VT.VT_DATA_TYPE)),
               infer=infer_file_constant, kernel=kernel_file_constant, family=FAMILY,
               doc="Constant whose bytes live in a file (`location`/`offset` set by the parser)."))
register(OpDef("NetOutput", role=Role.OUTPUT, inputs=(Port("x", "dynamic"),), outputs=(),
               infer=infer_net_output, kernel=kernel_net_output, family=FAMILY,
               doc="Graph sink; input k is graph output k."))
register(OpDef("PartitionedCall", role=Role.CONTROL, inputs=(Port("args", "dynamic"),),
               outputs=(Port("output", "dynamic"),),
               attrs=(AttrSpec("config", VT.VT_STRING, ""),
                      AttrSpec("config_proto", VT.VT_STRING, ""),
                      AttrSpec("executor_type", VT.VT_STRING, "")),
               subgraphs=("f",), family=FAMILY,
               doc="Call of subgraph `f`; subgraph Data `_parent_node_index` i takes args i."))
register(OpDef("If", role=Role.CONTROL, inputs=(Port("cond"), Port("input", "dynamic")),
               outputs=(Port("output", "dynamic"),), subgraphs=("then_branch", "else_branch"),
               family=FAMILY,
               doc="Runs then_branch or else_branch by `cond`; branch Data with "
                   "`_parent_node_index` p takes If input slot p (slot 0 is cond)."))
register(OpDef("Case", role=Role.CONTROL, inputs=(Port("branch_index"), Port("input", "dynamic")),
               outputs=(Port("output", "dynamic"),), subgraphs=("branches",), family=FAMILY,
               doc="Runs subgraph `branches<i>` for branch_index i (the gear root of a model "
                   "compiled with gears, docs/om.md); branch Data with `_parent_node_index` p "
                   "takes Case input slot p (slot 0 is branch_index)."))


def infer_map_index(ctx):
    return [((), DT.DT_INT32)]


def kernel_map_index(ins, attrs):
    """The row of data_seq (gears x len(x), flattened) equal to x: the gear index."""
    x = np.asarray(ins[0]).reshape(-1)
    table = np.asarray(ins[1]).reshape(-1, max(x.size, 1))
    rows = np.flatnonzero((table == x).all(axis=1))
    if rows.size == 0:
        raise ValueError(f"shape {x.tolist()} is not one of the gears {table.tolist()}")
    return [np.asarray(rows[0], dtype=np.int32)]


register(OpDef("MapIndex", inputs=(Port("x"), Port("data_seq")), outputs=(Port("y"),),
               infer=infer_map_index, kernel=kernel_map_index, family=FAMILY,
               doc="Index of the row of data_seq equal to x (the gear of the actual shape)."))
register(OpDef("Identity", role=Role.BYPASS, inputs=(Port("x"),), outputs=(Port("y"),), infer=infer_same,
               kernel=kernel_identity, family=FAMILY, doc="Copy."))
register(OpDef("Dropout", role=Role.BYPASS, inputs=(Port("x"),), outputs=(Port("y"),),
               attrs=(AttrSpec("dropout_ratio", VT.VT_FLOAT, 0.5),
                      AttrSpec("scale_train", VT.VT_BOOL, True),
                      AttrSpec("alpha", VT.VT_FLOAT, 1.0), AttrSpec("beta", VT.VT_FLOAT, 0.0)),
               infer=infer_same, kernel=kernel_identity, family=FAMILY,
               doc="Dropout; identity at inference (GE DropOutPass removes it)."))
