"""Derived constants (ge.graph.derived): a BatchNorm folded into a convolution's filter is
streamed into the OM with the bytes of the eager float32 product, and computed for a pass
that reads it."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from ge.compiler.api import build_graph, save_om
from ge.graph import Tensor
from ge.graph.derived import RowScaled
from ge.om import read_om
from ge.parser.onnx import parse_onnx

RNG = np.random.default_rng(11)
OPTIONS = {"ge.socVersion": "Ascend310P3", "ge.exec.exclude_engines": "AiCore|AiVec",
           "ge.exec.precision_mode": "must_keep_origin_dtype",
           "ge.op_compiler_cache_mode": "disable"}


def test_chunks_are_the_bytes_of_the_product(tmp_path):
    source = RNG.standard_normal((7, 5, 3, 3)).astype(np.float32)
    factor = RNG.standard_normal(7).astype(np.float32)
    want = (source * factor.reshape(-1, 1, 1, 1)).tobytes()
    derived = RowScaled(source, factor)
    assert b"".join(bytes(c) for c in derived.chunks(size=100)) == want   # 3 rows a chunk
    assert derived.materialize().tobytes() == want and np.asarray(derived).tobytes() == want
    assert len(derived) == len(want) and bytes(derived.head(10)) + bytes(derived.tail(10)) == want
    path = tmp_path / "out.bin"
    with open(path, "wb") as f:
        derived.copy_to(f.fileno())
    assert path.read_bytes() == want


def test_tensor_computes_once_when_asked():
    derived = RowScaled(np.ones((2, 3), np.float32), np.array([2.0, 3.0], np.float32))
    tensor = Tensor.from_derived(derived)
    assert list(tensor.shape) == [2, 3] and tensor.stored() is derived
    assert tensor.numpy().tolist() == [[2.0] * 3, [3.0] * 3]
    assert tensor.stored() is tensor.numpy()


def _conv_bn_model(channels: int) -> onnx.ModelProto:
    def init(name, shape, positive=False):
        a = RNG.standard_normal(shape).astype(np.float32)
        return numpy_helper.from_array(np.abs(a) + 0.5 if positive else a, name)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c", "s", "o", "m", "v"], ["y"],
                              name="bn", epsilon=1e-3)]
    inits = [init("w", (channels, channels, 3, 3)), init("s", (channels,), True),
             init("o", (channels,)), init("m", (channels,)), init("v", (channels,), True)]
    graph = helper.make_graph(
        nodes, "cb", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, channels, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_folded_filter_is_streamed_into_the_om(tmp_path):
    model = _conv_bn_model(64)                       # a 144 KiB filter: streamed, not hashed
    arrays = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    factor = (arrays["s"].astype(np.float64)
              / np.sqrt(arrays["v"].astype(np.float64) + 1e-3)).astype(np.float32)
    want = (arrays["w"] * factor.reshape(-1, 1, 1, 1)).tobytes()
    compiled = build_graph(parse_onnx(model, {}), dict(OPTIONS))
    conv = next(n for n in compiled.graph.nodes if n.type == "Conv2D")
    weight = conv.input(1)[0].attr("value")
    assert isinstance(weight.stored(), RowScaled)    # not computed by the passes
    save_om(str(tmp_path / "net.om"), compiled)
    om = read_om(str(tmp_path / "net.om"))
    filters = [op for op in om.model_def.graph[0].op if op.type == "Const"
               and op.attr["value"].t.desc.weight_size == len(want)]
    assert len(filters) == 1
    start = filters[0].attr["value"].t.desc.data_offset
    assert bytes(om.weights[start:start + len(want)]) == want
