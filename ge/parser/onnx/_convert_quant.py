"""Converters for quantized models (docs/parser.md, "Quantization"): ONNX's linear quantization
ops and the deployable-model ops of Ascend's AMCT (`AscendQuant`, `AscendDequant`,
`AscendAntiQuant`, `AscendWeightQuant`, keyed `ai.onnx::<opset>::<type>` as CANN's plugins
register them).  Each is a plain function of a NodeCtx; _mappings.py says which key uses which.
"""
from __future__ import annotations

import numpy as np

from ge.graph import DataType, Format
from ge.graph.types import from_numpy_dtype
from ge.ops.defs.quant import QUANT_DTYPES

from ._context import NodeCtx, refuse
from ._convert_nn import _conv_attrs, spatial_rank

NCHW = Format.FORMAT_NCHW
DT = DataType
# AMCT's dst_type strings -> GE DataType (CANN's AscendQuant / AscendWeightQuant plugins)
AMCT_DST_TYPES = {"INT8": DT.DT_INT8, "INT16": DT.DT_INT16, "INT4": DT.DT_INT4}
_QUANT_NAME = {dt: name for name, dt in QUANT_DTYPES.items()}


def input_dtype(ctx: NodeCtx, i: int):
    """The element type of input i when the parse knows it (an initializer, a Constant or a
    graph input), else None."""
    value = ctx.const(i)
    if value is not None:
        return from_numpy_dtype(value.dtype)
    edge = ctx.input(i)
    if edge is None or edge[0].type != "Data":
        return None
    return DT(edge[0].out_desc(edge[1]).data_type)


def _axis(ctx: NodeCtx) -> dict:
    """ONNX per-axis quantization (opset 13): `axis`, default 1."""
    return {"axis": int(ctx.attr("axis", 1))}


def quantize_linear(ctx: NodeCtx) -> list:
    """QuantizeLinear → CANN's Quantize; the output type is the zero point's (uint8 without
    one), named by Quantize's `dtype` string."""
    out = DT.DT_UINT8
    if ctx.input(2) is not None:
        out = input_dtype(ctx, 2)
        if out is None:
            refuse("the type of y_zero_point must be known when the model is parsed (an "
                   "initializer, a Constant or a graph input)")
    if out not in (DT.DT_INT8, DT.DT_UINT8):
        refuse(f"y_zero_point has type {out.name}; int8 or uint8 is supported")
    return ctx.one("Quantize", ctx.ins[:3], dict(_axis(ctx), dtype=_QUANT_NAME[out]))


def dequantize_linear(ctx: NodeCtx) -> list:
    return ctx.one("DequantizeLinear", ctx.ins[:3], _axis(ctx))


def _conv_like(ir_type: str, weight: int):
    """ConvInteger / QLinearConv: Conv's attributes (channels first, explicit or auto pads)."""
    def convert(ctx: NodeCtx) -> list:
        n = spatial_rank(ctx, weight)
        attrs = dict(_conv_attrs(ctx, n), data_format="NCHW",
                     auto_pad=ctx.attr("auto_pad", "NOTSET"))
        return ctx.one(ir_type, ctx.ins, attrs, fmt=NCHW if n == 2 else None)
    convert.__name__ = f"convert_{ir_type}"
    return convert


conv_integer = _conv_like("ConvInteger", 1)
qlinear_conv = _conv_like("QLinearConv", 3)


def _dst_type(ctx: NodeCtx) -> int:
    text = str(ctx.attr("dst_type", "INT8")).rstrip(" ")
    if text not in AMCT_DST_TYPES:
        refuse(f"dst_type {text!r} is not one of {', '.join(AMCT_DST_TYPES)}")
    return int(AMCT_DST_TYPES[text])


def ascend_quant(ctx: NodeCtx) -> list:
    attrs = {"scale": float(ctx.attr("scale", 0.0)), "offset": float(ctx.attr("offset", 0.0)),
             "sqrt_mode": bool(ctx.attr("sqrt_mode", 0)),
             "round_mode": ctx.attr("round_mode", "Round"), "dst_type": _dst_type(ctx)}
    return ctx.one("AscendQuant", ctx.ins[:1], attrs, fmt=NCHW)


def ascend_dequant(ctx: NodeCtx) -> list:
    deq = ctx.const(1)
    if deq is not None and deq.dtype == np.uint64 and np.any(
            (deq >> np.uint64(40)) & np.uint64(0xFF)):
        refuse("deq_scale packs a non-zero weight offset (offset_w, bits 40..47): asymmetric "
               "weight quantization is not supported")
    attrs = {"dtype": int(ctx.attr("dtype", 0)), "sqrt_mode": bool(ctx.attr("sqrt_mode", 0)),
             "relu_flag": bool(ctx.attr("relu_flag", 0))}
    return ctx.one("AscendDequant", ctx.ins[:2], attrs, fmt=NCHW)


def ascend_anti_quant(ctx: NodeCtx) -> list:
    """The ONNX offset is the quantization offset; the IR op adds its negation (CANN)."""
    attrs = {"scale": float(ctx.attr("scale", 0.0)),
             "offset": -float(ctx.attr("offset", 0.0)), "dtype": int(ctx.attr("dtype", 0)),
             "sqrt_mode": bool(ctx.attr("sqrt_mode", 0))}
    return ctx.one("AscendAntiQuant", ctx.ins[:1], attrs)


def ascend_weight_quant(ctx: NodeCtx) -> list:
    return ctx.one("AscendWeightQuant", ctx.ins[:2], {"dst_type": _dst_type(ctx)})
