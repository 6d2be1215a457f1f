"""The twelve models of the compiler issue, compiled by `pyatc`: Netron opens every OM and sees
our mode-1 nodes, and the optimised graph read back from the OM computes what onnxruntime
computes on the source ONNX.

Tolerances (fp32): every model is compared with `rtol` elementwise plus an absolute floor of
`rtol * max|reference|` (so values near zero in a wide output do not fail on rounding noise).
`rtol` is 1e-4 for every model; no op needs more (the largest error seen is ~2e-5 of scale,
from convolution and matmul summation order in deep nets).
"""
from __future__ import annotations

import json
from typing import Dict

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from ge.om import read_om
from ge.ops.interpreter import run_graph

from _netron import needs_netron, netron_view

from .conftest import MODELS, onnxruntime_outputs, random_feeds

RTOL = 1e-4


@pytest.fixture(scope="session")
def mode1_json(atc_main, compiled, tmp_path_factory):
    """`mode1_json(name)`: `pyatc --mode=1` of the model's OM, parsed (once per session)."""
    done: Dict[str, dict] = {}
    root = tmp_path_factory.mktemp("mode1")

    def get(name: str) -> dict:
        if name not in done:
            out = root / f"{name}.json"
            run = atc_main("--mode=1", f"--om={compiled(name)}", f"--json={out}", cwd=root)
            assert run.rc == 0, run.text
            done[name] = json.loads(out.read_text())
        return done[name]
    return get


def assert_close(got: np.ndarray, want: np.ndarray, rtol: float = RTOL) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype
    scale = float(np.abs(want).max()) if want.size else 0.0
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale)


@needs_netron
@pytest.mark.parametrize("name", MODELS)
def test_netron_sees_mode1_nodes(name, compiled, mode1_json):
    om_path = compiled(name)
    view = netron_view(om_path, sizes=True)
    assert view["format"] == "DaVinci OM"
    ours = mode1_json(name)
    assert [g["name"] for g in view["graphs"]] == [g["name"] for g in ours["graph"]]
    model_def = read_om(str(om_path)).model_def_with_weights()
    sizes = {op.name: len(op.attr["value"].t.data)
             for g in model_def.graph for op in g.op if op.type == "Const"}
    for seen, graph in zip(view["graphs"], ours["graph"]):
        ops = graph.get("op", [])
        # Netron folds Const ops into initializers of their consumers
        assert [(n["name"], n["type"]) for n in seen["nodes"]] == \
            [(op["name"], op["type"]) for op in ops if op["type"] != "Const"]
        consts = {op["name"] for op in ops if op["type"] == "Const"}
        assert {k[:-2] for k in seen["initializers"]} == consts
        for key, size in seen["initializers"].items():
            assert size == sizes[key[:-2]], key
    assert any(op["type"] not in ("Data", "Const", "NetOutput")
               for g in ours["graph"] for op in g.get("op", []))


@pytest.mark.parametrize("name", MODELS)
def test_om_graph_matches_onnxruntime(name, compiled, model_path):
    """Seeded random inputs. The light models' weights are ConstantOfShape fills, so their
    outputs are nearly input-independent; test_randomized_light_model gives those teeth."""
    source = onnx.load(str(model_path(name)))
    feeds = random_feeds(source, seed=1)
    graph = read_om(str(compiled(name))).to_graph()
    ours = run_graph(graph, feeds)
    want = onnxruntime_outputs(source, feeds)
    assert len(ours) == len(want)
    for got, ref in zip(ours, want):
        assert_close(np.asarray(got), ref)


# -- light models with random weights ------------------------------------------------------------

def randomize_weights(model: onnx.ModelProto, seed: int) -> onnx.ModelProto:
    """Every ConstantOfShape becomes a Constant holding seeded random values of its shape (its
    shape initializer is dropped), and every float initializer is redrawn: He-normal for
    rank >= 2 (fan-in = product of the other dims), vectors in [0.5, 1.5] for a
    BatchNormalization scale/variance and N(0, 0.1) otherwise: activations stay O(1)."""
    rng = np.random.default_rng(seed)
    model = onnx.ModelProto.FromString(model.SerializeToString())
    inits = {t.name: t for t in model.graph.initializer}
    positive = set()
    for node in model.graph.node:
        if node.op_type == "BatchNormalization":
            positive.update(name for k, name in enumerate(node.input) if k in (1, 4))

    def draw(name: str, shape) -> np.ndarray:
        shape = tuple(int(d) for d in shape)
        if len(shape) >= 2:
            fan_in = int(np.prod(shape[1:])) or 1
            return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)
        if name in positive:
            return rng.uniform(0.5, 1.5, shape).astype(np.float32)
        return (rng.standard_normal(shape) * 0.1).astype(np.float32)

    for index, node in enumerate(model.graph.node):
        if node.op_type != "ConstantOfShape":
            continue
        shape = numpy_helper.to_array(inits[node.input[0]])
        value = draw(node.output[0], shape)
        model.graph.node[index].CopyFrom(onnx.helper.make_node(
            "Constant", [], list(node.output), name=node.name or f"random_{index}",
            value=numpy_helper.from_array(value)))
    used = {name for node in model.graph.node for name in node.input}
    kept = [t for t in model.graph.initializer if t.name in used]
    del model.graph.initializer[:]
    model.graph.initializer.extend(kept)
    for tensor in model.graph.initializer:
        if tensor.data_type == onnx.TensorProto.FLOAT:
            tensor.CopyFrom(numpy_helper.from_array(draw(tensor.name, tensor.dims), tensor.name))
    return model


# Models without BatchNormalization: with random running statistics a deep BN network's
# activations grow until the softmax is one-hot (BN numbers are covered by the calibrated
# ResNet-50 and MobileNetV2 generators).
@pytest.mark.parametrize("name", ["light_inception_v1", "light_squeezenet"])
def test_randomized_light_model(name, model_path, atc_main, tmp_path):
    source = randomize_weights(onnx.load(str(model_path(name))), seed=7)
    path = tmp_path / f"{name}_random.onnx"
    onnx.save(source, str(path))
    run = atc_main("--framework=5", f"--model={path}", "--output=random",
                   "--soc_version=Ascend310P3", "--precision_mode=must_keep_origin_dtype", cwd=tmp_path)
    assert run.rc == 0, run.text
    graph = read_om(str(tmp_path / "random.om")).to_graph()
    for seed in (1, 2):
        feeds = random_feeds(source, seed=seed)
        (got,) = run_graph(graph, feeds)
        (want,) = onnxruntime_outputs(source, feeds)
        # the check has teeth: the softmax is not uniform and depends on the input (below)
        assert float(np.ptp(want)) > 0.2 * float(want.mean())
        assert_close(np.asarray(got), want)
    other = onnxruntime_outputs(source, random_feeds(source, seed=3))[0]
    assert not np.allclose(other, want, rtol=1e-2)
