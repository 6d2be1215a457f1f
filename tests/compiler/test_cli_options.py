"""Graph-shaping flags through the command line on a small model: --input_shape, --out_nodes,
--output_type, --input_format.  Structure from the mode-1 JSON, numbers from the OM's graph
against onnxruntime."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from ge.om import om_to_json, read_om
from ge.ops.interpreter import run_graph

from .conftest import compile_args, onnxruntime_outputs


def small_model() -> onnx.ModelProto:
    """x[N,3,8,8] -> Conv -> Relu -> Add(x) -> ReduceMean over H,W -> y[N,3]."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((3, 3, 3, 3)).astype(np.float32) * 0.3, "w")
    b = numpy_helper.from_array(rng.standard_normal(3).astype(np.float32), "b")
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("Add", ["r", "x"], ["s"], name="add"),
             helper.make_node("ReduceMean", ["s"], ["y"], name="mean", axes=[2, 3], keepdims=0)]
    graph = helper.make_graph(
        nodes, "small", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])], initializer=[w, b])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@pytest.fixture
def model(tmp_path) -> Path:
    path = tmp_path / "small.onnx"
    onnx.save(small_model(), str(path))
    return path


def _compile(atc_main, model: Path, *flags: str):
    run = atc_main(*compile_args(model, "m", *flags), cwd=model.parent)
    om = model.parent / "m.om"
    return run, om


def _ops(om: Path) -> dict:
    graph = json.loads(om_to_json(str(om)))["graph"][0]
    return {op["name"]: op for op in graph["op"]}


def _x(batch: int) -> np.ndarray:
    return np.random.default_rng(batch).standard_normal((batch, 3, 8, 8)).astype(np.float32)


def _refused(run, code: str, om: Path) -> None:
    assert run.rc == 255 and f"({code})" in run.stdout, run.text
    assert "Traceback" not in run.stdout + run.stderr
    assert not om.exists()


def test_input_shape_static_override(atc_main, model):
    run, om = _compile(atc_main, model, "--input_shape=x:2,3,8,8")
    assert run.rc == 0, run.text
    ops = _ops(om)
    assert ops["x"]["output_desc"][0]["shape"]["dim"] == [2, 3, 8, 8]
    assert ops["Node_Output"]["input_desc"][0]["shape"]["dim"] == [2, 3]
    (got,) = run_graph(read_om(str(om)).to_graph(), {"x": _x(2)})
    (want,) = onnxruntime_outputs(small_model(), {"x": _x(2)})
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("shape,compiled", [("x:-1,3,8,8", [1, 3, 8, 8]),
                                            ("x:1~4,3,8,8", [4, 3, 8, 8])])
def test_input_shape_dynamic_builds_an_unknown_shape_model(atc_main, model, shape, compiled):
    """docs/dynamic-shapes.md: compiled at the upper bound (unbounded: 1), marked unknown."""
    run, om = _compile(atc_main, model, f"--input_shape={shape}")
    assert run.rc == 0, run.text
    assert read_om(str(om)).header.is_unknow_model == 1
    assert _ops(om)["x"]["output_desc"][0]["shape"]["dim"] == compiled


def test_input_shape_unknown_name(atc_main, model):
    run, om = _compile(atc_main, model, "--input_shape=nope:1,3,8,8")
    _refused(run, "E10016", om)


def test_out_nodes_selects_outputs(atc_main, model):
    run, om = _compile(atc_main, model, "--input_shape=x:1,3,8,8", "--out_nodes=relu:0;mean:0")
    assert run.rc == 0, run.text
    out = _ops(om)["Node_Output"]
    assert [d["shape"]["dim"] for d in out["input_desc"]] == [[1, 3, 8, 8], [1, 3]]
    got = run_graph(read_om(str(om)).to_graph(), {"x": _x(1)})
    source = small_model()
    source.graph.output.insert(0, helper.make_tensor_value_info("r", TensorProto.FLOAT, None))
    want = onnxruntime_outputs(source, {"x": _x(1)})
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


def test_out_nodes_unknown_node(atc_main, model):
    run, om = _compile(atc_main, model, "--input_shape=x:1,3,8,8", "--out_nodes=nothere:0")
    _refused(run, "E10016", om)


def test_output_type_fp16_inserts_cast(atc_main, model):
    run, om = _compile(atc_main, model, "--input_shape=x:1,3,8,8", "--output_type=FP16")
    assert run.rc == 0, run.text
    ops = _ops(om)
    out = ops["Node_Output"]
    assert out["input_desc"][0]["dtype"] == "DT_FLOAT16"
    producer = ops[out["input"][0].rsplit(":", 1)[0]]
    assert producer["type"] == "Cast"
    (got,) = run_graph(read_om(str(om)).to_graph(), {"x": _x(1)})
    (want,) = onnxruntime_outputs(small_model(), {"x": _x(1)})
    assert got.dtype == np.float16
    # fp16 rounding of the result: half an ulp, 2**-11 relative
    np.testing.assert_allclose(got.astype(np.float32), want, rtol=2 ** -10, atol=1e-4)


@pytest.mark.parametrize("value", ["HIF8"])
def test_output_type_refused(atc_main, model, value):
    run, om = _compile(atc_main, model, "--input_shape=x:1,3,8,8", f"--output_type={value}")
    _refused(run, "EP0002", om)


@pytest.mark.parametrize("fmt,layout", [("NCHW", "NCHW"), ("ND", "ND")])
def test_input_format(atc_main, model, fmt, layout):
    run, om = _compile(atc_main, model, "--input_shape=x:1,3,8,8", f"--input_format={fmt}")
    assert run.rc == 0, run.text
    data = _ops(om)["x"]
    assert data["output_desc"][0]["layout"] == layout
    (got,) = run_graph(read_om(str(om)).to_graph(), {"x": _x(1)})
    (want,) = onnxruntime_outputs(small_model(), {"x": _x(1)})
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_input_format_refused(atc_main, model):
    run, om = _compile(atc_main, model, "--input_shape=x:1,3,8,8", "--input_format=NHWC")
    _refused(run, "E10001", om)


def test_input_fp16_nodes_take_fp16_and_compute_in_fp32(atc_main, model):
    run, om = _compile(atc_main, model, "--input_shape=x:2,3,8,8", "--input_fp16_nodes=x")
    assert run.rc == 0, run.text
    ops = _ops(om)
    assert ops["x"]["output_desc"][0]["dtype"] == "DT_FLOAT16"
    assert any(op["type"] == "Cast" for op in ops.values())
    x16 = _x(2).astype(np.float16)
    got = run_graph(read_om(str(om)).to_graph(), [x16])[0]
    want = onnxruntime_outputs(small_model(), {"x": x16.astype(np.float32)})[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())


@pytest.mark.parametrize("name, code", [("nope", "E10016"), ("conv", "E10017")])
def test_input_fp16_nodes_names_checked(atc_main, model, name, code):
    run, om = _compile(atc_main, model, "--input_shape=x:2,3,8,8", f"--input_fp16_nodes={name}")
    _refused(run, code, om)
