"""IR Resize vs onnx's reference evaluator for the modes the onnxruntime comparison cannot
reach (antialias, half_pixel_symmetric, align_corners with non-integral scale·size)."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from ge import ops

X = np.random.default_rng(3).uniform(-1, 1, (1, 2, 7, 9)).astype(np.float32)
SCALES = np.array([1, 1, 0.6, 0.7], np.float32)

CASES = [
    {"mode": "linear", "antialias": 1},
    {"mode": "cubic", "antialias": 1, "exclude_outside": 1},
    {"mode": "cubic", "antialias": 1},
    {"mode": "linear", "coordinate_transformation_mode": "half_pixel_symmetric"},
    {"mode": "linear", "coordinate_transformation_mode": "align_corners"},
    {"mode": "nearest", "coordinate_transformation_mode": "half_pixel_symmetric"},
]


def _onnx(attrs):
    node = helper.make_node("Resize", ["x", "", "s"], ["y"], **attrs)
    graph = helper.make_graph([node], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, None),
                               helper.make_tensor_value_info("s", TensorProto.FLOAT, None)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    return ReferenceEvaluator(model).run(None, {"x": X, "s": SCALES})[0]


@pytest.mark.parametrize("attrs", CASES, ids=lambda a: "-".join(str(v) for v in a.values()))
def test_resize_matches_onnx_reference(attrs):
    opdef = ops.get("Resize")
    full = {s.name: s.default for s in opdef.attrs}
    full.update(attrs)
    got = opdef.kernel([X, None, SCALES, None], full)[0]
    np.testing.assert_allclose(got, _onnx(attrs), rtol=1e-5, atol=1e-5)
