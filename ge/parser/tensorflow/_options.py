"""Graph-shaping options read at parse time for TensorFlow models (spec/atc-cli.md §6.2).

`input_shape` and `ge.outputNodeName` use the ONNX parser's grammar (names may contain `/`
and `:`; the last `:` separates the dims).  `input_format`: NHWC (default for TensorFlow, as
CANN), NCHW, ND, NCDHW or NDHWC; it is the format of the Data nodes.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ge.graph import Format
from ge.parser._input_shape import parse_node_indexes, read_shaping_options

from ._context import FORMATS

__all__ = ["ParseOptions", "read_options", "parse_out_nodes"]


@dataclass(frozen=True)
class ParseOptions:
    input_shapes: dict = field(default_factory=dict)   # Placeholder name -> list[int]
    input_format: Format = Format.FORMAT_NHWC
    out_nodes: tuple = ()                              # ((TF node name, output index), ...)


def parse_out_nodes(text: str) -> tuple:
    """`node:index;...` (node names may hold `/`; the last `:` separates the index); E10003
    otherwise, as CANN's parser reports a bad --out_nodes."""
    return parse_node_indexes(text, 'The format must be "node_name1:0;node_name2:1", '
                                    "with a non-negative integer index")


def read_options(options: dict | None) -> ParseOptions:
    input_shapes, input_format, nodes_text = read_shaping_options(
        options or {}, FORMATS, "NHWC",
        "The value must be NCHW, NHWC, ND, NCDHW or NDHWC in TF model.")
    return ParseOptions(input_shapes=input_shapes, input_format=input_format,
                        out_nodes=parse_out_nodes(nodes_text) if nodes_text else ())
