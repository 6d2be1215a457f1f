"""Quantized models compile, run on the host runtime and compute exactly what onnxruntime
computes (integer outputs bit-equal, float outputs to float32 rounding): every ONNX
quantization op per tensor and per axis, int8 and uint8, through the generated C kernels and
through the numpy reference kernels (AiCpu); a classifier quantized by onnxruntime's own tools
(generated models); AMCT's deployable form against its op definitions written out in numpy.
"""
from __future__ import annotations

import json

import numpy as np
import onnx
import pytest

from _build import compile_to_om
from _netron import needs_netron, netron_view
from _quant_models import (amct_expected, amct_model, quant_ops_inputs, quant_ops_model,
                           quantized_classifiers, small_classifier)

import ge.runtime
from ge.om import om_to_json
from ge.runtime.compare import compare_model

KEEP = {"ge.exec.precision_mode": "must_keep_origin_dtype"}
QUANT_OPS = {"Quantize", "DequantizeLinear", "DynamicQuantizeLinear", "MatMulInteger",
             "ConvInteger", "QLinearConv", "QLinearMatMul"}


@pytest.mark.parametrize("engines", ["AiCore", "AiCpu"])
def test_every_quant_op_matches_onnxruntime_exactly(tmp_path, engines):
    options = dict(KEEP)
    if engines == "AiCpu":  # the numpy reference kernels
        options["ge.exec.exclude_engines"] = "AiCore"
    model = quant_ops_model()
    om = compile_to_om(model, tmp_path / "q.om", options)
    loaded = ge.runtime.load(om)
    placed = loaded.engines
    ops = {step.name: step.type for step in loaded._plan.root.steps}
    assert {ops[n] for n in placed} >= QUANT_OPS
    assert {placed[n] for n in placed if ops[n] in QUANT_OPS} == {engines}
    result = compare_model(model, loaded, quant_ops_inputs(), rtol=0.0, atol=0.0)
    assert result.ok, [(d.reference, d.max_abs, d.first_bad) for d in result.outputs if not d.ok]
    assert len(result.outputs) == 13


def test_rounding_is_half_to_even_and_saturating(tmp_path):
    model = quant_ops_model()
    om = ge.runtime.load(compile_to_om(model, tmp_path / "q.om", KEEP))
    inputs = quant_ops_inputs()
    outs = dict(zip([o.name for o in model.graph.output], om.run(inputs)))
    t = inputs[1]
    ties = outs["q_ties"]                    # t / 0.5, zero point 0, int8
    assert ties[list(t).index(np.float32(0.25))] == 0      # 0.5 -> 0
    assert ties[list(t).index(np.float32(0.75))] == 2      # 1.5 -> 2
    assert ties[list(t).index(np.float32(1.25))] == 2      # 2.5 -> 2
    assert ties[list(t).index(np.float32(-1.25))] == -2    # -2.5 -> -2
    assert ties[list(t).index(np.float32(3e4))] == 127
    assert ties[list(t).index(np.float32(-3e4))] == -128
    assert outs["q_saturate"].dtype == np.uint8 and outs["q_saturate"].min() == 0


@pytest.fixture(scope="module")
def classifiers(tmp_path_factory):
    root = tmp_path_factory.mktemp("quantized")
    float_path = root / "classifier.onnx"
    onnx.save(small_classifier(), str(float_path))
    return quantized_classifiers(str(float_path), root)


# Each quantization op's C kernel is checked above; the models run the reference kernels
# (no C compile: CI time) except one, which runs its generated kernels end to end.
@pytest.mark.parametrize("name, engines", [
    ("dynamic_u8", "AiCpu"), ("dynamic_s8_per_channel", "AiCpu"), ("static_qdq", "AiCpu"),
    ("static_qop_u8", "AiCpu"), ("static_qop_s8", "AiCore")])
def test_onnxruntime_quantized_classifier_matches(classifiers, tmp_path, name, engines):
    model = onnx.load(classifiers[name])
    options = dict(KEEP, **({"ge.exec.exclude_engines": "AiCore"} if engines == "AiCpu" else {}))
    om = compile_to_om(model, tmp_path / f"{name}.om", options)
    result = compare_model(model, om, rtol=1e-6, atol=1e-6, seed=0)
    assert result.ok, [(d.name, d.max_abs, d.max_rel) for d in result.outputs]


@pytest.fixture(scope="module")
def amct(tmp_path_factory):
    model, params = amct_model()
    path = compile_to_om(model, tmp_path_factory.mktemp("amct") / "amct.om", KEEP)
    return path, params


def test_amct_deployable_model_computes_its_op_definitions(amct):
    path, params = amct
    om = ge.runtime.load(path)
    types = {step.type for step in om._plan.root.steps}
    assert {"AscendQuant", "AscendDequant", "AscendAntiQuant", "Conv2D"} <= types
    x = np.random.default_rng(2).standard_normal((1, 3, 8, 8)).astype(np.float32)
    got = om.run([x])
    for ours, want in zip(got, amct_expected(x, params)):
        np.testing.assert_allclose(ours, want, rtol=1e-6, atol=1e-6)


@needs_netron
def test_amct_ops_show_in_mode1_json_and_netron(amct):
    path, params = amct
    ops = {op["name"]: op for op in json.loads(om_to_json(path))["graph"][0]["op"]}
    quant = {a["key"]: a["value"] for a in ops["conv1.quant"]["attr"]}
    assert ops["conv1.quant"]["type"] == "AscendQuant"
    assert quant["scale"]["f"] == params["scale1"] and quant["offset"]["f"] == params["offset1"]
    assert ops["conv1.dequant"]["type"] == "AscendDequant"
    (graph,) = netron_view(path)["graphs"]
    seen = {n["name"]: n["type"] for n in graph["nodes"]}
    assert seen["conv1.quant"] == "AscendQuant" and seen["x.anti_quant"] == "AscendAntiQuant"
    assert seen["fc.dequant"] == "AscendDequant"


def test_batchnorm_between_quantize_ops_is_bit_exact(tmp_path):
    """A float BatchNorm one ulp off onnxruntime would move quantized values by a step."""
    rng = np.random.default_rng(4)
    c = 16
    params = [rng.standard_normal(c).astype(np.float32) for _ in range(3)]
    var = (np.abs(rng.standard_normal(c)) + 0.05).astype(np.float32)
    n = onnx.helper.make_node
    graph = onnx.helper.make_graph(
        [n("DequantizeLinear", ["xq", "s"], ["x"], name="dq"),
         n("BatchNormalization", ["x", "g", "b", "m", "v"], ["bn"], name="bn", epsilon=1e-3),
         n("QuantizeLinear", ["bn", "s2", "z2"], ["q"], name="q")],
        "bn_quant", [onnx.helper.make_tensor_value_info("xq", onnx.TensorProto.UINT8,
                                                        [2, c, 8, 8])],
        [onnx.helper.make_tensor_value_info("bn", onnx.TensorProto.FLOAT, None),
         onnx.helper.make_tensor_value_info("q", onnx.TensorProto.UINT8, None)],
        [onnx.numpy_helper.from_array(v, k) for k, v in (
            ("s", np.float32(0.03)), ("g", params[0]), ("b", params[1]), ("m", params[2]),
            ("v", var), ("s2", np.float32(0.002)), ("z2", np.uint8(128)))])
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 13)])
    om = compile_to_om(model, tmp_path / "bn.om", KEEP)
    xq = rng.integers(0, 256, (2, c, 8, 8)).astype(np.uint8)
    result = compare_model(model, om, [xq], rtol=0.0, atol=0.0)
    assert result.ok, [(d.reference, d.max_abs) for d in result.outputs]
