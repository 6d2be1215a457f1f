"""NC1HWC0 ("5HD") model edges: `--is_input_adjust_hw_layout` (is_input_adjust_hw_layout, one
true/false per `--input_fp16_nodes` entry) and `--is_output_adjust_hw_layout`
(is_output_adjust_hw_layout, one per `--out_nodes` entry), as CANN documents them: such an
input or output is float16 in the NC1HWC0 layout, [N, C1, H, W, C0] with C0 = 16 and
C1 = ceil(C / 16), channels past C zero.

The model still computes in its own layout: behind a 5HD input the graph gets
TransposeD [0, 1, 4, 2, 3] → Reshape [N, C1*C0, H, W] → Slice to C channels (when C is not a
multiple of 16) → TransposeD to NHWC for a channels-last model; in front of a 5HD output the
reverse (zero-padded channels).  The model's layout is the tensor's format when it is NCHW or
NHWC, else `input_format` (NHWC for TensorFlow models).
"""
from __future__ import annotations

import numpy as np

from ge import ops
from ge.errors import GeError
from ge.graph import DataType, Format, Graph, Node

from .graph_utils import make_const

__all__ = ["C0", "parse_adjust_flags", "input_from_5hd", "output_to_5hd"]

C0 = 16
_NCHW_TO_NHWC, _NHWC_TO_NCHW = [0, 2, 3, 1], [0, 3, 1, 2]


def parse_adjust_flags(value: str, parameter: str) -> list:
    """'true,false,...' → [bool]; anything else E10005 (CANN's CheckInputTrueOrFalse)."""
    flags = []
    for item in filter(None, (v.strip() for v in (value or "").split(","))):
        if item not in ("true", "false"):
            raise GeError("E10005", {"parameter": parameter, "value": item})
        flags.append(item == "true")
    return flags


def model_layout(fmt: Format, options: dict) -> str:
    if fmt in (Format.FORMAT_NCHW, Format.FORMAT_NHWC):
        return "NHWC" if fmt == Format.FORMAT_NHWC else "NCHW"
    fallback = str(options.get("input_format") or "NCHW").upper()
    return "NHWC" if fallback == "NHWC" else "NCHW"


def _nchw(shape: list, layout: str, what: str) -> list:
    if len(shape) != 4 or any(d < 0 for d in shape):
        raise GeError("E10001", {"value": str(list(shape)), "parameter": what,
                                 "reason": "an NC1HWC0 tensor needs a static 4-D shape"})
    return [shape[i] for i in _NHWC_TO_NCHW] if layout == "NHWC" else list(shape)


def _add(graph: Graph, op: str, name: str, inputs: list, origin, **attrs) -> Node:
    opdef = ops.get(op)
    return graph.add_node(op, graph.unique_name(name), inputs=inputs,
                          input_names=ops.slot_names(opdef, len(inputs)),
                          output_names=ops.slot_names(opdef, 1, outputs=True), attrs=attrs,
                          origin=origin)


def _const(graph: Graph, name: str, values, dtype, origin):
    return (make_const(graph, name, np.array(values, dtype=dtype), origin), 0)


def input_from_5hd(graph: Graph, data: Node, layout: str) -> tuple:
    """Make `data` a 5HD input; returns (5-D shape, edge of the value in the model's layout)."""
    name, origin = data.name, data.origin
    n, c, h, w = _nchw(list(data.out_desc(0).shape), layout, "--is_input_adjust_hw_layout")
    c1 = -(-c // C0)
    edge = (_add(graph, "TransposeD", f"{name}_5hd_transpose", [(data, 0)], origin,
                 perm=[0, 1, 4, 2, 3]), 0)
    shape = _const(graph, f"{name}_5hd_shape", [n, c1 * C0, h, w], np.int64, origin)
    edge = (_add(graph, "Reshape", f"{name}_5hd_reshape", [edge, shape], origin), 0)
    if c1 * C0 != c:
        offsets = _const(graph, f"{name}_5hd_offsets", [0, 0, 0, 0], np.int64, origin)
        size = _const(graph, f"{name}_5hd_size", [n, c, h, w], np.int64, origin)
        edge = (_add(graph, "Slice", f"{name}_5hd_slice", [edge, offsets, size], origin), 0)
    if layout == "NHWC":
        edge = (_add(graph, "TransposeD", f"{name}_5hd_to_nhwc", [edge], origin,
                     perm=_NCHW_TO_NHWC), 0)
    return [n, c1, h, w, C0], edge


def output_to_5hd(graph: Graph, edge: tuple, layout: str) -> tuple:
    """The float16 NC1HWC0 form of the 4-D tensor `edge`; returns (edge, 5-D shape)."""
    src, idx = edge
    name, origin = f"{src.name}_{idx}", src.origin
    if src.out_desc(idx).data_type != DataType.DT_FLOAT16:
        edge = (_add(graph, "Cast", f"{name}_5hd_cast", [edge], origin,
                     dst_type=int(DataType.DT_FLOAT16)), 0)
    n, c, h, w = _nchw(list(src.out_desc(idx).shape), layout, "--is_output_adjust_hw_layout")
    c1 = -(-c // C0)
    if layout == "NHWC":
        edge = (_add(graph, "TransposeD", f"{name}_5hd_to_nchw", [edge], origin,
                     perm=_NHWC_TO_NCHW), 0)
    if c1 * C0 != c:
        pads = _const(graph, f"{name}_5hd_pads", [[0, 0], [0, c1 * C0 - c], [0, 0], [0, 0]],
                      np.int64, origin)
        zero = _const(graph, f"{name}_5hd_zero", 0, np.float16, origin)
        edge = (_add(graph, "PadV2", f"{name}_5hd_pad", [edge, pads, zero], origin), 0)
    shape = _const(graph, f"{name}_5hd_shape", [n, c1, C0, h, w], np.int64, origin)
    edge = (_add(graph, "Reshape", f"{name}_5hd_reshape", [edge, shape], origin), 0)
    edge = (_add(graph, "TransposeD", f"{name}_5hd_transpose", [edge], origin,
                 perm=[0, 1, 3, 4, 2]), 0)
    return edge, [n, c1, h, w, C0]
