"""Helpers of the runtime tests: compile an ONNX model in-process to an OM file."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

OPTIONS = {"ge.socVersion": "Ascend310P3",
           "ge.exec.precision_mode": "must_keep_origin_dtype"}   # the float32 build


def compile_to_om(model, path, options=None) -> str:
    """Parse (ModelProto or path), build_graph, save_om; returns the OM path."""
    from ge.compiler.api import build_graph, save_om
    from ge.parser.onnx import parse_onnx
    opts = dict(OPTIONS, **(options or {}))
    graph = parse_onnx(model, dict(opts))
    save_om(str(path), build_graph(graph, dict(opts)), "test")
    return str(path)


def tiny_model() -> onnx.ModelProto:
    """x[1,3,8,8] -> Conv(4) -> Relu -> Add(y) -> Softmax(axis=1) : out; y is a 2nd input
    [1,4,8,8]; an int64 Reshape-free graph with two inputs and one output."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32) * 0.3
    b = rng.standard_normal(4).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("Add", ["r", "y"], ["a"], name="add"),
        helper.make_node("Softmax", ["a"], ["out"], name="softmax", axis=1),
    ]
    graph = helper.make_graph(
        nodes, "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 4, 8, 8])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def tiny_inputs(seed: int = 1) -> list:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((1, 3, 8, 8)).astype(np.float32),
            rng.standard_normal((1, 4, 8, 8)).astype(np.float32)]


def onnxruntime_outputs(model, feeds: dict) -> list:
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString() if isinstance(model, onnx.ModelProto)
                                else str(model), so, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def env_with_repo() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env
