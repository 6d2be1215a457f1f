"""Parsed graphs run through the reference interpreter (ge.ops.interpreter) match onnxruntime."""
from __future__ import annotations

import os

import numpy as np
import pytest
from onnx import helper

from ge.parser.onnx import parse_onnx

from ._models import model, single, vi

ort = pytest.importorskip("onnxruntime")
interpreter = pytest.importorskip("ge.ops.interpreter")


def reference(m, feeds):
    sess = ort.InferenceSession(m.SerializeToString() if not isinstance(m, str) else m,
                                providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def check(m, feeds, atol=1e-5):
    graph = parse_onnx(m)
    ours = interpreter.run_graph(graph, feeds)
    for got, want in zip(ours, reference(m, feeds)):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=atol)


# The small light models (the large ones take tens of seconds in the numpy interpreter; their
# parse is covered by test_light_models.py).
@pytest.mark.parametrize("name", ["light_squeezenet", "light_shufflenet", "light_inception_v1"])
def test_light_model_matches_onnxruntime(light_dir, name):
    path = os.path.join(light_dir, name + ".onnx")
    graph = parse_onnx(path)
    (data,) = graph.data_nodes()
    x = np.random.default_rng(0).standard_normal(list(data.get_output_desc(0).shape))
    x = x.astype(np.float32)
    (ours,) = interpreter.run_graph(graph, [x])
    (want,) = reference(path, {data.name: x})
    np.testing.assert_allclose(ours, want, rtol=1e-4, atol=1e-5)


RNG = np.random.default_rng(1)
X = RNG.standard_normal((1, 4, 9, 9)).astype(np.float32)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


CASES = {
    "conv_pads_strides_dilations": single(
        "Conv", ("x", "w", "b"), in_shape=X.shape, inits=[("w", rand(6, 2, 3, 3)),
                                                          ("b", rand(6))],
        strides=[2, 1], pads=[1, 0, 2, 1], dilations=[1, 2], group=2),
    "maxpool_ceil": single("MaxPool", in_shape=X.shape, kernel_shape=[3, 3], strides=[2, 2],
                           pads=[1, 1, 0, 0], ceil_mode=1),
    "avgpool_include_pad": single("AveragePool", in_shape=X.shape, kernel_shape=[3, 3],
                                  pads=[1, 1, 1, 1], count_include_pad=1),
    "lrn": single("LRN", in_shape=X.shape, size=3, alpha=0.3, beta=0.75, bias=1.5, opset=9),
    "softmax_opset11_4d": single("Softmax", in_shape=X.shape, opset=11, axis=1),
    "transpose": single("Transpose", in_shape=X.shape, perm=[0, 2, 3, 1]),
    "slice_opset9": single("Slice", in_shape=X.shape, opset=9, starts=[1, 2], ends=[3, 8],
                           axes=[1, 3]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_mapping_matches_onnxruntime(name):
    check(CASES[name], {"x": X})


def test_gemm_alpha_beta_trans_b():
    m = single("Gemm", ("x", "b", "c"), in_shape=(3, 4), inits=[("b", rand(5, 4)),
                                                                ("c", rand(5))],
               transB=1, alpha=0.5, beta=2.0)
    check(m, {"x": rand(3, 4)})


def test_concat_and_dropout_mask_unused():
    m = model([helper.make_node("Dropout", ["a"], ["d", "mask"], name="drop"),
               helper.make_node("Concat", ["d", "b"], ["y"], name="cat", axis=1)],
              [vi("a", [2, 3]), vi("b", [2, 2])], [vi("y", None)], opset=9)
    check(m, {"a": rand(2, 3), "b": rand(2, 2)})


def test_if_branches_with_captures_run():
    from onnx import TensorProto
    then_g = helper.make_graph([helper.make_node("Add", ["x", "k"], ["t"], name="add")],
                               "then", [], [vi("t", None)])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"], name="neg")],
                               "else", [], [vi("e", None)])
    m = model([helper.make_node("If", ["c"], ["y"], name="if0", then_branch=then_g,
                                else_branch=else_g)],
              [vi("c", [], TensorProto.BOOL), vi("x", [2])], [vi("y", None)],
              inits=[("k", np.ones(2, np.float32))])
    for cond in (True, False):
        check(m, {"c": np.array(cond), "x": rand(2)})
