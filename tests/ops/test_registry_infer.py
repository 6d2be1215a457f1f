"""Registry shape, slot naming, attribute defaults and node-level inference."""
from __future__ import annotations

import numpy as np
import pytest

import ge.ops as ops
from ge.errors import GeError
from ge.graph import Graph, Tensor
from ge.graph.types import AttrValueType as VT, DataType as DT
from ops_harness import build_ir

SUBGRAPH_OPS = {"If", "PartitionedCall", "Case"}
NO_KERNEL = {"Data", "AippData", "If", "PartitionedCall", "Case"}  # run by the interpreter itself


def test_every_op_has_inference_and_kernel():
    for name, opdef in ops.all_ops().items():
        assert opdef.family, name
        assert opdef.infer is not None or name in SUBGRAPH_OPS, name
        assert opdef.kernel is not None or name in NO_KERNEL, name
        for spec in opdef.attrs:
            assert isinstance(spec.kind, VT), (name, spec.name)
        assert len({p.kind for p in opdef.inputs if p.kind == "dynamic"}) <= 1


def test_lookup_unknown_op_suggests_close_names():
    with pytest.raises(GeError) as err:
        ops.lookup("Conv2d")
    assert err.value.code == "EZ9999" and "Conv2D" in err.value.message


def test_slot_names_expand_dynamic_ports():
    assert ops.slot_names(ops.get("ConcatV2"), 4) == ["x0", "x1", "x2", "concat_dim"]
    assert ops.slot_names(ops.get("Concat"), 3) == ["concat_dim", "x0", "x1"]
    assert ops.slot_names(ops.get("SplitV"), 3, outputs=True) == ["y0", "y1", "y2"]
    assert ops.slot_names(ops.get("MatMulV2"), 3) == ["x1", "x2", "bias"]


def test_resolved_attrs_fill_defaults_and_keep_extras():
    g = Graph("g")
    n = g.add_node("Conv2D", "conv", attrs={"strides": [1, 1, 1, 1], "pads": [0, 0, 0, 0],
                                            "auto_pad": "VALID"})
    attrs = ops.resolved_attrs(ops.get("Conv2D"), n)
    assert attrs["data_format"] == "NHWC" and attrs["groups"] == 1
    assert attrs["dilations"] == [1, 1, 1, 1] and attrs["auto_pad"] == "VALID"


def test_missing_required_attr_names_node():
    g = Graph("g")
    n = g.add_node("Conv2D", "conv7")
    with pytest.raises(GeError) as err:
        ops.resolved_attrs(ops.get("Conv2D"), n)
    assert "conv7" in err.value.message and "strides" in err.value.message


def test_broadcast_error_names_node():
    _, _, node = build_ir("Add", [("data", np.zeros((2, 3), np.float32)),
                                  ("data", np.zeros((4,), np.float32))])
    with pytest.raises(GeError) as err:
        ops.infer_node(node)
    assert err.value.code == "EZ9999"
    assert "op (Add)" in err.value.message and "[2, 3]" in err.value.message


def test_reshape_needs_constant_shape():
    _, _, node = build_ir("Reshape", [("data", np.zeros((2, 3), np.float32)),
                                      ("data", np.array([3, 2], np.int64))])
    with pytest.raises(GeError) as err:
        ops.infer_node(node)
    assert err.value.code == "EP0150"
    assert "(Reshape)" in err.value.message and "input shape (slot 1)" in err.value.message


def test_reshape_zero_and_minus_one_from_const_value():
    _, _, node = build_ir("Reshape", [("data", np.zeros((2, 3, 4), np.float32)),
                                      ("const", np.array([0, -1], np.int64))])
    assert ops.infer_node(node) == [((2, 12), DT.DT_FLOAT)]
    assert list(node.out_desc(0).shape) == [2, 12]


def test_const_values_mapping_feeds_inference():
    _, _, node = build_ir("Tile", [("data", np.zeros((2, 3), np.float32)),
                                   ("data", np.array([2, 2], np.int64))])
    assert ops.infer_node(node, {"d1": np.array([3, 1])}) == [((6, 3), DT.DT_FLOAT)]


def test_unknown_dims_propagate():
    _, _, node = build_ir("Add", [("data", np.zeros((2, 3), np.float32)),
                                  ("data", np.zeros((3,), np.float32))])
    src = node.input(0)[0]
    src.out_desc(0).set_shape([-1, 3])
    assert ops.infer_node(node) == [((-1, 3), DT.DT_FLOAT)]


@pytest.mark.parametrize("op, inputs, attrs, expected", [
    ("Cast", [np.zeros((2,), np.float32)], {"dst_type": int(DT.DT_FLOAT16)}, DT.DT_FLOAT16),
    ("Less", [np.zeros((2,), np.float32), np.zeros((2,), np.float32)], {}, DT.DT_BOOL),
    ("Shape", [np.zeros((2,), np.float32)], {}, DT.DT_INT32),
    ("Add", [np.zeros((2,), np.int32), np.zeros((2,), np.int64)], {}, DT.DT_INT64),
    ("Mul", [np.zeros((2,), np.float16), np.zeros((2,), np.float32)], {}, DT.DT_FLOAT),
])
def test_dtype_rules(op, inputs, attrs, expected):
    _, _, node = build_ir(op, [("data", x) for x in inputs], attrs)
    assert ops.infer_node(node)[0][1] == expected


def test_infer_keeps_format_and_updates_consumer():
    g, _, node = build_ir("Relu", [("data", np.zeros((1, 2), np.float32))])
    from ge.graph.types import Format
    node.out_desc(0).set_format(Format.FORMAT_NCHW)
    sink = g.add_node("Identity", "sink", inputs=[(node, 0)])
    ops.infer_node(node)
    assert node.out_desc(0).format == Format.FORMAT_NCHW
    assert list(sink.in_desc(0).shape) == [1, 2]


def test_topk_k_out_of_range():
    _, _, node = build_ir("TopK", [("data", np.zeros((2, 3), np.float32)),
                                   ("const", np.array(5, np.int32))], n_out=2)
    with pytest.raises(GeError, match="k = 5"):
        ops.infer_node(node)


def test_const_infer_from_value():
    g = Graph("g")
    c = g.add_node("Const", "c", attrs={"value": Tensor.from_numpy(np.zeros((3, 2), np.int8))})
    assert ops.infer_node(c) == [((3, 2), DT.DT_INT8)]
