"""Converter functions the TensorFlow mapping table names (_mappings.MAPPINGS).

Each takes a TfCtx and returns one edge per TensorFlow output.  TensorFlow semantics are kept
exactly: NHWC stays NHWC (the IR ops carry `data_format`), SAME/VALID/EXPLICIT padding,
StridedSlice masks, TF resize coordinate rules and integer floor division.
"""
from __future__ import annotations

import numpy as np

from ge.graph import DataType, Format
from ge.graph.types import to_numpy_dtype

from ._context import FORMATS, TfCtx, refuse

DT = DataType


def _per_format(ctx: TfCtx, values: list, fmt: str, what: str) -> list:
    if len(values) != len(fmt):
        refuse(f"{what} must have {len(fmt)} values for data_format {fmt}, got {values}")
    return [int(v) for v in values]


def _padding_attrs(ctx: TfCtx, fmt: str) -> dict:
    """TF `padding` → IR pads + the auto_pad the IR ops resolve (SAME = SAME_UPPER: the odd
    pad at the end, as TensorFlow does)."""
    padding = str(ctx.attr("padding", "VALID")).upper()
    nsp = len(fmt) - 2
    if padding == "EXPLICIT":
        explicit = [int(v) for v in ctx.attr("explicit_paddings", [])]
        if len(explicit) != 2 * len(fmt):
            refuse(f"explicit_paddings must have {2 * len(fmt)} values, got {explicit}")
        spatial = [i for i, c in enumerate(fmt) if c not in "NC"]
        return {"pads": [explicit[2 * i + k] for i in spatial for k in (0, 1)]}
    if padding not in ("SAME", "VALID"):
        refuse(f"padding {padding} is not SAME, VALID or EXPLICIT")
    return {"pads": [0] * (2 * nsp), "auto_pad": "SAME_UPPER" if padding == "SAME" else "VALID"}


_LAYOUTS = {FORMATS[k] for k in ("NHWC", "NCHW", "NDHWC", "NCDHW")}


def _check_input_layout(ctx: TfCtx, fmt: str) -> None:
    """A model input declared (--input_format) in another layout than the data_format of the
    op reading it would be transposed by the layout transfer: refuse the contradiction."""
    src = ctx.ins[0][0]
    declared = src.out_desc(ctx.ins[0][1]).format
    if src.type == "Data" and declared in _LAYOUTS and declared != FORMATS[fmt]:
        refuse(f"it reads model input {src.name} as {fmt} (its data_format) but --input_format "
               f"declares that input {declared.name[len('FORMAT_'):]}")


def _conv(ctx: TfCtx, x, w, groups: int, fmt: str, ir_type: str, filter_format: Format) -> list:
    _check_input_layout(ctx, fmt)
    attrs = {"strides": _per_format(ctx, ctx.attr("strides", [1] * len(fmt)), fmt, "strides"),
             "dilations": _per_format(ctx, ctx.attr("dilations", [1] * len(fmt)), fmt,
                                      "dilations"),
             "groups": groups, "data_format": fmt, **_padding_attrs(ctx, fmt)}
    node = ctx.emit(ir_type, [x, w], attrs, fmt=FORMATS[fmt])
    node.in_desc(1).set_format(filter_format).set_origin_format(filter_format)
    return [(node, 0)]


def _in_channels(ctx: TfCtx, fmt: str):
    shape = ctx.shape(0)
    if shape is None or len(shape) != len(fmt):
        return None
    c = shape[fmt.index("C")]
    return c if c > 0 else None


def conv2d(ctx: TfCtx) -> list:
    fmt = ctx.data_format()
    w_shape = ctx.shape(1)
    channels = _in_channels(ctx, fmt)
    groups = 1
    if channels is not None and w_shape is not None and w_shape[2] > 0:
        groups = channels // w_shape[2]      # grouped convolution: filter in-channels = C / g
    return _conv(ctx, ctx.ins[0], ctx.ins[1], groups, fmt, "Conv2D", Format.FORMAT_HWCN)


def conv3d(ctx: TfCtx) -> list:
    fmt = ctx.data_format("NDHWC")
    return _conv(ctx, ctx.ins[0], ctx.ins[1], 1, fmt, "Conv3D", Format.FORMAT_DHWCN)


def depthwise_conv2d(ctx: TfCtx) -> list:
    """Filter [kh, kw, C, M] is a grouped conv with groups = C over filter [kh, kw, 1, C*M]."""
    fmt = ctx.data_format()
    w_shape = ctx.shape(1)
    if w_shape is None or len(w_shape) != 4 or min(w_shape) < 0:
        refuse("the depthwise filter must have a static 4-D shape")
    kh, kw, c, m = w_shape
    value = ctx.const(1)
    if value is not None:
        w = ctx.const_node(np.ascontiguousarray(value).reshape(kh, kw, 1, c * m), suffix="filter")
    else:
        shape = ctx.const_node(np.array([kh, kw, 1, c * m], dtype=np.int64), suffix="shape")
        w = ctx.one("Reshape", [ctx.ins[1], shape])[0]
    return _conv(ctx, ctx.ins[0], w, c, fmt, "Conv2D", Format.FORMAT_HWCN)


def conv2d_backprop_input(ctx: TfCtx) -> list:
    """TF (input_sizes, filter [kh, kw, out, in], out_backprop) → Conv2DTranspose
    (input_size, x, filter) whose channels-last filter is the same [kh, kw, Cout, Cin]."""
    fmt = ctx.data_format()
    attrs = {"strides": _per_format(ctx, ctx.attr("strides", [1] * 4), fmt, "strides"),
             "dilations": _per_format(ctx, ctx.attr("dilations", [1] * 4), fmt, "dilations"),
             "data_format": fmt, **_padding_attrs(ctx, fmt)}
    if ctx.const(0) is None:
        refuse("input_sizes must be known when the model is compiled")
    node = ctx.emit("Conv2DTranspose", [ctx.ins[0], ctx.ins[2], ctx.ins[1]], attrs,
                    fmt=FORMATS[fmt])
    node.in_desc(2).set_format(Format.FORMAT_HWCN).set_origin_format(Format.FORMAT_HWCN)
    return [(node, 0)]


def bias_add(ctx: TfCtx) -> list:
    fmt = ctx.data_format()
    bias = ctx.ins[1]
    if fmt == "NCHW":
        rank = ctx.rank(0)
        if rank is None:
            refuse("BiasAdd with data_format NCHW needs the input rank")
        shape = ctx.const_node(np.array([-1] + [1] * (rank - 2), dtype=np.int64),
                               suffix="bias_shape")
        bias = ctx.one("Reshape", [bias, shape])[0]
    return ctx.one("Add", [ctx.ins[0], bias])


def fused_batch_norm(ctx: TfCtx) -> list:
    if ctx.attr("is_training", True):      # TF's default: normalise by batch statistics
        refuse("is_training=True (batch statistics) is not supported; freeze the model in "
               "inference mode")
    fmt = ctx.data_format()
    node = ctx.emit("BatchNorm", ctx.ins[:5],
                    {"epsilon": float(ctx.attr("epsilon", 1e-4)), "data_format": fmt,
                     "is_training": False}, num_outputs=6)
    return [(node, i) for i in range(6)]


def _pool_attrs(ctx: TfCtx, fmt: str) -> dict:
    _check_input_layout(ctx, fmt)
    padding = str(ctx.attr("padding", "VALID")).upper()
    if padding not in ("SAME", "VALID"):
        refuse(f"padding {padding} is not SAME or VALID")
    return {"ksize": _per_format(ctx, ctx.attr("ksize"), fmt, "ksize"),
            "strides": _per_format(ctx, ctx.attr("strides"), fmt, "strides"),
            "padding": padding, "data_format": fmt}


def max_pool(ctx: TfCtx) -> list:
    fmt = ctx.data_format()
    return ctx.one("MaxPool", [ctx.ins[0]], _pool_attrs(ctx, fmt), fmt=FORMATS[fmt])


def avg_pool(ctx: TfCtx) -> list:
    """TF averages over the window cells inside the input (padding not counted)."""
    fmt = ctx.data_format()
    attrs = _pool_attrs(ctx, fmt)
    attrs.update(padding_mode=attrs.pop("padding"), pads=[0, 0, 0, 0], exclusive=True)
    return ctx.one("AvgPoolV2", [ctx.ins[0]], attrs, fmt=FORMATS[fmt])


def mat_mul(ctx: TfCtx) -> list:
    return ctx.one("MatMulV2", ctx.ins[:2], {"transpose_x1": bool(ctx.attr("transpose_a", False)),
                                             "transpose_x2": bool(ctx.attr("transpose_b", False))})


def batch_mat_mul(ctx: TfCtx) -> list:
    return ctx.one("BatchMatMulV2", ctx.ins[:2], {"adj_x1": bool(ctx.attr("adj_x", False)),
                                                  "adj_x2": bool(ctx.attr("adj_y", False))})


def einsum(ctx: TfCtx) -> list:
    return ctx.one("Einsum", ctx.ins, {"equation": ctx.attr("equation", ""), "N": len(ctx.ins)})


# ---- elementwise compositions ---------------------------------------------------------------

def _scalar(ctx: TfCtx, value, slot: int = 0, suffix: str = "scalar"):
    return ctx.const_node(np.array(value, dtype=to_numpy_dtype(ctx.dtype(slot))), suffix=suffix)


def relu6(ctx: TfCtx) -> list:
    return ctx.one("ClipByValue", [ctx.ins[0], _scalar(ctx, 0, suffix="min"),
                                   _scalar(ctx, 6, suffix="max")])


def square(ctx: TfCtx) -> list:
    return ctx.one("Mul", [ctx.ins[0], ctx.ins[0]])


def squared_difference(ctx: TfCtx) -> list:
    diff = ctx.one("Sub", ctx.ins[:2])[0]
    return ctx.one("Mul", [diff, diff])


def erfc(ctx: TfCtx) -> list:
    erf = ctx.one("Erf", [ctx.ins[0]])[0]
    return ctx.one("Sub", [_scalar(ctx, 1, suffix="one"), erf])


def floor_div(ctx: TfCtx) -> list:
    """Rounds toward minus infinity for every dtype; integers divide in float64, which is
    exact for |values| < 2**53."""
    dtype = ctx.dtype(0)
    if dtype in (DT.DT_FLOAT, DT.DT_FLOAT16, DT.DT_DOUBLE, DT.DT_BF16):
        div = ctx.one("RealDiv", ctx.ins[:2])[0]
        return ctx.one("Floor", [div])
    a = ctx.one("Cast", [ctx.ins[0]], {"dst_type": DT.DT_DOUBLE})[0]
    b = ctx.one("Cast", [ctx.ins[1]], {"dst_type": DT.DT_DOUBLE})[0]
    div = ctx.one("RealDiv", [a, b])[0]
    floor = ctx.one("Floor", [div])[0]
    return ctx.one("Cast", [floor], {"dst_type": dtype})


def floor_mod(ctx: TfCtx) -> list:
    """x - floor(x / y) * y: the sign of the result follows y, as in TensorFlow."""
    quotient = floor_div(ctx)[0]
    product = ctx.one("Mul", [quotient, ctx.ins[1]])[0]
    return ctx.one("Sub", [ctx.ins[0], product])


def not_equal(ctx: TfCtx) -> list:
    eq = ctx.one("Equal", ctx.ins[:2])[0]
    return ctx.one("LogicalNot", [eq])


def leaky_relu(ctx: TfCtx) -> list:
    return ctx.one("LeakyRelu", [ctx.ins[0]], {"negative_slope": float(ctx.attr("alpha", 0.2))})


def add_n(ctx: TfCtx) -> list:
    if len(ctx.ins) == 1:
        return ctx.one("Identity", [ctx.ins[0]])
    return ctx.one("AccumulateNV2", ctx.ins, {"N": len(ctx.ins)})


def softmax(ir_type: str):
    def convert(ctx: TfCtx) -> list:
        return ctx.one(ir_type, [ctx.ins[0]], {"axes": [-1]})
    convert.__name__ = f"softmax_{ir_type}"
    return convert


def select(ctx: TfCtx) -> list:
    """v1 Select: a rank-1 condition picks whole rows of higher-rank operands."""
    cond = ctx.ins[0]
    rank_c, rank_x = ctx.rank(0), ctx.rank(1)
    if rank_c == 1 and rank_x is not None and rank_x > 1:
        shape = ctx.const_node(np.array([-1] + [1] * (rank_x - 1), dtype=np.int64),
                               suffix="cond_shape")
        cond = ctx.one("Reshape", [cond, shape])[0]
    return ctx.one("SelectV2", [cond, ctx.ins[1], ctx.ins[2]])


# ---- reductions -----------------------------------------------------------------------------

def reduce(ir_type: str):
    def convert(ctx: TfCtx) -> list:
        return ctx.one(ir_type, ctx.ins[:2], {"keep_dims": bool(ctx.attr("keep_dims", False)),
                                              "noop_with_empty_axes": True})
    convert.__name__ = f"reduce_{ir_type}"
    return convert


def arg_extreme(ir_type: str):
    """ArgMax / ArgMin: ArgMaxV2 / ArgMin with the index type of `output_type`."""
    def convert(ctx: TfCtx) -> list:
        return ctx.one(ir_type, ctx.ins[:2],
                       {"dtype": ctx.dtype_attr("output_type", DT.DT_INT64)})
    convert.__name__ = f"arg_{ir_type}"
    return convert


# ---- shapes and layout ----------------------------------------------------------------------

def squeeze(ctx: TfCtx) -> list:
    return ctx.one("Squeeze", [ctx.ins[0]], {"axis": [int(a) for a in ctx.attr("squeeze_dims", [])]})


def concat_v2(ctx: TfCtx) -> list:
    values = ctx.ins[:-1]
    if len(values) == 1:
        return ctx.one("Identity", [values[0]])
    return ctx.one("ConcatV2", values + [ctx.ins[-1]], {"N": len(values)})


def concat_v1(ctx: TfCtx) -> list:
    values = ctx.ins[1:]
    if len(values) == 1:
        return ctx.one("Identity", [values[0]])
    return ctx.one("ConcatV2", values + [ctx.ins[0]], {"N": len(values)})


def pack(ctx: TfCtx) -> list:
    axis = int(ctx.attr("axis", 0))
    axis_edge = ctx.const_node(np.array(axis, dtype=np.int32), suffix="axis")
    expanded = [ctx.one("ExpandDims", [x, axis_edge])[0] for x in ctx.ins]
    if len(expanded) == 1:
        return expanded
    return ctx.one("ConcatV2", expanded + [axis_edge], {"N": len(expanded)})


def unpack(ctx: TfCtx) -> list:
    num, axis = int(ctx.attr("num")), int(ctx.attr("axis", 0))
    if num == 1:
        return ctx.one("Squeeze", [ctx.ins[0]], {"axis": [axis]})
    dim = ctx.const_node(np.array(axis, dtype=np.int32), suffix="axis")
    split = ctx.emit("Split", [dim, ctx.ins[0]], {"num_split": num}, num_outputs=num)
    return [ctx.one("Squeeze", [(split, i)], {"axis": [axis]})[0] for i in range(num)]


def split(ctx: TfCtx) -> list:
    num = int(ctx.attr("num_split"))
    return ctx.one("Split", ctx.ins[:2], {"num_split": num}, num_outputs=num)


def split_v(ctx: TfCtx) -> list:
    num = int(ctx.attr("num_split"))
    return ctx.one("SplitV", ctx.ins[:3], {"num_split": num}, num_outputs=num)


def strided_slice(ctx: TfCtx) -> list:
    """TF StridedSlice with every mask: expanded at parse time into StridedSliceV2 over the
    input's axes (begin/end masks kept), then the new axes (ExpandDims) and the shrunk ones
    (Squeeze).  Needs constant begin/end/strides and, with an ellipsis, the input rank."""
    begin = ctx.const_ints(1, "begin")
    end = ctx.const_ints(2, "end")
    strides = ctx.const_ints(3, "strides")
    masks = {k: int(ctx.attr(k, 0)) for k in ("begin_mask", "end_mask", "ellipsis_mask",
                                              "new_axis_mask", "shrink_axis_mask")}
    n = len(begin)
    rank = ctx.rank(0)
    if masks["ellipsis_mask"] and rank is None:
        refuse("ellipsis_mask needs the input rank")
    specs = []                 # (input axis or None for a new axis, b, e, s, bm, em, shrink)
    axis = 0
    for j in range(n):
        bit = 1 << j
        if masks["ellipsis_mask"] & bit:
            explicit = sum(1 for k in range(j + 1, n)
                           if not masks["new_axis_mask"] & (1 << k))
            count = rank - axis - explicit
            for _ in range(count):
                specs.append((axis, 0, 0, 1, True, True, False))
                axis += 1
            continue
        if masks["new_axis_mask"] & bit:
            specs.append((None, 0, 0, 1, False, False, False))
            continue
        shrink = bool(masks["shrink_axis_mask"] & bit)
        b, e, s = begin[j], end[j], strides[j]
        bm, em = bool(masks["begin_mask"] & bit), bool(masks["end_mask"] & bit)
        if shrink:
            e, s, bm = b + 1, 1, False
            em = b == -1                    # [-1:0] would be empty: slice to the end
        specs.append((axis, b, e, s, bm, em, shrink))
        axis += 1
    sliced = [sp for sp in specs if sp[0] is not None]
    begin_mask = sum(1 << k for k, sp in enumerate(sliced) if sp[4])
    end_mask = sum(1 << k for k, sp in enumerate(sliced) if sp[5])
    i64 = np.int64
    y = ctx.ins[0]
    if sliced:
        y = ctx.one("StridedSliceV2", [
            ctx.ins[0], ctx.const_node(np.array([sp[1] for sp in sliced], dtype=i64), suffix="begin"),
            ctx.const_node(np.array([sp[2] for sp in sliced], dtype=i64), suffix="end"),
            ctx.const_node(np.array([sp[0] for sp in sliced], dtype=i64), suffix="axes"),
            ctx.const_node(np.array([sp[3] for sp in sliced], dtype=i64), suffix="strides")],
            {"begin_mask": begin_mask, "end_mask": end_mask})[0]
    new_axes = [k for k, sp in enumerate(specs) if sp[0] is None]
    if new_axes:
        y = ctx.one("Unsqueeze", [y], {"axes": new_axes})[0]
    shrunk = [k for k, sp in enumerate(specs) if sp[6]]
    if shrunk:
        y = ctx.one("Squeeze", [y], {"axis": shrunk})[0]
    if y is ctx.ins[0]:
        y = ctx.one("Identity", [y])[0]
    return [y]


def pad(ctx: TfCtx) -> list:
    value = ctx.ins[2] if len(ctx.ins) > 2 else _scalar(ctx, 0, suffix="constant_values")
    return ctx.one("PadV2", [ctx.ins[0], ctx.ins[1], value])


def mirror_pad(ctx: TfCtx) -> list:
    return ctx.one("MirrorPad", ctx.ins[:2], {"mode": str(ctx.attr("mode", "REFLECT")).upper()})


def gather_v1(ctx: TfCtx) -> list:
    axis = ctx.const_node(np.array(0, dtype=np.int32), suffix="axis")
    return ctx.one("GatherV2", [ctx.ins[0], ctx.ins[1], axis])


def gather_v2(ctx: TfCtx) -> list:
    return ctx.one("GatherV2", ctx.ins[:3], {"batch_dims": int(ctx.attr("batch_dims", 0))})


def shape(ctx: TfCtx) -> list:
    return ctx.one("Shape", [ctx.ins[0]], {"dtype": ctx.dtype_attr("out_type", DT.DT_INT32)})


def cast(ctx: TfCtx) -> list:
    return ctx.one("Cast", [ctx.ins[0]], {"dst_type": ctx.dtype_attr("DstT")})


def fill_like(value: int):
    def convert(ctx: TfCtx) -> list:
        dims = ctx.one("Shape", [ctx.ins[0]], {"dtype": DT.DT_INT64})[0]
        return ctx.one("Fill", [dims, _scalar(ctx, value, suffix="value")])
    convert.__name__ = f"fill_like_{value}"
    return convert


def top_k(ctx: TfCtx) -> list:
    return ctx.one("TopK", ctx.ins[:2], {"sorted": bool(ctx.attr("sorted", True))},
                   num_outputs=2)


def cumsum(ctx: TfCtx) -> list:
    return ctx.one("Cumsum", ctx.ins[:2], {"exclusive": bool(ctx.attr("exclusive", False)),
                                           "reverse": bool(ctx.attr("reverse", False))})


def depth_to_space(ctx: TfCtx) -> list:
    fmt = ctx.data_format()
    return ctx.one("DepthToSpace", [ctx.ins[0]], {"block_size": int(ctx.attr("block_size")),
                                                  "mode": "DCR", "data_format": fmt})


def _static_shape(ctx: TfCtx, i: int, rank: int, what: str) -> list:
    shape = ctx.shape(i)
    if shape is None or len(shape) != rank or min(shape) < 0:
        refuse(f"{what} needs a static {rank}-D input, got {shape}")
    return shape


def _reshape(ctx: TfCtx, x, dims: list, suffix: str):
    shape = ctx.const_node(np.array(dims, dtype=np.int64), suffix=suffix)
    return ctx.one("Reshape", [x, shape])[0]


def _transpose(ctx: TfCtx, x, perm: list):
    return ctx.one("Transpose", [x, ctx.const_node(np.array(perm, dtype=np.int64),
                                                   suffix="perm")])[0]


def space_to_depth(ctx: TfCtx) -> list:
    """NHWC [N, H, W, C] → [N, H/b, W/b, b*b*C], channel order (row, column, C) as TF."""
    if ctx.data_format() != "NHWC":
        refuse("only data_format NHWC is supported")
    n, h, w, c = _static_shape(ctx, 0, 4, "SpaceToDepth")
    b = int(ctx.attr("block_size"))
    y = _reshape(ctx, ctx.ins[0], [n, h // b, b, w // b, b, c], "blocks")
    y = _transpose(ctx, y, [0, 1, 3, 2, 4, 5])
    return [_reshape(ctx, y, [n, h // b, w // b, b * b * c], "shape")]


def _block_params(ctx: TfCtx) -> tuple:
    block = ctx.const_ints(1, "block_shape")
    pairs = np.asarray(ctx.const(2)).reshape(-1, 2).tolist() if ctx.const(2) is not None \
        else refuse("paddings / crops must be known when the model is compiled")
    if len(block) != 2:
        refuse(f"only 2 spatial dims are supported, block_shape {block}")
    return block, pairs


def space_to_batch_nd(ctx: TfCtx) -> list:
    """[N, H, W, C] padded, cut in b0 x b1 blocks moved to the batch: [b0*b1*N, H'/b0, W'/b1, C]
    (batch index = (row offset * b1 + column offset) * N + n, as TF)."""
    n, h, w, c = _static_shape(ctx, 0, 4, "SpaceToBatchND")
    (b0, b1), pads = _block_params(ctx)
    hp, wp = h + sum(pads[0]), w + sum(pads[1])
    paddings = ctx.const_node(np.array([[0, 0], *pads, [0, 0]], dtype=np.int64),
                              suffix="paddings")
    y = ctx.one("PadV2", [ctx.ins[0], paddings, _scalar(ctx, 0, suffix="zero")])[0]
    y = _reshape(ctx, y, [n, hp // b0, b0, wp // b1, b1, c], "blocks")
    y = _transpose(ctx, y, [2, 4, 0, 1, 3, 5])
    return [_reshape(ctx, y, [b0 * b1 * n, hp // b0, wp // b1, c], "shape")]


def batch_to_space_nd(ctx: TfCtx) -> list:
    """The inverse: blocks back from the batch into space, then the crops cut off."""
    nb, h, w, c = _static_shape(ctx, 0, 4, "BatchToSpaceND")
    (b0, b1), crops = _block_params(ctx)
    n = nb // (b0 * b1)
    y = _reshape(ctx, ctx.ins[0], [b0, b1, n, h, w, c], "blocks")
    y = _transpose(ctx, y, [2, 3, 0, 4, 1, 5])
    y = _reshape(ctx, y, [n, h * b0, w * b1, c], "shape")
    offsets = ctx.const_node(np.array([0, crops[0][0], crops[1][0], 0], dtype=np.int64),
                             suffix="offsets")
    size = ctx.const_node(np.array([n, h * b0 - sum(crops[0]), w * b1 - sum(crops[1]), c],
                                   dtype=np.int64), suffix="size")
    return ctx.one("Slice", [y, offsets, size])


# TF resize flags → ONNX-semantics Resize (coordinate mode, nearest rounding)
_RESIZE_MODES = {
    ("linear", True, False): ("align_corners", "round_prefer_floor"),
    ("linear", False, True): ("half_pixel", "round_prefer_floor"),
    ("linear", False, False): ("asymmetric", "round_prefer_floor"),
    ("nearest", True, False): ("align_corners", "round_prefer_ceil"),
    ("nearest", False, True): ("tf_half_pixel_for_nn", "floor"),
    ("nearest", False, False): ("asymmetric", "floor"),
}


def resize(mode: str):
    def convert(ctx: TfCtx) -> list:
        align, half = bool(ctx.attr("align_corners", False)), bool(ctx.attr("half_pixel_centers",
                                                                            False))
        row = _RESIZE_MODES.get((mode, align, half))
        if row is None:
            refuse("align_corners and half_pixel_centers cannot both be true")
        x_shape = ctx.shape(0)
        if x_shape is None or len(x_shape) != 4 or x_shape[0] < 0 or x_shape[3] < 0:
            refuse("the input must be a 4-D NHWC tensor with static N and C")
        h, w = ctx.const_ints(1, "size")
        sizes = ctx.const_node(np.array([x_shape[0], h, w, x_shape[3]], dtype=np.int64),
                               suffix="sizes")
        attrs = {"mode": mode, "coordinate_transformation_mode": row[0], "nearest_mode": row[1]}
        return ctx.one("Resize", [ctx.ins[0], None, None, sizes], attrs,
                       fmt=Format.FORMAT_NHWC)
    convert.__name__ = f"resize_{mode}"
    return convert
