"""ONNX model generators for benchmarks and tests (random weights, fixed seed, no downloads).

``MODELS`` maps a model name to its ``build(size="ci"|"full", batch=1, opset=...)`` function;
``save`` writes a model, with external weights only past protobuf's 2 GiB limit.
"""

from __future__ import annotations

from collections.abc import Callable

import onnx

from bench.models import bert, mobilenetv2, resnet50
from bench.models._cli import save

__all__ = ["MODELS", "save"]

MODELS: dict[str, Callable[..., onnx.ModelProto]] = {
    "resnet50": resnet50.build,
    "mobilenetv2": mobilenetv2.build,
    "bert": bert.build,
}
