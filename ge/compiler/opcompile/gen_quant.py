"""Quantization kernels (ge/ops/defs/quant.py): element-wise quantize / dequantize (per tensor or
per axis), dynamic uint8 quantization, integer matmul and 2-D NCHW integer convolution with the
requantizing epilogue of the QLinear ops.

Everything is integer arithmetic plus the float32 operations onnxruntime performs, in the same
order: `rintf(x / scale)` (ties to even: the default rounding mode), the zero point added,
saturation; int64 accumulation wrapped to int32; `rintf((float)acc * m)` with the multiplier
m = (scale_a * scale_b) / scale_y.  The kernels are compiled with -std=c99, so the C compiler
never fuses a multiply and an add (ISO C: -ffp-contract=off).
"""
from __future__ import annotations

import numpy as np

from .cgen import (C_TYPE, KernelSource, Unsupported, flit, hw_pair, io_decls, kernel_file,
                   numel, require_dtypes)

__all__ = ["VERSION", "render_quant", "render_quant_matmul", "render_quant_conv"]

VERSION = 1
F = ("DT_FLOAT",)
I8 = ("DT_INT8", "DT_UINT8")
LIMITS = {"DT_INT8": (-128, 127), "DT_UINT8": (0, 255), "DT_INT32": None}

_HELPERS = [
    "static inline float ge_clampf(float v, float lo, float hi)",
    "{",
    "    if (v != v) return 0.0f;",
    "    return v < lo ? lo : (v > hi ? hi : v);",
    "}",
    "",
]


def _present(sig, slot: int) -> bool:
    return slot < len(sig.inputs) and sig.inputs[slot] is not None


def _param_index(sig, slot: int, axis_dim: int, inner: int, var: str = "i") -> str:
    """Index into a scale / zero point: 0 when it is one value, else the position along the
    quantization axis of flat element `var`."""
    if not _present(sig, slot) or numel(sig.inputs[slot].shape) == 1:
        return "0"
    if numel(sig.inputs[slot].shape) != axis_dim:
        raise Unsupported(f"input {slot} has {numel(sig.inputs[slot].shape)} values, not "
                          f"{axis_dim}")
    return f"(({var} / {inner}) % {axis_dim})"


def _axis_geometry(sig, axis: int):
    shape = sig.inputs[0].shape
    if not shape:
        return 1, 1
    axis = axis % len(shape)
    return shape[axis], numel(shape[axis + 1:])


def _saturate(expr: str, dtype: str) -> str:
    lo, hi = LIMITS[dtype]
    return f"({C_TYPE[dtype]})ge_clampf({expr}, {lo}.0f, {hi}.0f)"


def _zp(sig, slot: int, index: str) -> str:
    return f"(float)x{slot}[{index}]" if _present(sig, slot) else "0.0f"


def _quantize_body(sig) -> list:
    require_dtypes(sig, {0: F, 1: F, 2: I8}, {0: I8})
    dim, inner = _axis_geometry(sig, int(sig.attr("axis", 1)))
    c = _param_index(sig, 1, dim, inner)
    z = _param_index(sig, 2, dim, inner)
    q = _saturate(f"rintf(x0[i] / x1[{c}]) + {_zp(sig, 2, z)}", sig.outputs[0].dtype)
    return [f"    for (int64_t i = 0; i < {numel(sig.inputs[0].shape)}; ++i)",
            f"        y0[i] = {q};"]


def _dequantize_body(sig) -> list:
    require_dtypes(sig, {0: I8 + ("DT_INT32",), 1: F}, {0: F})
    dim, inner = _axis_geometry(sig, int(sig.attr("axis", 1)))
    c = _param_index(sig, 1, dim, inner)
    z = _param_index(sig, 2, dim, inner)
    zp = f"(int32_t)x2[{z}]" if _present(sig, 2) else "0"
    return [f"    for (int64_t i = 0; i < {numel(sig.inputs[0].shape)}; ++i)",
            f"        y0[i] = (float)((int32_t)x0[i] - {zp}) * x1[{c}];"]


def _dynamic_body(sig) -> list:
    require_dtypes(sig, {0: F}, {0: ("DT_UINT8",), 1: F, 2: ("DT_UINT8",)})
    n = numel(sig.inputs[0].shape)
    return [f"    float lo = 0.0f, hi = 0.0f;",
            f"    for (int64_t i = 0; i < {n}; ++i) {{",
            "        if (x0[i] < lo) lo = x0[i];",
            "        if (x0[i] > hi) hi = x0[i];",
            "    }",
            "    const float scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;",
            "    const float zpf = rintf(ge_clampf(0.0f - lo / scale, 0.0f, 255.0f));",
            "    y1[0] = scale;",
            "    y2[0] = (uint8_t)zpf;",
            f"    for (int64_t i = 0; i < {n}; ++i)",
            f"        y0[i] = {_saturate('rintf(x0[i] / scale) + zpf', 'DT_UINT8')};"]


def _attr_scale(sig) -> str:
    s32 = np.float32(sig.attr("scale"))
    return flit(float(s32 * s32) if sig.attr("sqrt_mode", False) else float(s32))


_ROUND_C = {"Round": "rintf", "Floor": "floorf", "Ceil": "ceilf", "Trunc": "truncf"}


def _ascend_quant_body(sig) -> list:
    require_dtypes(sig, {0: F}, {0: ("DT_INT8",)})
    fn = _ROUND_C[sig.attr("round_mode", "Round")]
    rounded = f"{fn}(t + {flit(sig.attr('offset'))})"
    return [f"    for (int64_t i = 0; i < {numel(sig.inputs[0].shape)}; ++i) {{",
            f"        const float t = x0[i] * {_attr_scale(sig)};",
            f"        y0[i] = {_saturate(rounded, 'DT_INT8')};",
            "    }"]


def _ascend_anti_quant_body(sig) -> list:
    require_dtypes(sig, {0: ("DT_INT8",)}, {0: F})
    return [f"    for (int64_t i = 0; i < {numel(sig.inputs[0].shape)}; ++i)",
            f"        y0[i] = ((float)x0[i] + {flit(sig.attr('offset'))}) * {_attr_scale(sig)};"]


_ELEMENTWISE = {"Quantize": _quantize_body, "DequantizeLinear": _dequantize_body,
                "DynamicQuantizeLinear": _dynamic_body, "AscendQuant": _ascend_quant_body,
                "AscendAntiQuant": _ascend_anti_quant_body}


def render_quant(sig) -> KernelSource:
    body = _ELEMENTWISE[sig.op_type](sig)
    return KernelSource(kernel_file(sig, "quant", VERSION, io_decls(sig), body,
                                    helpers=_HELPERS))


# ---- integer matmul ---------------------------------------------------------------------------

# op -> slots (a, b, a_zp, b_zp, a_scale, b_scale, y_scale, y_zp); -1 = none
_MATMUL_SLOTS = {"MatMulInteger": (0, 1, 2, 3, -1, -1, -1, -1),
                 "QLinearMatMul": (0, 3, 2, 5, 1, 4, 6, 7)}


def _requant(sig, acc: str, scale_a: str, scale_b: str, scale_y: int, zp: int) -> str:
    mult = f"((x{scale_a} * x{scale_b}) / x{scale_y}[0])"
    return _saturate(f"rintf((float)(int32_t){acc} * {mult}) + (float)x{zp}[0]",
                     sig.outputs[0].dtype)


def _row_index(sig, slot: int, count: int, var: str) -> str:
    if slot < 0 or not _present(sig, slot) or numel(sig.inputs[slot].shape) == 1:
        return "[0]"
    if numel(sig.inputs[slot].shape) != count:
        raise Unsupported(f"input {slot} must have 1 or {count} values")
    return f"[{var}]"


def render_quant_matmul(sig) -> KernelSource:
    a, b, a_zp, b_zp, a_s, b_s, y_s, y_zp = _MATMUL_SLOTS[sig.op_type]
    require_dtypes(sig, {a: I8, b: I8, a_zp: I8, b_zp: I8},
                   {0: ("DT_INT32",) if y_zp < 0 else I8})
    if y_zp >= 0:
        require_dtypes(sig, {a_s: F, b_s: F, y_s: F}, {})
        if numel(sig.inputs[y_s].shape) != 1 or numel(sig.inputs[y_zp].shape) != 1:
            raise Unsupported("y_scale / y_zero_point must be scalars")
    sa, sb, sy = sig.inputs[a].shape, sig.inputs[b].shape, sig.outputs[0].shape
    if len(sa) < 2 or len(sb) < 2:
        raise Unsupported("1-D matmul operands")
    m, k, n = sa[-2], sa[-1], sb[-1]
    batch = tuple(sy[:-2])
    for s in (sa, sb):
        if tuple(s[:-2]) not in ((), batch) and numel(s[:-2]) != 1:
            raise Unsupported("broadcast batch dims")
    nb = numel(batch)
    step_a = m * k if numel(sa[:-2]) == nb and nb > 1 else 0
    step_b = k * n if numel(sb[:-2]) == nb and nb > 1 else 0
    azp = (f"(int64_t)x{a_zp}{_row_index(sig, a_zp, m, 'r')}" if _present(sig, a_zp)
           else "0")
    bzp = f"(int64_t)x{b_zp}{_row_index(sig, b_zp, n, 'j')}" if _present(sig, b_zp) else "0"
    if y_zp < 0:
        store = "(int32_t)acc[j]"
    else:
        store = _requant(sig, "acc[j]", f"{a_s}{_row_index(sig, a_s, m, 'r')}",
                         f"{b_s}{_row_index(sig, b_s, n, 'j')}", y_s, y_zp)
    body = [
        "    int64_t *acc = (int64_t *)workspace;",
        f"    for (int64_t t = 0; t < {nb}; ++t) {{",
        f"        const {C_TYPE[sig.inputs[a].dtype]} *pa = x{a} + t * {step_a};",
        f"        const {C_TYPE[sig.inputs[b].dtype]} *pb = x{b} + t * {step_b};",
        f"        for (int64_t r = 0; r < {m}; ++r) {{",
        f"            for (int64_t j = 0; j < {n}; ++j) acc[j] = 0;",
        f"            for (int64_t q = 0; q < {k}; ++q) {{",
        f"                const int64_t av = (int64_t)pa[r * {k} + q] - {azp};",
        f"                for (int64_t j = 0; j < {n}; ++j)",
        f"                    acc[j] += av * ((int64_t)pb[q * {n} + j] - {bzp});",
        "            }",
        f"            for (int64_t j = 0; j < {n}; ++j)",
        f"                y0[(t * {m} + r) * {n} + j] = {store};",
        "        }",
        "    }"]
    return KernelSource(kernel_file(sig, "quant_matmul", VERSION, io_decls(sig), body,
                                    helpers=_HELPERS), workspace_bytes=8 * n)


# ---- integer convolution ----------------------------------------------------------------------

# op -> slots (x, w, x_zp, w_zp, x_scale, w_scale, y_scale, y_zp, bias); -1 = none
_CONV_SLOTS = {"ConvInteger": (0, 1, 2, 3, -1, -1, -1, -1, -1),
               "QLinearConv": (0, 3, 2, 5, 1, 4, 6, 7, 8)}


def render_quant_conv(sig) -> KernelSource:
    x, w, x_zp, w_zp, x_s, w_s, y_s, y_zp, bias = _CONV_SLOTS[sig.op_type]
    require_dtypes(sig, {x: I8, w: I8, x_zp: I8, w_zp: I8},
                   {0: ("DT_INT32",) if y_zp < 0 else I8})
    if str(sig.attr("auto_pad", "NOTSET")).upper() not in ("", "NOTSET"):
        raise Unsupported("auto_pad not resolved")
    sx, sw, sy = sig.inputs[x].shape, sig.inputs[w].shape, sig.outputs[0].shape
    if len(sx) != 4 or len(sw) != 4:
        raise Unsupported("integer convolution kernels are generated for 2-D NCHW only")
    nb, c, h, wd = sx
    co, cg, kh, kw = sw
    oh, ow = sy[2], sy[3]
    groups = int(sig.attr("groups", 1))
    sh, sw_ = hw_pair(sig.attr("strides"), "strides")
    dh, dw = hw_pair(sig.attr("dilations"), "dilations")
    pads = [int(p) for p in sig.attr("pads", [0, 0, 0, 0])]
    if len(pads) != 4 or c != cg * groups or co % groups:
        raise Unsupported("pads / channels / groups")
    pt, pl = pads[0], pads[2]
    cog = co // groups
    xzp = f"(int64_t)x{x_zp}[0]" if _present(sig, x_zp) else "0"
    wzp = f"(int64_t)x{w_zp}{_row_index(sig, w_zp, co, 'o')}" if _present(sig, w_zp) else "0"
    if y_zp < 0:
        store = "(int32_t)acc"
    else:
        require_dtypes(sig, {x_s: F, w_s: F, y_s: F, bias: ("DT_INT32",)}, {})
        if _present(sig, bias):
            store_acc = f"(acc + (int64_t)x{bias}[o])"
        else:
            store_acc = "acc"
        store = _requant(sig, store_acc, f"{x_s}[0]", f"{w_s}{_row_index(sig, w_s, co, 'o')}",
                         y_s, y_zp)
    body = [
        f"    for (int64_t b = 0; b < {nb}; ++b)",
        f"    for (int64_t o = 0; o < {co}; ++o) {{",
        f"        const int64_t g = o / {cog};",
        f"        const int64_t wz = {wzp};",
        f"        for (int64_t oi = 0; oi < {oh}; ++oi)",
        f"        for (int64_t oj = 0; oj < {ow}; ++oj) {{",
        "            int64_t acc = 0;",
        f"            for (int64_t ci = 0; ci < {cg}; ++ci) {{",
        f"                const int64_t xc = (b * {c} + g * {cg} + ci) * {h};",
        f"                const int64_t wc = (o * {cg} + ci) * {kh};",
        f"                for (int64_t ki = 0; ki < {kh}; ++ki) {{",
        f"                    const int64_t hi = oi * {sh} - {pt} + ki * {dh};",
        f"                    if (hi < 0 || hi >= {h}) continue;",
        f"                    for (int64_t kj = 0; kj < {kw}; ++kj) {{",
        f"                        const int64_t wi = oj * {sw_} - {pl} + kj * {dw};",
        f"                        if (wi < 0 || wi >= {wd}) continue;",
        f"                        acc += ((int64_t)x{x}[(xc + hi) * {wd} + wi] - {xzp})",
        f"                             * ((int64_t)x{w}[(wc + ki) * {kw} + kj] - wz);",
        "                    }",
        "                }",
        "            }",
        f"            y0[((b * {co} + o) * {oh} + oi) * {ow} + oj] = {store};",
        "        }",
        "    }"]
    return KernelSource(kernel_file(sig, "quant_conv", VERSION, io_decls(sig), body,
                                    helpers=_HELPERS))
