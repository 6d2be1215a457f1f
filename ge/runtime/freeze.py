"""Freezing ONNX graph inputs to constants before parsing (option `pyatc.freeze_inputs`).

Many ONNX test models feed shape-determining values (Reshape `shape`, Expand `shape`, Slice
`starts/ends/axes/steps`, Pad `pads`, TopK `k`, Resize `sizes/scales`, reduce `axes`, ...) as
graph inputs; a static-shape compiler needs them as constants.  The option value names the
inputs and where their values come from:

    pyatc.freeze_inputs = "shape=shape.npy;axes=axes.pb"

(`.npy` numpy files or `.pb` serialized ONNX TensorProtos).  `freeze_inputs(model, values)`
rewrites a ModelProto: each named graph input becomes an initializer holding the value and
leaves `graph.input`.  Nothing else changes, so the model still means the same for those
values.  docs/runtime.md documents the option; ge.parser may read the key as well.
"""
from __future__ import annotations

import os

import numpy as np

from ge.errors import GeError

from ._errors import BAD_INPUT, FILE_OPEN

__all__ = ["OPTION_KEY", "parse_freeze_option", "freeze_inputs", "load_value"]

OPTION_KEY = "pyatc.freeze_inputs"


def load_value(path: str) -> np.ndarray:
    if not os.path.isfile(path):
        raise GeError(FILE_OPEN, {"file": path, "reason": "no such file"})
    if path.lower().endswith(".pb"):
        import onnx
        from onnx import numpy_helper
        tensor = onnx.TensorProto()
        try:
            with open(path, "rb") as f:
                tensor.ParseFromString(f.read())
        except Exception as e:  # protobuf raises its own DecodeError type
            raise GeError(BAD_INPUT, {"reason": f"{path} is not a serialized ONNX "
                                                f"TensorProto: {e}"}) from None
        return numpy_helper.to_array(tensor)
    from ._io import load_npy
    return load_npy(path)


def parse_freeze_option(text: str) -> dict:
    """"a=x.npy;b=y.pb" -> {"a": array, "b": array}."""
    values = {}
    for item in (text or "").split(";"):
        item = item.strip()
        if not item:
            continue
        name, eq, path = item.partition("=")
        if not eq or not name.strip() or not path.strip():
            raise GeError("E10001", {"value": item, "parameter": OPTION_KEY,
                                     "reason": "each entry must be name=path"})
        values[name.strip()] = load_value(path.strip())
    return values


def freeze_inputs(model, values: dict):
    """A copy of `model` (onnx.ModelProto) with the named graph inputs turned into
    initializers holding `values[name]` (cast to the input's declared element type)."""
    import onnx
    from onnx import helper, numpy_helper
    out = onnx.ModelProto()
    out.CopyFrom(model)
    graph = out.graph
    inputs = {i.name: i for i in graph.input}
    for name in values:
        if name not in inputs:
            raise GeError(BAD_INPUT, {"reason": f"{OPTION_KEY}: the model has no graph input "
                                                f"{name!r}; inputs are {', '.join(inputs)}"})
    keep = [i for i in graph.input if i.name not in values]
    for name, value in values.items():
        elem = inputs[name].type.tensor_type.elem_type
        array = np.asarray(value)
        if elem:
            array = array.astype(helper.tensor_dtype_to_np_dtype(elem), copy=False)
        for init in list(graph.initializer):
            if init.name == name:
                graph.initializer.remove(init)
        graph.initializer.append(numpy_helper.from_array(array, name))
    del graph.input[:]
    graph.input.extend(keep)
    return out
