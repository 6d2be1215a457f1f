"""Converters of the Caffe layers with weights or windows: Convolution, Deconvolution, Pooling,
InnerProduct, BatchNorm, Scale, Bias, PReLU, LRN, Normalize, PriorBox and the detection output.
Each is `(LayerCtx) -> [Edge per top]`; parameters are read with proto2 presence, so a field the
prototxt leaves out takes Caffe's default."""
from __future__ import annotations

import numpy as np

from ._context import NCHW, LayerCtx, refuse

__all__ = ["convolution", "deconvolution", "pooling", "inner_product", "batch_norm", "scale",
           "bias", "prelu", "lrn", "normalize", "prior_box", "detection_output"]


# -- convolution geometry (all spellings: repeated kernel_size/pad/stride/dilation, _h/_w) ------

def _hw(p, name: str, default: int) -> list[int]:
    """[h, w] of a ConvolutionParameter field: kernel_h/kernel_w win over kernel_size."""
    if p.HasField(f"{name}_h") or p.HasField(f"{name}_w"):
        if not (p.HasField(f"{name}_h") and p.HasField(f"{name}_w")):
            refuse(f"{name}_h and {name}_w must be given together")
        return [getattr(p, f"{name}_h"), getattr(p, f"{name}_w")]
    field = "kernel_size" if name == "kernel" else name
    values = list(getattr(p, field))
    if not values:
        if default < 0:
            refuse("kernel_size (or kernel_h and kernel_w) is required")
        return [default, default]
    if len(values) == 1:
        return values * 2
    if len(values) == 2:
        return values
    refuse(f"{field} has {len(values)} values; 2-D convolution takes 1 or 2")


def _conv_geometry(ctx: LayerCtx) -> tuple:
    p = ctx.layer.convolution_param
    if ctx.rank() != 4 or p.axis not in (1, -3):
        refuse("only 2-D convolution over NCHW bottoms (axis 1) is supported")
    kernel = _hw(p, "kernel", -1)
    stride = _hw(p, "stride", 1)
    pad = _hw(p, "pad", 0)
    dilation = list(p.dilation) or [1]
    dilation = dilation * 2 if len(dilation) == 1 else dilation
    if not p.HasField("num_output"):
        refuse("num_output is required")
    return p, kernel, stride, pad, dilation


def _conv_attrs(stride, pad, dilation, group) -> dict:
    return {"strides": [1, 1] + stride, "pads": [pad[0], pad[0], pad[1], pad[1]],
            "dilations": [1, 1] + dilation, "groups": group, "data_format": "NCHW"}


def _bias(ctx: LayerCtx, i: int, n: int, present: bool):
    return ctx.weight(i, [n], "bias") if present else None


def _groups(ctx: LayerCtx, p) -> tuple[int, int]:
    c_in, group = ctx.shape()[1], p.group
    if group < 1 or c_in % group or p.num_output % group:
        refuse(f"group {group} must divide the input channels {c_in} and num_output "
               f"{p.num_output}")
    return c_in, group


def convolution(ctx: LayerCtx) -> list:
    p, kernel, stride, pad, dilation = _conv_geometry(ctx)
    c_in, group = _groups(ctx, p)
    w = ctx.weight(0, [p.num_output, c_in // group] + kernel, "weight")
    b = _bias(ctx, 1, p.num_output, p.bias_term)
    return ctx.one("Conv2D", [ctx.ins[0], w, b], _conv_attrs(stride, pad, dilation, group),
                   fmt=NCHW)


def deconvolution(ctx: LayerCtx) -> list:
    p, kernel, stride, pad, dilation = _conv_geometry(ctx)
    c_in, group = _groups(ctx, p)
    w = ctx.weight(0, [c_in, p.num_output // group] + kernel, "weight")
    b = _bias(ctx, 1, p.num_output, p.bias_term)
    size = ctx.const_node([0, 0, 0, 0], "int64", "input_size")
    attrs = dict(_conv_attrs(stride, pad, dilation, group), output_padding=[0, 0, 0, 0])
    return ctx.one("Conv2DTranspose", [size, ctx.ins[0], w, b], attrs, fmt=NCHW)


# -- pooling ------------------------------------------------------------------------------------

def _pool_hw(p, name: str, default: int) -> list[int]:
    if p.HasField(f"{name}_h") or p.HasField(f"{name}_w"):
        return [getattr(p, f"{name}_h"), getattr(p, f"{name}_w")]
    field = "kernel_size" if name == "kernel" else name
    if name == "kernel" and not p.HasField(field):
        return [default, default]
    return [getattr(p, field)] * 2


def pooling(ctx: LayerCtx) -> list:
    """Caffe rounds the output size up (ceil) unless round_mode is FLOOR (or ceil_mode false);
    AVE divides by the window clipped to the padded input (count_include_pad)."""
    p = ctx.layer.pooling_param
    if ctx.rank() != 4:
        refuse("only 4-D (NCHW) bottoms are supported")
    if p.pool == 2:
        refuse("STOCHASTIC pooling is a training-time method")
    h, w = ctx.shape()[2:]
    if p.global_pooling:
        kernel, stride, pad = [h, w], [1, 1], [0, 0]
    else:
        kernel = _pool_hw(p, "kernel", -1)
        if kernel[0] < 0:
            refuse("kernel_size (or kernel_h and kernel_w) is required")
        stride, pad = _pool_hw(p, "stride", 1), _pool_hw(p, "pad", 0)
    ceil = p.round_mode == 0 and p.ceil_mode
    attrs = {"ksize": [1, 1] + kernel, "strides": [1, 1] + stride,
             "pads": [pad[0], pad[0], pad[1], pad[1]], "padding_mode": "CALCULATED",
             "data_format": "NCHW", "global_pooling": bool(p.global_pooling), "ceil_mode": ceil}
    if p.pool == 0:
        return ctx.one("MaxPoolV3", [ctx.ins[0]], attrs, fmt=NCHW)
    return ctx.one("AvgPoolV2", [ctx.ins[0]], dict(attrs, exclusive=False), fmt=NCHW)


# -- fully connected ----------------------------------------------------------------------------

def inner_product(ctx: LayerCtx) -> list:
    """Flatten from `axis` (Reshape), MatMulV2 with the [N, K] weight (transposed unless
    `transpose`), back to shape[:axis] + [N] when axis > 1."""
    p = ctx.layer.inner_product_param
    shape = ctx.shape()
    axis = ctx.axis(p.axis)
    lead, k = int(np.prod(shape[:axis])), int(np.prod(shape[axis:]))
    n = p.num_output
    w = ctx.weight(0, [k, n] if p.transpose else [n, k], "weight")
    b = _bias(ctx, 1, n, p.bias_term)
    x = ctx.ins[0]
    if len(shape) != 2 or axis != 1:
        x = _reshape(ctx, x, [lead, k], "flatten")
    y = (ctx.emit("MatMulV2", [x, w, b], {"transpose_x2": not p.transpose}), 0)
    if axis != 1:
        y = _reshape(ctx, y, shape[:axis] + [n], "reshape")
    return [y]


def _reshape(ctx: LayerCtx, edge, dims: list, suffix: str):
    shape = ctx.const_node(dims, "int64", f"{suffix}_shape")
    return (ctx.emit("Reshape", [edge, shape], suffix=suffix), 0)


# -- normalisation and per-channel affine ---------------------------------------------------------

def batch_norm(ctx: LayerCtx) -> list:
    """blobs: mean, variance, scale factor; the statistics are divided by the factor (0 → 0)."""
    p = ctx.layer.batch_norm_param
    c = ctx.shape()[1]
    factor = float(ctx.blob(2, [1])[0])
    inv = 0.0 if factor == 0 else 1.0 / factor
    mean = ctx.const_node(ctx.blob(0, [c]) * np.float32(inv), suffix="mean")
    var = ctx.const_node(ctx.blob(1, [c]) * np.float32(inv), suffix="variance")
    one = ctx.const_node(np.ones(c, np.float32), suffix="scale")
    zero = ctx.const_node(np.zeros(c, np.float32), suffix="offset")
    training = p.HasField("use_global_stats") and not p.use_global_stats
    attrs = {"epsilon": float(p.eps), "data_format": "NCHW", "is_training": training}
    node = ctx.emit("BatchNorm", [ctx.ins[0], one, zero, mean, var], attrs, num_outputs=5,
                    fmt=NCHW)
    return [(node, 0)]


def _affine_shape(ctx: LayerCtx, axis: int, num_axes: int, second_bottom: bool) -> list:
    """Dims of the scale/bias operand and its broadcast form (trailing 1s) over bottom 0."""
    shape = ctx.shape()
    axis = ctx.axis(axis)
    if second_bottom:
        dims = ctx.shape(1)
    else:
        end = len(shape) if num_axes == -1 else axis + num_axes
        dims = shape[axis:end]
    if shape[axis:axis + len(dims)] != dims:
        refuse(f"the operand shape {dims} does not match bottom dims {shape} from axis {axis}")
    return dims, dims + [1] * (len(shape) - axis - len(dims))


def _operand(ctx: LayerCtx, dims: list, bcast: list, blob_index: int, suffix: str):
    """Blob `blob_index` (or bottom 1 when blob_index < 0) shaped to broadcast over bottom 0."""
    if blob_index < 0:
        return _reshape(ctx, ctx.ins[1], bcast, suffix) if bcast != dims else ctx.ins[1]
    return ctx.const_node(ctx.blob(blob_index, dims).reshape(bcast), suffix=suffix)


def scale(ctx: LayerCtx) -> list:
    """Per-channel scale (+ bias) of a 4-D bottom from blobs: one BatchNorm with mean 0,
    variance 1 and epsilon 0 (the same numbers; one IR node per layer as CANN's Scale op, and
    the compiler folds it into a preceding convolution); otherwise Mul (+ Add)."""
    p = ctx.layer.scale_param
    two = len(ctx.ins) > 1
    dims, bcast = _affine_shape(ctx, p.axis, p.num_axes, two)
    if not two and ctx.rank() == 4 and ctx.axis(p.axis) == 1 and len(dims) == 1:
        c = dims[0]
        gamma = ctx.weight(0, [c], "scale")
        beta = ctx.weight(1, [c], "offset") if p.bias_term else \
            ctx.const_node(np.zeros(c, np.float32), suffix="offset")
        mean = ctx.const_node(np.zeros(c, np.float32), suffix="mean")
        var = ctx.const_node(np.ones(c, np.float32), suffix="variance")
        attrs = {"epsilon": 0.0, "data_format": "NCHW", "is_training": False}
        node = ctx.emit("BatchNorm", [ctx.ins[0], gamma, beta, mean, var], attrs,
                        num_outputs=5, fmt=NCHW)
        return [(node, 0)]
    s = _operand(ctx, dims, bcast, -1 if two else 0, "scale")
    y = (ctx.emit("Mul", [ctx.ins[0], s]), 0)
    if p.bias_term:
        b = _operand(ctx, dims, bcast, 0 if two else 1, "bias")
        y = (ctx.emit("Add", [y, b]), 0)
    return [y]


def bias(ctx: LayerCtx) -> list:
    p = ctx.layer.bias_param
    two = len(ctx.ins) > 1
    dims, bcast = _affine_shape(ctx, p.axis, p.num_axes, two)
    b = _operand(ctx, dims, bcast, -1 if two else 0, "bias")
    return ctx.one("Add", [ctx.ins[0], b])


def prelu(ctx: LayerCtx) -> list:
    c = 1 if ctx.layer.prelu_param.channel_shared else ctx.shape()[1]
    slope = ctx.blob(0, [c])
    bcast = [c] + [1] * (ctx.rank() - 2)
    return ctx.one("PRelu", [ctx.ins[0], ctx.const_node(slope.reshape(bcast), suffix="weight")])


def lrn(ctx: LayerCtx) -> list:
    """Caffe divides alpha by the window size (local_size, or local_size² within a channel);
    the IR op does not (TensorFlow convention), so the parser does."""
    p = ctx.layer.lrn_param
    if p.local_size % 2 == 0:
        refuse(f"local_size {p.local_size} must be odd")
    within = p.norm_region == 1
    window = p.local_size ** 2 if within else p.local_size
    attrs = {"depth_radius": (p.local_size - 1) // 2, "alpha": p.alpha / window,
             "beta": float(p.beta), "bias": float(p.k),
             "norm_region": "WITHIN_CHANNEL" if within else "ACROSS_CHANNELS"}
    return ctx.one("LRN", [ctx.ins[0]], attrs, fmt=NCHW)


def normalize(ctx: LayerCtx) -> list:
    """SSD's L2 normalisation: x / sqrt(sum(x²) + eps) * scale, the sum over C,H,W
    (across_spatial) or over C at each position; scale one value or one per channel."""
    p = ctx.layer.norm_param
    if ctx.rank() != 4:
        refuse("only 4-D (NCHW) bottoms are supported")
    c = 1 if p.channel_shared else ctx.shape()[1]
    x = ctx.ins[0]
    sq = (ctx.emit("Mul", [x, x], suffix="square"), 0)
    axes = ctx.const_node([1, 2, 3] if p.across_spatial else [1], "int64", "axes")
    total = (ctx.emit("ReduceSum", [sq, axes], {"keep_dims": True}, suffix="sum"), 0)
    total = (ctx.emit("Adds", [total], {"value": float(p.eps)}, suffix="eps"), 0)
    norm = (ctx.emit("Sqrt", [total], suffix="norm"), 0)
    y = (ctx.emit("RealDiv", [x, norm], suffix="div"), 0)
    s = ctx.const_node(ctx.blob(0, [c]).reshape([c, 1, 1]), suffix="scale")
    return [(ctx.emit("Mul", [y, s]), 0)]


# -- SSD family ---------------------------------------------------------------------------------

def prior_box(ctx: LayerCtx) -> list:
    p = ctx.layer.prior_box_param
    if len(ctx.ins) != 2:
        refuse("PriorBox takes the feature map and the image as bottoms")
    if not p.min_size:
        refuse("min_size is required")
    if p.max_size and len(p.max_size) != len(p.min_size):
        refuse("max_size must have as many values as min_size")
    variance = list(p.variance) or [0.1]
    if len(variance) not in (1, 4):
        refuse("variance takes 1 or 4 values")
    img_h = p.img_h if p.HasField("img_h") else p.img_size
    img_w = p.img_w if p.HasField("img_w") else p.img_size
    step_h = p.step_h if p.HasField("step_h") else p.step
    step_w = p.step_w if p.HasField("step_w") else p.step
    attrs = {"min_size": list(p.min_size), "max_size": list(p.max_size),
             "aspect_ratio": list(p.aspect_ratio), "flip": bool(p.flip), "clip": bool(p.clip),
             "variance": variance, "img_h": int(img_h), "img_w": int(img_w),
             "step_h": float(step_h), "step_w": float(step_w), "offset": float(p.offset)}
    return ctx.one("PriorBox", ctx.ins, attrs)


def detection_output(ctx: LayerCtx) -> list:
    """SSDDetectionOutput (the explicit type CANN asks for; DetectionOutput maps here through
    --op_name_map): bottoms loc, conf, priors; Caffe's [1, 1, keep_top_k, 7] result."""
    p = ctx.layer.detection_output_param
    if len(ctx.ins) != 3:
        refuse("the detection output takes loc, conf and prior bottoms")
    if not p.HasField("num_classes"):
        refuse("num_classes is required")
    nms = p.nms_param
    top_k = nms.top_k if nms.HasField("top_k") else -1
    keep = p.keep_top_k if p.HasField("keep_top_k") else -1
    if keep <= 0:
        refuse("keep_top_k must be given (the output size is keep_top_k rows)")
    attrs = {"num_classes": int(p.num_classes), "share_location": bool(p.share_location),
             "background_label_id": int(p.background_label_id),
             "iou_threshold": float(nms.nms_threshold), "top_k": int(top_k),
             "eta": float(nms.eta), "variance_encoded_in_target":
             bool(p.variance_encoded_in_target), "code_type": int(p.code_type),
             "keep_top_k": int(keep), "confidence_threshold": float(p.confidence_threshold)}
    return ctx.one("SSDDetectionOutput", ctx.ins, attrs)
