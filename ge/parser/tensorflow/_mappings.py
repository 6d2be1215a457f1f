"""THE TensorFlow → GE IR mapping table: one row per TensorFlow op type.

A row says: the TensorFlow op, the IR op types the conversion may produce, the converter
`(TfCtx) -> output edges`, and `outputs`: the names of the op's output args in order, which
function bodies use to name edges (`node:arg:index`; a single list-valued arg is ("output",)).
Ops the builder handles itself (Placeholder, Const, the pass-through ops, NoOp, control flow)
are listed in `BUILDER_OPS`; together with `MAPPINGS` they are everything the parser reads.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from . import _convert as C
from ._context import TfCtx

__all__ = ["TfOp", "MAPPINGS", "ROWS", "BUILDER_OPS", "PASS_THROUGH", "VARIABLE_OPS"]


@dataclass(frozen=True)
class TfOp:
    op_type: str
    ir_types: tuple
    convert: Callable[[TfCtx], list]
    outputs: tuple = ("output",)


def one_to_one(ir_type: str, n_inputs: int | None = None) -> Callable[[TfCtx], list]:
    """Same inputs positionally onto the IR ports, no attributes."""
    def convert(ctx: TfCtx) -> list:
        return ctx.one(ir_type, ctx.ins if n_inputs is None else ctx.ins[:n_inputs])
    convert.__name__ = f"one_to_one_{ir_type}"
    return convert


def _row(op_type: str, ir_types, convert=None, outputs=("output",)) -> TfOp:
    ir_types = (ir_types,) if isinstance(ir_types, str) else tuple(ir_types)
    return TfOp(op_type, ir_types, convert or one_to_one(ir_types[0]), outputs)


def _plain(pairs: str) -> tuple:
    """'TfOp:IrOp ...' rows without attributes (same name when no ':IrOp')."""
    rows = []
    for item in pairs.split():
        tf_type, _, ir_type = item.partition(":")
        rows.append(_row(tf_type, ir_type or tf_type))
    return tuple(rows)


K = "Const"
MAPPINGS: tuple[TfOp, ...] = (
    # ---- convolution, normalization, pooling, matmul -------------------------------------
    _row("Conv2D", "Conv2D", C.conv2d),
    _row("Conv3D", "Conv3D", C.conv3d),
    _row("DepthwiseConv2dNative", ("Conv2D", K, "Reshape"), C.depthwise_conv2d),
    _row("Conv2DBackpropInput", "Conv2DTranspose", C.conv2d_backprop_input),
    _row("BiasAdd", ("Add", K, "Reshape"), C.bias_add),
    *(_row(op, "BatchNorm", C.fused_batch_norm,
           ("y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2",
            "reserve_space_3")) for op in ("FusedBatchNorm", "FusedBatchNormV2",
                                           "FusedBatchNormV3")),
    _row("MaxPool", "MaxPool", C.max_pool),
    _row("AvgPool", "AvgPoolV2", C.avg_pool),
    _row("MatMul", "MatMulV2", C.mat_mul),
    *(_row(op, "BatchMatMulV2", C.batch_mat_mul)
      for op in ("BatchMatMul", "BatchMatMulV2", "BatchMatMulV3")),
    _row("Einsum", "Einsum", C.einsum),
    # ---- elementwise and activations ------------------------------------------------------
    *_plain("Add:Add AddV2:Add Sub Mul RealDiv Div:RealDiv Maximum Minimum Pow Sqrt Rsqrt Exp "
            "Log Erf Abs Neg Reciprocal Inv:Reciprocal Relu Sigmoid Tanh Softplus Softsign Selu "
            "Sign Floor Ceil Round Sin Cos Greater Less Equal GreaterEqual LessEqual "
            "LogicalAnd LogicalOr LogicalNot SelectV2 ClipByValue Elu Range Tile Transpose "
            "Reshape ExpandDims Fill Slice"),
    _row("Relu6", (K, "ClipByValue"), C.relu6),
    _row("LeakyRelu", "LeakyRelu", C.leaky_relu),
    _row("Square", "Mul", C.square),
    _row("SquaredDifference", ("Sub", "Mul"), C.squared_difference),
    _row("Erfc", (K, "Erf", "Sub"), C.erfc),
    _row("FloorDiv", ("Cast", "RealDiv", "Floor"), C.floor_div),
    _row("FloorMod", ("Cast", "RealDiv", "Floor", "Mul", "Sub"), C.floor_mod),
    _row("NotEqual", ("Equal", "LogicalNot"), C.not_equal),
    _row("AddN", ("AccumulateNV2", "Identity"), C.add_n),
    _row("Softmax", "SoftmaxV2", C.softmax("SoftmaxV2")),
    _row("LogSoftmax", "LogSoftmaxV2", C.softmax("LogSoftmaxV2")),
    _row("Select", (K, "Reshape", "SelectV2"), C.select),
    # ---- reductions ------------------------------------------------------------------------
    _row("Mean", "ReduceMean", C.reduce("ReduceMean")),
    _row("Sum", "ReduceSum", C.reduce("ReduceSum")),
    _row("Max", "ReduceMax", C.reduce("ReduceMax")),
    _row("Min", "ReduceMin", C.reduce("ReduceMin")),
    _row("Prod", "ReduceProd", C.reduce("ReduceProd")),
    _row("ArgMax", "ArgMaxV2", C.arg_extreme("ArgMaxV2")),
    _row("ArgMin", "ArgMin", C.arg_extreme("ArgMin")),
    # ---- shape and tensor manipulation -----------------------------------------------------
    _row("Squeeze", "Squeeze", C.squeeze),
    _row("ConcatV2", ("ConcatV2", "Identity"), C.concat_v2),
    _row("Concat", ("ConcatV2", "Identity"), C.concat_v1),
    _row("Pack", (K, "ExpandDims", "ConcatV2"), C.pack),
    _row("Unpack", (K, "Split", "Squeeze"), C.unpack),
    _row("Split", "Split", C.split),
    _row("SplitV", "SplitV", C.split_v),
    _row("StridedSlice", (K, "StridedSliceV2", "Unsqueeze", "Squeeze", "Identity"),
         C.strided_slice),
    _row("Pad", (K, "PadV2"), C.pad),
    _row("PadV2", "PadV2", C.pad),
    _row("MirrorPad", "MirrorPad", C.mirror_pad),
    _row("Gather", (K, "GatherV2"), C.gather_v1),
    _row("GatherV2", "GatherV2", C.gather_v2),
    _row("Shape", "Shape", C.shape),
    _row("Cast", "Cast", C.cast),
    _row("ZerosLike", ("Shape", K, "Fill"), C.fill_like(0)),
    _row("OnesLike", ("Shape", K, "Fill"), C.fill_like(1)),
    _row("TopKV2", "TopK", C.top_k, ("values", "indices")),
    _row("Cumsum", "Cumsum", C.cumsum),
    _row("DepthToSpace", "DepthToSpace", C.depth_to_space),
    _row("SpaceToDepth", (K, "Reshape", "Transpose"), C.space_to_depth),
    _row("SpaceToBatchND", (K, "PadV2", "Reshape", "Transpose"), C.space_to_batch_nd),
    _row("BatchToSpaceND", (K, "Reshape", "Transpose", "Slice"), C.batch_to_space_nd),
    _row("ResizeBilinear", (K, "Resize"), C.resize("linear")),
    _row("ResizeNearestNeighbor", (K, "Resize"), C.resize("nearest")),
)

ROWS = {row.op_type: row for row in MAPPINGS}

# Ops the builder handles itself (docs/parser-tensorflow.md "Graph shape").
PASS_THROUGH = frozenset({"Identity", "IdentityN", "StopGradient", "PreventGradient", "Snapshot",
                          "PlaceholderWithDefault", "EnsureShape", "CheckNumerics"})
BUILDER_OPS = PASS_THROUGH | {"Placeholder", "Const", "NoOp", "If", "StatelessIf", "While",
                              "StatelessWhile", "Switch", "Merge", "Enter", "Exit",
                              "NextIteration", "LoopCond"}
# What an unfrozen graph holds instead of constants.
VARIABLE_OPS = frozenset({"Variable", "VariableV2", "VarHandleOp", "ReadVariableOp",
                          "Assign", "AssignVariableOp", "VarIsInitializedOp",
                          "RestoreV2", "SaveV2"})
