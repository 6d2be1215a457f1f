"""Convolution (spec/ir-ops.md §3.3): Conv2D, Conv3D, Conv2DTranspose, Conv3DTranspose.

Layouts, as the ONNX parser produces them: with a channels-first `data_format` (NCHW, NCDHW)
x is [N, C, *spatial] and the filter is [Cout, Cin/groups, *k] (Conv) or [Cin, Cout/groups, *k]
(ConvTranspose).  With a channels-last format (NHWC, NDHWC) x is [N, *spatial, C] and the
filter is [*k, Cin/groups, Cout] (HWCN).  `strides`/`dilations`/`output_padding` have one value
per dim of data_format (or one per spatial dim); `pads` are [begin, end] per spatial dim
([top, bottom, left, right] for 2-D, [head, tail, top, bottom, left, right] for 3-D).

The extra String attr `auto_pad` copied by the ONNX parser (SAME_UPPER, SAME_LOWER, VALID,
NOTSET) overrides `pads` with ONNX semantics; ConvTranspose's extra `output_shape` too.
Conv2D/Conv3D `resolve` turns auto_pad into explicit pads once shapes are known.
"""
from __future__ import annotations

import itertools

import numpy as np

from ._common import (DT, VT, AttrSpec, OpDef, Port, apply_fused_activation, const_ints,
                      dtype_of, fail, register, shape_of)

FAMILY = "conv"


def _channels_last(fmt: str) -> bool:
    return fmt.upper() in ("NHWC", "NDHWC")


def spatial_values(ctx_or_none, values, fmt: str, nsp: int, what: str) -> list:
    """Per-spatial-dim values of a strides/dilations-style attribute."""
    values = [int(v) for v in values]
    if len(values) == nsp:
        return values
    if len(values) == nsp + 2:
        return values[1:-1] if _channels_last(fmt) else values[2:]
    if len(values) == 1:
        return values * nsp
    msg = f"{what} must have {nsp} or {nsp + 2} values, got {values}"
    if ctx_or_none is not None:
        fail(ctx_or_none, msg)
    raise ValueError(msg)


def _auto_pads(auto_pad, ins, ks, ss, ds, transposed=False, outs=None, ops=None):
    """(begins, ends) for ONNX auto_pad modes; None for NOTSET."""
    mode = (auto_pad or "NOTSET").upper()
    if mode in ("", "NOTSET"):
        return None
    n = len(ins)
    if mode == "VALID":
        return [0] * n, [0] * n
    begins, ends = [], []
    for i in range(n):
        eff_k = (ks[i] - 1) * ds[i] + 1
        if transposed:
            out = outs[i] if outs else ins[i] * ss[i]
            total = max(0, ss[i] * (ins[i] - 1) + ops[i] + eff_k - out)
            small, big = total // 2, total - total // 2
            # ONNX / onnxruntime: SAME_UPPER puts the odd pad at the end, as for Conv
            head, tail = (small, big) if mode == "SAME_UPPER" else (big, small)
        else:
            out = -(-ins[i] // ss[i])
            total = max(0, (out - 1) * ss[i] + eff_k - ins[i])
            small, big = total // 2, total - total // 2
            head, tail = (small, big) if mode == "SAME_UPPER" else (big, small)
        begins.append(head)
        ends.append(tail)
    return begins, ends


def _pads(ctx, attrs, nsp):
    pads = [int(p) for p in attrs["pads"]]
    if len(pads) == 2 * nsp:
        return pads[0::2], pads[1::2]
    if len(pads) == 0:
        return [0] * nsp, [0] * nsp
    msg = f"pads must have {2 * nsp} values, got {pads}"
    if ctx is not None:
        fail(ctx, msg)
    raise ValueError(msg)


def _conv_geometry(ctx, attrs, x_spatial, k_spatial, nsp):
    fmt = attrs["data_format"]
    ss = spatial_values(ctx, attrs["strides"], fmt, nsp, "strides")
    ds = spatial_values(ctx, attrs["dilations"], fmt, nsp, "dilations")
    auto = _auto_pads(attrs.get("auto_pad"), x_spatial, k_spatial, ss, ds)
    pb, pe = auto if auto is not None else _pads(ctx, attrs, nsp)
    return ss, ds, pb, pe


def _to_channels_first(x, w, fmt, nsp):
    if _channels_last(fmt):
        x = np.moveaxis(x, -1, 1)
        w = np.transpose(w, (nsp + 1, nsp) + tuple(range(nsp)))
    return x, w


def _compute_dtype(x):
    if x.dtype.kind in "iu":  # int8 convolution (AMCT models): exact int64 accumulation
        return np.int64
    return np.float32 if x.dtype == np.float16 else (
        np.float64 if x.dtype == np.float64 else np.float32)


def _out_dtype(dt):
    """int8 / uint8 convolutions accumulate into int32 (CANN's quantized Conv2D)."""
    return DT.DT_INT32 if dt in (DT.DT_INT8, DT.DT_UINT8) else dt


def conv_nd(x, w, ss, ds, pb, pe, groups):
    """Channels-first N-D convolution through strided views and one batched matmul."""
    n, c = x.shape[:2]
    nsp = x.ndim - 2
    cout, cg = w.shape[:2]
    ks = w.shape[2:]
    xp = np.pad(x, [(0, 0), (0, 0)] + list(zip(pb, pe)))
    outs = [(xp.shape[2 + i] - (ks[i] - 1) * ds[i] - 1) // ss[i] + 1 for i in range(nsp)]
    cols = []
    for offs in itertools.product(*[range(k) for k in ks]):
        idx = tuple(slice(o * d, o * d + s * (m - 1) + 1, s)
                    for o, d, s, m in zip(offs, ds, ss, outs))
        cols.append(xp[(slice(None), slice(None)) + idx])
    kk = len(cols)
    cols = np.stack(cols, axis=2).reshape(n, groups, cg * kk, -1)       # [N, G, Cg*K, P]
    wm = w.reshape(groups, cout // groups, cg * kk)                      # [G, Og, Cg*K]
    y = np.matmul(wm[None], cols)                                         # [N, G, Og, P]
    return y.reshape([n, cout] + outs)


def _conv_kernel(nsp):
    def kernel(ins, attrs):
        x, w = ins[0], ins[1]
        bias = ins[2] if len(ins) > 2 else None
        fmt = attrs["data_format"]
        cd = _compute_dtype(x)
        xc, wc = _to_channels_first(x.astype(cd), w.astype(cd), fmt, nsp)
        ss, ds, pb, pe = _conv_geometry(None, attrs, list(xc.shape[2:]), list(wc.shape[2:]), nsp)
        y = conv_nd(xc, wc, ss, ds, pb, pe, int(attrs["groups"]))
        if bias is not None:
            y = y + bias.astype(cd).reshape((1, -1) + (1,) * nsp)
        if _channels_last(fmt):
            y = np.moveaxis(y, 1, -1)
        residual = ins[RESIDUAL_SLOT] if len(ins) > RESIDUAL_SLOT else None
        if residual is not None:        # in y's layout, added before the activation
            y = y + residual.astype(cd)
        y = apply_fused_activation(y, attrs)
        return [y.astype(np.int32 if x.dtype.kind in "iu" else x.dtype)]
    return kernel


def _split_shapes(fmt, xs, ws, nsp, transposed):
    """(N, C, spatial, k spatial, Cout) from x / filter shapes in their layouts."""
    if _channels_last(fmt):
        n, c, sp = xs[0], xs[-1], list(xs[1:-1])
        ksp, w_out = list(ws[:nsp]), ws[-1]
        w_in = ws[-2]
    else:
        n, c, sp = xs[0], xs[1], list(xs[2:])
        ksp, w_out, w_in = list(ws[2:]), ws[0], ws[1]
    return n, c, sp, ksp, w_out, w_in


def _conv_infer(nsp):
    def infer(ctx):
        xs, ws = shape_of(ctx, 0), shape_of(ctx, 1)
        dt = _out_dtype(dtype_of(ctx, 0))
        if xs is None or ws is None:
            return [(None, dt)]
        if len(xs) != nsp + 2 or len(ws) != nsp + 2:
            fail(ctx, f"x {list(xs)} and filter {list(ws)} must have rank {nsp + 2}")
        fmt, groups = ctx.attrs["data_format"], int(ctx.attrs["groups"])
        n, c, sp, ksp, cout, cg = _split_shapes(fmt, xs, ws, nsp, False)
        if c >= 0 and cg >= 0 and c != cg * groups:
            fail(ctx, f"x has {c} channels but filter expects {cg} x {groups} groups")
        ss, ds, pb, pe = _conv_geometry(ctx, ctx.attrs, sp, ksp, nsp)
        out = []
        for i in range(nsp):
            if sp[i] < 0 or ksp[i] < 0:
                out.append(-1)
                continue
            o = (sp[i] + pb[i] + pe[i] - (ksp[i] - 1) * ds[i] - 1) // ss[i] + 1
            if o <= 0:
                fail(ctx, f"output spatial dim {i} would be {o}")
            out.append(o)
        shape = (n, *out, cout) if _channels_last(fmt) else (n, cout, *out)
        residual = shape_of(ctx, RESIDUAL_SLOT)
        if residual is not None and -1 not in shape and tuple(residual) != tuple(shape):
            fail(ctx, f"residual {list(residual)} must have the output's shape {list(shape)}")
        return [(shape, dt)]
    return infer


def _conv_resolve(nsp):
    """auto_pad SAME_UPPER / SAME_LOWER / VALID → explicit `pads` and auto_pad NOTSET, once
    the input and filter shapes are static (kernel generators read only `pads`)."""
    def resolve(ctx):
        auto = str(ctx.attrs.get("auto_pad") or "NOTSET").upper()
        xs, ws = shape_of(ctx, 0), shape_of(ctx, 1)
        if auto in ("", "NOTSET") or xs is None or ws is None:
            return {}
        _, _, sp, ksp, _, _ = _split_shapes(ctx.attrs["data_format"], xs, ws, nsp, False)
        if any(d < 0 for d in sp + ksp):
            return {}
        _, _, pb, pe = _conv_geometry(ctx, ctx.attrs, sp, ksp, nsp)
        return {"pads": [v for pair in zip(pb, pe) for v in pair], "auto_pad": "NOTSET"}
    return resolve


# ---- transposed convolution ----------------------------------------------------------------

def _transpose_geometry(ctx, attrs, in_sp, k_sp, nsp, input_size):
    fmt = attrs["data_format"]
    ss = spatial_values(ctx, attrs["strides"], fmt, nsp, "strides")
    ds = spatial_values(ctx, attrs["dilations"], fmt, nsp, "dilations")
    ops = spatial_values(ctx, attrs["output_padding"], fmt, nsp, "output_padding")
    full = [(in_sp[i] - 1) * ss[i] + (k_sp[i] - 1) * ds[i] + 1 + ops[i] for i in range(nsp)]
    wanted = None
    if attrs.get("output_shape"):
        wanted = [int(v) for v in attrs["output_shape"]][-nsp:]
    elif input_size is not None and any(int(v) != 0 for v in input_size):
        wanted = spatial_values(ctx, input_size, fmt, nsp, "input_size")
    auto = attrs.get("auto_pad") or "NOTSET"
    if wanted is not None and auto.upper() in ("NOTSET", ""):
        # output_shape without auto_pad: the odd pad at the start (onnxruntime; CANN's parser
        # writes auto_pad SAME_LOWER for it)
        auto = "SAME_LOWER" if attrs.get("output_shape") else "NOTSET"
    pads = _auto_pads(auto, in_sp, k_sp, ss, ds, True, wanted, ops)
    pb, pe = pads if pads is not None else _pads(ctx, attrs, nsp)
    outs = wanted if wanted is not None else [full[i] - pb[i] - pe[i] for i in range(nsp)]
    return ss, ds, ops, pb, outs


def conv_transpose_nd(x, w, ss, ds, ops, pb, outs, groups):
    """Channels-first transposed conv: scatter every kernel tap, then crop pads."""
    n, cin = x.shape[:2]
    nsp = x.ndim - 2
    ks = w.shape[2:]
    og = w.shape[1]
    ins = x.shape[2:]
    full = [(ins[i] - 1) * ss[i] + (ks[i] - 1) * ds[i] + 1 + ops[i] for i in range(nsp)]
    size = [max(full[i], pb[i] + outs[i]) for i in range(nsp)]
    y = np.zeros([n, groups, og] + size, dtype=x.dtype)
    xg = x.reshape(n, groups, cin // groups, -1)                         # [N, G, Cg, P]
    wg = w.reshape(groups, cin // groups, og, -1)                        # [G, Cg, Og, K]
    for t, offs in enumerate(itertools.product(*[range(k) for k in ks])):
        contrib = np.matmul(np.swapaxes(wg[:, :, :, t], 1, 2)[None], xg)  # [N, G, Og, P]
        idx = tuple(slice(o * d, o * d + s * (m - 1) + 1, s)
                    for o, d, s, m in zip(offs, ds, ss, ins))
        y[(slice(None),) * 3 + idx] += contrib.reshape([n, groups, og] + list(ins))
    crop = tuple(slice(pb[i], pb[i] + outs[i]) for i in range(nsp))
    return y[(slice(None),) * 3 + crop].reshape([n, groups * og] + list(outs))


def _transpose_kernel(nsp):
    def kernel(ins, attrs):
        input_size, x, w = ins[0], ins[1], ins[2]
        bias = ins[3] if len(ins) > 3 else None
        fmt = attrs["data_format"]
        cd = _compute_dtype(x)
        xc, wc = _to_channels_first(x.astype(cd), w.astype(cd), fmt, nsp)
        sizes = None if input_size is None else input_size.reshape(-1).tolist()
        ss, ds, ops, pb, outs = _transpose_geometry(None, attrs, list(xc.shape[2:]),
                                                    list(wc.shape[2:]), nsp, sizes)
        y = conv_transpose_nd(xc, wc, ss, ds, ops, pb, outs, int(attrs["groups"]))
        if bias is not None:
            y = y + bias.astype(cd).reshape((1, -1) + (1,) * nsp)
        if _channels_last(fmt):
            y = np.moveaxis(y, 1, -1)
        return [y.astype(x.dtype)]
    return kernel


def _transpose_infer(nsp):
    def infer(ctx):
        xs, ws = shape_of(ctx, 1), shape_of(ctx, 2)
        dt = dtype_of(ctx, 1)
        if xs is None or ws is None or len(xs) != nsp + 2 or len(ws) != nsp + 2:
            fail(ctx, f"x and filter must be known rank-{nsp + 2} tensors")
        fmt, groups = ctx.attrs["data_format"], int(ctx.attrs["groups"])
        if _channels_last(fmt):
            n, sp, ksp, cout = xs[0], list(xs[1:-1]), list(ws[:nsp]), ws[-2] * groups
        else:
            n, sp, ksp, cout = xs[0], list(xs[2:]), list(ws[2:]), ws[1] * groups
        sizes = None
        if ctx.ins[0] is not None and ctx.ins[0].value is not None:
            sizes = const_ints(ctx, 0, "input_size")
        if any(d < 0 for d in sp + ksp):
            outs = [-1] * nsp
        else:
            outs = _transpose_geometry(ctx, ctx.attrs, sp, ksp, nsp, sizes)[4]
        shape = (n, *outs, cout) if _channels_last(fmt) else (n, cout, *outs)
        return [(shape, dt)]
    return infer


def _attrs(nsp, fmt, transposed):
    ones = [1] * (nsp + 2)
    out = (AttrSpec("strides", VT.VT_LIST_INT), AttrSpec("pads", VT.VT_LIST_INT),
           AttrSpec("dilations", VT.VT_LIST_INT, ones), AttrSpec("groups", VT.VT_INT, 1),
           AttrSpec("data_format", VT.VT_STRING, fmt))
    if transposed:
        out += (AttrSpec("output_padding", VT.VT_LIST_INT, [0] * (nsp + 2)),)
    return out + (AttrSpec("offset_x", VT.VT_INT, 0),)


_TAIL = (Port("bias", "optional"), Port("offset_w", "optional"))
# Conv2D's input added by ConvAddFusionPass (ge/compiler/fusion): a tensor of y's shape added
# to the convolution (after the bias, before a fused activation), as onnxruntime's FusedConv
# adds its Sum input; not a port of CANN's Conv2D.
RESIDUAL = Port("residual", "optional")
_CONV2D_INPUTS = (Port("x"), Port("filter")) + _TAIL + (RESIDUAL,)
RESIDUAL_SLOT = _CONV2D_INPUTS.index(RESIDUAL)
FILTER_SLOT = [port.name for port in _CONV2D_INPUTS].index("filter")

register(OpDef("Conv2D", kernel_gen="conv2d",
               inputs=_CONV2D_INPUTS, outputs=(Port("y"),),
               attrs=_attrs(2, "NHWC", False), infer=_conv_infer(2), kernel=_conv_kernel(2),
               resolve=_conv_resolve(2),
               family=FAMILY, doc="2-D convolution"))
register(OpDef("Conv3D", inputs=(Port("x"), Port("filter")) + _TAIL, outputs=(Port("y"),),
               attrs=_attrs(3, "NDHWC", False), infer=_conv_infer(3), kernel=_conv_kernel(3),
               resolve=_conv_resolve(3),
               family=FAMILY, doc="3-D convolution"))
register(OpDef("Conv2DTranspose", inputs=(Port("input_size"), Port("x"), Port("filter")) + _TAIL,
               outputs=(Port("y"),), attrs=_attrs(2, "NHWC", True), infer=_transpose_infer(2),
               kernel=_transpose_kernel(2), family=FAMILY,
               doc="2-D transposed convolution; input_size all zeros = derive from attrs"))
register(OpDef("Conv3DTranspose", inputs=(Port("input_size"), Port("x"), Port("filter")) + _TAIL,
               outputs=(Port("y"),), attrs=_attrs(3, "NDHWC", True), infer=_transpose_infer(3),
               kernel=_transpose_kernel(3), family=FAMILY,
               doc="3-D transposed convolution"))
