"""Conv2DTranspose auto_pad split vs onnxruntime: SAME_UPPER puts the odd pad at the end,
SAME_LOWER (and output_shape without auto_pad) at the start."""
from __future__ import annotations

import numpy as np
import onnxruntime
import pytest
from onnx import helper

from ge import ops

X = np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3)
W = np.random.default_rng(5).uniform(-1, 1, (1, 2, 3, 3)).astype(np.float32)


def _ort(attrs):
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2], **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", 1, [1, 1, 3, 3]),
                                            helper.make_tensor_value_info("w", 1, [1, 2, 3, 3])],
                              [helper.make_tensor_value_info("y", 1, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
    sess = onnxruntime.InferenceSession(model.SerializeToString(),
                                        providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": X, "w": W})[0]


@pytest.mark.parametrize("onnx_attrs,ir_extra", [
    ({"auto_pad": "SAME_UPPER"}, {"auto_pad": "SAME_UPPER"}),
    ({"auto_pad": "SAME_LOWER"}, {"auto_pad": "SAME_LOWER"}),
    ({"output_shape": [6, 6]}, {"output_shape": [6, 6]}),
])
def test_conv2d_transpose_auto_pad_matches_onnxruntime(onnx_attrs, ir_extra):
    opdef = ops.get("Conv2DTranspose")
    attrs = {s.name: s.default for s in opdef.attrs if not s.required}
    attrs.update(strides=[1, 1, 2, 2], pads=[0, 0, 0, 0], data_format="NCHW", **ir_extra)
    got = opdef.kernel([np.zeros(4, np.int64), X, W], attrs)[0]
    np.testing.assert_allclose(got, _ort(onnx_attrs), rtol=1e-5, atol=1e-5)
