"""ONNX graphs are single-assignment (issue #19 item 9): a tensor written twice or a graph input
declared twice is refused as an invalid model (EP0101) naming the tensor, in the root graph and
in branches, instead of an OM that silently dropped one producer."""
from __future__ import annotations

import pytest
from onnx import TensorProto, helper

from ge.errors import GeError
from ge.parser.onnx import parse_onnx

F = TensorProto.FLOAT


def _model(inputs, nodes, outputs, initializers=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def _vi(name):
    return helper.make_tensor_value_info(name, F, [2, 3])


def _refused(model, *words):
    with pytest.raises(GeError) as err:
        parse_onnx(model)
    assert err.value.code == "EP0101"
    for word in words:
        assert word in err.value.params["reason"], err.value.params["reason"]


def test_two_nodes_writing_one_tensor():
    _refused(_model([_vi("x")], [helper.make_node("Relu", ["x"], ["y"], name="a"),
                                 helper.make_node("Sigmoid", ["x"], ["y"], name="b")],
                    [_vi("y")]), "tensor y", "node a", "node b")


def test_a_node_overwriting_a_graph_input():
    _refused(_model([_vi("x")], [helper.make_node("Relu", ["x"], ["x"], name="r")], [_vi("x")]),
             "tensor x", "graph input", "node r")


def test_a_graph_input_declared_twice():
    _refused(_model([_vi("x"), _vi("x")], [helper.make_node("Relu", ["x"], ["y"])], [_vi("y")]),
             "graph input x is declared twice")


def test_a_branch_writing_one_tensor_twice():
    branch = helper.make_graph([helper.make_node("Relu", ["x"], ["t"], name="p"),
                                helper.make_node("Abs", ["x"], ["t"], name="q")], "then", [],
                               [_vi("t")])
    other = helper.make_graph([helper.make_node("Neg", ["x"], ["u"])], "else", [], [_vi("u")])
    cond = helper.make_tensor_value_info("c", TensorProto.BOOL, [])
    node = helper.make_node("If", ["c"], ["y"], name="if", then_branch=branch, else_branch=other)
    _refused(_model([cond, _vi("x")], [node], [_vi("y")]), "tensor t", "then_branch/p",
             "then_branch/q")


def test_an_initializer_defaulting_a_graph_input_is_still_valid():
    from onnx import numpy_helper
    import numpy as np
    init = numpy_helper.from_array(np.ones((2, 3), np.float32), "x")
    graph = parse_onnx(_model([_vi("x")], [helper.make_node("Relu", ["x"], ["y"])], [_vi("y")],
                              [init]))
    assert any(n.type == "Relu" for n in graph.get_all_nodes())
