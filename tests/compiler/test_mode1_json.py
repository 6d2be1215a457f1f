"""Round trip: the mode-1 JSON of an OM shows every node of the compiled graph with every
attribute and every tensor description; weight bytes are omitted, as ATC does."""
from __future__ import annotations

import json

import numpy as np
import pytest

from ge.compiler.api import compile_model_file, save_om
from ge.graph import Graph, Tensor
from ge.om import om_to_json

from .conftest import SOC

OMITTED = {"data", "bt", "data_offset", "weight_size"}


def _keys(tree, found: set) -> set:
    if isinstance(tree, dict):
        found.update(tree)
        for value in tree.values():
            _keys(value, found)
    elif isinstance(tree, list):
        for value in tree:
            _keys(value, found)
    return found


def _attrs(op: dict) -> dict:
    return {item["key"]: item["value"] for item in op.get("attr", [])}


def _check_desc(seen: dict, desc, where: str) -> None:
    assert seen["dtype"] == desc.data_type.name, where
    assert seen.get("shape", {}).get("dim", []) == list(desc.shape), where
    assert seen["layout"] == desc.format.name.replace("FORMAT_", ""), where


def _check_value(seen: dict, value, where: str) -> None:
    """Scalars and flat lists are compared by value; tensors by their description."""
    if isinstance(value, bool):
        assert seen["b"] is value, where
    elif isinstance(value, int) and not hasattr(value, "name"):
        assert seen.get("i", 0) == value, where
    elif isinstance(value, float):
        assert np.float32(seen.get("f", 0.0)) == np.float32(value), where
    elif isinstance(value, str):
        assert seen.get("s", "") == value, where
    elif isinstance(value, Tensor):
        desc = seen["t"]["desc"]
        assert desc["dtype"] == value.get_tensor_desc().data_type.name, where
        assert desc.get("shape", {}).get("dim", []) == list(value.numpy().shape), where
    elif isinstance(value, (list, tuple)) and all(
            isinstance(v, int) and not isinstance(v, bool) for v in value):
        assert seen["list"].get("i", []) == list(value), where


@pytest.fixture(scope="module", params=["resnet50_ci", "bert_ci"])
def compiled_and_json(request, model_path, shared_kernel_cache, tmp_path_factory):
    options = {"ge.socVersion": SOC, "ge.op_compiler_cache_dir": str(shared_kernel_cache)}
    compiled = compile_model_file(str(model_path(request.param)), 5, options)
    om = tmp_path_factory.mktemp("roundtrip") / "m.om"
    save_om(str(om), compiled, "atc --test")
    return compiled.graph, json.loads(om_to_json(str(om)))


def test_every_node_attribute_and_desc(compiled_and_json):
    graph, model = compiled_and_json
    graphs = [graph] + graph.get_all_subgraphs()
    assert [g["name"] for g in model["graph"]] == [g.name for g in graphs]
    for ours, seen in zip(graphs, model["graph"]):
        ops = {op["name"]: op for op in seen["op"]}
        assert [(op["name"], op["type"]) for op in seen["op"]] == \
            [(n.name, n.type) for n in ours.nodes]
        for node in ours.nodes:
            op = ops[node.name]
            attrs = _attrs(op)
            for name, _kind, value in node.attr_items():
                assert name in attrs, f"{node.name}: attribute {name} missing"
                _check_value(attrs[name], value, f"{node.name}.{name}")
            assert len(op.get("input_desc", [])) == node.num_inputs, node.name
            assert len(op.get("output_desc", [])) == node.num_outputs, node.name
            for i in range(node.num_inputs):
                _check_desc(op["input_desc"][i], node.in_desc(i), f"{node.name} input {i}")
            for i in range(node.num_outputs):
                _check_desc(op["output_desc"][i], node.out_desc(i), f"{node.name} output {i}")
            edges = ["" if e is None else f"{e[0].name}:{e[1]}" for e in node.inputs()]
            edges += [f"{src.name}:-1" for src in node.get_in_control_nodes()]
            assert op.get("input", []) == edges, node.name


def test_weights_are_omitted(compiled_and_json):
    graph, model = compiled_and_json
    assert not _keys(model, set()) & OMITTED
    consts = [op for g in model["graph"] for op in g["op"] if op["type"] == "Const"]
    assert consts and all("t" in _attrs(op)["value"] for op in consts)
    assert len(consts) == sum(n.type == "Const" for g in [graph] + graph.get_all_subgraphs()
                              for n in g.nodes)


def test_parsed_graph_is_not_the_compiled_one(compiled_and_json, model_path):
    """The JSON is of the optimised graph: fusion and folding changed the op set."""
    graph, _ = compiled_and_json
    assert isinstance(graph, Graph)
    types = {n.type for n in graph.nodes}
    assert "BatchNorm" not in types and "Identity" not in types
