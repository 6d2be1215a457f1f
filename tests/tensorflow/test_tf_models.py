"""The Keras applications and a BERT-style encoder, frozen, compiled with --framework=3 and
compared with TensorFlow itself (ge.runtime.compare_tf) at float32 tolerance."""
from __future__ import annotations

import pytest

from ge.om import read_om
from ge.runtime.compare_tf import compare_tf_model

import _tf_graphs as G

MODELS = [*G.KERAS_APPS, "bert"]


@pytest.mark.parametrize("name", MODELS)
def test_model_matches_tensorflow(name, frozen, tf_compiled):
    result = compare_tf_model(frozen(name), tf_compiled(name))
    assert len(result.outputs) == 1
    out = result.outputs[0]
    assert out.ok, f"{name}: max abs {out.max_abs}, max rel {out.max_rel}"


def test_nhwc_kept_in_the_ir(tf_compiled):
    """Convolutions and pools keep TensorFlow's NHWC (data_format), the input stays NHWC."""
    model_def = read_om(str(tf_compiled("ResNet50"))).model_def_with_weights()
    ops = [op for g in model_def.graph for op in g.op]
    layouts = {op.attr["data_format"].s.decode() for op in ops
               if op.type in ("Conv2D", "MaxPool") and "data_format" in op.attr}
    assert layouts == {"NHWC"}
    data = next(op for op in ops if op.type == "Data")
    assert data.output_desc[0].layout == "NHWC"
    assert list(data.output_desc[0].shape.dim) == [1, 32, 32, 3]
