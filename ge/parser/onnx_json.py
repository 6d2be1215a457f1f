"""`atc --mode=1 --framework=5 --om=<model.onnx>`: the original ONNX model as JSON.

The JSON is protobuf's canonical JSON mapping of the ONNX ModelProto
(`google.protobuf.json_format.MessageToJson`, proto field names kept, 2-space indent), with
every tensor's `raw_data` removed (initializers, Constant / attribute tensors, sparse tensors,
subgraphs): weights are bytes nobody reads as base64, and dropping them keeps the dump small.
Typed data fields (`float_data`, `int64_data`, ...) are kept.  External data is not read.
"""
from __future__ import annotations

import os

import onnx
from google.protobuf import json_format

from ._onnx_load import load_model_bytes, read_model_file

__all__ = ["model_to_json", "model_proto_to_json"]


def _strip_tensor(t: onnx.TensorProto) -> None:
    t.ClearField("raw_data")


def _strip_graph(g: onnx.GraphProto) -> None:
    for t in g.initializer:
        _strip_tensor(t)
    for s in g.sparse_initializer:
        _strip_tensor(s.values)
        _strip_tensor(s.indices)
    for n in g.node:
        for a in n.attribute:
            if a.HasField("t"):
                _strip_tensor(a.t)
            for t in a.tensors:
                _strip_tensor(t)
            if a.HasField("sparse_tensor"):
                _strip_tensor(a.sparse_tensor.values)
            if a.HasField("g"):
                _strip_graph(a.g)
            for sub in a.graphs:
                _strip_graph(sub)


def model_proto_to_json(model: onnx.ModelProto) -> str:
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    _strip_graph(copy.graph)
    for f in copy.functions:
        for n in f.node:
            for a in n.attribute:
                if a.HasField("t"):
                    _strip_tensor(a.t)
    return json_format.MessageToJson(copy, preserving_proto_field_name=True, indent=2)


def model_to_json(path: str) -> str:
    """JSON text of the ONNX model at `path` (E10041 if it is not a readable ONNX model)."""
    path = os.fspath(path)
    return model_proto_to_json(load_model_bytes(read_model_file(path), path))
