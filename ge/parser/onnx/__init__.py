"""ONNX model → GE IR graph (`ge.parser.onnx`), following CANN's ONNX parser (spec/ir-ops.md §1).

    graph = parse_onnx("net.onnx", {"input_shape": "x:1,3,224,224"})

What it does: reads the model safely (_model), refuses unsupported nodes all at once (E13010),
turns graph inputs into Data, initializers into Const, every ONNX node into the IR nodes its row
of the one mapping table (_mappings.MAPPINGS) produces, If branches into subgraphs, and the
graph outputs into a NetOutput.  What it does not: shape inference, folding, optimisation —
those are the compiler's.  Error codes are listed in docs/parser.md.
"""
from __future__ import annotations

import os

from . import _proto as onnx

from ge.graph import Graph

from ._build import build_graph
from ._mappings import KEYS, MAPPINGS, SUPPORTED_OPSETS, OnnxOp
from ._model import load_model_bytes, load_model_file
from ._options import read_options

__all__ = ["parse_onnx", "parse_onnx_bytes", "MAPPINGS", "KEYS", "SUPPORTED_OPSETS", "OnnxOp"]

DEFAULT_GRAPH_NAME = "tmpGraph"  # CANN's name when the caller gives none (spec §1.1)


def parse_onnx(path_or_model, options: dict | None = None,
               graph_name: str | None = None) -> Graph:
    """Parse an ONNX file path (or an in-memory onnx.ModelProto) into a Graph.

    `options` are GE option keys (`input_shape`, `input_format`, `ge.outputNodeName`, ...).
    External tensor data is read only from the model file's directory; a ModelProto passed
    in memory may not use external data.
    """
    if isinstance(path_or_model, onnx.ModelProto):
        model = onnx.ModelProto()
        model.CopyFrom(path_or_model)
        return _parse(model, options, None, graph_name)
    path = os.fspath(path_or_model)
    model = load_model_file(path)
    return _parse(model, options, os.path.dirname(os.path.abspath(path)), graph_name)


def parse_onnx_bytes(data: bytes, options: dict | None = None, model_dir: str | None = None,
                     graph_name: str | None = None) -> Graph:
    """Parse a serialized ModelProto; `model_dir` (if given) is where external data may live."""
    return _parse(load_model_bytes(bytes(data)), options, model_dir, graph_name)


def _parse(model: onnx.ModelProto, options, model_dir, graph_name) -> Graph:
    parse_options = read_options(options)
    return build_graph(model, parse_options, model_dir, graph_name or DEFAULT_GRAPH_NAME)
