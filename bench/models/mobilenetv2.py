"""MobileNetV2 (torchvision layout) with random weights.

Graph: Conv3x3/2 - BatchNormalization - Clip(0, 6), 17 inverted-residual blocks (Conv1x1 expand -
BN - Clip, depthwise Conv3x3 with ``group`` = channels - BN - Clip, Conv1x1 project - BN, and
for every repeat after a stage's first an Add with the block input: 10 residuals), Conv1x1 to
the last width - BN - Clip, GlobalAveragePool - Reshape [0, -1] - Gemm.

ReLU6 is the opset-11 form of Clip: ``min``/``max`` are scalar initializer inputs.

``size="full"``: 224x224 input, width multiplier 1.0, last width 1280, 1000 classes.
``size="ci"``: the same 17 blocks with width multiplier 0.25, last width 320, 32x32 input.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make ``bench.models`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402
import onnx  # noqa: E402

from bench.models._graph import Act, GraphBuilder, float_input  # noqa: E402

__all__ = ["build", "SIZES", "DEFAULT_OPSET"]

DEFAULT_OPSET = 13
MIN_OPSET = 11
SETTINGS = (
    # expand ratio t, output width c, repeats n, stride of the first block s
    (1, 16, 1, 1),
    (6, 24, 2, 2),
    (6, 32, 3, 2),
    (6, 64, 4, 2),
    (6, 96, 3, 1),
    (6, 160, 3, 2),
    (6, 320, 1, 1),
)
STEM_WIDTH = 32
LAST_WIDTH = 1280
NUM_CLASSES = 1000

SIZES = {
    "full": {"image": 224, "width_mult": 1.0},
    "ci": {"image": 32, "width_mult": 0.25},
}


def _divisible(v: float, divisor: int = 8) -> int:
    """Round a scaled width to a multiple of ``divisor`` without losing more than 10%."""
    out = max(divisor, int(v + divisor / 2) // divisor * divisor)
    if out < 0.9 * v:
        out += divisor
    return out


def _inverted_residual(g: GraphBuilder, x: Act, out_ch: int, stride: int, expand: int,
                       residual: bool, name: str) -> Act:
    hidden = x.channels * expand
    y, i = x, 0
    if expand != 1:
        y = g.relu6(g.batchnorm(g.conv(y, hidden, 1, 1, f"{name}.conv.{i}.0"),
                                f"{name}.conv.{i}.1"), f"{name}.conv.{i}.2")
        i += 1
    y = g.relu6(g.batchnorm(g.conv(y, hidden, 3, stride, f"{name}.conv.{i}.0", group=hidden),
                            f"{name}.conv.{i}.1"), f"{name}.conv.{i}.2")
    y = g.batchnorm(g.conv(y, out_ch, 1, 1, f"{name}.conv.{i + 1}"), f"{name}.conv.{i + 2}")
    if residual:
        y = g.add(x, y, f"{name}.add")
    return y


def build(size: str = "ci", batch: int = 1, opset: int = DEFAULT_OPSET) -> onnx.ModelProto:
    """MobileNetV2 as an ONNX model: ``input`` [batch,3,H,W] -> ``output`` [batch,1000]."""
    if size not in SIZES:
        raise ValueError(f"size must be one of {sorted(SIZES)}, got {size!r}")
    if opset < MIN_OPSET:
        raise ValueError(f"opset must be >= {MIN_OPSET} (Clip bounds as inputs), got {opset}")
    image, mult = SIZES[size]["image"], SIZES[size]["width_mult"]
    g = GraphBuilder()
    x = Act("input", 3, g.calibration_images(image))
    x = g.relu6(g.batchnorm(g.conv(x, _divisible(STEM_WIDTH * mult), 3, 2, "features.0.0"),
                            "features.0.1"), "features.0.2")
    index = 1
    for expand, width, repeats, stride in SETTINGS:
        for r in range(repeats):
            # Repeats after the first keep stride 1 and width: they carry the residual Add
            # (decided on the full widths, so the ci variant has the same topology).
            x = _inverted_residual(g, x, _divisible(width * mult), stride if r == 0 else 1,
                                   expand, r > 0, f"features.{index}")
            index += 1
    last = _divisible(LAST_WIDTH * mult)
    x = g.relu6(g.batchnorm(g.conv(x, last, 1, 1, f"features.{index}.0"),
                            f"features.{index}.1"), f"features.{index}.2")
    pooled = g.node("GlobalAveragePool", [x.name], "avgpool")
    shape = g.const("flatten_shape", np.array([0, -1], np.int64))
    flat = g.node("Reshape", [pooled, shape], "flatten")
    g.fc(flat, last, NUM_CLASSES, "classifier.1", out_name="output")
    return g.model(
        f"mobilenetv2_{size}",
        [float_input("input", [batch, 3, image, image])],
        [float_input("output", [batch, NUM_CLASSES])],
        opset,
        doc=f"MobileNetV2 ({size}), random weights, seed-fixed",
    )


if __name__ == "__main__":
    from bench.models._cli import main

    sys.exit(main(build, "Write a MobileNetV2 ONNX model with random weights.", DEFAULT_OPSET))
