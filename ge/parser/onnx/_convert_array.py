"""Converters for shape / tensor manipulation, reductions, variadic math, Cast, Clip, Resize,
constants and If (spec/ir-ops.md §2.2, §2.3).  Plain functions of a NodeCtx; the table in
_mappings.py names which ONNX key uses which.
"""
from __future__ import annotations

import numpy as np
from ge.graph import DataType, Format

from ._context import NodeCtx, make_tensor, refuse
from ._model import ONNX_TO_GE_DTYPE, const_type, tensor_to_array

DT = DataType


# -- shape and layout ---------------------------------------------------------------------------

def reshape(ctx: NodeCtx) -> list:
    return ctx.one("Reshape", ctx.ins, {"allowzero": int(ctx.attr("allowzero", 0))})


def transpose(ctx: NodeCtx) -> list:
    perm = ctx.ints("perm")
    if perm is None:  # ONNX default: reversed axes, when the rank is known (CANN refuses)
        rank = ctx.input_rank(0)
        if rank is None:
            refuse("the perm attribute is required when the input rank is unknown")
        perm = list(range(rank))[::-1]
    return ctx.one("Transpose", [ctx.ins[0], ctx.const_node(perm, "int32", "perm")])


def squeeze_v1(ctx: NodeCtx) -> list:
    return ctx.one("Squeeze", ctx.ins, {"axis": ctx.ints("axes") or []})


def unsqueeze_v1(ctx: NodeCtx) -> list:
    axes = ctx.ints("axes")
    if not axes:
        refuse("the axes attribute is required and must not be empty")
    return ctx.one("Unsqueeze", ctx.ins, {"axes": axes})


def concat(ctx: NodeCtx) -> list:
    if not ctx.has_attr("axis"):
        refuse("the axis attribute is required")
    inputs = [e for e in ctx.ins if e is not None]
    if len(inputs) == 1:
        return ctx.one("Identity", inputs)
    return ctx.one("ConcatD", inputs, {"concat_dim": int(ctx.attr("axis")), "N": len(inputs)})


def split(ctx: NodeCtx) -> list:
    axis, n_out = int(ctx.attr("axis", 0)), len(ctx.proto.output)
    split_dim = ctx.const_node(np.int32(axis), suffix="split_dim")
    sizes_edge = ctx.input(1) if ctx.opset >= 13 else None
    sizes = ctx.ints("split") if ctx.opset <= 12 else None
    if sizes_edge is None and sizes is None and ctx.has_attr("num_outputs"):
        shape = ctx.input_shape(0)
        if shape is None or shape[axis] < 0:
            refuse("num_outputs needs a static input dimension")
        # ONNX: ceil(n / num_outputs) each, the last one smaller when it does not divide
        chunk = -(-shape[axis] // n_out)
        sizes = [min(chunk, max(shape[axis] - k * chunk, 0)) for k in range(n_out)]
    if sizes is not None:
        if len(sizes) != n_out:
            refuse(f"split sizes {sizes} do not match the {n_out} outputs")
        sizes_edge = ctx.const_node(sizes, "int64", "size_splits")
    if sizes_edge is not None:
        node = ctx.emit("SplitV", [ctx.ins[0], sizes_edge, split_dim], {"num_split": n_out},
                        suffix="SplitV", num_outputs=n_out)
    else:
        node = ctx.emit("Split", [split_dim, ctx.ins[0]], {"num_split": n_out},
                        suffix="Split", num_outputs=n_out)
    return [(node, i) for i in range(n_out)]


def slice_v1(ctx: NodeCtx) -> list:
    starts, ends = ctx.ints("starts"), ctx.ints("ends")
    if starts is None or ends is None:
        refuse("the starts and ends attributes are required")
    inputs = [ctx.ins[0], ctx.const_node(starts, "int64", "begin"),
              ctx.const_node(ends, "int64", "end")]
    if ctx.has_attr("axes"):
        inputs.append(ctx.const_node(ctx.ints("axes"), "int64", "axes"))
    return [(ctx.emit("StridedSliceV2", inputs, suffix="StridedSliceV2"), 0)]


def gather(ctx: NodeCtx) -> list:
    axis = ctx.const_node(np.int32(int(ctx.attr("axis", 0))), suffix="axis")
    return ctx.one("GatherV2", [ctx.ins[0], ctx.ins[1], axis],
                   {"negative_index_support": True})


def pad_v1(ctx: NodeCtx) -> list:
    pads = ctx.ints("pads") if ctx.has_attr("pads") else ctx.ints("paddings")
    if pads is None or len(pads) % 2:
        refuse("the pads attribute is required and must have an even length")
    n = len(pads) // 2
    interleaved = [v for i in range(n) for v in (pads[i], pads[n + i])]
    mode = ctx.attr("mode", "constant")
    paddings = ctx.const_node(interleaved, "int32", "paddings")
    if mode == "reflect":
        return ctx.one("MirrorPad", [ctx.ins[0], paddings], {"mode": "REFLECT"})
    value = ctx.const_node(np.float32(ctx.attr("value", 0.0)), suffix="constant_values")
    return ctx.one("PadV3", [ctx.ins[0], paddings, value], {"mode": mode})


def pad_v11(ctx: NodeCtx) -> list:
    attrs = {"mode": ctx.attr("mode", "constant"), "paddings_contiguous": False}
    if ctx.input(3) is None:
        return ctx.one("PadV3", ctx.ins[:3], attrs)
    # opset-18 axes (no IR slot): full-rank pads computed here from constant pads and axes
    pads, axes, rank = ctx.const(1), ctx.const(3), ctx.input_rank(0)
    if pads is None or axes is None or rank is None:
        refuse("the axes input (opset 18) needs constant pads and axes and a known rank")
    axes = [int(a) + rank if int(a) < 0 else int(a) for a in axes.reshape(-1)]
    pads = pads.reshape(-1).astype(np.int64)
    full = [0] * (2 * rank)
    for k, a in enumerate(axes):
        full[a], full[rank + a] = int(pads[k]), int(pads[len(axes) + k])
    return ctx.one("PadV3", [ctx.ins[0], ctx.const_node(full, "int64", "paddings"),
                             ctx.input(2)], attrs)


def _resize_sizes(ctx: NodeCtx, scales) -> tuple:
    shape = (ctx.emit("Shape", [ctx.ins[0]], {"dtype": DT.DT_INT32}, suffix="Shape"), 0)
    shape_f = (ctx.emit("Cast", [shape], {"dst_type": int(DT.DT_FLOAT)}, suffix="Cast_shape"), 0)
    scaled = (ctx.emit("Mul", [shape_f, scales], suffix="Mul"), 0)
    return (ctx.emit("Cast", [scaled], {"dst_type": int(DT.DT_INT32)}, suffix="Cast_sizes"), 0)


def _resize_nearest(ctx: NodeCtx, sizes, align: bool, half_pixel: bool) -> list:
    offsets = ctx.const_node([2], "int32", "offsets")
    count = ctx.const_node([2], "int32", "size")
    hw = (ctx.emit("Slice", [sizes, offsets, count], suffix="Slice"), 0)
    attrs = {"align_corners": align, "half_pixel_centers": half_pixel}
    return [(ctx.emit("ResizeNearestNeighborV2", [ctx.ins[0], hw], attrs,
                      suffix="ResizeNearestNeighborV2", fmt=Format.FORMAT_NCHW), 0)]


def _resize_full_rank(ctx: NodeCtx) -> tuple:
    """Opset-18 `axes` / `keep_aspect_ratio_policy`: full-rank Const roi, scales and sizes
    computed at parse time (the inputs must be constants and the input shape static)."""
    shape = ctx.input_shape(0)
    if shape is None or any(d < 0 for d in shape):
        refuse("axes / keep_aspect_ratio_policy need a static input shape")
    rank = len(shape)
    axes = [a + rank if a < 0 else a for a in (ctx.ints("axes") or range(rank))]
    roi, scales, sizes = ctx.const(1), ctx.const(2), ctx.const(3)
    for i, name in ((1, "roi"), (2, "scales"), (3, "sizes")):
        if ctx.input(i) is not None and ctx.const(i) is None:
            refuse(f"axes / keep_aspect_ratio_policy need a constant {name} input")
    full_roi = None
    if roi is not None and roi.size:
        full_roi = [0.0] * rank + [1.0] * rank
        for k, a in enumerate(axes):
            full_roi[a], full_roi[rank + a] = float(roi[k]), float(roi[len(axes) + k])
    full_scales = [1.0] * rank
    if sizes is not None and sizes.size:
        ratios = [float(sizes[k]) / shape[a] for k, a in enumerate(axes)]
        policy = ctx.attr("keep_aspect_ratio_policy", "stretch")
        if policy in ("not_larger", "not_smaller"):
            common = min(ratios) if policy == "not_larger" else max(ratios)
            ratios = [common] * len(axes)
            out = list(shape)
            for a in axes:
                out[a] = int(np.floor(common * shape[a] + 0.5))
        elif policy == "stretch":
            out = list(shape)
            for k, a in enumerate(axes):
                out[a] = int(sizes[k])
        else:
            refuse(f"keep_aspect_ratio_policy {policy} is not supported")
        for k, a in enumerate(axes):
            full_scales[a] = ratios[k]
    elif scales is not None and scales.size:
        for k, a in enumerate(axes):
            full_scales[a] = float(scales[k])
        out = [int(np.floor(d * s)) for d, s in zip(shape, full_scales)]
    else:
        refuse("Resize needs a scales or sizes input")
    roi_edge = ctx.const_node(np.asarray(full_roi if full_roi is not None else [], np.float32),
                              suffix="roi")
    return (roi_edge, ctx.const_node(np.asarray(full_scales, np.float32), suffix="scales"),
            ctx.const_node(np.asarray(out, np.int64), suffix="sizes"))


def resize(ctx: NodeCtx) -> list:
    """Opset 10 as CANN (nearest: ResizeNearestNeighborV2).  From opset 11 every mode maps to
    the ONNX-semantics IR `Resize` with scales kept for the coordinates and every attribute
    copied (CANN uses ResizeNearestNeighborV2 for nearest, which ignores nearest_mode and the
    scales, and leaves cubic_coeff_a / exclude_outside / extrapolation_value at the IR
    defaults: docs/parser.md, deviations)."""
    mode = ctx.attr("mode", "nearest")
    if mode not in ("nearest", "linear", "cubic"):
        refuse(f"mode {mode} is not supported")
    attrs = {"mode": mode, "resize_original_type": "onnx_resize"}
    if ctx.opset == 10:
        sizes = _resize_sizes(ctx, ctx.ins[1])
        if mode == "nearest":
            return _resize_nearest(ctx, sizes, False, False)
        roi = scales = None
        attrs["coordinate_transformation_mode"] = "asymmetric"
    else:
        if len(ctx.ins) < 3:
            refuse("Resize needs at least 3 inputs (X, roi, scales)")
        attrs.update(coordinate_transformation_mode=ctx.attr("coordinate_transformation_mode",
                                                             "half_pixel"),
                     cubic_coeff_a=float(ctx.attr("cubic_coeff_a", -0.75)),
                     exclude_outside=int(ctx.attr("exclude_outside", 0)),
                     extrapolation_value=float(ctx.attr("extrapolation_value", 0.0)),
                     nearest_mode=ctx.attr("nearest_mode", "round_prefer_floor"))
        if int(ctx.attr("antialias", 0)):
            attrs["antialias"] = 1
        if ctx.has_attr("axes") or ctx.attr("keep_aspect_ratio_policy", "stretch") != "stretch":
            roi, scales, sizes = _resize_full_rank(ctx)
        else:
            sizes_in = ctx.input(3)
            if sizes_in is not None:
                sizes = (ctx.emit("Cast", [sizes_in], {"dst_type": int(DT.DT_INT32)},
                                  suffix="Cast_sizes"), 0)
            else:
                sizes = _resize_sizes(ctx, ctx.ins[2])
            roi, scales = ctx.input(1), ctx.input(2)
    roi = roi or ctx.const_node(np.zeros((0,), np.float32), suffix="roi")
    scales = scales or ctx.const_node(np.zeros((0,), np.float32), suffix="scales")
    return [(ctx.emit("Resize", [ctx.ins[0], roi, scales, sizes], attrs, suffix="Resize",
                      fmt=Format.FORMAT_NCHW), 0)]


def depth_to_space(ctx: NodeCtx) -> list:
    block = int(ctx.attr("blocksize", 0))
    if block < 2:
        refuse(f"blocksize {block} must be at least 2")
    return ctx.one("DepthToSpace", ctx.ins, {"block_size": block,
                                             "mode": ctx.attr("mode", "DCR"),
                                             "data_format": "NCHW"}, fmt=Format.FORMAT_NCHW)


# -- dtype and value ----------------------------------------------------------------------------

def cast(ctx: NodeCtx) -> list:
    to = ctx.attr("to")
    if to is None or not 1 <= int(to) <= 16 or int(to) not in ONNX_TO_GE_DTYPE:
        refuse(f"the to attribute ({to}) must be an ONNX data type from 1 to 16")
    return ctx.one("Cast", ctx.ins, {"dst_type": int(ONNX_TO_GE_DTYPE[int(to)])})


def clip_v1(ctx: NodeCtx) -> list:
    x = (ctx.emit("Cast", [ctx.ins[0]], {"dst_type": int(DT.DT_FLOAT)}, suffix="Cast"), 0)
    hi = ctx.const_node(np.float32(ctx.attr("max", 3.402823e38)), suffix="max")
    lo = ctx.const_node(np.float32(ctx.attr("min", -3.402823e38)), suffix="min")
    return [(ctx.emit("ClipByValue", [x, lo, hi], suffix="ClipByValue"), 0)]


def clip_v11(ctx: NodeCtx) -> list:
    lo, hi = ctx.input(1), ctx.input(2)
    if lo is not None and hi is not None:
        return ctx.one("ClipByValue", [ctx.ins[0], lo, hi])
    if hi is not None:
        return ctx.one("Minimum", [ctx.ins[0], hi])
    if lo is not None:
        return ctx.one("Maximum", [ctx.ins[0], lo])
    return ctx.one("Identity", [ctx.ins[0]])  # no bounds: a copy (CANN refuses)


def shape(ctx: NodeCtx) -> list:
    """Opset-15 start / end: Shape then a StridedSliceV2 of it (ONNX Slice clamping is
    Shape's start / end clamping; ours, CANN ignores them)."""
    start, end = int(ctx.attr("start", 0)), ctx.attr("end")
    if start == 0 and end is None:
        return ctx.one("Shape", ctx.ins, {"dtype": DT.DT_INT64})
    y = (ctx.emit("Shape", ctx.ins, {"dtype": DT.DT_INT64}, suffix="Shape"), 0)
    end = np.iinfo(np.int64).max if end is None else int(end)
    begin_edge = ctx.const_node([start], "int64", "begin")
    end_edge = ctx.const_node([end], "int64", "end")
    return [(ctx.emit("StridedSliceV2", [y, begin_edge, end_edge], suffix="StridedSliceV2"), 0)]


def size(ctx: NodeCtx) -> list:
    """ONNX Size is int64 (CANN's plugin sets the same dtype)."""
    return ctx.one("Size", ctx.ins, {"dtype": DT.DT_INT64})


def constant_of_shape(ctx: NodeCtx) -> list:
    proto = ctx.attr("value")
    value = np.zeros((), np.float32) if proto is None else \
        tensor_to_array(proto, None, f"{ctx.name}.value").reshape(-1)[:1].reshape(())
    return ctx.one("Fill", [ctx.ins[0], ctx.const_node(value, suffix="value")])


_CONSTANT_FIELDS = {"value_float": np.float32, "value_floats": np.float32,
                    "value_int": np.int64, "value_ints": np.int64,
                    "value_string": object, "value_strings": object}


def constant(ctx: NodeCtx) -> list:
    """`value` as CANN does; the scalar/list forms too (CANN leaves them empty)."""
    for a in ctx.proto.attribute:
        if a.name == "value":
            array = tensor_to_array(a.t, ctx.model_dir, ctx.name)
            return ctx.one("Const", [], {"value": make_tensor(array, const_type(a.t))})
        if a.name in _CONSTANT_FIELDS:
            array = np.array(ctx.attr(a.name), dtype=_CONSTANT_FIELDS[a.name])
            break
    else:
        refuse("only the value, value_float(s), value_int(s) and value_string(s) attributes "
               "are supported")
    return ctx.one("Const", [], {"value": make_tensor(array)})


# -- reductions and index ops -------------------------------------------------------------------

def _reduce(ctx: NodeCtx, ir_type: str, axes_input_since: int, x) -> list:
    keep = bool(ctx.attr("keepdims", 1))
    if ctx.opset <= 12:
        attrs = {"keep_dims": keep, "noop_with_empty_axes": False}
    else:
        attrs = {"keep_dims": keep,
                 "noop_with_empty_axes": bool(ctx.attr("noop_with_empty_axes", 0))}
    axes = ctx.input(1) if ctx.opset >= axes_input_since else None
    if axes is None:
        axes = ctx.const_node(np.array(ctx.ints("axes") or [], np.int32), suffix="axes")
    return [(ctx.emit(ir_type, [x, axes], attrs, suffix=ir_type), 0)]


def reduce(ir_type: str, axes_input_since: int):
    """ReduceX: axes attribute → int32 Const; from `axes_input_since` the 2nd input wins."""
    def convert(ctx: NodeCtx) -> list:
        return _reduce(ctx, ir_type, axes_input_since, ctx.ins[0])
    convert.__name__ = f"reduce_{ir_type}"
    return convert


def reduce_sum_square(ctx: NodeCtx) -> list:
    """ReduceSumSquare: x * x, then ReduceSum with the same axes and attributes (ours: the IR
    has no single op for it)."""
    square = (ctx.emit("Mul", [ctx.ins[0], ctx.ins[0]], suffix="Mul"), 0)
    return _reduce(ctx, "ReduceSum", 18, square)


def arg_extreme(ir_type: str):
    """ArgMax / ArgMin: the IR op (ArgMaxV2 / ArgMin) over a constant dimension, then
    ExpandDims when keepdims = 1."""
    def convert(ctx: NodeCtx) -> list:
        axis = int(ctx.attr("axis", 0))
        dim = ctx.const_node(np.int32(axis), suffix="dimension")
        attrs = {"dtype": DT.DT_INT64}
        if int(ctx.attr("select_last_index", 0)) == 1:  # extra attr (ours): the last one wins
            attrs["select_last_index"] = 1
        y = (ctx.emit(ir_type, [ctx.ins[0], dim], attrs, suffix=ir_type), 0)
        if int(ctx.attr("keepdims", 1)) == 1:
            y = (ctx.emit("ExpandDims", [y, ctx.const_node(np.int32(axis), suffix="axis")],
                          suffix="ExpandDims"), 0)
        return [y]
    convert.__name__ = f"arg_{ir_type}"
    return convert


def _top_k_outputs(ctx: NodeCtx, node) -> list:
    """IR TopK indices are int32 (CANN proto); ONNX's are int64: a Cast follows when the
    indices are used (docs/parser.md, deviations)."""
    indices = (node, 1)
    if len(ctx.used) > 1 and ctx.used[1]:
        indices = (ctx.emit("Cast", [indices], {"dst_type": int(DT.DT_INT64)},
                            suffix="Cast_indices"), 0)
    return [(node, 0), indices]


def top_k_v1(ctx: NodeCtx) -> list:
    if not ctx.has_attr("k"):
        refuse("the k attribute is required")
    k = ctx.const_node(np.int32(int(ctx.attr("k"))), suffix="k")
    node = ctx.emit("TopK", [ctx.ins[0], k], {"dim": int(ctx.attr("axis", -1))}, suffix="TopK",
                    num_outputs=2)
    return _top_k_outputs(ctx, node)


def top_k(ctx: NodeCtx) -> list:
    attrs = {"dim": int(ctx.attr("axis", -1)), "largest": bool(ctx.attr("largest", 1)),
             "sorted": bool(ctx.attr("sorted", 1))}
    node = ctx.emit("TopK", ctx.ins, attrs, suffix="TopK", num_outputs=2)
    return _top_k_outputs(ctx, node)


_SCATTER_ND = {"add": "ScatterNdAdd", "max": "ScatterNdMax", "min": "ScatterNdMin"}


def scatter_nd(ctx: NodeCtx) -> list:
    """No reduction: TensorScatterUpdate (similar_opp); add / max / min: TensorMove + the
    ScatterNd op of the reduction (scatter_nd_onnx_plugin).  IR has no multiply scatter."""
    reduction = ctx.attr("reduction", "none")
    if reduction == "none":
        return ctx.one("TensorScatterUpdate")
    if reduction not in _SCATTER_ND:
        refuse(f"reduction {reduction} is not supported (none, add, max, min are)")
    var = (ctx.emit("TensorMove", [ctx.ins[0]], suffix="TensorMove"), 0)
    ir_type = _SCATTER_ND[reduction]
    return [(ctx.emit(ir_type, [var, ctx.ins[1], ctx.ins[2]], suffix=ir_type), 0)]


# -- variadic math ------------------------------------------------------------------------------

def sum_(ctx: NodeCtx) -> list:
    return ctx.one("AccumulateNV2", ctx.ins, {"N": len(ctx.ins)})


def mean(ctx: NodeCtx) -> list:
    total = (ctx.emit("AccumulateNV2", ctx.ins, {"N": len(ctx.ins)}, suffix="AccumulateNV2"), 0)
    return [(ctx.emit("Muls", [total], {"value": 1.0 / len(ctx.ins)}, suffix="Muls"), 0)]


def chain(ir_type: str):
    """Max / Min: a left-to-right chain of the binary op; one input is a copy."""
    def convert(ctx: NodeCtx) -> list:
        if len(ctx.ins) == 1:
            return ctx.one("Identity")
        acc = ctx.ins[0]
        for i, edge in enumerate(ctx.ins[1:]):
            acc = (ctx.emit(ir_type, [acc, edge], suffix=f"{ir_type}_{i}"), 0)
        return [acc]
    convert.__name__ = f"chain_{ir_type}"
    return convert


# -- control flow -------------------------------------------------------------------------------

def if_(ctx: NodeCtx) -> list:
    """If: cond + the captured outer tensors (appended by the builder) → dynamic `input`."""
    names = sorted(a.name for a in ctx.proto.attribute)
    if names != ["else_branch", "then_branch"]:
        refuse("If must have exactly the attributes then_branch and else_branch")
    node = ctx.emit("If", ctx.ins, num_outputs=len(ctx.proto.output))
    node.subgraphs = {"then_branch": ctx.build_branch(node, "then_branch", 0),
                      "else_branch": ctx.build_branch(node, "else_branch", 1)}
    return [(node, i) for i in range(node.num_outputs)]

