"""Aipp: the image pre-processing op that `--insert_op_conf` puts behind a model input.

CANN's op prototype: input `images` (uint8), optional input `params` (uint8, the dynamic AIPP
parameter buffer), output `features`, attribute `aipp_config_path` (GE stores the configuration
there as JSON, after its defaults are applied).  Our IR adds three attributes the kernels need
and CANN keeps in the output desc: `output_shape`, `output_format` (NCHW/NHWC) and
`output_dtype` of the model input the op feeds.

The computation, in CANN's documented order (docs/aipp.md):
  1. read the pixel of the source format, R/B or U/V swap (`rbuv_swap_switch`), X/A position
     (`ax_swap_switch`)
  2. crop (`load_start_pos_*`, `crop_size_*`)
  3. colour-space conversion in integers:
       YUV input: out_i = clip((sum_j m_ij * (in_j - input_bias_j)) >> 8, 0, 255)
       RGB input: out_i = clip(((sum_j m_ij * in_j) >> 8) + output_bias_i, 0, 255)
     (`>>` is the arithmetic shift, i.e. floor division by 256)
  4. normalisation: (pixel - mean_chn_i - min_chn_i) * var_reci_chn_i, with min/var_reci held
     as float16 as the hardware registers hold them, computed in float32
  5. padding with `padding_value`
This module is the numpy reference; ge/compiler/opcompile/gen_aipp.py is the C kernel.
"""
from __future__ import annotations

import json
import struct

import numpy as np

from ._common import VT, AttrSpec, DT, OpDef, Port, Role, register, shape_of
from .structural import infer_data

FAMILY = "aipp"
__all__ = ["SOURCE_CHANNELS", "YUV_INPUTS", "image_rows", "static_params", "dynamic_params",
           "dynamic_param_size", "DYNAMIC_HEAD", "DYNAMIC_BATCH", "run_aipp"]

# input_format -> channels of one pixel in the `images` tensor (NHWC)
SOURCE_CHANNELS = {"YUV420SP_U8": 1, "XRGB8888_U8": 4, "RGB888_U8": 3, "YUV400_U8": 1}
# formats whose colour-space conversion takes YUV in (input_bias) rather than RGB (output_bias)
YUV_INPUTS = ("YUV420SP_U8", "YUV400_U8")
_FORMAT_CODE = {"YUV420SP_U8": 1, "XRGB8888_U8": 2, "RGB888_U8": 3, "YUV400_U8": 4}
_FORMAT_OF_CODE = {v: k for k, v in _FORMAT_CODE.items()}


def image_rows(input_format: str, height: int) -> int:
    """Rows of the `images` tensor for an image `height` high: YUV420SP has the half-height
    interleaved UV plane below the Y plane (H x 1.5 rows)."""
    return height * 3 // 2 if input_format == "YUV420SP_U8" else height


def _f16(value: float) -> float:
    return float(np.float16(value))


def static_params(config: dict, out_hw: tuple) -> dict:
    """Every parameter of a static AIPP from its configuration (the JSON GE stores, zero
    fields omitted), the model input being `out_hw` = (H, W)."""
    g = lambda key, default=0: config.get(key, default)  # noqa: E731
    crop, pad = bool(g("crop", False)), bool(g("padding", False))
    pads = [int(g(k)) if pad else 0 for k in ("top_padding_size", "bottom_padding_size",
                                              "left_padding_size", "right_padding_size")]
    crop_h = int(g("crop_size_h")) if crop else 0
    crop_w = int(g("crop_size_w")) if crop else 0
    crop_h = crop_h or out_hw[0] - pads[0] - pads[1]
    crop_w = crop_w or out_hw[1] - pads[2] - pads[3]
    return {
        "format": g("input_format"), "csc": bool(g("csc_switch", False)),
        "rbuv_swap": bool(g("rbuv_swap_switch", False)),
        "ax_swap": bool(g("ax_swap_switch", False)),
        "src_h": int(g("src_image_size_h")) or crop_h,
        "src_w": int(g("src_image_size_w")) or crop_w,
        "crop_y": int(g("load_start_pos_h")) if crop else 0,
        "crop_x": int(g("load_start_pos_w")) if crop else 0,
        "crop_h": crop_h, "crop_w": crop_w, "pads": pads,
        "pad_value": _f16(g("padding_value", 0.0)) if pad else 0.0,
        "matrix": [int(g(f"matrix_r{r}c{c}")) for r in range(3) for c in range(3)],
        "input_bias": [int(g(f"input_bias_{i}")) for i in range(3)],
        "output_bias": [int(g(f"output_bias_{i}")) for i in range(3)],
        "mean": [int(g(f"mean_chn_{i}")) for i in range(4)],
        "min": [_f16(g(f"min_chn_{i}", 0.0)) for i in range(4)],
        "var": [_f16(g(f"var_reci_chn_{i}", 1.0)) for i in range(4)],
    }


# The dynamic AIPP parameter buffer (CANN's kAippDynamicPara, little endian): a head, then one
# kAippDynamicBatchPara per batch (the first inside the head's 160 bytes).
DYNAMIC_HEAD = struct.Struct("<Bbbbb3x ii 9h6x 3B3B2x 16x")        # 64 bytes
DYNAMIC_BATCH = struct.Struct("<bbbb4x 12i 4h 4H 4H 16x")          # 96 bytes


def dynamic_param_size(batch: int) -> int:
    return DYNAMIC_HEAD.size + batch * DYNAMIC_BATCH.size


def _half(bits: int) -> float:
    return float(np.array([bits], dtype=np.uint16).view(np.float16)[0])


def dynamic_params(buffer: np.ndarray, batch: int, out_hw: tuple) -> list:
    """Per-batch parameters from a dynamic AIPP parameter buffer (uint8)."""
    raw = np.ascontiguousarray(buffer, dtype=np.uint8).tobytes()
    fmt, csc, rbuv, ax, _num, src_w, src_h, *rest = DYNAMIC_HEAD.unpack_from(raw, 0)
    matrix, out_bias, in_bias = list(rest[:9]), list(rest[9:12]), list(rest[12:15])
    if fmt not in _FORMAT_OF_CODE:
        raise ValueError(f"dynamic AIPP input format {fmt} is not one of "
                         f"{sorted(_FORMAT_OF_CODE)}")
    result = []
    for b in range(batch):
        v = DYNAMIC_BATCH.unpack_from(raw, DYNAMIC_HEAD.size + b * DYNAMIC_BATCH.size)
        crop, _scf, pad, _rot = v[:4]
        cx, cy, cw, ch = v[4:8]
        top, bottom, left, right = v[12:16] if pad else (0, 0, 0, 0)
        cw = cw if crop else 0
        ch = ch if crop else 0
        result.append({
            "format": _FORMAT_OF_CODE[fmt], "csc": bool(csc), "rbuv_swap": bool(rbuv),
            "ax_swap": bool(ax), "src_h": src_h, "src_w": src_w,
            "crop_y": cy if crop else 0, "crop_x": cx if crop else 0,
            "crop_h": ch or out_hw[0] - top - bottom, "crop_w": cw or out_hw[1] - left - right,
            "pads": [top, bottom, left, right], "pad_value": 0.0,
            "matrix": matrix, "input_bias": in_bias, "output_bias": out_bias,
            "mean": list(v[16:20]), "min": [_half(x) for x in v[20:24]],
            "var": [_half(x) for x in v[24:28]],
        })
    return result


def _pixels(image: np.ndarray, p: dict) -> np.ndarray:
    """The cropped source as int32 [h, w, 4] channels after the swaps (missing ones 0)."""
    y0, x0, h, w = p["crop_y"], p["crop_x"], p["crop_h"], p["crop_w"]
    fmt = p["format"]
    out = np.zeros((h, w, 4), dtype=np.int32)
    if fmt in YUV_INPUTS:
        out[..., 0] = image[y0:y0 + h, x0:x0 + w, 0]
        if fmt == "YUV420SP_U8":
            rows = p["src_h"] + (np.arange(y0, y0 + h) // 2)
            cols = (np.arange(x0, x0 + w) // 2) * 2
            u, v = (1, 0) if p["rbuv_swap"] else (0, 1)
            out[..., 1] = image[rows[:, None], cols[None, :] + u, 0]
            out[..., 2] = image[rows[:, None], cols[None, :] + v, 0]
        return out
    src = image[y0:y0 + h, x0:x0 + w, :].astype(np.int32)
    if fmt == "XRGB8888_U8":
        colour, alpha = (src[..., 1:4], src[..., 0]) if p["ax_swap"] else (src[..., 0:3],
                                                                           src[..., 3])
        out[..., 3] = alpha
    else:
        colour = src
    out[..., 0:3] = colour[..., ::-1] if p["rbuv_swap"] else colour
    return out


def _csc(pix: np.ndarray, p: dict) -> np.ndarray:
    m = np.array(p["matrix"], dtype=np.int64).reshape(3, 3)
    x = pix[..., 0:3].astype(np.int64)
    if p["format"] in YUV_INPUTS:
        acc = np.einsum("ij,hwj->hwi", m, x - np.array(p["input_bias"], dtype=np.int64)) >> 8
    else:
        acc = (np.einsum("ij,hwj->hwi", m, x) >> 8) + np.array(p["output_bias"], dtype=np.int64)
    out = pix.copy()
    out[..., 0:3] = np.clip(acc, 0, 255)
    return out


def run_aipp(image: np.ndarray, p: dict, channels: int, out_hw: tuple) -> np.ndarray:
    """One image (HWC uint8) -> [H, W, channels] float32, pixel by pixel as documented."""
    pix = _pixels(image, p)
    if p["csc"]:
        pix = _csc(pix, p)
    pix = pix[..., :channels].astype(np.float32)
    mean = np.array(p["mean"][:channels], dtype=np.float32)
    low = np.array(p["min"][:channels], dtype=np.float32)
    var = np.array(p["var"][:channels], dtype=np.float32)
    norm = ((pix - mean) - low) * var
    out = np.full((out_hw[0], out_hw[1], channels), np.float32(p["pad_value"]), np.float32)
    top, _bottom, left, _right = p["pads"]
    out[top:top + p["crop_h"], left:left + p["crop_w"]] = norm
    return out


def _layout(attrs: dict) -> tuple:
    """(N, C, H, W) and whether the output is NHWC."""
    shape = list(attrs["output_shape"])
    nhwc = attrs["output_format"] == "NHWC"
    if len(shape) == 3:
        shape = [1] + shape
    n, c, h, w = (shape[0], shape[3], shape[1], shape[2]) if nhwc else shape
    return (n, c, h, w), nhwc


def kernel_aipp(ins, attrs):
    (n, c, h, w), nhwc = _layout(attrs)
    config = json.loads(attrs["aipp_config_path"])
    images = np.asarray(ins[0])
    if len(ins) > 1 and ins[1] is not None:
        params = dynamic_params(ins[1], n, (h, w))
        flat = images.reshape(-1)
        per = [p["src_w"] * image_rows(p["format"], p["src_h"]) * SOURCE_CHANNELS[p["format"]]
               for p in params]
        starts = np.cumsum([0] + per)
        batch = [flat[starts[b]:starts[b] + per[b]].reshape(
            image_rows(params[b]["format"], params[b]["src_h"]), params[b]["src_w"], -1)
            for b in range(n)]
    else:
        params = [static_params(config, (h, w))] * n
        batch = [images.reshape((n,) + images.shape[-3:])[b] for b in range(n)]
    out = np.stack([run_aipp(batch[b], params[b], c, (h, w)) for b in range(n)])
    if not nhwc:
        out = out.transpose(0, 3, 1, 2)
    dtype = np.float16 if int(attrs["output_dtype"]) == int(DT.DT_FLOAT16) else np.float32
    # float32 first, as the kernel computes: a float16 output is rounded from it once
    return [out.reshape(attrs["output_shape"]).astype(np.float32).astype(dtype)]


def infer_aipp(ctx):
    shape = tuple(int(d) for d in ctx.attrs["output_shape"])
    images = shape_of(ctx, 0)
    if images is not None and len(shape) == 4 and len(images) == 4 and images[0] > 0:
        shape = (images[0],) + shape[1:]
    return [(shape, DT(int(ctx.attrs["output_dtype"])))]


register(OpDef("Aipp", inputs=(Port("images"), Port("params", "optional")),
               outputs=(Port("features"),),
               attrs=(AttrSpec("aipp_config_path", VT.VT_STRING, "./aipp.cfg"),
                      AttrSpec("output_shape", VT.VT_LIST_INT),
                      AttrSpec("output_format", VT.VT_STRING, "NCHW"),
                      AttrSpec("output_dtype", VT.VT_INT, int(DT.DT_FLOAT))),
               infer=infer_aipp, kernel=kernel_aipp, kernel_gen="aipp", family=FAMILY,
               doc="AIPP image pre-processing (--insert_op_conf): swap, crop, colour-space "
                   "conversion, normalisation, padding; `params` = dynamic AIPP buffer"))
register(OpDef("AippData", role=Role.DATA, inputs=(Port("x"),), outputs=(Port("y"),),
               attrs=(AttrSpec("index", VT.VT_INT, 0),), infer=infer_data, family=FAMILY,
               doc="Graph input of the dynamic AIPP parameter buffer (uint8, kAippDynamicPara)"))
