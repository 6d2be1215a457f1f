"""GraphBuilder: eager-style construction of a `ge.graph.Graph` (spec/python-passes.md §5.2).

Owns the builder mechanics only: inputs, constants, graph outputs, scopes and the one node
factory (`_add_op`) that generated op functions and TensorHolder operators go through.  Op
facts (port names, attribute kinds and defaults) come from `ge.ops`; nothing here knows an op.
"""
from __future__ import annotations

import contextlib
import threading
from typing import Iterable, Optional

import numpy as np

from ge.graph import DataType, Format, Graph, Tensor, TensorDesc
from ge.graph.types import AttrValueType as VT

__all__ = ["GraphBuilder", "InputType", "attr_scope", "control_dependency_scope"]


class InputType:
    DATA = "Data"
    REF_DATA = "RefData"
    AIPP_DATA = "AippData"
    ANY_DATA = "AnyData"


_scopes = threading.local()


def _scope_stack(name: str) -> list:
    if not hasattr(_scopes, name):
        setattr(_scopes, name, [])
    return getattr(_scopes, name)


@contextlib.contextmanager
def attr_scope(attrs: dict):
    """Attributes set on every node created inside the block (thread-local)."""
    if not isinstance(attrs, dict):
        raise TypeError("attr_scope expects a dict")
    stack = _scope_stack("attrs")
    stack.append(dict(attrs))
    try:
        yield
    finally:
        stack.pop()


@contextlib.contextmanager
def control_dependency_scope(tensors: Iterable):
    """Nodes created inside the block get control edges from the producers of `tensors`."""
    stack = _scope_stack("ctrl")
    stack.append(list(tensors))
    try:
        yield
    finally:
        stack.pop()


def _check_unsigned(value, bits: int):
    values = value if isinstance(value, (list, tuple)) else [value]
    for v in values:
        if not isinstance(v, int) or isinstance(v, bool) or v < 0 or v >= (1 << bits):
            raise ValueError(f"value {v!r} is out of range for uint{bits}")


class GraphBuilder:
    """Builds one graph; `build_and_reset()` hands it out and closes the builder."""

    def __init__(self, name: Optional[str] = None):
        if name is None:
            name = "graph"
        if not isinstance(name, str):
            raise TypeError("GraphBuilder name must be a str")
        self._graph = Graph(name)
        self._built = False
        self._outputs: dict[int, tuple] = {}
        self._counter = 0

    name = property(lambda self: self._graph.name)

    def __copy__(self):
        raise RuntimeError("GraphBuilder cannot be copied")

    def __deepcopy__(self, memo):
        raise RuntimeError("GraphBuilder cannot be copied")

    def _check_open(self) -> None:
        if self._built:
            raise RuntimeError("GraphBuilder has already been built")

    def _holder(self, node, index: int = 0):
        from .tensor_holder import TensorHolder
        return TensorHolder._make(self, node, index)

    # -- the one node factory -------------------------------------------------------------
    def _add_op(self, op_type: str, inputs: list, attrs: dict | None = None,
                num_outputs: int = 1, input_names=None, output_names=None,
                typed_attrs: dict | None = None, name: str | None = None):
        """Create a node fed by `inputs` (TensorHolder or None); returns the Node."""
        self._check_open()
        edges = []
        for t in inputs:
            if t is None:
                edges.append(None)
                continue
            if t._builder is not self:
                raise ValueError("tensors from different GraphBuilders cannot be mixed")
            edges.append((t._node, t._index))
        self._counter += 1
        node = self._graph.add_node(op_type, name or f"{op_type}_{self._counter - 1}", edges,
                                    num_outputs=num_outputs, input_names=input_names,
                                    output_names=output_names)
        for key, (kind, value) in (typed_attrs or {}).items():
            node.set_attr_kind(key, kind, value)
        for key, value in (attrs or {}).items():
            node.set_attr(key, value)
        for scoped in _scope_stack("attrs"):
            for key, value in scoped.items():
                node.set_attr(key, value)
        for deps in _scope_stack("ctrl"):
            for dep in deps:
                self._graph.add_control_edge(dep._node, node)
        for i, edge in enumerate(edges):  # an input desc starts as its producer's output desc
            if edge is not None:
                node.update_input_desc(i, edge[0].out_desc(edge[1]))
        return node

    # -- inputs ----------------------------------------------------------------------------
    def create_input(self, index: int, *, name: str | None = None,
                     type_str: str = InputType.DATA, data_type: DataType = DataType.DT_FLOAT,
                     format: Format = Format.FORMAT_ND, shape=None):
        if not isinstance(index, int) or isinstance(index, bool) or index < 0:
            raise TypeError("input index must be a non-negative int")
        desc = TensorDesc(shape, format, data_type)
        node = self._add_op(type_str, [None], typed_attrs={"index": (VT.VT_INT, index)},
                            input_names=["x"], output_names=["y"],
                            name=name or f"input_{index}")
        node.update_input_desc(0, desc)
        node.update_output_desc(0, desc)
        return self._holder(node)

    def create_inputs(self, num: int, start_index: int = 0) -> list:
        if not isinstance(num, int) or isinstance(num, bool) or num <= 0:
            raise TypeError("create_inputs expects a positive int")
        return [self.create_input(start_index + i) for i in range(num)]

    def create_variable(self, index: int, name: str):
        node = self._add_op("Variable", [], typed_attrs={"index": (VT.VT_INT, index)},
                            output_names=["y"], name=name)
        return self._holder(node)

    # -- constants -------------------------------------------------------------------------
    def _const(self, value, data_type: DataType, shape=None):
        self._check_open()
        if isinstance(value, Tensor):
            tensor = value
        else:
            values = value if isinstance(value, (list, tuple)) else [value]
            flat = np.asarray(values, dtype=np.dtype(_NP[data_type])).reshape(-1)
            if shape is None:
                dims = [] if not isinstance(value, (list, tuple)) else [len(flat)]
            else:
                dims = [int(d) for d in shape]
                count = int(np.prod(dims)) if dims else 1
                if count != flat.size:
                    raise ValueError(f"{flat.size} values do not fill shape {dims}")
            tensor = Tensor.from_numpy(flat.reshape(dims))
            tensor._dtype = data_type
        node = self._add_op("Const", [], typed_attrs={"value": (VT.VT_TENSOR, tensor)},
                            output_names=["y"])
        node.update_output_desc(0, TensorDesc(list(tensor.shape), Format.FORMAT_ND,
                                              tensor.data_type))
        return self._holder(node)

    def create_const_int64(self, value, shape=None):
        return self._const(value, DataType.DT_INT64, shape)

    def create_const_int32(self, value, shape=None):
        return self._const(value, DataType.DT_INT32, shape)

    def create_const_float(self, value, shape=None):
        return self._const(value, DataType.DT_FLOAT, shape)

    def create_const_uint64(self, value, shape=None):
        _check_unsigned(value, 64)
        return self._const(value, DataType.DT_UINT64, shape)

    def create_const_uint32(self, value, shape=None):
        _check_unsigned(value, 32)
        return self._const(value, DataType.DT_UINT32, shape)

    def create_vector_int64(self, values):
        return self._const(list(values), DataType.DT_INT64)

    def create_scalar_int64(self, value):
        return self._const(int(value), DataType.DT_INT64)

    def create_scalar_int32(self, value):
        return self._const(int(value), DataType.DT_INT32)

    def create_scalar_float(self, value):
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise TypeError("create_scalar_float expects a number")
        return self._const(float(value), DataType.DT_FLOAT)

    def create_scalar_uint64(self, value):
        _check_unsigned(value, 64)
        return self._const(value, DataType.DT_UINT64)

    def create_scalar_uint32(self, value):
        _check_unsigned(value, 32)
        return self._const(value, DataType.DT_UINT32)

    def _const_tensor(self, tensor: Tensor):
        return self._const(tensor, tensor.data_type)

    # -- attributes and control ------------------------------------------------------------
    def set_graph_output(self, tensor, output_index: int) -> None:
        self._check_open()
        if tensor._builder is not self:
            raise ValueError("tensors from different GraphBuilders cannot be mixed")
        self._outputs[int(output_index)] = (tensor._node, tensor._index)

    def set_graph_attr_int64(self, name, value):
        self._graph.set_attr_kind(name, VT.VT_INT, int(value))

    def set_graph_attr_string(self, name, value):
        self._graph.set_attr_kind(name, VT.VT_STRING, str(value))

    def set_graph_attr_bool(self, name, value):
        self._graph.set_attr_kind(name, VT.VT_BOOL, bool(value))

    def set_node_attr_int64(self, tensor, name, value):
        tensor._node.set_attr_kind(name, VT.VT_INT, int(value))

    def set_node_attr_string(self, tensor, name, value):
        tensor._node.set_attr_kind(name, VT.VT_STRING, str(value))

    def set_node_attr_bool(self, tensor, name, value):
        tensor._node.set_attr_kind(name, VT.VT_BOOL, bool(value))

    def set_tensor_attr_int64(self, tensor, name, value):
        tensor._node.set_output_attr(name, tensor._index, int(value))

    def set_tensor_attr_string(self, tensor, name, value):
        tensor._node.set_output_attr(name, tensor._index, str(value))

    def set_tensor_attr_bool(self, tensor, name, value):
        tensor._node.set_output_attr(name, tensor._index, bool(value))

    def add_control_dependency(self, dst_tensor, src_tensors) -> None:
        for src in src_tensors:
            self._graph.add_control_edge(src._node, dst_tensor._node)

    # -- finish ----------------------------------------------------------------------------
    def build_and_reset(self, outputs=None) -> Graph:
        """The built graph: a NetOutput node takes the graph outputs in index order."""
        self._check_open()
        if outputs is not None:
            if not isinstance(outputs, (list, tuple)):
                outputs = [outputs]
            for i, t in enumerate(outputs):
                self.set_graph_output(t, i)
        graph = self._graph
        if self._outputs:
            edges = [self._outputs[i] for i in sorted(self._outputs)]
            net = graph.add_node("NetOutput", "Node_Output", edges,
                                 num_outputs=0, input_names=[f"x{i}" for i in range(len(edges))])
            for i, (src, idx) in enumerate(edges):
                net.update_input_desc(i, src.out_desc(idx))
        self._built = True
        self._graph = Graph(graph.name)
        return graph


_NP = {DataType.DT_INT64: "int64", DataType.DT_INT32: "int32", DataType.DT_FLOAT: "float32",
       DataType.DT_UINT64: "uint64", DataType.DT_UINT32: "uint32"}
