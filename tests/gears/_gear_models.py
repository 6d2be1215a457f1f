"""The CI-sized ResNet-50, MobileNetV2 and BERT of bench/models with symbolic input dims, so
that onnxruntime runs them at every gear (the compiler gets the gears' static shapes).

BERT's embeddings read constant position / token-type ids of the built sequence length; here
they are sliced from full-length constants by the input's length, as exported BERTs do, so
that one model runs at several sequence lengths.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.models import MODELS, bert  # noqa: E402

# model -> {graph input or output: {axis: symbolic name}}
SYMBOLIC = {
    "resnet50": {"input": {0: "N", 2: "H", 3: "W"}, "output": {0: "N"}},
    "mobilenetv2": {"input": {0: "N", 2: "H", 3: "W"}, "output": {0: "N"}},
    "bert": {"input_ids": {0: "N", 1: "S"}, "attention_mask": {0: "N", 1: "S"},
             "last_hidden_state": {0: "N", 1: "S"}},
}


def _symbolic(model: onnx.ModelProto, dims: dict) -> None:
    for value in list(model.graph.input) + list(model.graph.output):
        for axis, name in dims.get(value.name, {}).items():
            dim = value.type.tensor_type.shape.dim[axis]
            dim.ClearField("dim_value")
            dim.dim_param = name


def _bert_any_length(model: onnx.ModelProto) -> None:
    positions = bert.SIZES["ci"]["positions"]
    inits = {t.name: t for t in model.graph.initializer}
    full = {"embeddings.position_ids": np.arange(positions, dtype=np.int64)[None],
            "embeddings.token_type_ids": np.zeros((1, positions), np.int64)}
    nodes = [helper.make_node("Shape", ["input_ids"], ["ids.shape"]),
             helper.make_node("Gather", ["ids.shape", "one"], ["ids.len"], axis=0)]
    extra = [numpy_helper.from_array(np.array([1], np.int64), "one"),
             numpy_helper.from_array(np.array([0], np.int64), "zero")]
    for name, value in full.items():
        model.graph.initializer.remove(inits[name])
        extra.append(numpy_helper.from_array(value, f"{name}.full"))
        nodes.append(helper.make_node("Slice", [f"{name}.full", "zero", "ids.len", "one"],
                                      [name]))
    model.graph.initializer.extend(extra)
    old = list(model.graph.node)
    del model.graph.node[:]
    model.graph.node.extend(nodes + old)


def gear_model(name: str, path: Path) -> Path:
    """Write the CI-sized model `name` with symbolic dims to `path`."""
    model = MODELS[name](size="ci")
    if name == "bert":
        _bert_any_length(model)
    _symbolic(model, SYMBOLIC[name])
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def feeds(name: str, shapes: dict, seed: int = 0) -> dict:
    """Seeded inputs of those shapes (BERT: ids in the vocabulary, a padded mask)."""
    rng = np.random.default_rng(seed)
    out = {}
    for key, shape in shapes.items():
        if key == "input_ids":
            out[key] = rng.integers(0, bert.SIZES["ci"]["vocab"], shape).astype(np.int64)
        elif key == "attention_mask":
            mask = np.ones(shape, np.int64)
            mask[..., -2:] = 0
            out[key] = mask
        else:
            out[key] = rng.standard_normal(shape).astype(np.float32)
    return out
