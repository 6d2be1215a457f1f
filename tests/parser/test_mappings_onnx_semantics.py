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


def test_shape_start_end_slice_the_shape():
    g = parse_onnx(single("Shape", opset=15, start=1, end=-1))
    ss = only(g, "StridedSliceV2")
    assert src(ss, 0).type == "Shape"
    assert src(ss, 1).attr("value").numpy().tolist() == [1]
    assert src(ss, 2).attr("value").numpy().tolist() == [-1]
    assert _types(parse_onnx(single("Shape", opset=15))) == ["Shape"]


@pytest.mark.parametrize("onnx_op,ir_type", [("ArgMax", "ArgMaxV2"), ("ArgMin", "ArgMin")])
def test_arg_select_last_index_is_an_extra_attr(onnx_op, ir_type):
    g = parse_onnx(single(onnx_op, axis=1, keepdims=0, select_last_index=1))
    assert attrs(only(g, ir_type))["select_last_index"] == 1
    assert "ExpandDims" not in _types(g)
    assert "ExpandDims" in _types(parse_onnx(single(onnx_op, axis=1)))    # keepdims = 1


@pytest.mark.parametrize("reduction,ir_type", [("add", "ScatterNdAdd"), ("max", "ScatterNdMax"),
                                               ("min", "ScatterNdMin")])
def test_scatter_nd_reduction_is_tensor_move_and_scatter(reduction, ir_type):
    m = single("ScatterND", inputs=("x", "i", "u"), opset=18, reduction=reduction,
               inits=[("i", np.array([[0]], np.int64)), ("u", np.ones((1, 3, 8, 8), np.float32))])
    g = parse_onnx(m)
    assert src(only(g, ir_type), 0).type == "TensorMove"


def test_scatter_nd_multiply_is_refused():
    m = single("ScatterND", inputs=("x", "i", "u"), opset=18, reduction="mul",
               inits=[("i", np.array([[0]], np.int64)), ("u", np.ones((1, 3, 8, 8), np.float32))])
    with pytest.raises(GeError) as err:
        parse_onnx(m)
    assert err.value.code == "E11010" and "mul" in err.value.message


def test_transpose_without_perm_reverses_a_known_rank():
    t = only(parse_onnx(single("Transpose")), "Transpose")
    assert src(t, 1).attr("value").numpy().tolist() == [3, 2, 1, 0]


def test_split_num_outputs_uneven():
    m = single("Split", outputs=("a", "b", "c"), opset=18, axis=3, num_outputs=3)
    sv = only(parse_onnx(m), "SplitV")
    assert src(sv, 1).attr("value").numpy().tolist() == [3, 3, 2]


def test_pad_axes_become_full_rank_paddings():
    m = single("Pad", inputs=("x", "p", "", "ax"), opset=18,
               inits=[("p", np.array([1, 2, 3, 4], np.int64)), ("ax", np.array([1, -1], np.int64))])
    p = only(parse_onnx(m), "PadV3")
    assert src(p, 1).attr("value").numpy().tolist() == [0, 1, 0, 2, 0, 3, 0, 4]
    assert attrs(p)["paddings_contiguous"] is False


def test_dropout_used_mask_is_fill_of_true():
    m = model([helper.make_node("Dropout", ["x"], ["y", "mask"], name="d")],
              [vi("x", [1, 4])], [vi("y", None), vi("mask", None, TensorProto.BOOL)], opset=13)
    g = parse_onnx(m)
    fill = only(g, "Fill")
    assert src(fill, 0).type == "Shape" and src(fill, 1).attr("value").numpy().tolist() is True


def test_training_dropout_is_refused_unless_ratio_zero():
    def build(ratio):
        return model([helper.make_node("Dropout", ["x", "r", "t"], ["y"], name="d")],
                     [vi("x", [1, 4])], [vi("y", None)],
                     [("r", np.array(ratio, np.float32)), ("t", np.array(True))], opset=13)
    with pytest.raises(GeError) as err:
        parse_onnx(build(0.5))
    assert err.value.code == "E11010" and "random" in err.value.message
    assert "Dropout" in _types(parse_onnx(build(0.0)))


def test_selu_non_default_is_elu_with_scale():
    a = attrs(only(parse_onnx(single("Selu", alpha=2.0, gamma=3.0)), "Elu"))
    assert a["alpha"] == 2.0 and a["scale"] == 3.0


def test_conv_transpose_without_kernel_shape_uses_the_weight_rank():
    m = single("ConvTranspose", inputs=("x", "w"), inits=[("w", np.ones((3, 2, 3, 3), np.float32))])
    assert attrs(only(parse_onnx(m), "Conv2DTranspose"))["strides"] == [1, 1, 1, 1]


def test_batchnorm_training_momentum_is_the_avg_factor():
    m = single("BatchNormalization", inputs=("x", "s", "b", "m", "v"), outputs=("y", "rm", "rv"),
               opset=15, training_mode=1, momentum=0.8,
               inits=[(n, np.ones(3, np.float32)) for n in ("s", "b", "m", "v")])
    a = attrs(only(parse_onnx(m), "BatchNorm"))
    assert a["is_training"] is True and a["exponential_avg_factor"] == pytest.approx(0.2)
