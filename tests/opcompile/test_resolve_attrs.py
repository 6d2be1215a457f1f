"""OpDef.resolve through ge.compiler.prepare: ONNX auto_pad becomes explicit pads before the
kernel generators see the node (a compiled Conv2D once ignored auto_pad and padded nothing)."""
import numpy as np
import pytest

from ge import ops
from ge.compiler import prepare
from ge.graph import Graph
from ge.graph.tensor import Tensor, TensorDesc
from ge.graph.types import DataType, Format


def _conv_graph(auto_pad: str, x_shape=(1, 1, 5, 5), w_shape=(1, 1, 3, 3), strides=(2, 2)):
    g = Graph("net")
    x = g.add_node("Data", "x", attrs={"index": 0}, input_names=["x"], output_names=["y"])
    d = TensorDesc(list(x_shape), Format.FORMAT_NCHW, DataType.DT_FLOAT)
    x.update_input_desc(0, d)
    x.update_output_desc(0, d)
    w = g.add_node("Const", "w", attrs={"value": Tensor.from_numpy(
        np.arange(np.prod(w_shape), dtype=np.float32).reshape(w_shape))}, output_names=["y"])
    conv = g.add_node("Conv2D", "conv", inputs=[(x, 0), (w, 0)], input_names=["x", "filter"],
                      output_names=["y"], attrs={"strides": [1, 1, *strides],
                                                 "pads": [0, 0, 0, 0], "data_format": "NCHW"})
    conv.set_attr("auto_pad", auto_pad)
    g.add_node("NetOutput", "out", inputs=[(conv, 0)], input_names=["x0"], output_names=[])
    return g, conv


@pytest.mark.parametrize("auto_pad,pads", [("SAME_UPPER", [0, 1, 0, 1]),
                                           ("SAME_LOWER", [1, 0, 1, 0]),
                                           ("VALID", [0, 0, 0, 0])])
def test_conv_auto_pad_becomes_explicit_pads(auto_pad, pads):
    g, conv = _conv_graph(auto_pad, x_shape=(1, 1, 4, 4))
    prepare.prepare(g)
    assert conv.attr("auto_pad") == "NOTSET"
    assert list(conv.attr("pads")) == pads


def test_resolved_attrs_compute_the_same():
    g, conv = _conv_graph("SAME_LOWER", x_shape=(1, 1, 6, 6))
    opdef = ops.get("Conv2D")
    before = ops.resolved_attrs(opdef, conv)
    prepare.prepare(g)
    after = ops.resolved_attrs(opdef, conv)
    x = np.random.default_rng(0).standard_normal((1, 1, 6, 6)).astype(np.float32)
    w = np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3)
    np.testing.assert_array_equal(opdef.kernel([x, w], before)[0],
                                  opdef.kernel([x, w], after)[0])
    assert list(conv.out_desc(0).shape) == [1, 1, 3, 3]


def test_notset_is_left_alone():
    g, conv = _conv_graph("NOTSET")
    prepare.prepare(g)
    assert list(conv.attr("pads")) == [0, 0, 0, 0]
    assert prepare.resolve_attrs(g) == 0


def _pool_graph(op_type, attrs, x_shape=(1, 1, 5, 5)):
    g = Graph("net")
    x = g.add_node("Data", "x", attrs={"index": 0}, input_names=["x"], output_names=["y"])
    d = TensorDesc(list(x_shape), Format.FORMAT_NCHW, DataType.DT_FLOAT)
    x.update_input_desc(0, d)
    x.update_output_desc(0, d)
    pool = g.add_node(op_type, "pool", inputs=[(x, 0)], input_names=["x"], output_names=["y"],
                      attrs=attrs)
    g.add_node("NetOutput", "out", inputs=[(pool, 0)], input_names=["x0"], output_names=[])
    return g, pool


@pytest.mark.parametrize("lower,pads", [(False, [0, 1, 0, 1]), (True, [1, 0, 1, 0])])
def test_pool_same_becomes_calculated(lower, pads):
    attrs = {"ksize": [1, 1, 2, 2], "strides": [1, 1, 1, 1], "padding_mode": "SAME",
             "data_format": "NCHW"}
    g, pool = _pool_graph("AvgPoolV2", attrs)
    if lower:
        pool.set_attr("auto_pad", "SAME_LOWER")
    opdef = ops.get("AvgPoolV2")
    before = ops.resolved_attrs(opdef, pool)
    prepare.prepare(g)
    assert pool.attr("padding_mode") == "CALCULATED" and list(pool.attr("pads")) == pads
    x = np.arange(25, dtype=np.float32).reshape(1, 1, 5, 5)
    np.testing.assert_array_equal(opdef.kernel([x], before)[0],
                                  opdef.kernel([x], ops.resolved_attrs(opdef, pool))[0])
    assert list(pool.out_desc(0).shape) == [1, 1, 5, 5]


def test_dilated_average_pool_counts_only_taps_inside():
    opdef = ops.get("AvgPoolV2")
    attrs = ops.resolved_attrs(opdef, _pool_graph("AvgPoolV2", {
        "ksize": [1, 1, 2, 2], "strides": [1, 1, 1, 1], "pads": [1, 1, 1, 1],
        "data_format": "NCHW"})[1])
    attrs["dilation"] = [1, 1, 2, 2]
    x = np.ones((1, 1, 3, 3), np.float32)
    y = opdef.kernel([x], attrs)[0]
    np.testing.assert_array_equal(y, np.ones((1, 1, 3, 3), np.float32))
