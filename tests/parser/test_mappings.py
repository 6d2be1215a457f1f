"""Mapping rows: ONNX node → IR op types, port wiring and attribute conversion (spec §2)."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from ge.errors import GeError
from ge.graph import DataType, Format
from ge.parser.onnx import KEYS, MAPPINGS, parse_onnx

from ._models import model, single, vi


def compute_nodes(graph):
    return [n for n in graph.nodes if n.type not in ("Data", "NetOutput")]


def only(graph, op_type):
    (node,) = [n for n in graph.nodes if n.type == op_type]
    return node


def attrs(node):
    return {k: v for k, _, v in node.attr_items() if not k.startswith("_")}


def src(node, slot):
    edge = node.input(slot)
    return None if edge is None else edge[0]


W = ("w", np.ones((4, 3, 3, 3), np.float32))


def test_table_keys_follow_spec_format():
    assert KEYS["ai.onnx::13::Conv"].ir_types[0] == "Conv2D"
    assert "ai.onnx::19::Relu" not in KEYS and "ai.onnx::7::Relu" not in KEYS
    assert "ai.onnx::6::HardSigmoid" in KEYS and "ai.onnx::13::HardSwish" not in KEYS
    assert "npu::1::NPUGeluV2" in KEYS
    assert all(row.convert is not None for row in MAPPINGS)


def test_conv2d_attribute_layout():
    g = parse_onnx(single("Conv", ("x", "w"), inits=[W], kernel_shape=[3, 3], strides=[2, 1],
                          dilations=[1, 2], pads=[1, 2, 3, 4], group=1))
    conv = only(g, "Conv2D")
    assert conv.name == "n0" and conv.origin == ["n0"]
    a = attrs(conv)
    assert a["strides"] == [1, 1, 2, 1] and a["dilations"] == [1, 1, 1, 2]
    assert a["pads"] == [1, 3, 2, 4]  # [top, bottom, left, right] from [x1_b, x2_b, x1_e, x2_e]
    assert a["groups"] == 1 and a["data_format"] == "NCHW" and a["auto_pad"] == "NOTSET"
    assert conv.input_names[:2] == ["x", "filter"] and src(conv, 0).type == "Data"
    assert src(conv, 1).type == "Const" and conv.input(2) is None
    assert conv.in_desc(0).format == Format.FORMAT_NCHW


def test_conv1d_expands_through_unsqueeze_and_squeeze():
    w = ("w", np.ones((4, 3, 3), np.float32))
    g = parse_onnx(single("Conv", ("x", "w"), inits=[w], in_shape=(1, 3, 16), strides=[2],
                          pads=[1, 0]))
    types = sorted(n.type for n in compute_nodes(g))
    assert types == ["Const", "Conv2D", "Squeeze", "Unsqueeze", "Unsqueeze"]
    conv = only(g, "Conv2D")
    assert attrs(conv)["strides"] == [1, 1, 1, 2] and attrs(conv)["pads"] == [0, 0, 1, 0]
    assert conv.name.startswith("PartitionedCall_n0_")
    assert attrs(only(g, "Squeeze"))["axis"] == [2]


def test_conv3d():
    w = ("w", np.ones((2, 3, 3, 3, 3), np.float32))
    g = parse_onnx(single("Conv", ("x", "w"), inits=[w], in_shape=(1, 3, 8, 8, 8),
                          pads=[1, 1, 1, 0, 0, 0]))
    a = attrs(only(g, "Conv3D"))
    assert a["pads"] == [1, 0, 1, 0, 1, 0] and a["data_format"] == "NCDHW"


@pytest.mark.parametrize("trans_b", [0, 1])
def test_gemm_with_bias_is_matmul_plus_add(trans_b):
    b = ("b", np.ones((4, 5) if not trans_b else (5, 4), np.float32))
    c = ("c", np.ones((5,), np.float32))
    g = parse_onnx(single("Gemm", ("x", "b", "c"), in_shape=(2, 4), inits=[b, c],
                          transB=trans_b))
    mm, add = only(g, "MatMulV2"), only(g, "Add")
    assert attrs(mm) == {"transpose_x1": False, "transpose_x2": bool(trans_b)}
    assert src(add, 0) is mm and src(add, 1).type == "Const"
    assert g.output_node().input(0)[0] is add


def test_gemm_alpha_beta_become_muls():
    c = ("c", np.ones((5,), np.float32))
    b = ("b", np.ones((4, 5), np.float32))
    g = parse_onnx(single("Gemm", ("x", "b", "c"), in_shape=(2, 4), inits=[b, c], alpha=2.0,
                          beta=0.5))
    values = sorted(attrs(n)["value"] for n in g.nodes if n.type == "Muls")
    assert values == [0.5, 2.0]


def test_matmul_is_batch_matmul_v2():
    g = parse_onnx(single("MatMul", ("x", "b"), in_shape=(2, 4),
                          inits=[("b", np.ones((4, 5), np.float32))]))
    mm = only(g, "BatchMatMulV2")
    assert attrs(mm) == {"adj_x1": False, "adj_x2": False} and mm.input_names[:2] == ["x1", "x2"]


def test_maxpool_ceil_mode_and_pads():
    g = parse_onnx(single("MaxPool", kernel_shape=[3, 3], strides=[2, 2], pads=[0, 1, 1, 0],
                          ceil_mode=1))
    a = attrs(only(g, "MaxPoolV3"))
    assert a["ksize"] == [1, 1, 3, 3] and a["strides"] == [1, 1, 2, 2]
    assert a["pads"] == [0, 1, 1, 0] and a["ceil_mode"] is True
    assert a["padding_mode"] == "CALCULATED" and a["data_format"] == "NCHW"


def test_maxpool_auto_pad_same():
    g = parse_onnx(single("MaxPool", kernel_shape=[2, 2], auto_pad="SAME_UPPER"))
    assert attrs(only(g, "MaxPoolV3"))["padding_mode"] == "SAME"


def test_maxpool_used_indices_output_is_refused():
    m = single("MaxPool", outputs=("y", "idx"), kernel_shape=[2, 2])
    with pytest.raises(GeError) as err:
        parse_onnx(m)
    assert err.value.code == "E11010" and "idx" in err.value.message


def test_average_pool_exclusive():
    g = parse_onnx(single("AveragePool", kernel_shape=[2, 2], count_include_pad=1))
    a = attrs(only(g, "AvgPoolV2"))
    assert a["exclusive"] is False and a["ksize"] == [1, 1, 2, 2]


def test_slice_opset9_attributes_become_consts():
    g = parse_onnx(single("Slice", opset=9, starts=[0, 1], ends=[1, 3], axes=[0, 2]))
    ss = only(g, "StridedSliceV2")
    values = [src(ss, i).attr("value").numpy().tolist() for i in (1, 2, 3)]
    assert values == [[0, 1], [1, 3], [0, 2]]
    assert src(ss, 1).attr("value").data_type == DataType.DT_INT64


def test_slice_opset13_is_one_to_one():
    inits = [("s", np.array([0], np.int64)), ("e", np.array([2], np.int64)),
             ("a", np.array([1], np.int64)), ("st", np.array([1], np.int64))]
    g = parse_onnx(single("Slice", ("x", "s", "e", "a", "st"), inits=inits))
    ss = only(g, "StridedSliceV2")
    assert ss.name == "n0" and ss.input_names == ["x", "begin", "end", "axes", "strides"]
    assert [src(ss, i).origin for i in range(1, 5)] == [["s"], ["e"], ["a"], ["st"]]


def test_concat_is_concat_d():
    m = model([helper.make_node("Concat", ["a", "b", "c"], ["y"], name="cat", axis=1)],
              [vi("a", [1, 2]), vi("b", [1, 3]), vi("c", [1, 4])], [vi("y", None)])
    g = parse_onnx(m)
    cat = only(g, "ConcatD")
    assert attrs(cat) == {"concat_dim": 1, "N": 3}
    assert cat.input_names == ["x0", "x1", "x2"]
    assert [src(cat, i).name for i in range(3)] == ["a", "b", "c"]


def test_concat_single_input_is_identity_and_axis_required():
    g = parse_onnx(single("Concat", axis=0))
    assert [n.type for n in compute_nodes(g)] == ["Identity"]
    with pytest.raises(GeError) as err:
        parse_onnx(single("Concat"))
    assert err.value.code == "E11010" and "axis" in err.value.message


@pytest.mark.parametrize("opset,attr,axes", [(11, {}, [1]), (11, {"axis": 2}, [2]),
                                             (13, {}, [-1]), (13, {"axis": 1}, [1])])
def test_softmax_axis_by_opset(opset, attr, axes):
    g = parse_onnx(single("Softmax", opset=opset, **attr))
    a = attrs(only(g, "SoftmaxV2"))
    assert a["axes"] == axes
    assert a.get("need_fusion") == (1 if opset < 13 else None)


def test_transpose_perm_const():
    g = parse_onnx(single("Transpose", perm=[0, 2, 3, 1]))
    t = only(g, "Transpose")
    perm = src(t, 1).attr("value")
    assert perm.numpy().tolist() == [0, 2, 3, 1] and perm.data_type == DataType.DT_INT32
    assert t.name.startswith("PartitionedCall_n0_") and t.origin == ["n0"]


def test_cast_dst_type_is_ge_enum():
    g = parse_onnx(single("Cast", to=TensorProto.FLOAT16))
    assert attrs(only(g, "Cast"))["dst_type"] == int(DataType.DT_FLOAT16)


def test_leaky_relu_default_is_onnx_default():
    g = parse_onnx(single("LeakyRelu"))
    assert attrs(only(g, "LeakyRelu"))["negative_slope"] == pytest.approx(0.01)


def test_split_equal_and_sizes():
    g = parse_onnx(single("Split", outputs=("a", "b"), opset=11, axis=1))
    sp = only(g, "Split")
    assert attrs(sp)["num_split"] == 2 and sp.output_names == ["y0", "y1"]
    assert src(sp, 0).attr("value").numpy().tolist() == 1
    g = parse_onnx(single("Split", outputs=("a", "b"), opset=11, axis=1, split=[1, 2]))
    sv = only(g, "SplitV")
    assert src(sv, 1).attr("value").numpy().tolist() == [1, 2]


def test_reduce_mean_axes_attribute_to_const():
    g = parse_onnx(single("ReduceMean", opset=13, axes=[2, 3], keepdims=0))
    r = only(g, "ReduceMean")
    assert attrs(r)["keep_dims"] is False
    assert src(r, 1).attr("value").numpy().tolist() == [2, 3]


def test_dropout_unused_mask_is_dropped():
    # a used mask: test_mappings_onnx_semantics.test_dropout_used_mask_is_fill_of_true
    m = model([helper.make_node("Dropout", ["x"], ["y", "mask"], name="d", ratio=0.3),
               helper.make_node("Relu", ["y"], ["z"], name="r")],
              [vi("x", [1, 4])], [vi("z", None)], opset=9)
    g = parse_onnx(m)
    d = only(g, "Dropout")
    assert attrs(d)["dropout_ratio"] == pytest.approx(0.3) and d.num_outputs == 1
    assert "Fill" not in [n.type for n in g.nodes]


def test_lrn_attributes():
    g = parse_onnx(single("LRN", size=5, alpha=1e-4, beta=0.75, bias=2.0, opset=9))
    a = attrs(only(g, "LRN"))
    assert a["depth_radius"] == 2 and a["bias"] == 2.0 and a["beta"] == 0.75
    assert a["alpha"] == pytest.approx(1e-4 / 5) and a["norm_region"] == "ACROSS_CHANNELS"


def test_where_maps_to_select_v2_ports():
    m = model([helper.make_node("Where", ["c", "a", "b"], ["y"], name="w")],
              [vi("c", [2], TensorProto.BOOL), vi("a", [2]), vi("b", [2])], [vi("y", None)])
    sel = only(parse_onnx(m), "SelectV2")
    assert sel.input_names == ["condition", "then", "else"]


def test_constant_node_and_value_forms():
    m = model([helper.make_node("Constant", [], ["k"], name="k0", value_floats=[1.0, 2.0]),
               helper.make_node("Add", ["x", "k"], ["y"], name="add")],
              [vi("x", [2])], [vi("y", None)])
    g = parse_onnx(m)
    k = g.node("k0")
    assert k.type == "Const" and k.attr("value").numpy().tolist() == [1.0, 2.0]


def test_unnamed_nodes_get_type_counter_names():
    m = model([helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Relu", ["a"], ["y"])],
              [vi("x", [2])], [vi("y", None)])
    assert [n.name for n in compute_nodes(parse_onnx(m))] == ["Relu_0", "Relu_1"]


def test_if_subgraphs_with_captures():
    then_g = helper.make_graph([helper.make_node("Add", ["x", "k"], ["t"], name="add")],
                               "then", [], [vi("t", None)])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"], name="neg")],
                               "else", [], [vi("e", None)])
    m = model([helper.make_node("If", ["c"], ["y"], name="if0", then_branch=then_g,
                                else_branch=else_g)],
              [vi("c", [], TensorProto.BOOL), vi("x", [2])], [vi("y", None)],
              inits=[("k", np.ones(2, np.float32))])
    g = parse_onnx(m)
    node = only(g, "If")
    assert node.input_names == ["cond", "input0", "input1"]  # captures sorted: k, x
    assert [src(node, i).name for i in range(3)] == ["c", "k_Initializer_0", "x"]
    assert node.subgraphs == {"then_branch": "if0_0_then_branch",
                              "else_branch": "if0_1_else_branch"}
    then_sub = g.get_subgraph("if0_0_then_branch")
    assert then_sub.parent_node is node
    datas = then_sub.data_nodes()
    assert [(d.name, d.attr("index"), d.attr("_parent_node_index")) for d in datas] == \
        [("k", 0, 1), ("x", 1, 2)]
    assert then_sub.node("if0_0_then_branch/add").type == "Add"
    out = then_sub.output_node()
    assert out.name == "if0_0_then_branch_Node_Output"
    assert out.get_input_attr("_parent_node_index", 0) == 0
