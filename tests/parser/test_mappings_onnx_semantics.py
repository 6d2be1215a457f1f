"""Mapping rows that deviate from (or go past) CANN's tables so that the numbers match ONNX:
structure after, a refusal where one remains, and numbers through the reference interpreter
(docs/parser.md, "Deviations")."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from ge.errors import GeError
from ge.graph import DataType
from ge.parser.onnx import parse_onnx

from ._models import model, single, vi
from .test_mappings import attrs, compute_nodes, only, src


def _types(graph):
    return [n.type for n in compute_nodes(graph)]


def test_topk_indices_are_cast_to_int64():
    m = single("TopK", inputs=("x", "k"), outputs=("v", "i"), opset=11,
               inits=[("k", np.array([2], np.int64))])
    g = parse_onnx(m)
    cast = only(g, "Cast")
    assert src(cast, 0).type == "TopK" and cast.input(0)[1] == 1
    assert attrs(cast)["dst_type"] == int(DataType.DT_INT64)


def test_topk_unused_indices_get_no_cast():
    m = model([helper.make_node("TopK", ["x", "k"], ["v", "i"], name="t")],
              [vi("x", [2, 5])], [vi("v", None)], [("k", np.array([2], np.int64))], opset=11)
    assert "Cast" not in _types(parse_onnx(m))


def test_pool_dilations_and_same_lower_become_extra_attrs():
    g = parse_onnx(single("MaxPool", kernel_shape=[2, 2], dilations=[2, 2],
                          auto_pad="SAME_LOWER"))
    a = attrs(only(g, "MaxPoolV3"))
    assert a["dilation"] == [1, 1, 2, 2] and a["auto_pad"] == "SAME_LOWER"
    assert a["padding_mode"] == "SAME"
    g = parse_onnx(single("AveragePool", kernel_shape=[2, 2, 2], dilations=[1, 2, 1],
                          in_shape=(1, 1, 6, 6, 6)))
    assert attrs(only(g, "AvgPool3D"))["dilation"] == [1, 1, 1, 2, 1]
    g = parse_onnx(single("AveragePool", kernel_shape=[2, 2]))
    assert "dilation" not in attrs(only(g, "AvgPoolV2"))


def test_resize_nearest_is_onnx_resize_with_its_attributes():
    m = single("Resize", inputs=("x", "", "s"), opset=13, mode="nearest",
               nearest_mode="floor", coordinate_transformation_mode="asymmetric",
               inits=[("s", np.array([1, 1, 2, 2], np.float32))])
    g = parse_onnx(m)
    a = attrs(only(g, "Resize"))
    assert a["mode"] == "nearest" and a["nearest_mode"] == "floor"
    assert a["coordinate_transformation_mode"] == "asymmetric"
    assert "ResizeNearestNeighborV2" not in _types(g)


def test_resize_axes_become_full_rank_constants():
    m = single("Resize", inputs=("x", "", "", "sz"), opset=18, mode="linear", axes=[3, 2],
               keep_aspect_ratio_policy="not_larger",
               inits=[("sz", np.array([4, 12], np.int64))])
    r = only(parse_onnx(m), "Resize")
    assert src(r, 3).attr("value").numpy().tolist() == [1, 3, 4, 4]
    assert src(r, 2).attr("value").numpy().tolist() == [1, 1, 0.5, 0.5]


def test_resize_axes_with_a_dynamic_sizes_input_is_refused():
    m = single("Resize", inputs=("x", "", "", "sz"), opset=18, axes=[2, 3])
    with pytest.raises(GeError) as err:
        parse_onnx(m)
    assert err.value.code == "E11010" and "sizes" in err.value.message
