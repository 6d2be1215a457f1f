"""The ONNX protobuf classes without `import onnx`.

`import onnx` imports its helpers and, through them, ml_dtypes, whose import alone costs about
0.8 s of CPU here: more than onnxruntime's whole offline optimisation of ResNet-50 (bench/
bench_compile.py).  The parser needs only the message classes and attribute values, so it loads
the package's generated `onnx_ml_pb2.py` by itself (0.05-0.1 s).  The classes are those of the
`onnx` package (one protobuf descriptor pool), so `onnx.ModelProto` objects of a caller who did
import onnx are accepted as they are, before or after this module loads.
"""
from __future__ import annotations

import importlib.util
import os
import sys

__all__ = ["ModelProto", "GraphProto", "NodeProto", "AttributeProto", "TensorProto",
           "get_attribute_value"]


def _load_pb2():
    if "onnx" in sys.modules:                   # already paid for: use the package's module
        from onnx import onnx_ml_pb2
        return onnx_ml_pb2
    spec = importlib.util.find_spec("onnx")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("the onnx package is not installed")
    path = os.path.join(list(spec.submodule_search_locations)[0], "onnx_ml_pb2.py")
    pb2_spec = importlib.util.spec_from_file_location("_ge_onnx_ml_pb2", path)
    module = importlib.util.module_from_spec(pb2_spec)
    pb2_spec.loader.exec_module(module)
    return module


_pb2 = _load_pb2()
ModelProto = _pb2.ModelProto
GraphProto = _pb2.GraphProto
NodeProto = _pb2.NodeProto
AttributeProto = _pb2.AttributeProto
TensorProto = _pb2.TensorProto

_A = AttributeProto
_VALUE_OF = {   # AttributeProto.type -> the value, as onnx.helper.get_attribute_value gives it
    _A.FLOAT: lambda a: a.f, _A.INT: lambda a: a.i, _A.STRING: lambda a: a.s,
    _A.TENSOR: lambda a: a.t, _A.GRAPH: lambda a: a.g, _A.SPARSE_TENSOR: lambda a: a.sparse_tensor,
    _A.TYPE_PROTO: lambda a: a.tp, _A.FLOATS: lambda a: list(a.floats),
    _A.INTS: lambda a: list(a.ints), _A.STRINGS: lambda a: list(a.strings),
    _A.TENSORS: lambda a: list(a.tensors), _A.GRAPHS: lambda a: list(a.graphs),
    _A.SPARSE_TENSORS: lambda a: list(a.sparse_tensors),
    _A.TYPE_PROTOS: lambda a: list(a.type_protos), _A.UNDEFINED: lambda a: None,
}


def get_attribute_value(attr):
    """The Python value of an AttributeProto (ValueError for a reference attribute or an
    unknown type, as onnx.helper)."""
    if attr.ref_attr_name:
        raise ValueError(f"Cannot get value of reference attribute: {attr.name}")
    fn = _VALUE_OF.get(attr.type)
    if fn is None:
        raise ValueError(f"Unsupported ONNX attribute type {attr.type} of {attr.name}")
    return fn(attr)
