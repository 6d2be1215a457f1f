"""Prepared constants (docs/kernel-abi.md): a convolution whose filter is a weight of the model
packs it once when the model is loaded and runs on the packed copy (x86-64 with AVX2 and FMA);
one whose filter is not a constant runs unprepared.  Both against onnxruntime at float32
tolerance; the prepared product gives the same bits with one thread and two."""
from __future__ import annotations

import platform

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from _build import compile_to_om, onnxruntime_outputs

import ge.runtime

PRECISION = {"ge.exec.precision_mode": "must_keep_origin_dtype"}
# (input shape, filter shape, pads (one for all sides, or ONNX's [top, left, bottom, right]),
# stride, group, dilation): the product's edge cases — a last panel of 1, 2 and 4 pixels (7x7,
# 10x5, 14x14 images), channel counts that are no multiple of the 4-channel panels, k in two
# blocks (72 x 3 x 3 = 648 > 512), two groups; strides 1 and 2 pack from the padded input:
# stride 2 with 5-pixel rows (5 runs per panel), 20-pixel rows (2 runs) and a 7x7 filter,
# uneven pads with dilation and two images, no padding (10-pixel rows: 3 runs per panel), a
# 1x1 filter with padding, three blocks of rows at strides 1 and 2 (the later blocks' first
# rows inside the image); im2col for more taps than that packing takes (9x9) and a 1x1 filter at stride 2
BRANCHES = [((1, 16, 7, 7), (36, 16, 3, 3), 1, 1, 1, 1),
            ((1, 8, 10, 5), (30, 8, 1, 1), 0, 1, 1, 1),
            ((1, 8, 14, 14), (20, 4, 3, 3), 1, 1, 2, 1),
            ((1, 72, 7, 7), (24, 72, 3, 3), 1, 1, 1, 1),
            ((1, 8, 9, 9), (17, 8, 3, 3), 1, 2, 1, 1),
            ((2, 6, 6, 30), (10, 6, 3, 5), [2, 1, 0, 3], 1, 1, 2),
            ((1, 4, 12, 12), (8, 4, 3, 3), 0, 1, 1, 1),
            ((1, 5, 4, 4), (7, 5, 1, 1), 1, 1, 1, 1),
            ((1, 16, 64, 64), (8, 16, 3, 3), 1, 1, 1, 1),
            ((1, 2, 12, 12), (4, 2, 9, 9), 4, 1, 1, 1),
            ((1, 6, 40, 40), (8, 6, 3, 3), 1, 2, 1, 1),
            ((1, 3, 32, 32), (8, 3, 7, 7), 3, 2, 1, 1),
            ((1, 8, 10, 10), (6, 8, 1, 1), 0, 2, 1, 1),
            ((1, 16, 128, 128), (8, 16, 3, 3), 1, 2, 1, 1)]


def _avx2_fma() -> bool:
    if platform.machine() not in ("x86_64", "AMD64"):
        return False
    with open("/proc/cpuinfo") as f:
        flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")),
                     [])
    return "avx2" in flags and "fma" in flags


def _model(filter_inputs: bool):
    """One convolution per branch (bias, relu; the first also a residual Add), each filter a
    weight or, with filter_inputs, a graph input."""
    rng = np.random.default_rng(11)
    nodes, inputs, outputs, inits = [], [], [], []
    for i, (xs, ws, pad, stride, group, dilation) in enumerate(BRANCHES):
        pads = pad if isinstance(pad, list) else [pad] * 4
        w = (rng.standard_normal(ws) / np.sqrt(np.prod(ws[1:]))).astype(np.float32)
        b = rng.standard_normal(ws[0]).astype(np.float32)
        inputs.append(helper.make_tensor_value_info(f"x{i}", TensorProto.FLOAT, list(xs)))
        if filter_inputs:
            inputs.append(helper.make_tensor_value_info(f"w{i}", TensorProto.FLOAT, list(ws)))
        else:
            inits.append(numpy_helper.from_array(w, f"w{i}"))
        inits.append(numpy_helper.from_array(b, f"b{i}"))
        nodes.append(helper.make_node("Conv", [f"x{i}", f"w{i}", f"b{i}"], [f"c{i}"],
                                      pads=pads, strides=[stride] * 2, group=group,
                                      dilations=[dilation] * 2))
        last = f"c{i}"
        if i == 0:      # a residual: Conv + Add + Relu fuse into one kernel
            nodes.append(helper.make_node("Conv", [last, "wr", "br"], ["cr"], pads=[1] * 4))
            nodes.append(helper.make_node("Add", ["cr", last], ["sum"]))
            inits += [numpy_helper.from_array(
                          (rng.standard_normal((36, 36, 3, 3)) * 0.05).astype(np.float32), "wr"),
                      numpy_helper.from_array(rng.standard_normal(36).astype(np.float32), "br")]
            last = "sum"
        nodes.append(helper.make_node("Relu", [last], [f"y{i}"]))
        oh = (xs[2] + pads[0] + pads[2] - dilation * (ws[2] - 1) - 1) // stride + 1
        ow = (xs[3] + pads[1] + pads[3] - dilation * (ws[3] - 1) - 1) // stride + 1
        outputs.append(helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT,
                                                     [xs[0], ws[0], oh, ow]))
    graph = helper.make_graph(nodes, "prepared", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    work = tmp_path_factory.mktemp("prepared")
    return {kind: (model, compile_to_om(model, work / f"{kind}.om", PRECISION))
            for kind, model in (("weights", _model(False)), ("inputs", _model(True)))}


def _feeds(model) -> dict:
    rng = np.random.default_rng(5)
    return {i.name: rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim])
            .astype(np.float32) for i in model.graph.input}


def _check_against_onnxruntime(model, om, feeds) -> None:
    expected = onnxruntime_outputs(model, feeds)
    names = [i.name for i in model.graph.input]
    for got, want in zip(om.run([feeds[n] for n in names]), expected):
        scale = float(np.abs(want).max())
        assert scale > 0
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * scale)


def test_weights_are_packed_at_load_and_match_onnxruntime(models):
    model, path = models["weights"]
    feeds = _feeds(model)
    with ge.runtime.load(path, threads=1) as om:
        convs = [name for name, op_type, _, _ in om.profile(list(feeds.values()))
                 if op_type == "Conv2D"]
        assert len(convs) == len(BRANCHES) + 1
        assert sorted(om.prepared) == (sorted(convs) if _avx2_fma() else [])
        _check_against_onnxruntime(model, om, feeds)


def test_prepared_product_has_the_bits_of_one_thread_with_two(models):
    model, path = models["weights"]
    x = list(_feeds(model).values())
    with ge.runtime.load(path, threads=1) as one, ge.runtime.load(path, threads=2) as two:
        for a, b in zip(one.run(x), two.run(x)):
            assert np.abs(a).max() > 0 and a.tobytes() == b.tobytes()


def test_a_filter_that_is_not_a_constant_runs_unprepared(models):
    model, path = models["inputs"]
    feeds = _feeds(model)
    with ge.runtime.load(path, threads=1) as om:
        # the residual branch's second filter is still a weight
        assert len(om.prepared) == (1 if _avx2_fma() else 0)
        _check_against_onnxruntime(model, om, feeds)
