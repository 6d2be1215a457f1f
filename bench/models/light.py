"""The nine "light" model-zoo graphs shipped inside the installed onnx package.

``onnx/backend/test/data/light/light_<name>.onnx`` are full-topology classic CNNs whose weights
are rebuilt at load time by ConstantOfShape nodes, so they are a few KB each yet compile and run
like the real models. ``light_models()`` lists them with their graph inputs; run this file to
print the table. Each ships the expected output for the input ``reference_input`` makes (the one
onnx's backend test runner feeds them: ``arange(n) / n`` in the input's shape).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

import numpy as np
import onnx

__all__ = ["LightModel", "LIGHT_NAMES", "light_dir", "light_models", "reference_input"]

LIGHT_NAMES = (
    "bvlc_alexnet",
    "densenet121",
    "inception_v1",
    "inception_v2",
    "resnet50",
    "shufflenet",
    "squeezenet",
    "vgg19",
    "zfnet512",
)


@dataclass(frozen=True)
class LightModel:
    name: str
    path: str
    opset: int
    inputs: tuple[tuple[str, tuple[int, ...]], ...]
    """(name, shape) of each graph input that is not an initializer."""
    outputs: tuple[tuple[str, tuple[int, ...]], ...]
    reference_output: str
    """The ``light_<name>_output_0.pb`` tensor next to the model, for ``reference_input``."""


def light_dir() -> str:
    """The ``light`` test-data folder of the installed onnx package."""
    return os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")


def _shape(value: onnx.ValueInfoProto) -> tuple[int, ...]:
    return tuple(d.dim_value for d in value.type.tensor_type.shape.dim)


def reference_input(shape: tuple[int, ...]) -> np.ndarray:
    """The float32 input whose output each model's ``reference_output`` holds."""
    n = int(np.prod(shape))
    return (np.arange(n).reshape(shape) / n).astype(np.float32)


def light_models() -> list[LightModel]:
    """The shipped light models that exist in this onnx install, in name order."""
    found = []
    for name in LIGHT_NAMES:
        path = os.path.join(light_dir(), f"light_{name}.onnx")
        if not os.path.isfile(path):
            continue
        model = onnx.load(path)
        weights = {t.name for t in model.graph.initializer}
        opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
        found.append(LightModel(
            name=name,
            path=path,
            opset=opset,
            inputs=tuple((v.name, _shape(v)) for v in model.graph.input
                         if v.name not in weights),
            outputs=tuple((v.name, _shape(v)) for v in model.graph.output),
            reference_output=os.path.join(light_dir(), f"light_{name}_output_0.pb"),
        ))
    return found


if __name__ == "__main__":
    for m in light_models():
        ins = ", ".join(f"{n} {list(s)}" for n, s in m.inputs)
        outs = ", ".join(f"{n} {list(s)}" for n, s in m.outputs)
        sys.stdout.write(f"{m.name:14s} opset {m.opset}  in: {ins}  out: {outs}\n")
