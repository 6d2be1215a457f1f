"""Bad quantization parameters through `pyatc`: a code naming the node and the parameter,
exit 255, no traceback, nothing written (scales of zero, zero points of the wrong type, bad
axes, per-axis sizes, AMCT weight offsets)."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from _samples import SAMPLE_SOC

F32, U8, S8 = TensorProto.FLOAT, TensorProto.UINT8, TensorProto.INT8


def _model(node, inputs, output, inits):
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, t, s)
                                           for n, t, s in inputs],
                              [helper.make_tensor_value_info(output[0], output[1], None)],
                              [numpy_helper.from_array(np.asarray(v), k) for k, v in inits])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


X = [("x", F32, [1, 3, 4, 4])]
CASES = {
    "zero_scale": (
        _model(helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["y"], name="quant_x"),
               X, ("y", U8), [("s", np.float32(0)), ("zp", np.uint8(0))]),
        "EP0140", ["quant_x", "scales", "0.0"]),
    "zero_in_per_channel_weight_scale": (
        _model(helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"],
                                ["y"], name="qconv"),
               [("x", U8, [1, 3, 4, 4])], ("y", U8),
               [("xs", np.float32(0.1)), ("xz", np.uint8(0)),
                ("w", np.ones((2, 3, 1, 1), np.int8)), ("ws", np.array([0.1, 0.0], np.float32)),
                ("wz", np.zeros(2, np.int8)), ("ys", np.float32(0.2)), ("yz", np.uint8(0))]),
        "EP0140", ["qconv", "w_scale", "index 1"]),
    "zero_point_type_mismatch": (
        _model(helper.make_node("MatMulInteger", ["a", "b", "az"], ["y"], name="mmi"),
               [("a", U8, [2, 3])], ("y", TensorProto.INT32),
               [("b", np.ones((3, 2), np.uint8)), ("az", np.int8(1))]),
        "EP0140", ["mmi", "a_zero_point", "DT_INT8", "DT_UINT8"]),
    "float_zero_point": (
        _model(helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["y"], name="quant_f"),
               X, ("y", F32), [("s", np.float32(0.1)), ("zp", np.float32(0))]),
        "E11010", ["quant_f", "y_zero_point has type DT_FLOAT"]),
    "axis_out_of_range": (
        _model(helper.make_node("DequantizeLinear", ["x", "s", "zp"], ["y"], name="deq",
                                axis=4),
               [("x", S8, [1, 3, 4, 4])], ("y", F32),
               [("s", np.ones(3, np.float32)), ("zp", np.zeros(3, np.int8))]),
        "EP0140", ["deq", "axis", "4"]),
    "per_axis_size": (
        _model(helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["y"], name="quant_axis",
                                axis=1),
               X, ("y", S8), [("s", np.ones(4, np.float32)), ("zp", np.zeros(4, np.int8))]),
        "EP0140", ["quant_axis", "scales", "4 values", "axis 1"]),
}


def _amct_offset_w():
    from tests.runtime._quant_models import amct_model
    return amct_model(offset_w=3)[0], "E11010", ["conv1.dequant", "offset_w"]


@pytest.mark.parametrize("case", [*CASES, "amct_weight_offset"])
def test_bad_quantization_parameter_is_refused(atc_main, tmp_path, case):
    model, code, words = _amct_offset_w() if case == "amct_weight_offset" else CASES[case]
    source = tmp_path / "m.onnx"
    source.write_bytes(model.SerializeToString())
    run = atc_main("--framework=5", f"--model={source}", "--output=out",
                   f"--soc_version={SAMPLE_SOC}", cwd=tmp_path)
    assert run.rc == 255, run.text
    assert code in run.text and "Traceback" not in run.text
    for word in words:
        assert word in run.text, (word, run.text)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.onnx"]
