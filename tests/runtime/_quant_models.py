"""Quantized test models: one graph holding every ONNX quantization op (per tensor and per
axis, int8 and uint8), a small classifier quantized by onnxruntime's own tools (labelled
generated), and graphs in the form of AMCT's deployable models.  Seeded, CI-sized."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

U8, S8, F32 = TensorProto.UINT8, TensorProto.INT8, TensorProto.FLOAT


def _init(name, value):
    return numpy_helper.from_array(np.asarray(value), name)


def quant_ops_model() -> onnx.ModelProto:
    """Inputs x (float [2,3,6,6]), t (float [25], ties and out-of-range values), xs8 (int8
    [2,3,6,6]), xu8 (uint8 [2,3,6,6]), a (uint8 [2,5,6]); one output per op case."""
    rng = np.random.default_rng(7)
    inits = [
        _init("s_t", np.float32(0.05)), _init("zp_u8", np.uint8(128)),
        _init("s_axis", np.array([0.02, 0.05, 0.1], np.float32)),
        _init("zp_axis_s8", np.array([0, -3, 5], np.int8)),
        _init("s_half", np.float32(0.5)), _init("zp_s8_0", np.int8(0)),
        _init("s_small", np.float32(0.01)),
        _init("s_dq", np.float32(0.1)), _init("zp_dq", np.int8(-2)),
        _init("zp_axis_u8", np.array([1, 2, 3], np.uint8)),
        _init("s_axis_dq", np.array([0.1, 0.2, 0.3], np.float32)),
        _init("b_mm", rng.integers(0, 255, (6, 4)).astype(np.uint8)),
        _init("a_zp", np.uint8(3)), _init("b_zp", np.array([1, 9, 200, 0], np.uint8)),
        _init("w_ci", rng.integers(-128, 127, (6, 3, 3, 3)).astype(np.int8)),
        _init("x_zp_ci", np.uint8(7)), _init("w_zp_ci", np.int8(0)),
        _init("x_s", np.float32(0.04)), _init("x_zp_s8", np.int8(-1)),
        _init("w_dw", rng.integers(-128, 127, (3, 1, 3, 3)).astype(np.int8)),
        _init("w_s", np.array([0.01, 0.02, 0.005], np.float32)),
        _init("w_zp_dw", np.zeros(3, np.int8)),
        _init("y_s", np.float32(0.2)), _init("y_zp_s8", np.int8(4)),
        _init("bias", np.array([100, -50, 7], np.int32)),
        _init("a_s", np.float32(0.03)), _init("b_qmm", rng.integers(0, 255, (6, 4)).astype(
            np.uint8)), _init("b_s", np.float32(0.02)), _init("b_zp_q", np.uint8(128)),
        _init("y_s_mm", np.float32(0.5)), _init("y_zp_u8", np.uint8(100)),
    ]
    n = helper.make_node
    nodes = [
        n("QuantizeLinear", ["x", "s_t", "zp_u8"], ["q_u8"], name="q_per_tensor_u8"),
        n("QuantizeLinear", ["x", "s_axis", "zp_axis_s8"], ["q_s8_axis"], name="q_axis_s8",
          axis=1),
        n("QuantizeLinear", ["t", "s_half", "zp_s8_0"], ["q_ties"], name="q_ties"),
        n("QuantizeLinear", ["t", "s_small"], ["q_saturate"], name="q_no_zp_saturate"),
        n("DequantizeLinear", ["xs8", "s_dq", "zp_dq"], ["dq_s8"], name="dq_per_tensor_s8"),
        n("DequantizeLinear", ["xu8", "s_axis_dq", "zp_axis_u8"], ["dq_u8_axis"],
          name="dq_axis_u8", axis=1),
        n("DynamicQuantizeLinear", ["x"], ["dyn_y", "dyn_s", "dyn_zp"], name="dyn"),
        n("MatMulInteger", ["a", "b_mm", "a_zp", "b_zp"], ["mmi"], name="mmi"),
        n("ConvInteger", ["xu8", "w_ci", "x_zp_ci", "w_zp_ci"], ["ci"], name="ci",
          pads=[1, 1, 1, 1], strides=[2, 2]),
        n("QLinearConv", ["xs8", "x_s", "x_zp_s8", "w_dw", "w_s", "w_zp_dw", "y_s",
                          "y_zp_s8", "bias"], ["qconv"], name="qconv_depthwise", group=3,
          pads=[1, 0, 1, 0]),
        n("QLinearMatMul", ["a", "a_s", "a_zp", "b_qmm", "b_s", "b_zp_q", "y_s_mm",
                            "y_zp_u8"], ["qmm"], name="qmm"),
    ]
    outs = [("q_u8", U8), ("q_s8_axis", S8), ("q_ties", S8), ("q_saturate", U8),
            ("dq_s8", F32), ("dq_u8_axis", F32), ("dyn_y", U8), ("dyn_s", F32),
            ("dyn_zp", U8), ("mmi", TensorProto.INT32), ("ci", TensorProto.INT32),
            ("qconv", S8), ("qmm", U8)]
    graph = helper.make_graph(
        nodes, "quant_ops",
        [helper.make_tensor_value_info("x", F32, [2, 3, 6, 6]),
         helper.make_tensor_value_info("t", F32, [25]),
         helper.make_tensor_value_info("xs8", S8, [2, 3, 6, 6]),
         helper.make_tensor_value_info("xu8", U8, [2, 3, 6, 6]),
         helper.make_tensor_value_info("a", U8, [2, 5, 6])],
        [helper.make_tensor_value_info(name, dt, None) for name, dt in outs], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def quant_ops_inputs(seed: int = 3) -> list:
    rng = np.random.default_rng(seed)
    ties = np.concatenate([np.arange(-2.75, 3.0, 0.25), [-3e4, 3e4, 1e-3]]).astype(np.float32)
    return [rng.standard_normal((2, 3, 6, 6)).astype(np.float32) * 3, ties[:25],
            rng.integers(-128, 128, (2, 3, 6, 6)).astype(np.int8),
            rng.integers(0, 256, (2, 3, 6, 6)).astype(np.uint8),
            rng.integers(0, 256, (2, 5, 6)).astype(np.uint8)]


def small_classifier() -> onnx.ModelProto:
    """Conv-Relu-Conv(stride 2)-Relu-GlobalAveragePool-Flatten-MatMul-Add, x [1,3,16,16]:
    the shape of the corpus' convolutional classifiers, CI-sized."""
    rng = np.random.default_rng(0)
    params = {"w1": rng.standard_normal((8, 3, 3, 3)) * 0.3, "b1": rng.standard_normal(8) * 0.1,
              "w2": rng.standard_normal((8, 8, 3, 3)) * 0.2, "b2": rng.standard_normal(8) * 0.1,
              "wf": rng.standard_normal((8, 10)) * 0.3, "bf": rng.standard_normal(10) * 0.1}
    n = helper.make_node
    nodes = [n("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
             n("Relu", ["c1"], ["r1"], name="relu1"),
             n("Conv", ["r1", "w2", "b2"], ["c2"], name="conv2", pads=[1, 1, 1, 1],
               strides=[2, 2]),
             n("Relu", ["c2"], ["r2"], name="relu2"),
             n("GlobalAveragePool", ["r2"], ["g"], name="gap"),
             n("Flatten", ["g"], ["f"], name="flatten"),
             n("MatMul", ["f", "wf"], ["m"], name="fc"),
             n("Add", ["m", "bf"], ["out"], name="fc_bias")]
    graph = helper.make_graph(
        nodes, "small_classifier", [helper.make_tensor_value_info("x", F32, [1, 3, 16, 16])],
        [helper.make_tensor_value_info("out", F32, [1, 10])],
        [_init(k, v.astype(np.float32)) for k, v in params.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def quantized_classifiers(float_path: str, out_dir) -> dict:
    """The classifier quantized by onnxruntime.quantization (generated models): dynamic
    (ConvInteger / MatMulInteger), static QDQ per channel, static QOperator (QLinearConv /
    QLinearMatMul) with int8 and uint8 activations; a seeded calibration reader.  uint8
    activations with int8 weights are quantized with reduce_range (7-bit weights), as
    onnxruntime advises for x86 CPUs without VNNI: there its u8 x s8 kernels add pairs of
    products in saturating int16 (off by 1e-2 here on an AVX2-only CPU), and the test wants the
    ops' exact results, not that CPU's."""
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_dynamic, quantize_static)

    class Reader(CalibrationDataReader):
        def __init__(self):
            rng = np.random.default_rng(1)
            self.batches = iter([{"x": rng.standard_normal((1, 3, 16, 16)).astype(
                np.float32)} for _ in range(4)])

        def get_next(self):
            return next(self.batches, None)

    paths = {}
    for name, fn in (
            ("dynamic_u8", lambda p: quantize_dynamic(float_path, p,
                                                      weight_type=QuantType.QUInt8)),
            ("dynamic_s8_per_channel", lambda p: quantize_dynamic(
                float_path, p, weight_type=QuantType.QInt8, per_channel=True,
                reduce_range=True)),
            ("static_qdq", lambda p: quantize_static(float_path, p, Reader(),
                                                     quant_format=QuantFormat.QDQ,
                                                     per_channel=True, reduce_range=True)),
            ("static_qop_u8", lambda p: quantize_static(
                float_path, p, Reader(), quant_format=QuantFormat.QOperator,
                activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                op_types_to_quantize=["Conv", "MatMul"], reduce_range=True)),
            ("static_qop_s8", lambda p: quantize_static(
                float_path, p, Reader(), quant_format=QuantFormat.QOperator,
                activation_type=QuantType.QInt8, weight_type=QuantType.QInt8,
                per_channel=True, op_types_to_quantize=["Conv", "MatMul"]))):
        path = str(out_dir / f"classifier_{name}.onnx")
        fn(path)
        paths[name] = path
    return paths


# ---- AMCT's deployable form: AscendQuant -> int8 Conv / MatMul -> AscendDequant ------------

def deq_scale_words(scales: np.ndarray, offset_w: int = 0) -> np.ndarray:
    """AMCT's uint64 deq_scale: the float32 scale in bits 0..31, offset_w in bits 40..47."""
    bits = np.asarray(scales, np.float32).view(np.uint32).astype(np.uint64)
    return bits | (np.uint64(offset_w & 0xFF) << np.uint64(40))


def amct_model(offset_w: int = 0) -> tuple:
    """x [1,3,8,8] -> AscendQuant -> Conv(int8 w, int32 bias) -> AscendDequant(relu) ->
    Flatten -> AscendQuant -> MatMul(int8 w = AscendWeightQuant(w, 0)) -> AscendDequant;
    plus AscendAntiQuant of the first quantized tensor as a second output.  Returns the model
    and its parameters for an independent numpy computation."""
    rng = np.random.default_rng(5)
    p = {"scale1": 8.0, "offset1": 3.0, "w1": rng.integers(-127, 128, (4, 3, 3, 3)),
         "b1": rng.integers(-300, 300, 4), "deq1": np.array([0.002, 0.003, 0.001, 0.004]),
         "scale2": 20.0, "offset2": -2.0, "w2": rng.integers(-127, 128, (4 * 6 * 6, 5)),
         "deq2": np.array([0.0005]), "anti_scale": 0.125, "anti_offset": 3.0}
    n = helper.make_node
    nodes = [
        n("AscendQuant", ["x"], ["xq"], name="conv1.quant", scale=p["scale1"],
          offset=p["offset1"], dst_type="INT8"),
        n("Conv", ["xq", "w1", "b1"], ["acc1"], name="conv1"),
        n("AscendDequant", ["acc1", "deq1"], ["y1"], name="conv1.dequant", dtype=0,
          relu_flag=1),
        n("Flatten", ["y1"], ["f"], name="flatten"),
        n("AscendQuant", ["f"], ["fq"], name="fc.quant", scale=p["scale2"],
          offset=p["offset2"], dst_type="INT8"),
        n("AscendWeightQuant", ["w2", "w2_offset"], ["w2q"], name="fc.weight_quant",
          dst_type="INT8"),
        n("MatMul", ["fq", "w2q"], ["acc2"], name="fc"),
        n("AscendDequant", ["acc2", "deq2"], ["out"], name="fc.dequant", dtype=0),
        n("AscendAntiQuant", ["xq"], ["x_back"], name="x.anti_quant",
          scale=p["anti_scale"], offset=p["anti_offset"], dtype=0),
    ]
    inits = [_init("w1", p["w1"].astype(np.int8)), _init("b1", p["b1"].astype(np.int32)),
             _init("deq1", deq_scale_words(p["deq1"], offset_w)),
             _init("w2", p["w2"].astype(np.int8)), _init("w2_offset", np.int8(0)),
             _init("deq2", deq_scale_words(p["deq2"]))]
    graph = helper.make_graph(
        nodes, "amct_deploy", [helper.make_tensor_value_info("x", F32, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("out", F32, [1, 5]),
         helper.make_tensor_value_info("x_back", F32, [1, 3, 8, 8])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), p


def amct_expected(x: np.ndarray, p: dict) -> list:
    """The deployable model's semantics written out in numpy (CANN's op definitions)."""
    def quant(v, scale, offset):
        return np.clip(np.rint(v * np.float32(scale) + np.float32(offset)), -128, 127)

    xq = quant(x.astype(np.float32), p["scale1"], p["offset1"]).astype(np.int64)
    w1 = p["w1"].astype(np.int64)
    acc1 = np.zeros((1, 4, 6, 6), np.int64)
    for i in range(6):
        for j in range(6):
            acc1[:, :, i, j] = np.tensordot(xq[:, :, i:i + 3, j:j + 3], w1,
                                            axes=([1, 2, 3], [1, 2, 3]))
    acc1 += p["b1"].reshape(1, 4, 1, 1)
    y1 = np.maximum(acc1.astype(np.float32) * p["deq1"].astype(np.float32).reshape(
        1, 4, 1, 1), 0)
    fq = quant(y1.reshape(1, -1), p["scale2"], p["offset2"]).astype(np.int64)
    out = (fq @ p["w2"].astype(np.int64)).astype(np.float32) * np.float32(p["deq2"][0])
    back = (xq.astype(np.float32) - np.float32(p["anti_offset"])) * np.float32(
        p["anti_scale"])
    return [out, back]
