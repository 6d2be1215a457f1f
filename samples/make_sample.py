"""Write the bundled sample model: a CI-sized ResNet-50 (same 175-node topology as the full
model, widths divided by 8, 32x32 input) with seeded random weights.

    python3 samples/make_sample.py sample.onnx
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from bench.models import resnet50  # noqa: E402


def main(path: str) -> None:
    import onnx
    onnx.save(resnet50.build(size="ci"), path)
    print(f"wrote {path}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "sample.onnx")
