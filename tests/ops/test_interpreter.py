"""ge.ops.interpreter: feeds, NetOutput order, capture, If subgraphs, errors naming the node."""
from __future__ import annotations

import numpy as np
import pytest

from ge.errors import GeError
from ge.graph import Graph, Tensor
from ge.ops.interpreter import run_graph


def _data(g, name, index):
    n = g.add_node("Data", name, inputs=[None], input_names=["x"], output_names=["y"])
    n.set_attr("index", index)
    return n


def _small_graph():
    g = Graph("g")
    a, b = _data(g, "a", 0), _data(g, "b", 1)
    add = g.add_node("Add", "add", inputs=[(a, 0), (b, 0)])
    relu = g.add_node("Relu", "relu", inputs=[(add, 0)])
    g.add_node("NetOutput", "out", inputs=[(relu, 0), (add, 0)])
    return g


def test_feeds_by_index_and_by_name():
    g = _small_graph()
    a, b = np.array([1.0, -3.0], np.float32), np.array([1.0, 1.0], np.float32)
    by_index = run_graph(g, [a, b])
    by_name = run_graph(g, {"b": b, "a": a})
    for got in (by_index, by_name):
        np.testing.assert_array_equal(got[0], [2.0, 0.0])
        np.testing.assert_array_equal(got[1], [2.0, -2.0])


def test_capture_returns_every_output():
    outs, seen = run_graph(_small_graph(), [np.ones(2, np.float32), np.ones(2, np.float32)],
                           capture=True)
    assert set(seen) == {("a", 0), ("b", 0), ("add", 0), ("relu", 0)}
    np.testing.assert_array_equal(seen[("add", 0)], outs[1])


def _branch(g, parent, name, op):
    sub = Graph(name)
    d = _data(sub, f"{name}/x", 0)
    d.set_attr("_parent_node_index", 1)
    k = sub.add_node("Const", f"{name}/k",
                     attrs={"value": Tensor.from_numpy(np.array(10.0, np.float32))})
    r = sub.add_node(op, f"{name}/op", inputs=[(d, 0), (k, 0)])
    sub.add_node("NetOutput", f"{name}_Node_Output", inputs=[(r, 0)])
    g.add_subgraph(sub, parent)
    return sub


@pytest.mark.parametrize("cond, expected", [(True, [11.0, 12.0]), (False, [-9.0, -8.0])])
def test_if_runs_the_chosen_branch(cond, expected):
    g = Graph("g")
    c, x = _data(g, "c", 0), _data(g, "x", 1)
    node = g.add_node("If", "if", inputs=[(c, 0), (x, 0)], input_names=["cond", "input0"],
                      output_names=["output0"])
    node.subgraphs = {"then_branch": _branch(g, node, "if_0_then_branch", "Add").name,
                      "else_branch": _branch(g, node, "if_1_else_branch", "Sub").name}
    g.add_node("NetOutput", "out", inputs=[(node, 0)])
    out = run_graph(g, [np.array(cond), np.array([1.0, 2.0], np.float32)])
    np.testing.assert_array_equal(out[0], expected)


def test_missing_kernel_names_the_node():
    g = Graph("g")
    x = _data(g, "x", 0)
    node = g.add_node("PartitionedCall", "call", inputs=[(x, 0)])
    g.add_node("NetOutput", "out", inputs=[(node, 0)])
    with pytest.raises(GeError) as err:
        run_graph(g, [np.zeros(1, np.float32)])
    assert "call" in err.value.message


def test_kernel_failure_names_the_node():
    g = Graph("g")
    x = _data(g, "x", 0)
    shape = g.add_node("Const", "s", attrs={"value": Tensor.from_numpy(np.array([5], np.int64))})
    r = g.add_node("Reshape", "bad_reshape", inputs=[(x, 0), (shape, 0)])
    g.add_node("NetOutput", "out", inputs=[(r, 0)])
    with pytest.raises(GeError) as err:
        run_graph(g, [np.zeros(3, np.float32)])
    assert "bad_reshape (Reshape)" in err.value.message
