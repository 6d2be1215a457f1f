"""Netron's own om.js (netron 9.3.3, run under Node) opens our OM files and sees our graph."""
from __future__ import annotations

import json

import pytest

from ge.om import OmContent, om_to_json, write_om

from _netron import needs_netron, netron_view

from ._graphs import conv_net, if_net

pytestmark = needs_netron


@pytest.mark.parametrize("build", [conv_net, if_net])
def test_netron_sees_the_nodes_of_mode1_json(tmp_path, build):
    path = str(tmp_path / "model.om")
    write_om(path, OmContent(graph=build(), kernels=[("k", b"x")], target=("linux", "x86_64")))
    view = netron_view(path)
    assert view["format"] == "DaVinci OM"
    ours = json.loads(om_to_json(path))
    assert [g["name"] for g in view["graphs"]] == [g["name"] for g in ours["graph"]]
    for seen, graph in zip(view["graphs"], ours["graph"]):
        # Netron folds Const ops into initializers of their consumers (spec §10.4)
        expected = [(op["name"], op["type"]) for op in graph.get("op", [])
                    if op["type"] != "Const"]
        assert [(n["name"], n["type"]) for n in seen["nodes"]] == expected
        consts = {f"{op['name']}:0" for op in graph.get("op", []) if op["type"] == "Const"}
        assert set(seen["initializers"]) == consts


def test_netron_reads_weights_and_edges(tmp_path):
    path = str(tmp_path / "model.om")
    graph = conv_net()
    write_om(path, OmContent(graph=graph, target=("linux", "x86_64")))
    (seen,) = netron_view(path)["graphs"]
    nodes = {n["name"]: n for n in seen["nodes"]}
    assert nodes["conv"]["inputs"] == [["x:0"], ["conv.weight:0"], ["conv.bias:0"]]
    assert nodes["relu"]["control"]            # the control edge x -> relu
    bias = graph.node("conv.bias").get_attr("value").numpy().tobytes()
    assert bytes(seen["initializers"]["conv.bias:0"]) == bias
