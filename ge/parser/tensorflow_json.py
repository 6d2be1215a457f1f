"""`atc --mode=1 --framework=3 --om=<model.pb>`: the original TensorFlow GraphDef as JSON.

protobuf's canonical JSON mapping of the GraphDef (proto field names kept, 2-space indent),
with every constant's `tensor_content` removed (Const values, attribute tensors, function
bodies): weights are bytes nobody reads as base64.  Typed value fields (`float_val`, ...)
are kept.  A `.pbtxt` model is read in its text form.
"""
from __future__ import annotations

from google.protobuf import json_format

from ge.parser.tensorflow import load_graph_def

__all__ = ["model_to_json", "graph_def_to_json"]


def _strip_nodes(nodes) -> None:
    for node in nodes:
        for value in node.attr.values():
            if value.HasField("tensor"):
                value.tensor.ClearField("tensor_content")
            for t in value.list.tensor:
                t.ClearField("tensor_content")


def graph_def_to_json(graph_def) -> str:
    copy = type(graph_def)()
    copy.CopyFrom(graph_def)
    _strip_nodes(copy.node)
    for function in copy.library.function:
        _strip_nodes(function.node_def)
    return json_format.MessageToJson(copy, preserving_proto_field_name=True, indent=2)


def model_to_json(path: str) -> str:
    """JSON text of the GraphDef at `path` (E10041 if it is not a readable GraphDef)."""
    return graph_def_to_json(load_graph_def(path))
