"""Converters of the Caffe layers without weights: activations, Eltwise, Concat/Slice/Split,
Softmax, Flatten/Reshape/Permute/Crop, Reduction, ArgMax, Interp and Upsample.  Shapes the IR
needs as constants are computed here from the bottoms' static shapes."""
from __future__ import annotations

import numpy as np

from ge.graph import DataType

from ._context import LayerCtx, refuse

__all__ = ["relu", "elu", "power", "exp_log", "eltwise", "concat", "slice_", "split",
           "softmax", "dropout", "flatten", "reshape", "permute", "crop", "reduction",
           "arg_max", "interp", "upsample"]


def relu(ctx: LayerCtx) -> list:
    slope = ctx.layer.relu_param.negative_slope
    if slope:
        return ctx.one("LeakyRelu", [ctx.ins[0]], {"negative_slope": float(slope)})
    return ctx.one("Relu", [ctx.ins[0]])


def elu(ctx: LayerCtx) -> list:
    return ctx.one("Elu", [ctx.ins[0]], {"alpha": float(ctx.layer.elu_param.alpha)})


def power(ctx: LayerCtx) -> list:
    """(shift + scale * x) ^ power as Muls / Adds / Pow; the identity as Muls(1)."""
    p = ctx.layer.power_param
    y = ctx.ins[0]
    if p.scale != 1 or (p.shift == 0 and p.power == 1):
        y = (ctx.emit("Muls", [y], {"value": float(p.scale)}, suffix="scale"), 0)
    if p.shift != 0:
        y = (ctx.emit("Adds", [y], {"value": float(p.shift)}, suffix="shift"), 0)
    if p.power != 1:
        exponent = ctx.const_node(np.float32(p.power), suffix="power")
        y = (ctx.emit("Pow", [y, exponent], suffix="pow"), 0)
    return [y]


def exp_log(ir_type: str, field: str):
    """Exp and Log carry Caffe's base / scale / shift as IR attributes (CANN's Exp, Log)."""
    def convert(ctx: LayerCtx) -> list:
        p = getattr(ctx.layer, field)
        if p.base != -1 and p.base <= 0:
            refuse(f"base {p.base} must be positive (or -1 for e)")
        return ctx.one(ir_type, [ctx.ins[0]], {"base": float(p.base), "scale": float(p.scale),
                                               "shift": float(p.shift)})
    convert.__name__ = f"convert_{ir_type}"
    return convert


# -- element-wise combinations ------------------------------------------------------------------

def _chain(ctx: LayerCtx, ir_type: str, edges: list) -> tuple:
    y = edges[0]
    for k, edge in enumerate(edges[1:]):
        y = (ctx.emit(ir_type, [y, edge], suffix=f"{ir_type}_{k}"), 0)
    return y


def eltwise(ctx: LayerCtx) -> list:
    p = ctx.layer.eltwise_param
    if len(ctx.ins) < 2:
        refuse("Eltwise needs at least two bottoms")
    coeff = list(p.coeff)
    if coeff and (p.operation != 1 or len(coeff) != len(ctx.ins)):
        refuse("coeff applies to SUM and needs one value per bottom")
    if p.operation == 0:
        return [_chain(ctx, "Mul", ctx.ins)]
    if p.operation == 2:
        return [_chain(ctx, "Maximum", ctx.ins)]
    ins = list(ctx.ins)
    for k, c in enumerate(coeff):
        if c != 1:
            ins[k] = (ctx.emit("Muls", [ins[k]], {"value": float(c)}, suffix=f"coeff_{k}"), 0)
    if len(ins) == 2:
        return ctx.one("Add", ins)
    return ctx.one("AccumulateNV2", ins, {"N": len(ins)})


# -- joining and splitting ----------------------------------------------------------------------

def concat(ctx: LayerCtx) -> list:
    p = ctx.layer.concat_param
    axis = p.concat_dim if p.HasField("concat_dim") and not p.HasField("axis") else p.axis
    axis = ctx.axis(axis)
    return ctx.one("ConcatD", ctx.ins, {"concat_dim": axis, "N": len(ctx.ins)})


def slice_(ctx: LayerCtx) -> list:
    p = ctx.layer.slice_param
    axis = p.slice_dim if p.HasField("slice_dim") and not p.HasField("axis") else p.axis
    axis = ctx.axis(axis)
    n_out, dim = len(ctx.layer.top), ctx.shape()[axis]
    points = list(p.slice_point)
    if points:
        if len(points) != n_out - 1 or points != sorted(points) or points[-1] >= dim:
            refuse(f"slice_point {points} must be {n_out - 1} increasing points below {dim}")
        sizes = np.diff([0] + points + [dim]).tolist()
    else:
        if dim % n_out:
            refuse(f"dim {dim} does not split evenly into {n_out} tops")
        sizes = [dim // n_out] * n_out
    size_splits = ctx.const_node(sizes, "int64", "size_splits")
    split_dim = ctx.const_node([axis], "int32", "split_dim")
    return ctx.one("SplitV", [ctx.ins[0], size_splits, split_dim], {"num_split": n_out},
                   num_outputs=n_out)


def split(ctx: LayerCtx) -> list:
    """Every top is the bottom itself: no IR node."""
    return [ctx.ins[0]] * len(ctx.layer.top)


def softmax(ctx: LayerCtx) -> list:
    axis = ctx.axis(ctx.layer.softmax_param.axis)
    return ctx.one("SoftmaxV2", [ctx.ins[0]], {"axes": [axis]})


def dropout(ctx: LayerCtx) -> list:
    ratio = float(ctx.layer.dropout_param.dropout_ratio)
    return ctx.one("Dropout", [ctx.ins[0]], {"dropout_ratio": ratio})


# -- shape manipulation -------------------------------------------------------------------------

def _reshape_to(ctx: LayerCtx, dims: list) -> list:
    shape = ctx.const_node([int(d) for d in dims], "int64", "shape")
    return ctx.one("Reshape", [ctx.ins[0], shape])


def flatten(ctx: LayerCtx) -> list:
    p = ctx.layer.flatten_param
    shape = ctx.shape()
    axis, end = ctx.axis(p.axis), ctx.axis(p.end_axis)
    if end < axis:
        refuse(f"end_axis {p.end_axis} comes before axis {p.axis}")
    return _reshape_to(ctx, shape[:axis] + [int(np.prod(shape[axis:end + 1]))]
                       + shape[end + 1:])


def caffe_reshape_dims(shape: list, spec: list, axis: int, num_axes: int) -> list:
    """Caffe's Reshape: `spec` replaces dims [axis, axis + num_axes) of `shape` (num_axes -1:
    to the end); 0 copies the bottom dim at that place, one -1 is inferred."""
    rank = len(shape)
    start = axis if axis >= 0 else rank + axis + 1
    end = rank if num_axes == -1 else start + num_axes
    if not 0 <= start <= end <= rank:
        refuse(f"axis {axis} / num_axes {num_axes} do not fit a rank-{rank} bottom")
    middle = []
    for k, d in enumerate(spec):
        if d == 0:
            if start + k >= rank:
                refuse(f"dim {k} is 0 (copy) but the bottom has no dim {start + k}")
            d = shape[start + k]
        middle.append(int(d))
    dims = shape[:start] + middle + shape[end:]
    total = int(np.prod(shape))
    if middle.count(-1) > 1:
        refuse("at most one dim may be -1")
    if -1 in dims:
        known = int(np.prod([d for d in dims if d != -1]))
        if known == 0 or total % known:
            refuse(f"shape {spec} cannot hold {total} elements")
        dims[dims.index(-1)] = total // known
    if int(np.prod(dims)) != total:
        refuse(f"shape {dims} does not hold the bottom's {total} elements")
    return dims


def reshape(ctx: LayerCtx) -> list:
    p = ctx.layer.reshape_param
    spec = [int(d) for d in p.shape.dim]
    return _reshape_to(ctx, caffe_reshape_dims(ctx.shape(), spec, p.axis, p.num_axes))


def permute(ctx: LayerCtx) -> list:
    """order lists the leading axes; the rest follow in their order (SSD's Permute)."""
    rank = ctx.rank()
    order = [int(o) for o in ctx.layer.permute_param.order]
    if len(set(order)) != len(order) or any(o >= rank for o in order):
        refuse(f"order {order} is not a permutation of a rank-{rank} bottom's axes")
    order += [a for a in range(rank) if a not in order]
    return ctx.one("TransposeD", [ctx.ins[0]], {"perm": order})


def crop(ctx: LayerCtx) -> list:
    """Bottom 0 cut to bottom 1's dims from `axis` on, at `offset` (one value, or one per
    cropped axis)."""
    p = ctx.layer.crop_param
    if len(ctx.ins) != 2:
        refuse("Crop takes two bottoms (the data and the reference shape)")
    shape, ref = ctx.shape(0), ctx.shape(1)
    axis = ctx.axis(p.axis)
    n = len(shape) - axis
    offsets = list(p.offset) or [0]
    if len(offsets) == 1:
        offsets = offsets * n
    if len(offsets) != n:
        refuse(f"offset takes 1 or {n} values")
    begin = [0] * axis + offsets
    size = shape[:axis] + ref[axis:]
    if any(b + s > d for b, s, d in zip(begin, size, shape)):
        refuse(f"crop {size} at {begin} does not fit the bottom {shape}")
    return ctx.one("Slice", [ctx.ins[0], ctx.const_node(begin, "int64", "offsets"),
                             ctx.const_node(size, "int64", "size")])


# -- reductions ---------------------------------------------------------------------------------

def reduction(ctx: LayerCtx) -> list:
    """SUM, ASUM, SUMSQ or MEAN over every axis from `axis` on, times coeff; the reduced axes
    are dropped (Caffe's top is shape[:axis])."""
    p = ctx.layer.reduction_param
    axis = ctx.axis(p.axis)
    x = ctx.ins[0]
    if p.operation == 2:
        x = (ctx.emit("Abs", [x], suffix="abs"), 0)
    elif p.operation == 3:
        x = (ctx.emit("Mul", [x, x], suffix="square"), 0)
    ir_type = "ReduceMean" if p.operation == 4 else "ReduceSum"
    axes = ctx.const_node(list(range(axis, ctx.rank())), "int64", "axes")
    y = (ctx.emit(ir_type, [x, axes], {"keep_dims": False}), 0)
    if p.coeff != 1:
        y = (ctx.emit("Muls", [y], {"value": float(p.coeff)}, suffix="coeff"), 0)
    return [y]


def arg_max(ctx: LayerCtx) -> list:
    """top_k 1 without out_max_val: the index as float (Caffe's top), the axis kept with size 1;
    without `axis` over each item's flattened values, top [N, 1, 1]."""
    p = ctx.layer.argmax_param
    if p.top_k != 1 or p.out_max_val:
        refuse("only top_k 1 without out_max_val is supported")
    shape = ctx.shape()
    x = ctx.ins[0]
    if p.HasField("axis"):
        axis = ctx.axis(p.axis)
        out = shape[:axis] + [1] + shape[axis + 1:]
    else:
        axis, out = 1, [shape[0], 1, 1]
        flat = ctx.const_node([shape[0], int(np.prod(shape[1:]))], "int64", "flat_shape")
        x = (ctx.emit("Reshape", [x, flat], suffix="flatten"), 0)
    dim = ctx.const_node(np.int32(axis), suffix="dimension")
    idx = (ctx.emit("ArgMaxV2", [x, dim], {"dtype": DataType.DT_INT32}), 0)
    idx = (ctx.emit("Cast", [idx], {"dst_type": int(DataType.DT_FLOAT)}, suffix="cast"), 0)
    dims = ctx.const_node(out, "int64", "shape")
    return [(ctx.emit("Reshape", [idx, dims], suffix="reshape"), 0)]


# -- resizing -----------------------------------------------------------------------------------

def _resize(ctx: LayerCtx, out_hw: list, mode: str, ctm: str) -> tuple:
    n, c = ctx.shape()[:2]
    sizes = ctx.const_node([n, c] + [int(v) for v in out_hw], "int64", "sizes")
    attrs = {"mode": mode, "coordinate_transformation_mode": ctm, "nearest_mode": "floor"}
    return (ctx.emit("Resize", [ctx.ins[0], None, None, sizes], attrs), 0)


def interp(ctx: LayerCtx) -> list:
    """PSPNet/DeepLab Interp: bilinear with aligned corners, the size from height/width or
    zoom_factor / shrink_factor."""
    p = ctx.layer.interp_param
    if ctx.rank() != 4 or p.pad_beg or p.pad_end:
        refuse("only 4-D bottoms without pad_beg / pad_end are supported")
    h, w = ctx.shape()[2:]
    if p.height and p.width:
        out = [p.height, p.width]
    elif p.HasField("zoom_factor") or p.HasField("shrink_factor"):
        if p.shrink_factor < 1 or p.zoom_factor < 1:
            refuse("zoom_factor and shrink_factor must be at least 1")
        out = [(h - 1) // p.shrink_factor + 1, (w - 1) // p.shrink_factor + 1]
        out = [d + (d - 1) * (p.zoom_factor - 1) for d in out]
    else:
        refuse("height and width, or zoom_factor / shrink_factor, are required")
    return [_resize(ctx, out, "linear", "align_corners")]


def upsample(ctx: LayerCtx) -> list:
    """CANN's Upsample (YOLO): each pixel repeated stride_h x stride_w times, times scale."""
    p = ctx.layer.upsample_param
    if ctx.rank() != 4:
        refuse("only 4-D bottoms are supported")
    sh, sw = (p.stride, p.stride) if p.HasField("stride") else (p.stride_h, p.stride_w)
    h, w = ctx.shape()[2:]
    y = _resize(ctx, [h * sh, w * sw], "nearest", "asymmetric")
    if p.scale != 1:
        y = (ctx.emit("Muls", [y], {"value": float(p.scale)}, suffix="scale"), 0)
    return [y]
