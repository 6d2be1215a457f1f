"""Quantization (docs/ops-registry.md, "Quantization"): the linear quantization ops of ONNX and
the deployable-model ops of Ascend's quantization tool (AMCT).

CANN IR ops: `Quantize` (ONNX QuantizeLinear: tensor scales and zero points, `dtype` string
"torch.qint8" / "torch.quint8" / "torch.qint32", `axis`), `AscendQuant`, `AscendDequant`,
`AscendAntiQuant`, `AscendWeightQuant` (scalar attributes, int8).  IR ops of our own (CANN's
tables have no equivalent that takes tensor scales and uint8): `DequantizeLinear`,
`DynamicQuantizeLinear`, `MatMulInteger`, `ConvInteger`, `QLinearMatMul`, `QLinearConv`.

The reference kernels compute exactly what onnxruntime computes: float32 division by the scale,
rounding half to even (`np.rint`), the zero point added, saturation to the output type; integer
products accumulated in int32; requantization by the float32 multiplier
`(x_scale * w_scale) / y_scale` applied to the float32 accumulator.  A 1-D scale or zero point
of more than one element applies along `axis` (per-axis quantization).
"""
from __future__ import annotations

import numpy as np

from ge.errors import GeError

from ._common import (DT, VT, AttrSpec, OpDef, Port, dtype_of, fail, norm_axis, register,
                      shape_of)
from .conv import _conv_geometry, conv_nd
from .matmul import matmul_shape

FAMILY = "quant"

# Quantize's `dtype` attribute (CANN's strings) <-> the output dtype
QUANT_DTYPES = {"torch.qint8": DT.DT_INT8, "torch.quint8": DT.DT_UINT8,
                "torch.qint32": DT.DT_INT32}
INT8_TYPES = (DT.DT_INT8, DT.DT_UINT8)


def bad_param(ctx, param: str, reason: str):
    """A quantization parameter a user supplied is unusable: our code, naming the node."""
    raise GeError("EP0140", {"opname": ctx.op_name, "optype": ctx.op_type, "param": param,
                             "reason": reason})


def per_axis(param: np.ndarray, rank: int, axis: int) -> np.ndarray:
    """A scale / zero point shaped to broadcast over x: scalars stay, a 1-D tensor of more
    than one element lines up with dim `axis` (ONNX per-axis quantization)."""
    p = np.asarray(param)
    if p.size == 1:
        return p.reshape(())
    if p.ndim == 1:
        shape = [1] * rank
        shape[axis % rank] = p.size
        return p.reshape(shape)
    return p


def saturate(values: np.ndarray, dtype) -> np.ndarray:
    info = np.iinfo(dtype)
    return np.clip(values, info.min, info.max).astype(dtype)


def quantize(x, scale, zero_point, dtype, axis: int = 1) -> np.ndarray:
    """saturate(rint(x / scale) + zero_point): float32 division, ties to even."""
    x = np.asarray(x).astype(np.float32)
    s = per_axis(np.asarray(scale, dtype=np.float32), x.ndim, axis)
    zp = 0 if zero_point is None else per_axis(zero_point, x.ndim, axis).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.rint(x / s).astype(np.float64) + zp
    return saturate(np.nan_to_num(q), dtype)


def dequantize(x, scale, zero_point, axis: int = 1) -> np.ndarray:
    """(x - zero_point) * scale: the difference in int32, the product in float32."""
    x = np.asarray(x)
    d = x.astype(np.int32)
    if zero_point is not None:
        d = d - per_axis(zero_point, x.ndim, axis).astype(np.int32)
    return d.astype(np.float32) * per_axis(np.asarray(scale, dtype=np.float32), x.ndim, axis)


def dynamic_quant_params(x: np.ndarray):
    """onnxruntime's uint8 range: [min(x, 0), max(x, 0)] over 255 steps; a zero range has
    scale 1 (onnxruntime does not divide by zero)."""
    x = np.asarray(x, dtype=np.float32)
    lo = np.float32(min(float(x.min()) if x.size else 0.0, 0.0))
    hi = np.float32(max(float(x.max()) if x.size else 0.0, 0.0))
    scale = np.float32(1.0) if hi == lo else np.float32((hi - lo) / np.float32(255.0))
    zp = np.float32(np.float32(0.0) - lo / scale)
    zp = np.uint8(np.rint(np.clip(zp, np.float32(0.0), np.float32(255.0))))
    return scale, zp


def requantize(acc: np.ndarray, multiplier: np.ndarray, zero_point, dtype) -> np.ndarray:
    """saturate(rint(float32(acc) * multiplier) + zero_point)."""
    q = np.rint(acc.astype(np.float32) * multiplier.astype(np.float32)).astype(np.float64)
    return saturate(q + np.asarray(zero_point).astype(np.float64), dtype)


def multiplier(scale_a, scale_b, scale_y) -> np.ndarray:
    """The float32 requantization multiplier (scale_a * scale_b) / scale_y (onnxruntime's
    order of operations)."""
    f = np.float32
    return (np.asarray(scale_a, f) * np.asarray(scale_b, f)).astype(f) / np.asarray(scale_y, f)


def matmul_integer(a, b, a_zp, b_zp) -> np.ndarray:
    """int32 products of (a - a_zp) and (b - b_zp); a_zp per row, b_zp per column."""
    a32 = np.asarray(a).astype(np.int64)
    b32 = np.asarray(b).astype(np.int64)
    if a_zp is not None:
        zp = np.asarray(a_zp).astype(np.int64)
        a32 = a32 - (zp.reshape(-1, 1) if zp.ndim == 1 and zp.size > 1 else zp)
    if b_zp is not None:
        b32 = b32 - np.asarray(b_zp).astype(np.int64)
    return np.matmul(a32, b32).astype(np.int32)


def conv_integer(x, w, x_zp, w_zp, attrs) -> np.ndarray:
    """int32 convolution of (x - x_zp) and (w - w_zp); padding contributes zero (ONNX pads
    with the zero point), w_zp scalar or per output channel."""
    nsp = np.ndim(x) - 2
    x64 = np.asarray(x).astype(np.int64)
    w64 = np.asarray(w).astype(np.int64)
    if x_zp is not None:
        x64 = x64 - np.asarray(x_zp).astype(np.int64).reshape(())
    if w_zp is not None:
        w64 = w64 - per_axis(np.asarray(w_zp).astype(np.int64), w64.ndim, 0)
    ss, ds, pb, pe = _conv_geometry(None, attrs, list(x64.shape[2:]), list(w64.shape[2:]), nsp)
    return conv_nd(x64, w64, ss, ds, pb, pe, int(attrs["groups"])).astype(np.int32)


# ---- inference --------------------------------------------------------------------------------

def _present(ctx, i: int) -> bool:
    return i < len(ctx.ins) and ctx.ins[i] is not None


def _check_param_shape(ctx, slot: int, name: str, x_shape, axis: int):
    """A scale / zero point is a scalar, or 1-D with x.shape[axis] elements."""
    s = shape_of(ctx, slot)
    if s is None or x_shape is None or _numel(ctx, slot) in (1, -1) or any(d < 0 for d in s):
        return
    if len(s) != 1:
        bad_param(ctx, name, f"must be a scalar or 1-D, got shape {list(s)}")
    if x_shape[axis] >= 0 and s[0] != x_shape[axis]:
        bad_param(ctx, name, f"has {s[0]} values but x has {x_shape[axis]} along axis {axis}")


def _check_values(ctx, slot: int, name: str):
    """A constant scale must be finite and non-zero."""
    info = ctx.ins[slot] if _present(ctx, slot) else None
    if info is None or info.value is None:
        return
    v = np.asarray(info.value, dtype=np.float64).reshape(-1)
    bad = np.nonzero((v == 0) | ~np.isfinite(v))[0]
    if bad.size:
        bad_param(ctx, name, f"value {v[bad[0]]} at index {int(bad[0])} is not a finite "
                             f"non-zero number")


def _numel(ctx, slot: int) -> int:
    s = shape_of(ctx, slot) if _present(ctx, slot) else ()
    return -1 if s is None else int(np.prod(s, dtype=np.int64))


def _axis(ctx, x_shape) -> int:
    """The quantization axis, checked only where it matters: a scale of several values (ONNX
    ignores `axis` for per-tensor quantization)."""
    if x_shape is None or all(_numel(ctx, slot) == 1 for slot in (1, 2)):
        return 0
    if len(x_shape) == 0:
        bad_param(ctx, "axis", "x is a scalar, so its scale and zero point must be scalars")
    try:
        return norm_axis(ctx, int(ctx.attrs.get("axis", 1)), len(x_shape))
    except GeError:
        bad_param(ctx, "axis", f"{ctx.attrs.get('axis')} is out of range for x of rank "
                               f"{len(x_shape)}")


def _zp_type(ctx, slot: int, name: str, want) -> None:
    if _present(ctx, slot) and dtype_of(ctx, slot) != want:
        bad_param(ctx, name, f"has type {dtype_of(ctx, slot).name}, expected {want.name}")


def infer_quantize(ctx):
    xs = shape_of(ctx, 0)
    name = ctx.attrs["dtype"]
    if name not in QUANT_DTYPES:
        bad_param(ctx, "dtype", f"{name!r} is not one of {', '.join(QUANT_DTYPES)}")
    out = QUANT_DTYPES[name]
    axis = _axis(ctx, xs)
    _check_param_shape(ctx, 1, "scales", xs, axis)
    _check_values(ctx, 1, "scales")
    _zp_type(ctx, 2, "zero_points", out)
    _check_param_shape(ctx, 2, "zero_points", xs, axis)
    return [(xs, out)]


def kernel_quantize(ins, attrs):
    x, scale, zp = ins[0], ins[1], ins[2] if len(ins) > 2 else None
    out = np.dtype(QUANT_DTYPES[attrs["dtype"]].name[3:].lower())
    return [quantize(x, scale, zp, out, int(attrs["axis"]) % max(x.ndim, 1))]


def infer_dequantize(ctx):
    xs = shape_of(ctx, 0)
    axis = _axis(ctx, xs)
    _check_param_shape(ctx, 1, "x_scale", xs, axis)
    _check_values(ctx, 1, "x_scale")
    _zp_type(ctx, 2, "x_zero_point", dtype_of(ctx, 0))
    _check_param_shape(ctx, 2, "x_zero_point", xs, axis)
    return [(xs, DT.DT_FLOAT)]


def kernel_dequantize(ins, attrs):
    x, scale, zp = ins[0], ins[1], ins[2] if len(ins) > 2 else None
    return [dequantize(x, scale, zp, int(attrs["axis"]) % max(x.ndim, 1))]


def infer_dynamic_quantize(ctx):
    return [(shape_of(ctx, 0), DT.DT_UINT8), ((), DT.DT_FLOAT), ((), DT.DT_UINT8)]


def kernel_dynamic_quantize(ins, attrs):
    scale, zp = dynamic_quant_params(ins[0])
    y = quantize(ins[0], scale, zp, np.uint8)
    return [y, np.asarray(scale, np.float32), np.asarray(zp, np.uint8)]


def _check_scalar(ctx, slot: int, name: str):
    s = shape_of(ctx, slot)
    if s is not None and any(d > 1 for d in s):
        bad_param(ctx, name, f"must be a scalar, got shape {list(s)}")


def _matmul_infer(a: int, b: int, a_zp: int, b_zp: int, out_zp: int | None):
    def infer(ctx):
        for slot, zp, name in ((a, a_zp, "a_zero_point"), (b, b_zp, "b_zero_point")):
            _zp_type(ctx, zp, name, dtype_of(ctx, slot))
        shape = matmul_shape(ctx, shape_of(ctx, a), shape_of(ctx, b), False, False)
        if out_zp is None:
            return [(shape, DT.DT_INT32)]
        for slot in (a + 1, b + 1, out_zp - 1):
            _check_values(ctx, slot, ctx.op_type + f" scale (input {slot})")
        return [(shape, dtype_of(ctx, out_zp))]
    return infer


def kernel_matmul_integer(ins, attrs):
    a, b, a_zp, b_zp = (list(ins) + [None] * 4)[:4]
    return [matmul_integer(a, b, a_zp, b_zp)]


def kernel_qlinear_matmul(ins, attrs):
    a, a_s, a_zp, b, b_s, b_zp, y_s, y_zp = ins
    acc = matmul_integer(a, b, a_zp, b_zp)
    a_s = np.asarray(a_s).reshape(-1, 1) if np.size(a_s) > 1 else np.asarray(a_s).reshape(())
    b_s = np.asarray(b_s).reshape(-1) if np.size(b_s) > 1 else np.asarray(b_s).reshape(())
    return [requantize(acc, multiplier(a_s, b_s, y_s), y_zp, y_zp.dtype)]


def _conv_infer(x: int, w: int, x_zp: int, w_zp: int, out_zp: int | None):
    """ConvInteger / QLinearConv: Conv's geometry on (x, w), channels first, any rank."""
    def infer(ctx):
        xs, ws = shape_of(ctx, x), shape_of(ctx, w)
        _zp_type(ctx, x_zp, "x_zero_point", dtype_of(ctx, x))
        _zp_type(ctx, w_zp, "w_zero_point", dtype_of(ctx, w))
        _check_scalar(ctx, x_zp, "x_zero_point")
        dt = DT.DT_INT32 if out_zp is None else dtype_of(ctx, out_zp)
        if out_zp is not None:
            for slot, name in ((x + 1, "x_scale"), (w + 1, "w_scale"), (out_zp - 1, "y_scale")):
                _check_values(ctx, slot, name)
        if xs is None or ws is None:
            return [(None, dt)]
        nsp = len(xs) - 2
        if nsp < 1 or len(ws) != len(xs):
            fail(ctx, f"x {list(xs)} and w {list(ws)} must have the same rank >= 3")
        if ws[0] >= 0:
            _check_param_shape(ctx, w_zp, "w_zero_point", ws, 0)
        groups = int(ctx.attrs["groups"])
        if xs[1] >= 0 and ws[1] >= 0 and xs[1] != ws[1] * groups:
            fail(ctx, f"x has {xs[1]} channels but w expects {ws[1]} x {groups} groups")
        sp, ksp = list(xs[2:]), list(ws[2:])
        if any(d < 0 for d in sp + ksp):
            return [((xs[0], ws[0]) + (-1,) * nsp, dt)]
        ss, ds, pb, pe = _conv_geometry(ctx, ctx.attrs, sp, ksp, nsp)
        out = [(sp[i] + pb[i] + pe[i] - (ksp[i] - 1) * ds[i] - 1) // ss[i] + 1
               for i in range(nsp)]
        if any(o <= 0 for o in out):
            fail(ctx, f"output spatial dims would be {out}")
        return [((xs[0], ws[0], *out), dt)]
    return infer


def _conv_resolve(x: int, w: int):
    """auto_pad → explicit pads once shapes are static (as Conv2D's resolve)."""
    def resolve(ctx):
        auto = str(ctx.attrs.get("auto_pad") or "NOTSET").upper()
        xs, ws = shape_of(ctx, x), shape_of(ctx, w)
        if auto in ("", "NOTSET") or xs is None or ws is None or any(
                d < 0 for d in list(xs[2:]) + list(ws[2:])):
            return {}
        _, _, pb, pe = _conv_geometry(ctx, ctx.attrs, list(xs[2:]), list(ws[2:]), len(xs) - 2)
        return {"pads": [v for pair in zip(pb, pe) for v in pair], "auto_pad": "NOTSET"}
    return resolve


def kernel_conv_integer(ins, attrs):
    x, w, x_zp, w_zp = (list(ins) + [None] * 4)[:4]
    return [conv_integer(x, w, x_zp, w_zp, attrs)]


def kernel_qlinear_conv(ins, attrs):
    x, x_s, x_zp, w, w_s, w_zp, y_s, y_zp = ins[:8]
    bias = ins[8] if len(ins) > 8 else None
    acc = conv_integer(x, w, x_zp, w_zp, attrs)
    if bias is not None:
        acc = (acc.astype(np.int64) + bias.astype(np.int64).reshape(
            (1, -1) + (1,) * (acc.ndim - 2))).astype(np.int32)
    mult = per_axis(multiplier(x_s, w_s, y_s).reshape(-1), acc.ndim, 1)
    return [requantize(acc, mult, y_zp, y_zp.dtype)]


# ---- AMCT deployable-model ops ----------------------------------------------------------------

ROUND_MODES = {"Round": np.rint, "Floor": np.floor, "Ceil": np.ceil, "Trunc": np.trunc}
OUT_FLOAT = {0: DT.DT_FLOAT, 1: DT.DT_FLOAT16}


def _attr_scale(attrs) -> np.float32:
    s = np.float32(attrs["scale"])
    return s * s if attrs.get("sqrt_mode") else s


def infer_ascend_quant(ctx):
    if ctx.attrs["round_mode"] not in ROUND_MODES:
        bad_param(ctx, "round_mode", f"{ctx.attrs['round_mode']!r} is not one of "
                                     f"{', '.join(ROUND_MODES)}")
    if int(ctx.attrs["dst_type"]) != DT.DT_INT8:
        bad_param(ctx, "dst_type", f"{int(ctx.attrs['dst_type'])} (only DT_INT8 = 2 runs on "
                                   f"the host)")
    return [(shape_of(ctx, 0), DT.DT_INT8)]


def kernel_ascend_quant(ins, attrs):
    """int8(round_mode(x * scale + offset)), saturated."""
    x = ins[0].astype(np.float32)
    v = ROUND_MODES[attrs["round_mode"]](x * _attr_scale(attrs) + np.float32(attrs["offset"]))
    return [saturate(np.nan_to_num(v.astype(np.float64)), np.int8)]


def _out_float(ctx):
    dt = int(ctx.attrs["dtype"])
    if dt not in OUT_FLOAT:
        bad_param(ctx, "dtype", f"{dt} (0 = DT_FLOAT or 1 = DT_FLOAT16)")
    return OUT_FLOAT[dt]


def _channel_axis(rank: int) -> int:
    """AMCT's per-channel deq_scale runs along dim 1 ([1, C, 1, 1] for Conv, [1, N] for
    MatMul / Gemm)."""
    return 1 if rank >= 2 else 0


def infer_ascend_dequant(ctx):
    xs = shape_of(ctx, 0)
    if xs is not None and xs:
        _check_param_shape(ctx, 1, "deq_scale", xs, _channel_axis(len(xs)))
    return [(xs, _out_float(ctx))]


def deq_scale_values(deq_scale: np.ndarray) -> np.ndarray:
    """float32 scales of a deq_scale tensor: float16 values, or uint64 words whose bits 0..31
    hold the float32 scale (AMCT packs offset_w into bits 40..47)."""
    d = np.asarray(deq_scale)
    if d.dtype == np.uint64:
        return (d & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.float32)
    return d.astype(np.float32)


def kernel_ascend_dequant(ins, attrs):
    """x * deq_scale per channel (dim 1), ReLU if asked."""
    x, deq = ins[0], deq_scale_values(ins[1])
    s = per_axis((deq * deq if attrs["sqrt_mode"] else deq).reshape(-1), x.ndim,
                 _channel_axis(x.ndim))
    y = x.astype(np.float32) * s
    if attrs["relu_flag"]:
        y = np.maximum(y, np.float32(0))
    return [y.astype(np.float16 if int(attrs["dtype"]) == 1 else np.float32)]


def kernel_ascend_anti_quant(ins, attrs):
    """(x + offset) * scale."""
    y = (ins[0].astype(np.float32) + np.float32(attrs["offset"])) * _attr_scale(attrs)
    return [y.astype(np.float16 if int(attrs["dtype"]) == 1 else np.float32)]


def kernel_ascend_weight_quant(ins, attrs):
    """x - offset, saturated to int8."""
    return [saturate(ins[0].astype(np.int16) - ins[1].astype(np.int16), np.int8)]


def infer_ascend_weight_quant(ctx):
    if int(ctx.attrs["dst_type"]) != DT.DT_INT8:
        bad_param(ctx, "dst_type", f"{int(ctx.attrs['dst_type'])} (only DT_INT8 = 2 runs on "
                                   f"the host)")
    return [(shape_of(ctx, 0), DT.DT_INT8)]


# ---- registration -----------------------------------------------------------------------------

_AXIS = AttrSpec("axis", VT.VT_INT, 1)
_CONV_ATTRS = (AttrSpec("strides", VT.VT_LIST_INT), AttrSpec("pads", VT.VT_LIST_INT),
               AttrSpec("dilations", VT.VT_LIST_INT), AttrSpec("groups", VT.VT_INT, 1),
               AttrSpec("data_format", VT.VT_STRING, "NCHW"))


def _ports(*names):
    return tuple(Port(n[:-1], "optional") if n.endswith("?") else Port(n) for n in names)


for _op in (
    OpDef("Quantize", inputs=_ports("x", "scales", "zero_points?"), outputs=_ports("y"),
          attrs=(AttrSpec("dtype", VT.VT_STRING), _AXIS), infer=infer_quantize,
          kernel=kernel_quantize, kernel_gen="quant",
          doc="saturate(rint(x / scales) + zero_points) (CANN; ONNX QuantizeLinear)"),
    OpDef("DequantizeLinear", inputs=_ports("x", "x_scale", "x_zero_point?"),
          outputs=_ports("y"), attrs=(_AXIS,), infer=infer_dequantize,
          kernel=kernel_dequantize, kernel_gen="quant",
          doc="(x - x_zero_point) * x_scale (ours; ONNX DequantizeLinear)"),
    OpDef("DynamicQuantizeLinear", inputs=_ports("x"),
          outputs=_ports("y", "y_scale", "y_zero_point"), infer=infer_dynamic_quantize,
          kernel=kernel_dynamic_quantize, kernel_gen="quant",
          doc="uint8 quantization with the range of x (ours; ONNX DynamicQuantizeLinear)"),
    OpDef("MatMulInteger", inputs=_ports("a", "b", "a_zero_point?", "b_zero_point?"),
          outputs=_ports("y"), infer=_matmul_infer(0, 1, 2, 3, None),
          kernel=kernel_matmul_integer, kernel_gen="quant_matmul",
          doc="int32 (a - a_zero_point) @ (b - b_zero_point) (ours; ONNX MatMulInteger)"),
    OpDef("QLinearMatMul", inputs=_ports("a", "a_scale", "a_zero_point", "b", "b_scale",
                                         "b_zero_point", "y_scale", "y_zero_point"),
          outputs=_ports("y"), infer=_matmul_infer(0, 3, 2, 5, 7),
          kernel=kernel_qlinear_matmul, kernel_gen="quant_matmul",
          doc="requantized integer matmul (ours; ONNX QLinearMatMul)"),
    OpDef("ConvInteger", inputs=_ports("x", "w", "x_zero_point?", "w_zero_point?"),
          outputs=_ports("y"), attrs=_CONV_ATTRS, infer=_conv_infer(0, 1, 2, 3, None),
          resolve=_conv_resolve(0, 1), kernel=kernel_conv_integer, kernel_gen="quant_conv",
          doc="int32 convolution of zero-point-shifted integers (ours; ONNX ConvInteger)"),
    OpDef("QLinearConv", inputs=_ports("x", "x_scale", "x_zero_point", "w", "w_scale",
                                       "w_zero_point", "y_scale", "y_zero_point", "B?"),
          outputs=_ports("y"), attrs=_CONV_ATTRS, infer=_conv_infer(0, 3, 2, 5, 7),
          resolve=_conv_resolve(0, 3), kernel=kernel_qlinear_conv, kernel_gen="quant_conv",
          doc="requantized integer convolution (ours; ONNX QLinearConv)"),
    OpDef("AscendQuant", inputs=_ports("x"), outputs=_ports("y"),
          attrs=(AttrSpec("scale", VT.VT_FLOAT), AttrSpec("offset", VT.VT_FLOAT),
                 AttrSpec("sqrt_mode", VT.VT_BOOL, False),
                 AttrSpec("round_mode", VT.VT_STRING, "Round"),
                 AttrSpec("dst_type", VT.VT_INT, int(DT.DT_INT8))),
          infer=infer_ascend_quant, kernel=kernel_ascend_quant, kernel_gen="quant",
          doc="int8(round(x * scale + offset)) (CANN; AMCT)"),
    OpDef("AscendDequant", inputs=_ports("x", "deq_scale"), outputs=_ports("y"),
          attrs=(AttrSpec("sqrt_mode", VT.VT_BOOL, False),
                 AttrSpec("relu_flag", VT.VT_BOOL, False), AttrSpec("dtype", VT.VT_INT, 0)),
          infer=infer_ascend_dequant, kernel=kernel_ascend_dequant,
          doc="int32 x * deq_scale (CANN; AMCT)"),
    OpDef("AscendAntiQuant", inputs=_ports("x"), outputs=_ports("y"),
          attrs=(AttrSpec("scale", VT.VT_FLOAT), AttrSpec("offset", VT.VT_FLOAT),
                 AttrSpec("dtype", VT.VT_INT, 0), AttrSpec("sqrt_mode", VT.VT_BOOL, False)),
          infer=lambda ctx: [(shape_of(ctx, 0), _out_float(ctx))],
          kernel=kernel_ascend_anti_quant, kernel_gen="quant",
          doc="(x + offset) * scale (CANN; AMCT)"),
    OpDef("AscendWeightQuant", inputs=_ports("x", "offset"), outputs=_ports("y"),
          attrs=(AttrSpec("dst_type", VT.VT_INT, int(DT.DT_INT8)),),
          infer=infer_ascend_weight_quant, kernel=kernel_ascend_weight_quant,
          doc="int8 weight minus its offset (CANN; AMCT)"),
):
    register(OpDef(**{**_op.__dict__, "family": FAMILY}))
