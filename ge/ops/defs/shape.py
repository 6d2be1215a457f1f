"""Shape, layout and data movement (spec/ir-ops.md §3.7, first half): Reshape, Flatten,
(Un)Squeeze[V3], ExpandDims, Transpose[D], Shape, BroadcastTo, Expand, Tile, Fill, Range,
Concat[V2|D], Split[V], StridedSliceV2, Slice, GatherV2, GatherElements.

Inputs that determine the output shape (shape, axes, begin/end, multiples, ...) must be
constants at inference time; inference fails naming the node otherwise.
"""
from __future__ import annotations

import numpy as np

from ge.errors import GeError
from ge.graph.types import to_numpy_dtype

from ._common import (DT, VT, AttrSpec, OpDef, Port, Role,
                      broadcast_shapes, const_input, const_ints,
                      dtype_of, fail, known, norm_axis, numel, register, shape_of)

FAMILY = "shape"


class _Raise:
    """Stands in for an InferCtx in kernels: shape errors become ValueError."""
    op_name, op_type = "", ""


def _fail(ctx, msg):
    if isinstance(ctx, _Raise):
        raise ValueError(msg)
    fail(ctx, msg)


# ---- Reshape / Flatten / Squeeze / Unsqueeze / ExpandDims ----------------------------------

def reshape_dims(ctx, xs, target, allowzero=False):
    """Resolve 0 (copy the input dim unless allowzero) and one -1 (the remaining size)."""
    out = [xs[i] if (d == 0 and not allowzero and xs is not None and i < len(xs)) else d
           for i, d in enumerate(target)]
    if out.count(-1) > 1:
        _fail(ctx, f"shape {target} has more than one -1")
    if -1 in out:
        rest = numel([d for d in out if d != -1])
        if xs is None or not known(xs):
            return tuple(out)
        total = numel(xs)
        if rest == 0 or total % rest:
            _fail(ctx, f"cannot reshape {list(xs)} to {target}")
        out[out.index(-1)] = total // rest
    elif xs is not None and known(xs) and numel(xs) != numel(out):
        _fail(ctx, f"cannot reshape {list(xs)} ({numel(xs)} elements) to {target}")
    return tuple(out)


def _reshape_target(ctx, xs, shape, attrs):
    axis, num_axes = int(attrs["axis"]), int(attrs["num_axes"])
    allowzero = bool(attrs.get("allowzero", 0))
    if axis == 0 and num_axes == -1:
        return reshape_dims(ctx, xs, shape, allowzero)
    if xs is None:
        _fail(ctx, "partial reshape (axis/num_axes) needs a known input rank")
    axis = axis + len(xs) + 1 if axis < 0 else axis
    end = len(xs) if num_axes == -1 else axis + num_axes
    mid = reshape_dims(ctx, tuple(xs[axis:end]), shape, allowzero)
    return tuple(xs[:axis]) + mid + tuple(xs[end:])


def infer_reshape(ctx):
    target = _reshape_target(ctx, shape_of(ctx, 0), const_ints(ctx, 1, "shape"), ctx.attrs)
    return [(target, dtype_of(ctx, 0))]


def kernel_reshape(ins, attrs):
    x = ins[0]
    target = _reshape_target(_Raise(), x.shape, [int(v) for v in ins[1].reshape(-1)], attrs)
    return [x.reshape(target)]


def _flatten_shape(ctx, xs, axis):
    axis = axis + len(xs) if axis < 0 else axis
    if not 0 <= axis <= len(xs):
        _fail(ctx, f"axis {axis} is out of range for rank {len(xs)}")
    a, b = xs[:axis], xs[axis:]
    return (numel(a) if known(a) else -1, numel(b) if known(b) else -1)


def infer_flatten(ctx):
    xs = shape_of(ctx, 0)
    shape = None if xs is None else _flatten_shape(ctx, xs, int(ctx.attrs["axis"]))
    return [(shape, dtype_of(ctx, 0))]


def kernel_flatten(ins, attrs):
    return [ins[0].reshape(_flatten_shape(_Raise(), ins[0].shape, int(attrs["axis"])))]


def squeeze_shape(ctx, xs, axes):
    if not axes:
        return tuple(d for d in xs if d != 1)
    norm = {norm_axis(ctx, a, len(xs), "axis") if not isinstance(ctx, _Raise)
            else (a + len(xs) if a < 0 else a) for a in axes}
    for a in norm:
        if xs[a] not in (1, -1):
            _fail(ctx, f"cannot squeeze dim {a} of size {xs[a]}")
    return tuple(d for i, d in enumerate(xs) if i not in norm)


def unsqueeze_shape(ctx, xs, axes):
    rank = len(xs) + len(axes)
    norm = sorted(a + rank if a < 0 else a for a in axes)
    if len(set(norm)) != len(norm) or any(not 0 <= a < rank for a in norm):
        _fail(ctx, f"axes {list(axes)} are invalid for output rank {rank}")
    out, it = [], iter(xs)
    for i in range(rank):
        out.append(1 if i in norm else next(it))
    return tuple(out)


def _axes_infer(shape_fn, attr=None, slot=None, optional=False):
    def infer(ctx):
        xs, dt = shape_of(ctx, 0), dtype_of(ctx, 0)
        if attr is not None:
            axes = [int(a) for a in ctx.attrs[attr]]
        elif optional and (len(ctx.ins) <= slot or ctx.ins[slot] is None):
            axes = []
        else:
            axes = const_ints(ctx, slot, "axes")
        return [(None if xs is None else shape_fn(ctx, xs, axes), dt)]
    return infer


def _axes_kernel(shape_fn, attr=None, slot=None):
    def kernel(ins, attrs):
        if attr is not None:
            axes = [int(a) for a in attrs[attr]]
        else:
            axes = [] if len(ins) <= slot or ins[slot] is None else \
                [int(a) for a in ins[slot].reshape(-1)]
        return [ins[0].reshape(shape_fn(_Raise(), ins[0].shape, axes))]
    return kernel


def _expand_dims_shape(ctx, xs, axis):
    a = axis[0]
    a = a + len(xs) + 1 if a < 0 else a
    if not 0 <= a <= len(xs):
        _fail(ctx, f"axis {axis[0]} is out of range for rank {len(xs)}")
    return tuple(xs[:a]) + (1,) + tuple(xs[a:])


register(OpDef("Reshape", role=Role.ALIAS, inputs=(Port("x"), Port("shape")), outputs=(Port("y"),),
               attrs=(AttrSpec("axis", VT.VT_INT, 0), AttrSpec("num_axes", VT.VT_INT, -1)),
               infer=infer_reshape, kernel=kernel_reshape, family=FAMILY,
               doc="reshape to the shape tensor (0 copies a dim unless extra attr allowzero=1)"))
register(OpDef("Flatten", role=Role.ALIAS, inputs=(Port("x"),), outputs=(Port("y"),),
               attrs=(AttrSpec("axis", VT.VT_INT, 1),), infer=infer_flatten,
               kernel=kernel_flatten, family=FAMILY, doc="collapse to 2-D at axis"))
register(OpDef("Squeeze", role=Role.ALIAS, inputs=(Port("x"),), outputs=(Port("y"),),
               attrs=(AttrSpec("axis", VT.VT_LIST_INT, []),),
               infer=_axes_infer(squeeze_shape, attr="axis"),
               kernel=_axes_kernel(squeeze_shape, attr="axis"), family=FAMILY,
               doc="remove size-1 dims (all if axis is empty)"))
register(OpDef("SqueezeV3", role=Role.ALIAS,
               inputs=(Port("x"), Port("axes", "optional")), outputs=(Port("y"),),
               infer=_axes_infer(squeeze_shape, slot=1, optional=True),
               kernel=_axes_kernel(squeeze_shape, slot=1), family=FAMILY,
               doc="squeeze with axes as a tensor"))
register(OpDef("Unsqueeze", role=Role.ALIAS, inputs=(Port("x"),), outputs=(Port("y"),),
               attrs=(AttrSpec("axes", VT.VT_LIST_INT, []),),
               infer=_axes_infer(unsqueeze_shape, attr="axes"),
               kernel=_axes_kernel(unsqueeze_shape, attr="axes"), family=FAMILY,
               doc="insert size-1 dims at axes of the output"))
register(OpDef("UnsqueezeV3", role=Role.ALIAS,
               inputs=(Port("x"), Port("axes")), outputs=(Port("y"),),
               infer=_axes_infer(unsqueeze_shape, slot=1),
               kernel=_axes_kernel(unsqueeze_shape, slot=1), family=FAMILY,
               doc="unsqueeze with axes as a tensor"))
register(OpDef("ExpandDims", role=Role.ALIAS,
               inputs=(Port("x"), Port("axis")), outputs=(Port("y"),),
               infer=_axes_infer(_expand_dims_shape, slot=1),
               kernel=_axes_kernel(_expand_dims_shape, slot=1), family=FAMILY,
               doc="insert one size-1 dim"))


# ---- Transpose / Shape / broadcasting ------------------------------------------------------

def _perm(ctx, perm, rank):
    perm = list(perm) or list(range(rank - 1, -1, -1))
    perm = [p + rank if p < 0 else p for p in perm]
    if sorted(perm) != list(range(rank)):
        _fail(ctx, f"perm {perm} is not a permutation of {rank} dims")
    return perm


def _transpose_infer(attr=None):
    def infer(ctx):
        xs, dt = shape_of(ctx, 0), dtype_of(ctx, 0)
        perm = [int(p) for p in ctx.attrs[attr]] if attr else const_ints(ctx, 1, "perm")
        if xs is None:
            return [(None, dt)]
        return [(tuple(xs[p] for p in _perm(ctx, perm, len(xs))), dt)]
    return infer


def _transpose_kernel(attr=None):
    def kernel(ins, attrs):
        perm = [int(p) for p in (attrs[attr] if attr else ins[1].reshape(-1))]
        return [np.transpose(ins[0], _perm(_Raise(), perm, ins[0].ndim))]
    return kernel


register(OpDef("Transpose", kernel_gen="layout", kernel_consts=(1,),
               inputs=(Port("x"), Port("perm")), outputs=(Port("y"),),
               infer=_transpose_infer(), kernel=_transpose_kernel(), family=FAMILY,
               doc="permute dims by the perm tensor"))
register(OpDef("TransposeD", kernel_gen="layout", inputs=(Port("x"),), outputs=(Port("y"),),
               attrs=(AttrSpec("perm", VT.VT_LIST_INT),), infer=_transpose_infer("perm"),
               kernel=_transpose_kernel("perm"), family=FAMILY,
               doc="permute dims by attribute"))


def infer_shape_op(ctx):
    xs = shape_of(ctx, 0)
    if xs is None:
        raise GeError("EP0151", {"opname": ctx.op_name, "optype": ctx.op_type, "input": "x",
                                 "source": ctx.ins[0].source or "an unconnected slot"})
    return [((len(xs),), DT(ctx.attrs["dtype"]))]


def kernel_shape_op(ins, attrs):
    return [np.array(ins[0].shape, dtype=to_numpy_dtype(DT(attrs["dtype"])))]


def _register_shape_fact(name, infer, kernel, doc):
    """An op whose output is a fact of x's shape, as a tensor of the `dtype` attribute."""
    register(OpDef(name, inputs=(Port("x"),), outputs=(Port("y"),),
                   attrs=(AttrSpec("dtype", VT.VT_INT, int(DT.DT_INT32)),),
                   infer=infer, kernel=kernel, family=FAMILY, shape_only=True, doc=doc))


_register_shape_fact("Shape", infer_shape_op, kernel_shape_op,
                     "shape of x as a 1-D tensor of `dtype` (a GE DataType value)")


def infer_size_op(ctx):
    return [((), DT(ctx.attrs["dtype"]))]


def kernel_size_op(ins, attrs):
    return [np.array(ins[0].size, dtype=to_numpy_dtype(DT(attrs["dtype"])))]


_register_shape_fact("Size", infer_size_op, kernel_size_op,
                     "number of elements of x as a scalar of `dtype` (a GE DataType value)")


def infer_expand(ctx):
    target = tuple(const_ints(ctx, 1, "shape"))
    return [(broadcast_shapes(ctx, shape_of(ctx, 0), target), dtype_of(ctx, 0))]


def kernel_expand(ins, attrs):
    x = ins[0]
    target = np.broadcast_shapes(x.shape, tuple(int(v) for v in ins[1].reshape(-1)))
    return [np.array(np.broadcast_to(x, target))]


register(OpDef("BroadcastTo", kernel_gen="elementwise", replicates=True,
               inputs=(Port("x"), Port("shape")), outputs=(Port("y"),),
               infer=infer_expand, kernel=kernel_expand, family=FAMILY,
               doc="broadcast x to the shape tensor"))
register(OpDef("Expand", kernel_gen="elementwise",
               replicates=True, inputs=(Port("x"), Port("shape")), outputs=(Port("y"),),
               infer=infer_expand, kernel=kernel_expand, family=FAMILY,
               doc="ONNX bidirectional broadcast of x and the shape tensor"))


def infer_tile(ctx):
    xs, dt = shape_of(ctx, 0), dtype_of(ctx, 0)
    reps = const_ints(ctx, 1, "multiples")
    if xs is None:
        return [(None, dt)]
    if len(reps) < len(xs):
        fail(ctx, f"multiples {reps} has fewer entries than x has dims ({len(xs)})")
    xs = (1,) * (len(reps) - len(xs)) + tuple(xs)
    return [(tuple(-1 if d < 0 else d * r for d, r in zip(xs, reps)), dt)]


def kernel_tile(ins, attrs):
    return [np.tile(ins[0], [int(r) for r in ins[1].reshape(-1)])]


register(OpDef("Tile", replicates=True, inputs=(Port("x"), Port("multiples")), outputs=(Port("y"),),
               infer=infer_tile, kernel=kernel_tile, family=FAMILY,
               doc="repeat along each dim"))


def infer_fill(ctx):
    dims = tuple(const_ints(ctx, 0, "dims"))
    if any(d < 0 for d in dims):
        fail(ctx, f"dims {list(dims)} must be non-negative")
    return [(dims, dtype_of(ctx, 1))]


def kernel_fill(ins, attrs):
    value = ins[1].reshape(-1)
    return [np.full([int(d) for d in ins[0].reshape(-1)], value[0], dtype=ins[1].dtype)]


register(OpDef("Fill", inputs=(Port("dims"), Port("value")), outputs=(Port("y"),),
               infer=infer_fill, kernel=kernel_fill, family=FAMILY,
               doc="tensor of shape dims filled with the scalar value"))


def _range_len(start, limit, delta, closed):
    if delta == 0:
        raise ValueError("Range delta must not be 0")
    n = max(int(np.ceil((limit - start) / delta)), 0)
    if closed and start + n * delta == limit:
        n += 1
    return n


def infer_range(ctx):
    vals = [const_input(ctx, i, name).reshape(-1)[0]
            for i, name in enumerate(("start", "limit", "delta"))]
    try:
        n = _range_len(*vals, bool(ctx.attrs["is_closed"]))
    except ValueError as e:
        fail(ctx, str(e))
    return [((n,), dtype_of(ctx, 0))]


def kernel_range(ins, attrs):
    start, limit, delta = [x.reshape(-1)[0] for x in ins]
    n = _range_len(start, limit, delta, bool(attrs["is_closed"]))
    dt = ins[0].dtype
    return [(start + np.arange(n, dtype=np.int64 if dt.kind in "iu" else np.float64) * delta)
            .astype(dt)]


register(OpDef("Range", inputs=(Port("start"), Port("limit"), Port("delta")),
               outputs=(Port("y"),), attrs=(AttrSpec("is_closed", VT.VT_BOOL, False),),
               infer=infer_range, kernel=kernel_range, family=FAMILY,
               doc="start + i*delta while before limit (including it if is_closed)"))


# ---- Concat / Split ------------------------------------------------------------------------

def concat_shape(ctx, shapes, axis):
    shapes = [s for s in shapes]
    if any(s is None for s in shapes):
        return None
    rank = len(shapes[0])
    axis = norm_axis(ctx, axis, rank, "concat_dim")
    out = list(shapes[0])
    for s in shapes[1:]:
        if len(s) != rank:
            fail(ctx, f"inputs have different ranks: {[list(t) for t in shapes]}")
        for i in range(rank):
            if i == axis:
                out[i] = -1 if (out[i] < 0 or s[i] < 0) else out[i] + s[i]
            elif out[i] >= 0 and s[i] >= 0 and out[i] != s[i]:
                fail(ctx, f"inputs differ outside concat_dim {axis}: "
                          f"{[list(t) for t in shapes]}")
            elif out[i] < 0:
                out[i] = s[i]
    return tuple(out)


def _concat_infer(axis_slot):
    """axis_slot: 'first' | 'last' | None (attribute concat_dim)."""
    def infer(ctx):
        n = len(ctx.ins)
        if axis_slot == "first":
            axis, data = const_ints(ctx, 0, "concat_dim")[0], range(1, n)
        elif axis_slot == "last":
            axis, data = const_ints(ctx, n - 1, "concat_dim")[0], range(n - 1)
        else:
            axis, data = int(ctx.attrs["concat_dim"]), range(n)
        data = list(data)
        return [(concat_shape(ctx, [shape_of(ctx, i) for i in data], axis),
                 dtype_of(ctx, data[0]))]
    return infer


def _concat_kernel(axis_slot):
    def kernel(ins, attrs):
        if axis_slot == "first":
            axis, data = int(ins[0].reshape(-1)[0]), ins[1:]
        elif axis_slot == "last":
            axis, data = int(ins[-1].reshape(-1)[0]), ins[:-1]
        else:
            axis, data = int(attrs["concat_dim"]), ins
        return [np.concatenate(data, axis=axis)]
    return kernel


_N = (AttrSpec("N", VT.VT_INT, 1),)
register(OpDef("Concat", kernel_gen="layout", kernel_consts=(0,),
               inputs=(Port("concat_dim"), Port("x", "dynamic")), outputs=(Port("y"),),
               attrs=_N, infer=_concat_infer("first"), kernel=_concat_kernel("first"),
               family=FAMILY, doc="concat; axis as first input"))
register(OpDef("ConcatV2", kernel_gen="layout", kernel_consts=(-1,),
               inputs=(Port("x", "dynamic"), Port("concat_dim")),
               outputs=(Port("y"),), attrs=_N, infer=_concat_infer("last"),
               kernel=_concat_kernel("last"), family=FAMILY, doc="concat; axis as last input"))
register(OpDef("ConcatD", kernel_gen="layout", inputs=(Port("x", "dynamic"),), outputs=(Port("y"),),
               attrs=(AttrSpec("concat_dim", VT.VT_INT),) + _N, infer=_concat_infer(None),
               kernel=_concat_kernel(None), family=FAMILY,
               doc="concat; axis as attribute (ONNX Concat target)"))


def _split_sizes(ctx, dim, sizes, count):
    if sizes is None:
        if dim >= 0 and dim % count:
            _fail(ctx, f"dim of size {dim} cannot be split into {count} equal parts")
        return [dim // count if dim >= 0 else -1] * count
    sizes = list(sizes)
    if len(sizes) != count:
        _fail(ctx, f"{len(sizes)} split sizes for {count} outputs")
    if sizes.count(-1) == 1 and dim >= 0:
        sizes[sizes.index(-1)] = dim - sum(s for s in sizes if s != -1)
    if dim >= 0 and -1 not in sizes and sum(sizes) != dim:
        _fail(ctx, f"split sizes {sizes} do not add up to {dim}")
    return sizes


def _split_infer(variant):
    def infer(ctx):
        if variant == "Split":
            axis, x, sizes = const_ints(ctx, 0, "split_dim")[0], 1, None
        else:
            axis, x = const_ints(ctx, 2, "split_dim")[0], 0
            sizes = const_ints(ctx, 1, "size_splits")
        xs, dt = shape_of(ctx, x), dtype_of(ctx, x)
        if xs is None:
            return [(None, dt)] * ctx.num_outputs
        axis = norm_axis(ctx, axis, len(xs), "split_dim")
        parts = _split_sizes(ctx, xs[axis], sizes, ctx.num_outputs)
        return [(tuple(p if i == axis else d for i, d in enumerate(xs)), dt) for p in parts]
    return infer


def _split_kernel(variant):
    def kernel(ins, attrs):
        if variant == "Split":
            axis, x, sizes = int(ins[0].reshape(-1)[0]), ins[1], None
        else:
            axis, x = int(ins[2].reshape(-1)[0]), ins[0]
            sizes = [int(s) for s in ins[1].reshape(-1)]
        axis = axis + x.ndim if axis < 0 else axis
        parts = _split_sizes(_Raise(), x.shape[axis], sizes, int(attrs["num_split"]))
        return np.split(x, np.cumsum(parts)[:-1], axis=axis)
    return kernel


register(OpDef("Split", kernel_gen="layout", kernel_consts=(0,),
               inputs=(Port("split_dim"), Port("x")), outputs=(Port("y", "dynamic"),),
               attrs=(AttrSpec("num_split", VT.VT_INT),), infer=_split_infer("Split"),
               kernel=_split_kernel("Split"), family=FAMILY,
               doc="split into num_split equal parts; axis tensor first"))
register(OpDef("SplitV", kernel_gen="layout", kernel_consts=(2,),
               inputs=(Port("x"), Port("size_splits"), Port("split_dim")),
               outputs=(Port("y", "dynamic"),), attrs=(AttrSpec("num_split", VT.VT_INT),),
               infer=_split_infer("SplitV"), kernel=_split_kernel("SplitV"), family=FAMILY,
               doc="split into the given sizes (one -1 allowed)"))


# ---- Slicing and gathering -----------------------------------------------------------------

def slice_params(ctx, xs, begin, end, axes, strides, attrs):
    """Per-axis (start, stop, step) with ONNX Slice clamping; stop None = past index 0."""
    rank = len(xs)
    axes = list(range(len(begin))) if axes is None else list(axes)
    strides = [1] * len(begin) if strides is None else list(strides)
    if not len(begin) == len(end) == len(axes) == len(strides):
        _fail(ctx, f"begin {begin}, end {end}, axes {axes}, strides {strides} differ in length")
    for m in ("ellipsis_mask", "new_axis_mask", "shrink_axis_mask"):
        if int(attrs.get(m, 0) or 0):
            _fail(ctx, f"{m} is not supported by StridedSliceV2 (ONNX Slice semantics)")
    bmask, emask = int(attrs.get("begin_mask", 0) or 0), int(attrs.get("end_mask", 0) or 0)
    out = [(0, d, 1) for d in xs]
    seen = set()
    for j, (b, e, a, s) in enumerate(zip(begin, end, axes, strides)):
        a = a + rank if a < 0 else a
        if not 0 <= a < rank or a in seen:
            _fail(ctx, f"axes {axes} are invalid for rank {rank}")
        seen.add(a)
        if s == 0:
            _fail(ctx, "slice step must not be 0")
        dim = xs[a]
        if dim < 0:
            out[a] = None
            continue
        if bmask >> j & 1:
            b = 0 if s > 0 else dim - 1
        if emask >> j & 1:
            e = dim if s > 0 else -dim - 1
        b = b + dim if b < 0 else b
        e = e + dim if e < 0 else e
        if s > 0:
            b, e = min(max(b, 0), dim), min(max(e, 0), dim)
        else:
            b, e = min(max(b, 0), dim - 1), min(max(e, -1), dim - 1)
        out[a] = (b, e, s)
    return out


def _slice_len(p):
    if p is None:
        return -1
    b, e, s = p
    return max(0, -(-(e - b) // s)) if s > 0 else max(0, -(-(b - e) // -s))


def _ssv2_inputs(get, n):
    begin, end = get(1, "begin"), get(2, "end")
    axes = get(3, "axes") if n > 3 else None
    strides = get(4, "strides") if n > 4 else None
    return begin, end, axes, strides


def infer_strided_slice_v2(ctx):
    xs, dt = shape_of(ctx, 0), dtype_of(ctx, 0)

    def get(i, name):
        return None if ctx.ins[i] is None else const_ints(ctx, i, name)
    begin, end, axes, strides = _ssv2_inputs(get, len(ctx.ins))
    if xs is None:
        return [(None, dt)]
    params = slice_params(ctx, xs, begin, end, axes, strides, ctx.attrs)
    return [(tuple(_slice_len(p) for p in params), dt)]


def kernel_strided_slice_v2(ins, attrs):
    x = ins[0]

    def get(i, name):
        return None if ins[i] is None else [int(v) for v in ins[i].reshape(-1)]
    begin, end, axes, strides = _ssv2_inputs(get, len(ins))
    params = slice_params(_Raise(), x.shape, begin, end, axes, strides, attrs)
    return [x[tuple(slice(b, None if e < 0 else e, s) for b, e, s in params)].copy()]


register(OpDef("StridedSliceV2", kernel_gen="layout", kernel_consts=(1, 3, 4),
               inputs=(Port("x"), Port("begin"), Port("end"), Port("axes", "optional"),
                       Port("strides", "optional")),
               outputs=(Port("y"),),
               attrs=tuple(AttrSpec(m, VT.VT_INT, 0) for m in (
                   "begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask",
                   "shrink_axis_mask")),
               infer=infer_strided_slice_v2, kernel=kernel_strided_slice_v2, family=FAMILY,
               doc="ONNX Slice semantics with axes/strides; begin/end masks supported"))


def _slice_shape(ctx, xs, offsets, size):
    if len(offsets) != len(xs) or len(size) != len(xs):
        _fail(ctx, f"offsets {offsets} and size {size} must have {len(xs)} entries")
    out = []
    for d, o, s in zip(xs, offsets, size):
        s = d - o if s == -1 else s
        if d >= 0 and (o < 0 or o + s > d):
            _fail(ctx, f"slice [{o}, {o + s}) is outside a dim of size {d}")
        out.append(s)
    return tuple(out)


def infer_slice(ctx):
    xs, dt = shape_of(ctx, 0), dtype_of(ctx, 0)
    offsets, size = const_ints(ctx, 1, "offsets"), const_ints(ctx, 2, "size")
    return [(None if xs is None else _slice_shape(ctx, xs, offsets, size), dt)]


def kernel_slice(ins, attrs):
    x = ins[0]
    offsets = [int(v) for v in ins[1].reshape(-1)]
    size = _slice_shape(_Raise(), x.shape, offsets, [int(v) for v in ins[2].reshape(-1)])
    return [x[tuple(slice(o, o + s) for o, s in zip(offsets, size))].copy()]


register(OpDef("Slice", kernel_gen="layout", kernel_consts=(1,),
               inputs=(Port("x"), Port("offsets"), Port("size")), outputs=(Port("y"),),
               infer=infer_slice, kernel=kernel_slice, family=FAMILY,
               doc="slice by offsets and sizes (-1 = to the end)"))


def infer_gather_v2(ctx):
    xs, is_, dt = shape_of(ctx, 0), shape_of(ctx, 1), dtype_of(ctx, 0)
    axis = const_ints(ctx, 2, "axis")[0]
    bd = int(ctx.attrs["batch_dims"])
    if xs is None or is_ is None:
        return [(None, dt)]
    axis = norm_axis(ctx, axis, len(xs), "axis")
    bd = bd + len(is_) if bd < 0 else bd
    return [(tuple(xs[:axis]) + tuple(is_[bd:]) + tuple(xs[axis + 1:]), dt)]


def kernel_gather_v2(ins, attrs):
    x, idx = ins[0], ins[1].astype(np.int64)
    axis = int(ins[2].reshape(-1)[0])
    axis = axis + x.ndim if axis < 0 else axis
    bd = int(attrs["batch_dims"])
    bd = bd + idx.ndim if bd < 0 else bd
    if bd == 0:
        return [np.take(x, idx, axis=axis)]
    batch = x.shape[:bd]
    xf = x.reshape((-1,) + x.shape[bd:])
    ifl = idx.reshape((-1,) + idx.shape[bd:])
    parts = [np.take(xf[b], ifl[b], axis=axis - bd) for b in range(xf.shape[0])]
    return [np.stack(parts).reshape(batch + parts[0].shape)]


register(OpDef("GatherV2", inputs=(Port("x"), Port("indices"), Port("axis")),
               outputs=(Port("y"),),
               attrs=(AttrSpec("batch_dims", VT.VT_INT, 0),
                      AttrSpec("is_preprocessed", VT.VT_BOOL, False),
                      AttrSpec("negative_index_support", VT.VT_BOOL, False)),
               infer=infer_gather_v2, kernel=kernel_gather_v2, family=FAMILY,
               doc="gather along the axis tensor; negative indices count from the end"))


def infer_gather_elements(ctx):
    xs, is_ = shape_of(ctx, 0), shape_of(ctx, 1)
    if xs is not None and is_ is not None:
        if len(xs) != len(is_):
            fail(ctx, f"x {list(xs)} and index {list(is_)} must have the same rank")
        norm_axis(ctx, int(ctx.attrs["dim"]), len(xs), "dim")
    return [(is_, dtype_of(ctx, 0))]


def kernel_gather_elements(ins, attrs):
    x, idx = ins[0], ins[1].astype(np.int64)
    axis = int(attrs["dim"])
    axis = axis + x.ndim if axis < 0 else axis
    idx = np.where(idx < 0, idx + x.shape[axis], idx)
    return [np.take_along_axis(x, idx, axis=axis)]


register(OpDef("GatherElements", inputs=(Port("x"), Port("index")), outputs=(Port("y"),),
               attrs=(AttrSpec("dim", VT.VT_INT, 0),), infer=infer_gather_elements,
               kernel=kernel_gather_elements, family=FAMILY,
               doc="element gather along dim"))
