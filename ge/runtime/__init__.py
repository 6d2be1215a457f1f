"""The host runtime: execute an OM of ours on this CPU and compare it with a reference.

    import ge.runtime
    model = ge.runtime.load("net.om")
    outputs = model.run([x])

Command lines: `python3 -m ge.runtime` (msame style) and `python3 -m ge.runtime.compare`
(onnxruntime vs this runtime).  See docs/runtime.md.  The runtime never changes the OM.
"""
from .model import Model, TensorSpec, load
from .session import InferSession

__all__ = ["load", "Model", "TensorSpec", "InferSession"]
