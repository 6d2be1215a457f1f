"""Aipp (ge.ops.defs.aipp): the AIPP pre-processing as a C kernel.

Static AIPP bakes the parameters (from the op's `aipp_config_path` JSON) into a constant
struct; dynamic AIPP reads them per batch from the `params` input, CANN's kAippDynamicPara
layout (offsets below, little endian).  Both run one pixel loop in the documented order:
format read with swaps, crop, integer colour-space conversion (arithmetic >> 8, clip to
[0, 255]), normalisation in float32, padding.  Written independently of the numpy reference
(ge.ops.defs.aipp), which the tests compare it with.
"""
from __future__ import annotations

import json

from ge.ops.defs.aipp import DYNAMIC_BATCH, DYNAMIC_HEAD, static_params

from .cgen import KernelSource, Unsupported, flit, kernel_file, require_dtypes

__all__ = ["VERSION", "render_aipp"]

VERSION = 1
_FORMAT_CODE = {"YUV420SP_U8": 1, "XRGB8888_U8": 2, "RGB888_U8": 3, "YUV400_U8": 4}

_HELPERS = r"""
typedef struct {
    int fmt, csc, rbuv, ax, src_w, src_h, cx, cy, cw, ch, pt, pb, pl, pr;
    float padv;
    int m[9], ib[3], ob[3], mean[4];
    float mn[4], var[4];
} aipp_params;

static float half_to_float(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h >> 15) << 31;
    int exp = (h >> 10) & 0x1f;
    uint32_t man = h & 0x3ff, bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (man << 13);
    } else if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else {
            exp = 1;
            while (!(man & 0x400)) { man <<= 1; --exp; }
            man &= 0x3ff;
            bits = sign | ((uint32_t)(exp + 112) << 23) | (man << 13);
        }
    } else {
        bits = sign | ((uint32_t)(exp + 112) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static int clip255(int v) { return v < 0 ? 0 : (v > 255 ? 255 : v); }

static void aipp_pixel(const uint8_t *img, const aipp_params *p, int sy, int sx, int px[4])
{
    px[0] = px[1] = px[2] = px[3] = 0;
    const int64_t at = (int64_t)sy * p->src_w + sx;
    if (p->fmt == 1 || p->fmt == 4) {              /* YUV420SP_U8, YUV400_U8 */
        px[0] = img[at];
        if (p->fmt == 1) {
            const int64_t uv = (int64_t)(p->src_h + sy / 2) * p->src_w + (sx / 2) * 2;
            px[1] = img[uv + (p->rbuv ? 1 : 0)];
            px[2] = img[uv + (p->rbuv ? 0 : 1)];
        }
        return;
    }
    const int n = p->fmt == 2 ? 4 : 3;             /* XRGB8888_U8 : RGB888_U8 */
    const uint8_t *q = img + at * n;
    int first = 0;
    if (n == 4) {
        first = p->ax ? 1 : 0;
        px[3] = p->ax ? q[0] : q[3];
    }
    px[0] = q[first + (p->rbuv ? 2 : 0)];
    px[1] = q[first + 1];
    px[2] = q[first + (p->rbuv ? 0 : 2)];
}

static void aipp_csc(const aipp_params *p, int px[4])
{
    const int yuv = p->fmt == 1 || p->fmt == 4;
    int in[3], out[3];
    for (int j = 0; j < 3; ++j) in[j] = yuv ? px[j] - p->ib[j] : px[j];
    for (int i = 0; i < 3; ++i) {
        int32_t acc = 0;
        for (int j = 0; j < 3; ++j) acc += (int32_t)p->m[i * 3 + j] * in[j];
        acc >>= 8;                                  /* arithmetic shift: floor(acc / 256) */
        out[i] = clip255(yuv ? acc : acc + p->ob[i]);
    }
    for (int i = 0; i < 3; ++i) px[i] = out[i];
}

static int aipp_image(const uint8_t *img, const aipp_params *p, float *out,
                      int C, int H, int W, int nhwc)
{
    if (p->ch + p->pt + p->pb != H || p->cw + p->pl + p->pr != W || p->cx < 0 || p->cy < 0
        || p->cx + p->cw > p->src_w || p->cy + p->ch > p->src_h)
        return 3;
    for (int oy = 0; oy < H; ++oy) {
        for (int ox = 0; ox < W; ++ox) {
            float v[4] = {p->padv, p->padv, p->padv, p->padv};
            if (oy >= p->pt && oy < p->pt + p->ch && ox >= p->pl && ox < p->pl + p->cw) {
                int px[4];
                aipp_pixel(img, p, p->cy + oy - p->pt, p->cx + ox - p->pl, px);
                if (p->csc) aipp_csc(p, px);
                for (int k = 0; k < C; ++k) {
                    const float centred = (float)(px[k] - p->mean[k]);
                    const float shifted = centred - p->mn[k];
                    v[k] = shifted * p->var[k];
                }
            }
            for (int k = 0; k < C; ++k) {
                const int64_t o = nhwc ? ((int64_t)oy * W + ox) * C + k
                                       : ((int64_t)k * H + oy) * W + ox;
                out[o] = v[k];
            }
        }
    }
    return 0;
}

static int32_t rd_i32(const uint8_t *b, int o) { int32_t v; memcpy(&v, b + o, 4); return v; }
static int16_t rd_i16(const uint8_t *b, int o) { int16_t v; memcpy(&v, b + o, 2); return v; }
static uint16_t rd_u16(const uint8_t *b, int o) { uint16_t v; memcpy(&v, b + o, 2); return v; }

static int aipp_dynamic(const uint8_t *b, int batch, int H, int W, aipp_params *p)
{
    p->fmt = b[0]; p->csc = (int8_t)b[1]; p->rbuv = (int8_t)b[2]; p->ax = (int8_t)b[3];
    if (p->fmt < 1 || p->fmt > 4) return 4;
    p->src_w = rd_i32(b, 8); p->src_h = rd_i32(b, 12);
    for (int k = 0; k < 9; ++k) p->m[k] = rd_i16(b, 16 + 2 * k);
    for (int k = 0; k < 3; ++k) { p->ob[k] = b[40 + k]; p->ib[k] = b[43 + k]; }
    const uint8_t *q = b + HEAD_BYTES + batch * BATCH_BYTES;
    const int crop = (int8_t)q[0], pad = (int8_t)q[2];
    p->cx = crop ? rd_i32(q, 8) : 0; p->cy = crop ? rd_i32(q, 12) : 0;
    p->cw = crop ? rd_i32(q, 16) : 0; p->ch = crop ? rd_i32(q, 20) : 0;
    p->pt = pad ? rd_i32(q, 40) : 0; p->pb = pad ? rd_i32(q, 44) : 0;
    p->pl = pad ? rd_i32(q, 48) : 0; p->pr = pad ? rd_i32(q, 52) : 0;
    if (!p->cw) p->cw = W - p->pl - p->pr;
    if (!p->ch) p->ch = H - p->pt - p->pb;
    p->padv = 0.0f;
    for (int k = 0; k < 4; ++k) {
        p->mean[k] = rd_i16(q, 56 + 2 * k);
        p->mn[k] = half_to_float(rd_u16(q, 64 + 2 * k));
        p->var[k] = half_to_float(rd_u16(q, 72 + 2 * k));
    }
    return 0;
}
"""


def _layout(sig) -> tuple:
    shape = [int(d) for d in sig.attr("output_shape")]
    nhwc = sig.attr("output_format", "NCHW") == "NHWC"
    if len(shape) != 4:
        raise Unsupported(f"output_shape {shape} is not 4-D")
    n, c, h, w = (shape[0], shape[3], shape[1], shape[2]) if nhwc else shape
    return n, c, h, w, nhwc


def _static_struct(params: dict) -> str:
    p = params
    ints = lambda v: ", ".join(str(int(x)) for x in v)  # noqa: E731
    floats = lambda v: ", ".join(flit(x) for x in v)     # noqa: E731
    fields = [_FORMAT_CODE[p["format"]], int(p["csc"]), int(p["rbuv_swap"]),
              int(p["ax_swap"]), p["src_w"], p["src_h"], p["crop_x"], p["crop_y"],
              p["crop_w"], p["crop_h"], *p["pads"]]
    return (f"static const aipp_params P = {{{ints(fields)}, {flit(p['pad_value'])}, "
            f"{{{ints(p['matrix'])}}}, {{{ints(p['input_bias'])}}}, "
            f"{{{ints(p['output_bias'])}}}, {{{ints(p['mean'])}}}, {{{floats(p['min'])}}}, "
            f"{{{floats(p['var'])}}}}};")


def render_aipp(sig) -> KernelSource:
    require_dtypes(sig, {0: ("DT_UINT8",), 1: ("DT_UINT8",)}, {0: ("DT_FLOAT",)})
    n, c, h, w, nhwc = _layout(sig)
    if c > 4:
        raise Unsupported(f"{c} output channels")
    dynamic = len(sig.inputs) > 1 and sig.inputs[1] is not None
    helpers = [f"#define HEAD_BYTES {DYNAMIC_HEAD.size}", f"#define BATCH_BYTES "
               f"{DYNAMIC_BATCH.size}", _HELPERS]
    decls = ["const uint8_t *images = (const uint8_t *)inputs[0];",
             "float *out = (float *)outputs[0];"]
    if dynamic:
        total = int(sig.inputs[0].numel)
        body = [
            "    const uint8_t *prm = (const uint8_t *)inputs[1];",
            "    int64_t at = 0;",
            f"    for (int b = 0; b < {n}; ++b) {{",
            "        aipp_params p;",
            f"        int rc = aipp_dynamic(prm, b, {h}, {w}, &p);",
            "        if (rc) return rc;",
            "        const int chans = p.fmt == 2 ? 4 : (p.fmt == 3 ? 3 : 1);",
            "        const int64_t rows = p.fmt == 1 ? (int64_t)p.src_h * 3 / 2 : p.src_h;",
            "        const int64_t bytes = rows * p.src_w * chans;",
            f"        if (p.src_w <= 0 || p.src_h <= 0 || at + bytes > {total}) return 2;",
            f"        rc = aipp_image(images + at, &p, out + (int64_t)b * {c * h * w}, "
            f"{c}, {h}, {w}, {int(nhwc)});",
            "        if (rc) return rc;",
            "        at += bytes;",
            "    }",
        ]
    else:
        params = static_params(json.loads(sig.attr("aipp_config_path")), (h, w))
        per = int(sig.inputs[0].numel) // n
        helpers.append(_static_struct(params))
        body = [
            f"    for (int b = 0; b < {n}; ++b) {{",
            f"        int rc = aipp_image(images + (int64_t)b * {per}, &P, "
            f"out + (int64_t)b * {c * h * w}, {c}, {h}, {w}, {int(nhwc)});",
            "        if (rc) return rc;",
            "    }",
        ]
    return KernelSource(kernel_file(sig, "aipp", VERSION, decls, body, helpers=helpers))
