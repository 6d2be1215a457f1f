"""Where a gear's values go in the input shapes: one definition for the compiler
(ge.compiler.gear_options) and the runtime (ge.runtime._gears), docs/dynamic-shapes.md.

batch: the gear's one value is every input's N (its -1s); image: the gear's (h, w) are H and W
of each 4-D input with -1 there (by its layout); dims: the gear's values fill the -1s of the
inputs in --input_shape order.
"""
from __future__ import annotations

__all__ = ["GEAR_KEYS", "KIND_OF_TYPE", "FLAG_OF_TYPE", "SHAPE_DATA", "HW_AXES", "gear_axes",
           "gear_shapes"]

# GE option key -> (gear kind, flag name, CANN's mbatch_dynamic_type value)
GEAR_KEYS = {
    "ge.dynamicBatchSize": ("batch", "dynamic_batch_size", 1),
    "ge.dynamicImageSize": ("image", "dynamic_image_size", 2),
    "ge.dynamicDims": ("dims", "dynamic_dims", 3),
}
KIND_OF_TYPE = {dynamic_type: kind for kind, _, dynamic_type in GEAR_KEYS.values()}
FLAG_OF_TYPE = {dynamic_type: flag for _, flag, dynamic_type in GEAR_KEYS.values()}
SHAPE_DATA = "ascend_mbatch_shape_data"     # the extra input that carries the gear's values
HW_AXES = {"NCHW": (2, 3), "NHWC": (1, 2)}


def gear_axes(kind: str, dims, layout: str = "") -> list:
    """Positions of one input's gear dimensions."""
    dims = tuple(dims)
    if kind == "image" and len(dims) == 4 and dims.count(-1) == 2:
        return list(HW_AXES.get(layout, (2, 3)))
    return [i for i, d in enumerate(dims) if d == -1]


def gear_shapes(kind: str, inputs, values) -> dict:
    """{name: static dims} for one gear; `inputs` = [(name, dims with -1, layout)]."""
    out, used = {}, 0
    for name, dims, layout in inputs:
        shape = list(dims)
        axes = gear_axes(kind, dims, layout)
        if kind == "batch":
            picked = [values[0]] * len(axes)
        elif kind == "image":
            picked = list(values) if axes else []
        else:
            picked = list(values[used:used + len(axes)])
            used += len(axes)
        for axis, value in zip(axes, picked):
            shape[axis] = value
        out[name] = tuple(shape)
    return out
