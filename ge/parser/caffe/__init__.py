"""Caffe model → GE IR graph (`ge.parser.caffe`), following CANN's Caffe parser.

    graph = parse_caffe("net.prototxt", "net.caffemodel", {"input_shape": "data:1,3,224,224"})

What it does: reads the network text and the binary weights with our schema (ge.proto.caffe;
Caffe is not needed), upgrades legacy V1 `layers`, refuses unsupported layers all at once
(E11009 / E11008), turns inputs into Data nodes, every layer into the IR nodes its row of the one
mapping table (_mappings.MAPPINGS) produces with its blobs as Const inputs, and the unread tops
into a NetOutput.  What it does not: optimise or fold.  Error codes: docs/parser-caffe.md.
"""
from __future__ import annotations

import os

from ge.graph import Graph

from ._build import build_graph, layer_type
from ._custom import row_for
from ._mappings import BY_TYPE, INPUT_TYPES, MAPPINGS, CaffeLayer
from ._model import net_to_json, read_caffemodel_lazy, read_prototxt
from ._options import read_options

__all__ = ["parse_caffe", "model_to_json", "supported_layers", "MAPPINGS", "BY_TYPE",
           "CaffeLayer"]

DEFAULT_GRAPH_NAME = "tmpGraph"


def parse_caffe(model_path, weight_path=None, options: dict | None = None,
                graph_name: str | None = None) -> Graph:
    """Parse a .prototxt (and its .caffemodel) into a Graph.  `options` are GE option keys
    (`input_shape`, `input_format`, `ge.outputNodeName`, `op_name_map`)."""
    parse_options = read_options(options)
    net = read_prototxt(os.fspath(model_path))
    # blob bytes stay in the mapped .caffemodel (docs/om.md "Lazy weights")
    weights, lazy = read_caffemodel_lazy(os.fspath(weight_path)) if weight_path else (None, {})
    return build_graph(net, weights, parse_options,
                       graph_name or net.name or DEFAULT_GRAPH_NAME, lazy)


def model_to_json(model_path) -> str:
    """atc --mode=1 --framework=0: the prototxt's NetParameter as JSON."""
    return net_to_json(read_prototxt(os.fspath(model_path)))


def supported_layers(model_path, options: dict | None = None) -> tuple[str, list]:
    """Mode 3: (net name, [(layer name, type, supported)]) of a prototxt."""
    op_name_map = read_options(options).op_name_map
    net = read_prototxt(os.fspath(model_path))
    rows = []
    for layer in net.layer:
        kind = layer_type(layer, op_name_map)
        rows.append((layer.name, layer.type, row_for(kind) is not None or kind in INPUT_TYPES))
    return net.name, rows
