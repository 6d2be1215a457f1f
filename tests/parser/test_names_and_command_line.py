"""Valid models and command lines CANN accepts: empty and repeated node names, trimmed
`--input_shape` names, ONNX `--out_nodes` tensor names; and the refusals: a malformed
`--out_nodes` (E10001), symbolic input dims without `--input_shape` (E10001 + WP0140)."""
from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from _samples import SAMPLE_SOC

import ge.runtime

F32 = TensorProto.FLOAT
ORIGIN = "_datadump_original_op_names"


def _save(tmp_path, nodes, inputs, outputs, name="m.onnx"):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, F32, s)
                                           for n, s in inputs],
                              [helper.make_tensor_value_info(n, F32, None) for n in outputs])
    path = tmp_path / name
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    return path


def _compile(atc_main, tmp_path, model, *extra):
    return atc_main("--framework=5", f"--model={model}", "--output=out",
                    f"--soc_version={SAMPLE_SOC}", "--precision_mode=must_keep_origin_dtype",
                    *extra, cwd=tmp_path)


def _mode1_ops(atc_main, tmp_path) -> dict:
    run = atc_main("--mode=1", f"--om={tmp_path / 'out.om'}", f"--json={tmp_path / 'o.json'}",
                   cwd=tmp_path)
    assert run.rc == 0, run.text
    ops = json.loads((tmp_path / "o.json").read_text())["graph"][0]["op"]
    return {op["name"]: op for op in ops}


def _origin(op: dict) -> list:
    (entry,) = [a for a in op["attr"] if a["key"] == ORIGIN]
    return entry["value"]["list"]["s"]


def _repeated_names(tmp_path):
    """Relu 'same' -> Neg 'same' -> Abs '' -> Exp 'Abs_0'... (the generated name of the
    unnamed node is taken too)."""
    n = helper.make_node
    nodes = [n("Relu", ["x"], ["a"], name="same"), n("Neg", ["a"], ["b"], name="same"),
             n("Abs", ["b"], ["c"], name=""), n("Sigmoid", ["c"], ["y"], name="Abs_0")]
    return _save(tmp_path, nodes, [("x", [2, 3])], ["y", "a"])


def test_repeated_and_empty_node_names_compile_and_keep_the_model_names(atc_main, tmp_path):
    model = _repeated_names(tmp_path)
    run = _compile(atc_main, tmp_path, model)
    assert run.rc == 0, run.text
    ops = _mode1_ops(atc_main, tmp_path)
    assert _origin(ops["same"]) == ["same"] and ops["same"]["type"] == "Relu"
    assert _origin(ops["same_1"]) == ["same"] and ops["same_1"]["type"] == "Neg"
    assert _origin(ops["Abs_0_1"]) == ["Abs_0"] and ops["Abs_0_1"]["type"] == "Sigmoid"
    assert ops["Abs_0"]["type"] == "Abs"
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    y, a = ge.runtime.load(str(tmp_path / "out.om")).run([x])
    np.testing.assert_allclose(y, 1 / (1 + np.exp(-np.abs(-np.maximum(x, 0)))), rtol=1e-6)
    np.testing.assert_array_equal(a, np.maximum(x, 0))


def test_out_nodes_finds_a_repeated_name_by_its_first_node_or_its_new_name(atc_main, tmp_path):
    model = _repeated_names(tmp_path)
    run = _compile(atc_main, tmp_path, model, "--out_nodes=same:0;same_1:0")
    assert run.rc == 0, run.text
    x = np.array([[1, -2, 3], [-4, 5, -6]], np.float32)
    first, second = ge.runtime.load(str(tmp_path / "out.om")).run([x])
    np.testing.assert_array_equal(first, np.maximum(x, 0))
    np.testing.assert_array_equal(second, -np.maximum(x, 0))


def _detector(tmp_path):
    n = helper.make_node
    nodes = [n("Relu", ["a"], ["dets"], name="head_dets"), n("Neg", ["b"], ["labels"],
                                                             name="head_labels"),
             n("Add", ["dets", "dets"], ["score"], name="score")]
    return _save(tmp_path, nodes, [("a", [1, 3, 4, 4]), ("b", [1, 10])], ["score"])


def test_trimmed_input_shape_names_and_onnx_output_tensor_names(atc_main, tmp_path):
    n = helper.make_node
    nodes = [n("Relu", ["a"], ["dets"], name="head_dets"),
             n("Neg", ["b"], ["labels"], name="head_labels")]
    model = _save(tmp_path, nodes, [("a", ["N", 3, "H", "W"]), ("b", ["N", 10])],
                  ["dets", "labels"])
    run = _compile(atc_main, tmp_path, model, "--input_shape=a:1,3,224,224; b:1,10",
                   "--out_nodes=labels;dets")
    assert run.rc == 0, run.text
    om = ge.runtime.load(str(tmp_path / "out.om"))
    assert [list(s.shape) for s in om.inputs] == [[1, 3, 224, 224], [1, 10]]
    a = np.random.default_rng(1).standard_normal((1, 3, 224, 224)).astype(np.float32)
    b = np.arange(10, dtype=np.float32).reshape(1, 10)
    labels, dets = om.run([a, b])
    np.testing.assert_array_equal(labels, -b)
    np.testing.assert_array_equal(dets, np.maximum(a, 0))


@pytest.mark.parametrize("value, reason", [
    ("head_dets:x", "The index is not a positive integer."),
    ("a:b:0", "The parameter format is invalid."),
    ("dets;head_labels:0", "Only one of index, top_name and output_name can be used."),
])
def test_malformed_out_nodes_is_e10001(atc_main, tmp_path, value, reason):
    run = _compile(atc_main, tmp_path, _detector(tmp_path), f"--out_nodes={value}")
    assert run.rc == 255 and "Traceback" not in run.text
    assert "Invalid_Argument(E10001)" in run.text and "--out_nodes" in run.text
    assert reason in run.text and value in run.text
    assert not (tmp_path / "out.om").exists()


def test_unknown_output_tensor_is_named(atc_main, tmp_path):
    run = _compile(atc_main, tmp_path, _detector(tmp_path), "--out_nodes=boxes")
    assert run.rc == 255 and "E10016" in run.text and "boxes" in run.text


def test_symbolic_input_dims_need_input_shape(atc_main, tmp_path):
    n = helper.make_node
    model = _save(tmp_path, [n("Add", ["ids", "mask"], ["y"], name="add")],
                  [("ids", ["batch", "seq"]), ("mask", ["batch", 16])], ["y"])
    run = _compile(atc_main, tmp_path, model)
    assert run.rc == 255 and "Traceback" not in run.text
    assert ("Invalid_Argument(E10001): Value NULL for parameter --input_shape is invalid. "
            "Reason: The shapes of inputs contain -1 in the model. You may need to set input "
            "shape to specify its shape.") in run.text
    warnings = [line for line in run.text.splitlines() if "(WP0140)" in line]
    assert len(warnings) == 2
    assert "Input ids has the shape [-1, -1] in the model, unknown at dims 0, 1" in warnings[0]
    assert "Input mask has the shape [-1, 16] in the model, unknown at dims 0;" in warnings[1]
    assert all('--input_shape="ids:1,1;mask:1,16"' in w for w in warnings)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.onnx"]
    fixed = _compile(atc_main, tmp_path, model, "--input_shape=ids:1,16;mask:1,16")
    assert fixed.rc == 0, fixed.text


def test_out_nodes_tensor_names_through_raw_ge_options_give_the_same_om(atc_main, tmp_path):
    from _om_compare import same_om_but_model_def
    model = _detector(tmp_path)
    flag = tmp_path / "flag"
    raw = tmp_path / "raw"
    flag.mkdir(), raw.mkdir()
    run = _compile(atc_main, flag, model, "--out_nodes=labels;dets")
    assert run.rc == 0, run.text
    options = raw / "raw.json"
    options.write_text(json.dumps({"compile options": {"global": {
        "ge.outputNodeName": "labels;dets"}}}))
    run = _compile(atc_main, raw, model, f"--raw_ge_options={options}")
    assert run.rc == 0, run.text
    same_om_but_model_def(flag / "out.om", raw / "out.om")
    outs = [ge.runtime.load(str(d / "out.om")).outputs for d in (flag, raw)]
    assert [[list(o.shape) for o in os] for os in outs] == [[[1, 10], [1, 3, 4, 4]]] * 2
