"""Graph-shaping options read at parse time (docs/interfaces.md, spec/atc-cli.md §6.2, §6.12).

`input_shape` (alias `ge.inputShape`): static dims replace a Data node's model shape; `-1` and
`a~b` ranges are dynamic shapes, which this implementation refuses (EP0002).  `input_format`:
NCHW (default for ONNX), ND or NCDHW.  `ge.outputNodeName` (alias `out_nodes`): `name:index;...`
selects the graph outputs.  `ge.outputDatatype` is applied by the compiler, not here.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ge.errors import GeError
from ge.graph import Format
from ge.parser._graph_options import parse_input_shape, parse_out_nodes

__all__ = ["ParseOptions", "read_options"]

INPUT_FORMATS = {"NCHW": Format.FORMAT_NCHW, "ND": Format.FORMAT_ND,
                 "NCDHW": Format.FORMAT_NCDHW}


@dataclass(frozen=True)
class ParseOptions:
    input_shapes: dict = field(default_factory=dict)   # Data name -> list[int]
    input_format: Format = Format.FORMAT_NCHW
    out_nodes: tuple = ()                              # ((onnx node name, output index), ...)


def _first(options: dict, *keys: str) -> str:
    for key in keys:
        value = options.get(key)
        if value:
            return str(value)
    return ""


def read_options(options: dict | None) -> ParseOptions:
    options = options or {}
    fmt_text = _first(options, "input_format") or "NCHW"
    if fmt_text not in INPUT_FORMATS:
        raise GeError("E10001", {"value": fmt_text, "parameter": "--input_format",
                                 "reason": "The value must be NCHW, ND or NCDHW in ONNX model."})
    shape_text = _first(options, "input_shape", "ge.inputShape")
    nodes_text = _first(options, "ge.outputNodeName", "out_nodes")
    return ParseOptions(input_shapes=parse_input_shape(shape_text) if shape_text else {},
                        input_format=INPUT_FORMATS[fmt_text],
                        out_nodes=parse_out_nodes(nodes_text) if nodes_text else ())
