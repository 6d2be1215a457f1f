"""Re-export of the ONNX model reader for modules of ge.parser outside the onnx package."""
from .onnx._model import load_model_bytes, read_model_file

__all__ = ["load_model_bytes", "read_model_file"]
