"""ResNet-50 (torchvision layout, v1.5: stride on the 3x3 conv) with random weights.

Graph: Conv7x7/2 - BatchNormalization - Relu - MaxPool3x3/2, then 3+4+6+3 bottleneck blocks
(Conv1x1 - BN - Relu - Conv3x3 - BN - Relu - Conv1x1 - BN, Add with the identity or with a
Conv1x1/BN downsample, Relu), GlobalAveragePool - Flatten - Gemm.

``size="full"``: 224x224 input, widths 64..2048, 1000 classes.
``size="ci"``: the same topology and depth with every width divided by 8 and a 32x32 input.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make ``bench.models`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import onnx  # noqa: E402

from bench.models._graph import Act, GraphBuilder, float_input  # noqa: E402

__all__ = ["build", "SIZES", "DEFAULT_OPSET"]

DEFAULT_OPSET = 13
MIN_OPSET = 11
STAGES = ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2))
"""(planes, blocks, stride of the first block) of layer1..layer4."""
EXPANSION = 4
NUM_CLASSES = 1000

SIZES = {
    "full": {"image": 224, "width_div": 1},
    "ci": {"image": 32, "width_div": 8},
}


def _bottleneck(g: GraphBuilder, x: Act, planes: int, stride: int, name: str) -> Act:
    out_ch = planes * EXPANSION
    y = g.relu(g.batchnorm(g.conv(x, planes, 1, 1, f"{name}.conv1"), f"{name}.bn1"),
               f"{name}.relu1")
    y = g.relu(g.batchnorm(g.conv(y, planes, 3, stride, f"{name}.conv2"), f"{name}.bn2"),
               f"{name}.relu2")
    # Trained ResNets keep the last BN of a residual branch small; it bounds the growth of the
    # residual stream over the 16 blocks.
    y = g.batchnorm(g.conv(y, out_ch, 1, 1, f"{name}.conv3"), f"{name}.bn3", gamma=(0.3, 0.6))
    if stride != 1 or x.channels != out_ch:
        x = g.batchnorm(g.conv(x, out_ch, 1, stride, f"{name}.downsample.0"),
                        f"{name}.downsample.1")
    return g.relu(g.add(y, x, f"{name}.add"), f"{name}.relu3")


def build(size: str = "ci", batch: int = 1, opset: int = DEFAULT_OPSET) -> onnx.ModelProto:
    """ResNet-50 as an ONNX model: ``input`` [batch,3,H,W] -> ``output`` [batch,1000]."""
    if size not in SIZES:
        raise ValueError(f"size must be one of {sorted(SIZES)}, got {size!r}")
    if opset < MIN_OPSET:
        raise ValueError(f"opset must be >= {MIN_OPSET}, got {opset}")
    image, div = SIZES[size]["image"], SIZES[size]["width_div"]
    g = GraphBuilder()
    x = Act("input", 3, g.calibration_images(image))
    x = g.relu(g.batchnorm(g.conv(x, 64 // div, 7, 2, "conv1"), "bn1"), "relu")
    x = g.maxpool(x, 3, 2, "maxpool")
    for layer, (planes, blocks, stride) in enumerate(STAGES, start=1):
        for i in range(blocks):
            x = _bottleneck(g, x, planes // div, stride if i == 0 else 1, f"layer{layer}.{i}")
    pooled = g.node("GlobalAveragePool", [x.name], "avgpool")
    flat = g.node("Flatten", [pooled], "flatten", axis=1)
    g.fc(flat, x.channels, NUM_CLASSES, "fc", out_name="output")
    return g.model(
        f"resnet50_{size}",
        [float_input("input", [batch, 3, image, image])],
        [float_input("output", [batch, NUM_CLASSES])],
        opset,
        doc=f"ResNet-50 ({size}), random weights, seed-fixed",
    )


if __name__ == "__main__":
    from bench.models._cli import main

    sys.exit(main(build, "Write a ResNet-50 ONNX model with random weights.", DEFAULT_OPSET))
