"""Padding, resizing, depth-to-space and scatters (spec/ir-ops.md §3.7 second half, §3.8):
PadV3, PadV2, MirrorPad, Resize, ResizeNearestNeighborV2, DepthToSpace, TensorScatterUpdate,
ScatterNdUpdate/Add/Max/Min.

Resize follows the ONNX Resize operator (onnxruntime behaviour for linear/cubic clamping);
ResizeNearestNeighborV2 follows TensorFlow and works on NCHW input (the layout the ONNX
parser gives it).
"""
from __future__ import annotations

import numpy as np

from ._common import (VT, AttrSpec, OpDef, Port, const_input, const_ints, dtype_of, fail,
                      norm_axis, register, shape_of)

FAMILY = "misc"


# ---- padding --------------------------------------------------------------------------------

def pad_pairs(flat, rank, contiguous, what="paddings"):
    flat = [int(v) for v in flat]
    if len(flat) != 2 * rank:
        raise ValueError(f"{what} has {len(flat)} values, expected {2 * rank}")
    if contiguous:
        return [(flat[2 * i], flat[2 * i + 1]) for i in range(rank)]
    return [(flat[i], flat[rank + i]) for i in range(rank)]


def pad_array(x, pairs, mode, value=0):
    """np.pad plus ONNX negative pads (crop)."""
    crop = tuple(slice(max(-b, 0), x.shape[i] - max(-e, 0)) for i, (b, e) in enumerate(pairs))
    x = x[crop]
    pos = [(max(b, 0), max(e, 0)) for b, e in pairs]
    mode = mode.lower()
    if mode == "constant":
        return np.pad(x, pos, mode="constant", constant_values=value)
    np_mode = {"reflect": "reflect", "edge": "edge", "symmetric": "symmetric",
               "wrap": "wrap"}.get(mode)
    if np_mode is None:
        raise ValueError(f"pad mode {mode!r} is not supported")
    return np.pad(x, pos, mode=np_mode)


def _pad_infer(contiguous_attr=None, fixed_contiguous=True):
    def infer(ctx):
        xs, dt = shape_of(ctx, 0), dtype_of(ctx, 0)
        flat = const_ints(ctx, 1, "paddings")
        if xs is None:
            return [(None, dt)]
        contiguous = bool(ctx.attrs[contiguous_attr]) if contiguous_attr else fixed_contiguous
        try:
            pairs = pad_pairs(flat, len(xs), contiguous)
        except ValueError as e:
            fail(ctx, str(e))
        out = tuple(-1 if d < 0 else d + b + e for d, (b, e) in zip(xs, pairs))
        if any(d < -1 for d in out):
            fail(ctx, f"paddings {flat} crop more than the input {list(xs)}")
        return [(out, dt)]
    return infer


def kernel_pad_v3(ins, attrs):
    x = ins[0]
    pairs = pad_pairs(ins[1].reshape(-1), x.ndim, bool(attrs["paddings_contiguous"]))
    value = 0 if len(ins) < 3 or ins[2] is None else ins[2].reshape(-1)[0]
    return [pad_array(x, pairs, attrs["mode"], value).astype(x.dtype)]


def kernel_pad_v2(ins, attrs):
    x = ins[0]
    pairs = pad_pairs(ins[1].reshape(-1), x.ndim, True)
    return [pad_array(x, pairs, "constant", ins[2].reshape(-1)[0]).astype(x.dtype)]


def kernel_mirror_pad(ins, attrs):
    x = ins[0]
    pairs = pad_pairs(ins[1].reshape(-1), x.ndim, True)
    return [pad_array(x, pairs, attrs["mode"])]


register(OpDef("PadV3", inputs=(Port("x"), Port("paddings"), Port("constant_values", "optional")),
               outputs=(Port("y"),),
               attrs=(AttrSpec("mode", VT.VT_STRING, "constant"),
                      AttrSpec("paddings_contiguous", VT.VT_BOOL, True)),
               infer=_pad_infer("paddings_contiguous"), kernel=kernel_pad_v3, family=FAMILY,
               doc="pad (constant/reflect/edge); contiguous = [b0,e0,b1,e1,...], else "
                   "[b0,b1,...,e0,e1,...]; negative pads crop"))
register(OpDef("PadV2", inputs=(Port("x"), Port("paddings"), Port("constant_values")),
               outputs=(Port("y"),), infer=_pad_infer(), kernel=kernel_pad_v2, family=FAMILY,
               doc="constant pad; paddings [rank, 2]"))
register(OpDef("MirrorPad", inputs=(Port("x"), Port("paddings")), outputs=(Port("y"),),
               attrs=(AttrSpec("mode", VT.VT_STRING),), infer=_pad_infer(),
               kernel=kernel_mirror_pad, family=FAMILY,
               doc="REFLECT or SYMMETRIC pad; paddings [rank, 2]"))


# ---- Resize (ONNX semantics) ----------------------------------------------------------------

def _source_coords(mode, out_n, in_n, scale, roi_start, roi_end):
    """Source coordinate of every output index, in float32 arithmetic as onnxruntime does
    (3 / 0.6f rounds to 5.0 there, which decides a floor)."""
    return _source_coords64(mode, out_n, in_n, np.float32(scale), np.float32(roi_start),
                            np.float32(roi_end), np.float32).astype(np.float64)


def _source_coords64(mode, out_n, in_n, scale, roi_start, roi_end, ft):
    x = np.arange(out_n, dtype=ft)
    in_n = ft(in_n)
    if mode == "half_pixel":
        return (x + 0.5) / scale - 0.5
    if mode == "half_pixel_symmetric":
        # the output centred on the input when scale * in_n is not a whole number
        offset = in_n / 2 * (1 - out_n / (scale * in_n))
        return offset + (x + 0.5) / scale - 0.5
    if mode == "pytorch_half_pixel":
        return (x + 0.5) / scale - 0.5 if out_n > 1 else np.zeros_like(x)
    if mode == "align_corners":  # the resized length is scale * in_n, not rounded (ONNX)
        length = scale * in_n
        return x * ((in_n - 1) / (length - 1)) if length != 1 else np.zeros_like(x)
    if mode == "asymmetric":
        return x / scale
    if mode == "tf_half_pixel_for_nn":
        return (x + 0.5) / scale
    if mode == "tf_crop_and_resize":
        if out_n > 1:
            return roi_start * (in_n - 1) + x * ((roi_end - roi_start) * (in_n - 1) / ft(out_n - 1))
        return np.full_like(x, 0.5 * (roi_start + roi_end) * (in_n - 1))
    raise ValueError(f"coordinate_transformation_mode {mode!r} is not supported")


_NEAREST = {
    "round_prefer_floor": lambda c: np.ceil(c - 0.5),
    "round_prefer_ceil": lambda c: np.floor(c + 0.5),
    "floor": np.floor,
    "ceil": np.ceil,
}


def _cubic_weights(t, a):
    """Weights of taps at offsets -1, 0, 1, 2 from floor(x) for fractional part t."""
    def w(d):
        d = np.abs(d)
        return np.where(d <= 1, ((a + 2) * d - (a + 3)) * d * d + 1,
                        np.where(d < 2, ((a * d - 5 * a) * d + 8 * a) * d - 4 * a, 0.0))
    return [w(1 + t), w(t), w(1 - t), w(2 - t)]


def _resize_axis_antialias(x, axis, coords, attrs, scale):
    """Downsampling with the interpolation kernel stretched by 1/scale (ONNX antialias): taps
    floor(c) + j for every j whose stretched distance may be inside the kernel's support,
    weights normalised to 1, indices clamped to the edge (or dropped with exclude_outside)."""
    n = x.shape[axis]
    support = 1.0 if attrs["mode"] == "linear" else 2.0
    start = int(np.floor(-support / scale)) + 1
    offsets = np.arange(start, 2 - start)
    base = np.floor(coords)
    dist = (offsets[None, :] - (coords - base)[:, None]) * scale
    if attrs["mode"] == "linear":
        weights = np.clip(1 - np.abs(dist), 0, None)
    else:
        a, d = attrs["cubic_coeff_a"], np.abs(dist)
        weights = np.where(d <= 1, ((a + 2) * d - (a + 3)) * d * d + 1,
                           np.where(d < 2, ((a * d - 5 * a) * d + 8 * a) * d - 4 * a, 0.0))
    weights = weights / weights.sum(axis=1, keepdims=True)
    taps = base[:, None] + offsets[None, :]
    if attrs["exclude_outside"]:
        weights = np.where((taps >= 0) & (taps <= n - 1), weights, 0.0)
        total = weights.sum(axis=1, keepdims=True)
        weights = weights / np.where(total == 0, 1.0, total)
    gathered = np.take(x, np.clip(taps, 0, n - 1).astype(np.int64), axis=axis)
    shape = (1,) * axis + weights.shape + (1,) * (x.ndim - axis - 1)
    return (gathered * weights.reshape(shape)).sum(axis=axis + 1)


def _resize_axis(x, axis, coords, attrs, scale=1.0):
    """Resample x along one axis at fractional source coordinates."""
    n = x.shape[axis]
    mode = attrs["mode"]

    def take(idx):
        return np.take(x, np.clip(idx, 0, n - 1).astype(np.int64), axis=axis)

    def along(v):
        shape = [1] * x.ndim
        shape[axis] = -1
        return v.reshape(shape)
    if mode == "nearest":
        rule = _NEAREST.get(attrs["nearest_mode"])
        if rule is None:
            raise ValueError(f"nearest_mode {attrs['nearest_mode']!r} is not supported")
        return take(rule(coords))
    if mode in ("linear", "cubic") and attrs.get("antialias") and scale < 1.0:
        return _resize_axis_antialias(x, axis, coords, attrs, scale)
    if mode == "linear":
        c = coords if attrs["coordinate_transformation_mode"] == "tf_crop_and_resize" \
            else np.clip(coords, 0, n - 1)
        x0 = np.floor(c)
        t = along(c - x0)
        return take(x0) * (1 - t) + take(x0 + 1) * t
    if mode == "cubic":
        x0 = np.floor(coords)
        weights = _cubic_weights(coords - x0, attrs["cubic_coeff_a"])
        taps = [x0 + k for k in (-1, 0, 1, 2)]
        if attrs["exclude_outside"]:
            weights = [np.where((tp >= 0) & (tp <= n - 1), w, 0.0) for w, tp in zip(weights, taps)]
            total = sum(weights)
            weights = [w / total for w in weights]
        return sum(take(tp) * along(w) for w, tp in zip(weights, taps))
    raise ValueError(f"Resize mode {mode!r} is not supported")


def _resize_plan(in_shape, scales, sizes):
    """(output sizes, scales) from the scales or sizes input (ONNX rules).  Both given (the
    parser computes sizes from scales): sizes give the output, scales the coordinates."""
    if sizes is not None and len(sizes):
        sizes = [int(s) for s in sizes]
        if scales is not None and len(scales) == len(sizes):
            return sizes, [float(s) for s in scales]
        return sizes, [s / d if d else 1.0 for s, d in zip(sizes, in_shape)]
    if scales is None or not len(scales):
        raise ValueError("Resize needs a non-empty scales or sizes input")
    scales = [float(s) for s in scales]
    return [int(np.floor(d * s)) for d, s in zip(in_shape, scales)], scales


def _opt(ins, i):
    return None if len(ins) <= i or ins[i] is None or ins[i].size == 0 else ins[i].reshape(-1)


def kernel_resize(ins, attrs):
    x = ins[0]
    outs, scales = _resize_plan(x.shape, _opt(ins, 2), _opt(ins, 3))
    roi = _opt(ins, 1)
    ctm = attrs["coordinate_transformation_mode"]
    y = x.astype(np.float64)
    outside = np.zeros(outs, dtype=bool) if ctm == "tf_crop_and_resize" else None
    for axis in range(x.ndim):
        if outs[axis] == x.shape[axis] and scales[axis] == 1.0 and ctm != "tf_crop_and_resize":
            continue
        rs, re_ = (float(roi[axis]), float(roi[axis + x.ndim])) if roi is not None \
            and len(roi) == 2 * x.ndim else (0.0, 1.0)
        coords = _source_coords(ctm, outs[axis], x.shape[axis], scales[axis], rs, re_)
        y = _resize_axis(y, axis, coords, attrs, scales[axis])
        if outside is not None:
            bad = (coords < 0) | (coords > x.shape[axis] - 1)
            shape = [1] * x.ndim
            shape[axis] = -1
            outside = outside | bad.reshape(shape)
    if outside is not None:
        y = np.where(outside, attrs["extrapolation_value"], y)
    if x.dtype.kind in "iu":
        y = np.round(y)
    return [y.astype(x.dtype)]


def infer_resize(ctx):
    xs, dt = shape_of(ctx, 0), dtype_of(ctx, 0)

    def opt(i, name):
        if len(ctx.ins) <= i or ctx.ins[i] is None:
            return None
        v = const_input(ctx, i, name).reshape(-1)
        return v if v.size else None
    sizes, scales = opt(3, "sizes"), None
    if sizes is None:
        scales = opt(2, "scales")
    if xs is None:
        return [(None, dt)]
    n = sizes if sizes is not None else scales
    if n is None:
        fail(ctx, "Resize needs a non-empty scales or sizes input")
    if len(n) != len(xs):
        fail(ctx, f"scales/sizes have {len(n)} values for an input of rank {len(xs)}")
    if sizes is not None:
        return [(tuple(int(s) for s in sizes), dt)]
    return [(tuple(-1 if d < 0 else int(np.floor(d * float(s))) for d, s in zip(xs, scales)), dt)]


register(OpDef("Resize", inputs=(Port("x"), Port("roi", "optional"), Port("scales", "optional"),
                                 Port("sizes", "optional")),
               outputs=(Port("y"),),
               attrs=(AttrSpec("coordinate_transformation_mode", VT.VT_STRING, "half_pixel"),
                      AttrSpec("cubic_coeff_a", VT.VT_FLOAT, -0.75),
                      AttrSpec("exclude_outside", VT.VT_INT, 0),
                      AttrSpec("extrapolation_value", VT.VT_FLOAT, 0.0),
                      AttrSpec("mode", VT.VT_STRING, "nearest"),
                      AttrSpec("nearest_mode", VT.VT_STRING, "round_prefer_floor")),
               infer=infer_resize, kernel=kernel_resize, family=FAMILY,
               doc="ONNX Resize (nearest/linear/cubic, every coordinate mode; extra Int attr "
                   "antialias)"))


def _tf_nearest_index(out_n, in_n, align, half):
    x = np.arange(out_n, dtype=np.float64)
    scale = (in_n - 1) / (out_n - 1) if (align and out_n > 1) else in_n / out_n
    if half:
        src = np.floor((x + 0.5) * scale) if not align else np.round((x + 0.5) * scale)
    else:
        src = np.floor(x * scale + 0.5) if align else np.floor(x * scale)
    return np.clip(src, 0, in_n - 1).astype(np.int64)


def kernel_resize_nn_v2(ins, attrs):
    x = ins[0]
    h, w = [int(v) for v in ins[1].reshape(-1)]
    a, hp = bool(attrs["align_corners"]), bool(attrs["half_pixel_centers"])
    y = np.take(x, _tf_nearest_index(h, x.shape[2], a, hp), axis=2)
    return [np.take(y, _tf_nearest_index(w, x.shape[3], a, hp), axis=3)]


def infer_resize_nn_v2(ctx):
    xs, dt = shape_of(ctx, 0), dtype_of(ctx, 0)
    size = const_ints(ctx, 1, "size")
    if len(size) != 2:
        fail(ctx, f"size must hold [H, W], got {size}")
    if xs is None:
        return [(None, dt)]
    if len(xs) != 4:
        fail(ctx, f"x must be 4-D NCHW, got {list(xs)}")
    return [((xs[0], xs[1], size[0], size[1]), dt)]


register(OpDef("ResizeNearestNeighborV2", inputs=(Port("x"), Port("size")), outputs=(Port("y"),),
               attrs=(AttrSpec("align_corners", VT.VT_BOOL, False),
                      AttrSpec("half_pixel_centers", VT.VT_BOOL, False),
                      AttrSpec("scales", VT.VT_LIST_FLOAT, [0.0, 0.0])),
               infer=infer_resize_nn_v2, kernel=kernel_resize_nn_v2, family=FAMILY,
               doc="TF-style nearest resize of NCHW x to size = [H, W]"))


# ---- DepthToSpace ---------------------------------------------------------------------------

def _d2s_nchw(x, b, mode):
    n, c, h, w = x.shape
    if mode.upper() == "DCR":
        y = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    else:
        y = x.reshape(n, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    return y.reshape(n, c // (b * b), h * b, w * b)


def kernel_depth_to_space(ins, attrs):
    x, b = ins[0], int(attrs["block_size"])
    if attrs["data_format"].upper() == "NHWC":
        return [_d2s_nchw(x.transpose(0, 3, 1, 2), b, attrs["mode"]).transpose(0, 2, 3, 1)]
    return [_d2s_nchw(x, b, attrs["mode"])]


def infer_depth_to_space(ctx):
    xs, dt = shape_of(ctx, 0), dtype_of(ctx, 0)
    b = int(ctx.attrs["block_size"])
    if xs is None:
        return [(None, dt)]
    if len(xs) != 4 or b < 1:
        fail(ctx, f"x must be 4-D and block_size >= 1, got {list(xs)}, {b}")
    nhwc = ctx.attrs["data_format"].upper() == "NHWC"
    n, c, h, w = (xs[0], xs[3], xs[1], xs[2]) if nhwc else xs
    if c >= 0 and c % (b * b):
        fail(ctx, f"channels {c} are not divisible by block_size^2 = {b * b}")
    c2 = -1 if c < 0 else c // (b * b)
    h2, w2 = (-1 if h < 0 else h * b), (-1 if w < 0 else w * b)
    return [((n, h2, w2, c2) if nhwc else (n, c2, h2, w2), dt)]


register(OpDef("DepthToSpace", inputs=(Port("x"),), outputs=(Port("y"),),
               attrs=(AttrSpec("block_size", VT.VT_INT), AttrSpec("mode", VT.VT_STRING, "DCR"),
                      AttrSpec("data_format", VT.VT_STRING, "NHWC")),
               infer=infer_depth_to_space, kernel=kernel_depth_to_space, family=FAMILY,
               doc="depth-to-space, DCR or CRD"))


# ---- scatters -------------------------------------------------------------------------------

def _scatter_kernel(reduce):
    def kernel(ins, attrs):
        x, idx, upd = ins[0], ins[1].astype(np.int64), ins[2]
        out = x.copy()
        k = idx.shape[-1]
        where = tuple(np.where(idx[..., j] < 0, idx[..., j] + x.shape[j], idx[..., j])
                      for j in range(k))
        upd = upd.astype(x.dtype)
        if reduce is None:
            out[where] = upd
        else:
            reduce.at(out, where, upd)
        return [out]
    return kernel


def infer_scatter(ctx):
    xs, is_, us = shape_of(ctx, 0), shape_of(ctx, 1), shape_of(ctx, 2)
    if xs is not None and is_ is not None and us is not None and is_[-1] >= 0:
        want = tuple(is_[:-1]) + tuple(xs[is_[-1]:])
        if any(a >= 0 and b >= 0 and a != b for a, b in zip(want, us)) or len(want) != len(us):
            fail(ctx, f"updates shape {list(us)} must be {list(want)}")
    return [(xs, dtype_of(ctx, 0))]


register(OpDef("TensorScatterUpdate", inputs=(Port("x"), Port("indices"), Port("updates")),
               outputs=(Port("y"),), infer=infer_scatter, kernel=_scatter_kernel(None),
               family=FAMILY, doc="copy of x with slices at indices replaced (ONNX ScatterND)"))

# ONNX ScatterElements reductions (CANN's ScatterElements `reduction` attribute)
_ELEMENT_REDUCTIONS = {"none": None, "add": np.add, "mul": np.multiply, "max": np.maximum,
                       "min": np.minimum}


def infer_scatter_elements(ctx):
    xs, is_, us = shape_of(ctx, 0), shape_of(ctx, 1), shape_of(ctx, 2)
    if xs is not None and is_ is not None:
        if len(xs) != len(is_):
            fail(ctx, f"data {list(xs)} and indices {list(is_)} must have the same rank")
        norm_axis(ctx, int(ctx.attrs["axis"]), len(xs))
    if is_ is not None and us is not None and \
            any(a >= 0 and b >= 0 and a != b for a, b in zip(is_, us)):
        fail(ctx, f"updates {list(us)} must have the shape of indices {list(is_)}")
    if ctx.attrs["reduction"] not in _ELEMENT_REDUCTIONS:
        fail(ctx, f"reduction {ctx.attrs['reduction']} is not one of "
                  f"{', '.join(_ELEMENT_REDUCTIONS)}")
    return [(xs, dtype_of(ctx, 0))]


def kernel_scatter_elements(ins, attrs):
    x, idx, upd = ins[0], ins[1].astype(np.int64), ins[2].astype(ins[0].dtype)
    axis = int(attrs["axis"]) % max(x.ndim, 1)
    where = list(np.indices(idx.shape, sparse=True))
    where[axis] = np.where(idx < 0, idx + x.shape[axis], idx)
    out, reduce = x.copy(), _ELEMENT_REDUCTIONS[attrs["reduction"]]
    if reduce is None:
        out[tuple(where)] = upd
    else:
        reduce.at(out, tuple(where), upd)
    return [out]


register(OpDef("ScatterElements", inputs=(Port("data"), Port("indices"), Port("updates")),
               outputs=(Port("y"),), attrs=(AttrSpec("axis", VT.VT_INT, 0),
                                            AttrSpec("reduction", VT.VT_STRING, "none")),
               infer=infer_scatter_elements, kernel=kernel_scatter_elements, family=FAMILY,
               doc="copy of data with updates written (or reduced) at indices along axis"))

for _name, _reduce in (("ScatterNdUpdate", None), ("ScatterNdAdd", np.add),
                       ("ScatterNdMax", np.maximum), ("ScatterNdMin", np.minimum)):
    register(OpDef(_name, inputs=(Port("var"), Port("indices"), Port("updates")),
                   outputs=(Port("var"),), attrs=(AttrSpec("use_locking", VT.VT_BOOL, False),),
                   infer=infer_scatter, kernel=_scatter_kernel(_reduce), family=FAMILY,
                   doc=f"{_name}: scatter updates into var"))
