"""Data movement: Transpose/TransposeD, Concat/ConcatV2/ConcatD, Split/SplitV, Slice and
StridedSliceV2 (masks all zero).  These kernels copy elements of any fixed-size dtype, so they are
not limited to fp32.  Axes, perms, offsets and steps come from attributes or constant inputs.
"""
from __future__ import annotations

from .cgen import (C_TYPE, ELEM_SIZE, KernelSource, Unsupported, coalesce,
                   kernel_file, loop_nest, numel, offset_expr, strides_of)

__all__ = ["LAYOUT_OPS", "VERSION", "render_layout"]

VERSION = 1


def _same_dtype(sig) -> str:
    dtypes = {t.dtype for t in sig.inputs if t is not None} | {t.dtype for t in sig.outputs}
    data = {t.dtype for t in _data_inputs(sig)} | {t.dtype for t in sig.outputs}
    if len(data) != 1 or next(iter(data)) not in ELEM_SIZE:
        raise Unsupported(f"data dtypes {sorted(dtypes)}")
    return next(iter(data))


def _data_inputs(sig) -> list:
    slots = _DATA_SLOTS[sig.op_type](sig)
    return [sig.inputs[s] for s in slots]


def _axis(value, rank: int, what: str) -> int:
    if value is None:
        raise Unsupported(f"{what} is not a constant")
    v = value[0] if isinstance(value, (list, tuple)) else value
    return int(v) % rank


def _copy_body(dims, out_strides, in_strides, src: str, dst: str = "y0", base: str = "0"):
    dims, (os_, is_) = coalesce(list(dims), [list(out_strides), list(in_strides)])
    return loop_nest(dims, [f"{dst}[{offset_expr(os_)}] = {src}[{base} + {offset_expr(is_)}];"])


def _transpose(sig):
    x, y = sig.inputs[0].shape, sig.outputs[0].shape
    perm = sig.attr("perm") if sig.op_type == "TransposeD" else sig.const(1)
    if perm is None:
        raise Unsupported("perm is not a constant")
    rank = len(x)
    perm = [int(p) % rank for p in perm] if rank else []
    if sorted(perm) != list(range(rank)) or [x[p] for p in perm] != list(y):
        raise Unsupported("perm does not match the shapes")
    xs = strides_of(x)
    return _copy_body(y or [1], strides_of(y) or [0], [xs[p] for p in perm] or [0], "x0")


def _concat(sig):
    y = sig.outputs[0].shape
    rank = len(y)
    if sig.op_type == "ConcatD":
        axis = _axis(sig.attr("concat_dim"), rank, "concat_dim")
        slots = [k for k, t in enumerate(sig.inputs) if t is not None]
    elif sig.op_type == "ConcatV2":
        axis = _axis(sig.const(len(sig.inputs) - 1), rank, "concat_dim")
        slots = list(range(len(sig.inputs) - 1))
    else:
        axis = _axis(sig.const(0), rank, "concat_dim")
        slots = list(range(1, len(sig.inputs)))
    outer = numel(y[:axis])
    out_inner = numel(y[axis:])
    size = ELEM_SIZE[sig.outputs[0].dtype]
    body, offset = [], 0
    for s in slots:
        inner = numel(sig.inputs[s].shape[axis:])
        body += [f"    for (int64_t o = 0; o < {outer}; ++o) memcpy((char *)y0 + (o * {out_inner}"
                 f" + {offset}) * {size}, (const char *)x{s} + o * {inner} * {size}, "
                 f"{inner * size});"]
        offset += inner
    if offset != out_inner:
        raise Unsupported("concat input sizes do not add up")
    return body


def _split(sig):
    x = sig.inputs[_DATA_SLOTS[sig.op_type](sig)[0]].shape
    rank = len(x)
    axis_slot = 0 if sig.op_type == "Split" else 2
    axis = _axis(sig.const(axis_slot), rank, "split_dim")
    xslot = 1 if sig.op_type == "Split" else 0
    outer, in_inner = numel(x[:axis]), numel(x[axis:])
    size = ELEM_SIZE[sig.outputs[0].dtype]
    body, offset = [], 0
    for k, t in enumerate(sig.outputs):
        inner = numel(t.shape[axis:])
        body += [f"    for (int64_t o = 0; o < {outer}; ++o) memcpy((char *)y{k} + o * {inner} * "
                 f"{size}, (const char *)x{xslot} + (o * {in_inner} + {offset}) * {size}, "
                 f"{inner * size});"]
        offset += inner
    if offset != in_inner:
        raise Unsupported("split output sizes do not add up")
    return body


def _slice(sig):
    x, y = sig.inputs[0].shape, sig.outputs[0].shape
    rank = len(x)
    if len(y) != rank:
        raise Unsupported("slice changes the rank")
    starts, steps = [0] * rank, [1] * rank
    if sig.op_type == "Slice":
        offsets = sig.const(1)
        if offsets is None:
            raise Unsupported("offsets are not a constant")
        starts = [int(o) for o in offsets]
    else:
        for mask in ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask",
                     "shrink_axis_mask"):
            if int(sig.attr(mask, 0) or 0):
                raise Unsupported(f"{mask} is set")
        begin = sig.const(1)
        axes = sig.const(3) if len(sig.inputs) > 3 and sig.inputs[3] is not None else None
        strides = sig.const(4) if len(sig.inputs) > 4 and sig.inputs[4] is not None else None
        if begin is None or (len(sig.inputs) > 3 and sig.inputs[3] is not None and axes is None) \
                or (len(sig.inputs) > 4 and sig.inputs[4] is not None and strides is None):
            raise Unsupported("begin/axes/strides are not constants")
        axes = [int(a) % rank for a in axes] if axes is not None else list(range(len(begin)))
        strides = list(strides) if strides is not None else [1] * len(axes)
        for a, b, s in zip(axes, begin, strides):
            s, b = int(s), int(b)
            if s == 0:
                raise Unsupported("zero step")
            if b < 0:
                b += x[a]
            b = min(max(b, 0), x[a]) if s > 0 else min(max(b, 0), x[a] - 1)
            starts[a], steps[a] = b, s
    xs = strides_of(x)
    base = sum(st * s for st, s in zip(starts, xs))
    for d in range(rank):
        last = starts[d] + (y[d] - 1) * steps[d]
        if y[d] > 0 and not (0 <= starts[d] < x[d] and 0 <= last < x[d]):
            raise Unsupported("slice window outside the input")
    return _copy_body(y or [1], strides_of(y) or [0], [s * st for s, st in zip(xs, steps)] or [0],
                      "x0", base=str(base))


_DATA_SLOTS = {
    "Transpose": lambda s: [0], "TransposeD": lambda s: [0],
    "ConcatD": lambda s: [k for k, t in enumerate(s.inputs) if t is not None],
    "ConcatV2": lambda s: list(range(len(s.inputs) - 1)),
    "Concat": lambda s: list(range(1, len(s.inputs))),
    "Split": lambda s: [1], "SplitV": lambda s: [0],
    "Slice": lambda s: [0], "StridedSliceV2": lambda s: [0],
}
LAYOUT_OPS = {
    "Transpose": _transpose, "TransposeD": _transpose,
    "ConcatD": _concat, "ConcatV2": _concat, "Concat": _concat,
    "Split": _split, "SplitV": _split,
    "Slice": _slice, "StridedSliceV2": _slice,
}


def render_layout(sig) -> KernelSource:
    dtype = _same_dtype(sig)
    if any(d < 0 for t in sig.outputs for d in t.shape):
        raise Unsupported("unknown output shape")
    body = LAYOUT_OPS[sig.op_type](sig)
    decls = []
    for k in _DATA_SLOTS[sig.op_type](sig):
        decls.append(f"const {C_TYPE[dtype]} *x{k} = (const {C_TYPE[dtype]} *)inputs[{k}];")
    for k in range(len(sig.outputs)):
        decls.append(f"{C_TYPE[dtype]} *y{k} = ({C_TYPE[dtype]} *)outputs[{k}];")
    return KernelSource(kernel_file(sig, "layout", VERSION, decls, body))
