"""TensorFlow frozen GraphDef → GE IR graph (`ge.parser.tensorflow`), beside `ge.parser.onnx`.

    graph = parse_tensorflow("frozen.pb", {"input_shape": "input:1,224,224,3"})

What it does: reads a frozen GraphDef (binary `.pb` or text `.pbtxt`) with our own schema
(ge.proto.tensorflow: TensorFlow is never imported), refuses unfrozen graphs (EP0502) and
unsupported nodes all at once (E13010), turns Placeholders into Data, Consts into Const, every
other node into the IR nodes its row of the one mapping table (_mappings.MAPPINGS) produces,
folds control flow whose predicate is known at compile time, maps data-dependent StatelessIf /
If to the IR's If with subgraphs, and the graph's sinks (or --out_nodes) into a NetOutput.
Error codes are listed in docs/parser-tensorflow.md.
"""
from __future__ import annotations

import os

from ge.graph import Graph

from ._build import build_graph, default_outputs
from ._custom import row_for
from ._mappings import BUILDER_OPS, MAPPINGS, ROWS, VARIABLE_OPS, TfOp
from ._model import load_graph_bytes, load_graph_file, read_model_file
from ._options import read_options

__all__ = ["parse_tensorflow", "parse_tensorflow_bytes", "load_graph_def", "default_outputs",
           "is_supported", "MAPPINGS", "ROWS", "TfOp"]

DEFAULT_GRAPH_NAME = "tmpGraph"
TEXT_SUFFIXES = (".pbtxt", ".txt")


def load_graph_def(path: str):
    """The GraphDef of a `.pb` / `.pbtxt` file (E10041 when it is not one)."""
    path = os.fspath(path)
    return load_graph_bytes(read_model_file(path), path,
                            text=path.lower().endswith(TEXT_SUFFIXES))


def parse_tensorflow(path, options: dict | None = None, graph_name: str | None = None) -> Graph:
    """Parse a frozen GraphDef file; `options` are GE option keys (input_shape, input_format,
    ge.outputNodeName)."""
    path = os.fspath(path)
    if path.lower().endswith(TEXT_SUFFIXES):
        graph_def, lazy = load_graph_def(path), {}
    else:                      # Const bytes stay in the mapped file (docs/om.md "Lazy weights")
        graph_def, lazy = load_graph_file(path)
    return build_graph(graph_def, read_options(options), graph_name or DEFAULT_GRAPH_NAME, lazy)


def parse_tensorflow_bytes(data: bytes, options: dict | None = None, text: bool = False,
                           graph_name: str | None = None) -> Graph:
    return build_graph(load_graph_bytes(bytes(data), text=text), read_options(options),
                       graph_name or DEFAULT_GRAPH_NAME)


def is_supported(op_type: str) -> bool:
    """Whether the parser converts this TensorFlow op type (the mode-3 pre-check's question;
    variables count as unsupported: the graph must be frozen)."""
    return (row_for(op_type) is not None or op_type in BUILDER_OPS) and \
        op_type not in VARIABLE_OPS
