"""Converters for convolution, matmul, normalization, pooling and attribute-carrying activations
(spec/ir-ops.md §2.1, §2.2).  Each is a plain function of a NodeCtx; the table in _mappings.py
says which ONNX key uses which.  Layouts: ONNX pads [x1_b, x2_b, x1_e, x2_e] become IR pads
[x1_b, x1_e, x2_b, x2_e] (top, bottom, left, right); strides/dilations gain leading [1, 1].
"""
from __future__ import annotations

import numpy as np

from ge.graph import DataType, Format

from ._context import NodeCtx, refuse

NCHW, NCDHW = Format.FORMAT_NCHW, Format.FORMAT_NCDHW


# -- shared helpers -----------------------------------------------------------------------------

def spatial_rank(ctx: NodeCtx, weight_input: int | None = 1) -> int:
    """Number of spatial dims: from kernel_shape, strides, dilations, pads, else the weight."""
    for name, per in (("kernel_shape", 1), ("strides", 1), ("dilations", 1), ("pads", 2)):
        value = ctx.ints(name)
        if value:
            return len(value) // per
    if weight_input is not None:
        rank = ctx.input_rank(weight_input)
        if rank is not None and rank >= 3:
            return rank - 2
    refuse("the spatial rank cannot be determined (no kernel_shape, strides, dilations or "
           "pads attribute and no constant weight)")


def pairs_to_ir(pads: list[int], n: int) -> list[int]:
    """ONNX [b0, b1, .., e0, e1, ..] → IR interleaved [b0, e0, b1, e1, ..]."""
    if len(pads) != 2 * n:
        refuse(f"pads {pads} must have {2 * n} values")
    out: list[int] = []
    for i in range(n):
        out += [pads[i], pads[n + i]]
    return out


def lead_ones(values: list[int]) -> list[int]:
    return [1, 1] + list(values)


def padding_mode(ctx: NodeCtx) -> str:
    auto_pad = ctx.attr("auto_pad", "NOTSET")
    modes = {"NOTSET": "CALCULATED", "SAME_UPPER": "SAME", "SAME_LOWER": "SAME",
             "VALID": "VALID"}
    if auto_pad not in modes:
        refuse(f"auto_pad {auto_pad} is not one of {', '.join(modes)}")
    return modes[auto_pad]


def unsqueeze(ctx: NodeCtx, edge, axis: int, suffix: str):
    return (ctx.emit("Unsqueeze", [edge], {"axes": [axis]}, suffix=suffix), 0)


def squeeze(ctx: NodeCtx, edge, axis: int, suffix: str):
    return (ctx.emit("Squeeze", [edge], {"axis": [axis]}, suffix=suffix), 0)


# -- convolution --------------------------------------------------------------------------------

def _conv_attrs(ctx: NodeCtx, n: int) -> dict:
    strides = ctx.ints("strides") or [1] * n
    dilations = ctx.ints("dilations") or [1] * n
    pads = ctx.ints("pads") or [0] * (2 * n)
    if len(strides) != n or len(dilations) != n:
        refuse(f"strides {strides} / dilations {dilations} must have {n} values")
    return {"strides": lead_ones(strides), "pads": pairs_to_ir(pads, n),
            "dilations": lead_ones(dilations), "groups": int(ctx.attr("group", 1))}


def conv(ctx: NodeCtx) -> list:
    if len(ctx.ins) not in (2, 3):
        refuse(f"Conv takes 2 or 3 inputs, got {len(ctx.ins)}")
    n = spatial_rank(ctx)
    auto_pad = ctx.attr("auto_pad", "NOTSET")
    x, w = ctx.ins[0], ctx.ins[1]
    bias = ctx.input(2)
    if n == 2:
        attrs = dict(_conv_attrs(ctx, 2), data_format="NCHW", auto_pad=auto_pad)
        return ctx.one("Conv2D", [x, w, bias], attrs, fmt=NCHW)
    if n == 1:
        attrs = _conv_attrs(ctx, 1)
        attrs = {"strides": [1, 1, 1, attrs["strides"][2]], "pads": [0, 0] + attrs["pads"],
                 "dilations": [1, 1, 1, attrs["dilations"][2]], "groups": attrs["groups"],
                 "data_format": "NCHW", "auto_pad": auto_pad}
        x4 = unsqueeze(ctx, x, 2, "Unsqueeze_x")
        w4 = unsqueeze(ctx, w, 2, "Unsqueeze_w")
        y = ctx.emit("Conv2D", [x4, w4, bias], attrs, suffix="Conv2D", fmt=NCHW)
        return [squeeze(ctx, (y, 0), 2, "Squeeze")]
    if n == 3:
        if auto_pad not in ("NOTSET", "VALID"):
            refuse(f"auto_pad {auto_pad} is not supported for 3-D convolution")
        attrs = dict(_conv_attrs(ctx, 3), data_format="NCDHW", auto_pad=auto_pad)
        return ctx.one("Conv3D", [x, w, bias], attrs, fmt=NCDHW)
    refuse(f"{n}-D convolution is not supported (1-D, 2-D and 3-D are)")


def conv_transpose(ctx: NodeCtx) -> list:
    kernel = ctx.ints("kernel_shape")
    if not kernel:  # optional in ONNX (from W's shape); CANN requires it
        n = spatial_rank(ctx)
    else:
        n = len(kernel)
    strides = ctx.ints("strides") or [1] * n
    if len(strides) == 1 and n > 1:
        strides = strides * n
    dilations = ctx.ints("dilations") or [1] * n
    pads = ctx.ints("pads") or [0] * (2 * n)
    out_pad = ctx.ints("output_padding") or [0] * n
    attrs = {"groups": int(ctx.attr("group", 1))}
    extra = {"auto_pad": ctx.attr("auto_pad", "SAME_LOWER" if ctx.has_attr("output_shape")
                                  else "NOTSET")}
    if ctx.has_attr("output_shape"):
        extra["output_shape"] = ctx.ints("output_shape")[-n:]
    x, w, bias = ctx.ins[0], ctx.ins[1], ctx.input(2)
    if n in (1, 2):
        if n == 1:
            strides, dilations, out_pad = [1] + strides, [1] + dilations, [0] + out_pad
            pads = [0, pads[0], 0, pads[1]]
            x, w = unsqueeze(ctx, x, 2, "Unsqueeze_x"), unsqueeze(ctx, w, 2, "Unsqueeze_w")
        attrs.update(strides=lead_ones(strides), pads=pairs_to_ir(pads, 2),
                     dilations=lead_ones(dilations), output_padding=[0, 0] + out_pad,
                     data_format="NCHW", **extra)
        size = ctx.const_node([0, 0, 0, 0], "int64", "input_size")
        y = ctx.emit("Conv2DTranspose", [size, x, w, bias], attrs, suffix="Conv2DTranspose",
                     fmt=NCHW)
        return [(y, 0)] if n == 2 else [squeeze(ctx, (y, 0), 2, "Squeeze")]
    if n == 3:
        attrs.update(strides=lead_ones(strides), pads=pairs_to_ir(pads, 3),
                     dilations=lead_ones(dilations), output_padding=[0, 0] + out_pad,
                     data_format="NCDHW", **extra)
        size = ctx.const_node([0] * 5, "int64", "input_size")
        return [(ctx.emit("Conv3DTranspose", [size, x, w, bias], attrs,
                          suffix="Conv3DTranspose", fmt=NCDHW), 0)]
    refuse(f"{n}-D transposed convolution is not supported")


# -- matmul -------------------------------------------------------------------------------------

def gemm(ctx: NodeCtx) -> list:
    alpha, beta = float(ctx.attr("alpha", 1.0)), float(ctx.attr("beta", 1.0))
    mm_attrs = {"transpose_x1": bool(ctx.attr("transA", 0)),
                "transpose_x2": bool(ctx.attr("transB", 0))}
    mm = (ctx.emit("MatMulV2", [ctx.ins[0], ctx.ins[1]], mm_attrs, suffix="MatMulV2"), 0)
    c = ctx.input(2)
    if c is None:
        # CANN ignores alpha here; we honour it so the numbers match ONNX (docs/parser.md).
        if alpha != 1.0:
            return [(ctx.emit("Muls", [mm], {"value": alpha}, suffix="Muls_alpha"), 0)]
        return [mm]
    if alpha != 1.0 or beta != 1.0:
        mm = (ctx.emit("Muls", [mm], {"value": alpha}, suffix="Muls_alpha"), 0)
        c = (ctx.emit("Muls", [c], {"value": beta}, suffix="Muls_beta"), 0)
    return [(ctx.emit("Add", [mm, c], suffix="Add"), 0)]


def matmul(ctx: NodeCtx) -> list:
    attrs = {"adj_x1": bool(ctx.attr("transA", 0)), "adj_x2": bool(ctx.attr("transB", 0))}
    node = ctx.emit("BatchMatMulV2", [ctx.ins[0], ctx.ins[1]], attrs)
    node.out_desc(0).set_format(NCHW).set_origin_format(NCHW)
    return [(node, 0)]


# -- normalization ------------------------------------------------------------------------------

def batch_norm(ctx: NodeCtx) -> list:
    if len(ctx.ins) != 5:
        refuse(f"BatchNormalization takes 5 inputs, got {len(ctx.ins)}")
    training = int(ctx.attr("training_mode", 0)) == 1
    attrs = {"epsilon": float(ctx.attr("epsilon", 1e-5)), "data_format": "NCHW",
             "is_training": training, "onnx": "onnx"}
    if training:  # running stats = momentum * input + (1 - momentum) * batch (CANN: ignored)
        attrs["exponential_avg_factor"] = 1.0 - float(ctx.attr("momentum", 0.9))
    return ctx.one("BatchNorm", ctx.ins, attrs, num_outputs=6)


def instance_norm(ctx: NodeCtx) -> list:
    attrs = {"epsilon": float(ctx.attr("epsilon", 1e-5)), "data_format": "NCHW"}
    return ctx.one("InstanceNorm", ctx.ins, attrs, num_outputs=3)[:1]


def layer_norm(ctx: NodeCtx) -> list:
    axis, eps = int(ctx.attr("axis", -1)), float(ctx.attr("epsilon", 1e-5))
    x = ctx.ins[0]
    shape = (ctx.emit("Shape", [x], {"dtype": DataType.DT_INT32}, suffix="Shape"), 0)
    gamma = (ctx.emit("BroadcastTo", [ctx.ins[1], shape], suffix="BroadcastTo_scale"), 0)
    beta_in = ctx.input(2) or ctx.const_node(0.0, "float32", "zero_bias")
    beta = (ctx.emit("BroadcastTo", [beta_in, shape], suffix="BroadcastTo_bias"), 0)
    ln = ctx.emit("LayerNorm", [x, gamma, beta],
                  {"begin_norm_axis": axis, "begin_params_axis": 0, "epsilon": eps},
                  suffix="LayerNorm", num_outputs=3)
    outs = [(ln, 0), None, None]
    stash = int(ctx.attr("stash_type", 1)) != 0
    if len(ctx.used) > 1 and ctx.used[1]:
        outs[1] = (ln, 1)
        if stash:
            outs[1] = (ctx.emit("Cast", [outs[1]], {"dst_type": int(DataType.DT_FLOAT)},
                                suffix="Cast_mean"), 0)
    if len(ctx.used) > 2 and ctx.used[2]:
        var_eps = (ctx.emit("Adds", [(ln, 2)], {"value": eps}, suffix="Adds"), 0)
        outs[2] = (ctx.emit("Rsqrt", [var_eps], suffix="Rsqrt"), 0)
        if stash:
            outs[2] = (ctx.emit("Cast", [outs[2]], {"dst_type": int(DataType.DT_FLOAT)},
                                suffix="Cast_inv_std"), 0)
    return outs


def lrn(ctx: NodeCtx) -> list:
    """Not in CANN's ONNX tables: ONNX LRN → IR LRN (TF convention, alpha not divided)."""
    size = int(ctx.attr("size", 0))
    if size < 1 or size % 2 == 0:
        refuse(f"LRN size {size} must be a positive odd number")
    attrs = {"depth_radius": (size - 1) // 2, "bias": float(ctx.attr("bias", 1.0)),
             "alpha": float(ctx.attr("alpha", 1e-4)) / size,
             "beta": float(ctx.attr("beta", 0.75)), "norm_region": "ACROSS_CHANNELS"}
    return ctx.one("LRN", ctx.ins, attrs, fmt=NCHW)


# -- pooling ------------------------------------------------------------------------------------

def _pool_common(ctx: NodeCtx, n: int) -> tuple[list, list, list]:
    kernel = ctx.ints("kernel_shape")
    if not kernel or len(kernel) != n:
        refuse("kernel_shape is required")
    strides = ctx.ints("strides") or [1] * n
    pads = ctx.ints("pads") or [0] * (2 * n)
    return kernel, strides, pairs_to_ir(pads, n)


def _pool_extras(ctx: NodeCtx, n: int) -> dict:
    """Extra attrs CANN's pooling IR lacks (ours, docs/parser.md): `dilation` when an ONNX
    dilation is not 1 (one value per NC(D)HW dim), `auto_pad` = SAME_LOWER (padding_mode SAME
    alone means SAME_UPPER)."""
    extra = {}
    dilations = ctx.ints("dilations") or [1] * n
    if len(dilations) != n:
        refuse(f"dilations {dilations} must have {n} values")
    if any(d != 1 for d in dilations):
        extra["dilation"] = lead_ones(dilations) if n > 1 else [1, 1, dilations[0], 1]
    if ctx.attr("auto_pad", "NOTSET") == "SAME_LOWER":
        extra["auto_pad"] = "SAME_LOWER"
    return extra


def _pool_2d(ctx: NodeCtx, ir_type: str, extra: dict) -> list:
    n = spatial_rank(ctx, weight_input=None)
    kernel, strides, pads = _pool_common(ctx, n)
    extra = dict(extra, **_pool_extras(ctx, n))
    if n == 2:
        attrs = dict(ksize=lead_ones(kernel), strides=lead_ones(strides), pads=pads, **extra)
        return ctx.one(ir_type, [ctx.ins[0]], attrs, fmt=NCHW)
    if n == 1:  # placed on H: [1,1,k,1]
        attrs = dict(ksize=[1, 1, kernel[0], 1], strides=[1, 1, strides[0], 1],
                     pads=pads + [0, 0], **extra)
        x4 = unsqueeze(ctx, ctx.ins[0], 3, "Unsqueeze")
        y = ctx.emit(ir_type, [x4], attrs, suffix=ir_type, fmt=NCHW)
        return [squeeze(ctx, (y, 0), 3, "Squeeze")]
    return []  # 3-D handled by the callers


def max_pool(ctx: NodeCtx) -> list:
    if int(ctx.attr("storage_order", 0)) == 1:
        refuse("storage_order=1 is not supported")
    n = spatial_rank(ctx, weight_input=None)
    ceil = bool(ctx.attr("ceil_mode", 0))
    if n == 3:
        kernel, strides, pads = _pool_common(ctx, 3)
        attrs = {"ksize": lead_ones(kernel), "strides": lead_ones(strides),
                 "padding": padding_mode(ctx), "pads": pads, "dilation": [1] * 5,
                 "ceil_mode": int(ceil), "data_format": "NCDHW", **_pool_extras(ctx, 3)}
        return ctx.one("MaxPool3D", [ctx.ins[0]], attrs, fmt=NCDHW)
    if n not in (1, 2):
        refuse(f"{n}-D max pooling is not supported")
    return _pool_2d(ctx, "MaxPoolV3", {"padding_mode": padding_mode(ctx),
                                       "data_format": "NCHW", "global_pooling": False,
                                       "ceil_mode": ceil})


def average_pool(ctx: NodeCtx) -> list:
    n = spatial_rank(ctx, weight_input=None)
    ceil = bool(ctx.attr("ceil_mode", 0))
    include_pad = int(ctx.attr("count_include_pad", 0)) == 1
    if n == 3:
        kernel, strides, pads = _pool_common(ctx, 3)
        attrs = {"ksize": lead_ones(kernel), "strides": lead_ones(strides), "pads": pads,
                 "ceil_mode": ceil, "count_include_pad": include_pad, "data_format": "NCDHW",
                 **_pool_extras(ctx, 3)}
        if padding_mode(ctx) != "CALCULATED":  # extra attr, as MaxPool3D's `padding`
            attrs["padding"] = padding_mode(ctx)
        return ctx.one("AvgPool3D", [ctx.ins[0]], attrs, fmt=NCDHW)
    if n not in (1, 2):
        refuse(f"{n}-D average pooling is not supported")
    return _pool_2d(ctx, "AvgPoolV2", {"padding_mode": padding_mode(ctx),
                                       "data_format": "NCHW", "global_pooling": False,
                                       "ceil_mode": ceil, "exclusive": not include_pad})


def global_max_pool(ctx: NodeCtx) -> list:
    rank = ctx.input_rank(0) or 4  # spatial axes 2..rank-1; NCHW unless the model says more
    axes = ctx.const_node(list(range(2, rank)), "int32", "axes")
    return ctx.one("ReduceMax", [ctx.ins[0], axes], {"keep_dims": True})


# -- activations with attributes ----------------------------------------------------------------

def softmax_attrs(ctx: NodeCtx) -> dict:
    if ctx.opset < 13:  # flatten-to-2D semantics, marked for the compiler
        return {"axes": [int(ctx.attr("axis", 1))], "need_fusion": 1}
    return {"axes": [int(ctx.attr("axis", -1))]}


def log_softmax_attrs(ctx: NodeCtx) -> dict:
    # CANN defaults axis to -1 for every opset; ONNX < 13 says 1 (with 2-D coercion).  We keep
    # the ONNX meaning so results match (docs/parser.md, deviations).
    if ctx.opset < 13:
        return {"axes": [int(ctx.attr("axis", 1))], "need_fusion": 1}
    return {"axes": [int(ctx.attr("axis", -1))]}


def selu(ctx: NodeCtx) -> list:
    """Default alpha / gamma: Selu.  Others: Elu(alpha, scale = gamma), which is the same
    function (ours; CANN refuses them)."""
    alpha = float(ctx.attr("alpha", 1.67326319217681884765625))
    gamma = float(ctx.attr("gamma", 1.05070102214813232421875))
    if abs(alpha - 1.6732632) > 1e-6 or abs(gamma - 1.0507010) > 1e-6:
        return ctx.one("Elu", [ctx.ins[0]], {"alpha": alpha, "scale": gamma})
    return ctx.one("Selu")


def dropout(ctx: NodeCtx) -> list:
    """Input 0 only; ratio (opset ≥ 12 input) is irrelevant at inference, training is not
    (random) unless the ratio is a constant 0.  A used `mask` is all true at inference:
    Fill(Shape(x), true) (ours; CANN has no IR slot for it)."""
    training, ratio = ctx.const(2), ctx.const(1)
    if ctx.input(2) is not None and (training is None or bool(training.reshape(-1)[0])):
        if ratio is None or float(ratio.reshape(-1)[0]) != 0.0:
            refuse("training_mode must be absent or a constant false (or the ratio a constant "
                   "0): training-mode dropout is random")
    attrs = {}
    if ctx.has_attr("ratio"):
        attrs["dropout_ratio"] = float(ctx.attr("ratio"))
    outs = ctx.one("Dropout", [ctx.ins[0]], attrs)
    if len(ctx.used) > 1 and ctx.used[1]:
        dims = (ctx.emit("Shape", [ctx.ins[0]], {"dtype": DataType.DT_INT64},
                         suffix="Shape_mask"), 0)
        true = ctx.const_node(np.bool_(True), suffix="true")
        outs.append((ctx.emit("Fill", [dims, true], suffix="Fill_mask"), 0))
    return outs
