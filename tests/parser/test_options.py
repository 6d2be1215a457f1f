"""Graph-shaping options at parse time: input_shape, input_format, out_nodes (GE option keys)."""
from __future__ import annotations

import json

import pytest
from onnx import helper

from ge.errors import GeError
from ge.graph import Format
from ge.parser.onnx import parse_onnx
from ge.parser.onnx_json import model_proto_to_json

from ._models import model, single, vi


def two_outputs():
    return model([helper.make_node("Relu", ["x"], ["a"], name="r1"),
                  helper.make_node("Neg", ["a"], ["b"], name="n1")],
                 [vi("x", ["N", 3])], [vi("b", None)])


def test_input_shape_overrides_model_dims():
    g = parse_onnx(two_outputs(), {"input_shape": "x:4,3"})
    assert list(g.node("x").get_output_desc(0).shape) == [4, 3]
    assert list(g.node("x").get_input_desc(0).shape) == [4, 3]


def test_symbolic_dims_stay_unknown_without_input_shape():
    g = parse_onnx(two_outputs())
    assert list(g.node("x").get_output_desc(0).shape) == [-1, 3]


@pytest.mark.parametrize("value", ["x:-1,3", "x:1~4,3"])
def test_range_form_leaves_varying_dims_unknown(value):
    """ge.compiler.dynamic_shape applies the ranges; the parser gives -1 where a dim varies."""
    g = parse_onnx(two_outputs(), {"input_shape": value})
    assert list(g.node("x").get_output_desc(0).shape) == [-1, 3]


@pytest.mark.parametrize("value,code", [("x:0,3", "E10011"), ("x:a,3", "E10002"),
                                        ("x", "E10002"), ("y:1,3", "E10016"),
                                        ("x:1,3,5", "E10001")])
def test_input_shape_refusals(value, code):
    with pytest.raises(GeError) as err:
        parse_onnx(two_outputs(), {"input_shape": value})
    assert err.value.code == code


@pytest.mark.parametrize("value,fmt", [("ND", Format.FORMAT_ND), ("", Format.FORMAT_NCHW),
                                       ("NCDHW", Format.FORMAT_NCDHW)])
def test_input_format(value, fmt):
    g = parse_onnx(two_outputs(), {"input_format": value})
    desc = g.node("x").get_output_desc(0)
    assert desc.format == fmt and desc.origin_format == fmt


def test_bad_input_format():
    with pytest.raises(GeError) as err:
        parse_onnx(two_outputs(), {"input_format": "NHWC"})
    assert err.value.code == "E10001" and "NCHW, ND or NCDHW" in err.value.message


def test_out_nodes_select_outputs():
    g = parse_onnx(two_outputs(), {"ge.outputNodeName": "r1:0;n1:0"})
    out = g.output_node()
    assert [out.input(i)[0].name for i in range(out.num_inputs)] == ["r1", "n1"]


@pytest.mark.parametrize("value,code", [("zz:0", "E10016"), ("r1:1", "E10003"),
                                        ("r1", "E10016"), ("r1:x", "E10001"),
                                        ("r1:0:0", "E10001"), ("a;r1:0", "E10001")])
def test_out_nodes_refusals(value, code):
    with pytest.raises(GeError) as err:
        parse_onnx(two_outputs(), {"ge.outputNodeName": value})
    assert err.value.code == code


def test_model_json_omits_raw_data():
    import numpy as np
    m = single("Add", ("x", "w"), inits=[("w", np.ones((3,), np.float32))], in_shape=(3,))
    doc = json.loads(model_proto_to_json(m))
    (init,) = doc["graph"]["initializer"]
    assert init["name"] == "w" and init["dims"] == ["3"] and "raw_data" not in init
    assert doc["graph"]["node"][0]["op_type"] == "Add"
    assert m.graph.initializer[0].raw_data  # the caller's model is untouched
