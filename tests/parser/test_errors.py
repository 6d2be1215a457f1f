"""Refusals: bad files, bad graphs, unsupported ops (one E13010 report), opsets, external data."""
from __future__ import annotations

import os

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from ge.errors import GeError
from ge.parser.onnx import parse_onnx, parse_onnx_bytes

from ._models import model, single, vi


def code_of(call, *args, **kw) -> GeError:
    with pytest.raises(GeError) as err:
        call(*args, **kw)
    return err.value


def write(tmp_path, m, name="m.onnx"):
    path = tmp_path / name
    path.write_bytes(m.SerializeToString())
    return str(path)


# -- files -------------------------------------------------------------------------------------

def test_empty_file(tmp_path):
    path = tmp_path / "empty.onnx"
    path.write_bytes(b"")
    err = code_of(parse_onnx, str(path))
    assert err.code == "E10041" and "empty" in err.message and str(path) in err.message


def test_missing_file(tmp_path):
    err = code_of(parse_onnx, str(tmp_path / "nope.onnx"))
    assert err.code == "E10041"


def test_truncated_file(tmp_path):
    data = single("Relu").SerializeToString()
    path = tmp_path / "cut.onnx"
    path.write_bytes(data[: len(data) // 2])
    err = code_of(parse_onnx, str(path))
    assert err.code in ("E10041", "EP0101")


def test_not_onnx(tmp_path):
    path = tmp_path / "x.onnx"
    path.write_bytes(b"#!/bin/sh\necho this is not a model\n" * 4)
    assert code_of(parse_onnx, str(path)).code == "E10041"


def test_model_without_graph():
    m = helper.make_model(helper.make_graph([], "g", [], []))
    m.ClearField("graph")
    assert code_of(parse_onnx_bytes, m.SerializeToString()).code == "E16004"


def test_no_inputs_or_outputs():
    m = model([helper.make_node("Constant", [], ["y"], name="k", value_float=1.0)], [],
              [vi("y", None)])
    assert code_of(parse_onnx, m).code == "E16001"
    m = model([helper.make_node("Relu", ["x"], ["y"], name="r")], [vi("x", [1])], [])
    err = code_of(parse_onnx, m)
    assert err.code == "E16001" and "output" in err.message


# -- graphs ------------------------------------------------------------------------------------

def test_cyclic_graph():
    m = model([helper.make_node("Add", ["x", "b"], ["a"], name="n1"),
               helper.make_node("Relu", ["a"], ["b"], name="n2")],
              [vi("x", [1])], [vi("b", None)])
    err = code_of(parse_onnx, m)
    assert err.code == "EP0101" and "cycle" in err.message and "n1" in err.message


def test_missing_initializer_is_a_dangling_input():
    m = model([helper.make_node("Add", ["x", "w"], ["y"], name="add")],
              [vi("x", [1])], [vi("y", None)])
    err = code_of(parse_onnx, m)
    assert err.code == "EP0101" and "w" in err.message and "add" in err.message


def test_initializer_size_mismatch():
    t = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4], raw_data=b"\0" * 8)
    m = model([helper.make_node("Add", ["x", "w"], ["y"], name="add")],
              [vi("x", [4])], [vi("y", None)])
    m.graph.initializer.append(t)
    err = code_of(parse_onnx, m)
    assert err.code == "EP0101" and "w" in err.message


# -- unsupported ops and opsets ----------------------------------------------------------------

def test_every_unsupported_node_in_one_report():
    m = model([helper.make_node("Relu", ["x"], ["a"], name="ok"),
               helper.make_node("NonMaxSuppression", ["a"], ["b"], name="bad1"),
               helper.make_node("Loop", ["b"], ["c"], name="bad2"),
               helper.make_node("MyOp", ["c"], ["y"], name="bad3", domain="com.example")],
              [vi("x", [1])], [vi("y", None)], extra_opsets=[("com.example", 1)])
    err = code_of(parse_onnx, m)
    assert err.code == "E13010"
    assert err.message == (
        "No operator plugin is registered for Op: bad1, optype: ai.onnx::13::NonMaxSuppression. "
        "Unsupported operators (all of them): bad1 (ai.onnx::13::NonMaxSuppression), "
        "bad2 (ai.onnx::13::Loop), bad3 (com.example::1::MyOp).\nTo add an operator "
        "yourself, write a custom operator package: see docs/custom-ops.md.")


@pytest.mark.parametrize("opset", [7, 19])
def test_opset_out_of_range(opset):
    err = code_of(parse_onnx, single("Relu", opset=opset))
    assert err.code == "E13010"
    assert f"ai.onnx::{opset}::Relu" in err.message
    assert "supports ai.onnx opsets 8 to 18" in err.message


def test_domain_without_opset_import():
    m = model([helper.make_node("NPUGeluV2", ["x"], ["y"], name="g", domain="npu")],
              [vi("x", [1])], [vi("y", None)])
    assert code_of(parse_onnx, m).code == "EP0101"


# -- external data -----------------------------------------------------------------------------

def external_model(location: str, offset=None, length=None):
    t = numpy_helper.from_array(np.arange(4, dtype=np.float32), "w")
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    entries = {"location": location}
    if offset is not None:
        entries["offset"] = offset
    if length is not None:
        entries["length"] = length
    for k, v in entries.items():
        t.external_data.add(key=k, value=v)
    m = model([helper.make_node("Add", ["x", "w"], ["y"], name="add")],
              [vi("x", [4])], [vi("y", None)])
    m.graph.initializer.append(t)
    return m


def test_external_data_inside_model_dir(tmp_path):
    (tmp_path / "w.bin").write_bytes(b"junk" + np.arange(4, dtype=np.float32).tobytes())
    g = parse_onnx(write(tmp_path, external_model("w.bin", offset="4", length="16")))
    const = g.node("w_Initializer_0")
    assert const.attr("value").numpy().tolist() == [0.0, 1.0, 2.0, 3.0]


@pytest.mark.parametrize("location", ["/etc/passwd", "../secret.bin", "sub/../../secret.bin"])
def test_external_data_escaping_the_model_dir(tmp_path, location):
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    (tmp_path / "secret.bin").write_bytes(b"\0" * 16)
    err = code_of(parse_onnx, write(model_dir, external_model(location)))
    assert err.code == "E13026" and location in err.message


def test_external_data_symlink_out(tmp_path):
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    (tmp_path / "secret.bin").write_bytes(b"\0" * 16)
    os.symlink(tmp_path / "secret.bin", model_dir / "w.bin")
    err = code_of(parse_onnx, write(model_dir, external_model("w.bin")))
    assert err.code == "E13026" and "w.bin" in err.message


def test_external_data_missing_file_and_bad_offset(tmp_path):
    assert code_of(parse_onnx, write(tmp_path, external_model("none.bin"))).code == "E13001"
    (tmp_path / "w.bin").write_bytes(b"\0" * 16)
    err = code_of(parse_onnx, write(tmp_path, external_model("w.bin", offset="x")))
    assert err.code == "E10001"


def test_external_data_needs_a_model_directory():
    m = external_model("w.bin")
    assert code_of(parse_onnx_bytes, m.SerializeToString()).code == "E13026"
