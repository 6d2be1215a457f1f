"""THE ONNX → GE IR mapping table (spec/ir-ops.md §2), one row per ONNX op and opset range.

A row says: ONNX op type, the domain, the opsets it is registered for, the IR op types the
conversion may produce, and the converter `(NodeCtx) -> output edges`.  `KEYS` expands every row
into CANN's lookup keys `<domain>::<opset>::<op_type>` (spec §1.3): the opset is the model's
`opset_import` version for the domain, not the op's since-version.  `Constant` maps by plain op
type whatever the opset.  Rows not in CANN's tables are marked `ours=True` (docs/parser.md).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from . import _convert_array as A
from . import _convert_nn as N
from . import _convert_recurrent as R
from . import _convert_quant as Q
from ._context import NodeCtx

__all__ = ["OnnxOp", "MAPPINGS", "KEYS", "SUPPORTED_OPSETS", "lookup", "make_key"]


@dataclass(frozen=True)
class OnnxOp:
    op_type: str
    opsets: Optional[tuple]          # registered opset numbers; None = any (Constant)
    ir_types: tuple                  # IR ops the conversion may emit
    convert: Callable[[NodeCtx], list]
    domain: str = "ai.onnx"
    ours: bool = False               # a mapping CANN's tables lack


SUPPORTED_OPSETS = (8, 18)           # ai.onnx opsets nearly every row is registered for
_STD = tuple(range(8, 19))


def _since(first: int, last: int = 18) -> tuple:
    return tuple(range(first, last + 1))


def one_to_one(ir_type: str, attrs: Callable[[NodeCtx], dict] | None = None,
               num_outputs: int = 1) -> Callable[[NodeCtx], list]:
    """Same-shaped node: ONNX inputs positional onto the IR ports, attributes by `attrs`."""
    def convert(ctx: NodeCtx) -> list:
        return ctx.one(ir_type, ctx.ins, attrs(ctx) if attrs else {}, num_outputs=num_outputs)
    convert.__name__ = f"one_to_one_{ir_type}"
    return convert


def _row(op_type, opsets, ir_types, convert=None, **kw) -> OnnxOp:
    ir_types = (ir_types,) if isinstance(ir_types, str) else tuple(ir_types)
    return OnnxOp(op_type, opsets, ir_types, convert or one_to_one(ir_types[0]), **kw)


def _plain(pairs: str) -> tuple:
    """'OnnxOp:IrOp ...' rows of the bulk no-attribute table (similar_opp), opsets 8–18."""
    rows = []
    for item in pairs.split():
        onnx_type, _, ir_type = item.partition(":")
        rows.append(_row(onnx_type, _STD, ir_type or onnx_type))
    return tuple(rows)


C = "Const"
MAPPINGS: tuple[OnnxOp, ...] = (
    # ---- §2.1 convolution, matmul, normalization, pooling --------------------------------
    _row("Conv", _STD, ("Conv2D", "Conv3D", "Unsqueeze", "Squeeze"), N.conv),
    _row("ConvTranspose", _STD, ("Conv2DTranspose", "Conv3DTranspose", C, "Unsqueeze",
                                 "Squeeze"), N.conv_transpose),
    _row("Gemm", _STD, ("MatMulV2", "Add", "Muls"), N.gemm),
    _row("MatMul", _STD, "BatchMatMulV2", N.matmul),
    _row("BatchNormalization", _STD, "BatchNorm", N.batch_norm),
    _row("LayerNormalization", _since(17), ("Shape", "BroadcastTo", C, "LayerNorm", "Adds",
                                            "Rsqrt", "Cast"), N.layer_norm),
    _row("InstanceNormalization", _STD, "InstanceNorm", N.instance_norm),
    _row("MaxPool", _STD, ("MaxPoolV3", "MaxPool3D", "Unsqueeze", "Squeeze"), N.max_pool),
    _row("AveragePool", _STD, ("AvgPoolV2", "AvgPool3D", "Unsqueeze", "Squeeze"),
         N.average_pool),
    _row("GlobalAveragePool", _STD, "GlobalAveragePool"),
    _row("GlobalMaxPool", _STD, (C, "ReduceMax"), N.global_max_pool),
    _row("LRN", _STD, "LRN", N.lrn, ours=True),
    # ---- §2.2 elementwise math and activations (bulk table: no attributes) ----------------
    *_plain("Add Sub Mul Div:RealDiv Pow Sqrt Reciprocal Relu Sigmoid Tanh Erf Exp Log Abs "
            "Neg Sign Floor Ceil Round Sin Cos Tan Asin Acos Atan Sinh Cosh Asinh Acosh Atanh "
            "Softplus Softsign PRelu Equal Less Greater LessOrEqual:LessEqual Not:LogicalNot "
            "And:LogicalAnd Or:LogicalOr Where:SelectV2 Identity Expand Tile Range"),
    _row("HardSwish", _since(14), "HardSwish"),
    _row("GreaterOrEqual", (8,) + _since(12), "GreaterEqual"),
    _row("IsNaN", _since(9), "IsNan"),
    _row("Dropout", _STD, ("Dropout", "Shape", C, "Fill"), N.dropout),
    _row("LeakyRelu", _STD, "LeakyRelu",
         one_to_one("LeakyRelu", lambda c: {"negative_slope": float(c.attr("alpha", 0.01))})),
    _row("HardSigmoid", (1, 6) + _STD, "HardSigmoid",
         one_to_one("HardSigmoid", lambda c: {"alpha": float(c.attr("alpha", 0.2)),
                                              "beta": float(c.attr("beta", 0.5))})),
    _row("Mish", (18,), "Mish"),
    _row("NPUMish", _since(11), "Mish"),
    _row("NPUMish", (1,), "Mish", domain="npu"),
    _row("NPUGeluV2", (1,), "GeluV2",
         one_to_one("GeluV2", lambda c: {"approximate": c.attr("approximate", "none")}),
         domain="npu"),
    _row("NPUFastGelu", (1,), "FastGelu", domain="npu"),
    _row("Elu", _STD, "Elu", one_to_one("Elu", lambda c: {"alpha": float(c.attr("alpha", 1.0))})),
    _row("Selu", _STD, ("Selu", "Elu"), N.selu),
    _row("Softmax", _STD, "SoftmaxV2", one_to_one("SoftmaxV2", N.softmax_attrs)),
    _row("LogSoftmax", _STD, "LogSoftmaxV2", one_to_one("LogSoftmaxV2", N.log_softmax_attrs)),
    _row("Sum", _STD, "AccumulateNV2", A.sum_),
    _row("Mean", _STD, ("AccumulateNV2", "Muls"), A.mean),
    _row("Max", _STD, ("Maximum", "Identity"), A.chain("Maximum")),
    _row("Min", _STD, ("Minimum", "Identity"), A.chain("Minimum")),
    # ---- §2.3 shape / tensor manipulation ------------------------------------------------
    _row("Flatten", _STD, "Flatten",
         one_to_one("Flatten", lambda c: {"axis": int(c.attr("axis", 1))})),
    _row("Reshape", _STD, "Reshape", A.reshape),
    _row("Transpose", _STD, (C, "Transpose"), A.transpose),
    _row("Squeeze", _since(8, 12), "Squeeze", A.squeeze_v1),
    _row("Squeeze", _since(13), "SqueezeV3"),
    _row("Unsqueeze", _since(8, 12), "Unsqueeze", A.unsqueeze_v1),
    _row("Unsqueeze", _since(13), "UnsqueezeV3"),
    _row("Concat", _STD, ("ConcatD", "Identity"), A.concat),
    _row("Split", _STD, (C, "Split", "SplitV"), A.split),
    _row("Slice", _since(8, 9), (C, "StridedSliceV2"), A.slice_v1),
    _row("Slice", _since(10), "StridedSliceV2"),
    _row("Gather", _STD, (C, "GatherV2"), A.gather),
    _row("ScatterElements", _since(11), "ScatterElements",
         one_to_one("ScatterElements", lambda c: {"axis": int(c.attr("axis", 0)),
                                                  "reduction": c.attr("reduction", "none")})),
    _row("GatherElements", _STD, "GatherElements",
         one_to_one("GatherElements", lambda c: {"dim": int(c.attr("axis", 0))})),
    _row("Pad", _since(8, 10), (C, "PadV3", "MirrorPad"), A.pad_v1),
    _row("Pad", _since(11), (C, "PadV3"), A.pad_v11),
    _row("Resize", _since(10), ("Shape", "Cast", "Mul", C, "Slice", "ResizeNearestNeighborV2",
                                "Resize"), A.resize),
    _row("Cast", _STD, "Cast", A.cast),
    _row("Clip", _since(8, 10), ("Cast", C, "ClipByValue"), A.clip_v1),
    _row("Clip", _since(11), ("ClipByValue", "Minimum", "Maximum", "Identity"), A.clip_v11),
    _row("ReduceMean", _STD, (C, "ReduceMean"), A.reduce("ReduceMean", 18)),
    _row("ReduceSum", _STD, (C, "ReduceSum"), A.reduce("ReduceSum", 13)),
    _row("ReduceMax", _STD, (C, "ReduceMax"), A.reduce("ReduceMax", 18)),
    _row("ReduceMin", _STD, (C, "ReduceMin"), A.reduce("ReduceMin", 18)),
    _row("ReduceProd", _STD, (C, "ReduceProd"), A.reduce("ReduceProd", 18)),
    _row("ReduceSumSquare", _STD, (C, "Mul", "ReduceSum"), A.reduce_sum_square, ours=True),
    _row("ArgMax", _STD, (C, "ArgMaxV2", "ExpandDims"), A.arg_extreme("ArgMaxV2")),
    _row("ArgMin", _STD, (C, "ArgMin", "ExpandDims"), A.arg_extreme("ArgMin")),
    _row("Shape", _STD, ("Shape", C, "StridedSliceV2"), A.shape),
    _row("Size", _STD, "Size", A.size),
    _row("ConstantOfShape", _STD, (C, "Fill"), A.constant_of_shape),
    _row("Constant", None, C, A.constant),
    _row("Einsum", _STD, "Einsum",
         one_to_one("Einsum", lambda c: {"equation": c.attr("equation", ""), "N": len(c.ins)})),
    _row("TopK", _since(8, 9), (C, "TopK", "Cast"), A.top_k_v1),
    _row("TopK", _since(10), ("TopK", "Cast"), A.top_k),
    _row("DepthToSpace", _STD, "DepthToSpace", A.depth_to_space),
    _row("CumSum", _STD, "Cumsum",
         one_to_one("Cumsum", lambda c: {"exclusive": bool(c.attr("exclusive", 0)),
                                         "reverse": bool(c.attr("reverse", 0))})),
    _row("ScatterND", _STD, ("TensorScatterUpdate", "TensorMove", "ScatterNdAdd", "ScatterNdMax",
                             "ScatterNdMin"), A.scatter_nd),
    _row("If", _STD, "If", A.if_),
    # ---- recurrent layers (docs/parser.md, "Recurrent layers") ---------------------------
    _row("LSTM", _STD, ("CommonLSTM", "TransposeD"), R.recurrent),
    _row("GRU", _STD, ("CommonGRU", "TransposeD"), R.recurrent),
    _row("RNN", _STD, ("CommonRNN", "TransposeD"), R.recurrent, ours=True),
    # ---- quantization (docs/parser.md, "Quantization") -----------------------------------
    _row("QuantizeLinear", _since(10), "Quantize", Q.quantize_linear),
    _row("DequantizeLinear", _since(10), "DequantizeLinear", Q.dequantize_linear, ours=True),
    _row("DynamicQuantizeLinear", _since(11), "DynamicQuantizeLinear",
         one_to_one("DynamicQuantizeLinear", num_outputs=3), ours=True),
    _row("MatMulInteger", _since(10), "MatMulInteger", ours=True),
    _row("QLinearMatMul", _since(10), "QLinearMatMul", ours=True),
    _row("ConvInteger", _since(10), "ConvInteger", Q.conv_integer, ours=True),
    _row("QLinearConv", _since(10), "QLinearConv", Q.qlinear_conv, ours=True),
    _row("AscendQuant", _since(8, 22), "AscendQuant", Q.ascend_quant),
    _row("AscendDequant", _since(8, 22), "AscendDequant", Q.ascend_dequant),
    _row("AscendAntiQuant", _since(8, 22), "AscendAntiQuant", Q.ascend_anti_quant),
    _row("AscendWeightQuant", _since(8, 22), "AscendWeightQuant", Q.ascend_weight_quant,
         ours=True),
)


def make_key(domain: str, opset: int | str, op_type: str) -> str:
    return f"{domain or 'ai.onnx'}::{opset}::{op_type}"


def _build_keys() -> tuple[dict, dict]:
    keys: dict[str, OnnxOp] = {}
    any_opset: dict[tuple, OnnxOp] = {}
    for row in MAPPINGS:
        if row.opsets is None:
            any_opset[(row.domain, row.op_type)] = row
            continue
        for opset in row.opsets:
            keys.setdefault(make_key(row.domain, opset, row.op_type), row)  # first row wins
    return keys, any_opset


KEYS, _ANY_OPSET = _build_keys()


def lookup(domain: str, opset: int, op_type: str) -> Optional[OnnxOp]:
    domain = domain or "ai.onnx"
    row = _ANY_OPSET.get((domain, op_type))
    row = row if row is not None else KEYS.get(make_key(domain, opset, op_type))
    if row is None:                 # a custom operator package may map it (docs/custom-ops.md)
        from ._custom import custom_row
        row = custom_row(domain, opset, op_type)
    return row
