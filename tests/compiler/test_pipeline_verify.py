"""Graph.verify after every pipeline stage: a stage that breaks the IR fails the compile with
EP0005 naming the stage; the parsed graph is checked before the first stage."""
import pytest
from onnx import TensorProto, helper

from ge.compiler import pipeline
from ge.compiler.api import build_graph
from ge.errors import GeError
from ge.parser.onnx import parse_onnx

OPTIONS = {"ge.socVersion": "Ascend310P3", "ge.exec.exclude_engines": "AiCore|AiVec", "ge.exec.precision_mode": "must_keep_origin_dtype",
           "ge.op_compiler_cache_mode": "disable"}


def relu_model():
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Neg", ["r"], ["y"], name="neg")]
    g = helper.make_graph(nodes, "m", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                     [2, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def _cut_neg_input(graph, ctx):
    graph.disconnect(next(n for n in graph.nodes if n.type == "Neg"), 0)


def test_stage_breaking_the_graph_is_named(monkeypatch):
    stages = list(pipeline.STAGES)
    at = [name for name, _ in stages].index("OriginGraphOptimize") + 1
    stages.insert(at, ("BrokenStage", _cut_neg_input))
    monkeypatch.setattr(pipeline, "STAGES", tuple(stages))
    with pytest.raises(GeError) as err:
        build_graph(parse_onnx(relu_model(), {}), OPTIONS)
    assert err.value.code == "EP0005"
    assert err.value.params["where"] == "stage BrokenStage"
    assert err.value.params["reason"].startswith("unconnected input: required input 0")
    assert "BrokenStage" in str(err.value)


def test_broken_input_graph_is_refused_before_the_first_stage():
    graph = parse_onnx(relu_model(), {})
    _cut_neg_input(graph, None)
    with pytest.raises(GeError) as err:
        build_graph(graph, OPTIONS)
    assert err.value.code == "EP0005"
    assert err.value.params["where"] == "the input of the compile (the parsed graph)"


def test_every_stage_is_verified(monkeypatch):
    seen = []
    real = pipeline.verify_graph
    monkeypatch.setattr(pipeline, "verify_graph", lambda g, where: (seen.append(where),
                                                                     real(g, where)))
    build_graph(parse_onnx(relu_model(), {}), OPTIONS)
    assert seen[1:] == [f"stage {name}" for name, _ in pipeline.STAGES]
