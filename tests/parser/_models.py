"""Tiny ONNX models built with onnx.helper for the parser tests."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT


def vi(name: str, shape, elem=F):
    return helper.make_tensor_value_info(name, elem, shape)


def model(nodes, inputs, outputs, inits=(), opset: int = 13, extra_opsets=(), ir_version=8):
    graph = helper.make_graph(list(nodes), "g", list(inputs), list(outputs),
                              initializer=[numpy_helper.from_array(np.asarray(v), n)
                                           for n, v in inits])
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v)
                                                 for d, v in extra_opsets]
    return helper.make_model(graph, opset_imports=opsets, ir_version=ir_version)


def single(op_type, inputs=("x",), outputs=("y",), opset=13, in_shape=(1, 3, 8, 8),
           inits=(), name="n0", **attrs):
    """One node `name` fed by Data `x` (plus initializers), graph outputs = its outputs."""
    node = helper.make_node(op_type, list(inputs), list(outputs), name=name, **attrs)
    init_names = {n for n, _ in inits}
    graph_inputs = [vi(i, list(in_shape)) for i in inputs if i and i not in init_names]
    return model([node], graph_inputs, [vi(o, None) for o in outputs if o], inits, opset)
