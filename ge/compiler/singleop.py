"""Compiling one op of a `--singleop` list: what this compiler can build of it, its graph
through the whole pipeline, the model attributes CANN gives a single-op model.

An input with -1 dims and its `shape_range` (high -1: unbounded) makes an unknown-shape
single-op model (ge.compiler.dynamic_shape): compiled at the upper bounds, specialised by the
runtime for other shapes inside the ranges.  Refused per op (the other ops of the list still
build): unknown rank ([-2]) and device storage formats (NC1HWC0, the fractal family), with
EP0002 naming the op; an `output_desc` that is not what the op computes from its inputs (a -1
dim matches any size) is E13014 naming the op.
"""
from __future__ import annotations

import json

from ge.errors import GeError
from ge.graph.types import AttrValueType as VT, format_name
from ge.parser.singleop import ATTR_SINGLE_OP_SCENE, PLAIN_FORMATS, SingleOp, op_graph

from ge.parser._shape_range import UNBOUNDED

from .dynamic_shape import apply_ranges, mark_dynamic
from .prepare import infer_shapes

UNKNOWN_RANK = -2

__all__ = ["build_single_op", "ATTR_SINGLE_OP_TYPE", "FRAMEWORK_SINGLE_OP"]

ATTR_SINGLE_OP_TYPE = "GE_INNER_SINGLE_OP_TYPE"   # model attribute: the op type
FRAMEWORK_SINGLE_OP = -1                            # no source framework


def _label(op: SingleOp) -> str:
    return f"Op {op.node_name} ({op.op_type}, entry {op.entry})"


def _check_supported(op: SingleOp) -> None:
    for side, tensors in (("input", op.inputs), ("output", op.outputs)):
        for k, t in enumerate(tensors):
            if t.absent:
                continue
            if list(t.shape) == [UNKNOWN_RANK]:
                raise GeError("EP0002", {
                    "feature": f"{_label(op)}: {side} {k} of unknown rank [-2]",
                    "reason": "an unknown-shape single op needs the rank of every tensor"})
            for fmt in (f for f in (t.format, t.origin_format) if f not in PLAIN_FORMATS):
                raise GeError("EP0002", {
                    "feature": f"{_label(op)}: {side} {k} in format {format_name(fmt)}",
                    "reason": "host kernels read plain layouts (ND, NCHW, NHWC, ...), not "
                              "device storage formats"})


def _input_ranges(op: SingleOp) -> dict:
    """Data name -> (lo, hi) per dim: fixed dims (d, d), each -1 dim its shape_range pair
    in order (none given: unbounded)."""
    ranges = {}
    for k, t in enumerate(op.inputs):
        if t.absent or t.const_value is not None:
            continue
        pairs = iter(t.shape_range)
        ranges[f"{op.node_name}_in_{k}"] = [
            (d, d) if d >= 0 else tuple(next(pairs, (0, UNBOUNDED))) for d in t.shape]
    return ranges


def _check_outputs(op: SingleOp, graph) -> None:
    """The declared outputs against what inference gives for the declared inputs."""
    node = graph.node(op.node_name)
    for k, t in enumerate(op.outputs):
        got = node.out_desc(k)
        for what, declared, inferred in (("shape", list(t.shape), list(got.shape)),
                                         ("type", t.data_type.name, got.data_type.name)):
            if what == "shape" and len(declared) == len(inferred):
                declared = [i if d < 0 else d for d, i in zip(declared, inferred)]
            if declared != inferred:
                raise GeError("E13014", {
                    "value": json.dumps(declared), "parameter": f"output_desc[{k}].{what}",
                    "opname": op.node_name,
                    "reason": f"op type {op.op_type} gives {json.dumps(inferred)} for the "
                              "inputs in input_desc"})


def build_single_op(op: SingleOp, graph_name: str, options: dict):
    """The CompiledModel of one op (ge.compiler.api.CompiledModel)."""
    from .api import build_graph
    _check_supported(op)
    graph = op_graph(op, graph_name)
    dynamic = apply_ranges(graph, _input_ranges(op), options)
    infer_shapes(graph)
    _check_outputs(op, graph)
    compiled = build_graph(graph, options, framework=FRAMEWORK_SINGLE_OP)
    if dynamic is not None:
        mark_dynamic(compiled, dynamic)
    compiled.model_attrs.update({ATTR_SINGLE_OP_TYPE: (VT.VT_STRING, op.op_type),
                                 ATTR_SINGLE_OP_SCENE: (VT.VT_BOOL, True)})
    return compiled
