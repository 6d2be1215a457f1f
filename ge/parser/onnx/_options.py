"""Graph-shaping options read at parse time (docs/interfaces.md, spec/atc-cli.md §6.2, §6.12).

`input_shape` (alias `ge.inputShape`): static dims replace a Data node's model shape; `-1` and
`a~b` ranges are dynamic shapes, which this implementation refuses (EP0002).  `input_format`:
NCHW (default for ONNX), ND or NCDHW.  `ge.outputNodeName` (alias `out_nodes`): `name:index;...`
or output tensor names `t1;t2` select the graph outputs.  `ge.outputDatatype` is applied by the compiler, not here.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ge.errors import GeError
from ge.graph import Format

from .._input_shape import read_shaping_options

__all__ = ["ParseOptions", "read_options"]

INPUT_FORMATS = {"NCHW": Format.FORMAT_NCHW, "ND": Format.FORMAT_ND,
                 "NCDHW": Format.FORMAT_NCDHW}


@dataclass(frozen=True)
class ParseOptions:
    input_shapes: dict = field(default_factory=dict)   # Data name -> list[int]
    input_format: Format = Format.FORMAT_NCHW
    out_nodes: tuple = ()                              # ((onnx node name, output index), ...)
    out_tensors: tuple = ()                            # (onnx tensor name, ...)


_OUT_NODES_FORMAT = ('The parameter format is invalid. Valid format: '
                     '"node_name1:0;node_name1:1;node_name2:0".')


def _out_nodes_error(value: str, reason: str) -> GeError:
    return GeError("E10001", {"value": value, "parameter": "--out_nodes", "reason": reason})


def parse_out_nodes(text: str) -> tuple:
    """CANN's grammar: `node:index;...`, or for ONNX the output tensor names `t1;t2` (one
    form per value, not mixed); an entry is split at every ':'."""
    nodes, tensors = [], []
    for entry in text.split(";"):
        if not entry.strip():
            continue
        parts = entry.split(":")
        if len(parts) == 1:
            tensors.append(entry.strip())
            continue
        if len(parts) != 2 or not parts[0].strip():
            raise _out_nodes_error(entry, _OUT_NODES_FORMAT)
        if not parts[1].strip().isdigit():
            raise _out_nodes_error(text, "The index is not a positive integer.")
        nodes.append((parts[0].strip(), int(parts[1])))
    if nodes and tensors:
        raise _out_nodes_error(text, "Only one of index, top_name and output_name can be used.")
    return tuple(nodes), tuple(tensors)


def read_options(options: dict | None) -> ParseOptions:
    input_shapes, input_format, nodes_text = read_shaping_options(
        options or {}, INPUT_FORMATS, "NCHW", "The value must be NCHW, ND or NCDHW in ONNX model.")
    out_nodes, out_tensors = parse_out_nodes(nodes_text) if nodes_text else ((), ())
    return ParseOptions(input_shapes=input_shapes, input_format=input_format,
                        out_nodes=out_nodes, out_tensors=out_tensors)
