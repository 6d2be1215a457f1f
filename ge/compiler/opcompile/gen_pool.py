"""2-D max and average pooling in NCHW (MaxPoolV3, AvgPoolV2): explicit pads (CALCULATED),
SAME or VALID, global pooling; the output size comes from the inferred output desc, so ceil_mode
is already reflected in it.  Average pooling divides by the window clipped to the padded input
(count_include_pad) or to the real input (exclusive), or by divisor_override.
"""
from __future__ import annotations

from .cgen import KernelSource, Unsupported, hw_pair, io_decls, kernel_file, require_dtypes
from .fastmath import WIDE_DEFINE
from .jobs import over_rows

__all__ = ["POOL_OPS", "VERSION", "render_pool"]

VERSION = 3
POOL_OPS = ("MaxPoolV3", "AvgPoolV2")


def _pads(sig, h, w, oh, ow, kh, kw, sh, sw):
    mode = sig.attr("padding_mode", "CALCULATED")
    if sig.attr("global_pooling", False):
        return 0, 0, 0, 0
    if mode == "VALID":
        return 0, 0, 0, 0
    if mode == "SAME":
        th = max((oh - 1) * sh + kh - h, 0)
        tw = max((ow - 1) * sw + kw - w, 0)
        return th // 2, th - th // 2, tw // 2, tw - tw // 2
    if mode != "CALCULATED":
        raise Unsupported(f"padding_mode {mode}")
    pads = [int(p) for p in sig.attr("pads", [0, 0, 0, 0])]
    if len(pads) != 4:
        raise Unsupported("pads must have 4 values")
    return tuple(pads)


def _max_row(h, w, oh, ow, kh, sh, sw, pt, pl, kw) -> list:
    """Max pooling of output row r (of every plane's rows): the window's input rows first,
    column by column into v (contiguous, it vectorises), then each window column offset one
    branch-free pass over the output columns whose input column is inside the row (the
    padding never wins): kh + kw passes where a pass per window element took kh * kw.  A NaN
    anywhere in the window propagates (a > m || a != a)."""
    return [
        f"        const float *xp = x0 + (r / {oh}) * {h * w};",
        f"        float *yr = y0 + r * {ow};",
        f"        const int64_t h0 = (r % {oh}) * {sh} - {pt};",
        "        const int64_t hs = h0 > 0 ? h0 : 0;",
        f"        const int64_t he = h0 + {kh} < {h} ? h0 + {kh} : {h};",
        f"        float v[{w}];",
        f"        for (int64_t j = 0; j < {w}; ++j) v[j] = -INFINITY;",
        "        for (int64_t i = hs; i < he; ++i)",
        f"            for (int64_t j = 0; j < {w}; ++j) {{",
        f"                const float a = xp[i * {w} + j];",
        "                v[j] = (a > v[j] || a != a) ? a : v[j];",
        "            }",
        f"        for (int64_t oj = 0; oj < {ow}; ++oj) yr[oj] = -INFINITY;",
        f"        for (int64_t kj = 0; kj < {kw}; ++kj) {{",
        f"            const int64_t wofs = kj - {pl};",
        f"            int64_t jlo = wofs >= 0 ? 0 : (-wofs + {sw - 1}) / {sw};",
        f"            int64_t jhi = wofs >= {w} ? 0 : ({w - 1} - wofs) / {sw} + 1;",
        f"            if (jhi > {ow}) jhi = {ow};",
        "            const float *vr = v + wofs;",
        "            for (int64_t oj = jlo; oj < jhi; ++oj) {",
        f"                const float a = vr[oj * {sw}];",
        "                yr[oj] = (a > yr[oj] || a != a) ? a : yr[oj];",
        "            }",
        "        }",
    ]


def render_pool(sig) -> KernelSource:
    require_dtypes(sig, {0: ("DT_FLOAT",)}, {0: ("DT_FLOAT",)})
    if sig.attr("data_format", "NCHW") != "NCHW":
        raise Unsupported("pooling kernels are generated for data_format NCHW only")
    x, y = sig.inputs[0].shape, sig.outputs[0].shape
    if len(x) != 4 or len(y) != 4 or tuple(x[:2]) != tuple(y[:2]):
        raise Unsupported("pooling operands must be 4-D NCHW with equal N, C")
    if any(int(d) != 1 for d in sig.attr("dilation", [1, 1, 1, 1]) or [1]):
        raise Unsupported("dilated pooling")
    nc, h, w = x[0] * x[1], x[2], x[3]
    oh, ow = y[2], y[3]
    if sig.attr("global_pooling", False):
        kh, kw, sh, sw = h, w, 1, 1
    else:
        kh, kw = hw_pair(sig.attr("ksize"), "ksize")
        sh, sw = hw_pair(sig.attr("strides"), "strides")
    pt, pb, pl, pr = _pads(sig, h, w, oh, ow, kh, kw, sh, sw)
    is_max = sig.op_type == "MaxPoolV3"
    exclusive = bool(sig.attr("exclusive", True))
    divisor = int(sig.attr("divisor_override", 0) or 0)
    if is_max:     # rows of all planes, in blocks over the model's threads when large; the
        # row loops also built for AVX2 (fastmath.WIDE)
        helpers, body, threaded = over_rows(nc * oh, kh * w, io_decls(sig),
                                            _max_row(h, w, oh, ow, kh, sh, sw, pt, pl, kw),
                                            wide=True)
        return KernelSource(kernel_file(sig, "pool", VERSION, [], body, blas=threaded,
                                        helpers=[WIDE_DEFINE] + helpers), needs_blas=threaded)
    body = [
        f"    for (int64_t p = 0; p < {nc}; ++p) {{",
        f"        const float *xp = x0 + p * {h * w};",
        f"        float *yp = y0 + p * {oh * ow};",
        f"        for (int64_t oi = 0; oi < {oh}; ++oi) {{",
        f"            const int64_t h0 = oi * {sh} - {pt};",
        f"            const int64_t h1 = h0 + {kh} < {h + pb} ? h0 + {kh} : {h + pb};",
        "            const int64_t hs = h0 > 0 ? h0 : 0;",
        f"            const int64_t he = h1 < {h} ? h1 : {h};",
        f"            for (int64_t oj = 0; oj < {ow}; ++oj) {{",
        f"                const int64_t w0 = oj * {sw} - {pl};",
        f"                const int64_t w1 = w0 + {kw} < {w + pr} ? w0 + {kw} : {w + pr};",
        "                const int64_t ws = w0 > 0 ? w0 : 0;",
        f"                const int64_t we = w1 < {w} ? w1 : {w};",
    ]
    if divisor:
        count = f"{divisor}.0"
    elif exclusive:
        count = "(double)((he - hs) * (we - ws))"
    else:
        count = "(double)((h1 - h0) * (w1 - w0))"
    body += [
        "                double s = 0.0;",
        "                for (int64_t i = hs; i < he; ++i)",
        f"                    for (int64_t j = ws; j < we; ++j) s += xp[i * {w} + j];",
        f"                const double cnt = {count};",
        f"                yp[oi * {ow} + oj] = cnt > 0.0 ? (float)(s / cnt) : 0.0f;",
    ]
    body += ["            }", "        }", "    }"]
    return KernelSource(kernel_file(sig, "pool", VERSION, io_decls(sig), body))
